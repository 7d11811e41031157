"""The table solver's programme compiled with numba: the answers of the pure solver
(``solver_layers``: ``commit_options``, ``is_legal``, and ``arrange``'s path), 5-15x faster
on the positions of play (``table_solver`` has the map; tests/test_manipulation_rummy_table_solver.py
holds both to the same answers and to the integer-program oracle). ``compiled_steps``
holds one identity step; this module the passes, the work arrays and the entry points.

``solve`` walks the 56 identity steps forward, keeping every reachable state of a layer
once (an open-addressing hash table merges equal states) and every edge between layers,
then walks back from the states that end a legal COMMIT and reads the mask entries off the
edges into them. The states, the choices at an identity, the ways its cards extend, start
or end sequences or join groups (with the same dominance and capping of long sequences),
the wildcard budget that prunes states and the kept-ace sets beside each state are the
pure solver's, restated over arrays; only the wildcard shortfall of the open sequences is
recomputed from the state instead of stored in it.

The hot loops call no function that takes an array (numba counts references to an array
passed to a call, or held in a variable reassigned in a loop, with atomic operations that
cost more than the work); helpers take scalars, the rare work (a split table filled, a
filter built) sits behind a test, and ``solve`` neither makes nor returns arrays.

numba compiles the functions on their first call in a process (seconds) and caches the
machine code beside this file (``cache=True``), so later processes load it in a fraction
of a second. The work arrays stay allocated between calls (``Workspace``), up to a bound.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummy_envs.games.manipulation_rummy.commit import JOKERS_BEYOND_TABLE, NOTHING, CommitOptions, CommitProblem
from rummy_envs.games.manipulation_rummy.compiled_steps import (
    MOST_COPIES,
    _ACE_HIGH,
    _AS_IS_BIT,
    _BALANCE_OFFSET,
    _BALANCE_ZERO,
    _FREED,
    _GROUP_OFFSET,
    _KEPT_OFFSET,
    _MOST_SPLITS,
    _NUM_STEPS,
    _PLACED,
    _PLACED_AND_FREED,
    _PLACED_BIT,
    _SPARE_LEFT,
    _SPLIT_MEMO,
    _WILDCARD,
    _WORD_BITS,
    _WORD_MASK,
    _build_filter,
    _choices,
    _commit_data,
    _fill_splits,
    _grouped,
    _hash,
    _others_shortfall,
    _shifted_word,
    _split_key,
    _split_move,
)
from rummy_envs.games.manipulation_rummy.solver_witness import _search

_DONE, _NEED_ROOM, _TOO_MANY, _JOKERS_BEYOND_TABLE = 0, 1, 2, 3
_FILTERS, _STATES, _SETS, _EDGES, _CANDIDATES, _SLOTS, _GOOD = 2, 5, 6, 7, 11, 12, 13
"""Places among the work arrays (``Workspace``) of those that grow; the four edge arrays
(7 to 10) grow together."""
_CHUNK = 64
"""States per chunk of a layer's forward step (between which the room for edges is checked)."""


@njit(cache=True)
def _resume_step(counts, hand_jokers, free_jokers, need_hand_card, limit, last, last_inputs):  # pragma: no cover
    """The step the forward pass may start at, given the last solve's counts and inputs
    (``last_inputs``: held, hand jokers, free jokers, hand-card flag, limit, the steps whose
    layers it left, and the base the king's filters were built for): a commit's next
    placement changes one identity and not its supply, so the steps before that identity's
    read the same data and keep their layers; when the supply changed too, two rank
    positions earlier (a step reads the supply of the next two positions for its wildcard
    bound). 0 when anything all steps read differs (the jokers, the freeable jokers, the
    copy limit, the hand-card flag)."""
    if (last_inputs[0] == 0 or last_inputs[1] != hand_jokers or last_inputs[2] != free_jokers
            or last_inputs[3] != need_hand_card or last_inputs[4] != limit):
        return 0
    first = _NUM_STEPS
    for card in range(NUM_CARDS):
        if (min(counts[2, card], counts[1, card] + counts[3, card])
                != min(last[2, card], last[1, card] + last[3, card])):
            return 0  # a freeable joker more or less changes the wildcard budget of every step
        if (counts[0, card] != last[0, card] or counts[1, card] != last[1, card]
                or counts[2, card] != last[2, card] or counts[3, card] != last[3, card]):
            position = card % NUM_RANKS
            step = position * NUM_SUITS + card // NUM_RANKS
            if counts[0, card] + counts[1, card] != last[0, card] + last[1, card]:
                step = NUM_SUITS * max(0, position - 2)
            first = min(first, step)
    return min(first, last_inputs[5])


@njit(cache=True)
def solve(counts, hand_jokers, free_jokers, need_hand_card, limit, masks_wanted, most_states, split_sizes, split_rows,
          last_counts, last_inputs, filters, layer_starts, edge_starts, states, sets, edge_src, edge_dst, edge_rec,
          edge_transform, candidates, slots, good, needs):  # pragma: no cover - compiled
    """The commit programme on ``counts`` (rows: table, hand, jokers at, spare naturals):
    (``_DONE``, feasible, placed, wildcard fits, freed, placed and freed, a hand joker fits,
    the table as it is legal, the step the forward pass started at), the five masks
    bitmasks over identities (``_Commit.found``, the freed ones among the spare naturals).
    Without ``masks_wanted`` only the forward pass runs and the masks are 0: feasible then
    says whether any state survives to the end (``is_legal`` asks that).

    The work arrays keep the last solve's counts and inputs (``last_counts``,
    ``last_inputs``), the king's filters built so far, and its layers and edges: the forward
    pass starts where the data its steps read first differ (``_resume_step``). When an
    array is too small the solve stops with ``_NEED_ROOM`` and the rows and columns it needs
    in ``needs`` (by the array's place among the work arrays); the caller grows it and calls
    again, which resumes at the step that stopped. (The arrays are never made here: handing
    new arrays back to Python costs more than a small solve.) Once its layers hold more
    than ``most_states`` states it stops with ``_TOO_MANY`` (a call again resumes there),
    and table jokers beyond the table stop it at once with ``_JOKERS_BEYOND_TABLE``."""
    table, hand, jokers_at, spare = counts[0], counts[1], counts[2], counts[3]
    for card in range(NUM_CARDS):
        if jokers_at[card] > table[card]:
            return _JOKERS_BEYOND_TABLE, False, 0, 0, 0, 0, 0, False, 0
    resume = _resume_step(counts, hand_jokers, free_jokers, need_hand_card, limit, last_counts, last_inputs)
    last_counts[:] = counts
    last_inputs[0], last_inputs[1], last_inputs[2] = 1, hand_jokers, free_jokers
    last_inputs[3], last_inputs[4], last_inputs[5] = need_hand_card, limit, resume
    ahead, wildcards, most, capped, base, budget = _commit_data(counts, hand_jokers, free_jokers, limit)
    words = (base ** NUM_SUITS + _WORD_BITS - 1) // _WORD_BITS
    passes = 2 if hand_jokers else 1  # no end state uses a hand joker without one
    if sets.shape[1] < words or good.shape[1] < passes * words or filters.shape[1] < words + 1:
        needs[_SETS, 1], needs[_GOOD, 1], needs[_FILTERS, 1] = words, passes * words, words + 1
        return _NEED_ROOM, False, 0, 0, 0, 0, 0, False, resume
    if last_inputs[6] != base:  # the filters built so far are for another base
        filters[:, words] = 0
        last_inputs[6] = base
    choice_rows = np.empty((64, 4), dtype=np.int64)
    if resume == 0:
        start = np.int64(_BALANCE_ZERO) << _BALANCE_OFFSET | _AS_IS_BIT
        if not need_hand_card:
            start |= _PLACED_BIT
        states[0] = start
        sets[0, :words] = 0
        sets[0, 0] = 1  # no aces kept yet: the vector (0, 0, 0, 0)
        layer_starts[0], layer_starts[1], edge_starts[0] = 0, 1, 0
    num_edges = edge_starts[resume]
    for step in range(resume, _NUM_STEPS):
        position, suit = step // NUM_SUITS, step % NUM_SUITS
        card = suit * NUM_RANKS + position % NUM_RANKS
        run_shift = 9 * suit
        first, last = layer_starts[step], layer_starts[step + 1]
        produced = 0  # edges of this step so far; their next states wait in candidates
        num_choices, later = 0, 0
        room_next = most[card + 1] if position < _ACE_HIGH - 1 else 0
        if position < _ACE_HIGH:
            num_choices = _choices(table[card], hand[card], jokers_at[card], spare[card], limit, wildcards,
                                   choice_rows)
            for other in range(suit + 1, NUM_SUITS):
                later += capped[other * NUM_RANKS + position]
        # the edge arrays grow between chunks of states, never inside the loop over a chunk
        # (an array variable reassigned in a loop costs reference counting on every turn)
        for chunk in range(first, last, _CHUNK):
            size = num_edges + produced + _CHUNK * max(num_choices, 1) * _MOST_SPLITS
            if size > edge_src.shape[0] or size - num_edges > candidates.shape[0]:
                needs[_EDGES, 0], needs[_CANDIDATES, 0] = size, size - num_edges
                return _NEED_ROOM, False, 0, 0, 0, 0, 0, False, resume
            for index in range(chunk, min(chunk + _CHUNK, last)):
                state = states[index]
                if position == _ACE_HIGH:  # the kept aces end this suit's sequences (checked at the king)
                    edge = num_edges + produced
                    edge_src[edge], edge_rec[edge], edge_transform[edge] = index, 0, 0
                    candidates[produced] = state & ~(np.int64(0x1FF) << run_shift)
                    produced += 1
                    continue
                runs = state >> run_shift & 0x1FF
                short1, short2, long = runs & 7, runs >> 3 & 7, runs >> 6 & 7
                group = state >> _GROUP_OFFSET & 0xFF
                grouped, largest = group & 31, group >> 5
                balance = state >> _BALANCE_OFFSET & 63
                shortfall = _others_shortfall(state, suit, position, ahead)
                cleared = state & ~((np.int64(0x1FF) << run_shift) | (np.int64(0xFF) << _GROUP_OFFSET)
                                    | (np.int64(63) << _BALANCE_OFFSET))
                supply_next, supply_after = ahead[suit, position + 1], ahead[suit, position + 2]
                for c in range(num_choices):
                    count, delta, puts, record = choice_rows[c, 0], choice_rows[c, 1], choice_rows[c, 2], choice_rows[c, 3]
                    if balance + delta + shortfall > budget[step]:
                        break  # choices come cheapest first
                    key = _split_key(position, short1, short2, long, count)
                    if split_sizes[key] < 0:
                        _fill_splits(split_sizes, split_rows, key, position, short1, short2, long, count)
                    for s in range(split_sizes[key]):
                        new1, new2 = np.int64(split_rows[key, s, 0]), np.int64(split_rows[key, s, 1])
                        paid, new_long, new_grouped, new_largest = _split_move(
                            position, suit, grouped, largest, new1, new2, np.int64(split_rows[key, s, 2]),
                            np.int64(split_rows[key, s, 3]), room_next, base, later, shortfall, supply_next,
                            supply_after, balance + delta, budget[step])
                        if not paid:
                            continue
                        transform = 0
                        if position == 0:
                            transform = np.int64(split_rows[key, s, 4]) * base ** suit
                        elif position == _ACE_HIGH - 1:
                            transform = -1 - (suit << 7 | new2 << 4 | (new2 + new_long))
                            code = -1 - transform
                            if filters[code, words] == 0:
                                _build_filter(filters, code, base, words)
                            alive = False
                            for w in range(words):
                                if sets[index, w] & filters[code, w]:
                                    alive = True
                            if not alive:
                                continue
                        nxt = cleared | (new1 | new2 << 3 | new_long << 6) << run_shift
                        nxt |= (new_grouped | new_largest << 5) << _GROUP_OFFSET
                        nxt |= (balance + delta) << _BALANCE_OFFSET
                        if count != table[card] or delta or puts:
                            nxt &= ~_AS_IS_BIT
                        if puts:
                            nxt |= _PLACED_BIT
                        edge = num_edges + produced
                        edge_src[edge], edge_rec[edge], edge_transform[edge] = index, record, transform
                        candidates[produced] = nxt
                        produced += 1
        if produced == 0:
            return _DONE, False, 0, 0, 0, 0, 0, False, resume
        # merge equal next states; each edge's target is the index of its next state
        table_size = 1
        while table_size < 2 * produced:
            table_size *= 2
        if last + produced > states.shape[0] or 2 * table_size > slots.shape[0]:
            needs[_STATES, 0], needs[_SLOTS, 0] = last + produced, 2 * table_size
            return _NEED_ROOM, False, 0, 0, 0, 0, 0, False, resume
        for i in range(table_size):
            slots[2 * i] = -1
        size = last
        for edge in range(num_edges, num_edges + produced):
            value = candidates[edge - num_edges]
            slot = _hash(value) & (table_size - 1)
            while slots[2 * slot] != -1 and slots[2 * slot] != value:
                slot = (slot + 1) & (table_size - 1)
            if slots[2 * slot] == -1:
                slots[2 * slot], slots[2 * slot + 1] = value, size
                states[size] = value
                for w in range(words):
                    sets[size, w] = 0
                size += 1
            target, source, transform = slots[2 * slot + 1], edge_src[edge], edge_transform[edge]
            edge_dst[edge] = target
            if transform > 0:  # an ace-low step: the kept aces' vectors move up
                whole, part = transform // _WORD_BITS, transform % _WORD_BITS
                for w in range(whole, words):
                    low = sets[source, w - whole - 1] if w > whole else 0
                    sets[target, w] |= _shifted_word(sets[source, w - whole], low, part)
            elif transform < 0:  # a king step: only the vectors its filter keeps
                code = -1 - transform
                for w in range(words):
                    sets[target, w] |= sets[source, w] & filters[code, w]
            else:
                for w in range(words):
                    sets[target, w] |= sets[source, w]
        num_edges += produced
        edge_starts[step + 1] = num_edges
        layer_starts[step + 2] = size
        last_inputs[5] = step + 1
        if size > most_states:  # the caller tries something else first; a call again resumes here
            return _TOO_MANY, False, 0, 0, 0, 0, 0, False, resume

    if not masks_wanted:
        return _DONE, True, 0, 0, 0, 0, 0, False, resume
    # backward: good[i, :words] the kept-ace vectors from which state i ends a legal COMMIT,
    # good[i, words:] those ending one that uses a hand joker
    total = layer_starts[_NUM_STEPS + 1]
    if total > good.shape[0]:
        needs[_GOOD, 0] = total
        return _NEED_ROOM, False, 0, 0, 0, 0, 0, False, resume
    good[:total] = 0
    for index in range(layer_starts[_NUM_STEPS], total):
        balance = (states[index] >> _BALANCE_OFFSET & 63) - _BALANCE_ZERO
        placed = states[index] & _PLACED_BIT
        for w in range(words):
            if free_jokers <= balance <= free_jokers + hand_jokers and (placed or balance > free_jokers):
                good[index, w] = sets[index, w]
            if free_jokers + 1 <= balance <= free_jokers + hand_jokers:
                good[index, words + w] = sets[index, w]
    as_is = False
    for index in range(layer_starts[_NUM_STEPS], total):
        as_is |= (states[index] & _AS_IS_BIT) != 0
    found = np.zeros(5, dtype=np.int64)
    for step in range(_NUM_STEPS - 1, -1, -1):
        record, record_with_joker = 0, 0
        for edge in range(edge_starts[step], edge_starts[step + 1]):
            target, source, transform = edge_dst[edge], edge_src[edge], edge_transform[edge]
            for which in range(passes):
                at = which * words
                # back along a shift: the source's vectors that land in the target's set;
                # a filter needs no step back (every edge into a state filters alike)
                alive = False
                for w in range(words):
                    if transform > 0:
                        whole, part = transform // _WORD_BITS, transform % _WORD_BITS
                        high = good[target, at + w + whole + 1] if w + whole + 1 < words else 0
                        back = good[target, at + w + whole] if w + whole < words else 0
                        back = (back >> part) | ((high << (_WORD_BITS - part)) & _WORD_MASK if part else 0)
                    else:
                        back = good[target, at + w]
                    back &= sets[source, w]
                    if back:
                        good[source, at + w] |= back
                        alive = True
                if alive:
                    if which:
                        record_with_joker |= edge_rec[edge]
                    else:
                        record |= edge_rec[edge]
        position, suit = step // NUM_SUITS, step % NUM_SUITS
        card_bit = np.int64(1) << np.int64(suit * NUM_RANKS + position % NUM_RANKS)
        if record & _PLACED:
            found[0] |= card_bit
        if record & (_WILDCARD | _SPARE_LEFT):
            found[1] |= card_bit
        if record & _FREED:
            found[2] |= card_bit
        if record & _PLACED_AND_FREED:
            found[3] |= card_bit
        if record_with_joker & (_WILDCARD | _SPARE_LEFT):
            found[4] |= card_bit
    if not good[0, 0] & 1:
        return _DONE, False, 0, 0, 0, 0, 0, as_is, resume
    spare_bits = np.int64(0)
    for card in range(NUM_CARDS):
        if spare[card]:
            spare_bits |= np.int64(1) << np.int64(card)
    return _DONE, True, found[0], found[1], found[2] & spare_bits, found[3], found[4], as_is, resume


@njit(cache=True)
def _arrangement_path(counts, split_sizes, split_rows):  # pragma: no cover - compiled
    """``table_solver._arrangement_path`` compiled: the same breadth-first walk in the
    packed states of ``solver_steps`` (kept aces in the state), each state reached first
    from the first state that reaches it, and the same path back from the first final
    state: the state after each step and the cards that step put into groups (empty arrays
    when the table is not legal)."""
    changed_group = np.int64(0xFF) << _GROUP_OFFSET
    states = np.empty(64, dtype=np.int64)
    parents = np.empty(64, dtype=np.int64)
    to_groups_of = np.empty(64, dtype=np.int64)
    layer_starts = np.zeros(_NUM_STEPS + 2, dtype=np.int64)
    states[0], layer_starts[1] = 0, 1
    candidates = np.empty((64, 3), dtype=np.int64)
    slots = np.empty(128, dtype=np.int64)
    for step in range(_NUM_STEPS):
        position, suit = step // NUM_SUITS, step % NUM_SUITS
        card = suit * NUM_RANKS + position % NUM_RANKS
        run_shift, kept_shift = 9 * suit, _KEPT_OFFSET + 3 * suit
        changed = (np.int64(0x1FF) << run_shift) | (np.int64(7) << kept_shift) | changed_group
        first, last = layer_starts[step], layer_starts[step + 1]
        if (last - first) * _MOST_SPLITS > candidates.shape[0]:
            candidates = np.empty(((last - first) * _MOST_SPLITS, 3), dtype=np.int64)
        produced = 0
        for index in range(first, last):
            state = states[index]
            runs = state >> run_shift & 0x1FF
            short1, short2, long = runs & 7, runs >> 3 & 7, runs >> 6 & 7
            kept = state >> kept_shift & 7
            group = state >> _GROUP_OFFSET & 0xFF
            grouped, largest = group & 31, group >> 5
            rest = state & ~changed
            if position == _ACE_HIGH:  # the kept aces end the suit's sequences, one each
                if short1 == 0 and short2 <= kept <= short2 + long:
                    candidates[produced, 0] = rest | kept << kept_shift | group << _GROUP_OFFSET
                    candidates[produced, 1], candidates[produced, 2] = index, 0
                    produced += 1
                continue
            count = counts[card]
            key = _split_key(position, short1, short2, long, count)
            if split_sizes[key] < 0:
                _fill_splits(split_sizes, split_rows, key, position, short1, short2, long, count)
            for s in range(split_sizes[key]):
                new1, new2 = np.int64(split_rows[key, s, 0]), np.int64(split_rows[key, s, 1])
                new_long, to_groups = np.int64(split_rows[key, s, 2]), np.int64(split_rows[key, s, 3])
                new_kept = np.int64(split_rows[key, s, 4]) if position == 0 else kept
                fits, new_grouped, new_largest = _grouped(grouped, largest, to_groups, suit)
                if not fits:
                    continue
                candidates[produced, 0] = (rest | (new1 | new2 << 3 | new_long << 6) << run_shift
                                           | new_kept << kept_shift | (new_grouped | new_largest << 5) << _GROUP_OFFSET)
                candidates[produced, 1], candidates[produced, 2] = index, to_groups
                produced += 1
        if produced == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        table_size = 1
        while table_size < 2 * produced:
            table_size *= 2
        if table_size > slots.shape[0]:
            slots = np.empty(table_size, dtype=np.int64)
        if last + produced > states.shape[0]:
            grown = max(last + produced, 2 * states.shape[0])
            bigger = np.empty((3, grown), dtype=np.int64)
            bigger[0, :last], bigger[1, :last], bigger[2, :last] = states[:last], parents[:last], to_groups_of[:last]
            states, parents, to_groups_of = bigger[0].copy(), bigger[1].copy(), bigger[2].copy()
        slots[:table_size] = -1
        size = last
        for k in range(produced):
            value = candidates[k, 0]
            slot = _hash(value) & (table_size - 1)
            while slots[slot] != -1 and states[slots[slot]] != value:
                slot = (slot + 1) & (table_size - 1)
            if slots[slot] == -1:  # first reached: keep this parent
                slots[slot] = size
                states[size], parents[size], to_groups_of[size] = value, candidates[k, 1], candidates[k, 2]
                size += 1
        layer_starts[step + 2] = size
    path_states = np.empty(_NUM_STEPS, dtype=np.int64)
    path_groups = np.empty(_NUM_STEPS, dtype=np.int64)
    index = layer_starts[_NUM_STEPS]
    for step in range(_NUM_STEPS - 1, -1, -1):
        path_states[step], path_groups[step] = states[index], to_groups_of[index]
        index = parents[index]
    return path_states, path_groups


WORKSPACE_BYTES = 64 << 20
"""The work arrays kept between solves (layers of states with their kept-ace sets, edges,
the hash table) are dropped after a solve that grew them past this; the densest positions
of random play need about 60 MB."""
FIRST_ROWS = 1 << 12
"""Rows of the growing work arrays to begin with (most positions of play fit)."""


class Workspace:
    """The work arrays of a line of solves, kept between solves: the last solve's counts
    and inputs, its layers and edges (which the next solve resumes from, ``_resume_step``),
    and room for the next, grown when a solve asks for more and replaced by small ones
    after a solve that grew them past ``most_bytes`` (None: ``WORKSPACE_BYTES``). Two are
    shared (commits, tables); an env keeps one of its own (``solving_in``)."""

    def __init__(self, most_bytes: int | None = None) -> None:
        self.arrays = self._new_arrays()
        self.most_bytes = most_bytes  # None: WORKSPACE_BYTES
        self.dropped = False  # grown past the bound: replaced once the solve is done

    def __reduce__(self) -> tuple[type, tuple[int | None]]:
        """Copied or pickled (with a state that holds it) as a fresh one: the arrays are a cache."""
        return Workspace, (self.most_bytes,)

    @staticmethod
    def _new_arrays() -> list[np.ndarray]:
        size = FIRST_ROWS
        # the last counts and inputs, the king's filters, step boundaries, states, kept-ace
        # sets, edges (source, target, record, transform), a step's next states, the hash
        # table, the backward sets, and what a solve needs of each
        return [np.zeros((4, NUM_CARDS), dtype=np.int64), np.zeros(7, dtype=np.int64),
                np.zeros((1 << 9, 2), dtype=np.int64), np.zeros(_NUM_STEPS + 2, dtype=np.int64),
                np.zeros(_NUM_STEPS + 1, dtype=np.int64),
                np.empty(size, dtype=np.int64), np.empty((size, 1), dtype=np.int64),
                np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int8),
                np.empty(size, dtype=np.int16), np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
                np.empty((size, 1), dtype=np.int64), np.zeros((_GOOD + 1, 2), dtype=np.int64)]

    def solve(self, counts: np.ndarray, hand_jokers: int, free_jokers: int, need_hand_card: bool, limit: int,
              masks_wanted: bool, most_states: int = 1 << 62) -> tuple[int, ...] | None:
        """``solve`` on the kept arrays, growing them as it asks (they are replaced by small
        ones once past ``most_bytes``); None when its layers grew past ``most_states``
        states, and then a call again resumes where it stopped."""
        while True:
            status, *answer = solve(counts, hand_jokers, free_jokers, need_hand_card, limit, masks_wanted,
                                    most_states, *_SPLIT_MEMO, *self.arrays)
            if status == _DONE:
                break
            if status == _TOO_MANY:
                return None
            if status == _JOKERS_BEYOND_TABLE:
                raise ValueError(JOKERS_BEYOND_TABLE)
            self._grow()
            if sum(array.nbytes for array in self.arrays) > (self.most_bytes or WORKSPACE_BYTES):
                self.dropped = True
        if self.dropped:
            self.arrays, self.dropped = self._new_arrays(), False
        return tuple(answer)

    def _grow(self) -> None:
        """Grow the arrays a solve asked for (at least doubled, the content kept)."""
        needs = self.arrays[-1]
        for place in (_FILTERS, _STATES, _SETS, _EDGES, _CANDIDATES, _SLOTS, _GOOD):
            rows, columns = needs[place]
            for grown in range(place, place + 4 if place == _EDGES else place + 1):
                array = self.arrays[grown]
                shape = list(array.shape)
                if rows > shape[0]:
                    shape[0] = max(int(rows), 2 * shape[0])
                if array.ndim == 2:
                    shape[1] = max(shape[1], int(columns))
                if tuple(shape) != array.shape:
                    bigger = np.empty(shape, dtype=array.dtype)
                    bigger[tuple(slice(0, n) for n in array.shape)] = array
                    self.arrays[grown] = bigger
            if place == _STATES:  # the kept-ace sets have a row per state
                needs[_SETS, 0] = max(needs[_SETS, 0], rows)
        needs[:] = 0


_commits = Workspace()
_in_use: Workspace | None = None
"""The workspace of the caller now (``solving_in``), or None: ``_commits``, shared."""


def solving_in(workspace: Workspace | None) -> None:
    """Let the commit solves from now on use ``workspace`` (None: the shared one). A caller
    that keeps its own, such as an env, makes its next solve resume its last one even when
    other envs solve in between."""
    global _in_use
    _in_use = workspace
SEARCH_PAST_STATES = 5000
"""A commit solve that reaches this many states stops and asks the witness search
(``solver_witness``) first: on the dense tables of play it answers in a fraction of the
time, and where it gives up the solve resumes where it stopped. Its budget is the states
the solve would still walk, read off how far it got (``SEARCH_PAST_STATES`` per
``reached`` steps of 56), so a search that gives up costs about what it could have saved."""
_tables = Workspace()


def copy_limit(counts_reach: int, max_copies: int | None) -> int:
    """The copy limit to solve under: ``max_copies``, or the most cards an identity can
    reach (``counts_reach``) when that is lower. The packed state counts to
    ``MOST_COPIES``; beyond it (no game deals that many copies) a ValueError says so."""
    limit = counts_reach if max_copies is None else min(max_copies, counts_reach)
    if limit > MOST_COPIES:
        raise ValueError(f"an identity could reach {limit} cards on the table; the table solver counts at most "
                         f"{MOST_COPIES} copies of one identity (set max_copies)")
    return limit


def problem_counts(problem: CommitProblem) -> np.ndarray | None:
    """The problem's counts as rows (table, hand, jokers at, spare naturals), or None unless
    each is 52 counts >= 0 and no joker count is negative (``table_solver`` then says which;
    table jokers beyond the table are refused by the solve, with ``JOKERS_BEYOND_TABLE``)."""
    rows = (problem.table, problem.hand, problem.jokers_at, problem.spare_naturals)
    try:  # (bytes() takes a list of small counts far faster than numpy, and refuses negative ones)
        joined = b"".join(map(bytes, rows))
    except (TypeError, ValueError):
        return None
    if (len(joined) != 4 * NUM_CARDS or not len(rows[0]) == len(rows[1]) == len(rows[2]) == NUM_CARDS
            or problem.hand_jokers < 0 or problem.free_jokers < 0):
        return None
    return np.frombuffer(joined, np.uint8).astype(np.int64).reshape(4, NUM_CARDS)


def commit_options_compiled(problem: CommitProblem, counts: np.ndarray) -> CommitOptions:
    """What ``solver_layers._Commit(problem).solve()`` answers, compiled; ``counts`` is
    ``problem_counts(problem)``."""
    limit = problem.max_copies
    if limit is None or limit > MOST_COPIES:  # (a limit no identity can reach answers as that reach)
        wildcards = problem.hand_jokers + problem.free_jokers + int(counts[2].sum())
        limit = copy_limit(int((counts[0] + counts[1]).max()) + wildcards, problem.max_copies)
    data = counts, problem.hand_jokers, problem.free_jokers, problem.need_hand_card, limit
    space = _in_use or _commits
    answer = space.solve(*data, True, SEARCH_PAST_STATES)
    found = None
    if answer is None:  # the search may spend about what the solve has still to do
        reached = max(1, int(space.arrays[1][5]))
        found = _search.masks(*data, SEARCH_PAST_STATES * (_NUM_STEPS - reached) // reached)
    if found is not None:
        feasible, place, wildcard, freed, replace_from_hand, joker_as = found
        as_is = (not problem.free_jokers and not problem.need_hand_card and int(counts[0].max()) <= limit
                 and is_legal_compiled(tuple(problem.table)))
    else:
        feasible, place, wildcard, freed, replace_from_hand, joker_as, as_is, _ = answer or space.solve(*data, True)
    if not feasible:
        return NOTHING
    return CommitOptions(
        feasible=True,
        commit=not problem.free_jokers and not problem.need_hand_card and bool(as_is),
        place=int(place),
        joker_as=int(joker_as) if problem.hand_jokers else 0,
        freed_as=int(wildcard) if problem.free_jokers else 0,
        replace_from_hand=int(replace_from_hand),
        replace_from_table=int(freed),
    )


@lru_cache(maxsize=1 << 16)
def is_legal_compiled(counts: tuple[int, ...]) -> bool:
    """Whether the table splits into legal melds (the counts already checked against any
    copy limit): the programme's forward pass with nothing to place."""
    limit = copy_limit(max(counts), None)
    table = np.zeros((4, NUM_CARDS), dtype=np.int64)
    table[0] = counts
    return bool(_tables.solve(table, 0, 0, False, limit, False)[0])


def arrangement_path(counts: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """``table_solver._arrangement_path`` compiled (the counts already checked against any
    copy limit): the state after each step and the cards that step put into groups."""
    copy_limit(max(counts), None)  # refuses more copies than the packed state counts
    states, to_groups = _arrangement_path(np.array(counts, dtype=np.int64), *_SPLIT_MEMO)
    return list(zip(states.tolist(), to_groups.tolist())) if len(states) else None
