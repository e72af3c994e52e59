"""Test-wide setup: JAX's persistent compilation cache (see shared/jax_compile_cache.py)."""

from __future__ import annotations

import os

from shared.jax_compile_cache import enable_for_tests

enable_for_tests(os.environ)
