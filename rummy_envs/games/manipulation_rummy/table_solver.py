"""Exact table solver for Manipulation Rummy: legality, commit masks and arrangements.

In Manipulation Rummy the table may be rearranged freely, so whether it is legal depends
only on the multiset of card identities on it (natural cards plus each joker's declared
identity): ``counts[c]`` cards of identity ``c`` (``rank + 13 * suit``). A table is legal
when that multiset splits into groups (3 or 4 cards of one rank, distinct suits) and
sequences (3+ consecutive cards of one suit, the ace low or high, no wrap).

The solver is a dynamic programme over the 14 rank positions A, 2, ..., K, A-high (after
van Rijn, Takes and Vis, "The complexity of Rummikub problems", 2016), one identity per
step, suit by suit. Its state is, per suit, how many open sequences end at the previous
rank with length 1, 2 or 3+ (short ones must go on), how many aces each suit keeps for the
high end, the group cards of the current rank so far, and for commits the jokers used as
wildcards and whether a hand card went down. Groups need no more state: cards of one rank
with ``g_s`` cards of suit ``s`` form ``k`` groups of distinct suits and sizes 3-4 exactly
when ``max g_s <= k`` and ``3k <= sum g_s <= 4k`` (deal them out suit by suit in turn).

``commit_options`` runs the programme forward from the current table and backward from
the end condition once, so every mask entry (which hand card, joker identity or joker
replacement keeps a legal COMMIT reachable) comes from one pass instead of one solve per
action. Small layers of states go through dicts one state at a time; large ones (dense
two-deck tables with jokers) as numpy arrays, a few array operations per layer.
``is_legal`` is the same programme's forward pass with nothing to place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS

NUM_POSITIONS = NUM_RANKS + 1
"""Rank positions A (low), 2, ..., K, A (high)."""
ACE_HIGH = NUM_RANKS
NUM_STEPS = NUM_POSITIONS * NUM_SUITS
NO_LIMIT = 1 << 20

_PLACED, _WILDCARD, _FREED, _PLACED_AND_FREED, _SPARE_LEFT = 1, 2, 4, 8, 16
"""Record bits of one identity step: a hand natural placed, a wildcard joker declared as
it, a table joker of it freed, both a natural placed and a joker freed, a natural of it
on the final table still unused for freeing (a joker declared as it now could be freed
again later in the turn)."""
_JOKER_FITS = _WILDCARD | _SPARE_LEFT

Runs = tuple[int, int, int]
"""Open sequences of one suit ending at the previous position, by length 1, 2 and 3+."""
EMPTY_RUNS: Runs = (0, 0, 0)


@dataclass(frozen=True)
class CommitProblem:
    """A meld commit in progress: what is on the table and what may still go down.

    All tuples hold 52 counts indexed by card identity. ``table`` already includes every
    card placed so far this turn; ``jokers_at`` counts the jokers on the table declared as
    each identity (part of ``table``); ``spare_naturals`` counts the natural cards of each
    identity on the table not yet used to free a joker this turn.

    The moves, and the problem each leads to (the masks are exact for these effects):
    place natural c: hand[c]-1, table[c]+1, spare_naturals[c]+1; hand joker as c:
    hand_jokers-1, table[c]+1, jokers_at[c]+1; freed joker as c: free_jokers-1, table[c]+1,
    jokers_at[c]+1; replace a joker at c by the hand's c: hand[c]-1, jokers_at[c]-1,
    free_jokers+1; replace it by a natural c on the table: table[c]-1, jokers_at[c]-1,
    spare_naturals[c]-1, free_jokers+1. Every move from the hand clears need_hand_card.
    """

    table: tuple[int, ...]
    jokers_at: tuple[int, ...]
    spare_naturals: tuple[int, ...]
    hand: tuple[int, ...]
    hand_jokers: int
    free_jokers: int
    need_hand_card: bool
    max_copies: int | None


@dataclass(frozen=True)
class CommitOptions:
    """What may happen next in a commit; every mask is a bitmask over card identities."""

    feasible: bool
    """Some legal COMMIT can still follow."""
    commit: bool
    """COMMIT is legal now: the table is legal, no freed joker waits, a hand card went down."""
    place: int
    """Placing the hand's natural card of identity c keeps a legal COMMIT reachable."""
    joker_as: int
    """A hand joker may be placed declared as c."""
    freed_as: int
    """A freed joker may be placed declared as c."""
    replace_from_hand: int
    """A table joker declared as c may be replaced by the hand's natural c."""
    replace_from_table: int
    """A table joker declared as c may be replaced by a natural c already on the table."""


NOTHING = CommitOptions(False, False, 0, 0, 0, 0, 0)
MOVES = ("place", "joker_as", "freed_as", "replace_from_hand", "replace_from_table")
"""The placement kinds, named as the ``CommitOptions`` masks that offer them."""


def after(problem: CommitProblem, move: str, card: int) -> CommitProblem:
    """The commit after one placement (``move`` one of ``MOVES``, at identity ``card``),
    for agents and users who plan a commit ahead. Raises ValueError when the problem has
    no such card or joker to move; it does not check that a legal COMMIT stays reachable
    (``commit_options`` says that)."""

    def bump(values: tuple[int, ...], amount: int) -> tuple[int, ...]:
        if values[card] + amount < 0:
            raise ValueError(f"{move} {card}: nothing there to move")
        return values[:card] + (values[card] + amount,) + values[card + 1 :]

    p = problem
    if move == "place":
        return replace(p, hand=bump(p.hand, -1), table=bump(p.table, 1), spare_naturals=bump(p.spare_naturals, 1), need_hand_card=False)
    if move == "joker_as":
        if not p.hand_jokers:
            raise ValueError("joker_as: no joker in the hand")
        return replace(p, hand_jokers=p.hand_jokers - 1, table=bump(p.table, 1), jokers_at=bump(p.jokers_at, 1), need_hand_card=False)
    if move == "freed_as":
        if not p.free_jokers:
            raise ValueError("freed_as: no freed joker waiting")
        return replace(p, free_jokers=p.free_jokers - 1, table=bump(p.table, 1), jokers_at=bump(p.jokers_at, 1))
    if move == "replace_from_hand":
        return replace(p, hand=bump(p.hand, -1), jokers_at=bump(p.jokers_at, -1), free_jokers=p.free_jokers + 1, need_hand_card=False)
    if move == "replace_from_table":
        return replace(
            p, table=bump(p.table, -1), jokers_at=bump(p.jokers_at, -1), spare_naturals=bump(p.spare_naturals, -1),
            free_jokers=p.free_jokers + 1,
        )
    raise ValueError(f"unknown move {move!r}; moves: {', '.join(MOVES)}")


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


def _checked_counts(counts: Sequence[int], max_copies: int | None) -> tuple[int, ...] | None:
    """The counts as a tuple, or None when some identity exceeds the copy limit."""
    if len(counts) != NUM_CARDS:
        raise ValueError(f"counts must have {NUM_CARDS} entries, got {len(counts)}")
    if any(n < 0 for n in counts):
        raise ValueError(f"counts must not be negative: {list(counts)}")
    limit = NO_LIMIT if max_copies is None else max_copies
    if any(n > limit for n in counts):
        return None
    return tuple(counts)


def is_legal(counts: Sequence[int], max_copies: int | None = None) -> bool:
    """Whether ``counts[c]`` cards of each identity c split into legal groups and sequences."""
    checked = _checked_counts(counts, max_copies)
    return checked is not None and _legal(checked)


@lru_cache(maxsize=1 << 16)
def _legal(counts: tuple[int, ...]) -> bool:
    """The commit programme's forward pass with nothing to place: a hand card counted as
    down and no wildcards, so every identity has one choice (its count) and any state that
    survives the last step is a legal table."""
    nothing = (0,) * NUM_CARDS
    return _Commit(CommitProblem(counts, nothing, nothing, nothing, 0, 0, False, None)).forward() is not None


def arrange(counts: Sequence[int], max_copies: int | None = None) -> list[tuple[int, ...]] | None:
    """One legal arrangement of the table, or None when there is none.

    Melds are tuples of identities: groups in suit order, sequences in rank order with an
    ace-high sequence ending in its ace. Sequences of one suit that meet are joined into
    one (A-K, not A-3 and 4-K).
    """
    checked = _checked_counts(counts, max_copies)
    if checked is None or not _legal(checked):
        return None
    parents: list[dict[int, tuple[int, int]]] = []
    states: dict[int, None] = {INITIAL: None}
    for step in range(NUM_STEPS):
        count = checked[_identity(step)[2]]
        layer: dict[int, tuple[int, int]] = {}
        for state in states:
            for nxt, to_groups in _advance(state, step, count):
                layer.setdefault(nxt, (state, to_groups))
        parents.append(layer)
        states = dict.fromkeys(layer)
    path: list[tuple[int, int]] = []
    state = next(iter(states))
    for step in reversed(range(NUM_STEPS)):
        previous, to_groups = parents[step][state]
        path.append((state, to_groups))
        state = previous
    path.reverse()
    return _build_melds(path)


def _build_melds(path: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Replay a solution path with concrete sequences and deal out each rank's groups."""
    groups: list[tuple[int, ...]] = []
    runs_done: list[list[int]] = []
    open_runs: list[list[list[int]]] = [[] for _ in range(NUM_SUITS)]
    grouped: list[int] = []
    previous = INITIAL
    for step, (state, to_groups) in enumerate(path):
        position, suit, card = _identity(step)
        run_shift, kept_shift, _ = _FIELDS[step]
        current = open_runs[suit]
        short = [run for run in current if len(run) < 3]
        long = [run for run in current if len(run) >= 3]
        if position == ACE_HIGH:
            kept = state >> kept_shift & 7
            for run in short + long[: kept - len(short)]:
                run.append(card)
            runs_done.extend(current)
            open_runs[suit] = []
            continue
        started, _, long_after = _unpack_runs(state >> run_shift & 0x1FF)
        carried = long_after - _unpack_runs(previous >> run_shift & 0x1FF)[1]
        for run in short + long[:carried]:
            run.append(card)
        runs_done.extend(long[carried:])
        open_runs[suit] = short + long[:carried] + [[card] for _ in range(started)]
        grouped.extend([card] * to_groups)
        if suit == NUM_SUITS - 1 and grouped:
            groups.extend(_deal_groups(grouped))
            grouped = []
        previous = state
    return groups + _join_sequences([part for run in runs_done for part in _one_ace_each(run)])


def _one_ace_each(run: list[int]) -> list[list[int]]:
    """A sequence from the low ace to the high ace (a path may build one: the kept ace
    finishes whichever sequence reaches the king) split into A-7 and 8-A."""
    if len(run) == NUM_POSITIONS and _run_start(run) == 0 and _run_end(run) == ACE_HIGH:
        return [run[:7], run[7:]]
    return [run]


def _join_sequences(runs: list[list[int]]) -> list[tuple[int, ...]]:
    """Join sequences of one suit where one ends just below where the next starts
    (never into a 14-card sequence with the ace at both ends)."""
    joined: list[list[int]] = []
    for run in sorted(runs, key=_run_start):
        follows = (
            j
            for j in joined
            if j[-1] // NUM_RANKS == run[0] // NUM_RANKS
            and _run_end(j) + 1 == _run_start(run)
            and not (_run_start(j) == 0 and _run_end(run) == ACE_HIGH)
        )
        target = next(follows, None)
        if target is None:
            joined.append(list(run))
        else:
            target.extend(run)
    return [tuple(run) for run in joined]


def _run_start(run: Sequence[int]) -> int:
    """Position of a sequence's first card (an ace starts it low)."""
    return run[0] % NUM_RANKS


def _run_end(run: Sequence[int]) -> int:
    """Position of a sequence's last card (an ace after a king ends it high)."""
    return ACE_HIGH if len(run) > 1 and run[-1] % NUM_RANKS == 0 else run[-1] % NUM_RANKS


def _deal_groups(cards: list[int]) -> list[tuple[int, ...]]:
    """Split one rank's group cards (sorted by suit) into groups of distinct suits."""
    largest = max(cards.count(card) for card in cards)
    num_groups = max(largest, -(-len(cards) // 4))
    return [tuple(cards[i::num_groups]) for i in range(num_groups)]


def commit_options(problem: CommitProblem) -> CommitOptions:
    """Every next move of a commit that keeps a legal COMMIT reachable, in one pass.

    Forward: the reachable states after each identity step, where a state is the table
    core, the wildcard balance (jokers declared as wildcards minus table jokers freed so
    far) and whether a hand card went down; each edge records what it did at its identity
    (natural placed, wildcard declared, joker freed). Backward: the states from which the
    end is reachable, where the end needs every freed joker placed (balance at least
    ``free_jokers``), no more hand jokers used than held, and a hand card down. A mask
    entry is set when an edge doing that move leads into such a state; the hand-joker
    entries use a second end condition that needs at least one hand joker used. A joker
    declared as c now fits when some solution puts a wildcard at c, or leaves a natural c
    free to replace it later in the turn (the joker is then a wildcard again).
    """
    _check_problem(problem)
    return _commit_options(problem)


def _check_problem(problem: CommitProblem) -> None:
    for name in ("table", "jokers_at", "spare_naturals", "hand"):
        values = getattr(problem, name)
        if len(values) != NUM_CARDS or any(v < 0 for v in values):
            raise ValueError(f"CommitProblem.{name} must hold {NUM_CARDS} counts >= 0, got {values!r}")
    if any(j > t for j, t in zip(problem.jokers_at, problem.table)):
        raise ValueError("CommitProblem.jokers_at must not exceed table at any identity")
    if problem.hand_jokers < 0 or problem.free_jokers < 0:
        raise ValueError("CommitProblem.hand_jokers and free_jokers must be >= 0")


_VECTOR_FROM = 150
"""Layers of more states than this run as numpy arrays (a few dozen array operations per
layer); smaller ones stay in dicts, where numpy's fixed cost per call would outweigh the
work."""

# A commit state packs, besides the table core, the wildcards its open sequences still
# need at least (a function of the rest of the state, so it splits no states) in the
# 12 bits that ``arrange`` uses for kept aces, which commits keep in ``_AceSets`` instead.
_SHORT_OFFSET = _KEPT_OFFSET
_SHORT_BITS = 0xFFF << _SHORT_OFFSET
_COMMIT_CHANGED = tuple(changed & ~_SHORT_BITS for _, _, changed in _FIELDS)
"""Per step, the bits of a commit state that the step reads and rewrites."""


@lru_cache(maxsize=4096)
def _commit_options(problem: CommitProblem) -> CommitOptions:
    return _Commit(problem).solve()


class _Layer(NamedTuple):
    """The states before one step, as arrays: packed states, and their kept-ace sets
    (``_AceSets.words``: one row per state)."""

    states: np.ndarray
    kepts: np.ndarray


class _Edges(NamedTuple):
    """One step's transitions between array layers, by index into the layers' arrays
    (ordered by source), with what the move did at the identity and its kept-ace transform."""

    src: np.ndarray
    dst: np.ndarray
    record: np.ndarray
    transform: np.ndarray


DictLayer = dict[int, int]
"""state -> kept-ace set."""
DictEdges = list[tuple[int, int, int, int, int]]
"""(state, its kept-ace set, next state, kept-ace transform, record bits) per edge."""


class _Commit:
    """One ``commit_options`` solve: the per-step data, the forward pass (dicts while the
    layers are small, numpy arrays from the first large one on) and the backward pass.

    Aces kept for the high end are not in the state: each state carries the set of kept-ace
    vectors it is reachable with (a bitset, ``_AceSets``), since only the ace-high steps
    read them. States that differ only in kept aces merge, and one transition serves all.
    """

    def __init__(self, problem: CommitProblem) -> None:
        self.problem = problem
        free, held = problem.free_jokers, problem.hand_jokers
        limit = NO_LIMIT if problem.max_copies is None else problem.max_copies
        table, hand, jokers_at, spare = problem.table, problem.hand, problem.jokers_at, problem.spare_naturals
        freeable = [min(j, n + h) for j, n, h in zip(jokers_at, spare, hand)]
        wildcards = free + held + sum(freeable)
        supply = [t + h for t, h in zip(table, hand)]
        most = [min(limit, n + wildcards) for n in supply]
        self.aces = _AceSets(max(most[suit * NUM_RANKS] for suit in range(NUM_SUITS)))
        base = self.aces.base
        capped = [min(limit, n) for n in supply]
        self.memos: list[_StepMemo] = []
        self.budget: list[int] = []
        # a move is affordable when its need fits in the budget less the state's balance and
        # shortfall (both packed in the state)
        budget = free + held + _BALANCE_ZERO + sum(freeable)
        for step, (position, suit, card) in enumerate(_IDENTITIES):
            if position < ACE_HIGH:
                budget -= freeable[card]
                choices = _choices(table[card], hand[card], jokers_at[card], spare[card], limit, wildcards)
                # the most cards the next position can have (at the king: the most aces a
                # suit can keep), the suit's supply here and at the two next positions, and
                # the most naturals the later suits can add to the rank's groups
                context = (
                    most[card + 1] if position < ACE_HIGH - 1 else base - 1,
                    (
                        supply[card],
                        supply[card + 1] if position < ACE_HIGH - 1 else 0,
                        supply[card + 2] if position < ACE_HIGH - 2 else 0,
                    ),
                    sum(capped[card + NUM_RANKS :: NUM_RANKS]),
                )
            else:
                choices, context = _NO_CHOICE, _NO_CONTEXT
            self.budget.append(budget)
            self.memos.append(_step_memo(step, choices, context, base))
        self.start = INITIAL | _BALANCE_ZERO << _BALANCE_OFFSET | (0 if problem.need_hand_card else _PLACED_BIT)
        # mask entries found: place, a wildcard fits, a joker freed, replace from the hand,
        # a hand joker fits
        self.found = [0] * 5

    def forward(self) -> tuple[list[tuple[DictLayer | _Layer, DictEdges | _Edges]], DictLayer | _Layer] | None:
        """Each step's layer and edges, and the final layer; None when no state survives."""
        layer: DictLayer | _Layer = {self.start: 1}
        passes: list[tuple[DictLayer | _Layer, DictEdges | _Edges]] = []
        for step in range(NUM_STEPS):
            # array layers start after the ace-low steps, so their kept-ace transforms are
            # only filters (at the king), never shifts
            if isinstance(layer, dict) and step >= NUM_SUITS and len(layer) > _VECTOR_FROM:
                layer = _Layer(np.fromiter(layer, dtype=np.int64, count=len(layer)), self.aces.words(list(layer.values())))
            step_forward = self.forward_dict if isinstance(layer, dict) else self.forward_arrays
            following, edges = step_forward(step, layer)
            if not len(following.states if isinstance(following, _Layer) else following):
                return None
            passes.append((layer, edges))
            layer = following
        return passes, layer

    def solve(self) -> CommitOptions:
        problem = self.problem
        forward = self.forward()
        if forward is None:
            return NOTHING
        passes, layer = forward
        good, good_with_joker = self.ends(layer)
        for step in reversed(range(NUM_STEPS)):
            before, edges = passes[step]
            if isinstance(before, dict):
                if isinstance(good, np.ndarray):
                    good, good_with_joker = (self.aces.as_dict(layer.states, sets) for sets in (good, good_with_joker))
                good, good_with_joker = self.backward_dict(step, edges, good, good_with_joker)
            else:
                good, good_with_joker = self.backward_arrays(step, before, edges, good, good_with_joker)
            layer = before
        if self.start not in good:
            return NOTHING
        place, wildcard, freed, replace_from_hand, joker_as = self.found
        free = problem.free_jokers
        spare = sum(1 << c for c in range(NUM_CARDS) if problem.spare_naturals[c])
        return CommitOptions(
            feasible=True,
            commit=not free and not problem.need_hand_card and is_legal(problem.table, problem.max_copies),
            place=place,
            joker_as=joker_as if problem.hand_jokers else 0,
            freed_as=wildcard if free else 0,
            replace_from_hand=replace_from_hand,
            replace_from_table=freed & spare,
        )

    def forward_dict(self, step: int, states: DictLayer) -> tuple[DictLayer, DictEdges]:
        """The states after ``step`` and the edges into them, one state at a time."""
        position = _identity(step)[0]
        changed = _COMMIT_CHANGED[step]
        edges: DictEdges = []
        following: DictLayer = {}
        if position == ACE_HIGH:  # the kept aces end their suit's sequences: nothing to choose
            for state, kept in states.items():
                nxt = state & ~changed
                edges.append((state, kept, nxt, 0, 0))
                following[nxt] = following.get(nxt, 0) | kept
            return following, edges
        budget, aces, memo = self.budget[step], self.aces, self.memos[step]
        known, unchanged = memo.moves, ~changed
        for state, kept in states.items():
            moves = known.get(state & changed) or memo.get(state & changed)
            room = budget - (state >> _BALANCE_OFFSET & 63) - (state >> _SHORT_OFFSET & 0xFFF)
            rest = state & unchanged
            for bits, cost, shift, record, transform in moves:
                if cost > room:
                    break  # moves come cheapest first
                reach = aces.forward(kept, transform) if transform else kept
                if reach:
                    nxt = (rest + shift) | bits
                    edges.append((state, kept, nxt, transform, record))
                    following[nxt] = following.get(nxt, 0) | reach
        return following, edges

    def forward_arrays(self, step: int, layer: _Layer) -> tuple[_Layer, _Edges]:
        """The states after ``step`` and the edges into them, all at once: every state is
        paired with the moves of its changing bits, those the wildcards cannot pay for are
        dropped, and equal next states merge (their kept-ace sets OR-ed)."""
        position = _identity(step)[0]
        changed = _COMMIT_CHANGED[step]
        states, kepts = layer
        if position == ACE_HIGH:
            nxt = states & ~changed
            src = np.arange(len(states))
            record = transform = np.zeros(len(states), dtype=np.int64)
            reach = kepts
        else:
            codes = states & changed
            ordered = np.sort(codes, kind="stable")
            keys = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
            key_of = keys.searchsorted(codes)
            tables = list(map(self.memos[step].table, keys.tolist()))
            sizes = np.fromiter(map(len, tables), dtype=np.int64, count=len(tables))
            moves = np.concatenate(tables)
            per_state = sizes[key_of]
            src = np.arange(len(states)).repeat(per_state)
            move = np.arange(len(src)) - (per_state.cumsum() - per_state - (sizes.cumsum() - sizes)[key_of]).repeat(per_state)
            room = self.budget[step] - (states >> _BALANCE_OFFSET & 63) - (states >> _SHORT_OFFSET & 0xFFF)
            keep = moves[move, _COST] <= room[src]
            src = src[keep]
            bits, _, shift, record, transform = np.take(moves, move[keep], axis=0).T
            nxt = ((states & ~changed)[src] + shift) | bits
            reach = np.take(kepts, src, axis=0)
            if position == ACE_HIGH - 1:
                reach &= self.aces.filter_words(transform)
                alive = _nonempty(reach)
                src, nxt, transform, record = src[alive], nxt[alive], transform[alive], record[alive]
                reach = reach.compress(alive, axis=0)
        # (2-D arrays are indexed with take and compress: numpy's fancy indexing of rows is slow)
        order = nxt.argsort(kind="stable")
        ordered = nxt[order]
        first = np.empty(len(ordered), dtype=bool)
        first[:1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        starts = first.nonzero()[0]
        dst = np.empty_like(src)
        dst[order] = first.cumsum() - 1
        following = _Layer(ordered[starts], _or_segments(np.take(reach, order, axis=0), starts))
        return following, _Edges(src, dst, record, transform)

    def ends(self, layer: DictLayer | _Layer) -> tuple[Any, Any]:
        """The kept-ace sets of the final states that end a legal COMMIT: every freed joker
        placed, no more hand jokers used than held, a hand card down; and those that do so
        with at least one hand joker used."""
        free, held = self.problem.free_jokers, self.problem.hand_jokers
        low, high = free + _BALANCE_ZERO, free + held + _BALANCE_ZERO
        if isinstance(layer, dict):
            good, good_with_joker = {}, {}
            for state, kept in layer.items():
                balance = state >> _BALANCE_OFFSET & 63
                if low <= balance <= high and (state & _PLACED_BIT or balance > low):
                    good[state] = kept
                if low + 1 <= balance <= high:
                    good_with_joker[state] = kept
            return good, good_with_joker
        states, kepts = layer
        balance = states >> _BALANCE_OFFSET & 63
        placed = (states & _PLACED_BIT) != 0
        good = np.where(((low <= balance) & (balance <= high) & (placed | (balance > low)))[:, None], kepts, 0)
        return good, np.where(((low + 1 <= balance) & (balance <= high))[:, None], kepts, 0)

    def backward_dict(
        self, step: int, edges: DictEdges, good: dict[int, int], good_with_joker: dict[int, int]
    ) -> tuple[dict[int, int], dict[int, int]]:
        """The kept-ace sets from which each state before ``step`` finishes, edge by edge;
        an edge into a finishing state offers its move at the step's identity.

        The vectors of an edge's source set that reach the target set: an ace-low step's
        shift is undone on the target (it lands only on vectors whose suit count is not 0,
        which the source, before its ace step, does not hold, so the intersection is exact).
        A king step's filter needs no step back: its code is read from the runs of the state
        the edge enters, so every edge into that state filters alike, and the target (a
        subset of what reached the state) lies inside the filter already."""
        records = [0, 0]
        sets: tuple[dict[int, int], dict[int, int]] = ({}, {})
        for which, targets in enumerate((good, good_with_joker)):
            if which and not targets:
                break
            out = sets[which]
            for state, kept, nxt, transform, record in edges:
                target = targets.get(nxt)
                if target:
                    back = kept & (target >> transform) if transform > 0 else kept & target
                    if back:
                        out[state] = out.get(state, 0) | back
                        records[which] |= record
        self.offer(step, *records)
        return sets

    def backward_arrays(
        self, step: int, layer: _Layer, edges: _Edges, good: np.ndarray, good_with_joker: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``backward_dict`` for array layers: a few array operations per layer."""
        kept = np.take(layer.kepts, edges.src, axis=0)
        records, sets = [0, 0], []
        # the hand-joker pass is skipped without a hand joker: no end state then uses one
        for which, targets in enumerate((good, good_with_joker)):
            out = np.zeros(layer.kepts.shape, dtype=np.uint64)
            if not which or self.problem.hand_jokers:
                back = kept & np.take(targets, edges.dst, axis=0)
                live = _nonempty(back)
                sources = edges.src[live]
                if len(sources):
                    starts = np.concatenate(([True], sources[1:] != sources[:-1])).nonzero()[0]
                    out[sources[starts]] = _or_segments(back.compress(live, axis=0), starts)
                    records[which] = int(np.bitwise_or.reduce(edges.record[live]))
            sets.append(out)
        self.offer(step, *records)
        return sets[0], sets[1]

    def offer(self, step: int, record: int, record_with_joker: int) -> None:
        """Set the mask entries of ``step``'s identity that the records of the edges into
        finishing states (and into those using a hand joker) allow."""
        if not record | record_with_joker:
            return
        card_bit = 1 << _IDENTITIES[step][2]
        found = self.found
        for at, bit in enumerate((_PLACED, _JOKER_FITS, _FREED, _PLACED_AND_FREED)):
            if record & bit:
                found[at] |= card_bit
        if record_with_joker & _JOKER_FITS:
            found[4] |= card_bit


def _nonempty(sets: np.ndarray) -> np.ndarray:
    """Which rows of kept-ace words hold a vector."""
    joined = sets[:, 0]
    for word in range(1, sets.shape[1]):
        joined = joined | sets[:, word]
    return joined != 0


def _or_segments(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The bitwise OR of each run of rows of ``values`` beginning at the indices ``starts``."""
    return np.bitwise_or.reduceat(values, starts, axis=0) if len(starts) else values[:0]


class _AceSets:
    """Sets of kept-ace vectors (aces each suit keeps for the high end) as bitsets: vector
    ``(k_0, .., k_3)`` is bit ``sum(k_s * base**s)``. An edge's transform is 0 (kept aces
    untouched), a positive shift (an ace-low step sets its suit's count: the bit moves up by
    ``count * base**suit``) or a negative filter code (a king step keeps only the vectors
    whose suit count fits the sequences that reach the king)."""

    def __init__(self, most_aces: int) -> None:
        self.base = most_aces + 1
        self._filters: tuple[int, ...] | None = None
        self._filter_words: np.ndarray | None = None

    def filter(self, transform: int) -> int:
        """The vectors a filter code keeps."""
        if self._filters is None:
            self._filters = _filter_table(self.base)
        return self._filters[-1 - transform]

    def forward(self, kept: int, transform: int) -> int:
        if transform > 0:
            return kept << transform
        if transform < 0:
            return kept & self.filter(transform)
        return kept

    def words(self, sets: Sequence[int]) -> np.ndarray:
        """Sets as the rows of a uint64 array, 64 vectors a word (array layers)."""
        count = -(-self.base**NUM_SUITS // 64)
        rows = [[kept >> 64 * word & _WORD for word in range(count)] for kept in sets]
        return np.array(rows, dtype=np.uint64).reshape(len(sets), count)

    def as_dict(self, states: np.ndarray, sets: np.ndarray) -> dict[int, int]:
        """An array layer's nonempty sets as {state: set}."""
        live = _nonempty(sets)
        states, sets = states[live], sets.compress(live, axis=0).astype(object)
        joined = sets[:, 0]
        for word in range(1, sets.shape[1]):
            joined = joined | sets[:, word] << 64 * word
        return dict(zip(states.tolist(), joined.tolist()))

    def filter_words(self, transforms: np.ndarray) -> np.ndarray:
        """The sets a king step's filter codes keep, one row per code."""
        if self._filter_words is None:
            self._filter_words = self.words(_filter_table(self.base))
        return np.take(self._filter_words, -1 - transforms, axis=0)


_WORD = (1 << 64) - 1


def _filter_code(suit: int, low: int, high: int) -> int:
    """The transform keeping the vectors whose ``suit`` count lies in [low, high] (low < 8,
    high < 16: the run counts of the state are 3 bits each)."""
    return -1 - (suit << 7 | low << 4 | high)


@lru_cache(maxsize=None)
def _filter_table(base: int) -> tuple[int, ...]:
    """The vectors each filter code keeps, by ``-1 - code``."""
    digit = [
        [sum(1 << v for v in range(base**NUM_SUITS) if v // base**suit % base == count) for count in range(base)]
        for suit in range(NUM_SUITS)
    ]
    return tuple(
        sum(digit[suit][count] for count in range(low, min(high, base - 1) + 1))
        for suit in range(NUM_SUITS)
        for low in range(8)
        for high in range(16)
    )


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
