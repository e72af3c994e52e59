"""A clear error, not a hang, for an env that would run JAX in a process forked after JAX had started.

JAX's runtime lives in threads, and fork copies only the calling thread: in a child forked from a
process whose JAX backends were up, the first computation waits for threads that do not exist, for
ever. Gymnasium's AsyncVectorEnv forks its workers by default on Linux, so
`gymnasium.make_vec(id, num_envs=N, vectorization_mode="async")` of an env that runs JAX hangs as soon
as the script has run any JAX before it (a JAX policy, another env). Every env of this repo that runs
JAX calls `refuse_if_forked_from_jax` in its constructor, which raises instead.

The state is kept by an `os.register_at_fork` hook installed on import: just before a fork it notes
whether JAX's backends are up (`jax._src.xla_bridge.backends_are_initialized`, the condition under
which JAX itself warns at fork), and the child inherits the note.
"""

from __future__ import annotations

import os
import sys

_state = {"jax_up_at_fork": False, "forked_from_jax": False}

ADVICE = (
    "use the env's native vector env (gymnasium.make_vec(id, num_envs=N), one process), "
    'vectorization_mode="sync", or child processes that start fresh: '
    'vector_kwargs={"context": "spawn"} (or "forkserver") for vectorization_mode="async"'
)


def _jax_is_up() -> bool:
    bridge = sys.modules.get("jax._src.xla_bridge")
    return bridge is not None and bridge.backends_are_initialized()


def _before_fork() -> None:
    _state["jax_up_at_fork"] = _state["forked_from_jax"] or _jax_is_up()


def _in_child() -> None:
    _state["forked_from_jax"] = _state["jax_up_at_fork"]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_in_child)


def forked_from_jax() -> bool:
    """Whether this process was forked (at any depth) from one whose JAX backends were up."""
    return _state["forked_from_jax"]


def refuse_if_forked_from_jax(what: str) -> None:
    """Raise RuntimeError, saying what to do instead, when `what` (an env that runs JAX) is made in a
    process forked from one whose JAX had started; it would hang at its first JAX computation."""
    if forked_from_jax():
        raise RuntimeError(
            f"{what} runs JAX, and this process was forked from one whose JAX had already started: JAX "
            f"cannot run after fork (its first computation would wait for ever). Instead, {ADVICE}."
        )
