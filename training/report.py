"""Tournament outputs: ``results.csv`` (a row per game), ``summary.json``, ``summary.md``
(the tables the docs publish), the rich leaderboard and the PNG plots."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

CSV_FIELDS = ["game_id", "game", "focal", "opponent", "deal", "rotation", "seats", "agents", "env_seed",
              "margin", "focal_win", "scores", "rewards", "truncated", "num_actions"]


def write_results_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """One row per game; list columns are written as space-separated values."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for r in records:
            row = dict(r, num_actions=len(r["actions"]))
            writer.writerow([" ".join(map(str, row[k])) if isinstance(row[k], list) else row[k] for k in CSV_FIELDS])


def _fmt_interval(interval: dict[str, Any], digits: int = 2) -> str:
    if interval["low"] is None:
        return f"{interval['mean']:.{digits}f}"
    return f"{interval['mean']:.{digits}f} [{interval['low']:.{digits}f}, {interval['high']:.{digits}f}]"


def leaderboard_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Agents by rating, with their mean margin and win rate over all their pairings."""
    rows = []
    for rank, rating in enumerate(summary["ratings"], 1):
        mine = [p for p in summary["pairings"] if p["focal"] == rating["agent"]]
        games = sum(p["games"] for p in mine)
        margin = sum(p["margin"]["mean"] * p["games"] for p in mine) / games
        win = sum(p["win_rate"]["mean"] * p["games"] for p in mine) / games
        rows.append({"rank": rank, "agent": rating["agent"], "mu": rating["mu"], "sigma": rating["sigma"],
                     "ordinal": rating["ordinal"], "margin": margin, "win_rate": win, "games": games})
    return rows


def print_leaderboard(summary: dict[str, Any], console: Console | None = None) -> None:
    """The leaderboard and the head-to-head table in the terminal."""
    console = console or Console()
    config = summary["config"]
    board = Table(title=f"{config['game']} ({config['episode']}): {config['deals']} deals, {summary['games']} games")
    for column in ("#", "agent", "rating mu ± 1.96σ", "mean margin/game", "win rate", "games"):
        board.add_column(column, justify="left" if column == "agent" else "right")
    for row in leaderboard_rows(summary):
        board.add_row(str(row["rank"]), row["agent"], f"{row['mu']:.2f} ± {1.96 * row['sigma']:.2f}",
                      f"{row['margin']:+.2f}", f"{row['win_rate']:.3f}", str(row["games"]))
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
             "| # | agent | rating (mu ± 1.96 sigma) | mean margin per game | win rate |",
             "|---:|---|---:|---:|---:|"]
    for row in leaderboard_rows(summary):
        lines.append(f"| {row['rank']} | {row['agent']} | {row['mu']:.2f} ± {1.96 * row['sigma']:.2f} | "
                     f"{row['margin']:+.2f} | {row['win_rate']:.3f} |")
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
    """Each agent's rating with its 95% error bar."""
    ratings = summary["ratings"]
    fig = Figure(figsize=(1.6 + 1.1 * len(ratings), 3.2))
    ax = fig.subplots()
    ax.errorbar(range(len(ratings)), [r["mu"] for r in ratings], yerr=[1.96 * r["sigma"] for r in ratings],
                fmt="o", capsize=5)
    ax.set_xticks(range(len(ratings)), [r["agent"] for r in ratings], rotation=30, ha="right")
    ax.set_ylabel("openskill mu (95%)")
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
    """Every output file of a tournament; returns their paths."""
    write_results_csv(out / "results.csv", records)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    (out / "summary.md").write_text(markdown(summary))
    paths = [out / "results.csv", out / "summary.json", out / "summary.md", out / "games.jsonl"]
    if plots:
        paths += write_plots(out, summary)
    return paths
