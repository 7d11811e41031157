"""Game logs: one played game as plain JSON that replays exactly, in every game.

A game log is a mapping with these keys (docs/conventions.md, "Game logs"):

- ``format_version``: 1 (``rummy_envs.state_dicts.FORMAT_VERSION``; absent means 1);
- ``game``: a name of ``rummy_envs.ENVS`` (``"gin_rummy"``, ``"rummy500"``, ...);
- ``options``: the env's keyword options the game was played under (rules options, and env
  options such as ``reward``, which do not change the play); absent means the defaults;
- ``seed``: the engine's seed, the one ``State(config, seed)`` deals from (through an env,
  ``env.unwrapped.game.seed``, drawn from the env's seed at reset);
- ``deck`` and ``dealer``: the deck (cards, first dealt first) and first dealer given to the
  game, or null for those drawn from the seed;
- ``actions``: every action id, in order (``state.history``).

``replay(log)`` plays the actions on the engine and ``replay_env(log)`` through the env (to
its end, dead steps included); an action that is not legal where it comes, or actions left
after the game ended, raise ``ReplayError`` naming its index, the player, the phase and the
legal actions there. A log refuses unknown keys like a state dict does; a caller whose
records carry more (the tournament's ``games.jsonl``) names them in ``extra_keys``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rummy_envs import cards as C
from rummy_envs.state_dicts import FORMAT_VERSION, VERSION_KEY, Fields, read_header

LOG_KEYS = (VERSION_KEY, "game", "options", "seed", "deck", "dealer", "actions")
WHAT = "game log"


class ReplayError(ValueError):
    """An action of a game log that cannot be played where it comes: ``index`` in the log's
    actions, the ``action`` and the ``legal`` action ids there (empty once the game is over)."""

    def __init__(self, index: int, action: int, legal: list[int], message: str) -> None:
        super().__init__(message)
        self.index = index
        self.action = action
        self.legal = legal


@dataclass(frozen=True)
class GameLog:
    """A game log read and checked by ``read_log``."""

    game: str
    options: dict[str, Any]
    seed: int
    deck: list[int] | None
    dealer: int | None
    actions: list[int]

    def to_dict(self) -> dict[str, Any]:
        """The log as written (cards as strings)."""
        return {VERSION_KEY: FORMAT_VERSION, "game": self.game, "options": dict(self.options), "seed": self.seed,
                "deck": None if self.deck is None else [C.format_card(c) for c in self.deck], "dealer": self.dealer,
                "actions": list(self.actions)}


def game_log(state: Any, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The log of an engine state's game so far: ``options`` (the env's keyword options it was
    played under; by default the state's rules options), its seed, the deck and first dealer
    it was dealt with, and its history. A daily deal's date is written into the options, so
    the log replays the same deal on any day."""
    given = dict(state.to_dict()["options"] if options is None else options)
    daily_date = getattr(state, "daily_date", None)  # Rummy 500's daily deal
    if daily_date is not None:
        given["daily_date"] = daily_date
    deck = None if state.initial_deck is None else list(state.initial_deck)
    return GameLog(state.config.game, given, state.seed, deck, state.first_dealer, list(state.history)).to_dict()


def read_log(data: Any, extra_keys: Iterable[str] = ()) -> GameLog:
    """Check a game log's keys, version, game and value types; ValueError names the field.
    ``extra_keys`` are other keys the caller's records may carry (ignored here)."""
    import rummy_envs

    fields = Fields(data, LOG_KEYS + tuple(extra_keys), what=WHAT)
    game = fields.choice("game", tuple(rummy_envs.ENVS))
    read_header(fields, game)
    return GameLog(
        game=game,
        options=fields.mapping("options", {}),
        seed=fields.integer("seed"),
        deck=fields.optional_cards("deck", None, jokers=True),
        dealer=fields.optional_integer("dealer", None, 0),
        actions=fields.integers("actions", meaning="an action id"),
    )


def _env(log: GameLog) -> Any:
    """A raw env of the log's game and options (ValueError naming a bad option)."""
    import rummy_envs

    try:
        return rummy_envs.ENVS[log.game].raw_env(**log.options)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{WHAT} field 'options': {err}") from None


def start_state(log: GameLog, env: Any | None = None) -> Any:
    """The engine state before the log's first action: its deal from the seed, deck and dealer."""
    env = env or _env(log)
    seats = len(env.possible_agents)
    if log.dealer is not None and log.dealer >= seats:
        raise ValueError(f"{WHAT} field 'dealer': expected a seat 0..{seats - 1}, got {log.dealer}")
    try:
        return env.state_class(env.config, log.seed, log.deck, log.dealer)
    except ValueError as err:
        raise ValueError(f"{WHAT} field 'deck': {err}") from None


def _check_action(state: Any, index: int, action: int, total: int, describe: Callable[[int], str]) -> None:
    """ReplayError unless ``action`` (the ``index``-th of ``total``) is legal in ``state``."""
    if state.is_terminal():
        raise ReplayError(index, action, [], f"{WHAT} field 'actions[{index}]': the game is over after {index} "
                                             f"actions, but the log holds {total}")
    legal = list(state.legal_actions())
    if action in legal:
        return
    raise ReplayError(index, action, legal, f"{WHAT} field 'actions[{index}]': action {action} ({describe(action)}) "
                                            f"is not legal for player {state.current_player} in phase "
                                            f"{state.phase.name}; legal there: "
                                            f"{', '.join(f'{a} ({describe(a)})' for a in legal)}")


def replay(data: Any, extra_keys: Iterable[str] = ()) -> Any:
    """The engine state after the log's actions (ValueError or ReplayError naming the field)."""
    log = read_log(data, extra_keys)
    env = _env(log)
    state = start_state(log, env)
    for index, action in enumerate(log.actions):
        _check_action(state, index, action, len(log.actions), env.action_to_str)
        state.apply(action)
    return state


def replay_env(data: Any, extra_keys: Iterable[str] = (), on_move: Callable[[Any], None] | None = None) -> Any:
    """The raw env after the log's actions, played the AEC way from the log's deal; once the
    game is over the finished agents take their dead steps, so the env ends as it ended.
    ``on_move(env)`` is called at the deal and after each of the log's actions."""
    log = read_log(data, extra_keys)
    env = _env(log)
    env.reset(options={"state": start_state(log, env).to_dict()})
    if on_move is not None:
        on_move(env)
    index = 0
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        if index == len(log.actions):
            break
        action = log.actions[index]
        _check_action(env.game, index, action, len(log.actions), env.action_to_str)
        env.step(action)
        index += 1
        if on_move is not None:
            on_move(env)
    if index < len(log.actions):
        _check_action(env.game, index, log.actions[index], len(log.actions), env.action_to_str)
    return env
