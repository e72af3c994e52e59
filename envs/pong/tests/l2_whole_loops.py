"""The JAX env compiled with whole loops as one function (shared/xla_cpu.py; the bench's
"JAX whole loops" column) is the same env bit for bit: a 2,000-step rollout of 256 envs (points,
episode ends and auto-resets included) in a fresh process with that setting equals the same
rollout compiled with XLA's defaults here, every observation, reward, done and state field."""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np

from envs.pong.jax import env as pong
from envs.pong.params import PongConfig
from shared.xla_cpu import run_with_whole_loops

ENVS, STEPS = 256, 2000

ROLLOUT = textwrap.dedent("""
    import jax, jax.numpy as jnp, numpy as np
    from envs.pong.jax import env as pong
    from envs.pong.params import PongConfig

    def run(envs, steps):
        params = pong.EnvParams.from_config(PongConfig(frameskip=1))
        actions = jnp.asarray(np.random.default_rng(0).integers(0, 3, (steps, envs)), dtype=jnp.int32)
        step = jax.vmap(pong.step, in_axes=(None, 0, 0, None))

        def rollout(state, actions):
            def body(state, a):
                obs, state, reward, done, _ = step(None, state, a, params)
                return state, (obs, reward, done)
            return jax.lax.scan(body, state, actions)

        _, state = jax.jit(jax.vmap(pong.reset_from_seed, in_axes=(0, None)))(jnp.arange(envs, dtype=jnp.uint32), params)
        compiled = jax.jit(rollout).lower(state, actions).compile()
        final, outputs = compiled(state, actions)
        leaves = [np.asarray(x) for x in jax.tree.leaves((final, outputs))]
        return leaves, compiled.as_text().count("xla_cpu_small_call")
""")


def test_whole_loop_build_equals_the_default_build_bit_for_bit():
    namespace: dict = {}
    exec(ROLLOUT, namespace)  # the same source in both processes
    expected, default_calls = namespace["run"](ENVS, STEPS)
    assert default_calls == 0, "XLA's default already hoisted the rollout: the comparison would be vacuous"
    whole, whole_calls = run_with_whole_loops(ROLLOUT, ENVS, STEPS, timeout_s=600)
    assert whole_calls >= 1, "nothing was hoisted"
    assert len(whole) == len(expected)
    rewards = expected[-2]
    assert np.count_nonzero(rewards) > 100, "the rollout scored too few points to test the scoring path"
    for index, (a, b) in enumerate(zip(expected, whole, strict=True)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"leaf {index}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b), f"leaf {index}: {np.count_nonzero(a != b)} values differ"


# the child imports these; named here so that Pants ships them with the test
_ = (jax, jnp, pong, PongConfig)
