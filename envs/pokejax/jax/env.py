"""PokeJAX as a gymnax-style environment: the agent plays p1 of a Gen 1 battle against a
uniformly random opponent.

    env = PokeJaxEnv()
    obs, state = env.reset(key, env.default_params)
    obs, state, reward, done, info = env.step(key, state, action, env.default_params)  # auto-resets
    obs, state, reward, done, info = env.step_env(key, state, action, env.default_params)  # no reset

Teams (EnvParams.battle_format): in "gen1customgame" (the default) both sides draw a team from
the reset key: six distinct species, levels 50-100, random DVs and stat experience, four distinct
SUPPORTED_MOVES each, with no clauses; in "gen1randombattle" the key picks one of 4,096 pairs of
Showdown's random-battle teams (made once per env by jax/teams.py from fixed team seeds: making
teams at every auto-reset would cost 6-16 battle steps) and the battle follows its Standard
ruleset.
The battle's Showdown seed is drawn from the key too: `teams(key)` gives the seed and both teams, and
info["opponent_actions"] the opponent's choices, so that any episode can be replayed on Showdown.

Actions (9): 0-3 use move slot 1-4, 4-8 switch to slot 2-6 of Showdown's team order (see
battle.py). When the opponent must replace a fainted Pokemon, it does so inside the same step, so
the agent is asked only when it has a choice. An illegal action (a disabled move, a fainted or
absent Pokemon, a move during a forced switch) ends the episode as a loss (reward -1), as Pgx does;
the legal-action mask (`legal_mask(state)`) is in the observation and in `info["action_mask"]`.

Reward: +1 when the agent wins, -1 when it loses, 0 otherwise, including a draw (both sides' last
Pokemon falling to one Explosion or to recoil: info["drawn"]); an episode is also cut at
`max_decisions` (reward 0).

Observation (float32[OBS_SIZE]), in this order:
  for p1 then p2, for each of the 6 team slots in Showdown's order (slot 1 active):
      hp / max hp, alive (0/1), level / 100, the Pokemon's types as a 16-way two-hot (one-hot when
      single-typed), its status one-hot (par, brn, psn, slp, frz, tox; all 0 when healthy or
      fainted)                                                                6 x 2 x 25 = 300
  for p1's then p2's active Pokemon: its six stat stages (atk, def, special, spe, accuracy,
      evasion) as (stage + 6) / 12, and its side's volatiles (tables.VOLATILES: reflect, light
      screen, focus energy, mist, minimize, defense curl, confusion, flinch, must recharge,
      leech seed, toxic's counter running, a charged two-turn move, Dig/Fly invulnerability,
      substitute, disable, Thrash's lock, rage, partially trapped, holding a trapping lock,
      a lock's afterglow, Bide) as 0/1                                        2 x 27 = 54
  for each of p1's active Pokemon's 4 move slots: power / 200 (Gen 1's strongest, Explosion, is
      170; fixed-damage and OHKO moves are 0), accuracy / 100 (1 for never-miss), the move's type
      one-hot (16), physical (0/1), special (0/1), PP / max PP (at most 1)   4 x 21 = 84
  the legal-action mask (9), and min(turn, 1000) / 1000 (1)                                   10
Every feature lies in [0, 1]. The battle is fully observed: p2's whole team is visible, as are
its HP and statuses, which Showdown would show a player only once revealed.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.pokejax.jax import battle as jb
from envs.pokejax.jax import prng, stats
from envs.pokejax.jax import teams as jax_teams
from envs.pokejax.jax.tables import ALWAYS_HITS, BOOST_KEYS, NUM_SPECIES, STAT_NAMES, STATUSES, VOLATILES, gen1_tables

NUM_TYPES = 16
MAX_TURN_FEATURE = 1000
POWER_SCALE = 200
MAX_STAGE = 6
# the statuses that get a feature (the indices in STATUSES of par, brn, psn, slp, frz, tox)
OBSERVED_STATUSES = tuple(STATUSES.index(s) for s in ("par", "brn", "psn", "slp", "frz", "tox"))
POKEMON_FEATURES = 3 + NUM_TYPES + len(OBSERVED_STATUSES)
ACTIVE_FEATURES = len(BOOST_KEYS) + len(VOLATILES)
MOVE_FEATURES = 5 + NUM_TYPES
OBS_SIZE = (
    jb.NUM_SIDES * (jb.TEAM_SIZE * POKEMON_FEATURES + ACTIVE_FEATURES)
    + jb.NUM_MOVE_SLOTS * MOVE_FEATURES
    + jb.NUM_ACTIONS
    + 1
)


CUSTOM_GAME = "gen1customgame"
RANDOM_BATTLE = "gen1randombattle"
BATTLE_FORMATS = (CUSTOM_GAME, RANDOM_BATTLE)


@struct.dataclass
class EnvParams:
    max_decisions: int = 500
    level_range: tuple[int, int] = struct.field(pytree_node=False, default=(50, 100))
    # CUSTOM_GAME: random teams of the supported moves (any species, levels in level_range), no
    # clauses; RANDOM_BATTLE: Showdown's gen1randombattle teams (jax/teams.py) and its Standard
    # ruleset (Sleep and Freeze Clause Mods, Showdown's bit truncation)
    battle_format: str = struct.field(pytree_node=False, default=CUSTOM_GAME)

    def __post_init__(self):
        if self.battle_format not in BATTLE_FORMATS:
            raise ValueError(f"battle_format must be one of {BATTLE_FORMATS}, got {self.battle_format!r}")
        # max_decisions is a pytree leaf: JAX rebuilds params with tracers (or placeholders) in it, which
        # cannot be checked here; a value given by hand can
        decisions = self.max_decisions
        if isinstance(decisions, (bool, np.bool_, str, float)) or (isinstance(decisions, (int, np.integer))
                                                                  and decisions < 1):
            raise ValueError(f"max_decisions must be a whole number >= 1, got {decisions!r}")
        low_high = self.level_range
        if not (isinstance(low_high, tuple) and len(low_high) == 2
                and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in low_high)
                and 1 <= low_high[0] <= low_high[1] <= 100):
            raise ValueError(f"level_range must be a tuple (low, high) of levels with 1 <= low <= high <= 100, "
                             f"got {low_high!r}")


@struct.dataclass
class EnvState:
    battle: jb.BattleState
    decisions: jax.Array  # int32: the agent's decisions in this episode
    seed: jax.Array  # uint32[8]: the battle's Showdown seed (prng.format_seed replays it on Showdown)


def _distinct(bits: jax.Array, population: int, count: int) -> jax.Array:
    """`count` distinct indices below `population`: a partial Fisher-Yates over arange(population)
    with one random word per swap (the modulo's bias, below 1e-7 here, does not matter for teams)."""
    pool = jnp.arange(population, dtype=jnp.int32)
    for i in range(count):
        j = i + (bits[i] % jnp.uint32(population - i)).astype(jnp.int32)
        a, b = pool[i], pool[j]
        pool = pool.at[i].set(b).at[j].set(a)
    return pool[:count]


def random_team(key: jax.Array, move_pool: jax.Array, level_range: tuple[int, int]) -> tuple:
    """(species[6], level[6], moves[6, 4], ivs[6, 5], evs[6, 5]) for one side, from one batch of
    random words (jax.random.permutation sorts, and made resets 20x slower than a battle step)."""
    n, m = jb.TEAM_SIZE, jb.NUM_MOVE_SLOTS
    bits = jax.random.bits(key, (n + n + n * m + 2 * 5 * n,), jnp.uint32)
    species_bits, level_bits, move_bits, iv_bits, ev_bits = jnp.split(
        bits, [n, 2 * n, 2 * n + n * m, 2 * n + n * m + 5 * n]
    )
    species = _distinct(species_bits, NUM_SPECIES, n) + 1
    low, high = level_range
    level = low + (level_bits % jnp.uint32(high - low + 1)).astype(jnp.int32)
    pick = jax.vmap(lambda b: _distinct(b, move_pool.shape[0], m))
    moves = move_pool[pick(move_bits.reshape(n, m))]
    ivs = (iv_bits.reshape(n, 5) % 16).astype(jnp.int32) * 2
    evs = (ev_bits.reshape(n, 5) % 256).astype(jnp.int32)
    return species, level, moves, ivs, evs


# gen1randombattle team pairs the env draws from (random_battle_bank): making a pair in JAX costs
# as much as 6-16 battle steps (bench.py), too much for the auto-reset that runs at every step
RANDOM_BATTLE_BANK = 4096


def random_battle_team_seed(index: int, side: int) -> str:
    """The Showdown team seed of side `side` of the bank's pair `index` (gen5 seeds, so that
    Showdown's own generator can make the same teams)."""
    return f"gen5,{(2 * index + side) * 0x9E3779B97F4A7C15 % 2**64:016x}"


def random_battle_teams(kind: str, p1_seed: jax.Array, p2_seed: jax.Array) -> list[tuple]:
    """Both sides' gen1randombattle teams from two team seeds (PRNG states), as Showdown's
    generator makes them for one battle (the second knows whether the first has Ditto); each
    (species, level, moves, ivs, evs) with stats in STAT_NAMES order."""
    first, _ = jax_teams.generate_team(kind, p1_seed, False)
    second, _ = jax_teams.generate_team(kind, p2_seed, first.has_ditto)
    columns = jnp.asarray([jax_teams.SET_STATS.index(name) for name in STAT_NAMES])
    return [(t.species, t.level, t.moves, t.ivs[:, columns], t.evs[:, columns]) for t in (first, second)]


def random_legal_action(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random legal action (0 when none is legal)."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


class PokeJaxEnv:
    """Functional env; every method is pure and jit/vmap-safe. `kind` is the PRNG ("sodium", Showdown's
    default, or "gen5")."""

    def __init__(self, kind: str = prng.SODIUM):
        if kind not in prng.KINDS:
            raise ValueError(f"kind (Showdown's PRNG) must be one of {prng.KINDS}, got {kind!r}")
        self.kind = kind
        self.tables = jb.Tables.load()
        t = gen1_tables()
        self.move_pool = jnp.asarray([t.move_index(m) for m in jb.SUPPORTED_MOVES], dtype=jnp.int32)
        self.num_actions = jb.NUM_ACTIONS
        self.observation_shape = (OBS_SIZE,)
        self._random_battle_bank = None

    @property
    def default_params(self) -> EnvParams:
        return EnvParams()

    # -- battles ------------------------------------------------------------------------------------

    def teams(self, key: jax.Array, params: EnvParams) -> tuple:
        """(seed, species, level, moves, ivs, evs) of the battle that `reset(key)` starts, each
        with a leading side axis (seed aside): what Showdown needs to play the same battle."""
        seed_key, p1_key, p2_key = jax.random.split(key, 3)
        if params.battle_format == RANDOM_BATTLE:
            # a team pair of the bank (making one in every step's auto-reset would cost more than
            # the battle step)
            bank = self.random_battle_bank()
            pick = jax.random.randint(p1_key, (), 0, RANDOM_BATTLE_BANK)
            teams = [tuple(part[pick, side] for part in bank) for side in range(jb.NUM_SIDES)]
        else:
            teams = [random_team(k, self.move_pool, params.level_range) for k in (p1_key, p2_key)]
        species, level, moves, ivs, evs = (jnp.stack(parts).astype(jnp.int32) for parts in zip(*teams, strict=True))
        return self._seed(seed_key), species, level, moves, ivs, evs

    def random_battle_bank(self) -> tuple:
        """RANDOM_BATTLE_BANK gen1randombattle team pairs, made once per env (jax/teams.py, from
        the team seeds random_battle_team_seed(i, side)): (species, level, moves, ivs, evs), each
        [RANDOM_BATTLE_BANK, 2, ...]. Computed eagerly even when called inside a jit trace."""
        if self._random_battle_bank is None:
            with jax.ensure_compile_time_eval():
                seeds = [
                    jnp.stack([prng.parse_seed(random_battle_team_seed(i, side))[1] for i in range(RANDOM_BATTLE_BANK)])
                    for side in range(jb.NUM_SIDES)
                ]
                pairs = jax.jit(jax.vmap(functools.partial(random_battle_teams, prng.GEN5)))(*seeds)
                self._random_battle_bank = tuple(
                    jnp.stack([pairs[0][part], pairs[1][part]], axis=1).astype(jnp.int32) for part in range(5)
                )
        return self._random_battle_bank

    def _seed(self, key: jax.Array) -> jax.Array:
        """A Showdown PRNG seed: sodium's 16 random bytes, as Showdown generates its seeds (the
        other 16 are zero), or gen5's 64 bits."""
        words = jax.random.bits(key, (4,), jnp.uint32)
        used = 4 if self.kind == prng.SODIUM else 2
        return jnp.zeros(prng.STATE_WORDS, jnp.uint32).at[:used].set(words[:used])

    def reset(self, key: jax.Array, params: EnvParams) -> tuple[jax.Array, EnvState]:
        seed, species, level, moves, ivs, evs = self.teams(key, params)
        battle = jb.new_battle(
            self.kind,
            seed,
            species,
            level,
            moves,
            ivs,
            evs,
            self.tables,
            standard_format=params.battle_format == RANDOM_BATTLE,
        )
        state = EnvState(battle=battle, decisions=jnp.int32(0), seed=seed)
        return self.observation(state), state

    def legal_mask(self, state: EnvState) -> jax.Array:
        return jb.legal_actions(state.battle)[0]

    def _opponent_step(self, key: jax.Array, battle: jb.BattleState, p1_action: jax.Array) -> tuple:
        opponent_mask = jb.legal_actions(battle)[1]
        opponent_action = random_legal_action(key, opponent_mask)
        after = jb.step(self.kind, battle, jnp.stack([p1_action, opponent_action]), self.tables)
        return after, jnp.where(opponent_mask.any(), opponent_action, -1)

    def step_env(
        self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict]:
        """One decision without the auto-reset (gymnax's step_env): the episode as the decision left
        it, ended or not. step() is this and then, where done, a reset from the key's third part.
        The Gymnasium envs step with this: their reset comes from reset() or the next step."""
        action = jnp.asarray(action, dtype=jnp.int32)
        turn_key, switch_key, _ = jax.random.split(key, 3)
        legal = (
            self.legal_mask(state)[jnp.clip(action, 0, jb.NUM_ACTIONS - 1)] & (action >= 0) & (action < jb.NUM_ACTIONS)
        )
        battle, opponent_action = self._opponent_step(turn_key, state.battle, action)
        # the opponent replaces a fainted Pokemon within the same step (the agent waits meanwhile)
        opponent_switches = (battle.request[0] == jb.REQUEST_WAIT) & ~battle.ended
        switched, replacement = self._opponent_step(switch_key, battle, jnp.int32(0))
        battle = jax.tree_util.tree_map(lambda a, b: jnp.where(opponent_switches, a, b), switched, battle)
        replacement = jnp.where(opponent_switches, replacement, -1)
        decisions = state.decisions + 1
        won = battle.ended & (battle.winner == jb.P1_WINS)
        lost = (battle.ended & (battle.winner == jb.P2_WINS)) | ~legal
        # both sides' last Pokemon falling together (Explosion, recoil) is a draw: reward 0
        drawn = battle.ended & (battle.winner == jb.NO_WINNER) & legal
        truncated = decisions >= params.max_decisions
        done = won | lost | drawn | truncated
        reward = jnp.where(won & legal, 1.0, jnp.where(lost, -1.0, 0.0)).astype(jnp.float32)
        next_state = EnvState(battle=battle, decisions=decisions, seed=state.seed)
        info = {
            "action_mask": self.legal_mask(next_state),
            "illegal_action": ~legal,
            "won": won & legal,
            "lost": lost,
            "drawn": drawn,
            "truncated": truncated & ~(won | lost | drawn),
            # what the opponent chose (-1: nothing asked of it), so a battle can be replayed on Showdown
            "opponent_actions": jnp.stack([opponent_action, replacement]),
        }
        return self.observation(next_state), next_state, reward, done, info

    def step(
        self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict]:
        final_obs, final_state, reward, done, info = self.step_env(key, state, action, params)
        reset_obs, reset_state = self.reset(jax.random.split(key, 3)[2], params)
        next_state = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), reset_state, final_state)
        info = {
            **info,
            "action_mask": self.legal_mask(next_state),
            # the observation and mask of the state the step ended in (before any auto-reset)
            "final_observation": final_obs,
            "final_action_mask": info["action_mask"],
        }
        return jnp.where(done, reset_obs, final_obs), next_state, reward, done, info

    # -- observation --------------------------------------------------------------------------------

    def observation(self, state: EnvState) -> jax.Array:
        b = state.battle
        return encode_observation(
            self.tables,
            b.hp,
            b.stats[..., jb.HP],
            b.level,
            b.types,
            b.status,
            b.boosts,
            b.volatiles,
            b.moves[0, 0],
            b.pp[0, 0],
            self.legal_mask(state),
            b.turn,
        )


def encode_observation(
    tables, hp, max_hp, level, types, status, boosts, volatiles, active_moves, active_pp, legal_mask, turn
):
    """The observation vector (module docstring) from plain arrays, so that the Showdown backend
    (gym_envs.py) encodes Showdown's state with this very function.

    hp, max_hp, level, status (index in STATUSES): [2, 6]; types: [2, 6, 2]; boosts: [2, 6] (the
    active Pokemon's stages in BOOST_KEYS order); volatiles: bool [2, len(VOLATILES)];
    active_moves, active_pp: [4] (p1's active Pokemon); legal_mask: [9]; turn: scalar;
    tables: battle.Tables."""
    type_hot = (types[..., :, None] == jnp.arange(NUM_TYPES)).any(axis=-2)  # [2, 6, 16]
    status_hot = status[..., None] == jnp.asarray(OBSERVED_STATUSES)  # [2, 6, 6]
    pokemon = jnp.concatenate(
        [
            (hp / jnp.maximum(max_hp, 1))[..., None],
            (hp > 0)[..., None],
            (level / 100)[..., None],
            type_hot,
            status_hot,
        ],
        axis=-1,
    )
    active = jnp.concatenate([(boosts + MAX_STAGE) / (2 * MAX_STAGE), volatiles], axis=-1)  # [2, 6 + len(VOLATILES)]
    accuracy = tables.move_accuracy[active_moves]
    max_pp = jnp.maximum(stats.max_pp(tables.move_pp[active_moves]), 1)
    category = tables.move_category[active_moves]
    move_features = (
        jnp.concatenate(
            [
                (tables.move_power[active_moves] / POWER_SCALE)[:, None],
                jnp.where(accuracy == ALWAYS_HITS, 1.0, accuracy / 100)[:, None],
                tables.move_type[active_moves][:, None] == jnp.arange(NUM_TYPES),
                (category == 0)[:, None],
                (category == 1)[:, None],
                # (clipped: a move used at 0 PP goes to -1 in the custom game, to 63 in the
                # standard format, and Mimic's copy keeps Mimic's PP)
                jnp.clip(active_pp / max_pp, 0.0, 1.0)[:, None],
            ],
            axis=-1,
        )
        * (active_moves > 0)[:, None]
    )
    return jnp.concatenate(
        [
            pokemon.reshape(-1).astype(jnp.float32),
            active.reshape(-1).astype(jnp.float32),
            move_features.reshape(-1).astype(jnp.float32),
            jnp.asarray(legal_mask).astype(jnp.float32),
            (jnp.minimum(turn, MAX_TURN_FEATURE) / MAX_TURN_FEATURE).reshape(1).astype(jnp.float32),
        ]
    ).astype(jnp.float32)
