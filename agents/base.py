"""The Agent protocol, the random agent and the registry that builds agents by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action from what one player may see."""

    name: str

    def reset(self) -> None:
        """Forget per-episode memory before a new episode."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any) -> int:
        """Return a legal action id (``action_mask[a] == 1``)."""


class RandomAgent:
    """Uniform over the legal actions; seeded for reproducible tournaments."""

    name = "random"

    def __init__(self, game: str | None = None, seed: int | None = None) -> None:
        self.game = game
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any = None) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomAgent.act called with an empty action mask (not this player's turn?)")
        return int(legal[self.rng.integers(legal.size)])


_REGISTRY: dict[str, Callable[..., Agent]] = {"random": RandomAgent}


def registered_agents() -> list[str]:
    """Names ``make_agent`` accepts."""
    return sorted(_REGISTRY)


def make_agent(name: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent by registry name for a game (``"random"``)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(registered_agents())}")
    return _REGISTRY[name](game=game, seed=seed)
