"""Tournament statistics: per-pairing means with 95% intervals over duplicate sets, and
agent ratings from openskill (Plackett-Luce), fed the games in a fixed order so that the
ratings never depend on how the games were scheduled."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from openskill.models import PlackettLuce

Z95 = 1.959963984540054  # two-sided 95% quantile of the normal distribution


@dataclass(frozen=True)
class Interval:
    """A sample mean with its normal-approximation 95% interval (None with one sample)."""

    mean: float
    low: float | None
    high: float | None
    n: int

    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)


def mean_interval(values: list[float]) -> Interval:
    """Mean and ``mean +- 1.96 * s / sqrt(n)`` with the sample standard deviation ``s``.

    Units are duplicate sets, which are independent, so the normal interval is right for
    the hundreds of sets a tournament plays."""
    n = len(values)
    if n == 0:
        raise ValueError("an interval needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return Interval(mean, None, None, 1)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return Interval(mean, mean - half, mean + half, n)


@dataclass(frozen=True)
class PairingResult:
    """How ``focal`` did against ``opponent`` over the shared deals: its mean margin (its
    score minus the mean of the other seats' scores) and win rate (draws count one half)
    per duplicate set."""

    focal: str
    opponent: str
    games: int
    margin: Interval
    win_rate: Interval

    def to_dict(self) -> dict[str, Any]:
        return {"focal": self.focal, "opponent": self.opponent, "games": self.games,
                "margin": asdict(self.margin), "win_rate": asdict(self.win_rate)}


def pairing_results(records: list[dict[str, Any]]) -> list[PairingResult]:
    """Per (focal, opponent) results from game records; two-player pairings are reported
    from both sides (the second is the mirror image of the first)."""
    sets: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        sets[(r["focal"], r["opponent"])][r["deal"]].append(r)
    out = []
    for (focal, opponent), by_deal in sets.items():
        margins = [sum(g["margin"] for g in games) / len(games) for games in by_deal.values()]
        wins = [sum(g["focal_win"] for g in games) / len(games) for games in by_deal.values()]
        games = sum(len(g) for g in by_deal.values())
        out.append(PairingResult(focal, opponent, games, mean_interval(margins), mean_interval(wins)))
        if _two_seat(by_deal):
            out.append(PairingResult(opponent, focal, games, mean_interval([-m for m in margins]),
                                     mean_interval([1.0 - w for w in wins])))
    return sorted(out, key=lambda p: (p.focal, p.opponent))


def _two_seat(by_deal: dict[int, list[dict[str, Any]]]) -> bool:
    first = next(iter(by_deal.values()))
    return len(first[0]["seats"]) == 2


@dataclass(frozen=True)
class Rating:
    """An agent's openskill rating: ``mu`` with uncertainty ``sigma``; ``ordinal`` is the
    conservative ``mu - 3 sigma`` used to rank."""

    agent: str
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "mu": self.mu, "sigma": self.sigma, "ordinal": self.ordinal,
                "interval95": [self.mu - Z95 * self.sigma, self.mu + Z95 * self.sigma]}


def ratings(agents: list[str], records: list[dict[str, Any]]) -> list[Rating]:
    """openskill ratings from every game, in game-id order: each game is a match of the
    focal agent against the field, ranked by the focal seat's outcome (win, draw, loss)."""
    model = PlackettLuce()
    current = {a: model.rating(name=a) for a in agents}
    for r in sorted(records, key=lambda g: g["game_id"]):
        focal, opponent = current[r["focal"]], current[r["opponent"]]
        win = r["focal_win"]
        ranks = [0, 0] if win == 0.5 else [0, 1] if win > 0.5 else [1, 0]
        [[focal], [opponent]] = model.rate([[focal], [opponent]], ranks=ranks)
        current[r["focal"]], current[r["opponent"]] = focal, opponent
    table = [Rating(a, current[a].mu, current[a].sigma) for a in agents]
    return sorted(table, key=lambda x: (-x.ordinal, x.agent))
