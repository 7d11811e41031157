"""Rule-based agents for Manipulation Rummy (``manipulation_rummy``).

Both read only the ``ManipulationView``: the legal actions it lists are exact (the table
solver offers a placement only when a legal COMMIT can still follow), so a commit is built
one placement at a time and can never strand the agent.

- ``novice`` melds whenever it can: every natural card the mask offers (the most valuable
  first), then its jokers, then commits; it knocks at the first chance.
- ``heuristic`` plans each commit whole with the solver (``table_solver.commit_options``
  and ``after`` on the commit problem rebuilt from the view): the set of hand cards worth
  the most that go down together (a branch and bound), its jokers declared where the
  others are least likely to hold the natural that frees them; at a meld decision that is
  not the turn's last it draws again instead of a commit that leaves cards behind when the
  next card likely takes the whole hand out; it knocks only when its hand is likely the
  lowest at the table.

Both read the rules options from ``view.rules``: the heuristic takes the identity limit and
the decks for the solver's problem and the unseen cards, and ``max_draws`` for the turn's
last meld decision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs.cards import NUM_RANKS
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.games.manipulation_rummy import ManipulationView, Phase

CARDS = M.NUM_CARDS
VALUES = M.CARD_VALUES  # hand values by card id, the joker (52) last
MOVE_START = {
    "place": M.PLACE,
    "joker_as": M.JOKER_AS,
    "replace_from_hand": M.REPLACE_FROM_HAND,
    "replace_from_table": M.REPLACE_FROM_TABLE,
    "freed_as": M.FREED_AS,
}
LOW_CARD_VALUE = 3  # a small hand value per card an opponent might hold at the least
JOKER_VALUE = M.JOKER_VALUE
SEARCH_BUDGET = 200  # solver calls one commit search may make


def offered(legal: tuple[int, ...], move: str) -> list[int]:
    """Identities at which ``move`` is legal now."""
    start = MOVE_START[move]
    return [a - start for a in legal if start <= a < start + CARDS]


def commit_problem(view: ManipulationView) -> TS.CommitProblem:
    """The solver's problem for the commit the viewer is building (or about to start)."""

    def counts(cards: tuple[int, ...]) -> tuple[int, ...]:
        out = [0] * CARDS
        for card in cards:
            if card < CARDS:
                out[card] += 1
        return tuple(out)

    return TS.CommitProblem(
        table=counts(view.table),
        jokers_at=counts(view.table_jokers),
        spare_naturals=counts(view.spare_naturals),
        hand=counts(view.hand),
        hand_jokers=view.hand.count(M.JOKER),
        free_jokers=view.freed_jokers,
        need_hand_card=not view.placed,
        max_copies=view.rules.identity_limit,
    )


class _ManipulationAgent(ABC):
    """Phase dispatch shared by both agents; subclasses decide melds and knocks."""

    name = "manipulation"

    def __init__(self, game: str = "manipulation_rummy", seed: int | None = None) -> None:
        self.game = game
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Nothing to forget between episodes: every decision reads the view afresh."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: ManipulationView) -> int:
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"{self.name} agent asked to act with no legal action (phase {view.phase.name})")
        if view.phase in (Phase.TURN_START, Phase.END_OF_TURN):
            if M.KNOCK in legal and self.knock(view):
                return M.KNOCK
            return M.DRAW if M.DRAW in legal else M.END_TURN
        return self.meld(view)

    @abstractmethod
    def knock(self, view: ManipulationView) -> bool:
        """Whether to knock now (a knock is legal)."""

    @abstractmethod
    def meld(self, view: ManipulationView) -> int:
        """The next action of the meld decision."""


class ManipulationNoviceAgent(_ManipulationAgent):
    """Meld everything the mask allows as soon as possible, knock at the first chance."""

    name = "novice"

    def knock(self, view: ManipulationView) -> bool:
        return True

    def meld(self, view: ManipulationView) -> int:
        legal = view.legal_actions
        naturals = offered(legal, "place")
        if naturals:
            return M.PLACE + max(naturals, key=lambda c: (VALUES[c], -c))
        for move in ("joker_as", "freed_as"):
            cards = offered(legal, move)
            if cards:
                return MOVE_START[move] + cards[0]
        if M.COMMIT in legal:
            return M.COMMIT
        for move in ("replace_from_hand", "replace_from_table"):
            cards = offered(legal, move)
            if cards:
                return MOVE_START[move] + cards[0]
        return M.NO_MELD if M.NO_MELD in legal else M.ABORT


class ManipulationHeuristicAgent(_ManipulationAgent):
    """Sheds the most hand value per commit (a branch and bound over the solver's exact
    masks), declares jokers where others are least likely to free them, draws again when
    the next card likely takes the whole hand out, and knocks when likely lowest."""

    name = "heuristic"
    draw_for_out = 0.2  # draw again rather than commit when the next card goes out with this chance
    out_hand_size = 5  # that chance is judged for hands of at most this many cards

    def __init__(self, game: str = "manipulation_rummy", seed: int | None = None) -> None:
        super().__init__(game, seed)
        self.pending: list[tuple[TS.CommitProblem, int]] = []  # the commit in play: (problem expected, action)

    def reset(self) -> None:
        """Forget the commit in progress."""
        self.pending = []

    def knock(self, view: ManipulationView) -> bool:
        # a hand of k cards holds at least about k * LOW_CARD_VALUE; a tie or a lower hand wins instead
        return view.hand_value < LOW_CARD_VALUE * min(view.hand_sizes[1:])

    def meld(self, view: ManipulationView) -> int:
        legal = view.legal_actions
        problem = commit_problem(view)
        if self.pending:
            expected, action = self.pending.pop(0)
            if expected == problem and action in legal:
                return action
            self.pending = []
        hidden = sum(view.hand_sizes[1:])
        plan = plan_commit(problem, view.rules.decks, hidden / max(1, hidden + view.stock_size))
        if plan is None or (not view.placed and not self.meld_now(view, plan)):
            return M.NO_MELD if M.NO_MELD in legal else M.ABORT
        steps, current = [], problem
        for move, card in plan.moves:
            steps.append((current, MOVE_START[move] + card))
            current = TS.after(current, move, card)
        steps.append((current, M.COMMIT))
        self.pending = steps[1:]
        return steps[0][1]

    def meld_now(self, view: ManipulationView, plan: CommitPlan) -> bool:
        """Commit now, unless another meld decision follows this turn (``max_draws``), the
        commit leaves cards behind, and the next card would likely let the whole hand go down
        instead (worth the out bonus and the others' hands)."""
        last_decision = view.draws >= view.rules.max_draws - 1
        if plan.cards == len(view.hand) or last_decision or len(view.hand) > self.out_hand_size:
            return True
        return out_chance(view) < self.draw_for_out


@dataclass(frozen=True)
class CommitPlan:
    """A whole commit: its placements in order and what it takes from the hand."""

    moves: tuple[tuple[str, int], ...]  # (a TS.MOVES name, an identity)
    shed: int  # hand value that goes down
    cards: int  # hand cards that go down, jokers included


def without_card(problem: TS.CommitProblem, card: int) -> TS.CommitProblem:
    """The problem with every copy of natural ``card`` out of the hand (left out of the commit)."""
    hand = problem.hand
    return replace(problem, hand=hand[:card] + (0,) + hand[card + 1:])


def most_valuable_naturals(problem: TS.CommitProblem, budget: int = SEARCH_BUDGET
                           ) -> tuple[tuple[int, ...], TS.CommitProblem] | None:
    """The hand's naturals worth the most that go down together in one commit, and the
    problem once they are placed (with every other natural out of the hand), or None when
    no natural can go down.

    Branch and bound over the solver: place the most valuable placeable card, or leave out
    every copy of it; the bound is the value of every card still placeable. The first leaf
    is the greedy commit (the novice's), so a search cut at ``budget`` solver calls is never
    worse than greedy."""
    best: list[Any] = [-1, None]
    calls = 0

    def search(p: TS.CommitProblem, placed: tuple[int, ...], value: int) -> None:
        nonlocal calls
        if calls >= budget:
            return
        calls += 1
        options = TS.commit_options(p)
        if not options.feasible:
            return
        placeable = [c for c in range(CARDS) if p.hand[c] and options.place >> c & 1]
        if not placeable:
            if placed and value > best[0]:
                best[0], best[1] = value, (placed, replace(p, hand=(0,) * CARDS))
            return
        if value + sum(VALUES[c] * p.hand[c] for c in placeable) <= best[0]:
            return
        card = max(placeable, key=lambda c: (VALUES[c], -c))
        search(TS.after(p, "place", card), placed + (card,), value + VALUES[card])
        search(without_card(p, card), placed, value)

    search(problem, (), 0)
    return best[1]


def joker_exposure(problem: TS.CommitProblem, kept: tuple[int, ...], decks: int, opponent_share: float
                   ) -> Callable[[int], tuple[float, int, int]]:
    """Order joker identities by how likely another player can free a joker declared so:
    each copy of the natural neither in the kept hand nor on the table is an opponent's with
    probability ``opponent_share`` (their cards over all unseen cards), and a natural on the
    table frees it for anyone. Ties go to identities the kept hand holds, which can free the
    joker itself later."""
    naturals = [t - j for t, j in zip(problem.table, problem.jokers_at)]

    def exposure(card: int) -> tuple[float, int, int]:
        unseen = max(0, decks - kept[card] - naturals[card])
        return (unseen * opponent_share + naturals[card], -kept[card], card)

    return exposure


def finish_commit(problem: TS.CommitProblem, order: Callable[[int], tuple[float, int, int]],
                  budget: int = SEARCH_BUDGET) -> list[tuple[str, int]] | None:
    """Moves that take a commit with nothing left to place from the hand to a legal COMMIT
    (freed jokers declared, table jokers freed by table naturals): a depth-first search
    over the solver's masks, which never dead-end; None past ``budget`` solver calls."""
    seen: set[TS.CommitProblem] = set()

    def search(p: TS.CommitProblem) -> list[tuple[str, int]] | None:
        if p in seen or len(seen) >= budget:
            return None
        seen.add(p)
        options = TS.commit_options(p)
        if options.commit:
            return []
        moves = [("freed_as", c) for c in sorted(C.from_mask(options.freed_as), key=order)]
        moves += [("replace_from_table", c) for c in C.from_mask(options.replace_from_table)]
        for move, card in moves:
            rest = search(TS.after(p, move, card))
            if rest is not None:
                return [(move, card), *rest]
        return None

    return search(problem)


def plan_commit(problem: TS.CommitProblem, decks: int, opponent_share: float) -> CommitPlan | None:
    """The commit that sheds the most natural value, with every hand joker that still fits
    going down too (25 points each; keeping one for later did not pay in tournaments), each
    joker declared where others are least likely to free it; None when no commit is
    possible. ``opponent_share``: the others' cards over all cards the player cannot see."""
    found = most_valuable_naturals(problem)
    placed, rest = found if found is not None else ((), replace(problem, hand=(0,) * CARDS))
    moves = [("place", card) for card in placed]
    kept = tuple(h - placed.count(c) for c, h in enumerate(problem.hand))
    order = joker_exposure(rest, kept, decks, opponent_share)
    jokers = 0
    while rest.hand_jokers:
        fits = TS.commit_options(rest).joker_as
        if not fits:
            break
        card = min(C.from_mask(fits), key=order)
        moves.append(("joker_as", card))
        rest = TS.after(rest, "joker_as", card)
        jokers += 1
    if problem.need_hand_card and not placed and not jokers:
        return None
    finish = finish_commit(replace(rest, hand_jokers=0), order)
    if finish is None:
        return None
    shed = sum(VALUES[c] for c in placed) + JOKER_VALUE * jokers
    return CommitPlan(tuple(moves + finish), shed, len(placed) + jokers)


def unseen_cards(view: ManipulationView) -> list[int]:
    """Counts per card id (jokers last) of the cards the viewer cannot see: in other hands
    or the stock."""
    counts = [view.rules.decks] * CARDS + [view.rules.total_jokers]
    for card in view.hand:
        counts[card] -= 1
    counts[M.JOKER] -= len(view.table_jokers) + view.freed_jokers
    naturals = list(view.table)
    for card in view.table_jokers:
        naturals.remove(card)
    for card in naturals:
        counts[card] -= 1
    return counts


def goes_out(problem: TS.CommitProblem) -> bool:
    """Whether the whole hand (jokers included) can go down in one commit: each placement
    keeps every card left placeable, which the exact masks check card by card."""
    p = problem
    while any(p.hand):
        options = TS.commit_options(p)
        if any(p.hand[c] and not options.place >> c & 1 for c in range(CARDS)):
            return False
        p = TS.after(p, "place", next(c for c in range(CARDS) if p.hand[c]))
    while p.hand_jokers:
        fits = TS.commit_options(p).joker_as
        if not fits:
            return False
        p = TS.after(p, "joker_as", (fits & -fits).bit_length() - 1)
    return TS.commit_options(p).feasible


def out_chance(view: ManipulationView) -> float:
    """The chance that the hand plus the next card drawn goes out on the table as it is
    (asked outside a commit: at the first draw or the knock decision).

    Only cards that could free a card stuck in the hand are tried: a joker, or a card of a
    stuck card's rank or within two ranks of it in its suit (any other card leaves it stuck,
    short of a rare rearrangement of the table); with no card stuck on its own, every card."""
    unseen = unseen_cards(view)
    total = sum(unseen)
    start = commit_problem(view)
    placeable = TS.commit_options(start).place
    stuck = [c for c in range(CARDS) if start.hand[c] and not placeable >> c & 1]
    if not total or len(stuck) > 2:  # one more card frees three stuck cards too rarely to count
        return 0.0
    if stuck:
        tried = {M.JOKER} | {c for c in range(CARDS) for s in stuck
                             if c % NUM_RANKS == s % NUM_RANKS or (c // NUM_RANKS == s // NUM_RANKS
                                                                   and abs(c - s) <= 2)}
    else:
        tried = set(range(M.NUM_IDS))
    chance = 0
    for card in sorted(tried):
        if not unseen[card]:
            continue
        if card == M.JOKER:
            drawn = replace(start, hand_jokers=start.hand_jokers + 1)
        else:
            drawn = replace(start, hand=start.hand[:card] + (start.hand[card] + 1,) + start.hand[card + 1:])
        if goes_out(drawn):
            chance += unseen[card]
    return chance / total


def leaf_value(state: M.ManipulationState) -> list[float]:
    """Minus each seat's hand value, centred: the search's estimate of a rollout cut short
    (the cards still held are what a hand costs)."""
    values = [-state.player_view(p).hand_value for p in range(state.config.num_players)]
    mean = sum(values) / len(values)
    return [v - mean for v in values]
