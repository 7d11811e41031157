"""The commit mask by witnesses: a depth-first search for whole solutions, tried before the
table solver's full programme (``solver_compiled.solve``; ``table_solver`` has the map).

A mask entry is set exactly when some solution of the commit (a path of the programme from
its first state to a state that ends a legal COMMIT) does that move at that identity. The
full programme finds every such entry by walking all reachable states forward and back,
hundreds of thousands on the dense two-deck tables of random play, where nearly every move
the hand allows turns out to be possible. This search goes the other way round: it takes
each entry a move could set at all (an upper bound read off the choices at each identity),
and looks for one solution through it, depth first, in the same states and moves as the
programme (the kept aces held in the state, 3 bits a suit, instead of in sets). A solution
found sets every entry along it; an entry whose search runs out of states is proven unset.
Dead states (no solution below them) are remembered, so no state is searched twice for the
same question. The answer is the full programme's, entry for entry; the search only gives
up (and the full programme runs) when it has expanded its budget of states (at most
``NODE_BUDGET``) or its tables are full.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummy_envs.games.manipulation_rummy.compiled_steps import (
    _ACE_HIGH,
    _BALANCE_OFFSET,
    _BALANCE_ZERO,
    _FREED,
    _GROUP_OFFSET,
    _KEPT_OFFSET,
    _NUM_STEPS,
    _PLACED,
    _PLACED_AND_FREED,
    _PLACED_BIT,
    _SPARE_LEFT,
    _SPLIT_MEMO,
    _WILDCARD,
    _choices,
    _commit_data,
    _fill_splits,
    _hash,
    _others_shortfall,
    _split_key,
    _split_move,
)

NODE_BUDGET = 20_000
"""States the search may expand for one mask before it hands the problem to the full
programme."""
_MOST_SUCCESSORS = 2048
_MEMO_SLOTS = 1 << 16
_GAVE_UP, _FOUND, _EXHAUSTED = 0, 1, 2
_MASKS = 5
"""The masks, as ``solver_compiled.solve`` numbers them: placed, wildcard fits (freed
jokers), freed from the table, placed and freed, a hand joker fits."""
_FITS = _WILDCARD | _SPARE_LEFT
_NEEDED = (_PLACED, _FITS, _FREED, _PLACED_AND_FREED, _FITS)
"""The record bits that set each mask."""


@njit(cache=True)
def _record_masks(record, card, joker_end, spare_card, out):  # pragma: no cover - compiled
    """Set in ``out`` the mask entries an edge with ``record`` at ``card`` gives (the hand
    joker's only on a solution that uses one)."""
    bit = np.int64(1) << np.int64(card)
    if record & _PLACED:
        out[0] |= bit
    if record & _FITS:
        out[1] |= bit
        if joker_end:
            out[4] |= bit
    if record & _FREED and spare_card:
        out[2] |= bit
    if record & _PLACED_AND_FREED:
        out[3] |= bit


@njit(cache=True)
def search(counts, hand_jokers, free_jokers, need_hand_card, limit, split_sizes, split_rows, choice_rows,
           choice_counts, successors, records, sizes, taken, memo_states, memo_keys, epoch,
           node_budget):  # pragma: no cover - compiled
    """(done, feasible, placed, wildcard fits, freed, placed and freed, a hand joker fits): the
    masks of ``solver_compiled.solve`` (the freed ones among the spare naturals), or
    ``done`` False when the search gave up. ``epoch`` tells this call's memo entries from
    older ones (the memo arrays are never cleared)."""
    table, hand, jokers_at, spare = counts[0], counts[1], counts[2], counts[3]
    ahead, wildcards, most, capped, base, budget = _commit_data(counts, hand_jokers, free_jokers, limit)
    upper = np.zeros(_MASKS, dtype=np.int64)
    for card in range(NUM_CARDS):
        choice_counts[card] = _choices(table[card], hand[card], jokers_at[card], spare[card], limit, wildcards,
                                       choice_rows[card])
        every = 0
        for c in range(choice_counts[card]):
            every |= choice_rows[card, c, 3]
        _record_masks(every, card, hand_jokers > 0, spare[card] > 0, upper)
    if not free_jokers:
        upper[1] = 0
    covered = np.zeros(_MASKS, dtype=np.int64)
    start = np.int64(_BALANCE_ZERO) << _BALANCE_OFFSET
    if not need_hand_card:
        start |= _PLACED_BIT
    feasible = False
    nodes = 0
    # the targets, the hand-joker ones first (their solutions end every other way too);
    # the last question, with no target, is whether any solution exists
    for target in range(_MASKS * NUM_CARDS + 1):
        mask, card = (4 - target // NUM_CARDS) % _MASKS, target % NUM_CARDS
        if target < _MASKS * NUM_CARDS:
            if not upper[mask] >> card & 1 or covered[mask] >> card & 1:
                continue
            forced = (card % NUM_RANKS) * NUM_SUITS + card // NUM_RANKS
            needed = _NEEDED[mask]
        elif feasible:
            break
        else:
            mask, forced, needed = 0, -1, 0
        joker_end = mask == 4 and forced >= 0
        depth = 0
        sizes[0] = -1  # not expanded yet
        result = _EXHAUSTED
        state = start
        while True:
            if sizes[depth] < 0:  # expand the state at this depth
                nodes += 1
                if nodes > node_budget:
                    return False, nodes, False, 0, 0, 0, 0, 0
                found = 0
                step = depth
                position, suit = step // NUM_SUITS, step % NUM_SUITS
                run_shift = 9 * suit
                if position == _ACE_HIGH:  # the kept aces end this suit's sequences (checked at the king)
                    successors[depth, 0] = state & ~((np.int64(0x1FF) << run_shift)
                                                     | (np.int64(7) << (_KEPT_OFFSET + 3 * suit)))
                    records[depth, 0] = 0
                    found = 1
                else:
                    card_here = suit * NUM_RANKS + position
                    room_next = most[card_here + 1] if position < _ACE_HIGH - 1 else 0
                    later = 0
                    for other in range(suit + 1, NUM_SUITS):
                        later += capped[other * NUM_RANKS + position]
                    runs = state >> run_shift & 0x1FF
                    short1, short2, long = runs & 7, runs >> 3 & 7, runs >> 6 & 7
                    kept = state >> (_KEPT_OFFSET + 3 * suit) & 7
                    group = state >> _GROUP_OFFSET & 0xFF
                    grouped, largest = group & 31, group >> 5
                    balance = state >> _BALANCE_OFFSET & 63
                    shortfall = _others_shortfall(state, suit, position, ahead)
                    cleared = state & ~((np.int64(0x1FF) << run_shift) | (np.int64(0xFF) << _GROUP_OFFSET)
                                        | (np.int64(63) << _BALANCE_OFFSET)
                                        | (np.int64(7) << (_KEPT_OFFSET + 3 * suit)))
                    supply_next, supply_after = ahead[suit, position + 1], ahead[suit, position + 2]
                    # choices that set a mask entry not yet covered come first
                    for wanted in range(2):
                        for c in range(choice_counts[card_here]):
                            count, delta = choice_rows[card_here, c, 0], choice_rows[card_here, c, 1]
                            puts, record = choice_rows[card_here, c, 2], choice_rows[card_here, c, 3]
                            if step == forced and not record & needed:
                                continue
                            new_entry = False
                            for m in range(_MASKS):
                                if record & _NEEDED[m] and (upper[m] & ~covered[m]) >> card_here & 1:
                                    new_entry = True
                            if new_entry != (wanted == 0):
                                continue
                            if balance + delta + shortfall > budget[step]:
                                continue
                            key = _split_key(position, short1, short2, long, count)
                            if split_sizes[key] < 0:
                                _fill_splits(split_sizes, split_rows, key, position, short1, short2, long, count)
                            for s in range(split_sizes[key]):
                                new1, new2 = np.int64(split_rows[key, s, 0]), np.int64(split_rows[key, s, 1])
                                paid, new_long, new_grouped, new_largest = _split_move(
                                    position, suit, grouped, largest, new1, new2, np.int64(split_rows[key, s, 2]),
                                    np.int64(split_rows[key, s, 3]), room_next, base, later, shortfall,
                                    supply_next, supply_after, balance + delta, budget[step])
                                if not paid:
                                    continue
                                new_kept = kept
                                if position == 0:
                                    new_kept = np.int64(split_rows[key, s, 4])
                                elif position == _ACE_HIGH - 1 and not new2 <= kept <= new2 + new_long:
                                    continue  # the kept aces must end this suit's sequences
                                if found == _MOST_SUCCESSORS:
                                    return False, nodes, False, 0, 0, 0, 0, 0
                                nxt = cleared | (new1 | new2 << 3 | new_long << 6) << run_shift
                                nxt |= (new_grouped | new_largest << 5) << _GROUP_OFFSET
                                nxt |= (balance + delta) << _BALANCE_OFFSET
                                nxt |= new_kept << (_KEPT_OFFSET + 3 * suit)
                                if puts:
                                    nxt |= _PLACED_BIT
                                successors[depth, found], records[depth, found] = nxt, record
                                found += 1
                sizes[depth], taken[depth] = found, 0
            if taken[depth] < sizes[depth]:
                nxt = successors[depth, taken[depth]]
                taken[depth] += 1
                if depth + 1 == _NUM_STEPS:
                    balance = (nxt >> _BALANCE_OFFSET & 63) - _BALANCE_ZERO
                    if joker_end:
                        good = free_jokers + 1 <= balance <= free_jokers + hand_jokers
                    else:
                        good = (free_jokers <= balance <= free_jokers + hand_jokers
                                and (nxt & _PLACED_BIT != 0 or balance > free_jokers))
                    if good:
                        result = _FOUND
                        break
                    continue
                # a dead state below the forced step is dead for every question of its end
                meta = (epoch << 20 | (2 + target if depth + 1 <= forced else int(joker_end)) << 6
                        | (depth + 1))
                slot = _hash(nxt ^ meta * np.int64(0x9E3779B97F4A7C15)) & (_MEMO_SLOTS - 1)
                dead = False
                while memo_keys[slot] >> 20 == epoch:
                    if memo_keys[slot] == meta and memo_states[slot] == nxt:
                        dead = True
                        break
                    slot = (slot + 1) & (_MEMO_SLOTS - 1)
                if dead:
                    continue
                depth += 1
                state = nxt
                sizes[depth] = -1
            else:  # every successor failed: remember the state as dead
                meta = epoch << 20 | (2 + target if depth <= forced else int(joker_end)) << 6 | depth
                slot = _hash(state ^ meta * np.int64(0x9E3779B97F4A7C15)) & (_MEMO_SLOTS - 1)
                probes = 0
                while memo_keys[slot] >> 20 == epoch:
                    slot = (slot + 1) & (_MEMO_SLOTS - 1)
                    probes += 1
                    if probes > 64:
                        return False, nodes, False, 0, 0, 0, 0, 0
                memo_keys[slot], memo_states[slot] = meta, state
                if depth == 0:
                    break
                depth -= 1
                state = successors[depth - 1, taken[depth - 1] - 1] if depth else start
        if result == _FOUND:
            feasible = True
            end = successors[_NUM_STEPS - 1, taken[_NUM_STEPS - 1] - 1]
            uses_hand_joker = (end >> _BALANCE_OFFSET & 63) - _BALANCE_ZERO > free_jokers
            for step in range(_NUM_STEPS):
                position, suit = step // NUM_SUITS, step % NUM_SUITS
                if position < _ACE_HIGH:
                    here = suit * NUM_RANKS + position
                    _record_masks(records[step, taken[step] - 1], here, uses_hand_joker, spare[here] > 0, covered)
    if not feasible:
        return True, nodes, False, 0, 0, 0, 0, 0
    return True, nodes, True, covered[0] & upper[0], covered[1] & upper[1], covered[2] & upper[2], covered[3], \
        covered[4] & upper[4]


class _Search:
    """The search's work arrays, kept between calls (2.2 MB)."""

    def __init__(self) -> None:
        self.choice_rows = np.zeros((NUM_CARDS, 64, 4), dtype=np.int64)
        self.choice_counts = np.zeros(NUM_CARDS, dtype=np.int64)
        self.successors = np.zeros((_NUM_STEPS, _MOST_SUCCESSORS), dtype=np.int64)
        self.records = np.zeros((_NUM_STEPS, _MOST_SUCCESSORS), dtype=np.int8)
        self.sizes = np.zeros(_NUM_STEPS + 1, dtype=np.int64)
        self.taken = np.zeros(_NUM_STEPS + 1, dtype=np.int64)
        self.memo_states = np.zeros(_MEMO_SLOTS, dtype=np.int64)
        self.memo_keys = np.zeros(_MEMO_SLOTS, dtype=np.int64)
        self.epoch = 0
        self.nodes = 0

    def masks(self, counts: np.ndarray, hand_jokers: int, free_jokers: int, need_hand_card: bool, limit: int,
              budget: int | None = None) -> tuple[bool, int, int, int, int, int] | None:
        """``search``'s answer (feasible and the five masks), or None when it gave up after
        expanding ``budget`` states (at most ``NODE_BUDGET``, which None means)."""
        self.epoch += 1
        budget = NODE_BUDGET if budget is None else min(budget, NODE_BUDGET)
        done, self.nodes, *answer = search(counts, hand_jokers, free_jokers, need_hand_card, limit, *_SPLIT_MEMO,
                                           self.choice_rows, self.choice_counts, self.successors, self.records,
                                           self.sizes, self.taken, self.memo_states, self.memo_keys, self.epoch,
                                           budget)
        return tuple(answer) if done else None


_search = _Search()
