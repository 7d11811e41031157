"""Standard melds (sets and ace-low runs of one 52-card deck) and exact meld search.

The meld table is built once at import: every set of 3 or 4 cards of one rank and every
run of 3 to 5 consecutive cards of one suit (185 melds, the meld actions of the gin games).
Longer runs never need their own entry: a run of 6+ cards splits into runs of 3-5 with
the same cards, so the search over the table finds every arrangement's deadwood; the
public helpers merge adjacent pieces back into one run when they report an arrangement.

Hands are bitmasks (see ``cards``). ``max_cover`` is memoised because environments ask the
same hand's question many times (knock legality, masks, observations).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from rummy_envs.cards import GIN_VALUES, NUM_CARDS, NUM_RANKS, NUM_SUITS, from_mask

ROW_MASK = (1 << NUM_RANKS) - 1
MAX_RUN_IN_TABLE = 5


def _build_table() -> tuple[list[int], dict[int, int]]:
    melds: list[int] = []
    for r in range(NUM_RANKS):
        column = [1 << (s * NUM_RANKS + r) for s in range(NUM_SUITS)]
        for left_out in range(NUM_SUITS):
            melds.append(sum(column) - column[left_out])
        melds.append(sum(column))
    for s in range(NUM_SUITS):
        for length in range(3, MAX_RUN_IN_TABLE + 1):
            for start in range(NUM_RANKS - length + 1):
                melds.append(((1 << length) - 1) << (s * NUM_RANKS + start))
    return melds, {m: i for i, m in enumerate(melds)}


MELDS, MELD_INDEX = _build_table()
"""MELDS[i] is the bitmask of meld i; MELD_INDEX maps a meld bitmask back to i."""
NUM_MELDS = len(MELDS)
MELD_CARDS: tuple[tuple[int, ...], ...] = tuple(tuple(from_mask(m)) for m in MELDS)

_ROW_VALUE = [sum(GIN_VALUES[r] for r in range(NUM_RANKS) if row >> r & 1) for row in range(1 << NUM_RANKS)]


def gin_mask_value(mask: int) -> int:
    """Sum of gin deadwood values of the cards in a bitmask."""
    return (
        _ROW_VALUE[mask & ROW_MASK]
        + _ROW_VALUE[mask >> 13 & ROW_MASK]
        + _ROW_VALUE[mask >> 26 & ROW_MASK]
        + _ROW_VALUE[mask >> 39 & ROW_MASK]
    )


_MELD_VALUE = {m: gin_mask_value(m) for m in MELDS}


def _runs_in_row(row: int) -> tuple[int, ...]:
    runs = []
    for start in range(NUM_RANKS - 2):
        for length in range(3, MAX_RUN_IN_TABLE + 1):
            piece = ((1 << length) - 1) << start
            if start + length > NUM_RANKS or row & piece != piece:
                break
            runs.append(piece)
    return tuple(runs)


_RUNS_IN_ROW = [_runs_in_row(row) for row in range(1 << NUM_RANKS)]
_RUNS_BY_SUIT = [[tuple(p << (13 * s) for p in runs) for runs in _RUNS_IN_ROW] for s in range(NUM_SUITS)]
# _SETS[rank][suits_present] -> the set melds of that rank inside those suits (4-bit pattern).
_SETS = [
    [tuple(m for m in MELDS[r * 5 : r * 5 + 5] if all(pattern >> (c // 13) & 1 for c in from_mask(m))) for pattern in range(16)]
    for r in range(NUM_RANKS)
]


def melds_in(mask: int) -> list[int]:
    """Bitmasks of every table meld (sets, runs of 3-5) contained in the hand ``mask``."""
    a = mask & ROW_MASK
    b = mask >> 13 & ROW_MASK
    c = mask >> 26 & ROW_MASK
    d = mask >> 39 & ROW_MASK
    found: list[int] = []
    three = (a & b & (c | d)) | (c & d & (a | b))
    while three:
        low = three & -three
        r = low.bit_length() - 1
        pattern = (a >> r & 1) | (b >> r & 1) << 1 | (c >> r & 1) << 2 | (d >> r & 1) << 3
        found.extend(_SETS[r][pattern])
        three ^= low
    for s, row in ((0, a), (1, b), (2, c), (3, d)):
        if row:
            found.extend(_RUNS_BY_SUIT[s][row])
    return found


def _best_from(melds: list[int], start: int, avail: int) -> int:
    best = 0
    for i in range(start, len(melds)):
        m = melds[i]
        if m & avail == m:
            v = _MELD_VALUE[m] + _best_from(melds, i + 1, avail ^ m)
            if v > best:
                best = v
    return best


def max_cover_by_search(mask: int) -> int:
    """Largest total gin value of non-overlapping melds inside ``mask``: every set of
    disjoint melds of the hand, tried in table order (the readable rule that
    ``max_cover`` computes compiled)."""
    melds = melds_in(mask)
    if not melds:
        return 0
    return _best_from(melds, 0, mask)


_MELD_MASKS = np.array(MELDS, dtype=np.int64)
_MELD_VALUES = np.array([gin_mask_value(m) for m in MELDS], dtype=np.int64)


@njit(cache=True)
def _max_cover_compiled(mask):  # pragma: no cover - compiled
    """``max_cover_by_search`` as a numba loop: the same search over the table's melds
    inside ``mask``, depth first with an explicit stack (a hand holds at most 17 disjoint
    melds)."""
    inside = np.empty(len(_MELD_MASKS), dtype=np.int64)
    count = 0
    for i in range(len(_MELD_MASKS)):
        if _MELD_MASKS[i] & mask == _MELD_MASKS[i]:
            inside[count] = i
            count += 1
    best = 0
    following = np.empty(20, dtype=np.int64)  # per depth: the next meld to try
    avail = np.empty(20, dtype=np.int64)
    value = np.empty(20, dtype=np.int64)
    depth, following[0], avail[0], value[0] = 0, 0, mask, 0
    while depth >= 0:
        k = following[depth]
        if k >= count:
            depth -= 1
            continue
        following[depth] = k + 1
        meld = _MELD_MASKS[inside[k]]
        if meld & avail[depth] == meld:
            total = value[depth] + _MELD_VALUES[inside[k]]
            best = max(best, total)
            depth += 1
            following[depth], avail[depth], value[depth] = k + 1, avail[depth - 1] ^ meld, total
    return best


@lru_cache(maxsize=1 << 17)
def max_cover(mask: int) -> int:
    """Largest total gin value of non-overlapping melds inside ``mask`` (exact search,
    compiled: ``max_cover_by_search`` is the same search in plain Python)."""
    return int(_max_cover_compiled(mask))


def min_deadwood(mask: int) -> int:
    """Smallest gin deadwood of a hand of any size, as a bitmask."""
    return gin_mask_value(mask) - max_cover(mask)


def arrangements(mask: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every set of non-overlapping table melds inside ``mask`` (the empty one included).

    Each entry is ``(covered_mask, melds)``; several entries may cover the same cards when a
    long run splits in more than one way.
    """
    melds = melds_in(mask)
    out: list[tuple[int, tuple[int, ...]]] = []

    def walk(start: int, avail: int, covered: int, chosen: tuple[int, ...]) -> None:
        out.append((covered, chosen))
        for i in range(start, len(melds)):
            m = melds[i]
            if m & avail == m:
                walk(i + 1, avail ^ m, covered | m, chosen + (m,))

    walk(0, mask, 0, ())
    return out


def union(masks: list[int] | tuple[int, ...]) -> int:
    """The cards of several melds (or any bitmasks) together."""
    out = 0
    for m in masks:
        out |= m
    return out


def is_set(mask: int) -> bool:
    """True for 3 or 4 cards of one rank."""
    cards = from_mask(mask)
    return 3 <= len(cards) <= 4 and len({c % NUM_RANKS for c in cards}) == 1


def is_run(mask: int) -> bool:
    """True for 3+ consecutive cards of one suit (ace low)."""
    cards = from_mask(mask)
    if len(cards) < 3 or len({c // NUM_RANKS for c in cards}) != 1:
        return False
    low = mask >> (cards[0] // NUM_RANKS * NUM_RANKS) & ROW_MASK
    return low & (low + (low & -low)) == 0


def is_meld(mask: int) -> bool:
    """True when the cards form one set or one run of any length."""
    return is_set(mask) or is_run(mask)


def merge_runs(melds: list[int] | tuple[int, ...]) -> list[int]:
    """Join runs of one suit that touch end to start into one run; sets are kept."""
    runs = sorted(m for m in melds if not is_set(m))
    merged: list[int] = []
    for m in runs:
        if merged and (merged[-1] >> 1 | merged[-1] << 1) & m and not is_set(merged[-1] | m) and is_run(merged[-1] | m):
            merged[-1] |= m
        else:
            merged.append(m)
    return sorted([m for m in melds if is_set(m)] + merged, key=lambda m: from_mask(m))


def layoff_cards(meld: int) -> int:
    """Cards that may be laid off on ``meld`` now: the missing suit of a 3-set, or the card
    just below / above a run (ace low, no wrap)."""
    cards = from_mask(meld)
    r = cards[0] % NUM_RANKS
    if is_set(meld):
        if len(cards) == 4:
            return 0
        column = sum(1 << (s * NUM_RANKS + r) for s in range(NUM_SUITS))
        return column & ~meld
    low, high = cards[0], cards[-1]
    out = 0
    if low % NUM_RANKS > 0:
        out |= 1 << (low - 1)
    if high % NUM_RANKS < NUM_RANKS - 1:
        out |= 1 << (high + 1)
    return out


def layoff_closure(cards: int, melds: list[int] | tuple[int, ...]) -> tuple[int, list[tuple[int, int]]]:
    """All of ``cards`` that can be laid off on ``melds``, chaining runs.

    Returns ``(laid_mask, [(card, meld_slot), ...])`` in the order laid. Laying a card that fits
    both a set and a run on the run never loses: the run can then take more.
    """
    extents = list(melds)
    laid = 0
    order: list[tuple[int, int]] = []
    changed = True
    while changed:
        changed = False
        for slot in sorted(range(len(extents)), key=lambda i: is_set(melds[i])):
            fit = layoff_cards(extents[slot]) & cards & ~laid
            while fit:
                low = fit & -fit
                card = low.bit_length() - 1
                extents[slot] |= low
                laid |= low
                order.append((card, slot))
                changed = True
                fit = layoff_cards(extents[slot]) & cards & ~laid
    return laid, order


# ----------------------------------------------------------------------------------------
# Sequences whose ace is low or high (never both): positions 0..13, position 0 the low ace,
# 1..12 the ranks 2..K, position 13 the high ace. K-A-2 never forms: no interval wraps.

NUM_POSITIONS = 14


def position_ranks(lo: int, hi: int) -> int:
    """The 13-bit rank row (bit 0 = ace) of sequence positions lo..hi."""
    span = (1 << (hi + 1)) - (1 << lo)
    return (span & ROW_MASK) | span >> NUM_RANKS


SEQUENCE_INTERVALS: tuple[tuple[int, int, int], ...] = tuple(
    (lo, hi, position_ranks(lo, hi))
    for lo in range(NUM_POSITIONS) for hi in range(lo + 2, NUM_POSITIONS) if hi - lo < NUM_RANKS
)
"""Every ``(lo, hi, ranks)`` of a sequence of 3 to 13 positions."""


@lru_cache(maxsize=None)
def sequences_in_row(row: int) -> tuple[tuple[int, int, int], ...]:
    """The ``SEQUENCE_INTERVALS`` whose ranks all lie in the 13-bit rank row ``row``."""
    return tuple(entry for entry in SEQUENCE_INTERVALS if entry[2] & row == entry[2])


assert NUM_MELDS == 185 and max(MELDS) < 1 << NUM_CARDS
