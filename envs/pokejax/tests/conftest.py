"""Fixtures of PokeJAX's tests: one Showdown process per test module (starting Node and loading
Showdown's data takes seconds). And cheaper XLA compiles for this bit-exact engine's tests
(shared/jax_fast_compile.py), set before JAX starts."""

from __future__ import annotations

import os

import pytest

from envs.pokejax.reference.showdown import Showdown
from shared import jax_fast_compile

jax_fast_compile.enable_for_tests(os.environ)


@pytest.fixture(scope="module")
def showdown():
    with Showdown() as process:
        yield process
