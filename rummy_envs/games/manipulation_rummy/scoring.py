"""Round and match scoring: who wins a round and each seat's points
(docs/manipulation_rummy.md#scoring), and the match bonuses (docs/manipulation_rummy.md#match)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy_envs.games.manipulation_rummy.options import ManipulationConfig

ROUND_KINDS = ("out", "knock", "stock_out")


@dataclass
class RoundResult:
    """How a round ended and what each seat scored (winners only; everyone else 0)."""

    kind: str  # "out", "knock", "stock_out"
    ender: int = -1  # the seat that went out or knocked, -1 for a stock-out
    values: list[int] = field(default_factory=list)  # each hand's value at the end
    winners: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # each seat's points for the round
    hands: list[list[int]] = field(default_factory=list)  # every hand at the end, revealed
    table: list[list[int]] = field(default_factory=list)  # the final table as a legal arrangement (identities)
    table_jokers: list[int] = field(default_factory=list)  # identities held by jokers on it
    totals: list[int] = field(default_factory=list)  # match totals after the round, before match bonuses


def round_winners(kind: str, ender: int, values: list[int]) -> list[int]:
    """The winners of a round: the one who went out; the knocker if alone lowest, else the
    other lowest hands; at a stock-out every lowest hand."""
    low = min(values)
    lowest = [q for q, v in enumerate(values) if v == low]
    if kind == "out":
        return [ender]
    if kind == "knock":
        return [ender] if lowest == [ender] else [q for q in lowest if q != ender]
    return lowest


def round_points(config: ManipulationConfig, kind: str, ender: int, values: list[int]) -> list[int]:
    """Each seat's points for a round: every winner the sum of the differences to the other
    hands plus its bonus (out, the not-knocker bonus, the stock-out bonus), others 0."""
    winners = round_winners(kind, ender, values)
    if kind == "out":
        bonus = config.out_bonus
    elif kind == "knock":
        bonus = 0 if winners == [ender] else config.not_knocker_bonus
    else:
        bonus = config.stock_out_bonus
    total, n = sum(values), len(values)
    return [total - n * values[q] + bonus if q in winners else 0 for q in range(n)]


def match_final_totals(config: ManipulationConfig, totals: list[int], rounds_won: list[int]) -> list[int]:
    """The final totals of a match that ends: ``game_bonus`` to every seat at or above the
    target, ``round_win_bonus`` per round won to every seat."""
    return [t + (config.game_bonus if t >= config.target_score else 0) + config.round_win_bonus * w
            for t, w in zip(totals, rounds_won)]


def match_winners(config: ManipulationConfig, totals: list[int], rounds_won: list[int]) -> list[int]:
    """The winners of a match whose round ended with these totals and rounds won: the
    leaders of the final totals once a seat reaches the target, unless they tie and
    ``tie_break="play_on"``; none (``[]``) while the match goes on."""
    if max(totals) < config.target_score:
        return []
    final = match_final_totals(config, totals, rounds_won)
    leaders = [q for q, f in enumerate(final) if f == max(final)]
    return leaders if len(leaders) == 1 or config.tie_break == "share" else []
