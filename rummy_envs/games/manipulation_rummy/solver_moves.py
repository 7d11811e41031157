"""The table solver's moves at one identity step of a commit (``table_solver`` has the map).

At each identity a commit chooses how many hand naturals go down, how many table jokers of
it are freed and how many wildcards (jokers placed or freed) take it (``_choices``); each
choice leads through ``solver_steps._step_outcomes`` to the next states, scored by the
wildcards they need at least (``_scored_outcomes_cached``) so that states the wildcards
cannot pay for are cut. ``_StepMemo`` keeps a step's moves per changing bits, shared by
every problem with the same choices and supply at that step.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rummy_envs.games.manipulation_rummy.solver_steps import (
    _BALANCE_OFFSET,
    _FIELDS,
    _GROUP_OFFSET,
    _KEPT_OFFSET,
    _PLACED_BIT,
    ACE_HIGH,
    _filter_code,
    _identity,
    _pack_runs,
    _step_outcomes,
    _unpack_runs,
)

_PLACED, _WILDCARD, _FREED, _PLACED_AND_FREED, _SPARE_LEFT = 1, 2, 4, 8, 16
"""Record bits of one identity step: a hand natural placed, a wildcard joker declared as
it, a table joker of it freed, both a natural placed and a joker freed, a natural of it
on the final table still unused for freeing (a joker declared as it now could be freed
again later in the turn)."""
_JOKER_FITS = _WILDCARD | _SPARE_LEFT

# A commit state packs, besides the table core, the wildcards its open sequences still
# need at least (a function of the rest of the state, so it splits no states) in the
# 12 bits that ``arrange`` uses for kept aces, which commits keep in ``_AceSets`` instead.
_SHORT_OFFSET = _KEPT_OFFSET
_SHORT_BITS = 0xFFF << _SHORT_OFFSET
_COMMIT_CHANGED = tuple(changed & ~_SHORT_BITS for _, _, changed in _FIELDS)
"""Per step, the bits of a commit state that the step reads and rewrites."""


Context = tuple[int, tuple[int, ...], int]
"""What a step's moves depend on beyond the state and the choices (``_Commit``): the most
cards of the next position, the suit's supply here and at the next two, and the most
naturals the later suits can add to the rank's groups."""
_NO_CONTEXT: Context = (0, (0, 0, 0), 0)
"""The context of an ace-high step, which has no moves to look up."""
Choices = tuple[tuple[int, int, bool, int], ...]
Moves = tuple[tuple[int, int, int, int, int], ...]


class _StepMemo:
    """One step's moves by changing bits (and as arrays) for one (choices, context,
    kept-ace base): shared, through ``_step_memo``, by every problem with those at that
    step (most of a game's positions)."""

    def __init__(self, step: int, choices: Choices, context: Context, base: int) -> None:
        self.args = (step, choices, context, base)
        self.moves: dict[int, Moves] = {}
        self.tables: dict[int, np.ndarray] = {}

    def get(self, key: int) -> Moves:
        found = self.moves.get(key)
        if found is None:
            step, choices, context, base = self.args
            found = self.moves[key] = _moves(step, key, choices, context, base)
        return found

    def table(self, key: int) -> np.ndarray:
        """``get`` as an int64 array, one row per move (for array layers)."""
        found = self.tables.get(key)
        if found is None:
            found = self.tables[key] = np.array(self.get(key), dtype=np.int64).reshape(-1, 5)
        return found


@lru_cache(maxsize=1 << 10)
def _step_memo(step: int, choices: Choices, context: Context, base: int) -> _StepMemo:
    return _StepMemo(step, choices, context, base)


def _moves(step: int, key: int, choices: Choices, context: Context, base: int) -> Moves:
    """Every move at ``step`` from commit states whose changing bits are ``key``, cheapest
    first: (new bits with the hand-card bit, the wildcards the move needs in all (balance
    change, shortfall change and the rank's groups' need), the change of the balance and
    the shortfall as packed bits, record, kept-ace transform)."""
    out = []
    for count, delta, puts, record in choices:
        for bits, short_change, group_need, transform in _scored_outcomes_cached(step, key, count, context, base):
            out.append(
                (
                    bits | (_PLACED_BIT if puts else 0),
                    delta + short_change + group_need,
                    (delta << _BALANCE_OFFSET) + (short_change << _SHORT_OFFSET),
                    record,
                    transform,
                )
            )
    return tuple(sorted(out, key=lambda move: move[1]))


_COST = 1
"""Column of a move's need in ``_moves`` and ``_StepMemo.table``."""


@lru_cache(maxsize=1 << 15)
def _scored_outcomes_cached(step: int, key: int, count: int, context: Context, base: int) -> tuple[tuple[int, int, int, int], ...]:
    """``_step_outcomes`` from the changing bits ``key`` as (new bits, change of the
    wildcards still needed, wildcards the rank's groups need, kept-ace transform).

    Sequences of 3+ beyond what the next position can possibly extend (``most`` cards of
    each identity at most) must end there anyway, so they are dropped from the state:
    states that differ only in them have the same future and merge.
    """
    position, suit, _ = _identity(step)
    most_next, ahead, later = context
    run_shift, kept_shift, _ = _FIELDS[step]
    runs, group = key >> run_shift & 0x1FF, key >> _GROUP_OFFSET & 0xFF
    before = _suit_shortfall(position - 1, runs, position, ahead)
    out = []
    for bits, _ in _step_outcomes(step, runs, 0, group, count):
        new_runs = bits >> run_shift & 0x1FF
        short1, short2, long = _unpack_runs(new_runs)
        if position < ACE_HIGH - 1:
            room = most_next - short1 - short2
        elif position == ACE_HIGH - 1:
            room = most_next - short2  # at the king: the most aces a suit can keep for the high end
        else:
            room = 0
        if long > max(room, 0):
            long = max(room, 0)
            new_runs = _pack_runs((short1, short2, long))
            bits = bits & ~(0x1FF << run_shift) | new_runs << run_shift
        transform = 0
        if position == 0:
            transform = (bits >> kept_shift & 7) * base**suit
            bits &= ~(7 << kept_shift)
        elif position == ACE_HIGH - 1:
            transform = _filter_code(suit, short2, short2 + long)
        new_group = bits >> _GROUP_OFFSET & 0xFF
        group_need = max(0, 3 * max(1, new_group >> 5) - (new_group & 31) - later) if new_group else 0
        out.append((bits, _suit_shortfall(position, new_runs, position, ahead) - before, group_need, transform))
    return tuple(out)


def _suit_shortfall(done: int, runs: int, position: int, ahead: tuple[int, ...]) -> int:
    """A lower bound on the wildcards one suit still needs once its position ``done`` is
    decided: cards its open sequences need where the table and the hand hold too few.
    ``ahead`` is the suit's supply at ``position`` and the two positions after it (the
    aces kept for the high end are checked by the king step's kept-ace filter)."""
    short1, short2, _ = _unpack_runs(runs)
    if done >= ACE_HIGH - 1:
        return 0
    need = ((done + 1, short1 + short2), (done + 2, short1))
    return sum(max(0, n - ahead[at - position]) for at, n in need if at < ACE_HIGH)


_NO_CHOICE: Choices = ((0, 0, False, 0),)
"""The one choice at an ace-high step (its aces were counted at the ace-low one)."""


@lru_cache(maxsize=1 << 14)
def _choices(on_table: int, in_hand: int, jokers: int, spare: int, limit: int, wildcards: int) -> Choices:
    """(cards of the identity on the final table, wildcard balance change, hand natural
    placed, record bits) for every choice at one identity step, duplicates merged."""
    merged: dict[tuple[int, int, bool], int] = {}
    for placed in range(in_hand + 1):
        for freed in range(min(jokers, spare + placed) + 1):
            for declared in range(wildcards + 1):
                count = on_table - freed + placed + declared
                if count > limit:
                    break
                record = (
                    (_PLACED if placed else 0)
                    | (_WILDCARD if declared else 0)
                    | (_FREED if freed else 0)
                    | (_PLACED_AND_FREED if placed and freed else 0)
                    | (_SPARE_LEFT if freed < spare + placed else 0)
                )
                key = (count, declared - freed, placed > 0)
                merged[key] = merged.get(key, 0) | record
    return tuple((count, delta, puts, record) for (count, delta, puts), record in merged.items())
