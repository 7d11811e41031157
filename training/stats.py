"""Tournament statistics: per-pairing means with 95% intervals over duplicate sets, and
agent ratings from a Bradley-Terry model fitted to all games at once, with bootstrap
intervals over the deals. None of them depends on the order of the agents or the games."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% quantile of the normal distribution
ELO_PER_LOG_ODDS = 400.0 / math.log(10.0)  # Elo points: 400 * log10 of the odds of winning
PRIOR_DRAWS = 1.0  # virtual drawn games between every pair of agents, so every rating is finite
RATING_RESAMPLES = 200  # bootstrap resamples of the deals for the rating intervals
RATING_SEED = 0  # the bootstrap's numpy seed: the same games always give the same summary


@dataclass(frozen=True)
class Interval:
    """A sample mean with its 95% interval (None where it has none: a margin over one set)."""

    mean: float
    low: float | None
    high: float | None
    n: int

    def excludes_zero(self) -> bool:
        return self.low is not None and (self.low > 0 or self.high < 0)

    def reflected(self, about: float) -> Interval:
        """The interval of ``about - x``: the other side of a pairing sees a margin reflected
        about 0 and a win rate about 1, its low and high swapped."""
        if self.low is None:
            return Interval(about - self.mean, None, None, self.n)
        return Interval(about - self.mean, about - self.high, about - self.low, self.n)


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


def rate_interval(values: list[float]) -> Interval:
    """Mean of per-set rates in [0, 1] with a Wilson score 95% interval, which stays in [0, 1].

    The n sets count as ``n_eff = p (1 - p) / (s^2 / n)`` independent trials, the sample size
    at which one trial per unit would vary as much as the mean of the sets does; so with many
    sets the interval matches the normal one. Never fewer than n: a rate in [0, 1] with mean p
    varies at most as much as one trial. Exactly n where the sets show no variance to read
    (one set, or every set at the same rate, all won say), so the interval never closes."""
    n = len(values)
    if n == 0:
        raise ValueError("an interval needs at least one value")
    mean = math.fsum(values) / n
    spread = mean * (1.0 - mean)
    var_of_mean = math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n if n > 1 else None
    if not var_of_mean:  # one set, or every set alike
        trials = float(n)
    else:
        trials = max(float(n), spread / var_of_mean)
    shrink = Z95**2 / trials
    centre = (mean + shrink / 2.0) / (1.0 + shrink)
    half = Z95 / (1.0 + shrink) * math.sqrt(spread / trials + shrink / (4.0 * trials))
    # The Wilson interval holds the mean and lies in [0, 1]; clamping only undoes rounding.
    return Interval(mean, max(0.0, min(mean, centre - half)), min(1.0, max(mean, centre + half)), n)


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
        margin = mean_interval([sum(g["margin"] for g in games) / len(games) for games in by_deal.values()])
        win_rate = rate_interval([sum(g["focal_win"] for g in games) / len(games) for games in by_deal.values()])
        games = sum(len(g) for g in by_deal.values())
        out.append(PairingResult(focal, opponent, games, margin, win_rate))
        if _two_seat(by_deal):
            out.append(PairingResult(opponent, focal, games, margin.reflected(0.0), win_rate.reflected(1.0)))
    return sorted(out, key=lambda p: (p.focal, p.opponent))


def _two_seat(by_deal: dict[int, list[dict[str, Any]]]) -> bool:
    first = next(iter(by_deal.values()))
    return len(first[0]["seats"]) == 2


@dataclass(frozen=True)
class Rating:
    """An agent's Bradley-Terry rating on the Elo scale (the listed agents average 0) with
    its bootstrap 95% interval over the deals."""

    agent: str
    rating: float
    low: float
    high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ratings(agents: list[str], records: list[dict[str, Any]], resamples: int = RATING_RESAMPLES,
            seed: int = RATING_SEED) -> list[Rating]:
    """Bradley-Terry ratings of the agents from every game at once, best first (ties by name).

    Each game is a comparison of the focal agent with its opponent (1 a win, 1/2 a draw, 0
    a loss). The interval is the 2.5 and 97.5 percentiles over ``resamples`` bootstrap
    resamples of the deals, each taking the games of every pairing on a drawn deal. The
    agents are fitted in sorted order and each deal's points are exact sums, so the result
    does not depend on the order of ``agents`` or of ``records``."""
    labels = sorted(agents)
    points = _points_by_deal(labels, records)
    strengths = _fit(points.sum(axis=0), np.zeros(len(labels)))
    draws = np.random.default_rng(seed).integers(len(points), size=(resamples, len(points)))
    weights = np.stack([np.bincount(d, minlength=len(points)) for d in draws]).astype(float)
    resampled = np.stack([_fit(np.tensordot(w, points, axes=1), strengths) for w in weights])
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0) * ELO_PER_LOG_ODDS
    table = [Rating(a, float(strengths[i] * ELO_PER_LOG_ODDS), float(low[i]), float(high[i]))
             for i, a in enumerate(labels)]
    return sorted(table, key=lambda r: (-r.rating, r.agent))


def _points_by_deal(labels: list[str], records: list[dict[str, Any]]) -> np.ndarray:
    """``points[d, i, j]``: what agent i scored against agent j over the d-th deal's games
    (deals in increasing order), each sum exactly rounded so the record order cannot matter."""
    index = {a: i for i, a in enumerate(labels)}
    deals = {d: k for k, d in enumerate(sorted({r["deal"] for r in records}))}
    scored: dict[tuple[int, int, int], list[float]] = defaultdict(list)
    for r in records:
        d, i, j = deals[r["deal"]], index[r["focal"]], index[r["opponent"]]
        scored[d, i, j].append(r["focal_win"])
        scored[d, j, i].append(1.0 - r["focal_win"])
    points = np.zeros((len(deals), len(labels), len(labels)))
    for cell, values in scored.items():
        points[cell] = math.fsum(values)
    return points


def _fit(points: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry strengths (natural log odds, mean 0) from the
    pairwise points, with the prior's drawn games added: Newton's method, halving a step
    until the log-likelihood (concave) does not fall."""
    k = len(points)
    wins = points + PRIOR_DRAWS / 2.0 * (1.0 - np.eye(k))
    games = wins + wins.T
    theta, current = start.copy(), _log_likelihood(start, wins)
    for _ in range(100):
        p = 0.5 + 0.5 * np.tanh((theta[:, None] - theta[None, :]) / 2.0)  # P(i beats j)
        gradient = wins.sum(axis=1) - (games * p).sum(axis=1)
        weight = games * p * p.T
        laplacian = np.diag(weight.sum(axis=1)) - weight  # minus the Hessian; ones span its kernel
        step = np.linalg.solve(laplacian + 1.0, gradient)  # + 1: the step keeps the mean 0
        scale = 1.0
        while (trial := _log_likelihood(theta + scale * step, wins)) < current and scale > 1e-9:
            scale /= 2.0
        theta, current = theta + scale * step, trial
        if np.max(np.abs(scale * step)) < 1e-12:
            return theta - theta.mean()
    raise RuntimeError("the Bradley-Terry fit did not converge")


def _log_likelihood(theta: np.ndarray, wins: np.ndarray) -> float:
    return -float((wins * np.logaddexp(0.0, theta[None, :] - theta[:, None])).sum())
