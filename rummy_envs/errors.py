"""Errors shared by every engine and environment, and what every engine takes as an action."""

from __future__ import annotations

import operator
from typing import Any


class IllegalActionError(ValueError):
    """An action that is not legal now; the game state is left exactly as it was."""

    def __init__(self, action: int, action_name: str, player: int | str, phase: str, legal: list[str] | None = None):
        self.action = action
        self.player = player
        self.phase = phase
        hint = f"; legal: {', '.join(legal[:12])}{' ...' if len(legal) > 12 else ''}" if legal is not None else ""
        super().__init__(f"illegal action {action} ({action_name}) by {player} in phase {phase}{hint}")


class UnsupportedRenderModeError(ValueError, TypeError):
    """A ``render_mode`` the env does not draw. It is a ValueError like every bad option, and
    a TypeError like the refusal of an env without that mode, which is what Gymnasium users
    and Stable-Baselines3's ``make_vec_env`` (it asks for ``"rgb_array"`` and falls back on
    a TypeError) expect."""


def action_id(action: Any) -> int | None:
    """``action`` as an action id when it is an integer (numpy integers too), else None:
    bools and floats are no action ids, even where they equal a legal one. The engines' and
    the env's step paths test ``type(action) is int`` first and call this only for the rest,
    which saves a call on every step of the common case."""
    if isinstance(action, bool):
        return None
    try:
        return operator.index(action)
    except TypeError:
        return None
