"""Episode seeds for a native Gymnasium vector env whose env i must play exactly what a single env does
under Gymnasium's SyncVectorEnv: reset(seed=s) seeds env i with s + i (or with the i-th of a list of
seeds), and an env reset without a seed, as an autoreset is, draws its episode seed from its own
generator, the single env's `np_random`, as `int(np_random.integers(2**31))`."""

from __future__ import annotations

from typing import Optional, Sequence, Union

import gymnasium
import numpy as np

SeedArgument = Union[None, int, Sequence[Optional[int]]]


class EpisodeSeeds:
    """`limit`: seeds must be below it (an env whose generator takes fewer bits than Gymnasium's
    seeding does: jax.random.PRNGKey takes [0, 2**63)); `limit_reason` says why, in the error."""

    def __init__(self, num_envs: int, limit: Optional[int] = None, limit_reason: str = ""):
        self.num_envs = num_envs
        self.limit, self.limit_reason = limit, limit_reason
        # each env's own generator, as each single env's np_random (seeded by reset(seed=...))
        self._generators: list[Optional[np.random.Generator]] = [None] * num_envs

    def per_env(self, seed: SeedArgument) -> list[Optional[int]]:
        """reset's `seed` as one seed (or None) per env, each checked as a single env's reset checks it
        (Gymnasium refuses a float or negative seed; int() would quietly turn 1.5 into 1)."""
        if seed is None:
            return [None] * self.num_envs
        if _is_int(seed):
            seed = _checked_seed(seed, "seed")
            if self.limit is not None and seed + self.num_envs - 1 >= self.limit:
                raise ValueError(f"seed {seed} seeds env i with seed + i, so with {self.num_envs} envs it must be below "
                                 f"{self.limit - self.num_envs + 1} ({self.limit_reason or 'the env seeds below'} "
                                 f"{self.limit})")
            return [seed + i for i in range(self.num_envs)]
        if isinstance(seed, (str, bytes)) or not hasattr(seed, "__len__"):
            raise ValueError(f"seed must be an int, a list of {self.num_envs} ints or Nones (one per env), or None; "
                             f"got {seed!r} of type {type(seed).__name__}")
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} seeds (one per env), got {len(seeds)}")
        checked = [None if entry is None else _checked_seed(entry, f"seed[{index}]") for index, entry in enumerate(seeds)]
        for index, entry in enumerate(checked):
            if entry is not None and self.limit is not None and entry >= self.limit:
                raise ValueError(f"seed[{index}] must be below {self.limit} ({self.limit_reason or 'the env seeds below'}"
                                 f" {self.limit}), got {entry}")
        return checked

    def generator(self, index: int, seed: Optional[int]) -> np.random.Generator:
        """Env `index`'s generator after a reset with `seed`, as the single env's `np_random` is then:
        made anew from a seed, else kept (made from fresh entropy the first time)."""
        if seed is not None or self._generators[index] is None:
            self._generators[index], _ = gymnasium.utils.seeding.np_random(None if seed is None else int(seed))
        return self._generators[index]

    def episode_seed(self, index: int, seed: Optional[int]) -> int:
        """The seed of env `index`'s next episode, drawn as the single env draws it."""
        generator = self.generator(index, seed)
        return int(seed) if seed is not None else int(generator.integers(2**31))


def refuse_bool_seed(seed) -> None:
    """A single env's reset seed: Gymnasium's seeding takes True as 1; refused, as in a list of seeds."""
    if isinstance(seed, (bool, np.bool_)):
        raise ValueError(f"seed must be an int or None, got {seed!r}")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _checked_seed(value, name: str) -> int:
    if not _is_int(value):
        raise ValueError(f"{name} must be an int or None, got {value!r} of type {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be non-negative (as Gymnasium's seeding requires), got {value}")
    return int(value)
