"""The score of a gin match (``episode="match"``): running totals to ``target_score`` and
the game, box and shutout bonuses at the end (docs/gin_rummy.md#match-mode).

A state keeps its match score in ``state.match``; Hollywood Gin swaps in its scoresheet,
which answers the same methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rummy_envs.games.gin_rummy.actions import NUM_PLAYERS
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.scoring import HandResult, hand_points_bound
from rummy_envs.games.gin_rummy.view import GinView
from rummy_envs.state_dicts import Fields

MATCH_KEYS = ("totals", "wins", "winner")


def won_hand_bound(config: GinConfig) -> int:
    """The most one won hand adds to its winner's match total: the most a hand pays
    (``scoring.hand_points_bound``), and the box too where boxes count toward the target."""
    return hand_points_bound(config) + (config.box_bonus if config.boxes_count_toward_target else 0)


@dataclass
class StandardMatch:
    """Running totals of a gin match to ``target_score`` and the end-of-game bonuses."""

    totals: list[int] = field(default_factory=lambda: [0, 0])
    wins: list[int] = field(default_factory=lambda: [0, 0])
    winner: int = -1

    def record(self, config: GinConfig, result: HandResult) -> None:
        """Add a won hand's points (and the box at once under boxes_count_toward_target)."""
        if result.winner < 0:
            return
        w = result.winner
        self.totals[w] += result.points[w]
        self.wins[w] += 1
        if config.boxes_count_toward_target:
            self.totals[w] += config.box_bonus
        if self.totals[w] >= config.target_score:
            self.winner = w

    def is_over(self) -> bool:
        return self.winner >= 0

    def scores(self, config: GinConfig) -> list[int]:
        """The match score now: the totals, settled with the bonuses once somebody has won."""
        return self.final_scores(config)

    def standings(self, config: GinConfig) -> list[int]:
        """What ranks the players at the end (larger is better): the settled scores."""
        return self.final_scores(config)

    def final_scores(self, config: GinConfig) -> list[int]:
        """Totals with game, box and shutout bonuses (just the totals if nobody has won)."""
        if self.winner < 0:
            return list(self.totals)
        w, loser = self.winner, 1 - self.winner
        shutout = self.wins[loser] == 0
        final = list(self.totals)
        if shutout and config.shutout_rule == "double_points":
            boxes_in_total = config.box_bonus * self.wins[w] if config.boxes_count_toward_target else 0
            final[w] += self.totals[w] - boxes_in_total  # the hand points count twice
        final[w] += config.game_bonus * (2 if shutout and config.shutout_rule == "double_game_bonus" else 1)
        if not config.boxes_count_toward_target:
            for p in range(NUM_PLAYERS):
                final[p] += config.box_bonus * self.wins[p]
        return final

    # -- what a seat sees of it, and back ----------------------------------------------------
    def view_fields(self, player: int) -> dict[str, Any]:
        """The view's fields of the match score, ``player``'s first: totals and hands won."""
        opp = 1 - player
        return {"scores": (self.totals[player], self.totals[opp]), "hands_won": (self.wins[player], self.wins[opp])}

    @classmethod
    def from_view(cls, view: GinView) -> StandardMatch:
        """The match score a view shows (the winner is the one whose total reached the target)."""
        mine, theirs = view.player, 1 - view.player
        totals, wins = [0, 0], [0, 0]
        totals[mine], totals[theirs] = view.scores
        wins[mine], wins[theirs] = view.hands_won
        reached = [p for p in range(NUM_PLAYERS) if totals[p] >= view.rules.target_score]
        return cls(totals, wins, reached[0] if reached else -1)

    # -- copies and dicts --------------------------------------------------------------------
    def clone(self) -> StandardMatch:
        return StandardMatch(list(self.totals), list(self.wins), self.winner)

    def to_dict(self) -> dict[str, Any]:
        return {"totals": list(self.totals), "wins": list(self.wins), "winner": self.winner}

    @classmethod
    def from_dict(cls, data: Any, path: str = "match") -> StandardMatch:
        """Read ``to_dict`` output; ValueError naming the field of a wrong type or range."""
        fields = Fields(data, MATCH_KEYS, path)
        return cls(fields.integers("totals", [0, 0], NUM_PLAYERS, 0), fields.integers("wins", [0, 0], NUM_PLAYERS, 0),
                   fields.integer("winner", -1, -1, 1, "the seat that won the match, -1 while nobody has"))

    def problem(self, config: GinConfig) -> str:
        """What in this score contradicts the rules of ``config`` ("" if nothing)."""
        target = config.target_score
        if self.winner < 0 and max(self.totals) >= target:
            return f"a total reached target_score={target} but 'winner' is -1"
        if self.winner >= 0 and (self.totals[self.winner] < target or self.totals[1 - self.winner] >= target):
            return f"winner {self.winner} must be the one player whose total reached target_score={target}"
        if any(self.totals[p] and not self.wins[p] for p in range(NUM_PLAYERS)):
            return "a player who won no hand has points"
        if sum(self.wins) > config.max_hands_per_match:
            return f"more hands won than max_hands_per_match={config.max_hands_per_match} hands"
        most = won_hand_bound(config)
        if self.winner >= 0 and self.totals[self.winner] > target - 1 + most:
            return (f"the winner's total is past what one hand ({most} points at most) adds to a total under "
                    f"target_score={target}")
        return ""

    def holds(self, recorded: StandardMatch) -> bool:
        """Does this score include ``recorded`` (the score of some of its hands): at least as many
        hands won and points by each player?"""
        return all(self.wins[p] >= recorded.wins[p] and self.totals[p] >= recorded.totals[p]
                   for p in range(NUM_PLAYERS))
