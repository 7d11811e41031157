"""The Agent protocol, the random agent and the registry that builds agents by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from agents.ppo import make_ppo_agent
from rummy_envs.games.base import PlayerView


@runtime_checkable
class Agent(Protocol):
    """Anything that picks a legal action from what one player may see."""

    name: str

    def reset(self) -> None:
        """Forget per-episode memory before a new episode."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: PlayerView) -> int:
        """Return a legal action id (``action_mask[a] == 1``); ``view`` is what the seat may see
        (its game's ``player_view``), never the engine state."""


class RandomAgent:
    """Uniform over the legal actions; seeded for reproducible tournaments."""

    name = "random"

    def __init__(self, game: str | None = None, seed: int | None = None) -> None:
        self.game = game
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: PlayerView | None = None) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("RandomAgent.act called with an empty action mask (not this player's turn?)")
        return int(legal[self.rng.integers(legal.size)])


AgentFactory = Callable[..., Agent]
_REGISTRY: dict[str, dict[str, AgentFactory]] = {}
ANY_GAME = "*"
PPO_PREFIX = "ppo:"  # "ppo:<path>" plays the exported policy at path (agents.ppo)


def register(name: str, games: tuple[str, ...] | str, factory: AgentFactory) -> None:
    """Make ``make_agent(name, game)`` build ``factory(game=game, seed=seed)`` for these games
    (``ANY_GAME`` for all)."""
    for game in (games,) if isinstance(games, str) else games:
        _REGISTRY.setdefault(name, {})[game] = factory


def registered_agents(game: str | None = None) -> list[str]:
    """Names ``make_agent`` accepts (for ``game`` only, when given)."""
    return sorted(n for n, by_game in _REGISTRY.items() if game is None or game in by_game or ANY_GAME in by_game)


def make_agent(name: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent by registry name (``random``, ``novice``, ``heuristic``) for a game, or
    ``ppo:<path>`` for an exported policy (its file is read once per process)."""
    if name.startswith(PPO_PREFIX):
        return make_ppo_agent(name[len(PPO_PREFIX):], game, seed)
    by_game = _REGISTRY.get(name)
    if by_game is None:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(registered_agents())}")
    factory = by_game.get(game, by_game.get(ANY_GAME))
    if factory is None:
        raise ValueError(f"agent {name!r} has no player for game {game!r}; it plays: {', '.join(sorted(by_game))}")
    return factory(game=game, seed=seed)


register("random", ANY_GAME, RandomAgent)
