"""Rule-based agents for Manipulation Rummy (``manipulation_rummy``).

Both read only the ``ManipulationView``: the legal actions it lists are exact (the table
solver offers a placement only when a legal COMMIT can still follow), so a commit is built
one placement at a time and can never strand the agent.

- ``novice`` melds whenever it can: every natural card the mask offers (the most valuable
  first), then its jokers, then commits; it knocks at the first chance.
- ``heuristic`` plans with the solver (``table_solver.after`` and ``commit_options`` on
  the commit problem rebuilt from the view): it frees table jokers with its own naturals,
  places each freed or hand joker where the most hand value can follow it, keeps its
  jokers for later unless they let it go out, reach the knock limit, or the stock is
  nearly gone, and knocks only when its hand is likely the lowest at the table.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace

import numpy as np

from rummy_envs import table_solver as TS
from rummy_envs.games import manipulation_rummy as M
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
LATE_STOCK = 12  # from here on a joker kept in the hand is mostly a liability


def offered(legal: tuple[int, ...], move: str) -> list[int]:
    """Identities at which ``move`` is legal now."""
    start = MOVE_START[move]
    return [a - start for a in legal if start <= a < start + CARDS]


def commit_problem(view: ManipulationView, max_copies: int | None) -> TS.CommitProblem:
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
        max_copies=max_copies,
    )


def identity_limit(view: ManipulationView) -> int | None:
    """The most copies of one identity on the table: the number of decks, read from the
    cards in play (53 per deck). The ``joker_identity_limit=none`` option cannot be seen,
    so a plan may be refused there; the mask decides, the plan only ranks moves."""
    in_play = sum(view.hand_sizes) + view.stock_size + len(view.table) + view.freed_jokers
    return 1 if in_play <= 53 else 2


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
    """Shed the most hand value per commit with the solver's help; knock when likely lowest."""

    name = "heuristic"

    def knock(self, view: ManipulationView) -> bool:
        # a hand of k cards holds at least k points; ties and lower hands give the others the win
        others = [size for seat, size in enumerate(view.hand_sizes) if seat]
        return view.hand_value < LOW_CARD_VALUE * min(others)

    def meld(self, view: ManipulationView) -> int:
        legal = view.legal_actions
        for move in ("replace_from_hand",):  # a natural goes down and a joker comes free
            cards = offered(legal, move)
            if cards:
                return MOVE_START[move] + max(cards, key=lambda c: VALUES[c])
        if view.freed_jokers:
            return M.FREED_AS + self.best_joker_identity(view, "freed_as")
        naturals = offered(legal, "place")
        keep_jokers = M.JOKER in view.hand and not self.joker_worth_placing(view)
        if keep_jokers:  # only what can go down without the hand's jokers
            alone = TS.commit_options(replace(commit_problem(view, identity_limit(view)), hand_jokers=0))
            naturals = [c for c in naturals if alone.place >> c & 1]
        if naturals:
            return M.PLACE + max(naturals, key=lambda c: (VALUES[c], -c))
        if offered(legal, "joker_as") and not keep_jokers:
            return M.JOKER_AS + self.best_joker_identity(view, "joker_as")
        if M.COMMIT in legal:
            return M.COMMIT
        cards = offered(legal, "replace_from_table")
        if cards and view.placed:
            return M.REPLACE_FROM_TABLE + cards[0]
        if view.placed and offered(legal, "joker_as"):  # begun, and only a joker finishes it
            return M.JOKER_AS + self.best_joker_identity(view, "joker_as")
        return M.NO_MELD if M.NO_MELD in legal else M.ABORT

    def joker_worth_placing(self, view: ManipulationView) -> bool:
        """Place a hand joker when it empties the hand, reaches the knock range, or the
        round is nearly over; otherwise keep it for a later, bigger commit."""
        naturals_left = [c for c in view.hand if c != M.JOKER]
        if not naturals_left or view.stock_size <= LATE_STOCK:
            return True
        return sum(VALUES[c] for c in naturals_left) + M.JOKER_VALUE * (view.hand.count(M.JOKER) - 1) <= 5

    def best_joker_identity(self, view: ManipulationView, move: str) -> int:
        """The offered identity after which the most hand value can still go down (the
        commit legal right away breaking ties): a one-step look-ahead with the solver."""
        candidates = offered(view.legal_actions, move)
        problem = commit_problem(view, identity_limit(view))
        hand_values = {c: VALUES[c] for c in view.hand if c != M.JOKER}

        def score(card: int) -> tuple[int, int, int]:
            try:
                options = TS.commit_options(TS.after(problem, move, card))
            except ValueError:
                return (-1, 0, -card)
            follow = sum(v for c, v in hand_values.items() if options.place >> c & 1)
            return (follow, int(options.commit), -card)

        near = [c for c in candidates if any(abs(c - h) <= 2 or c % 13 == h % 13 for h in hand_values)]
        return max(near or candidates, key=score)
