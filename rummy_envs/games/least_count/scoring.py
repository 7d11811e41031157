"""How a round of Least Count is scored and what it does to the match
(docs/least_count.md#showdown, docs/least_count.md#elimination): ``score_round`` gives
each seat's points at the showdown, ``match_after_round`` who is out of the match and
whether the match is over. Points are bad: lower is better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from rummy_envs.games.least_count.rules import LeastCountConfig


@dataclass
class RoundResult:
    """How a round ended and what each seat scored (points are bad: lower is better)."""

    kind: str  # "valid_declaration", "false_declaration", "timeout"
    declarer: int = -1
    players: list[int] = field(default_factory=list)  # the seats dealt in
    counts: list[int] = field(default_factory=list)  # each seat's count at the showdown (0 if not dealt in)
    points: list[int] = field(default_factory=list)  # each seat's points for the round
    hands: list[list[int]] = field(default_factory=list)  # every hand at the showdown, revealed
    totals: list[int] = field(default_factory=list)  # match totals after the round
    eliminated: list[int] = field(default_factory=list)  # seats eliminated after this round (match mode)
    truncated: bool = False  # the round hit max_turns_per_round
    cut_card: int = -1  # the cut card of the round (cut_joker), -1 if none

    def as_dict(self) -> dict[str, Any]:
        """The fields as a new plain dict (what ``dataclasses.asdict`` gives, without its
        generic deep copy: rounds of short games end often)."""
        return {"kind": self.kind, "declarer": self.declarer, "players": list(self.players),
                "counts": list(self.counts), "points": list(self.points), "hands": [list(h) for h in self.hands],
                "totals": list(self.totals), "eliminated": list(self.eliminated), "truncated": self.truncated,
                "cut_card": self.cut_card}


def score_round(config: LeastCountConfig, declarer: int, players: list[int],
                counts: list[int]) -> tuple[str, list[int]]:
    """How a round ends and each seat's points (docs/least_count.md#showdown): ``declarer``
    declared (-1: the timeout) with the seats ``players`` dealt in holding ``counts``.

    A declaration is valid when every other count is above the declarer's (or equal to it,
    with ``tie_declaration_valid``): then each player pays its count minus the declarer's.
    Otherwise it is false and the declarer alone pays ``false_declare_penalty`` plus its
    count minus the lowest. At the timeout each player pays its count minus the lowest."""
    points = [0] * config.num_players
    low = min(counts[q] for q in players)
    if declarer < 0:
        for q in players:
            points[q] = counts[q] - low
        return "timeout", points
    d = counts[declarer]
    others = [counts[q] for q in players if q != declarer]
    if all(c >= d for c in others) if config.tie_declaration_valid else all(c > d for c in others):
        for q in players:
            points[q] = counts[q] - d
        return "valid_declaration", points
    points[declarer] = config.false_declare_penalty + d - low
    return "false_declaration", points


def is_past_elimination(config: LeastCountConfig, total: int) -> bool:
    """Whether a match total puts its seat out: above ``elimination_score``, or at it too
    with ``eliminate_on_equal``."""
    limit = config.elimination_score
    return total > limit or (config.eliminate_on_equal and total == limit)


class MatchAfterRound(NamedTuple):
    """What a round did to a match: the seats it eliminated, and whether the match is over,
    with its winners and whether it was cut by the round cap."""

    eliminated: list[int]
    over: bool
    winners: list[int]
    truncated: bool


def match_after_round(config: LeastCountConfig, players: list[int], totals: list[int],
                      rounds_played: int) -> MatchAfterRound:
    """Eliminations and the match end after a round of a match (docs/least_count.md#elimination),
    ``players`` having been dealt in and ``totals`` being every seat's match total after it.

    - A seat dealt in whose total is past the threshold (``is_past_elimination``) is out of
      the match; if that is everybody, the lowest totals stay in.
    - With ``match_end="first_elimination"`` the match ends at the first elimination; the
      lowest totals of all seats win (ties shared).
    - Otherwise it ends when at most one seat is left, the winner.
    - A match still going after ``max_rounds`` rounds ends there, truncated, without winners.
    """
    out = [q for q in players if is_past_elimination(config, totals[q])]
    if len(out) == len(players):
        best = min(totals[q] for q in out)
        out = [q for q in out if totals[q] != best]
    if config.match_end == "first_elimination" and out:
        best = min(totals)
        return MatchAfterRound(out, True, [q for q in range(len(totals)) if totals[q] == best], False)
    still_in = [q for q in players if q not in out]
    if len(still_in) <= 1:
        return MatchAfterRound(out, True, still_in, False)
    if rounds_played >= config.max_rounds:
        return MatchAfterRound(out, True, [], True)
    return MatchAfterRound(out, False, [], False)
