"""The table solver's programme state and one identity step (``table_solver`` has the map).

The programme walks the 14 rank positions A, 2, ..., K, A-high, one identity per step,
suit by suit within a position. Its state, packed into one int, is per suit how many open
sequences end at the previous position with length 1, 2 or 3+ (short ones must go on), how
many aces each suit keeps for the high end, and the current rank's group cards so far.
``_step_outcomes`` lists every way to use one identity's cards from a state: extend or end
sequences, start new ones, put cards in the rank's groups (at the ace-low position: keep
aces for the high end).
"""

from __future__ import annotations

from functools import lru_cache

from rummy_envs.cards import NUM_RANKS, NUM_SUITS

NUM_POSITIONS = NUM_RANKS + 1
"""Rank positions A (low), 2, ..., K, A (high)."""
ACE_HIGH = NUM_RANKS
NUM_STEPS = NUM_POSITIONS * NUM_SUITS
NO_LIMIT = 1 << 20

Runs = tuple[int, int, int]
"""Open sequences of one suit ending at the previous position, by length 1, 2 and 3+."""
EMPTY_RUNS: Runs = (0, 0, 0)


def _groups_fit(total: int, largest: int) -> bool:
    """Whether cards of one rank, ``largest`` at most of one suit, form groups of 3-4."""
    return total == 0 or max(largest, -(-total // 4)) <= total // 3


@lru_cache(maxsize=None)
def _splits(position: int, runs: Runs, count: int) -> tuple[tuple[Runs, int, int], ...]:
    """Every way to use ``count`` cards of one identity at ``position``.

    Returns (runs after, cards to groups, aces kept for the high end). Open runs of length
    1 or 2 must be extended; runs of 3+ may end; the rest start runs or join groups. At the
    ace-high position the kept aces can only finish runs, and every run ends there.
    """
    short1, short2, long = runs
    if position == ACE_HIGH:
        if short1 or not short2 <= count <= short2 + long:
            return ()
        return ((EMPTY_RUNS, 0, 0),)
    out = []
    kept_options = range(count + 1) if position == 0 else (0,)
    for kept in kept_options:
        usable = count - kept
        if usable < short1 + short2:
            continue
        for extended in range(min(long, usable - short1 - short2) + 1):
            rest = usable - short1 - short2 - extended
            # a run started at K can never reach length 3: K, A is as far as it goes
            for started in range(rest + 1 if position < NUM_RANKS - 1 else 1):
                out.append(((started, short1, short2 + extended), rest - started, kept))
    return tuple(out)


def _covers(runs: Runs, other: Runs) -> bool:
    """Whether open sequences ``runs`` can do whatever ``other`` can from here on: each of
    ``other``'s sequences is matched to one of ``runs`` at least as far along (length 1 <
    2 < 3+), and every unmatched one of ``runs`` is 3+ long, so it may simply end."""
    short1, short2, long = runs
    other1, other2, other_long = other
    return (
        short1 <= other1
        and short2 <= other1 - short1 + other2
        and long >= other1 + other2 + other_long - short1 - short2
    )


def _undominated(splits: tuple[tuple[Runs, int, int], ...]) -> list[tuple[Runs, int, int]]:
    """The splits of one choice minus those another split covers with the same cards to
    groups and aces kept: any completion of the dropped one is a completion of the other
    with the same moves at every identity, so neither legality nor any mask changes, and
    the programme carries fewer states (a sequence extended rather than a new one begun)."""
    unique = list(dict.fromkeys(splits))
    return [
        split
        for split in unique
        if not any(
            other is not split and other[1:] == split[1:] and _covers(other[0], split[0]) for other in unique
        )
    ]


def _identity(step: int) -> tuple[int, int, int]:
    """(position, suit, card identity) of a solver step."""
    return _IDENTITIES[step]


_IDENTITIES = tuple(
    (position, suit, suit * NUM_RANKS + position % NUM_RANKS)
    for position, suit in (divmod(step, NUM_SUITS) for step in range(NUM_POSITIONS * NUM_SUITS))
)


# A state of the programme packed into one int (hashing ints is what makes it fast):
# per suit 9 bits of open sequences (3 bits each for lengths 1, 2 and 3+), per suit 3 bits
# of aces kept for the high end, 8 bits for the current rank's group cards (5 bits of
# cards, 3 bits of the largest suit share), and for commits 6 bits of wildcard balance
# (stored plus 32) and one bit for a hand card placed.
_RUN_BITS = 9
_KEPT_OFFSET = _RUN_BITS * NUM_SUITS
_GROUP_OFFSET = _KEPT_OFFSET + 3 * NUM_SUITS
_BALANCE_OFFSET = _GROUP_OFFSET + 8
_BALANCE_ZERO = 32
_PLACED_BIT = 1 << (_BALANCE_OFFSET + 6)


def _pack_runs(runs: Runs) -> int:
    return runs[0] | runs[1] << 3 | runs[2] << 6


def _unpack_runs(field: int) -> Runs:
    return field & 7, field >> 3 & 7, field >> 6 & 7


def _step_fields(step: int) -> tuple[int, int, int]:
    """(bit offset of the step's suit runs, bit offset of its kept aces, mask of the bits a
    step may change)."""
    suit = step % NUM_SUITS
    run_shift, kept_shift = _RUN_BITS * suit, _KEPT_OFFSET + 3 * suit
    return run_shift, kept_shift, (0x1FF << run_shift) | (7 << kept_shift) | (0xFF << _GROUP_OFFSET)


_FIELDS = tuple(_step_fields(step) for step in range(NUM_STEPS))


@lru_cache(maxsize=None)
def _step_outcomes(step: int, runs: int, kept: int, group: int, count: int) -> tuple[tuple[int, int], ...]:
    """The changed bits after using ``count`` cards at ``step`` from the given suit runs,
    kept aces and group field, each with the cards that went to groups."""
    position, suit, _ = _identity(step)
    run_shift, kept_shift, _ = _FIELDS[step]
    if position == ACE_HIGH:
        count = kept
    grouped, largest = group & 31, group >> 5
    out = []
    for new_runs, to_groups, new_kept in _undominated(_splits(position, _unpack_runs(runs), count)):
        new_grouped, new_largest = grouped + to_groups, max(largest, to_groups)
        if suit == NUM_SUITS - 1:
            if not _groups_fit(new_grouped, new_largest):
                continue
            new_grouped = new_largest = 0
        if position != 0:
            new_kept = kept
        bits = _pack_runs(new_runs) << run_shift | new_kept << kept_shift | (new_grouped | new_largest << 5) << _GROUP_OFFSET
        out.append((bits, to_groups))
    return tuple(out)


def _advance(state: int, step: int, count: int) -> list[tuple[int, int]]:
    """The states after using ``count`` cards at ``step``, each with its cards to groups."""
    run_shift, kept_shift, changed = _FIELDS[step]
    outcomes = _step_outcomes(
        step, state >> run_shift & 0x1FF, state >> kept_shift & 7, state >> _GROUP_OFFSET & 0xFF, count
    )
    rest = state & ~changed
    return [(rest | bits, to_groups) for bits, to_groups in outcomes]


INITIAL = 0
"""No open sequences, no aces kept, no group cards, balance 0 (before the offset)."""



def _filter_code(suit: int, low: int, high: int) -> int:
    """The transform keeping the vectors whose ``suit`` count lies in [low, high] (low < 8,
    high < 16: the run counts of the state are 3 bits each)."""
    return -1 - (suit << 7 | low << 4 | high)
