"""The Agent protocol, the random agent and the registry that builds agents by name."""

from __future__ import annotations

import ast
import difflib
import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from copy import deepcopy
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
    """Make ``make_agent(name, game)`` call ``factory`` for these games (``ANY_GAME`` for all),
    with the ``game`` and ``seed`` it accepts (``build``)."""
    for game in (games,) if isinstance(games, str) else games:
        _REGISTRY.setdefault(name, {})[game] = factory


def plays(agent: Any) -> bool:
    """Has ``agent`` the two methods of ``Agent`` (``act`` and ``reset``; a ``name`` is given
    to it where it has none)?"""
    return callable(getattr(agent, "act", None)) and callable(getattr(agent, "reset", None))


class AgentCopies:
    """A factory handing out deep copies of one agent object, so that every seat of every
    game gets its own and games stay independent of each other and of the workers."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def __call__(self) -> Agent:
        try:
            return deepcopy(self.agent)
        except Exception as err:  # noqa: BLE001 - copying raises whatever the object raises
            raise ValueError(f"cannot copy the agent object ({err}); give a class or function that builds a "
                             "fresh agent instead") from None


PYTHON_PREFIX = "python:"  # the registry name of an agent object or factory given from Python


def agent_name_for(label: str, agent: str | Agent | AgentFactory) -> str:
    """The agent name of a tournament entry given from Python: a name as it is; a class or
    function importable by ``module:name`` as that import path; any other agent object or
    factory registered (for every game) as ``python:<label>``."""
    if isinstance(agent, str):
        return agent
    if plays(agent) and not isinstance(agent, type):
        register(PYTHON_PREFIX + label, ANY_GAME, AgentCopies(agent))
        return PYTHON_PREFIX + label
    if not callable(agent):
        raise ValueError(f"agent {label!r}: expected a name, an agent object (act and reset) or a class or "
                         f"function that builds one, got {type(agent).__name__}")
    module, qualname = getattr(agent, "__module__", None), getattr(agent, "__qualname__", "")
    if module not in (None, "__main__") and qualname.isidentifier() \
            and getattr(sys.modules.get(module), qualname, None) is agent:
        return f"{module}:{qualname}"
    register(PYTHON_PREFIX + label, ANY_GAME, agent)
    return PYTHON_PREFIX + label


def registry_entries(names: Iterable[str]) -> dict[str, dict[str, AgentFactory]]:
    """The registry entries behind these agent names, to install in worker processes that
    did not run the ``register`` calls (``install_registry_entries``)."""
    entries = {}
    for name in names:
        base = name if name in _REGISTRY else name.partition(":")[0]
        if base in _REGISTRY:
            entries[base] = dict(_REGISTRY[base])
    return entries


def install_registry_entries(entries: dict[str, dict[str, AgentFactory]]) -> None:
    """Register what ``registry_entries`` collected in another process."""
    for name, by_game in entries.items():
        _REGISTRY.setdefault(name, {}).update(by_game)


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
    if not plays(agent):
        raise ValueError(f"agent {spec!r} built a {type(agent).__name__}, which has no act(observation, "
                         f"action_mask, view) and reset()")
    if not isinstance(getattr(agent, "name", None), str):
        agent.name = spec  # type: ignore[misc]
    return agent


def is_import_path(name: str) -> bool:
    """Is an agent name of the ``module:Attr`` form (rather than a registered name)?"""
    head = name.partition(":")[0]
    return ":" in name and name not in _REGISTRY and head not in _REGISTRY and head + ":" != PPO_PREFIX


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
    base, _, params = (name, "", "") if name in _REGISTRY else name.partition(":")
    by_game = _REGISTRY.get(base)
    if by_game is None:
        close = difflib.get_close_matches(base, list(_REGISTRY), n=3)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise ValueError(f"unknown agent {name!r}; {hint}an agent name is {agent_forms()}")
    factory = by_game.get(game, by_game.get(ANY_GAME))
    if factory is None:
        raise ValueError(f"agent {base!r} has no player for game {game!r}; it plays: {', '.join(sorted(by_game))}")
    return build(factory, game, seed, parse_parameters(params, name), name)


register("random", ANY_GAME, RandomAgent)
