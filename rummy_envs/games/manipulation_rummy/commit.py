"""The meld commit (docs/manipulation_rummy.md#commit) in the terms of its card counts, and
the plain statement of when it may end with ``COMMIT``.

The table may be rearranged freely, so all that matters of it is the multiset of card
identities on it: the natural cards, plus every joker at its declared identity.
``CommitProblem`` is a commit in progress in those terms, ``after`` the effect of each
placement on it, and ``CommitOptions`` what may happen next.

Read here, stated plainly (and slowly: they search every possibility, which only small
tables and commits allow):
- ``is_meld``: one legal group or sequence;
- ``table_is_legal``: the table splits into legal melds, within the identity limit;
- ``commit_is_legal``: **when a commit may end with COMMIT**;
- ``options_by_search``: which placements keep a legal COMMIT reachable (the mask).
The engine asks the same questions of ``table_solver`` (``is_legal``, ``commit_options``),
a dynamic programme fast enough for every move; tests/test_manipulation_rummy_table_solver.py
checks that both give the same answers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations

from rummy_envs.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS


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
JOKERS_BEYOND_TABLE = "CommitProblem.jokers_at must not exceed table at any identity"
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


def possible_moves(problem: CommitProblem) -> Iterator[tuple[str, int]]:
    """Every placement the counts allow (``after`` accepts each), legal COMMIT or not."""
    p = problem
    for card in range(NUM_CARDS):
        if p.hand[card]:
            yield "place", card
        if p.hand_jokers:
            yield "joker_as", card
        if p.free_jokers:
            yield "freed_as", card
        if p.jokers_at[card] and p.hand[card]:
            yield "replace_from_hand", card
        if p.jokers_at[card] and p.spare_naturals[card]:
            yield "replace_from_table", card


def is_meld(cards: Sequence[int]) -> bool:
    """Whether ``cards`` (identities) form one legal meld: a *group*, three or four cards of
    one rank in different suits, or a *sequence*, three or more cards of one suit in a row,
    the ace low (A-2-3) or high (Q-K-A) but not both, with no wrap (K-A-2 is none). No meld
    holds two identical cards (docs/manipulation_rummy.md#cards-and-melds)."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return False
    ranks = sorted(card % NUM_RANKS for card in cards)
    suits = {card // NUM_RANKS for card in cards}
    if len(set(ranks)) == 1:
        return len(cards) <= NUM_SUITS
    if len(suits) != 1:
        return False
    if ranks[0] == 0 and ranks[-1] == NUM_RANKS - 1:  # an ace with a king: the ace is high
        ranks = ranks[1:] + [NUM_RANKS]
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def table_is_legal(counts: Sequence[int], max_copies: int | None = None) -> bool:
    """Whether a table of ``counts[c]`` cards of each identity ``c`` is legal: no identity more
    than ``max_copies`` times (``None``: no limit), and the cards split into legal melds,
    however they lie now (docs/manipulation_rummy.md#cards-and-melds). A plain search, slow
    on large tables that do not split (the engine asks ``table_solver.is_legal``)."""
    if max_copies is not None and any(n > max_copies for n in counts):
        return False
    return splits_into_melds(tuple(counts))


@lru_cache(maxsize=1 << 16)
def splits_into_melds(counts: tuple[int, ...]) -> bool:
    """Whether the cards split into legal melds: the lowest card left (by id) must be in some
    meld of cards left, all of them at or above it; try each such meld, then split the rest."""
    if not any(counts):
        return True
    lowest = next(card for card, n in enumerate(counts) if n)
    return any(
        splits_into_melds(tuple(n - (card in meld) for card, n in enumerate(counts)))
        for meld in _melds_from(lowest)
        if all(counts[card] for card in meld) and is_meld(meld)
    )


def _melds_from(card: int) -> Iterator[tuple[int, ...]]:
    """The sets of identities that may be a meld whose lowest id is ``card``: with two or
    three cards of its rank in later suits, or with the next cards of its suit (an ace also
    after a queen and a king, taken high)."""
    later_suits = range(card + NUM_RANKS, NUM_CARDS, NUM_RANKS)
    for size in (2, 3):
        for others in combinations(later_suits, size):
            yield (card, *others)
    ace = card - card % NUM_RANKS
    for end in range(card + 3, ace + NUM_RANKS + 1):
        yield tuple(range(card, end))
    if card == ace:
        for start in range(ace + 1, ace + NUM_RANKS - 1):
            yield (*range(start, ace + NUM_RANKS), card)


def commit_is_legal(problem: CommitProblem) -> bool:
    """**The commit rule**: a commit in progress may end with ``COMMIT`` exactly when
    (a) at least one card went from the hand to the table (a natural placed or freeing a
    joker, or a hand joker placed), (b) every joker freed in it is back on the table, and
    (c) the table it leaves is legal (``table_is_legal``: legal melds, within the identity
    limit), whatever the arrangement the table had before.

    What the rules forbid besides (a table card back to a hand, keeping a freed joker, a
    joker changing identity without being freed by a natural of its identity) no placement
    can do; see docs/manipulation_rummy.md#commit."""
    return (not problem.need_hand_card and problem.free_jokers == 0
            and table_is_legal(problem.table, problem.max_copies))


@lru_cache(maxsize=1 << 16)
def commit_reachable(problem: CommitProblem) -> bool:
    """Whether some sequence of placements (``possible_moves``) leads to a commit that may
    end with ``COMMIT``. Placements only ever lower ``3 * (hand cards and jokers) + 2 *
    spare naturals + freed jokers``, so the search ends."""
    return commit_is_legal(problem) or any(
        commit_reachable(after(problem, move, card)) for move, card in possible_moves(problem)
    )


def options_by_search(problem: CommitProblem) -> CommitOptions:
    """**The mask rule**, by brute force: every placement after which a legal ``COMMIT`` is
    still reachable, and whether ``COMMIT`` is legal now. ``table_solver.commit_options``
    gives the same answers fast."""
    if not commit_reachable(problem):
        return NOTHING
    masks = dict.fromkeys(MOVES, 0)
    for move, card in possible_moves(problem):
        if commit_reachable(after(problem, move, card)):
            masks[move] |= 1 << card
    return CommitOptions(feasible=True, commit=commit_is_legal(problem), **masks)
