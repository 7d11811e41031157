"""``manipulation_rummy_v0``: Manipulation Rummy (Carousel) for 2-5 players as a PettingZoo AEC env."""

from __future__ import annotations

from typing import Any

from rummy_envs.envs.base import OrderEnforcing
from rummy_envs.envs.manipulation_rummy import ManipulationRummyEnv as raw_env


def env(**kwargs: Any) -> OrderEnforcing:
    """The environment wrapped only in PettingZoo's order enforcing wrapper."""
    return OrderEnforcing(raw_env(**kwargs))


__all__ = ["env", "raw_env"]
