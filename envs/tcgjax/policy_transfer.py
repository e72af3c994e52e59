"""TCGJax's two L4 backends: PPO (with the observation's legal-action mask) trained against the random
opponent on the JAX env (make_train, one jit for every seed) or on the Python reference (the host loop
over Gymnasium envs), and the greedy policy's win rate on either backend, over the same episodes.

Both backends play the fixed decks: every episode a pair of them (the agent's and the opponent's), all
36 pairs equally often. An evaluation episode is named by an integer seed s: its decks are
gym_envs.fixed_pair(s) and its game and opponent streams come from s, on the reference env
(reset(seed=s)) and on the JAX env (start(pair, s)) alike, so one policy meets the very same games on
both. The engines being bit-exact (L3), a policy's two win rates are then equal, not merely close; the
paired TOST decides on the differences.

    python -m envs.tcgjax.policy_transfer [--out DIR] [--seeds 10] [--jax-steps N] [--reference-steps N]

The reference trains with a small budget (about 1.3K decisions a second here, the JAX env 5K in PPO),
so the two backends' policies are not compared with each other (the training TOST); each policy's win
rates on the two backends are (the transfer TOST, paired, Delta = l4_delta() = 0.05).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from envs.tcgjax.gym_envs import FIXED_NAMES, TcgReferenceEnv, fixed_pair
from envs.tcgjax.jax.env import AGENT, TcgJaxEnv, fixed_bank
from envs.tcgjax.reference import actions as A
from envs.tcgjax.reference.observation import MASK_SLICE, OBS_SIZE
from shared.ppo import PPOConfig
from shared.ppo.core import make_network
from shared.ppo.jax_loop import JaxEnvSpec
from shared.verification import l4_command
from shared.verification.l4 import L4Backend
from shared.verification.l4_backends import CompiledPPO, host_ppo_backend, jax_ppo_backend, small_budget_reason

# evaluation episode e of policy seed s is episode seed EVAL_SEED_STRIDE * (eval_seed + s) + e: distinct
# episodes per policy, below 2**31 (a Gymnasium seed); a multiple of 36, so each policy meets every
# deck pair equally often when its episode count is a multiple of 36
EVAL_SEED_STRIDE = 36 * 2_800


def _ppo(**overrides) -> PPOConfig:
    return PPOConfig(action_mask=MASK_SLICE, num_minibatches=4, **overrides)


@dataclasses.dataclass(frozen=True)
class L4Settings:
    max_decisions: int = 2000
    # PPO on TCGJax: 256 games x 32 decisions per update, 64 updates (return 0.94 by then in a 2M-step trial)
    jax_ppo: PPOConfig = _ppo(total_timesteps=524_288, num_envs=256, num_steps=32, learning_rate=1e-3)
    # PPO on the reference, the small budget
    reference_ppo: PPOConfig = _ppo(total_timesteps=8 * 128 * 48, num_envs=8, num_steps=128, learning_rate=1e-3)
    eval_episodes: int = 504  # 14 per deck pair

    def __post_init__(self):
        shape = (self.jax_ppo.network, self.jax_ppo.activation, self.jax_ppo.action_mask)
        if shape != (self.reference_ppo.network, self.reference_ppo.activation, self.reference_ppo.action_mask):
            raise ValueError("jax_ppo and reference_ppo must make the same network (evaluation shares it)")


def eval_episode_seeds(settings: L4Settings, seed: int) -> np.ndarray:
    first = EVAL_SEED_STRIDE * seed
    if first + settings.eval_episodes >= 2**31:
        raise ValueError(f"evaluation seed {seed} is too large: episode seeds must stay below 2**31")
    return np.arange(first, first + settings.eval_episodes, dtype=np.int64)


@functools.cache
def _env() -> TcgJaxEnv:
    return TcgJaxEnv(bank="fixed")


def _params(settings: L4Settings):
    return fixed_bank().replace(max_decisions=settings.max_decisions)


@functools.cache
def _greedy(settings: L4Settings):
    network = make_network(settings.jax_ppo, A.NUM_ACTIONS)
    return jax.jit(lambda params, obs: jnp.argmax(network.apply(params, obs)[0], axis=-1))


@functools.cache
def _jax_episodes(settings: L4Settings, random_policy: bool = False):
    """A jitted function (policy params, deck pairs int32[E, 2], episode seeds uint32[E]) -> (won bool[E],
    decisions int32[E]): whether the greedy policy (or, with random_policy, a uniformly random legal
    choice) won each episode and after how many of its decisions it ended; all episodes at once,
    until the last one ends (the env's auto-reset key is never used: a finished episode is ignored)."""
    env, params = _env(), _params(settings)
    network = make_network(settings.jax_ppo, A.NUM_ACTIONS)

    def choose(policy_params, obs, key):
        legal = obs[:, MASK_SLICE[0]:MASK_SLICE[1]] > 0.5
        if random_policy:
            return jax.random.categorical(key, jnp.where(legal, 0.0, -jnp.inf))
        return jnp.argmax(network.apply(policy_params, obs)[0], axis=-1)

    @jax.jit
    def play(policy_params, pairs, seeds):
        obs, states = jax.vmap(env.start, in_axes=(0, 0, 0, None))(pairs, seeds, jnp.zeros_like(seeds), params)
        finished = jnp.zeros(seeds.shape, bool)

        def running(carry):
            return ~carry[2].all()

        def decide(carry):
            obs, states, finished, won, decisions, key = carry
            key, choice_key = jax.random.split(key)
            action = choose(policy_params, obs, choice_key)
            step_keys = jax.random.split(jax.random.PRNGKey(0), seeds.shape[0])
            obs, states, _, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(step_keys, states, action, params)
            won = won | (~finished & done & (info["winner"] == AGENT))
            decisions = decisions + ~finished
            return obs, states, finished | done, won, decisions, key

        carry = (obs, states, finished, finished, jnp.zeros(seeds.shape, jnp.int32), jax.random.PRNGKey(1))
        return jax.lax.while_loop(running, decide, carry)[3:5]

    return play


class EpisodeOutcomes(NamedTuple):
    won: np.ndarray  # bool per episode seed: the greedy policy won
    decisions: np.ndarray  # int per episode seed: its decisions until the episode ended


def _pairs(seeds) -> np.ndarray:
    return np.array([fixed_pair(int(s)) for s in seeds], np.int32).reshape(-1, 2)


def jax_episode_outcomes(settings: L4Settings, policy_params, episode_seeds) -> EpisodeOutcomes:
    """The greedy policy's episodes on TCGJax, all at once."""
    seeds = np.asarray(episode_seeds)
    won, decisions = _jax_episodes(settings)(policy_params, jnp.asarray(_pairs(seeds)), jnp.asarray(seeds, jnp.uint32))
    return EpisodeOutcomes(np.asarray(won), np.asarray(decisions))


def reference_episode_outcomes(settings: L4Settings, policy_params, episode_seeds,
                               show_progress: bool = False) -> EpisodeOutcomes:
    """The same episodes on the Python reference (envport/TcgPocketReference-v0, decks="fixed"), one
    after the other. The env refuses an illegal action (ValueError), so a policy that chose one could
    not pass unseen."""
    from rich.progress import track

    greedy = _greedy(settings)
    env = TcgReferenceEnv(decks="fixed", max_decisions=settings.max_decisions)
    won, decisions = [], []
    for episode_seed in track(episode_seeds, "episodes on the reference", disable=not show_progress, transient=True):
        obs, _ = env.reset(seed=int(episode_seed))
        for decision in range(1, settings.max_decisions + 1):
            obs, reward, terminated, truncated, _ = env.step(int(greedy(policy_params, obs)))
            if terminated or truncated:
                won.append(reward > 0)
                decisions.append(decision)
                break
    return EpisodeOutcomes(np.asarray(won, dtype=bool), np.asarray(decisions, dtype=np.int32))


def win_rate_on_jax(settings: L4Settings, policy_params, seed: int) -> float:
    return float(jax_episode_outcomes(settings, policy_params, eval_episode_seeds(settings, seed)).won.mean())


def win_rate_on_reference(settings: L4Settings, policy_params, seed: int, show_progress: bool = False) -> float:
    episodes = reference_episode_outcomes(settings, policy_params, eval_episode_seeds(settings, seed), show_progress)
    return float(episodes.won.mean())


def random_policy_win_rate(settings: L4Settings, episodes: int, first_seed: int = 2_000_000_000) -> float:
    """The win rate of uniformly random legal choices against the random opponent on TCGJax, over
    `episodes` episodes that no policy is evaluated on: the bar a trained policy must clear."""
    seeds = np.arange(first_seed, first_seed + episodes, dtype=np.int64)
    won, _ = _jax_episodes(settings, random_policy=True)(None, jnp.asarray(_pairs(seeds)), jnp.asarray(seeds, jnp.uint32))
    return float(np.mean(np.asarray(won)))


@functools.cache
def _jax_trainer(settings: L4Settings) -> CompiledPPO:
    """One compiled make_train for every seed: it takes about two minutes here."""
    env = _env()
    spec = JaxEnvSpec("tcgjax", env.reset, env.step, _params(settings), (OBS_SIZE,), env.num_actions,
                      step_batch=env.step_batch)
    return CompiledPPO(settings.jax_ppo, spec)


def jax_backend(settings: L4Settings = L4Settings(), show_progress: bool = True) -> L4Backend:
    return jax_ppo_backend("TCGJax", lambda: _jax_trainer(settings),
                           lambda params, seed: win_rate_on_jax(settings, params, seed), show_progress)


def reference_backend(settings: L4Settings = L4Settings(), show_progress: bool = True) -> L4Backend:
    return host_ppo_backend(
        "reference", settings.reference_ppo,
        functools.partial(TcgReferenceEnv, decks="fixed", max_decisions=settings.max_decisions),
        lambda params, seed: win_rate_on_reference(settings, params, seed, show_progress), show_progress)


def run(settings: L4Settings, seeds, out_dir: Path, delta: float, show_progress: bool = True):
    from shared.verification.l4 import run_policy_transfer

    return run_policy_transfer(
        [jax_backend(settings, show_progress), reference_backend(settings, show_progress)],
        env=f"tcgjax (greedy win rate against the random opponent over {settings.eval_episodes} episodes "
        f"of the {len(FIXED_NAMES)} fixed decks)",
        delta=delta, seeds=seeds, out_dir=out_dir, compare_training=False,
        training_not_compared=small_budget_reason("the reference", settings.reference_ppo, "TCGJax", settings.jax_ppo),
    )


def l4_delta() -> float:
    """translation.toml's [equivalence] l4_delta (0.05: issue 7's margin on the win rate)."""
    return l4_command.l4_delta(Path(__file__).resolve().parent)


def main(argv=None) -> int:
    parser = l4_command.l4_argument_parser(__doc__.split("\n\n")[0], "tcgjax")
    parser.add_argument("--eval-episodes", type=int, default=L4Settings.eval_episodes)
    parser.add_argument("--jax-steps", type=int, default=L4Settings.jax_ppo.total_timesteps,
                        help="PPO decisions per seed on TCGJax")
    parser.add_argument("--reference-steps", type=int, default=L4Settings.reference_ppo.total_timesteps,
                        help="PPO decisions per seed on the reference")
    args = parser.parse_args(argv)
    defaults = L4Settings()
    settings = L4Settings(
        eval_episodes=args.eval_episodes,
        jax_ppo=dataclasses.replace(defaults.jax_ppo, total_timesteps=args.jax_steps),
        reference_ppo=dataclasses.replace(defaults.reference_ppo, total_timesteps=args.reference_steps))
    return l4_command.run_l4_command(
        "tcgjax", args.out, lambda out: run(settings, range(args.seeds), out, l4_delta()),
        notes=lambda: [f"random legal play's win rate (TCGJax, 2,016 episodes): "
                       f"{random_policy_win_rate(settings, 2016):.3f}"])


if __name__ == "__main__":
    raise SystemExit(main())
