"""Scoring a hand: the stakes its upcard sets (Oklahoma), the most a hand can pay, the points
of a showdown, and the record of how the hand ended (docs/gin_rummy.md#scoring-a-hand)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy_envs import cards as C
from rummy_envs.games.gin_rummy.actions import HAND_SIZE
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


MELDLESS_DEADWOOD = 98  # ten cards without a meld: at most two each of T J Q K, and two cards of 9 or less
HAND_VALUE = 10 * HAND_SIZE  # ten cards of ten points


def hand_points_bound(config: GinConfig) -> int:
    """The most points one hand can pay (docs/gin_rummy.md#scoring-a-hand).

    Gin and big gin pay their bonus plus the defender's deadwood, no layoffs allowed. That
    deadwood is at most 98 when the engine melds for the defender (ten cards holding a meld
    leave at most 70; without one, at most two cards of each ten-point rank: 8 x 10 + 2 x 9),
    and 100 under ``layoff_mode="explicit"``, where the defender may meld nothing and keep ten
    ten-point cards. A knock pays less than that deadwood; an undercut pays at most the
    knocker's deadwood, within the knock limit, plus its bonus. Every point is doubled by an
    Oklahoma spade upcard; the limit and the doubling are read from every upcard's stakes."""
    stakes = [hand_stakes(config, upcard) for upcard in range(C.NUM_CARDS)]
    limit, multiplier = max(s[0] for s in stakes), max(s[1] for s in stakes)
    deadwood = HAND_VALUE if config.layoff_mode == "explicit" else MELDLESS_DEADWOOD
    bonus = max(config.gin_bonus, config.big_gin_bonus or 0)
    return multiplier * max(deadwood + bonus, limit + config.undercut_bonus)


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
