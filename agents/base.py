"""The Agent protocol, the random agent and the registry that builds agents by name."""

from __future__ import annotations

import ast
import difflib
import importlib
import inspect
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


def agent_forms() -> str:
    """The forms an agent name may take, for error messages."""
    return (f"a registered name ({', '.join(registered_agents())}), a name with parameters "
            "(name:key=value,...), ppo:<path> for an exported policy, or module:Class (or module:function, "
            "optionally :key=value,...) for your own agent")


def parse_parameters(text: str, spec: str) -> dict[str, Any]:
    """``key=value,key=value`` as keyword parameters; values are Python literals (numbers,
    True, None, quoted strings), or else plain strings."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"agent {spec!r}: parameter {item!r} is not key=value")
        try:
            out[key.strip()] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = value.strip()
    return out


def import_factory(spec: str) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The object a ``module:Attr[:key=value,...]`` agent name points at, and its parameters."""
    module_name, _, rest = spec.partition(":")
    attribute, _, params = rest.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"unknown agent {spec!r}: cannot import module {module_name!r} ({err}); "
                         f"an agent name is {agent_forms()}") from None
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise ValueError(f"agent {spec!r}: module {module_name!r} has no class or function {attribute!r}")
    return factory, parse_parameters(params, spec)


def build(factory: Callable[..., Any], game: str, seed: int | None, params: dict[str, Any], spec: str) -> Agent:
    """Call an agent class or function with the ``game`` and ``seed`` it accepts and the
    parameters; the result must be an ``Agent`` (``act`` and ``reset``)."""
    accepted = inspect.signature(factory).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    context = {k: v for k, v in (("game", game), ("seed", seed)) if (takes_any or k in accepted) and k not in params}
    try:
        agent = factory(**context, **params)
    except TypeError as err:
        raise ValueError(f"agent {spec!r}: {err}") from None
    if not isinstance(agent, Agent):
        raise ValueError(f"agent {spec!r} built a {type(agent).__name__}, which has no act(observation, "
                         f"action_mask, view) and reset()")
    if not isinstance(getattr(agent, "name", None), str):
        agent.name = spec  # type: ignore[misc]
    return agent


def is_import_path(name: str) -> bool:
    """Is an agent name of the ``module:Attr`` form (rather than a registered name)?"""
    head = name.partition(":")[0]
    return ":" in name and head not in _REGISTRY and head + ":" != PPO_PREFIX


def make_agent(name: str, game: str, seed: int | None = None) -> Agent:
    """Build an agent for a game from its name: a registry name (``random``, ``novice``,
    ``heuristic``), optionally with parameters (``name:key=value,...``); ``ppo:<path>`` for
    an exported policy (its file is read once per process); or an import path
    ``module:Class`` / ``module:function`` (optionally ``:key=value,...``), called with the
    ``game`` and ``seed`` it accepts, for your own agent. ValueError says what is wrong,
    with the close registered names."""
    if name.startswith(PPO_PREFIX):
        return make_ppo_agent(name[len(PPO_PREFIX):], game, seed)
    if is_import_path(name):
        factory, params = import_factory(name)
        return build(factory, game, seed, params, name)
    base, _, params = name.partition(":")
    by_game = _REGISTRY.get(base)
    if by_game is None:
        close = difflib.get_close_matches(base, list(_REGISTRY), n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise ValueError(f"unknown agent {name!r}; {hint}an agent name is {agent_forms()}")
    factory = by_game.get(game, by_game.get(ANY_GAME))
    if factory is None:
        raise ValueError(f"agent {base!r} has no player for game {game!r}; it plays: {', '.join(sorted(by_game))}")
    if not params:
        return factory(game=game, seed=seed)
    return build(factory, game, seed, parse_parameters(params, name), name)


register("random", ANY_GAME, RandomAgent)
