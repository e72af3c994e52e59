/* envport's C driver for PufferLib 3.0.0's pong.h: the same loop as PufferLib's env_binding.h
 * (vec_init / vec_reset / vec_step), exported with plain C types for ctypes instead of CPython.
 *
 * Seeding follows env_binding.h exactly: env i is seeded with srand(i + seed * num_envs) before its
 * init and before its reset. libc's rand() state is global to the process, so after a reset every
 * env draws its later serves from one shared stream, as in PufferLib.
 *
 * Private streams (envport_pong_private_streams) give each env its own state of that same libc
 * generator instead: glibc's initstate() seeds a caller-owned state exactly as srand() seeds the
 * default one (128 bytes selects the same TYPE_3 generator), and setstate() points rand() at it
 * before the env steps. Each env then draws the serves it would draw alone in its process, which
 * is what the JAX translation (one generator per env) does; PPO uses it to train on both backends
 * from the same random streams. The process's own stream is restored after every call. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "pong.h"

typedef struct PongConfig {
    float width, height, paddle_width, paddle_height, ball_width, ball_height, paddle_speed;
    float ball_initial_speed_x, ball_initial_speed_y, ball_max_speed_y, ball_speed_y_increment;
    unsigned int max_score;
    int frameskip;
    int continuous;
} PongConfig;

/* The fields of Pong that define its dynamics, copied out for L3's internal-state comparison. */
typedef struct PongInternal {
    float paddle_yl, paddle_yr, ball_x, ball_y, ball_vx, ball_vy;
    unsigned int score_l, score_r;
    int tick, n_bounces, win;
} PongInternal;

/* glibc's TYPE_3 generator (rand()'s default after srand) keeps 31 words plus one of bookkeeping. */
#define RAND_STATE_WORDS 32

typedef struct PongVec {
    int num_envs;
    Pong* envs;
    int32_t (*rand_states)[RAND_STATE_WORDS]; /* NULL: the process's one stream, as PufferLib */
} PongVec;

PongVec* envport_pong_init(float* observations, float* actions, float* rewards,
                           unsigned char* terminals, int num_envs, int seed,
                           const PongConfig* config) {
    if (num_envs <= 0 || config == NULL) return NULL;
    PongVec* vec = (PongVec*)calloc(1, sizeof(PongVec));
    if (vec == NULL) return NULL;
    vec->envs = (Pong*)calloc((size_t)num_envs, sizeof(Pong));
    if (vec->envs == NULL) { free(vec); return NULL; }
    vec->num_envs = num_envs;
    for (int i = 0; i < num_envs; i++) {
        Pong* env = &vec->envs[i];
        env->observations = observations + 8 * i;
        env->actions = actions + i;
        env->rewards = rewards + i;
        env->terminals = terminals + i;
        srand(i + seed * num_envs);
        env->width = config->width;
        env->height = config->height;
        env->paddle_width = config->paddle_width;
        env->paddle_height = config->paddle_height;
        env->ball_width = config->ball_width;
        env->ball_height = config->ball_height;
        env->paddle_speed = config->paddle_speed;
        env->ball_initial_speed_x = config->ball_initial_speed_x;
        env->ball_initial_speed_y = config->ball_initial_speed_y;
        env->ball_max_speed_y = config->ball_max_speed_y;
        env->ball_speed_y_increment = config->ball_speed_y_increment;
        env->max_score = config->max_score;
        env->frameskip = config->frameskip;
        env->continuous = config->continuous;
        init(env);
    }
    return vec;
}

/* From now on each env draws from its own generator (seeded by the next reset). 0, or -1 if out
 * of memory. */
int envport_pong_private_streams(PongVec* vec) {
    if (vec->rand_states != NULL) return 0;
    vec->rand_states = calloc((size_t)vec->num_envs, sizeof(*vec->rand_states));
    return vec->rand_states == NULL ? -1 : 0;
}

/* Seed env i's stream: its own (remembering the process's state the first time it is left), or the
 * process's. */
static void seed_stream(PongVec* vec, int i, unsigned int seed, char** process_state) {
    if (vec->rand_states == NULL) {
        srand(seed);
        return;
    }
    char* previous = initstate(seed, (char*)vec->rand_states[i], sizeof(vec->rand_states[i]));
    if (*process_state == NULL) *process_state = previous;
}

/* Seed env i's stream with seeds[i] and reset env i. */
void envport_pong_reset_each(PongVec* vec, const unsigned int* seeds) {
    char* process_state = NULL;
    for (int i = 0; i < vec->num_envs; i++) {
        seed_stream(vec, i, seeds[i], &process_state);
        c_reset(&vec->envs[i]);
    }
    if (process_state != NULL) setstate(process_state);
}

void envport_pong_reset(PongVec* vec, int seed) {
    char* process_state = NULL;
    for (int i = 0; i < vec->num_envs; i++) {
        seed_stream(vec, i, (unsigned int)(i + seed * vec->num_envs), &process_state);
        c_reset(&vec->envs[i]);
    }
    if (process_state != NULL) setstate(process_state);
}

void envport_pong_step(PongVec* vec) {
    if (vec->rand_states == NULL) {
        for (int i = 0; i < vec->num_envs; i++) c_step(&vec->envs[i]);
        return;
    }
    char* process_state = setstate((char*)vec->rand_states[0]);
    for (int i = 0; i < vec->num_envs; i++) {
        setstate((char*)vec->rand_states[i]);
        c_step(&vec->envs[i]);
    }
    setstate(process_state);
}

/* Many steps in one call, reading actions[t * num_envs + i] and writing step t's outputs at
 * offset t: for benchmarks and L3, where a Python call per step would measure Python. */
void envport_pong_rollout(PongVec* vec, const float* actions, int num_steps,
                          float* observations_out, float* rewards_out,
                          unsigned char* terminals_out) {
    int n = vec->num_envs;
    for (int t = 0; t < num_steps; t++) {
        for (int i = 0; i < n; i++) vec->envs[i].actions[0] = actions[(size_t)t * n + i];
        envport_pong_step(vec);
        if (observations_out != NULL) {
            for (int i = 0; i < n; i++) {
                memcpy(observations_out + ((size_t)t * n + i) * 8, vec->envs[i].observations, 8 * sizeof(float));
            }
        }
        if (rewards_out != NULL) {
            for (int i = 0; i < n; i++) rewards_out[(size_t)t * n + i] = vec->envs[i].rewards[0];
        }
        if (terminals_out != NULL) {
            for (int i = 0; i < n; i++) terminals_out[(size_t)t * n + i] = vec->envs[i].terminals[0];
        }
    }
}

int envport_pong_internal(const PongVec* vec, int index, PongInternal* out) {
    if (index < 0 || index >= vec->num_envs || out == NULL) return -1;
    const Pong* env = &vec->envs[index];
    out->paddle_yl = env->paddle_yl;
    out->paddle_yr = env->paddle_yr;
    out->ball_x = env->ball_x;
    out->ball_y = env->ball_y;
    out->ball_vx = env->ball_vx;
    out->ball_vy = env->ball_vy;
    out->score_l = env->score_l;
    out->score_r = env->score_r;
    out->tick = env->tick;
    out->n_bounces = env->n_bounces;
    out->win = env->win;
    return 0;
}

/* Put env `index` into a given state (for L1/L2 tests that start the real C code from a chosen
 * state): copies the fields, recomputes the observation buffer as a frame would, and seeds the
 * env's stream (its own, or the process's) with rand_seed. */
int envport_pong_set_internal(PongVec* vec, int index, const PongInternal* in, unsigned int rand_seed) {
    if (index < 0 || index >= vec->num_envs || in == NULL) return -1;
    Pong* env = &vec->envs[index];
    env->paddle_yl = in->paddle_yl;
    env->paddle_yr = in->paddle_yr;
    env->ball_x = in->ball_x;
    env->ball_y = in->ball_y;
    env->ball_vx = in->ball_vx;
    env->ball_vy = in->ball_vy;
    env->score_l = in->score_l;
    env->score_r = in->score_r;
    env->tick = in->tick;
    env->n_bounces = in->n_bounces;
    env->win = in->win;
    compute_observations(env);
    char* process_state = NULL;
    seed_stream(vec, index, rand_seed, &process_state);
    if (process_state != NULL) setstate(process_state);
    return 0;
}

void envport_pong_free(PongVec* vec) {
    if (vec == NULL) return;
    free(vec->rand_states);
    free(vec->envs);
    free(vec);
}
