"""Cheaper XLA compiles for this bit-exact engine's tests (shared/jax_fast_compile.py), set before
JAX starts."""

from __future__ import annotations

import os

from shared import jax_fast_compile

jax_fast_compile.enable_for_tests(os.environ)
