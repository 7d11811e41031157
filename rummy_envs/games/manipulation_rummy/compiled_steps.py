"""One identity step of the table solver's compiled programme (``solver_compiled`` runs
the passes; ``table_solver`` has the map): the packed state's fields, the ways an
identity's cards split between sequences and groups (memoised in ``_SPLIT_MEMO``), the
choices at an identity, the wildcard shortfall of open sequences, the king's kept-ace
filters and the hash of a state. The pure solver's ``solver_steps`` and ``solver_moves``,
restated for numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_envs.cards import NUM_RANKS, NUM_SUITS

MOST_COPIES = 7
"""Largest count of one identity the packed state holds (3 bits); ``copy_limit`` refuses
problems that could put more on the table."""

# The packed state, as in ``solver_steps``: per suit 9 bits of open sequences (by length
# 1, 2, 3+) from bit 9 * suit; from bit 36 the kept aces (3 bits a suit: ``arrange``'s
# path; a commit keeps them in sets beside the state and uses bit 36 for ``_AS_IS_BIT``);
# 8 bits of the rank's group cards; a commit's wildcard balance (plus 32) and hand-card bit.
_KEPT_OFFSET = 36
_GROUP_OFFSET = 48
_BALANCE_OFFSET = 56
_BALANCE_ZERO = 32
_PLACED_BIT = np.int64(1) << np.int64(62)
_AS_IS_BIT = np.int64(1) << np.int64(36)
"""Set while every step so far put exactly the table's cards of its identity down (no
card placed, no joker freed or declared): a final state with it says the table as it is
now is legal (COMMIT's third condition), with no second solve."""
_PLACED, _WILDCARD, _FREED, _PLACED_AND_FREED, _SPARE_LEFT = 1, 2, 4, 8, 16
_ACE_HIGH = NUM_RANKS
_NUM_STEPS = (NUM_RANKS + 1) * NUM_SUITS
_WORD_BITS = 32
"""Kept-ace vectors per word of a set: 32 of an int64's bits, so that shifts never reach
its sign bit."""
_WORD_MASK = (1 << _WORD_BITS) - 1


@njit(cache=True, inline="always")
def _shortfall(done, short1, short2, supply_next, supply_after):  # pragma: no cover - compiled
    """Wildcards one suit's open sequences need at least once its position ``done`` is
    decided: the cards they need at the next two positions beyond the supply there."""
    if done >= _ACE_HIGH - 1:
        return 0
    need = max(0, short1 + short2 - supply_next)
    if done + 2 < _ACE_HIGH:
        need += max(0, short1 - supply_after)
    return need


@njit(cache=True, inline="always")
def _others_shortfall(state, suit, position, ahead):  # pragma: no cover - compiled
    """``_shortfall`` of every suit but ``suit`` in a state at ``suit``'s step of
    ``position`` (the suits before it have decided ``position``, those after it the one
    before); ``ahead`` is the supply by suit and position."""
    total = 0
    for other in range(NUM_SUITS):
        if other != suit:
            runs = state >> (9 * other) & 0x1FF
            done = position if other < suit else position - 1
            total += _shortfall(done, runs & 7, runs >> 3 & 7, ahead[other, done + 1], ahead[other, done + 2])
    return total


@njit(cache=True, inline="always")
def _grouped(grouped, largest, to_groups, suit):  # pragma: no cover - compiled
    """(whether they fit, group cards, largest suit share) of the rank's groups once
    ``to_groups`` more cards of ``suit`` join them: after the last suit the rank's cards
    must form groups of 3-4 of distinct suits, and the count starts again."""
    new_grouped, new_largest = grouped + to_groups, max(largest, to_groups)
    if suit < NUM_SUITS - 1:
        return True, new_grouped, new_largest
    fits = not new_grouped or max(new_largest, (new_grouped + 3) // 4) <= new_grouped // 3
    return fits, 0, 0


@njit(cache=True, inline="always")
def _split_move(position, suit, grouped, largest, new1, new2, new_long, to_groups, room_next, base, later,
                need_before, supply_next, supply_after, spent, budget):  # pragma: no cover - compiled
    """One split of an identity's cards, from a state with these group cards so far: (whether
    the wildcards can still pay for it, its long runs capped, group cards, largest suit
    share). ``room_next`` is the most cards of the next identity in the suit (unused at the
    king, where the aces a suit keeps bound the long runs), ``later`` the capped supply of
    the rank's later suits, ``need_before`` the other suits' shortfall and ``spent`` the
    balance after the choice."""
    fits, new_grouped, new_largest = _grouped(grouped, largest, to_groups, suit)
    if not fits:
        return False, new_long, new_grouped, new_largest
    room = room_next - new1 - new2 if position < _ACE_HIGH - 1 else base - 1 - new2
    new_long = min(new_long, max(room, 0))
    group_need = 0
    if new_grouped:
        group_need = max(0, 3 * max(1, new_largest) - new_grouped - later)
    need = need_before + _shortfall(position, new1, new2, supply_next, supply_after)
    return spent + need + group_need <= budget, new_long, new_grouped, new_largest


@njit(cache=True, inline="always")
def _hash(value):  # pragma: no cover - compiled
    """A well-mixed hash of a packed state (for the open-addressing table of a layer)."""
    value = (value ^ (value >> 29)) * np.int64(-4658895280553007687)
    return value ^ (value >> 32)


@njit(cache=True, inline="always")
def _shifted_word(high, low, part):  # pragma: no cover - compiled
    """One word of a set moved up by ``part`` bits (< 32): ``high`` is the word that
    lands there, ``low`` the one below it, whose top bits carry in."""
    value = (high << part) & _WORD_MASK
    if part:
        value |= low >> (_WORD_BITS - part)
    return value


@njit(cache=True)
def _splits(position, short1, short2, long, count, out, dominated):  # pragma: no cover - compiled
    """Every way to use ``count`` cards at ``position`` with these open sequences, not
    dominated by another with the same cards to groups and aces kept: rows of (started,
    length-2 runs, long runs, cards to groups, aces kept) written to ``out``; their number."""
    found = 0
    top_kept = count if position == 0 else 0
    for kept in range(top_kept + 1):
        usable = count - kept
        if usable < short1 + short2:
            continue
        for extended in range(min(long, usable - short1 - short2) + 1):
            rest = usable - short1 - short2 - extended
            top_started = rest if position < _ACE_HIGH - 1 else 0
            for started in range(top_started + 1):
                out[found, 0] = started
                out[found, 1] = short1
                out[found, 2] = short2 + extended
                out[found, 3] = rest - started
                out[found, 4] = kept
                found += 1
    for i in range(found):
        dominated[i] = False
        b1, b2, b3 = out[i, 0], out[i, 1], out[i, 2]
        for j in range(found):
            if j == i or out[j, 3] != out[i, 3] or out[j, 4] != out[i, 4]:
                continue
            a1, a2, a3 = out[j, 0], out[j, 1], out[j, 2]
            if a1 <= b1 and a2 <= b1 - a1 + b2 and a3 >= b1 + b2 + b3 - a1 - a2:
                dominated[i] = True
                break
    kept_rows = 0
    for i in range(found):
        if not dominated[i]:
            out[kept_rows] = out[i]
            kept_rows += 1
    return kept_rows


_SPLIT_KEYS = 3 * 8 * 8 * 8 * (MOST_COPIES + 1)
_MOST_SPLITS = 64
"""Rows of one split table: at most 36 (``count`` <= 7 cards share out as kept aces or
extended runs, and started runs)."""


@njit(cache=True, inline="always")
def _split_key(position, short1, short2, long, count):  # pragma: no cover - compiled
    """The memo key of ``_splits``: a position's splits depend only on whether it is the
    ace-low position, the king, or one between."""
    kind = 0 if position == 0 else (2 if position == _ACE_HIGH - 1 else 1)
    return (((kind * 8 + short1) * 8 + short2) * 8 + long) * (MOST_COPIES + 1) + count


@njit(cache=True)
def _fill_splits(sizes, rows, key, position, short1, short2, long, count):  # pragma: no cover - compiled
    """Compute one split table into the memo (once per key and process)."""
    scratch = np.empty((512, 5), dtype=np.int64)
    dominated = np.empty(512, dtype=np.bool_)
    found = _splits(position, short1, short2, long, count, scratch, dominated)
    for i in range(found):
        for k in range(5):
            rows[key, i, k] = scratch[i, k]
    sizes[key] = found


@njit(cache=True)
def _build_filter(filters, code, base, words):  # pragma: no cover - compiled
    """The kept-ace vectors a king step's filter code keeps (its suit's count within
    [low, high]), built into ``filters[code]`` on first use (kept while the base is the same)."""
    suit, low, high = code >> 7, code >> 4 & 7, code & 15
    for w in range(words):
        filters[code, w] = 0
    for vector in range(base ** NUM_SUITS):
        digit = vector // base ** suit % base
        if low <= digit <= high:
            filters[code, vector // _WORD_BITS] |= 1 << (vector % _WORD_BITS)
    filters[code, words] = 1


@njit(cache=True)
def _choices(on_table, in_hand, jokers, spare, limit, wildcards, out):  # pragma: no cover - compiled
    """(cards of the identity on the final table, balance change, hand natural placed,
    record bits) for every choice at one identity, duplicates merged; their number."""
    found = 0
    for placed in range(in_hand + 1):
        for freed in range(min(jokers, spare + placed) + 1):
            for declared in range(wildcards + 1):
                count = on_table - freed + placed + declared
                if count > limit:
                    break
                record = 0
                if placed:
                    record |= _PLACED
                if declared:
                    record |= _WILDCARD
                if freed:
                    record |= _FREED
                if placed and freed:
                    record |= _PLACED_AND_FREED
                if freed < spare + placed:
                    record |= _SPARE_LEFT
                puts = 1 if placed else 0
                delta = declared - freed
                merged = False
                for k in range(found):
                    if out[k, 0] == count and out[k, 1] == delta and out[k, 2] == puts:
                        out[k, 3] |= record
                        merged = True
                        break
                if not merged:
                    out[found, 0] = count
                    out[found, 1] = delta
                    out[found, 2] = puts
                    out[found, 3] = record
                    found += 1
    # cheapest first (insertion sort by balance change), so a state stops at the first
    # choice its wildcards cannot pay for
    for i in range(1, found):
        j = i
        while j > 0 and out[j - 1, 1] > out[j, 1]:
            for k in range(4):
                out[j - 1, k], out[j, k] = out[j, k], out[j - 1, k]
            j -= 1
    return found


@njit(cache=True)
def _commit_data(counts, hand_jokers, free_jokers, limit):  # pragma: no cover - compiled
    """What every step of a commit's solve reads (once per solve): the supply by suit and
    position (0 past the king), the wildcards in all, the most and the capped count of
    each identity, the base of the kept-ace vectors, and each step's wildcard budget (the
    balance a state may reach there and still pay for what can come)."""
    table, hand, jokers_at, spare = counts[0], counts[1], counts[2], counts[3]
    supply = table + hand
    ahead = np.zeros((NUM_SUITS, 16), dtype=np.int64)
    for card in range(NUM_RANKS * NUM_SUITS):
        ahead[card // NUM_RANKS, card % NUM_RANKS] = supply[card]
    freeable = np.minimum(jokers_at, spare + hand)
    wildcards = free_jokers + hand_jokers + freeable.sum()
    most = np.minimum(limit, supply + wildcards)
    capped = np.minimum(limit, supply)
    base = 0
    for suit in range(NUM_SUITS):
        base = max(base, most[suit * NUM_RANKS] + 1)
    budget = np.empty(_NUM_STEPS, dtype=np.int64)
    left = free_jokers + hand_jokers + _BALANCE_ZERO + freeable.sum()
    for step in range(_NUM_STEPS):
        position, suit = step // NUM_SUITS, step % NUM_SUITS
        if position < _ACE_HIGH:
            left -= freeable[suit * NUM_RANKS + position]
        budget[step] = left
    return ahead, wildcards, most, capped, base, budget


def new_split_memo() -> tuple[np.ndarray, np.ndarray]:
    """Empty split tables: per key the number of rows (-1: not computed yet) and the rows
    (int8, 3.9 MB)."""
    return np.full(_SPLIT_KEYS, -1, dtype=np.int64), np.zeros((_SPLIT_KEYS, _MOST_SPLITS, 5), dtype=np.int8)


_SPLIT_MEMO = new_split_memo()
