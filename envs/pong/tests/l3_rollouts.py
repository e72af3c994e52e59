"""L3: 100 episodes on PufferLib's C Pong and on the JAX translation, same seeds, same actions;
every step's observation, reward, terminal and internal state must be bitwise equal."""

import dataclasses

import numpy as np
import pytest

from envs.pong import backends
from envs.pong.action_sources import mixed
from envs.pong.jax import env as jax_pong
from envs.pong.params import PongConfig
from shared.verification.l3 import EXACT, L3Divergence, compare_rollouts, first_divergence, play_actions, replay


@pytest.mark.parametrize("frameskip", [1, 8])
def test_l3_bit_exact_100_episodes(frameskip):
    config = PongConfig(frameskip=frameskip)
    suffix = "" if frameskip == 1 else "_frameskip8"
    result = compare_rollouts(
        backends.CPongBackend(config), backends.JaxPongBackend(config), env_name="pong",
        episodes=100, action_source=mixed(config), max_steps=20_000,
        reference_factory=f"envs.pong.backends:c_backend{suffix}",
        translation_factory=f"envs.pong.backends:jax_backend{suffix}",
    )
    print(result.summary())
    assert result.episodes == 100
    assert "state.ball_vy" in result.fields_compared and "observation" in result.fields_compared
    # every episode ran to its end (no episode cut by max_steps), and the tracker episodes won points
    assert max(result.episode_lengths) < 20_000
    assert max(result.episode_returns) > -18


def test_l3_reports_a_planted_bug():
    """A translation with the spin increment off by one float32 ulp must be caught, with a report
    that names the first internal field to diverge and a reproducer that reproduces it."""
    config = PongConfig()
    params = jax_pong.EnvParams.from_config(config)
    one_ulp_more = np.nextafter(np.float32(params.ball_speed_y_increment), np.float32(4))
    wrong = backends.JaxPongBackend(config, dataclasses.replace(params, ball_speed_y_increment=one_ulp_more),
                                    name="JAX Pong with a planted bug")
    with pytest.raises(L3Divergence) as caught:
        compare_rollouts(backends.CPongBackend(config), wrong, env_name="pong", episodes=6,
                         action_source=mixed(config), max_steps=20_000)
    report = str(caught.value)
    assert "episode" in report and "step" in report and "first internal field to diverge: state.ball_vy" in report
    assert "actions=[" in report
    error = caught.value
    assert error.divergence.step == len(error.actions)
    # the reproducer's action history leads to the same divergence when replayed step by step
    divergence = first_divergence(play_actions(backends.CPongBackend(config), error.seed, error.actions),
                                  play_actions(wrong, error.seed, error.actions), EXACT)
    assert divergence is not None and divergence.step == error.divergence.step


def test_replay_agrees_on_a_correct_translation(capsys):
    assert replay("envs.pong.backends:c_backend", "envs.pong.backends:jax_backend", seed=5, actions=[1, 2, 0] * 50) is None
    assert "agree on all 150 steps" in capsys.readouterr().out
