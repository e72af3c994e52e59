"""Test-wide setup: JAX's persistent compilation cache (shared/jax_compile_cache.py), through the
environment before JAX starts. (The discrete engines' tests also compile more cheaply: their own
conftest.py files call shared/jax_fast_compile.py.)"""

from __future__ import annotations

import os

from shared.jax_compile_cache import enable_for_tests

enable_for_tests(os.environ)
