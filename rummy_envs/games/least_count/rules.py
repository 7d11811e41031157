"""Least Count's rules as a newcomer reads them (docs/least_count.md#rules): the options,
card values, the phases and action ids, which cards may be discarded together, and the
deal order. The turn itself (what each phase offers, what each action does) is
``LeastCountState`` in ``state.py``; round scores and eliminations are in ``scoring.py``.

Cards are ids (``rank + 13 * suit``, every printed joker 52); with two decks a hand may hold
two copies of an id. Hands are sorted lists of at most ``MAX_HAND`` ids, so a discard is a
subset of the sorted hand: action ``DISCARD + subset - 1`` for a bitmask ``subset`` of hand
positions. When a hand holds two copies of an id, only the subset taking the first copy is
offered, so every legal discard has exactly one action.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cached_property, lru_cache
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs.games.base import read_action_name
from rummy_envs.options import build, check_bool, check_choice, check_int

GAME = "least_count"
JOKER = C.JOKER
NUM_IDS = C.NUM_CARDS + 1  # card ids with the joker
MAX_HAND = 7  # the largest hand_size: the discard actions are the subsets of 7 positions
JOKER_RANK = C.NUM_RANKS  # printed jokers form pairs and fours only with each other
FLUSH_SIZE = 5


class Phase(IntEnum):
    """Decision points of a turn (docs/least_count.md#turn); GAME_OVER ends the episode
    (round or match)."""

    TURN_START = 0  # declare, or discard a legal set
    PICK = 1  # pick a card of the open set or the top of the closed deck
    GAME_OVER = 2


# ----------------------------------------------------------------------------------------
# Action ids: named offsets of one Discrete space (docs/least_count.md#actions)

DECLARE = 0
DISCARD = 1  # DISCARD + subset - 1 (= subset): the cards at the set bits of ``subset`` in the sorted hand
PICK_OPEN = DISCARD + (1 << MAX_HAND) - 1  # PICK_OPEN + card id: a card of the open set
PICK_CLOSED = PICK_OPEN + NUM_IDS  # the top card of the closed deck
NUM_ACTIONS = PICK_CLOSED + 1
_SIMPLE_NAMES = {DECLARE: "DECLARE", PICK_CLOSED: "PICK_CLOSED"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()}


def action_to_str(action: int) -> str:
    """Readable name of an action id: ``DECLARE``, ``DISCARD(0,2)`` (positions in the sorted
    hand, from 0), ``PICK_OPEN(7C)``, ``PICK_CLOSED``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    if DISCARD <= action < PICK_OPEN:
        subset = action - DISCARD + 1
        return f"DISCARD({','.join(str(i) for i in range(MAX_HAND) if subset >> i & 1)})"
    if PICK_OPEN <= action < PICK_CLOSED:
        return f"PICK_OPEN({C.format_card(action - PICK_OPEN)})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str`` (positions in any order); ValueError on anything else."""
    found = read_action_name(text, _SIMPLE_IDS)
    if isinstance(found, int):
        return found
    head, arg = found
    if head == "PICK_OPEN":
        return PICK_OPEN + C.parse_card(arg)
    if head == "DISCARD":
        positions = arg.split(",")
        if not all(p.isdigit() and int(p) < MAX_HAND for p in positions) or len(set(positions)) != len(positions):
            raise ValueError(f"cannot parse action {text!r}: DISCARD takes distinct hand positions 0..{MAX_HAND - 1}")
        return DISCARD + sum(1 << int(p) for p in positions) - 1
    raise ValueError(f"cannot parse action {text!r}")


def discard_action(hand: list[int], cards: C.CardsLike) -> int:
    """The action discarding ``cards`` from the sorted ``hand`` (first copies first);
    ValueError when the hand does not hold them."""
    wanted = Counter(C.parse(cards))
    subset = 0
    for card, copies in wanted.items():
        if hand.count(card) < copies:
            raise ValueError(f"the hand {C.format(hand) or '-'} does not hold {C.format([card] * copies)}")
        start = hand.index(card)
        subset |= ((1 << copies) - 1) << start
    if not subset:
        raise ValueError("a discard needs at least one card")
    return DISCARD + subset - 1


def subset_cards(hand: list[int], action: int) -> list[int]:
    """The cards a DISCARD action takes from the sorted ``hand``."""
    subset = action - DISCARD + 1
    return [card for i, card in enumerate(hand) if subset >> i & 1]


# ----------------------------------------------------------------------------------------
# Options (docs/least_count.md#options)


@dataclass(frozen=True)
class LeastCountConfig(C.MultiDeckDeal):
    """The rules options (docs/least_count.md#options), plus the episode length and the
    round cap. ``num_decks=None`` means one deck for 2-6 players and two for 7-10.
    ``declare_max_count=None`` sets no threshold."""

    game: ClassVar[str] = GAME
    num_players: int = 4
    num_decks: int | None = None
    num_printed_jokers: int = 0
    cut_joker: bool = False
    hand_size: int = 5
    initial_open_card: bool = True
    sequence_same_suit: bool = False
    sequence_lengths: tuple[int, ...] = (3, 5)
    allow_two_different_pairs: bool = False
    allow_three_of_a_kind: bool = False
    declare_timing: str = "start_of_turn"
    declare_max_count: int | None = None
    tie_declaration_valid: bool = False
    false_declare_penalty: int = 20
    max_turns_per_round: int = 200
    elimination_score: int = 100
    eliminate_on_equal: bool = False
    match_end: str = "last_player_standing"
    episode: str = "hand"
    max_rounds: int = 100

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, 2, 10)
        if self.num_decks is not None:
            check_int("num_decks", self.num_decks, 1, 2)
        check_int("num_printed_jokers", self.num_printed_jokers, 0, 2)
        check_int("hand_size", self.hand_size, 1, MAX_HAND)
        lengths = self.sequence_lengths
        if (not isinstance(lengths, (list, tuple, set, frozenset)) or not lengths
                or any(isinstance(x, bool) or not isinstance(x, int) or not 3 <= x <= C.NUM_RANKS for x in lengths)):
            raise ValueError(f"option sequence_lengths={lengths!r} is invalid; expected a non-empty collection of "
                             f"integers 3..{C.NUM_RANKS}")
        object.__setattr__(self, "sequence_lengths", tuple(sorted(set(lengths))))
        check_choice("declare_timing", self.declare_timing, ("start_of_turn", "start_of_any_turn"))
        if self.declare_max_count is not None:
            check_int("declare_max_count", self.declare_max_count, 0)
        check_int("false_declare_penalty", self.false_declare_penalty, 0)
        check_int("max_turns_per_round", self.max_turns_per_round, 1)
        check_int("elimination_score", self.elimination_score, 1)
        check_choice("match_end", self.match_end, ("last_player_standing", "first_elimination"))
        check_choice("episode", self.episode, ("hand", "match"))
        check_int("max_rounds", self.max_rounds, 1)
        for name in ("cut_joker", "initial_open_card", "sequence_same_suit", "allow_two_different_pairs",
                     "allow_three_of_a_kind", "tie_declaration_valid", "eliminate_on_equal"):
            check_bool(name, getattr(self, name))
        dealt = self.num_players * self.hand_size + self.initial_open_card + self.cut_joker
        if dealt >= self.deck_size:
            raise ValueError(f"option hand_size={self.hand_size!r} is invalid: {self.num_players} hands of "
                             f"{self.hand_size}, the open and cut cards and a closed deck need more than the "
                             f"{self.deck_size} cards of {self.decks} deck(s)")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> LeastCountConfig:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    def as_options(self) -> dict[str, Any]:
        """The options as plain JSON values (``sequence_lengths`` as a list)."""
        options = dataclasses.asdict(self)
        options["sequence_lengths"] = list(self.sequence_lengths)
        return options

    @property
    def decks(self) -> int:
        """Decks in play: ``num_decks``, else one for 2-6 players and two for 7 or more."""
        return self.num_decks if self.num_decks is not None else (1 if self.num_players <= 6 else 2)

    @property
    def total_jokers(self) -> int:
        return self.num_printed_jokers * self.decks

    @cached_property
    def deck_order(self) -> tuple[int, ...]:
        """``full_deck()`` computed once: every deal shuffles a copy of it."""
        return tuple(self.full_deck())

    @cached_property
    def discard_rules(self) -> DiscardRules:
        """``DiscardRules.of(self)`` kept here: every deal needs it, and the cache of ``of``
        hashes every option to find it."""
        return DiscardRules.of(self)


@dataclass(frozen=True)
class DiscardRules:
    """The options that decide which sets of cards may be discarded together, and the
    tables the fast path (``fast.py``) reads them through."""

    sequence_lengths: tuple[int, ...] = (3, 5)
    sequence_same_suit: bool = False
    allow_three_of_a_kind: bool = False
    allow_two_different_pairs: bool = False

    @classmethod
    @lru_cache(maxsize=64)
    def of(cls, config: LeastCountConfig) -> DiscardRules:
        return cls(config.sequence_lengths, config.sequence_same_suit, config.allow_three_of_a_kind,
                   config.allow_two_different_pairs)

    @cached_property
    def set_sizes(self) -> tuple[int, ...]:
        """Sizes of a legal group of one rank: pairs and fours, and threes when allowed."""
        return (2, 3, 4) if self.allow_three_of_a_kind else (2, 4)

    @cached_property
    def shortest_run(self) -> int:
        """The fewest cards of a sequence or a flush."""
        return min(self.sequence_lengths[0], FLUSH_SIZE)

    @cached_property
    def rows_without_sequence(self) -> tuple[bool, ...]:
        """For each 13-bit rank row: True when no sequence of an allowed length fits in it
        (the ace high or low, no wrap), so distinct ranks in it form no set but singles."""
        shortest = min(self.sequence_lengths)
        out = []
        for row in range(1 << C.NUM_RANKS):
            window = row | (row & 1) << C.NUM_RANKS  # the ace also above the king
            for _ in range(shortest - 1):
                window &= window >> 1
            out.append(not window)
        return tuple(out)

    @cached_property
    def sets_by_shape(self) -> dict[tuple[int, ...], tuple[int, ...]]:
        """``fast._sets_of_ranks`` of each sorted rank list, filled in as hands come up."""
        return {}

    def __reduce__(self) -> tuple[type[DiscardRules], tuple[Any, ...]]:
        """Pickled as its options alone, without the memo of sets by shape (thousands of
        entries after a while)."""
        return type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> DiscardRules:
        """Shared by copies: the options never change and the memo only grows with answers
        that stay true."""
        return self


# ----------------------------------------------------------------------------------------
# Card values (docs/least_count.md#cards-and-counts)


@lru_cache(maxsize=None)
def card_values(cut_card: int | None) -> tuple[int, ...]:
    """Value of every id: A = 1, 2-10 face value, J/Q/K = 10, printed jokers 0, and 0 for every
    card of the cut card's rank (a cut printed joker leaves only printed jokers wild)."""
    wild = -1 if cut_card is None or cut_card == JOKER else cut_card % C.NUM_RANKS
    return tuple(0 if c % C.NUM_RANKS == wild else C.GIN_VALUES[c] for c in range(C.NUM_CARDS)) + (0,)


# ----------------------------------------------------------------------------------------
# Legal discards (docs/least_count.md#legal-discards). ``fast.fast_legal_discards`` gives
# the same answer as ``legal_discards`` in a few bit operations; a property test holds them
# equal.


def rank_of(card: int) -> int:
    """A card's rank, 0..12 for A..K; printed jokers are a rank of their own, ``JOKER_RANK``."""
    return JOKER_RANK if card == JOKER else card % C.NUM_RANKS


def is_legal_discard(cards: Sequence[int], rules: DiscardRules) -> bool:
    """Whether ``cards`` (ids, copies repeated) may be discarded together: a single; a group
    of one rank of a legal size (pairs and fours, threes with ``allow_three_of_a_kind``);
    two pairs of different ranks with ``allow_two_different_pairs``; a flush (five different
    cards of one suit); or a sequence of an allowed length (``is_sequence``), of one suit
    with ``sequence_same_suit``. Printed jokers group only with printed jokers and fit no
    flush or sequence; identical cards of two decks never go together in one."""
    size = len(cards)
    if size == 1:  # a single
        return True
    copies_of_rank = Counter(map(rank_of, cards))
    if len(copies_of_rank) == 1:  # a group of one rank
        return size in rules.set_sizes
    if sorted(copies_of_rank.values()) == [2, 2]:  # two pairs of different ranks
        return rules.allow_two_different_pairs
    if JOKER in cards or len(set(cards)) < size:  # flushes and sequences: distinct cards, no joker
        return False
    suits = {card // C.NUM_RANKS for card in cards}
    if size == FLUSH_SIZE and len(suits) == 1:  # a flush
        return True
    if size not in rules.sequence_lengths or len(copies_of_rank) < size:  # a sequence has distinct ranks
        return False
    if rules.sequence_same_suit and len(suits) > 1:
        return False
    return is_sequence(list(copies_of_rank))


def is_sequence(ranks: list[int]) -> bool:
    """Whether distinct ``ranks`` are consecutive, the ace low (A-2-3) or high (Q-K-A) but
    never both: K-A-2 is no sequence."""
    ace_low = sorted(ranks)
    ace_high = sorted(C.NUM_RANKS if rank == 0 else rank for rank in ranks)
    return any(order[-1] - order[0] == len(order) - 1 for order in (ace_low, ace_high))


def takes_first_copies(hand: list[int], subset: int) -> bool:
    """Whether ``subset`` of the sorted ``hand`` takes the first copies of each id it takes:
    of the subsets taking the same cards, the one the rules offer."""
    return all(subset >> (i - 1) & 1 for i in range(1, len(hand)) if subset >> i & 1 and hand[i] == hand[i - 1])


def legal_discards(hand: list[int], rules: DiscardRules) -> list[int]:
    """Sorted subset bitmasks (bit i = the i-th card of the sorted ``hand``) of every legal
    discard, one per set of cards (the subset taking the first copies of an id)."""
    return [subset for subset in range(1, 1 << len(hand))
            if takes_first_copies(hand, subset)
            and is_legal_discard([card for i, card in enumerate(hand) if subset >> i & 1], rules)]


# ----------------------------------------------------------------------------------------
# The deal (docs/least_count.md#deal)


def deal_order(config: LeastCountConfig, seed: int, round_index: int) -> list[int]:
    """The deck of round ``round_index`` (from 0) of the game ``seed``, the first card dealt
    first: ``config.deck_order`` in the order of ``cards.keyed_order`` with the key
    ``"least_count:<seed>:<round_index>"``. One deck without jokers is the permutation itself."""
    key = f"{GAME}:{seed}:{round_index}"
    if len(config.deck_order) == C.NUM_CARDS:  # one deck, no jokers: ids 0..51 in order
        return C.keyed_permutation(C.NUM_CARDS, key)
    return C.keyed_order(config.deck_order, key)


def first_dealer(seed: int, num_players: int) -> int:
    """The dealer of round 0 drawn from the game seed: ``cards.keyed_word`` of
    ``"least_count-dealer:<seed>"`` modulo the number of players."""
    return C.keyed_word(f"{GAME}-dealer:{seed}") % num_players
