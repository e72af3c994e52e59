"""Where Gymnasium's HalfCheetah-v5 model lives, and the compiled MuJoCo model read from it.

The model is not copied into the repo: it is `half_cheetah.xml` as the pinned `gymnasium` wheel
ships it, compiled by the pinned `mujoco`. Every backend (MuJoCo C, MJX, ours) starts from it.
"""

from __future__ import annotations

import functools
import os

from .mujoco_messages import known_notices_silenced


def model_path() -> str:
    import gymnasium

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "half_cheetah.xml")
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"HalfCheetah model not found at {path}: the installed gymnasium does not ship "
            "envs/mujoco/assets/half_cheetah.xml (3rdparty/python/jax-requirements.txt pins one that does)")
    return path


@functools.lru_cache(maxsize=1)
def load_model():
    """The compiled `mujoco.MjModel` (cached: compiling takes a few ms, but it is read often)."""
    import mujoco

    with known_notices_silenced():  # the xml's `settotalmass`, deprecated in MuJoCo 3.x, still honoured
        return mujoco.MjModel.from_xml_path(model_path())
