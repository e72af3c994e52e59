"""Name the component a failing L1/L2 test pins, so a failure says which part of the translation broke.

An env declares its components once (usually from translation.toml), then tags each test:

    PONG = Components("pong", ["paddle", "ball", "scoring", "serve_rng", "observation"])

    @PONG.covers("paddle")
    def test_paddle_clamped(): ...

A failing test then reads "[pong/paddle] ..." in its assertion message, and `PONG.uncovered(module)`
lists declared components that no test covers (a test of its own checks that it is empty).
"""

from __future__ import annotations

import functools
import inspect
import tomllib
from pathlib import Path
from typing import Callable, Iterable


class ComponentFailure(AssertionError):
    def __init__(self, env: str, component: str, error: BaseException):
        super().__init__(f"[{env}/{component}] {type(error).__name__}: {error}")
        self.env, self.component = env, component


def _is_hypothesis_control(error: Exception) -> bool:
    """Hypothesis's own exceptions (UnsatisfiedAssumption from `assume`, above all) steer its search;
    relabelled as a component's failure, `assume(False)` would fail the test instead of discarding
    the example."""
    try:
        from hypothesis.errors import HypothesisException
    except ImportError:
        return False
    return isinstance(error, HypothesisException)


class Components:
    def __init__(self, env: str, names: Iterable[str]):
        self.env = env
        self.names = tuple(names)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"duplicate component names in {self.names}")

    @classmethod
    def from_translation_toml(cls, path: str | Path) -> Components:
        """Components listed under [[modules]] components = [...] in an env's translation.toml."""
        with open(path, "rb") as handle:
            spec = tomllib.load(handle)
        names = [c for module in spec.get("modules", []) for c in module.get("components", [])]
        return cls(spec.get("env", Path(path).parent.name), names)

    def covers(self, *components: str) -> Callable:
        unknown = [c for c in components if c not in self.names]
        if unknown:
            raise ValueError(f"{self.env} declares no component {unknown}; declared: {self.names}")
        label = "+".join(components)

        def decorate(test: Callable) -> Callable:
            @functools.wraps(test)
            def wrapper(*args, **kwargs):
                try:
                    return test(*args, **kwargs)
                except ComponentFailure:
                    raise
                except Exception as error:  # the component name goes on every kind of failure
                    if _is_hypothesis_control(error):
                        raise  # assume() rejecting an example (or hypothesis's own misuse errors) is no test failure
                    raise ComponentFailure(self.env, label, error) from error

            wrapper.envport_components = components  # type: ignore[attr-defined]
            # hypothesis and pytest read the signature; keep the original one
            wrapper.__signature__ = inspect.signature(test)  # type: ignore[attr-defined]
            return wrapper

        return decorate

    def uncovered(self, *modules) -> list[str]:
        covered = set()
        for module in modules:
            for value in vars(module).values():
                covered.update(getattr(value, "envport_components", ()))
                # hypothesis wraps the test again; look through it
                inner = getattr(getattr(value, "hypothesis", None), "inner_test", None)
                covered.update(getattr(inner, "envport_components", ()))
        return [name for name in self.names if name not in covered]
