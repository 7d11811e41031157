"""Tournament outputs: ``results.csv`` (a row per game), ``results_long.csv`` (a row per
seat of each game), ``summary.json``, ``summary.md`` (the tables the docs publish), the
rich leaderboard and the PNG plots."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from rummy_envs.envs.base import rank_rewards

CSV_FIELDS = ["game_id", "game", "focal", "opponent", "deal", "rotation", "seats", "agents", "env_seed",
              "margin", "focal_win", "scores", "rewards", "truncated", "num_actions"]
LONG_FIELDS = ["game_id", "game", "deal", "rotation", "seat", "label", "agent", "points", "reward", "place", "won",
               "focal"]


def write_results_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """One row per game; list columns are written as space-separated values."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for r in records:
            row = dict(r, num_actions=len(r["actions"]))
            writer.writerow([" ".join(map(str, row[k])) if isinstance(row[k], list) else row[k] for k in CSV_FIELDS])


def seat_rows(record: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per seat of a game: who sat there (label and agent name), its points and
    reward, its place (1 the best; tied seats share the best of their places) and ``won``,
    its place on a linear scale from 1 (first) to 0 (last), ties averaged, as ``focal_win``
    is for the focal seat (1, 1/2 or 0 with two players)."""
    standings = record["standings"]
    won = [(value + 1.0) / 2.0 for value in rank_rewards(standings)]
    return [{"game_id": record["game_id"], "game": record["game"], "deal": record["deal"],
             "rotation": record["rotation"], "seat": seat, "label": label, "agent": record["agents"][seat],
             "points": record["scores"][seat], "reward": record["rewards"][seat],
             "place": 1 + sum(other > standings[seat] for other in standings), "won": won[seat],
             "focal": seat == record["rotation"]}
            for seat, label in enumerate(record["seats"])]


def write_long_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """One row per agent per game (``seat_rows``), ready for ``groupby("label")``."""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=LONG_FIELDS)
        writer.writeheader()
        for r in records:
            writer.writerows(seat_rows(r))


def _fmt_interval(interval: dict[str, Any], digits: int = 2) -> str:
    if interval["low"] is None:
        return f"{interval['mean']:.{digits}f}"
    return f"{interval['mean']:.{digits}f} [{interval['low']:.{digits}f}, {interval['high']:.{digits}f}]"


def leaderboard_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Agents by rating, with their mean margin and win rate over all their pairings as the
    focal agent (None for an agent that is never focal: with ``focal`` agents in games of
    more than two players, the others only fill seats)."""
    rows = []
    for rank, rating in enumerate(summary["ratings"], 1):
        mine = [p for p in summary["pairings"] if p["focal"] == rating["agent"]]
        games = sum(p["games"] for p in mine)
        margin = sum(p["margin"]["mean"] * p["games"] for p in mine) / games if games else None
        win = sum(p["win_rate"]["mean"] * p["games"] for p in mine) / games if games else None
        rows.append({"rank": rank, "agent": rating["agent"], "rating": rating["rating"], "low": rating["low"],
                     "high": rating["high"], "margin": margin, "win_rate": win, "games": games})
    return rows


def _fmt_mean(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _fmt_rating(row: dict[str, Any]) -> str:
    return f"{row['rating']:+.0f} [{row['low']:+.0f}, {row['high']:+.0f}]"


def print_leaderboard(summary: dict[str, Any], console: Console | None = None) -> None:
    """The leaderboard and the head-to-head table in the terminal."""
    console = console or Console()
    config = summary["config"]
    board = Table(title=f"{config['game']} ({config['episode']}): {config['deals']} deals, {summary['games']} games")
    for column in ("#", "agent", "rating (Elo, 95% CI)", "mean margin/game", "win rate", "games"):
        board.add_column(column, justify="left" if column == "agent" else "right")
    for row in leaderboard_rows(summary):
        board.add_row(str(row["rank"]), row["agent"], _fmt_rating(row),
                      _fmt_mean(row["margin"], "+.2f"), _fmt_mean(row["win_rate"], ".3f"), str(row["games"]))
    console.print(board)
    pairs = Table(title="head to head (95% intervals over duplicate sets)")
    for column in ("agent", "against", "margin per game", "win rate", "games"):
        pairs.add_column(column)
    for p in summary["pairings"]:
        pairs.add_row(p["focal"], p["opponent"], _fmt_interval(p["margin"]), _fmt_interval(p["win_rate"], 3),
                      str(p["games"]))
    console.print(pairs)


def markdown(summary: dict[str, Any]) -> str:
    """The leaderboard and head-to-head tables as Markdown (what docs/baselines.md shows)."""
    config = summary["config"]
    lines = [f"Game `{config['game']}`, options {json.dumps(config['options'], sort_keys=True)}, "
             f"episode `{config['episode']}`, {config['deals']} deals, seed {config['seed']}, "
             f"{summary['games']} games.", "",
             "| # | agent | rating (Elo, 95% CI) | mean margin per game | win rate |",
             "|---:|---|---:|---:|---:|"]
    for row in leaderboard_rows(summary):
        lines.append(f"| {row['rank']} | {row['agent']} | {_fmt_rating(row)} | "
                     f"{_fmt_mean(row['margin'], '+.2f')} | {_fmt_mean(row['win_rate'], '.3f')} |")
    lines += ["", "| agent | against | margin per game [95% CI] | win rate [95% CI] | games |",
              "|---|---|---:|---:|---:|"]
    for p in summary["pairings"]:
        lines.append(f"| {p['focal']} | {p['opponent']} | {_fmt_interval(p['margin'])} | "
                     f"{_fmt_interval(p['win_rate'], 3)} | {p['games']} |")
    return "\n".join(lines) + "\n"


def head_to_head_figure(summary: dict[str, Any]) -> Figure:
    """The mean margin of each row agent against each column agent, as a heat map."""
    agents = [r["agent"] for r in summary["ratings"]]
    index = {a: i for i, a in enumerate(agents)}
    grid = [[float("nan")] * len(agents) for _ in agents]
    for p in summary["pairings"]:
        grid[index[p["focal"]]][index[p["opponent"]]] = p["margin"]["mean"]
    fig = Figure(figsize=(1.6 + 1.1 * len(agents), 1.2 + 0.9 * len(agents)))
    ax = fig.subplots()
    bound = max([abs(v) for row in grid for v in row if v == v] or [1.0])
    image = ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound)
    ax.set_xticks(range(len(agents)), agents, rotation=30, ha="right")
    ax.set_yticks(range(len(agents)), agents)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{v:+.1f}", ha="center", va="center", fontsize=9)
    ax.set_xlabel("against")
    ax.set_title(f"{summary['config']['game']}: mean margin per game")
    fig.colorbar(image, ax=ax)
    fig.tight_layout()
    return fig


def ratings_figure(summary: dict[str, Any]) -> Figure:
    """Each agent's rating (a dot) with its bootstrap 95% interval (a line)."""
    ratings = summary["ratings"]
    fig = Figure(figsize=(1.6 + 1.1 * len(ratings), 3.2))
    ax = fig.subplots()
    # Lines from low to high rather than error bars: a percentile bootstrap interval of a
    # small tournament need not contain the estimate, and error bars cannot be negative.
    ax.vlines(range(len(ratings)), [r["low"] for r in ratings], [r["high"] for r in ratings])
    ax.plot(range(len(ratings)), [r["rating"] for r in ratings], "o")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(ratings)), [r["agent"] for r in ratings], rotation=30, ha="right")
    ax.set_ylabel("rating (Elo, 95% CI)")
    ax.set_title(f"{summary['config']['game']}: ratings")
    fig.tight_layout()
    return fig


def write_plots(out: Path, summary: dict[str, Any]) -> list[Path]:
    """``head_to_head.png`` and ``ratings.png``. The figures are plain ``Figure`` objects,
    never pyplot's, so writing them switches no matplotlib backend (a notebook keeps showing
    its own plots inline; it can also display these figures themselves)."""
    paths = [out / "head_to_head.png", out / "ratings.png"]
    for figure, path in zip((head_to_head_figure(summary), ratings_figure(summary)), paths):
        figure.savefig(path, dpi=110)
    return paths


def write_outputs(out: Path, summary: dict[str, Any], records: list[dict[str, Any]], plots: bool) -> list[Path]:
    """Every output file of a tournament (``results.csv``, ``results_long.csv``,
    ``summary.json``, ``summary.md``, the plots if asked; ``games.jsonl`` is already written
    by the run); returns their paths."""
    write_results_csv(out / "results.csv", records)
    write_long_csv(out / "results_long.csv", records)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "summary.md").write_text(markdown(summary))
    paths = [out / "results.csv", out / "results_long.csv", out / "summary.json", out / "summary.md",
             out / "games.jsonl"]
    if plots:
        paths += write_plots(out, summary)
    return paths
