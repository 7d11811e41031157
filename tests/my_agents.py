"""A researcher's own agents, as a user writes them in a module of their own: the tests enter
them by import path (``my_agents:LowestLegal``) wherever an agent name is accepted."""

from __future__ import annotations

import numpy as np


class LowestLegal:
    """Plays the legal action with the lowest id (or the ``rank``-th lowest where it has one)."""

    name = "lowest"

    def __init__(self, rank: int = 0) -> None:
        self.rank = rank

    def reset(self) -> None:
        """Nothing to forget."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[min(self.rank, legal.size - 1)])


def make_highest(game: str, seed: int | None = None) -> LowestLegal:
    """A function building an agent: the highest legal action (seed unused)."""
    return LowestLegal(rank=10**6)


NOT_AN_AGENT = 42
