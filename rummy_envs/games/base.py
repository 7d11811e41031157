"""The engine contract: what every game's state offers, typed once for everything built on
the engines (the AEC envs, the agents, search, replays and the OpenSpiel bridge).

Everything outside a game's own package uses only the names below, never a game's
internals. ``tests/test_engine_contract.py`` checks each engine against this module by
behaviour as well as by names.

- ``GameState``: a position of one game. ``apply`` plays an action of the player to move
  and raises ``IllegalActionError`` (naming the action, the player and the phase) leaving
  the state exactly as it was; ``clone`` is an independent copy; ``to_dict`` /
  ``from_dict`` write and read the versioned state dict (``rummy_envs.state_dicts``).
- ``PlayerView``: exactly what one seat may see, seats relative to it (index 0 is the seat
  itself), always with the game's rules options in ``rules``, which every player knows; a
  frozen, hashable value (equal positions give equal views with equal hashes).
- ``UNDO_ACTIONS`` (optional class attribute, empty by default): the actions that take back
  what the mover did earlier in its turn (Rummy 500's CANCEL, Manipulation's ABORT). They
  lead back to a position already met, so a search over one turn (``check_playable``) tries
  them last and once per line.
- Bounds of any game under a config, for OpenSpiel's ``GameInfo``: ``utility_bounds(config)``
  (the least and greatest value any seat's ``returns()`` takes) and ``max_game_length(config)``
  (the most actions one game applies), both proven from the rules for games dealt from the
  start, each derivation in its engine's docstring.
- Sampling hidden information, for search: ``sample_determinization(player, rng)`` redeals
  everything hidden from ``player`` in a copy of the true state; ``sample_from_view(view,
  rng)`` builds such a state from the seat's view alone, which is all an agent is given.
  Both draw from the same distribution (every arrangement of the unseen cards consistent
  with what the seat has seen is equally likely).

What every engine shares lives here and in the modules it names: the seeded deck
(``seeded_deck``), the cards a seat cannot place (``unseen_pool``), the first steps of
``clone`` (``copy_with_lists``) and of ``str_to_action`` (``read_action_name``), zero-sum
payoffs (``centred``), the state-dict header and option reading (``rummy_envs.state_dicts``:
``read_header``, ``read_options``) and option checks (``rummy_envs.options``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from rummy_envs.errors import IllegalActionError, action_id

StateT = TypeVar("StateT", bound="GameState")


@runtime_checkable
class GameConfig(Protocol):
    """A game's rules options: a frozen dataclass whose fields are the option names."""

    game: str
    num_players: int


@runtime_checkable
class PlayerView(Protocol):
    """What one seat may see; every game's view has at least these fields."""

    player: int
    phase: Any  # the game's Phase (an IntEnum)
    is_my_turn: bool
    hand: tuple[int, ...]
    legal_actions: tuple[int, ...]
    rules: GameConfig


@runtime_checkable
class GameState(Protocol):
    """A position of one game, mutated only by ``apply``."""

    config: GameConfig
    seed: int
    phase: Any  # the game's Phase (an IntEnum)
    history: list[int]  # every action applied, in order
    truncated: bool  # ended by a turn or hand cap rather than by the rules

    @property
    def current_player(self) -> int:
        """The seat to move (meaningless once terminal)."""
        ...

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        ...

    def apply(self, action: int) -> None:
        """Play ``action``; ``IllegalActionError`` leaves the state as it was."""
        ...

    def is_terminal(self) -> bool:
        ...

    def returns(self) -> list[float]:
        """Each seat's payoff so far, zero-sum (final once terminal)."""
        ...

    def scores(self) -> list[int]:
        """Each seat's game score so far, larger is better."""
        ...

    def standings(self) -> list[int]:
        """What ranks the seats at the end (larger is better)."""
        ...

    def clone(self: StateT) -> StateT:
        ...

    def player_view(self, player: int) -> PlayerView:
        ...

    def sample_determinization(self: StateT, player: int, rng: random.Random) -> StateT:
        """A copy with every card hidden from ``player`` redealt consistently with what it saw."""
        ...

    @classmethod
    def utility_bounds(cls, config: Any) -> tuple[float, float]:
        """The least and the greatest value any seat's ``returns()`` can take in a game under
        ``config`` dealt from the start (truncated games included)."""
        ...

    @classmethod
    def max_game_length(cls, config: Any) -> int:
        """The most actions ``apply`` accepts in one game under ``config``, every cap included."""
        ...

    @classmethod
    def sample_from_view(cls: type[StateT], view: Any, rng: random.Random) -> StateT:
        """A full state consistent with ``view``, hidden cards dealt at random."""
        ...

    def action_to_str(self, action: int) -> str:
        ...

    def str_to_action(self, text: str) -> int:
        """The action id of a name as ``action_to_str`` writes it (ValueError otherwise)."""
        ...

    def to_dict(self) -> dict[str, Any]:
        ...

    @classmethod
    def from_dict(cls: type[StateT], data: Any) -> StateT:
        """The state a dict describes; ValueError naming the field for any other input."""
        ...


def read_action_name(text: str, simple_ids: Mapping[str, int]) -> int | tuple[str, str]:
    """The first step of every game's ``str_to_action``: the id of a name without arguments
    (``"DRAW_STOCK"``), or the head and the argument text of ``HEAD(args)`` (upper case, no
    spaces) for the game to read; ValueError for anything else. Case and spaces are free."""
    name = text.strip().upper().replace(" ", "")
    if name in simple_ids:
        return simple_ids[name]
    head, _, rest = name.partition("(")
    if not rest.endswith(")"):
        raise ValueError(f"cannot parse action {text!r}")
    return head, rest[:-1]


def illegal_action(state: GameState, action: Any) -> IllegalActionError:
    """The error every engine's ``apply`` raises for an action it refuses: the action (its
    name, or its repr when it is no action id), the player to move, the phase, and the legal
    actions there."""
    as_int = action_id(action)
    name = state.action_to_str(as_int) if as_int is not None else repr(action)
    return IllegalActionError(action, name, f"player {state.current_player}", state.phase.name,
                              [state.action_to_str(a) for a in state.legal_actions()])


def copy_with_lists(state: StateT, list_fields: Sequence[str]) -> StateT:
    """The first step of every engine's ``clone``: a new object of the state's class sharing
    its immutable fields, with a fresh copy of each list named in ``list_fields``; the
    engine then copies its nested lists itself."""
    new = object.__new__(type(state))
    new.__dict__.update(state.__dict__)
    for name in list_fields:
        setattr(new, name, list(getattr(state, name)))
    return new


def centred(scores: Sequence[int]) -> list[float]:
    """Each score minus the mean of the scores: the zero-sum payoffs of ``returns()``."""
    mean = sum(scores) / len(scores)
    return [s - mean for s in scores]


def seeded_deck(cards: Sequence[int], key: str) -> list[int]:
    """``cards`` shuffled by a Mersenne Twister seeded with the string ``key`` (a game's
    ``"<game>:<seed>:<hand>"``): the deal of the gin games, Rummy 500 and Manipulation Rummy."""
    order = list(cards)
    random.Random(key).shuffle(order)
    return order


def unseen_pool(everything: Sequence[int], seen: Sequence[int]) -> list[int]:
    """The cards of ``everything`` (copies repeated) not among ``seen`` (one copy each):
    what a seat cannot place, from which ``sample_from_view`` deals the hidden zones."""
    left = list(everything)
    for card in seen:
        left.remove(card)
    return left
