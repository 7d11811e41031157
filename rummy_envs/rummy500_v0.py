"""``rummy500_v0``: Rummy 500 for 2-8 players as a PettingZoo AEC env."""

from __future__ import annotations

from typing import Any

from rummy_envs.envs.base import OrderEnforcing
from rummy_envs.envs.rummy500 import Rummy500Env as raw_env


def env(**kwargs: Any) -> OrderEnforcing:
    """The environment wrapped only in PettingZoo's order enforcing wrapper."""
    return OrderEnforcing(raw_env(**kwargs))


__all__ = ["env", "raw_env"]
