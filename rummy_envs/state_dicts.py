"""Validated, versioned engine state dicts: the reading and checking every engine shares.

Every engine's ``to_dict`` writes ``"format_version": FORMAT_VERSION`` first; its
``from_dict`` reads the dict through a ``Fields`` reader, which refuses a value that is not
a mapping, unknown keys, another format version and every value of the wrong type or out of
range, then checks what the rules imply and raises ``field_error`` when they disagree. Every
refusal is a ``ValueError`` whose message begins ``state dict field 'name':`` (or ``fields``
and several names, or ``key(s)`` for unknown keys), so a user sees which entry to fix.

A dict without ``format_version`` is read as version 1: version 1 is the format the engines
wrote before they wrote a version, and hand-written scenarios may leave it out.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from rummy_envs import cards as C

FORMAT_VERSION = 1
READABLE_VERSIONS = (1,)
VERSION_KEY = "format_version"
_MISSING = object()


def field_error(fields: str | Sequence[str], message: str, what: str = "state dict") -> ValueError:
    """The error naming one field (``"hands[1]"``) or several, with what was expected."""
    names = [fields] if isinstance(fields, str) else list(fields)
    label = "field" if len(names) == 1 else "fields"
    return ValueError(f"{what} {label} {', '.join(repr(n) for n in names)}: {message}")


def _kind(value: Any) -> str:
    """How a wrong value is described in an error: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_int(value: Any) -> bool:
    """An int that is not a bool (JSON has no other integers)."""
    return isinstance(value, int) and not isinstance(value, bool)


class Fields:
    """A mapping read field by field: each getter checks the type and range of one value and
    raises ``field_error`` naming it (nested names such as ``hand_results[2].points[0]``).

    ``known`` lists every key the format has; any other key is refused at once, so a typo
    is never silently ignored. A getter's ``default`` is returned when the key is absent;
    without a default the key is required.
    """

    def __init__(self, data: Any, known: Iterable[str], path: str = "", what: str = "state dict"):
        self.path = path
        self.what = what
        if not isinstance(data, Mapping):
            where = f"{what} field {path!r}" if path else what
            raise ValueError(f"{where}: expected a mapping of field names to values, got {_kind(data)}")
        self.data = data
        self.known = tuple(known)
        unknown = [k for k in data if k not in self.known]
        if unknown:
            prefix = f"{path}." if path else ""
            names = ", ".join(repr(f"{prefix}{k}") for k in sorted(map(str, unknown)))
            raise ValueError(f"{what}: unknown key(s) {names}; known keys: {', '.join(self.known)}")

    # -- names and errors ------------------------------------------------------------------
    def name(self, key: str) -> str:
        """The full name of a field of this mapping."""
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str | Sequence[str], message: str) -> ValueError:
        """``field_error`` for one key (or several) of this mapping."""
        keys = [key] if isinstance(key, str) else list(key)
        return field_error([self.name(k) for k in keys], message, self.what)

    def has(self, key: str) -> bool:
        return key in self.data

    def _get(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise self.error(key, "is required")
        return default

    # -- scalars ---------------------------------------------------------------------------
    def integer(self, key: str, default: Any = _MISSING, low: int | None = None, high: int | None = None,
                meaning: str = "") -> int:
        """An int in [low, high]; ``meaning`` says what it counts in the error."""
        value = self._get(key, default)
        return check_integer(value, low, high, lambda message: self.error(key, message), meaning)

    def optional_integer(self, key: str, default: Any = _MISSING, low: int | None = None,
                         high: int | None = None) -> int | None:
        """An int in [low, high], or None."""
        value = self._get(key, default)
        return None if value is None else check_integer(value, low, high, lambda m: self.error(key, m))

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        return check_boolean(self._get(key, default), lambda m: self.error(key, m))

    def choice(self, key: str, choices: Sequence[str], default: Any = _MISSING) -> str:
        value = self._get(key, default)
        if not isinstance(value, str) or value not in choices:
            raise self.error(key, f"expected one of {', '.join(map(repr, choices))}, got {_kind(value)}")
        return value

    def optional_text(self, key: str, default: Any = _MISSING) -> str | None:
        value = self._get(key, default)
        if value is not None and not isinstance(value, str):
            raise self.error(key, f"expected a string or null, got {_kind(value)}")
        return value

    def card(self, key: str, default: Any = _MISSING, jokers: bool = False) -> int:
        """One card (a string such as ``"TH"`` or an id) as its id."""
        return parse_card(self._get(key, default), jokers, lambda m: self.error(key, m))

    def optional_card(self, key: str, default: Any = _MISSING, jokers: bool = False) -> int:
        """One card, or None given as -1 (the engines' "no card")."""
        value = self._get(key, default)
        return -1 if value is None else parse_card(value, jokers, lambda m: self.error(key, m))

    # -- lists -----------------------------------------------------------------------------
    def items(self, key: str, default: Any = _MISSING, length: int | None = None) -> list[Any]:
        """A list (or tuple) of any values, of exactly ``length`` entries when given."""
        value = self._get(key, default)
        if not isinstance(value, (list, tuple)):
            raise self.error(key, f"expected a list, got {_kind(value)}")
        if length is not None and len(value) != length:
            raise self.error(key, f"expected {length} entries, got {len(value)}")
        return list(value)

    def cards(self, key: str, default: Any = _MISSING, jokers: bool = False) -> list[int]:
        """A list of cards (or one string of them, ``"AS 2S 3S"``) as ids, in order."""
        return parse_cards(self._get(key, default), self.name(key), jokers, self.what)

    def optional_cards(self, key: str, default: Any = _MISSING, jokers: bool = False) -> list[int] | None:
        value = self._get(key, default)
        return None if value is None else parse_cards(value, self.name(key), jokers, self.what)

    def card_rows(self, key: str, count: int, default: Any = _MISSING, jokers: bool = False) -> list[list[int]]:
        """``count`` card lists (one per seat), each as ids in order."""
        rows = self.items(key, default, length=count)
        return [parse_cards(row, f"{self.name(key)}[{i}]", jokers, self.what) for i, row in enumerate(rows)]

    def card_lists(self, key: str, default: Any = _MISSING, jokers: bool = False) -> list[list[int]]:
        """Any number of card lists (melds), each as ids in order."""
        rows = self.items(key, default)
        return [parse_cards(row, f"{self.name(key)}[{i}]", jokers, self.what) for i, row in enumerate(rows)]

    def integers(self, key: str, default: Any = _MISSING, length: int | None = None, low: int | None = None,
                 high: int | None = None, meaning: str = "") -> list[int]:
        values = self.items(key, default, length)
        return [check_integer(v, low, high, lambda m, i=i: field_error(f"{self.name(key)}[{i}]", m, self.what), meaning)
                for i, v in enumerate(values)]

    def booleans(self, key: str, default: Any = _MISSING, length: int | None = None) -> list[bool]:
        values = self.items(key, default, length)
        return [check_boolean(v, lambda m, i=i: field_error(f"{self.name(key)}[{i}]", m, self.what))
                for i, v in enumerate(values)]

    def integer_grid(self, key: str, default: Any, rows: int, columns: int, low: int | None = None,
                     high: int | None = None) -> list[list[int]]:
        """A rows-by-columns table of ints in [low, high] (a scoresheet)."""
        return self._grid(key, default, rows, columns, lambda v, error: check_integer(v, low, high, error))

    def boolean_grid(self, key: str, default: Any, rows: int, columns: int) -> list[list[bool]]:
        return self._grid(key, default, rows, columns, check_boolean)

    def _grid(self, key: str, default: Any, rows: int, columns: int,
              check: Callable[[Any, Callable[[str], ValueError]], Any]) -> list[list[Any]]:
        out = []
        for r, row in enumerate(self.items(key, default, rows)):
            name = f"{self.name(key)}[{r}]"
            if not isinstance(row, (list, tuple)) or len(row) != columns:
                raise field_error(name, f"expected a list of {columns} entries, got {_kind(row)}", self.what)
            out.append([check(v, lambda m, c=c: field_error(f"{name}[{c}]", m, self.what)) for c, v in enumerate(row)])
        return out

    # -- nested mappings -------------------------------------------------------------------
    def records(self, key: str, known: Iterable[str], default: Any = _MISSING) -> list[Fields]:
        """A list of mappings, each read with the same known keys."""
        known = tuple(known)
        return [Fields(item, known, f"{self.name(key)}[{i}]", self.what)
                for i, item in enumerate(self.items(key, default))]

    def mapping(self, key: str, default: Any = _MISSING) -> dict[str, Any]:
        """A mapping of any keys (the rules options, checked by the game's config)."""
        value = self._get(key, default)
        if not isinstance(value, Mapping):
            raise self.error(key, f"expected a mapping, got {_kind(value)}")
        return dict(value)


def check_integer(value: Any, low: int | None, high: int | None, error: Callable[[str], ValueError],
                  meaning: str = "") -> int:
    """``value`` if it is an int in [low, high], else ``error(message)``."""
    if not is_int(value) or (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            bound = f" {low}..{high}"
        elif low is not None:
            bound = f" >= {low}"
        else:
            bound = ""
        what = f" ({meaning})" if meaning else ""
        raise error(f"expected an integer{bound}{what}, got {_kind(value)}")
    return int(value)


def check_boolean(value: Any, error: Callable[[str], ValueError]) -> bool:
    """``value`` if it is a bool, else ``error(message)``."""
    if not isinstance(value, bool):
        raise error(f"expected true or false, got {_kind(value)}")
    return value


def parse_card(value: Any, jokers: bool, error: Callable[[str], ValueError]) -> int:
    """One card (string or id) as its id; a joker only where the game has jokers."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise error(f"expected a card such as 'TH' (or an id 0..51), got {_kind(value)}")
    try:
        card = C.parse_card(value)
    except ValueError as err:
        raise error(str(err)) from None
    if card == C.JOKER and not jokers:
        raise error(f"expected a card other than a joker here, got {_kind(value)}")
    return card


def parse_cards(value: Any, name: str, jokers: bool, what: str = "state dict") -> list[int]:
    """A list of cards, or one string of space-separated cards, as ids in order."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, (list, tuple)):
        raise field_error(name, f"expected a list of cards, got {_kind(value)}", what)
    return [parse_card(v, jokers, lambda m, i=i: field_error(f"{name}[{i}]", m, what)) for i, v in enumerate(value)]


def read_header(fields: Fields, game: str) -> None:
    """Check the format version (absent: version 1) and the game name of a state dict."""
    version = fields.data.get(VERSION_KEY, 1)
    if not is_int(version) or version not in READABLE_VERSIONS:
        readable = ", ".join(map(str, READABLE_VERSIONS))
        raise fields.error(VERSION_KEY, f"format version {_kind(version)} cannot be read: this release of "
                                        f"rummy-envs reads state dicts of format version {readable}")
    given = fields.data.get("game", game)
    if given != game:
        raise fields.error("game", f"this is a state dict of game {_kind(given)}, not of {game!r}")


def read_options(fields: Fields, config_class: Any) -> Any:
    """The game's rules config from the ``options`` mapping (absent: the defaults)."""
    options = fields.mapping("options", {})
    try:
        return config_class.from_kwargs(**{str(k): v for k, v in options.items()})
    except (ValueError, TypeError) as err:
        raise fields.error("options", str(err)) from None


def with_env_options(data: Any, config: Any) -> dict[str, Any]:
    """A reset's ``state`` dict for an env whose rules config is ``config``: options the dict
    gives must be the env's, and the env's fill in the rest. ValueError when the dict is not a
    mapping or its options are invalid or differ (naming them)."""
    if not isinstance(data, Mapping):
        raise ValueError(f"state dict: expected a mapping of field names to values, got {_kind(data)}")
    given = data.get("options", {})
    if not isinstance(given, Mapping):
        raise field_error("options", f"expected a mapping, got {_kind(given)}")
    mine = dataclasses.asdict(config)
    try:
        theirs = dataclasses.asdict(type(config).from_kwargs(**{**mine, **{str(k): v for k, v in given.items()}}))
    except (ValueError, TypeError) as err:
        raise field_error("options", str(err)) from None
    differ = sorted(k for k in mine if theirs[k] != mine[k])
    if differ:
        raise field_error("options", f"the option(s) {', '.join(differ)} differ from this env's; construct the "
                                     "env with the state's options")
    return {**data, "options": mine}


def card_count_error(found: Iterable[int], expected: Iterable[int]) -> str:
    """What differs between the cards found in a state and the game's deck ("" if nothing)."""
    have, need = Counter(found), Counter(expected)
    extra, missing = sorted((have - need).elements()), sorted((need - have).elements())
    if not extra and not missing:
        return ""
    return (f"every card of the deck must be in exactly one place; extra: {C.format(extra) or 'none'}, "
            f"missing: {C.format(missing) or 'none'}")


TURN_SEARCH_LIMIT = 2_000
"""The most positions ``check_playable`` visits looking for the end of a turn; a search that
reaches it accepts the dict. A turn that can end usually ends one or two actions ahead (a
draw, a discard), and a dead end is proved in a handful of positions."""


def check_playable(state: Any) -> None:
    """The rule every reader ends with: a position is accepted only if it can be played on.
    Unless the game is over, the player to move has a legal action, and some sequence of
    legal actions finishes the turn (another seat comes to move, or the game ends): no legal
    action can lead into a position where nothing is legal. A depth-first search over
    clones, each position's actions tried in id order (every engine numbers its plain ways
    on, such as a draw, a pass or a declined meld, before the cards' many). An undo (the
    state's ``UNDO_ACTIONS``: Rummy 500's CANCEL, Manipulation's ABORT) leads back to a
    position the line already passed (only its turn counter moved on), so a line uses one
    at most; it is tried first, as putting a group or commit back is the short way out of
    a half-built one; and in a game with undos the search never enters the same view of
    the mover twice. The state itself is not changed."""
    if state.is_terminal():
        return
    player, phase = state.current_player, state.phase.name
    if not state.legal_actions():
        raise field_error("phase", f"player {player} has no legal action in phase {phase}")
    undo_actions = getattr(state, "UNDO_ACTIONS", frozenset())

    def ways_on(position: Any, undone: bool) -> Iterator[int]:
        actions = position.legal_actions()
        return iter([*(a for a in actions if a in undo_actions and not undone),
                     *(a for a in actions if a not in undo_actions)])

    # only a game with undos can come back to a position: the others skip the views' cost
    seen = {state.player_view(player)} if undo_actions else set()
    stack, visited = [(state, False, ways_on(state, False))], 0
    while stack:
        position, undone, actions = stack[-1]
        action = next(actions, None)
        if action is None:
            stack.pop()
            continue
        after = position.clone()
        after.apply(action)
        if after.is_terminal() or after.current_player != player:
            return
        if undo_actions:
            view = after.player_view(player)
            if view in seen:
                continue
            seen.add(view)
        visited += 1
        if visited >= TURN_SEARCH_LIMIT:
            return
        undone = undone or action in undo_actions
        stack.append((after, undone, ways_on(after, undone)))
    raise field_error("phase", f"player {player} cannot finish the turn begun in phase {phase}: every sequence of "
                               "legal actions reaches a position where nothing is legal")
