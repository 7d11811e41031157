"""Strength against budget: ``ismcts`` at several iteration budgets against the heuristic,
in duplicate tournaments on the same deals, with a plot of the margins and their 95%
intervals.

Run from the repository root::

    python -m benchmarks.search_budget [--games gin_rummy,least_count] [--budgets 10,30,90,270] [--deals 40]

For every game (default options and player count), one tournament per budget of
``ismcts:iterations=B`` against ``heuristic`` (seed ``--seed``, one worker; in games of more
players one ``ismcts`` seat among copies of the heuristic, the focal pairing alone), and one of the
search alone at the middle budget (``prior=None``: the search's own choice) to show what the
prior move does. The table goes into its section of ``--out`` and the plot to ``--plot``.
Not run in CI (``--smoke`` runs a token amount into a scratch place).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchmarks.harness import machine_line, markers, write_section
from training.tournament import run

BEGIN, END = markers("search_budget")


def margin(game: str, agent: str, deals: int, seed: int, folder: Path) -> dict[str, float]:
    """``agent``'s margin per game against the heuristic, with its 95% interval."""
    summary = run({"game": game, "agents": {"search": agent, "heuristic": "heuristic"}, "deals": deals, "seed": seed,
                   "workers": 1, "output_dir": str(folder), "plots": False, "chunk_deals": 5, "focal": ["search"]})
    pairing = next(p for p in summary["pairings"] if p["focal"] == "search")
    return {k: pairing["margin"][k] for k in ("mean", "low", "high")}


def plot(results: dict[str, list[tuple[int, dict[str, float]]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.2), squeeze=False)
    for ax, (game, rows) in zip(axes[0], results.items()):
        budgets = [b for b, _ in rows]
        means = [m["mean"] for _, m in rows]
        errors = [[m["mean"] - m["low"] for _, m in rows], [m["high"] - m["mean"] for _, m in rows]]
        ax.errorbar(budgets, means, yerr=errors, marker="o", capsize=3)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("ismcts iterations per decision")
        ax.set_ylabel("margin per game vs heuristic")
        ax.set_title(game)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", default="gin_rummy,least_count")
    parser.add_argument("--budgets", default="10,30,90,270", help="comma-separated iteration budgets")
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2028)
    parser.add_argument("--smoke", action="store_true", help="two deals, budgets 2 and 4, gin only")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    parser.add_argument("--plot", type=Path, default=Path("docs/images/search_budget.png"))
    args = parser.parse_args(argv)
    games = ["gin_rummy"] if args.smoke else args.games.split(",")
    budgets = [2, 4] if args.smoke else [int(b) for b in args.budgets.split(",")]
    deals = 2 if args.smoke else args.deals
    header = machine_line()
    results: dict[str, list[tuple[int, dict[str, float]]]] = {}
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for game in games:
            results[game] = []
            for budget in budgets:
                start = time.perf_counter()
                figures = margin(game, f"ismcts:iterations={budget}", deals, args.seed, Path(scratch) / f"{game}{budget}")
                results[game].append((budget, figures))
                rows.append(f"| {game} | {budget} | heuristic | {figures['mean']:+.2f} [{figures['low']:+.2f}, "
                            f"{figures['high']:+.2f}] | {time.perf_counter() - start:.0f} |")
                print(rows[-1])
            middle = budgets[len(budgets) // 2]
            start = time.perf_counter()
            alone = margin(game, f"ismcts:iterations={middle},prior=None", deals, args.seed, Path(scratch) / f"{game}a")
            rows.append(f"| {game} | {middle} | none (the search alone) | {alone['mean']:+.2f} [{alone['low']:+.2f}, "
                        f"{alone['high']:+.2f}] | {time.perf_counter() - start:.0f} |")
            print(rows[-1])
    plot(results, args.plot)
    lines = [BEGIN, "## Search strength against budget (`python -m benchmarks.search_budget`)", "", header, "",
             f"`ismcts` against `heuristic`, {deals} duplicate deals (seed {args.seed}) per row, one worker; margin "
             f"per game for `ismcts` with its 95% interval. Plot: `{args.plot}`.", "",
             "| game | iterations | prior | margin per game | seconds |", "|---|---:|---|---:|---:|", *rows, END]
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
