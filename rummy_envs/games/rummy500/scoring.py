"""Rummy 500's scoring (docs/rummy500.md#scoring) and the end of a match
(docs/rummy500.md#match-mode): a hand's result, the points of the table and of a hand, each
seat's score, and who has won the match.

``Rummy500Scoring`` holds the scoring queries of ``Rummy500State``, which inherits them; the
functions below state the two scoring rules once, for the engine and for the state-dict
checks alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rummy_envs.games.base import centred
from rummy_envs.games.rummy500.actions import Phase
from rummy_envs.games.rummy500.melds import Meld, mask_points
from rummy_envs.games.rummy500.options import Rummy500Config


@dataclass
class HandResult:
    """How a hand ended and what each seat scored: ``points = table - hand (+ out bonus)``."""

    kind: str  # "out", "stock_exhausted", "turn_cap"
    went_out: int = -1
    points: list[int] = field(default_factory=list)
    table_points: list[int] = field(default_factory=list)
    hand_points: list[int] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)  # every hand at the end, revealed
    melds: list[dict[str, Any]] = field(default_factory=list)  # the table: cards, jokers, credit, owner


def multiset_points(hand: list[int], joker_value: int) -> int:
    """Points of the cards left in a hand (a multiset ``[once, twice, jokers]``): aces 15,
    faces 10, others their rank, each joker ``joker_value``."""
    return mask_points(hand[0]) + mask_points(hand[1]) + hand[2] * joker_value


def hand_scores(table: list[int], in_hand: list[int], went_out: int, out_bonus: int) -> list[int]:
    """Each seat's points for a hand: its table points minus its hand points, plus
    ``out_bonus`` for the seat that went out (-1: nobody)."""
    return [table[q] - in_hand[q] + (out_bonus if q == went_out else 0) for q in range(len(table))]


def match_winners(totals: list[int], config: Rummy500Config) -> list[int]:
    """The seats that have won a match with these totals after a hand (none: it goes on): the
    leader once a total reaches ``target_score``, tied leaders only with ``tie_break="share"``."""
    best = max(totals)
    leaders = [q for q, total in enumerate(totals) if total == best]
    decided = best >= config.target_score and (len(leaders) == 1 or config.tie_break == "share")
    return leaders if decided else []


class Rummy500Scoring:
    """The scoring queries of ``Rummy500State`` (state.py), over its table, hands and totals."""

    config: Rummy500Config
    n: int
    hands: list[list[int]]
    melds: list[Meld]
    totals: list[int]
    hand_results: list[HandResult]
    phase: Phase

    def is_terminal(self) -> bool:
        """The episode (the hand, or the match with ``episode="match"``) is over."""
        return self.phase == Phase.GAME_OVER

    def scores(self) -> list[int]:
        """Each seat's score so far: the hand's points once it is over (hand mode), the
        running totals in match mode."""
        if self.config.episode == "match":
            return list(self.totals)
        return list(self.hand_results[-1].points) if self.is_terminal() and self.hand_results else [0] * self.n

    def standings(self) -> list[int]:
        """What ranks the seats for ``reward="win_loss"``: the scores (tied leaders share)."""
        return self.scores()

    def returns(self) -> list[float]:
        """Zero-sum points: each seat's score minus the mean of the scores."""
        return centred(self.scores())

    def table_points(self) -> list[int]:
        """Points of the table cards credited to each seat (aces by their place)."""
        out = [0] * self.n
        value = self.config.joker_value
        for meld in self.melds:
            for identity, seat in meld.credit.items():
                out[seat] += meld.value(identity, value)
        return out

    def hand_points(self, player: int) -> int:
        """Points of the cards in ``player``'s hand (``multiset_points``)."""
        return multiset_points(self.hands[player], self.config.joker_value)

    def _match_winners(self) -> list[int]:
        """The seats that have won the match by the totals so far (``match_winners``)."""
        return match_winners(self.totals, self.config)
