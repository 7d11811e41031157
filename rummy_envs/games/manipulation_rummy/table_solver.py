"""Exact table solver for Manipulation Rummy: legality, commit masks and arrangements
(docs/table_solver.md).

In Manipulation Rummy the table may be rearranged freely, so whether it is legal depends
only on the multiset of card identities on it (natural cards plus each joker's declared
identity): ``counts[c]`` cards of identity ``c`` (``rank + 13 * suit``). A table is legal
when that multiset splits into groups (3 or 4 cards of one rank, distinct suits) and
sequences (3+ consecutive cards of one suit, the ace low or high, no wrap). ``commit``
states those rules plainly (``table_is_legal``, ``commit_is_legal``, ``options_by_search``);
this solver answers the same questions fast enough for every move:

- ``is_legal(counts, max_copies)``: is the table legal?
- ``arrange(counts, max_copies)``: one legal arrangement of it, or None;
- ``commit_options(problem)``: in a commit in progress (a ``CommitProblem``), which next
  placements keep a legal COMMIT reachable, and whether COMMIT is legal now.

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
action. ``is_legal`` is the same programme's forward pass with nothing to place.

The programme exists twice. ``solver_compiled`` runs it as one numba function over arrays
(what the engine calls: 5-15x faster on the positions of play); the pure-Python solver
(``solver_layers`` with ``solver_steps`` and ``solver_moves``: dicts while the layers are
small, numpy arrays for large ones) is the readable reference, and the tests hold the two
to the same answers and both to the integer-program oracle.

Where the parts are:
- ``commit``: ``CommitProblem``, ``CommitOptions``, ``after`` (one placement's effect) and
  the plain statement of the rules;
- ``solver_steps``: the packed state and one identity step (``_step_outcomes``);
- ``solver_moves``: a commit step's choices and moves, scored and memoised;
- ``solver_layers``: the pure forward and backward passes over layers (``_Commit``), the
  kept-ace sets, and the pure ``is_legal``;
- ``solver_compiled``: the same programme compiled (``compiled_steps``: its identity
  step), and the path ``arrange`` reads its melds from;
- ``solver_witness``: the commit masks by one solution per entry, depth first, which
  ``commit_options`` asks when the programme's layers grow large (docs/table_solver.md#speed);
- this module: the public entry points and ``arrange``, which walks a legal table's
  programme back to concrete melds.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from operator import gt

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from rummy_envs.games.manipulation_rummy.commit import (JOKERS_BEYOND_TABLE, MOVES, NOTHING, CommitOptions, CommitProblem,
                                                       after)
from rummy_envs.games.manipulation_rummy.solver_compiled import (Workspace, arrangement_path, commit_options_compiled,
                                                                 is_legal_compiled, problem_counts, solving_in)
from rummy_envs.games.manipulation_rummy.solver_layers import _checked_counts
from rummy_envs.games.manipulation_rummy.solver_steps import (
    _FIELDS,
    ACE_HIGH,
    INITIAL,
    NUM_POSITIONS,
    NUM_STEPS,
    _advance,
    _identity,
    _unpack_runs,
)

__all__ = ["MOVES", "NOTHING", "CommitOptions", "CommitProblem", "Workspace", "after", "arrange", "commit_options",
           "is_legal"]
# Also here for benchmarks/bench_manipulation_rummy.py, which clears and sizes the memo
# table ``_commit_options`` (and ``solver_compiled.is_legal_compiled``'s).


def arrange(counts: Sequence[int], max_copies: int | None = None) -> list[tuple[int, ...]] | None:
    """One legal arrangement of the table, or None when there is none.

    Melds are tuples of identities: groups in suit order, sequences in rank order with an
    ace-high sequence ending in its ace. Sequences of one suit that meet are joined into
    one (A-K, not A-3 and 4-K).
    """
    checked = _checked_counts(counts, max_copies)
    path = None if checked is None else arrangement_path(checked)
    return None if path is None else _build_melds(path)


def _arrangement_path(counts: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """The solution path ``arrange`` reads its melds from (what ``solver_compiled``
    computes fast): the programme breadth first, each state reached first from the first
    state that reaches it, back from the first state after the last step; the state after
    each step and the cards that step put into groups, or None when the table is illegal."""
    parents: list[dict[int, tuple[int, int]]] = []
    states: dict[int, None] = {INITIAL: None}
    for step in range(NUM_STEPS):
        count = counts[_identity(step)[2]]
        layer: dict[int, tuple[int, int]] = {}
        for state in states:
            for nxt, to_groups in _advance(state, step, count):
                layer.setdefault(nxt, (state, to_groups))
        if not layer:
            return None
        parents.append(layer)
        states = dict.fromkeys(layer)
    path: list[tuple[int, int]] = []
    state = next(iter(states))
    for step in reversed(range(NUM_STEPS)):
        previous, to_groups = parents[step][state]
        path.append((state, to_groups))
        state = previous
    path.reverse()
    return path


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


def commit_options(problem: CommitProblem, workspace: Workspace | None = None) -> CommitOptions:
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

    ``workspace`` (a ``solver_compiled.Workspace``, optional) holds the solve's work arrays:
    a caller that keeps its own, as each env does, has its next solve resume this one even
    when other callers solve in between. The answer is the same with any.
    """
    if workspace is None:
        return _commit_options(problem)
    solving_in(workspace)
    try:
        return _commit_options(problem)
    finally:
        solving_in(None)


def _check_problem(problem: CommitProblem) -> None:
    """A ValueError naming what is wrong with the problem, if anything."""
    for name in ("table", "jokers_at", "spare_naturals", "hand"):
        values = getattr(problem, name)
        if len(values) != NUM_CARDS or min(values) < 0:
            raise ValueError(f"CommitProblem.{name} must hold {NUM_CARDS} counts >= 0, got {values!r}")
    if any(map(gt, problem.jokers_at, problem.table)):
        raise ValueError(JOKERS_BEYOND_TABLE)
    if problem.hand_jokers < 0 or problem.free_jokers < 0:
        raise ValueError("CommitProblem.hand_jokers and free_jokers must be >= 0")


@lru_cache(maxsize=4096)
def _commit_options(problem: CommitProblem) -> CommitOptions:
    """The answer, checked on a miss (a problem already in the cache was checked then)."""
    counts = problem_counts(problem)
    if counts is None:
        _check_problem(problem)
        raise ValueError(f"CommitProblem holds bad counts: {problem!r}")
    return commit_options_compiled(problem, counts)


def is_legal(counts: Sequence[int], max_copies: int | None = None) -> bool:
    """Whether ``counts[c]`` cards of each identity c split into legal groups and sequences,
    with no identity more than ``max_copies`` times (None: no limit)."""
    checked = _checked_counts(counts, max_copies)
    return checked is not None and is_legal_compiled(checked)
