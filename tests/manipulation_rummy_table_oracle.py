"""An independent oracle for the Manipulation Rummy table solver: integer programs.

The same questions as ``rummy_envs.games.manipulation_rummy.table_solver``, asked of ``scipy.optimize.milp``:
every legal group and sequence is a variable counting how often it is on the table, and a
table is legal when those counts add up to the table's identity counts exactly. For a
commit, the cards that may still go down are variables too. Mask entries are answered the
slow, obvious way: make the move on a copy of the problem, then ask whether a legal
COMMIT is still reachable. Nothing here shares code with the dynamic programme.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from rummy_envs.games.manipulation_rummy.table_solver import CommitOptions, CommitProblem

CARDS = 52


@cache
def candidate_melds() -> tuple[tuple[int, ...], ...]:
    """Every legal group (3-4 distinct suits of one rank) and sequence (ace low or high)."""
    melds = []
    for rank in range(13):
        for size in (3, 4):
            for suits in _subsets(range(4), size):
                melds.append(tuple(suit * 13 + rank for suit in suits))
    for suit in range(4):
        for start in range(13):
            for end in range(start + 2, 14):
                if start == 0 and end == 13:
                    continue
                melds.append(tuple(suit * 13 + position % 13 for position in range(start, end + 1)))
    return tuple(melds)


def _subsets(items, size):
    items = list(items)
    if size == 0:
        yield ()
        return
    for i, item in enumerate(items):
        for rest in _subsets(items[i + 1 :], size - 1):
            yield (item, *rest)


@cache
def _meld_matrix() -> np.ndarray:
    matrix = np.zeros((CARDS, len(candidate_melds())))
    for column, meld in enumerate(candidate_melds()):
        for card in meld:
            matrix[card, column] += 1
    return matrix


def oracle_is_legal(counts, max_copies: int | None) -> bool:
    """Whether the identity counts split into legal melds (an integer program)."""
    if max_copies is not None and max(counts) > max_copies:
        return False
    matrix = _meld_matrix()
    result = milp(
        c=np.zeros(matrix.shape[1]),
        constraints=[LinearConstraint(matrix, np.array(counts), np.array(counts))],
        integrality=np.ones(matrix.shape[1]),
        bounds=Bounds(0, max(counts) if max(counts) else 0),
    )
    return result.status == 0


def oracle_feasible(problem: CommitProblem) -> bool:
    """Whether some legal COMMIT can follow: choose hand cards x, freed table jokers r,
    wildcard identities w and hand jokers used j, then split the final table into melds."""
    limit = problem.max_copies if problem.max_copies is not None else 64
    melds = _meld_matrix()
    num_melds = melds.shape[1]
    # variables: melds | x (52) | r (52) | w (52) | j
    size = num_melds + 3 * CARDS + 1
    x0, r0, w0, j = num_melds, num_melds + CARDS, num_melds + 2 * CARDS, num_melds + 3 * CARDS
    rows, lower, upper = [], [], []

    def row(entries: dict[int, float], low: float, high: float) -> None:
        vector = np.zeros(size)
        for index, value in entries.items():
            vector[index] += value
        rows.append(vector)
        lower.append(low)
        upper.append(high)

    for card in range(CARDS):
        # melds covering the card == table - r + x + w
        entries = {m: melds[card, m] for m in np.flatnonzero(melds[card])}
        entries.update({r0 + card: 1.0, x0 + card: -1.0, w0 + card: -1.0})
        row(entries, problem.table[card], problem.table[card])
        row({r0 + card: -1.0, x0 + card: 1.0, w0 + card: 1.0}, -problem.table[card], limit - problem.table[card])
        row({r0 + card: 1.0, x0 + card: -1.0}, -np.inf, problem.spare_naturals[card])
    wildcard_balance = {w0 + card: 1.0 for card in range(CARDS)}
    wildcard_balance.update({r0 + card: -1.0 for card in range(CARDS)})
    wildcard_balance[j] = -1.0
    row(wildcard_balance, problem.free_jokers, problem.free_jokers)
    if problem.need_hand_card:
        hand_use = {x0 + card: 1.0 for card in range(CARDS)}
        hand_use[j] = 1.0
        row(hand_use, 1, np.inf)
    high = np.concatenate(
        [
            np.full(num_melds, limit),
            np.array(problem.hand, dtype=float),
            np.array(problem.jokers_at, dtype=float),
            np.full(CARDS, limit),
            [problem.hand_jokers],
        ]
    )
    result = milp(
        c=np.zeros(size),
        constraints=[LinearConstraint(np.array(rows), np.array(lower), np.array(upper))],
        integrality=np.ones(size),
        bounds=Bounds(np.zeros(size), high),
    )
    return result.status == 0


def _add(values: tuple[int, ...], card: int, amount: int) -> tuple[int, ...]:
    return values[:card] + (values[card] + amount,) + values[card + 1 :]


def moves(problem: CommitProblem) -> dict[str, dict[int, CommitProblem]]:
    """Every placement the engine would allow by the card counts alone, as the problem it
    leads to (the effect of each move, written out independently of the solver)."""
    out: dict[str, dict[int, CommitProblem]] = {key: {} for key in ("place", "joker_as", "freed_as", "replace_from_hand", "replace_from_table")}
    p = problem
    for card in range(CARDS):
        if p.hand[card]:
            out["place"][card] = replace(
                p,
                hand=_add(p.hand, card, -1),
                table=_add(p.table, card, 1),
                spare_naturals=_add(p.spare_naturals, card, 1),
                need_hand_card=False,
            )
        if p.hand_jokers:
            out["joker_as"][card] = replace(
                p, hand_jokers=p.hand_jokers - 1, table=_add(p.table, card, 1), jokers_at=_add(p.jokers_at, card, 1), need_hand_card=False
            )
        if p.free_jokers:
            out["freed_as"][card] = replace(
                p, free_jokers=p.free_jokers - 1, table=_add(p.table, card, 1), jokers_at=_add(p.jokers_at, card, 1)
            )
        if p.jokers_at[card] and p.hand[card]:
            out["replace_from_hand"][card] = replace(
                p, hand=_add(p.hand, card, -1), jokers_at=_add(p.jokers_at, card, -1), free_jokers=p.free_jokers + 1, need_hand_card=False
            )
        if p.jokers_at[card] and p.spare_naturals[card]:
            out["replace_from_table"][card] = replace(
                p,
                table=_add(p.table, card, -1),
                jokers_at=_add(p.jokers_at, card, -1),
                spare_naturals=_add(p.spare_naturals, card, -1),
                free_jokers=p.free_jokers + 1,
            )
    return out


def oracle_options(problem: CommitProblem) -> CommitOptions:
    """The commit options by brute force: one integer program per possible move."""
    masks = {key: sum(1 << card for card, nxt in options.items() if oracle_feasible(nxt)) for key, options in moves(problem).items()}
    feasible = oracle_feasible(problem)
    commit = (
        not problem.free_jokers
        and not problem.need_hand_card
        and oracle_is_legal(problem.table, problem.max_copies)
    )
    if not feasible:
        return CommitOptions(False, False, 0, 0, 0, 0, 0)
    return CommitOptions(feasible=True, commit=commit, **masks)
