"""Scoring a hand: the stakes its upcard sets (Oklahoma), the points of a showdown, and the
record of how the hand ended (docs/gin_rummy.md#scoring-a-hand)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy_envs import cards as C
from rummy_envs.games.gin_rummy.options import GinConfig

HAND_KINDS = ("gin", "big_gin", "knock", "undercut", "dead", "turn_cap")


def hand_stakes(config: GinConfig, upcard: int) -> tuple[int, int]:
    """(knock limit, score multiplier) of a hand: the options' limit and 1, except in
    Oklahoma, where the upcard's rank sets the limit and a spade upcard doubles the hand
    (docs/gin_rummy.md#oklahoma)."""
    if config.variant != "oklahoma":
        return config.knock_limit, 1
    rank = upcard % C.NUM_RANKS
    limit = (0 if config.oklahoma_ace_gin_only else 1) if rank == 0 else min(rank + 1, 10)
    return limit, 2 if config.oklahoma_spade_double and upcard // C.NUM_RANKS == 3 else 1


def showdown_points(config: GinConfig, knocker_deadwood: int, defender_deadwood: int, big_gin: bool,
                    multiplier: int) -> tuple[bool, int]:
    """(the knocker wins, the points the winner scores) of a showdown: gin (never undercut),
    a knock below the defender, or an undercut (docs/gin_rummy.md#scoring-a-hand)."""
    k, d = knocker_deadwood, defender_deadwood
    if k == 0:
        bonus = config.big_gin_bonus if big_gin else config.gin_bonus
        return True, (bonus + d) * multiplier
    if k < d or (k == d and not config.undercut_on_tie):
        return True, (d - k) * multiplier
    return False, (k - d + config.undercut_bonus) * multiplier


@dataclass
class HandResult:
    """How a hand ended; ``points[p]`` is what each player scored in it. Public once the hand
    is over (a dead hand's cards stay hidden: ``hands`` is empty), and never changed after."""

    kind: str  # one of HAND_KINDS
    winner: int = -1
    points: list[int] = field(default_factory=lambda: [0, 0])
    knocker: int = -1
    deadwood: list[int] = field(default_factory=lambda: [0, 0])
    knocker_melds: list[list[int]] = field(default_factory=list)
    defender_melds: list[list[int]] = field(default_factory=list)
    layoffs: list[list[int]] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)  # both hands at the end, revealed
