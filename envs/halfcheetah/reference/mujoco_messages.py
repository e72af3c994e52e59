"""MuJoCo's one known notice about Gymnasium's half_cheetah.xml, kept off the terminal and out of the
working directory.

MuJoCo 3.x deprecates the xml's `<compiler settotalmass="14"/>` but still honours it (tests/l1_smooth
checks the total mass). Left alone, every compile of the model prints a WARNING and appends it to a
MUJOCO_LOG.TXT in the current directory: one per env of a vector env, in whatever folder the user
runs from. While a model compiles inside `known_notices_silenced()`, that one message is dropped and
any other MuJoCo warning is re-raised as a Python `RuntimeWarning` once the compile has returned, so
nothing else MuJoCo says is lost (and `-W error` turns it into an exception, as for any warning).

MuJoCo calls the handler from C: an exception raised inside it aborts the process, so the handler only
records, and the warnings are issued after the C call, from Python.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

SETTOTALMASS_DEPRECATION = "compiler attribute 'settotalmass' is deprecated"


@contextlib.contextmanager
def known_notices_silenced() -> Iterator[None]:
    """Inside: MuJoCo's warnings are recorded instead of printed and logged to MUJOCO_LOG.TXT. On leaving:
    the handler in place before is restored, and every recorded warning but the settotalmass notice is
    issued as a RuntimeWarning."""
    import mujoco

    recorded: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(recorded.append)
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(previous)
    for message in recorded:
        if not message.startswith(SETTOTALMASS_DEPRECATION):
            warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=3)
