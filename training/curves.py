"""Learning curves of training runs: each run's evaluation margins against each evaluation
opponent by step, with their 95% intervals, one panel per run. A run is any folder with an
``eval.csv`` (a seed's run folder, or a shipped agent's folder under ``agents/checkpoints``).

    python -m training.curves agents/checkpoints/* --against novice heuristic --out docs/images/learning_curves.png
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from matplotlib.figure import Figure

EVAL_FILE = "eval.csv"


def read_evaluations(folder: Path) -> dict[str, list[tuple[int, float, float, float]]]:
    """``(step, margin, low, high)`` rows of a run's ``eval.csv`` by opponent, in step order."""
    curves: dict[str, list[tuple[int, float, float, float]]] = {}
    with (folder / EVAL_FILE).open(newline="") as f:
        for row in csv.DictReader(f):
            curves.setdefault(row["opponent"], []).append(
                (int(row["step"]), float(row["margin"]), float(row["margin_low"]), float(row["margin_high"])))
    return {opponent: sorted(rows) for opponent, rows in curves.items()}


def curves_figure(runs: dict[str, Path], against: list[str] | None = None) -> Figure:
    """A panel per run (titled by its label): margin against each opponent (those of
    ``against`` if given) by step, its 95% interval shaded, the zero line drawn."""
    columns = min(3, len(runs))
    rows = math.ceil(len(runs) / columns)
    fig = Figure(figsize=(4.2 * columns, 3.2 * rows))
    axes = fig.subplots(rows, columns, squeeze=False).flatten()
    for ax, (label, folder) in zip(axes, runs.items()):
        for opponent, points in read_evaluations(folder).items():
            if against is not None and opponent not in against:
                continue
            steps = [p[0] for p in points]
            (line,) = ax.plot(steps, [p[1] for p in points], "o-", markersize=3, label=f"vs {opponent}")
            ax.fill_between(steps, [p[2] for p in points], [p[3] for p in points], color=line.get_color(), alpha=0.2)
        ax.axhline(0.0, color="grey", linewidth=0.8)
        ax.set_title(label)
        ax.set_xlabel("learner steps")
        ax.set_ylabel("points a game (95% CI)")
        ax.legend(fontsize=8)
    for ax in axes[len(runs):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="folders holding an eval.csv")
    parser.add_argument("--out", type=Path, default=Path("learning_curves.png"))
    parser.add_argument("--against", nargs="+", help="only these opponents (default: every one evaluated)")
    args = parser.parse_args(argv)
    runs = {folder.name: folder for folder in args.runs if (folder / EVAL_FILE).is_file()}
    if not runs:
        parser.error(f"none of {', '.join(map(str, args.runs))} holds an {EVAL_FILE}")
    curves_figure(runs, args.against).savefig(args.out, dpi=100)
    print(f"{len(runs)} runs drawn in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
