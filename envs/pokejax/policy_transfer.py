"""PokeJAX's two L4 backends: PPO (with the observation's legal-action mask) trained on the JAX env
(make_train, one jit for every seed) or on Showdown (the host loop over Gymnasium envs), and the
greedy policy's win rate against the random opponent on either backend, over the same battles.

An evaluation battle is named by an integer seed s: both backends draw its teams, its Showdown seed
and every opponent choice from jax.random.PRNGKey(s) the way the Gymnasium envs do (gym_envs.py),
so one policy faces the very same battles on both. Since the engine is bit-exact (L3), a policy's
two win rates are then equal, not merely close; the paired TOST decides on the differences.

    python -m envs.pokejax.policy_transfer [--out DIR] [--seeds 10] [--format gen1randombattle]

Showdown trains with a small budget (it plays a few hundred decisions a second here, PokeJAX tens of
thousands), so the two backends' policies are not compared with each other (the training TOST);
each policy's win rates on the two backends are (the transfer TOST, paired, Delta = l4_delta).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from shared.ppo import PPOConfig
from shared.ppo.core import make_network
from shared.ppo.jax_loop import JaxEnvSpec
from shared.verification import l4_command
from shared.verification.l4 import L4Backend
from shared.verification.l4_backends import CompiledPPO, host_ppo_backend, jax_ppo_backend, small_budget_reason

from .jax import battle as jb
from .jax import prng
from .jax.env import BATTLE_FORMATS, OBS_SIZE, RANDOM_BATTLE, EnvParams, PokeJaxEnv, random_legal_action

# where the observation keeps the legal-action mask (jax/env.py: the mask, then the turn feature)
MASK_SLICE = (OBS_SIZE - 1 - jb.NUM_ACTIONS, OBS_SIZE - 1)
# evaluation battle e of policy seed s is battle seed EVAL_SEED_STRIDE * (eval_seed + s) + e: distinct
# battles per policy, below 2**31 (a Gymnasium seed) for eval seeds up to 21,000
EVAL_SEED_STRIDE = 100_000


def _ppo(**overrides) -> PPOConfig:
    return PPOConfig(action_mask=MASK_SLICE, **overrides)


@dataclasses.dataclass(frozen=True)
class L4Settings:
    battle_format: str = RANDOM_BATTLE
    kind: str = prng.SODIUM
    max_decisions: int = 500
    # PPO on PokeJAX: 256 battles x 32 decisions per update
    jax_ppo: PPOConfig = _ppo(total_timesteps=1_048_576, num_envs=256, num_steps=32, learning_rate=1e-3)
    # PPO on Showdown, the small budget (Showdown trains at about 300-500 decisions a second here)
    showdown_ppo: PPOConfig = _ppo(total_timesteps=8 * 128 * 16, num_envs=8, num_steps=128, learning_rate=1e-3)
    eval_battles: int = 500

    def __post_init__(self):
        shape = (self.jax_ppo.network, self.jax_ppo.activation, self.jax_ppo.action_mask)
        if shape != (self.showdown_ppo.network, self.showdown_ppo.activation, self.showdown_ppo.action_mask):
            raise ValueError("jax_ppo and showdown_ppo must make the same network (evaluation shares it)")

    def params(self) -> EnvParams:
        return EnvParams(max_decisions=self.max_decisions, battle_format=self.battle_format)


def eval_battle_seeds(settings: L4Settings, seed: int) -> np.ndarray:
    first = EVAL_SEED_STRIDE * seed
    if first + settings.eval_battles >= 2**31:
        raise ValueError(f"evaluation seed {seed} is too large: battle seeds must stay below 2**31")
    return np.arange(first, first + settings.eval_battles, dtype=np.int64)


@functools.cache
def _env(kind: str) -> PokeJaxEnv:
    return PokeJaxEnv(kind)


@functools.cache
def _greedy(settings: L4Settings):
    network = make_network(settings.jax_ppo, jb.NUM_ACTIONS)
    return jax.jit(lambda params, obs: jnp.argmax(network.apply(params, obs)[0], axis=-1))


@functools.cache
def _jax_battles(settings: L4Settings, random_policy: bool = False):
    """A jitted function (policy params, battle seeds int32[E]) -> (won bool[E], decisions int32[E]):
    whether the greedy policy (or, with random_policy, a uniformly random legal choice) won each
    battle, and after how many of its decisions the battle ended; battles are
    played with the Gymnasium env's keys (PRNGKey(seed), split once for the reset and once per
    decision), all at once, until the last one ends."""
    env, params = _env(settings.kind), settings.params()
    network = make_network(settings.jax_ppo, jb.NUM_ACTIONS)

    def choose(policy_params, obs, step_keys):
        if random_policy:  # its own keys, folded from the step's, leave the battle's keys as they are
            policy_keys = jax.vmap(lambda k: jax.random.fold_in(k, 1))(step_keys)
            legal = obs[:, MASK_SLICE[0]:MASK_SLICE[1]] > 0.5
            return jax.vmap(random_legal_action)(policy_keys, legal)
        return jnp.argmax(network.apply(policy_params, obs)[0], axis=-1)

    def start(seed):
        key, reset_key = jax.random.split(jax.random.PRNGKey(seed))
        obs, state = env.reset(reset_key, params)
        return key, obs, state

    @jax.jit
    def play(policy_params, seeds):
        keys, obs, states = jax.vmap(start)(seeds)
        finished = jnp.zeros(seeds.shape, bool)

        def running(carry):
            return ~carry[3].all()

        def decide(carry):
            keys, obs, states, finished, won, decisions = carry
            keys, step_keys = jnp.moveaxis(jax.vmap(jax.random.split)(keys), 1, 0)
            action = choose(policy_params, obs, step_keys)
            obs, states, _, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(step_keys, states, action, params)
            won = won | (~finished & info["won"])
            decisions = decisions + ~finished
            return keys, obs, states, finished | done, won, decisions

        carry = (keys, obs, states, finished, finished, jnp.zeros(seeds.shape, jnp.int32))
        return jax.lax.while_loop(running, decide, carry)[4:]

    return play


class BattleOutcomes(NamedTuple):
    won: np.ndarray  # bool per battle seed: the greedy policy won
    decisions: np.ndarray  # int per battle seed: its decisions until the battle ended


def jax_battle_outcomes(settings: L4Settings, policy_params, battle_seeds) -> BattleOutcomes:
    """The greedy policy's battles on PokeJAX, all at once."""
    seeds = jnp.asarray(np.asarray(battle_seeds), dtype=jnp.int32)
    won, decisions = _jax_battles(settings)(policy_params, seeds)
    return BattleOutcomes(np.asarray(won), np.asarray(decisions))


def showdown_battle_outcomes(settings: L4Settings, policy_params, battle_seeds,
                             show_progress: bool = False) -> BattleOutcomes:
    """The same battles on Showdown through envport/PokeShowdown-v0, one after the other (about
    500 decisions a second here: a progress bar with show_progress). The env refuses an illegal
    action (ValueError), so a policy that chose one could not pass unseen."""
    from rich.progress import track

    from .gym_envs import PokeShowdownGymEnv

    greedy = _greedy(settings)
    env = PokeShowdownGymEnv(kind=settings.kind, max_decisions=settings.max_decisions,
                             battle_format=settings.battle_format)
    won, decisions = [], []
    try:
        for battle_seed in track(battle_seeds, "battles on Showdown", disable=not show_progress, transient=True):
            obs, _ = env.reset(seed=int(battle_seed))
            for decision in range(1, settings.max_decisions + 1):
                obs, reward, terminated, truncated, _ = env.step(int(greedy(policy_params, obs)))
                if terminated or truncated:
                    won.append(reward > 0)
                    decisions.append(decision)
                    break
    finally:
        env.close()
    return BattleOutcomes(np.asarray(won, dtype=bool), np.asarray(decisions, dtype=np.int32))


def win_rate_on_jax(settings: L4Settings, policy_params, seed: int) -> float:
    return float(jax_battle_outcomes(settings, policy_params, eval_battle_seeds(settings, seed)).won.mean())


def win_rate_on_showdown(settings: L4Settings, policy_params, seed: int, show_progress: bool = False) -> float:
    battles = showdown_battle_outcomes(settings, policy_params, eval_battle_seeds(settings, seed), show_progress)
    return float(battles.won.mean())


def random_policy_win_rate(settings: L4Settings, battles: int, first_seed: int = 2_000_000_000) -> float:
    """The win rate of uniformly random legal choices against the random opponent, on PokeJAX, over
    `battles` battles that no policy is evaluated on: the bar a trained policy must clear."""
    seeds = jnp.arange(first_seed, first_seed + battles, dtype=jnp.int32)
    return float(np.mean(np.asarray(_jax_battles(settings, random_policy=True)(None, seeds)[0])))


@functools.cache
def _jax_trainer(settings: L4Settings) -> CompiledPPO:
    """One compiled make_train for every seed: the battle step alone takes about a minute to compile."""
    env = _env(settings.kind)
    spec = JaxEnvSpec("pokejax", env.reset, env.step, settings.params(), env.observation_shape, env.num_actions)
    return CompiledPPO(settings.jax_ppo, spec)


def jax_backend(settings: L4Settings = L4Settings(), show_progress: bool = True) -> L4Backend:
    return jax_ppo_backend("PokeJAX", lambda: _jax_trainer(settings),
                           lambda params, seed: win_rate_on_jax(settings, params, seed), show_progress)


def _showdown_env(settings: L4Settings):
    """The registered Gymnasium env (with gymnasium.make's wrappers), as train_host steps it."""
    import gymnasium

    import envs.pokejax  # noqa: F401  (registers the ids)

    return gymnasium.make("envport/PokeShowdown-v0", kind=settings.kind, max_decisions=settings.max_decisions,
                          battle_format=settings.battle_format)


def showdown_backend(settings: L4Settings = L4Settings(), show_progress: bool = True) -> L4Backend:
    return host_ppo_backend(
        "Showdown", settings.showdown_ppo, functools.partial(_showdown_env, settings),
        lambda params, seed: win_rate_on_showdown(settings, params, seed, show_progress), show_progress)


def run(settings: L4Settings, seeds, out_dir: Path, delta: float, show_progress: bool = True):
    from shared.verification.l4 import run_policy_transfer

    return run_policy_transfer(
        [jax_backend(settings, show_progress), showdown_backend(settings, show_progress)],
        env=f"pokejax ({settings.battle_format}; greedy win rate against the random opponent over "
        f"{settings.eval_battles} battles)",
        delta=delta, seeds=seeds, out_dir=out_dir, compare_training=False,
        training_not_compared=small_budget_reason("Showdown", settings.showdown_ppo, "PokeJAX", settings.jax_ppo),
    )


def l4_delta() -> float:
    """translation.toml's [equivalence] l4_delta."""
    return l4_command.l4_delta(Path(__file__).resolve().parent)


def main(argv=None) -> int:
    parser = l4_command.l4_argument_parser(__doc__.split("\n\n")[0], "pokejax")
    parser.add_argument("--format", choices=BATTLE_FORMATS, default=RANDOM_BATTLE)
    parser.add_argument("--eval-battles", type=int, default=L4Settings.eval_battles)
    parser.add_argument("--jax-steps", type=int, default=L4Settings.jax_ppo.total_timesteps,
                        help="PPO decisions per seed on PokeJAX")
    parser.add_argument("--showdown-steps", type=int, default=L4Settings.showdown_ppo.total_timesteps,
                        help="PPO decisions per seed on Showdown")
    args = parser.parse_args(argv)
    defaults = L4Settings()
    settings = L4Settings(
        battle_format=args.format, eval_battles=args.eval_battles,
        jax_ppo=dataclasses.replace(defaults.jax_ppo, total_timesteps=args.jax_steps),
        showdown_ppo=dataclasses.replace(defaults.showdown_ppo, total_timesteps=args.showdown_steps))
    return l4_command.run_l4_command(
        "pokejax", args.out, lambda out: run(settings, range(args.seeds), out, l4_delta()))


if __name__ == "__main__":
    raise SystemExit(main())
