"""The table solver's dynamic programme over layers of states (``table_solver`` has the map).

``_Commit`` is one ``commit_options`` solve: a forward pass from the table as it is,
layer by layer (dicts while the layers are small, numpy arrays from the first large one
on), then a backward pass from the end condition that reads every mask entry off the
edges between the layers. Aces kept for the high end are carried beside each state as a
set of vectors (``_AceSets``). ``is_legal`` is the same forward pass with nothing to place.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummy_envs.games.manipulation_rummy.commit import NOTHING, CommitOptions, CommitProblem
from rummy_envs.games.manipulation_rummy.solver_moves import (
    _COMMIT_CHANGED,
    _COST,
    _FREED,
    _JOKER_FITS,
    _NO_CHOICE,
    _NO_CONTEXT,
    _PLACED,
    _PLACED_AND_FREED,
    _SHORT_OFFSET,
    _choices,
    _step_memo,
    _StepMemo,
)
from rummy_envs.games.manipulation_rummy.solver_steps import (
    _BALANCE_OFFSET,
    _BALANCE_ZERO,
    _IDENTITIES,
    _PLACED_BIT,
    ACE_HIGH,
    INITIAL,
    NO_LIMIT,
    NUM_STEPS,
    _identity,
)

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
    problem = CommitProblem(counts, nothing, nothing, nothing, 0, 0, False, None)
    return _Commit(problem).forward() is not None


_VECTOR_FROM = 150
"""Layers of more states than this run as numpy arrays (a few dozen array operations per
layer); smaller ones stay in dicts, where numpy's fixed cost per call would outweigh the
work."""


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


class _Steps(NamedTuple):
    """A commit problem's per-step data: what every identity step may do (its memo of moves)
    and the wildcard budget left at it, from the problem's counts."""

    base: int
    memos: list[_StepMemo]
    budget: list[int]


def _step_data(problem: CommitProblem) -> _Steps:
    """The per-step data of ``problem``."""
    free, held = problem.free_jokers, problem.hand_jokers
    limit = NO_LIMIT if problem.max_copies is None else problem.max_copies
    table, hand, jokers_at, spare = problem.table, problem.hand, problem.jokers_at, problem.spare_naturals
    freeable = tuple(min(j, n + h) for j, n, h in zip(jokers_at, spare, hand))
    wildcards = free + held + sum(freeable)
    supply = tuple(t + h for t, h in zip(table, hand))
    most = [min(limit, n + wildcards) for n in supply]
    base = max(most[suit * NUM_RANKS] for suit in range(NUM_SUITS)) + 1
    capped = [min(limit, n) for n in supply]
    memos, budgets = [], []
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
        budgets.append(budget)
        memos.append(_step_memo(step, choices, context, base))
    return _Steps(base, memos, budgets)


Pass = tuple[DictLayer | _Layer, DictEdges | _Edges]
"""The layer before one step and the step's edges."""


class _Commit:
    """One ``commit_options`` solve: the per-step data, the forward pass (dicts while the
    layers are small, numpy arrays from the first large one on) and the backward pass.

    Aces kept for the high end are not in the state: each state carries the set of kept-ace
    vectors it is reachable with (a bitset, ``_AceSets``), since only the ace-high steps
    read them. States that differ only in kept aces merge, and one transition serves all.
    """

    def __init__(self, problem: CommitProblem) -> None:
        self.problem = problem
        steps = _step_data(problem)
        self.aces = _AceSets(steps.base - 1)
        self.memos, self.budget = steps.memos, steps.budget
        self.start = INITIAL | _BALANCE_ZERO << _BALANCE_OFFSET | (0 if problem.need_hand_card else _PLACED_BIT)
        # mask entries found: place, a wildcard fits, a joker freed, replace from the hand,
        # a hand joker fits
        self.found = [0] * 5

    def forward(self) -> tuple[list[Pass], DictLayer | _Layer] | None:
        """Each step's layer and edges, and the final layer; None when no state survives."""
        layer: DictLayer | _Layer = {self.start: 1}
        passes: list[Pass] = []
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
