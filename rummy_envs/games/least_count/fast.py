"""The fast path of one rule: ``fast_legal_discards`` lists the same legal discards as the
readable ``rules.legal_discards`` (docs/least_count.md#legal-discards), a property test
holding them equal, in a fraction of the time: it is most of the work of ``legal_actions``.

Three ways, by the hand: most hands repeat at most one rank, and their sets come straight
from the ranks' bits (``_legal_discards_by_rank_bits``); the other hands of distinct cards
with sequences of any suits take the sets of their *shape* (their sorted ranks) from a memo
in ``DiscardRules`` (``_sets_of_ranks``); suited sequences and hands holding copies of an
id take the direct path (``_legal_discards_by_suit_or_copies``).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache, reduce
from itertools import combinations, product
from operator import or_

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.least_count.rules import FLUSH_SIZE, JOKER, JOKER_RANK, MAX_HAND, DiscardRules

_RANK_OF = tuple(c % C.NUM_RANKS for c in range(C.NUM_CARDS)) + (JOKER_RANK,)
_SUIT_OF = tuple(c // C.NUM_RANKS for c in range(C.NUM_CARDS)) + (C.NUM_SUITS,)  # a joker is of no suit
_ROW_BIT = tuple(1 << rank for rank in range(C.NUM_RANKS)) + (0,)  # by rank; a joker is in no rank row
_CARD_ROW_BIT = tuple(_ROW_BIT[rank] for rank in _RANK_OF)  # the same by card id
_POSITION_BITS = tuple(tuple(1 << i for i in range(MAX_HAND) if mask >> i & 1) for mask in range(1 << MAX_HAND))
_SINGLES = tuple(tuple(1 << i for i in range(size)) for size in range(MAX_HAND + 1))
# _SUBSETS[k][mask]: the subsets of k of the positions in ``mask`` (the cards of one rank).
_SUBSETS = tuple(tuple(tuple(map(sum, combinations(_POSITION_BITS[mask], k))) for mask in range(1 << MAX_HAND))
                 for k in range(MAX_HAND + 1))


def fast_legal_discards(hand: list[int], rules: DiscardRules) -> list[int]:
    """What ``rules.legal_discards(hand, rules)`` gives (the sorted subset bitmasks of every
    legal discard, bit i = the i-th card of the sorted ``hand``), fast.

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
    """``fast_legal_discards`` for sequences of one suit, or a hand holding copies of an id."""
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
