"""Fixtures of PokeJAX's tests: one Showdown process per test module (starting Node and loading
Showdown's data takes seconds)."""

from __future__ import annotations

import pytest

from envs.pokejax.reference.showdown import Showdown


@pytest.fixture(scope="module")
def showdown():
    with Showdown() as process:
        yield process
