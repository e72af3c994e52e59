"""The render_mode argument of every env that renders: checked once, with one message."""

from __future__ import annotations

from typing import Optional, Sequence

import gymnasium


def checked_render_mode(render_mode: Optional[str], modes: Sequence[str]) -> Optional[str]:
    """render_mode as given, after checking that it is None or one of the env's `modes`."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {list(modes)}, got {render_mode!r}")
    return render_mode


def warn_no_render_mode(example_mode: str) -> None:
    """What render() says (a warning, as Gymnasium's own envs give) when the env was made without a mode."""
    gymnasium.logger.warn(f'render() needs render_mode="{example_mode}" at construction, e.g. '
                          f'gymnasium.make(id, render_mode="{example_mode}"); nothing was drawn')
