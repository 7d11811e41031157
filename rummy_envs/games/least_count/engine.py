"""Least Count ("Least Score") rules engine (2-10 players), pure Python over small int lists.

``LeastCountState`` is the whole game: the deal (with the cut joker and the open card), the
turn (declare at its start, or discard a legal set and then pick one card of the previous
player's discard or the top of the closed deck), the dead pile and its reshuffle, the
showdown (valid and false declarations, the tie rule, the timeout), elimination past the
threshold and, with ``episode="match"``, rounds until one player is left.

Cards are ids (``rank + 13 * suit``, every printed joker 52); with two decks a hand may hold
two copies of an id. Hands are sorted lists of at most ``MAX_HAND`` ids, so a discard is a
subset of the sorted hand: action ``DISCARD + subset - 1`` for a bitmask ``subset`` of hand
positions. When a hand holds two copies of an id, only the subset taking the first copy is
offered, so every legal discard has exactly one action.

Dealing is internal: round ``k``'s deck is put in the order ``cards.keyed_order`` gives the
key ``(seed, k)``, so the seed plus the action history replays a game exactly.
"""

from __future__ import annotations

import dataclasses
import random
from bisect import insort
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property, lru_cache, reduce
from itertools import combinations, compress, product
from operator import or_
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.errors import IllegalActionError, action_id
from rummy_envs.options import build, check_bool, check_choice, check_int
from rummy_envs.state_dicts import FORMAT_VERSION, Fields, card_count_error, field_error, read_header, read_options

GAME = "least_count"
JOKER = C.JOKER
NUM_IDS = C.NUM_CARDS + 1  # card ids with the joker
MAX_HAND = 7  # the largest hand_size: the discard actions are the subsets of 7 positions
JOKER_RANK = C.NUM_RANKS  # printed jokers form pairs and fours only with each other
FLUSH_SIZE = 5


class Phase(IntEnum):
    """Decision points of a turn; GAME_OVER ends the episode (round or match)."""

    TURN_START = 0  # declare, or discard a legal set
    PICK = 1  # pick a card of the open set or the top of the closed deck
    GAME_OVER = 2


_TURN_START, _PICK, _GAME_OVER = Phase  # plain names: an enum member looked up on its class costs more


# Action ids: named offsets of one Discrete space.
DECLARE = 0
DISCARD = 1  # DISCARD + subset - 1 (= subset): the cards at the set bits of ``subset`` in the sorted hand
PICK_OPEN = DISCARD + (1 << MAX_HAND) - 1  # PICK_OPEN + card id: a card of the open set
PICK_CLOSED = PICK_OPEN + NUM_IDS  # the top card of the closed deck
NUM_ACTIONS = PICK_CLOSED + 1
_PICK_OPEN_ACTION = tuple(range(PICK_OPEN, PICK_CLOSED))  # by card id
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
    name = text.strip().upper().replace(" ", "")
    if name in _SIMPLE_IDS:
        return _SIMPLE_IDS[name]
    head, _, rest = name.partition("(")
    if not rest.endswith(")"):
        raise ValueError(f"cannot parse action {text!r}")
    arg = rest[:-1]
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
# Options


@dataclass(frozen=True)
class LeastCountConfig(C.MultiDeckDeal):
    """Rules options of least_count.md, named as in the spec, plus the episode length and the
    round cap. ``num_decks=None`` means the spec's default: one deck for 2-6 players, two for
    7-10. ``declare_max_count=None`` sets no threshold."""

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


# ----------------------------------------------------------------------------------------
# Card values and the discard patterns


@lru_cache(maxsize=None)
def card_values(cut_card: int | None) -> tuple[int, ...]:
    """Value of every id: A = 1, 2-10 face value, J/Q/K = 10, printed jokers 0, and 0 for every
    card of the cut card's rank (a cut printed joker leaves only printed jokers wild)."""
    wild = -1 if cut_card is None or cut_card == JOKER else cut_card % C.NUM_RANKS
    return tuple(0 if c % C.NUM_RANKS == wild else C.GIN_VALUES[c] for c in range(C.NUM_CARDS)) + (0,)


@dataclass(frozen=True)
class DiscardRules:
    """The options that decide which sets of cards may be discarded together."""

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
        """``_sets_of_ranks`` of each sorted rank list, filled in as hands come up."""
        return {}

    def __reduce__(self) -> tuple[type[DiscardRules], tuple[Any, ...]]:
        """Pickled as its options alone, without the memo of sets by shape (thousands of
        entries after a while)."""
        return type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> DiscardRules:
        """Shared by copies: the options never change and the memo only grows with answers
        that stay true."""
        return self


_RANK_OF = tuple(c % C.NUM_RANKS for c in range(C.NUM_CARDS)) + (JOKER_RANK,)
_SUIT_OF = tuple(c // C.NUM_RANKS for c in range(C.NUM_CARDS)) + (C.NUM_SUITS,)  # a joker is of no suit
_ROW_BIT = tuple(1 << rank for rank in range(C.NUM_RANKS)) + (0,)  # by rank; a joker is in no rank row
# _SEATS_FROM[n][dealer]: the n seats clockwise from the dealer's left, the dealer last.
_SEATS_FROM = [[tuple((dealer + k) % n for k in range(1, n + 1)) for dealer in range(n)] for n in range(11)]
_CARD_ROW_BIT = tuple(_ROW_BIT[rank] for rank in _RANK_OF)  # the same by card id
_POSITION_BITS = tuple(tuple(1 << i for i in range(MAX_HAND) if mask >> i & 1) for mask in range(1 << MAX_HAND))
_ALL_POSITIONS = (1 << MAX_HAND) - 1
_POSITION_FLAGS = tuple(tuple(bool(mask >> i & 1) for i in range(MAX_HAND)) for mask in range(1 << MAX_HAND))
_SINGLES = tuple(tuple(1 << i for i in range(size)) for size in range(MAX_HAND + 1))
# _SUBSETS[k][mask]: the subsets of k of the positions in ``mask`` (the cards of one rank).
_SUBSETS = tuple(tuple(tuple(map(sum, combinations(_POSITION_BITS[mask], k))) for mask in range(1 << MAX_HAND))
                 for k in range(MAX_HAND + 1))


def legal_discards(hand: list[int], rules: DiscardRules) -> list[int]:
    """Sorted subset bitmasks (bit i = the i-th card of the sorted ``hand``) of every legal
    discard: a single, a pair, four of a kind (three when allowed, two different pairs when
    allowed), a sequence of an allowed length (ace low or high, no wrap; one suit when
    ``sequence_same_suit``) or a flush of 5 different cards of one suit. Printed jokers group
    only with each other and fit no sequence or flush. Of copies of an id the first is used.

    Most hands repeat at most one rank: their sets come straight from the ranks' bits. For
    the others without copies and with sequences of any suits, which cards go together
    depends only on the hand's ranks: the sets of each multiset of ranks (its *shape*) are
    found once, over the ranks sorted, and carried to the hand's positions by the sorting
    permutation."""
    size = len(hand)
    if size == 1:
        return [1]
    by_bits = _legal_discards_by_rank_bits(hand, rules)
    if by_bits is not None:
        return by_bits
    if rules.sequence_same_suit or len(set(hand)) < size:
        return _legal_discards_by_suit_or_copies(hand, rules)
    ranks = list(map(_RANK_OF.__getitem__, hand))
    order = tuple(sorted(range(size), key=ranks.__getitem__))
    ranks.sort()
    shape = tuple(ranks)
    subsets = rules.sets_by_shape.get(shape)
    if subsets is None:
        subsets = rules.sets_by_shape[shape] = _sets_of_ranks(ranks, rules)
    to_hand = _POSITION_MAPS.get(order)
    if to_hand is None:
        to_hand = _POSITION_MAPS[order] = _position_map(order)
    out = list(map(to_hand.__getitem__, subsets))
    if _five_of_a_suit(hand):
        flushes: set[int] = set(out)
        _add_flush(hand, range(size), flushes)
        return sorted(flushes)
    out.sort()
    return out


def _five_of_a_suit(hand: list[int]) -> bool:
    """Whether sorted distinct cards hold five of one suit: sorted cards hold each suit's
    together, so five of a suit show as two cards 4 places apart."""
    for k in range(len(hand) - FLUSH_SIZE + 1):
        if _SUIT_OF[hand[k]] == _SUIT_OF[hand[k + FLUSH_SIZE - 1]]:
            return True
    return False


def _legal_discards_by_rank_bits(hand: list[int], rules: DiscardRules) -> list[int] | None:
    """The legal discards of a hand of distinct ranks but at most one rank held twice (nine
    hands in ten at a turn's start in random play): its singles, that pair and the
    sequences its rank row holds, read from the ranks' bits. None for any other hand, for
    suited sequences and for five of a suit (a flush)."""
    size = len(hand)
    bits = list(map(_CARD_ROW_BIT.__getitem__, hand))
    row = reduce(or_, bits)
    distinct = row.bit_count()
    if distinct < size - 1:
        return None
    if _five_of_a_suit(hand):
        return None
    singles = _SINGLES[size]
    if rules.rows_without_sequence[row]:
        windows: tuple[tuple[int, ...], ...] = ()
    elif rules.sequence_same_suit:
        return None
    else:
        windows = _sequence_windows(row, rules.sequence_lengths)
    if distinct == size:
        extra = pair = 0
        out = list(singles)
    else:
        extra = sum(bits) - row  # the bit of the rank held twice; 0 when a joker took the place
        if not extra:
            return None
        i = bits.index(extra)
        j = bits.index(extra, i + 1)
        if hand[i] == hand[j]:  # two copies of one id: only the first is offered alone
            return None
        pair = 1 << i | 1 << j
        out = [*singles[:j + 1], pair, *singles[j + 1:]]
    if windows:
        where = dict(zip(bits, singles))  # rank bit -> the position bit of its (last) card
        for window in windows:
            subset = sum(map(where.__getitem__, window))
            out.append(subset)
            if extra in window:  # the same sequence with the pair's first card
                out.append(subset ^ pair)
        out.sort()
    return out


@lru_cache(maxsize=None)
def _sequence_windows(row: int, lengths: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The rank bits of every sequence of an allowed length inside the 13-bit rank row."""
    return tuple(tuple(_ROW_BIT[rank] for rank in run) for run in _runs_in_row(row, lengths))


_POSITION_MAPS: dict[tuple[int, ...], tuple[int, ...]] = {}
"""For each order of hand positions by rank: subset of the sorted ranks -> subset of the hand."""


def _position_map(order: tuple[int, ...]) -> tuple[int, ...]:
    """Each subset of the sorted ranks' indexes as the subset of hand positions ``order`` names."""
    return tuple(sum(1 << position for i, position in enumerate(order) if subset >> i & 1)
                 for subset in range(1 << len(order)))


def _sets_of_ranks(ranks: list[int], rules: DiscardRules) -> tuple[int, ...]:
    """Every legal discard but flushes of distinct cards with the sorted ``ranks``, as subsets
    of their indexes: singles, groups and sequences of any suits."""
    size = len(ranks)
    groups: set[int] = set()
    distinct = set(ranks)
    if len(distinct) < size:
        _add_sets(ranks, rules, groups)
    if size >= rules.shortest_run:
        runs = _runs_in_row(sum(map(_ROW_BIT.__getitem__, distinct)), rules.sequence_lengths)
        _add_sequences(ranks, range(size), runs, groups)
    return _SINGLES[size] + tuple(groups)


def _legal_discards_by_suit_or_copies(hand: list[int], rules: DiscardRules) -> list[int]:
    """``legal_discards`` for sequences of one suit, or a hand holding copies of an id."""
    size = len(hand)
    ranks = [_RANK_OF[card] for card in hand]
    groups: set[int] = set()
    copies = 0  # positions holding a further copy of the id just before them
    if len(set(ranks)) < size:
        copies = sum(1 << i for i in range(1, size) if hand[i] == hand[i - 1])
        _add_sets(ranks, rules, groups)
    if size >= rules.shortest_run:
        _add_runs(hand, ranks, copies, rules, groups)
    if copies:  # of copies of an id, only the subsets taking the first ones
        groups = {subset for subset in groups if not (subset & copies) >> 1 & ~subset}
        singles = [1 << i for i in range(size) if not copies >> i & 1]
    else:
        singles = list(_SINGLES[size])
    return sorted(singles + list(groups)) if groups else singles


def _add_sets(ranks: list[int], rules: DiscardRules, out: set[int]) -> None:
    """Add the groups of one rank (and pairs of two ranks) of the hand of ``ranks`` to ``out``."""
    by_rank: dict[int, int] = {}  # rank -> the positions of its cards
    for i, rank in enumerate(ranks):
        by_rank[rank] = by_rank.get(rank, 0) | 1 << i
    pairs: list[tuple[int, ...]] = []
    for positions in by_rank.values():
        if positions & (positions - 1):  # two cards or more
            for size in rules.set_sizes:
                out.update(_SUBSETS[size][positions])
            if rules.allow_two_different_pairs:
                pairs.append(_SUBSETS[2][positions])
    for a, b in combinations(pairs, 2):
        out.update(x | y for x in a for y in b)


def _add_runs(hand: list[int], ranks: list[int], copies: int, rules: DiscardRules, out: set[int]) -> None:
    """Add the sequences and flushes of the distinct natural cards (no printed jokers, the
    first of copies) to ``out``, in one suit with ``sequence_same_suit``; ``copies`` holds
    the positions of further copies."""
    lengths = rules.sequence_lengths
    naturals = [i for i, card in enumerate(hand) if card != JOKER and not copies >> i & 1]
    if _five_of_a_suit([hand[i] for i in naturals]):
        _add_flush(hand, naturals, out)
    suits = {_SUIT_OF[hand[i]] for i in naturals} if rules.sequence_same_suit else {None}
    for suit in suits:
        group = [i for i in naturals if suit is None or _SUIT_OF[hand[i]] == suit]
        if len(group) >= lengths[0]:
            runs = _runs_in_row(sum({_ROW_BIT[ranks[i]] for i in group}), lengths)
            _add_sequences(ranks, group, runs, out)


def _add_sequences(ranks: list[int], positions: Iterable[int], runs: tuple[tuple[int, ...], ...],
                   out: set[int]) -> None:
    """Add to ``out`` every choice of one of the ``positions`` per rank of each run."""
    by_rank: dict[int, int] = {}  # rank -> the positions of its cards
    for i in positions:
        by_rank[ranks[i]] = by_rank.get(ranks[i], 0) | 1 << i
    for run in runs:
        out.update(map(sum, product(*(_POSITION_BITS[by_rank[r]] for r in run))))


def _add_flush(hand: list[int], positions: Iterable[int], out: set[int]) -> None:
    """Add the flushes of the natural cards at ``positions`` (distinct cards, one suit of
    five or more among them, as a hand holds at most seven) to ``out``."""
    by_suit: dict[int, list[int]] = {}
    for i in positions:
        by_suit.setdefault(_SUIT_OF[hand[i]], []).append(1 << i)
    for suited in by_suit.values():
        if len(suited) >= FLUSH_SIZE:
            out.update(map(sum, combinations(suited, FLUSH_SIZE)))


@lru_cache(maxsize=None)
def _runs_in_row(row: int, lengths: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The rank lists of every sequence of an allowed length inside the 13-bit rank row."""
    return tuple(tuple(pos % C.NUM_RANKS for pos in range(lo, hi + 1))
                 for lo, hi, _ranks in M.sequences_in_row(row) if hi - lo + 1 in lengths)


# ----------------------------------------------------------------------------------------
# Results and the view


@dataclass
class RoundResult:
    """How a round ended and what each seat scored (points are bad: lower is better)."""

    kind: str  # "valid_declaration", "false_declaration", "timeout"
    declarer: int = -1
    players: list[int] = field(default_factory=list)  # the seats dealt in
    counts: list[int] = field(default_factory=list)  # each seat's count at the showdown (0 if not dealt in)
    points: list[int] = field(default_factory=list)  # each seat's points for the round
    hands: list[list[int]] = field(default_factory=list)  # every hand at the showdown, revealed
    totals: list[int] = field(default_factory=list)  # match totals after the round
    eliminated: list[int] = field(default_factory=list)  # seats eliminated after this round (match mode)
    truncated: bool = False  # the round hit max_turns_per_round
    cut_card: int = -1  # the cut card of the round (cut_joker), -1 if none

    def as_dict(self) -> dict[str, Any]:
        """The fields as a new plain dict (what ``dataclasses.asdict`` gives, without its
        generic deep copy: rounds of short games end often)."""
        return {"kind": self.kind, "declarer": self.declarer, "players": list(self.players),
                "counts": list(self.counts), "points": list(self.points), "hands": [list(h) for h in self.hands],
                "totals": list(self.totals), "eliminated": list(self.eliminated), "truncated": self.truncated,
                "cut_card": self.cut_card}


@dataclass(frozen=True)
class LeastCountView:
    """Exactly what one player may see, seats relative (index 0 is this player)."""

    player: int
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None
    dealer: int
    hand: tuple[int, ...]  # sorted: DISCARD positions index it
    count: int  # my hand's count
    open_set: tuple[int, ...]  # the previous player's discard, which may be picked from
    pending_discard: tuple[int, ...]  # what the player to move has just discarded (PICK phase)
    dead_pile: tuple[int, ...]  # in the order the cards died
    stock_size: int  # cards in the closed deck
    cut_card: int | None
    hand_sizes: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]  # cards each seat picked from an open set and still holds
    totals: tuple[int, ...]
    eliminated: tuple[bool, ...]
    turn_done: tuple[bool, ...]  # seats that finished a turn this round (may declare)
    turns: int
    round_number: int
    rules: LeastCountConfig  # the rules options, which every player knows
    legal_actions: tuple[int, ...]


# ----------------------------------------------------------------------------------------
# The state


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


def score_round(config: LeastCountConfig, declarer: int, players: list[int],
                counts: list[int]) -> tuple[str, list[int]]:
    """How a round ends and each seat's points (least_count.md §6-§7): ``declarer`` declared
    (-1: the timeout) with the seats ``players`` dealt in holding ``counts``."""
    points = [0] * config.num_players
    low = min(counts[q] for q in players)
    if declarer < 0:
        for q in players:
            points[q] = counts[q] - low
        return "timeout", points
    d = counts[declarer]
    others = [counts[q] for q in players if q != declarer]
    if all(c >= d for c in others) if config.tie_declaration_valid else all(c > d for c in others):
        for q in players:
            points[q] = counts[q] - d
        return "valid_declaration", points
    points[declarer] = config.false_declare_penalty + d - low
    return "false_declaration", points


def _remove_cards(held: list[int], cards: list[int]) -> None:
    """Remove from ``held`` one copy of each of ``cards`` it has (the rest are ignored)."""
    for card in cards:
        if card in held:
            held.remove(card)


class LeastCountState:
    """A game of Least Count in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[LeastCountConfig]] = LeastCountConfig

    def __init__(self, config: LeastCountConfig | None = None, seed: int = 0, deck: list[int] | None = None,
                 dealer: int | None = None):
        self.config = cfg = config or self.config_class()
        self.n = cfg.num_players
        self.seed = int(seed)
        self.rules = cfg.discard_rules
        self.history: list[int] = []
        self.round_index = 0
        self.hand_results: list[RoundResult] = []
        self.totals = [0] * self.n
        self.out_round = [0] * self.n  # the round after which each seat was eliminated; 0 = active
        self.winners: list[int] = []
        self.truncated = False
        if dealer is None:
            dealer = first_dealer(self.seed, self.n)
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < self.n:
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, cfg.full_deck())
        self.first_dealer = dealer
        self._deal(dealer, self.initial_deck)

    # -- dealing and turns -----------------------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Deal the round ``round_index`` from ``deck`` (the first card dealt first), or from the
        seed's ``deal_order`` when it is None."""
        cfg = self.config
        order = deal_order(cfg, self.seed, self.round_index) if deck is None else deck
        n, out_round = self.n, self.out_round
        seats = [q for q in _SEATS_FROM[n][dealer] if not out_round[q]]  # dealt from the dealer's left
        self.dealer = dealer
        self.hands: list[list[int]] = [[] for _ in range(n)]
        dealt = len(seats) * cfg.hand_size
        for k, q in enumerate(seats):  # one card at a time around the table
            self.hands[q] = sorted(order[k:dealt:len(seats)])
        turned = dealt  # the next card turned up: the cut card, then the open card
        self.cut_card = -1
        if cfg.cut_joker:
            self.cut_card, turned = order[turned], turned + 1
        self.open_set: list[int] = []
        if cfg.initial_open_card:
            self.open_set, turned = [order[turned]], turned + 1
        self.stock = order[turned:][::-1]  # pop() draws the top card
        self.dead: list[int] = []
        self.pending: list[int] = []  # the mover's discard until it picks
        self.known: list[list[int]] = [[] for _ in range(self.n)]
        self.turn_done = [False] * self.n
        self.turns = 0
        self.reshuffles = 0
        self.values = card_values(None if self.cut_card < 0 else self.cut_card)
        self._begin_turn(seats[0])

    def _begin_turn(self, player: int) -> None:
        self.current_player = player
        self.phase = _TURN_START
        self._legal: list[int] | None = None

    def next_active(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` still in the match."""
        n, out_round = self.n, self.out_round
        q = (seat + 1) % n
        while out_round[q]:
            if q == seat:
                raise ValueError("no seat is still in the match")
            q = (q + 1) % n
        return q

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == _GAME_OVER

    def active_seats(self) -> list[int]:
        """Seats still in the match, in seat order."""
        return [q for q in range(self.n) if not self.out_round[q]]

    def count(self, player: int) -> int:
        """The value of a hand: A = 1, 2-10 face value, J/Q/K = 10, jokers 0."""
        return sum(map(self.values.__getitem__, self.hands[player]))

    def may_declare(self, player: int) -> bool:
        """``declare_allowed`` of the spec, at the start of ``player``'s turn."""
        cfg = self.config
        if not self.turn_done[player] and cfg.declare_timing == "start_of_turn":
            return False
        return cfg.declare_max_count is None or self.count(player) <= cfg.declare_max_count

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> list[int]:
        p = self.current_player
        if self.phase == _TURN_START:
            discards = legal_discards(self.hands[p], self.rules)  # DISCARD - 1 + subset is the subset
            return [DECLARE, *discards] if self.may_declare(p) else discards
        if self.phase == _PICK:
            opens = self.open_set  # sorted; with copies an id may be there twice
            out = list(map(_PICK_OPEN_ACTION.__getitem__, opens if len(opens) < 2 else sorted(set(opens))))
            if self.stock or self.dead:
                out.append(PICK_CLOSED)
            return out
        return []

    def describe(self, action: int) -> str:
        """``action_to_str`` plus the cards a discard takes from the hand of the player to move."""
        name = action_to_str(action)
        if DISCARD <= action < PICK_OPEN and self.current_player >= 0:
            return f"{name} = {C.format(subset_cards(self.hands[self.current_player], action)) or '-'}"
        return name

    # -- scores ----------------------------------------------------------------------------
    def scores(self) -> list[int]:
        """Larger is better: minus the round's points once it is over (hand mode), minus the
        match totals in match mode."""
        if self.config.episode == "match":
            return [-t for t in self.totals]
        if self.is_terminal() and self.hand_results:
            return [-x for x in self.hand_results[-1].points]
        return [0] * self.n

    def standings(self) -> list[int]:
        """What ranks the seats for ``reward="win_loss"``, larger is better. One round: the
        scores. A match to the last player standing: minus each seat's finishing place (1 =
        best), seats still in ahead of eliminated ones, later eliminations ahead of earlier,
        then lower totals first, equal seats sharing a place. To the first elimination: the
        scores (minus the totals)."""
        cfg = self.config
        if cfg.episode == "hand" or cfg.match_end == "first_elimination":
            return self.scores()
        still_in = len(self.hand_results) + 1
        keys = [(self.out_round[q] or still_in, -self.totals[q]) for q in range(self.n)]
        return [-1 - sum(other > key for other in keys) for key in keys]

    def returns(self) -> list[float]:
        """Zero-sum points: per round, each seat dealt in gets the mean points of that round's
        players minus its own (what ``reward="points"`` pays), summed over the episode."""
        out = [0.0] * self.n
        rounds = self.hand_results if self.config.episode == "match" else self.hand_results[-1:]
        if self.config.episode == "hand" and not self.is_terminal():
            rounds = []
        for result in rounds:
            if not result.players:  # a hand-written record of an earlier round, without seats or points
                continue
            mean = sum(result.points[q] for q in result.players) / len(result.players)
            for q in result.players:
                out[q] += mean - result.points[q]
        return out

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        as_int = action if type(action) is int else action_id(action)
        if as_int not in (self._legal or self.legal_actions()):
            raise IllegalActionError(
                action, action_to_str(as_int) if as_int is not None else repr(action),
                f"player {self.current_player}", self.phase.name, [action_to_str(a) for a in self.legal_actions()],
            )
        action = as_int
        self.history.append(action)
        self._legal = None
        p = self.current_player
        if action == DECLARE:
            self._showdown(p)
        elif action < PICK_OPEN:
            hand = self.hands[p]
            subset = action - DISCARD + 1
            self.pending = list(compress(hand, _POSITION_FLAGS[subset]))
            self.hands[p] = list(compress(hand, _POSITION_FLAGS[~subset & _ALL_POSITIONS]))
            if self.known[p]:
                _remove_cards(self.known[p], self.pending)
            self.phase = _PICK
        elif action == PICK_CLOSED:
            if not self.stock:
                self._reshuffle()
            insort(self.hands[p], self.stock.pop())
            self._end_turn(p)
        else:
            card = action - PICK_OPEN
            self.open_set.remove(card)
            insort(self.hands[p], card)
            insort(self.known[p], card)
            self._end_turn(p)

    def _reshuffle(self) -> None:
        """The dead pile, shuffled from the seed, becomes the closed deck."""
        cards = C.keyed_order(self.dead, f"{GAME}-reshuffle:{self.seed}:{self.round_index}:{self.reshuffles}")
        self.reshuffles += 1
        self.dead = []
        self.stock = cards[::-1]

    def _end_turn(self, p: int) -> None:
        """The old open set dies, the mover's discard opens, and the next player moves (or the
        round times out)."""
        self.dead += self.open_set
        self.open_set, self.pending = self.pending, []  # a discard is sorted, as the hand it left
        self.turn_done[p] = True
        self.turns += 1
        if self.turns >= self.config.max_turns_per_round:
            self._showdown(-1)
            return
        self._begin_turn(self.next_active(p))

    def _showdown(self, declarer: int) -> None:
        """Score the round (a declaration by ``declarer``, or the timeout when it is -1),
        eliminate, and deal the next round or end the episode."""
        cfg = self.config
        players = self.active_seats()
        counts = [0 if out else self.count(q) for q, out in enumerate(self.out_round)]
        kind, points = score_round(cfg, declarer, players, counts)
        self.totals = [t + x for t, x in zip(self.totals, points)]
        eliminated = self._eliminate(players) if cfg.episode == "match" else []
        self.hand_results.append(RoundResult(kind, declarer, players, counts, points,
                                             [list(h) for h in self.hands], list(self.totals), eliminated,
                                             kind == "timeout", self.cut_card))
        self._legal = None
        if cfg.episode == "hand":
            self._finish(truncated=kind == "timeout", winners=[])
            return
        active = self.active_seats()
        if cfg.match_end == "first_elimination" and eliminated:
            best = min(self.totals)
            self._finish(truncated=False, winners=[q for q in range(self.n) if self.totals[q] == best])
        elif len(active) <= 1:
            self._finish(truncated=False, winners=active)
        elif len(self.hand_results) >= cfg.max_rounds:
            self._finish(truncated=True, winners=[])
        else:
            self.round_index += 1
            self._deal(self.next_active(self.dealer), None)

    def _eliminate(self, players: list[int]) -> list[int]:
        """Mark the seats whose total is past the threshold; if that is everybody, the lowest
        totals stay in."""
        cfg = self.config
        limit = cfg.elimination_score
        over = [q for q in players if self.totals[q] > limit or (cfg.eliminate_on_equal and self.totals[q] == limit)]
        if len(over) == len(players):
            best = min(self.totals[q] for q in over)
            over = [q for q in over if self.totals[q] != best]
        for q in over:
            self.out_round[q] = len(self.hand_results) + 1
        return over

    def _finish(self, truncated: bool, winners: list[int]) -> None:
        self.truncated = truncated
        self.winners = winners
        self.phase, self.current_player = _GAME_OVER, -1

    # -- views -----------------------------------------------------------------------------
    def view(self, player: int) -> LeastCountView:
        """What ``player`` may see now (see ``LeastCountView``)."""
        n = self.n
        seats = [(player + k) % n for k in range(n)]
        mine = self.current_player == player
        return LeastCountView(
            player=player,
            num_players=n,
            phase=self.phase,
            is_my_turn=mine,
            to_move=None if self.current_player < 0 else (self.current_player - player) % n,
            dealer=(self.dealer - player) % n,
            hand=tuple(self.hands[player]),
            count=self.count(player),
            open_set=tuple(self.open_set),
            pending_discard=tuple(self.pending),
            dead_pile=tuple(self.dead),
            stock_size=len(self.stock),
            cut_card=None if self.cut_card < 0 else self.cut_card,
            hand_sizes=tuple(len(self.hands[q]) for q in seats),
            known=tuple(tuple(self.known[q]) for q in seats),
            totals=tuple(self.totals[q] for q in seats),
            eliminated=tuple(bool(self.out_round[q]) for q in seats),
            turn_done=tuple(self.turn_done[q] for q in seats),
            turns=self.turns,
            round_number=self.round_index + 1,
            rules=self.config,
            legal_actions=tuple(self.legal_actions()) if mine else (),
        )

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> LeastCountState:
        """An independent copy (cheap: ints and short lists)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in ("history", "totals", "out_round", "winners", "hand_results", "open_set", "stock", "dead",
                     "pending", "turn_done"):
            setattr(new, name, list(getattr(self, name)))
        new.hands = [list(h) for h in self.hands]
        new.known = [list(k) for k in self.known]
        return new

    def hidden_cards(self, player: int) -> list[int]:
        """The cards of ``player``'s hand nobody else knows (those not picked from an open set)."""
        rest = list(self.hands[player])
        _remove_cards(rest, self.known[player])
        return rest

    def sample_determinization(self, player: int, rng: random.Random) -> LeastCountState:
        """A copy in which every card hidden from ``player`` (the other hands but their known
        cards, and the closed deck's order) is redealt at random."""
        others = [q for q in range(self.n) if q != player and self.hands[q]]
        pool = list(self.stock)
        for q in others:
            pool += self.hidden_cards(q)
        rng.shuffle(pool)
        new = self.clone()
        for q in others:
            k = len(self.hands[q]) - len(self.known[q])
            new.hands[q] = sorted(self.known[q] + pool[:k])
            pool = pool[k:]
        new.stock = pool
        new._legal = None
        return new

    # -- dicts and replay ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able description of the whole state (cards as strings)."""
        fmt = C.format_card
        cards = lambda ids: [fmt(c) for c in ids]  # noqa: E731
        return {
            "format_version": FORMAT_VERSION,
            "game": GAME,
            "options": self.config.as_options(),
            "seed": self.seed,
            "initial_deck": None if self.initial_deck is None else cards(self.initial_deck),
            "first_dealer": self.first_dealer,
            "round_index": self.round_index,
            "dealer": self.dealer,
            "phase": self.phase.name,
            "current_player": self.current_player,
            "hands": [cards(h) for h in self.hands],
            "stock": cards(reversed(self.stock)),
            "open_set": cards(self.open_set),
            "pending_discard": cards(self.pending),
            "dead_pile": cards(self.dead),
            "cut_card": fmt(self.cut_card) if self.cut_card >= 0 else None,
            "known": [cards(k) for k in self.known],
            "turn_done": list(self.turn_done),
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "totals": list(self.totals),
            "out_round": list(self.out_round),
            "winners": list(self.winners),
            "hand_results": [r.as_dict() for r in self.hand_results],
            "truncated": self.truncated,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls, data: Any) -> LeastCountState:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (docs/least_count.md,
        "State dicts", lists the fields).

        Missing keys take the values of a fresh round: a scenario may give just ``hands``,
        ``stock``, ``open_set``, ``dead_pile``, ``phase``, ``current_player``, ``dealer`` and
        ``turn_done``. Every card of the game must be in exactly one place.
        """
        fields = Fields(data, STATE_KEYS)
        read_header(fields, GAME)
        config = read_options(fields, cls.config_class)
        n = config.num_players
        dealer = fields.integer("dealer", 0, 0, n - 1, "the dealer's seat")
        round_index = fields.integer("round_index", 0, 0)
        deck = fields.optional_cards("initial_deck", None, jokers=True)
        if deck is not None and (problem := card_count_error(deck, config.full_deck())):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer)
        state.out_round = fields.integers("out_round", state.out_round, n, 0, config.max_rounds,
                                          "the round after which the seat was eliminated, 0 while it plays")
        if round_index:
            state.round_index = round_index
            if len(state.active_seats()) > 1 and not state.out_round[dealer]:
                state._deal(dealer, None)
        state.first_dealer = fields.integer("first_dealer", dealer, 0, n - 1)
        state._read_fields(fields)
        state._check_rules()
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types, ranges and that
        every card of the game is in exactly one place."""
        cfg, n = self.config, self.n
        written = f.has("hands")
        hands = f.card_rows("hands", n, jokers=True) if written else [list(h) for h in self.hands]
        stock = f.cards("stock", [] if written else self.stock[::-1], jokers=True)
        open_set = f.cards("open_set", [] if written else self.open_set, jokers=True)
        pending = f.cards("pending_discard", [], jokers=True)
        dead = f.cards("dead_pile", [] if written else self.dead, jokers=True)
        cut = f.optional_card("cut_card", None if written else (self.cut_card if self.cut_card >= 0 else None),
                              jokers=True)
        placed = [card for hand in hands for card in hand] + stock + open_set + pending + dead
        placed += [cut] if cut >= 0 else []
        if problem := card_count_error(placed, cfg.full_deck()):
            raise field_error(["hands", "stock", "open_set", "pending_discard", "dead_pile", "cut_card"], problem)
        if (cut >= 0) != cfg.cut_joker:
            raise f.error("cut_card", "a cut card is given exactly when the option cut_joker is true")
        self.hands = [sorted(h) for h in hands]
        self.stock, self.open_set, self.pending, self.dead = stock[::-1], sorted(open_set), sorted(pending), dead
        self.cut_card = cut
        self.values = card_values(None if cut < 0 else cut)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, n - 1,
                                        "the seat to move, -1 once the game is over")
        self.known = [sorted(k) for k in f.card_rows("known", n, [[] for _ in range(n)], jokers=True)]
        self.turn_done = f.booleans("turn_done", self.turn_done, n)
        self.turns = f.integer("turns", 0, 0, cfg.max_turns_per_round)
        self.reshuffles = f.integer("reshuffles", 0, 0)
        self.totals = f.integers("totals", self.totals, n, 0, meaning="a seat's penalty points")
        self.winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
        self.hand_results = [_read_result(r, cfg) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    # -- the consistency of a state read from a dict ----------------------------------------
    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: seats,
        phase and eliminations, hand sizes, the pending discard, known cards, the turn count,
        and the totals, winners and truncation against the recorded rounds."""
        cfg, n, p = self.config, self.n, self.current_player
        terminal = self.phase == Phase.GAME_OVER
        if (p < 0) != terminal:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {self.phase.name} "
                                                            "(-1 exactly when the game is over)")
        rounds_over = self.round_index + terminal
        for q in range(n):
            out = self.out_round[q]
            if out > rounds_over:
                raise field_error("out_round", f"seat {q} is eliminated after round {out}, but round "
                                               f"{self.round_index + 1} is {'the last' if terminal else 'in play'}")
            limit = cfg.elimination_score
            if out and not (self.totals[q] > limit or cfg.eliminate_on_equal and self.totals[q] == limit):
                raise field_error(["out_round", "totals"], f"seat {q} is eliminated with {self.totals[q]} points, not "
                                                           f"past elimination_score={limit}")
        if not terminal and self.out_round[p]:
            raise field_error(["current_player", "out_round"], f"current_player {p} is eliminated")
        if not terminal and self.out_round[self.dealer]:
            raise field_error(["dealer", "out_round"], f"dealer {self.dealer} is eliminated")
        if (self.phase == Phase.PICK) != bool(self.pending):
            raise field_error(["pending_discard", "phase"], "a pending discard is given exactly in the PICK phase")
        if self.pending:
            cards = sorted(self.pending)
            if (1 << len(cards)) - 1 not in legal_discards(cards, self.rules) or len(cards) > MAX_HAND:
                raise field_error("pending_discard", f"{C.format(cards)} is not a set the rules let a player discard")
            if not (self.open_set or self.stock or self.dead):
                raise field_error(["open_set", "stock", "dead_pile"], "the player to move must pick but there is no "
                                                                      "card to pick")
        for q in range(n):
            size = len(self.hands[q]) + (len(self.pending) if q == p else 0)
            if self.out_round[q] and self.hands[q] and not terminal:
                raise field_error(f"hands[{q}]", f"seat {q} is eliminated but holds cards")
            if size > cfg.hand_size:
                raise field_error(f"hands[{q}]", f"seat {q} holds {size} cards, more than hand_size={cfg.hand_size}")
            mover_picking = q == p and self.phase == Phase.PICK
            if not terminal and not self.out_round[q] and not self.hands[q] and not mover_picking:
                raise field_error(f"hands[{q}]", f"seat {q} is in the round but holds no card")
            if Counter(self.known[q]) - Counter(self.hands[q]):
                raise field_error(f"known[{q}]", f"known cards of seat {q} are not all in its hand")
        if self.turns >= cfg.max_turns_per_round and not terminal:
            raise field_error("turns", f"the round ends after max_turns_per_round={cfg.max_turns_per_round} turns")
        self._check_match()

    def _check_match(self) -> None:
        """Winners, totals, the round count and the truncation flag fit the episode, the match
        end and the recorded rounds."""
        cfg, terminal, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if len(set(self.winners)) != len(self.winners) or any(self.out_round[q] for q in self.winners):
            raise field_error("winners", "expected distinct seats that are still in the match")
        if (self.winners or self.truncated) and not terminal:
            raise field_error(["winners", "truncated"], "only a finished game has winners or is truncated")
        if cfg.episode == "hand":
            if self.winners:
                raise field_error("winners", "a one-round episode has no match winners")
            if terminal and results and self.truncated != (results[-1].kind == "timeout"):
                raise field_error("truncated", "a round is truncated exactly when it times out")
        elif terminal:
            if self.truncated == bool(self.winners):
                raise field_error(["winners", "truncated"], "a finished match has winners exactly when it is not "
                                                            "truncated")
            best = min(self.totals)
            expected = (self.active_seats() if cfg.match_end == "last_player_standing"
                        else [q for q in range(self.n) if self.totals[q] == best])
            if self.winners and self.winners != expected:
                raise field_error("winners", f"expected {expected} ({cfg.match_end})")
        if len(results) > self.round_index + terminal:
            raise field_error(["hand_results", "round_index"], f"{len(results)} round results, more than the rounds "
                              f"played by round index {self.round_index}{' of a finished game' if terminal else ''}")
        if cfg.episode == "match" and results and results[-1].totals and results[-1].totals != self.totals:
            raise field_error("totals", f"expected {results[-1].totals}, the totals after the last recorded round")
        for i in range(1, len(results)):
            before, after = results[i - 1], results[i]
            if before.totals and after.totals and after.points and \
                    after.totals != [t + x for t, x in zip(before.totals, after.points)]:
                raise field_error(f"hand_results[{i}].totals", "expected the totals after the round before plus this "
                                                               "round's points")


STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "round_index", "dealer",
              "phase", "current_player", "hands", "stock", "open_set", "pending_discard", "dead_pile", "cut_card",
              "known", "turn_done", "turns", "reshuffles", "totals", "out_round", "winners", "hand_results",
              "truncated", "history")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(RoundResult))
ROUND_KINDS = ("valid_declaration", "false_declaration", "timeout")


def _read_result(f: Fields, config: LeastCountConfig) -> RoundResult:
    """One ``hand_results`` entry (``RoundResult.as_dict()``, cards as ids): its fields may be
    left out in a hand-written record, but those given must agree (counts with the hands and
    the cut card, points with the counts by the rules of the declaration)."""
    n = config.num_players
    kind = f.choice("kind", ROUND_KINDS)
    declarer = f.integer("declarer", -1, -1, n - 1, "the seat that declared, -1 on a timeout")
    players = f.integers("players", [], low=0, high=n - 1, meaning="a seat dealt in")
    counts, points, totals = (f.integers(key, [], low=0) for key in ("counts", "points", "totals"))
    for key, values in (("counts", counts), ("points", points), ("totals", totals)):
        if values and len(values) != n:
            raise f.error(key, f"expected {n} entries (one per seat) or none, got {len(values)}")
    if bool(players) != bool(points) or len(set(players)) != len(players):
        raise f.error(["players", "points"], "a round records the distinct seats dealt in and every seat's points "
                                             "together (or neither, in a hand-written record)")
    if (kind == "timeout") == (declarer >= 0) and (players or kind == "timeout"):
        raise f.error(["kind", "declarer"], "a round ends by a declaration of a seat dealt in, or by the timeout")
    result = RoundResult(
        kind=kind, declarer=declarer, players=players, counts=counts, points=points,
        hands=f.card_rows("hands", n, jokers=True) if f.items("hands", []) else [], totals=totals,
        eliminated=f.integers("eliminated", [], low=0, high=n - 1, meaning="a seat"),
        truncated=f.boolean("truncated", kind == "timeout"),
        cut_card=f.integer("cut_card", -1, -1, JOKER, "the cut card's id, -1 if none"),
    )
    if result.truncated != (kind == "timeout"):
        raise f.error(["truncated", "kind"], "a round is truncated exactly when it times out")
    if not players:
        return result
    if declarer >= 0 and declarer not in players or any(q not in players for q in result.eliminated):
        raise f.error(["declarer", "eliminated"], "the declarer and the seats eliminated were dealt in")
    if result.hands and counts:
        values = card_values(None if result.cut_card < 0 else result.cut_card)
        expected = [sum(values[c] for c in result.hands[q]) if q in players else 0 for q in range(n)]
        if counts != expected:
            raise f.error("counts", f"expected {expected}, the values of the hands shown")
    if counts:
        scored, expected = score_round(config, declarer, players, counts)
        if scored != kind:
            raise f.error(["kind", "counts"], f"these counts make the round a {scored.replace('_', ' ')}")
        if points != expected:
            raise f.error("points", f"expected {expected}, by the rules of a {kind.replace('_', ' ')}")
    return result


def replay(config: LeastCountConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None) -> LeastCountState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck and first dealer the game was given, if any (``to_dict`` records them)."""
    state = LeastCountState(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
