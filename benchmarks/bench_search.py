"""The search agents' cost: milliseconds per decision and peak memory of ``ismcts`` and
``pimc`` at their default budgets, against the game's ``heuristic`` timed on the same
positions in the same run.

Run from the repository root::

    python -m benchmarks.bench_search [--positions N] [--games gin_rummy,least_count] [--out benchmarks/RESULTS.md]

For every game (default options and player count): ``--positions`` positions with a real
choice (two legal moves or more), taken from games of heuristic seats (every decision of
a heuristic game, kept at random with probability 0.3), each decided once by a fresh agent
of each kind (timed with ``time.perf_counter``, one process, one core). The mean and 95th
percentile of the milliseconds per decision are reported, and their ratio to the
heuristic's mean. Peak memory is the peak ``tracemalloc`` reports during one search, the
largest over the first ``--memory`` positions (tracemalloc slows Python down, so it is
measured apart from the times). Not run in CI; ``--smoke`` runs a token amount.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc
from pathlib import Path

import rummy_envs
from agents import make_agent
from agents.search import mask_of
from benchmarks.harness import machine_line, markers, write_section

AGENTS = ("heuristic", "ismcts", "pimc")
BEGIN, END = markers("bench_search")


def positions(game: str, count: int, seed: int = 0) -> list:
    """States of heuristic play of ``game`` where the mover has two legal moves or more."""
    env = rummy_envs.ENVS[game].raw_env()
    rng = random.Random(seed)
    found, deal = [], 0
    while len(found) < count:
        state = env.state_class(env.config, 10_000 + deal)
        seats = [make_agent("heuristic", game, deal * 10 + s) for s in range(env.config.num_players)]
        deal += 1
        while not state.is_terminal() and len(found) < count:
            legal = state.legal_actions()
            player = state.current_player
            if len(legal) > 1 and rng.random() < 0.3:
                found.append(state.clone())
            state.apply(seats[player].act(None, mask_of(legal), state.player_view(player)))
    return found


def decide(name: str, game: str, state, seed: int) -> float:
    """Seconds one fresh agent takes to pick a move in ``state``."""
    agent = make_agent(name, game, seed)
    player = state.current_player
    view, mask = state.player_view(player), mask_of(state.legal_actions())
    start = time.perf_counter()
    agent.act(None, mask, view)
    return time.perf_counter() - start


def peak_memory(name: str, game: str, states: list) -> int:
    """The largest peak of traced memory, in bytes, over one decision at each state."""
    peak = 0
    if states:  # a first decision fills the engines' and agents' caches, which are not the search's
        decide(name, game, states[0], 0)
    for i, state in enumerate(states):
        agent = make_agent(name, game, i)
        view, mask = state.player_view(state.current_player), mask_of(state.legal_actions())
        tracemalloc.start()
        agent.act(None, mask, view)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return peak


def measure(game: str, count: int, memory: int) -> dict[str, dict[str, float]]:
    states = positions(game, count)
    out: dict[str, dict[str, float]] = {}
    for name in AGENTS:
        times = [decide(name, game, state, i) * 1000 for i, state in enumerate(states)]
        ordered = sorted(times)
        out[name] = {"mean": statistics.fmean(times), "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
                     "peak": peak_memory(name, game, states[:memory]) / 2**10}
        print(f"{game} {name}: mean {out[name]['mean']:.1f} ms, p95 {out[name]['p95']:.1f} ms, "
              f"peak {out[name]['peak']:.0f} KiB")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positions", type=int, default=60, help="positions timed per game")
    parser.add_argument("--memory", type=int, default=5, help="positions whose peak memory is traced")
    parser.add_argument("--games", default=",".join(rummy_envs.ENVS), help="comma-separated game ids")
    parser.add_argument("--smoke", action="store_true", help="a token run (2 positions of gin and Least Count)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)
    games = ["gin_rummy", "least_count"] if args.smoke else args.games.split(",")
    count, memory = (2, 1) if args.smoke else (args.positions, args.memory)
    header = machine_line()
    rows = []
    for game in games:
        figures = measure(game, count, memory)
        base = figures["heuristic"]["mean"]
        rows += [f"| {game} | {name} | {f['mean']:.1f} | {f['p95']:.1f} | {f['mean'] / base:.1f}x | {f['peak']:.0f} |"
                 for name, f in figures.items()]
    lines = [BEGIN, "## Search agents (`python -m benchmarks.bench_search`)", "", header, "",
             f"{count} positions a game from heuristic play, one fresh agent a decision at its default budget, "
             f"one process; peak memory traced over {memory} of them.", "",
             "| game | agent | ms/decision, mean | 95th percentile | mean / heuristic's | peak KiB |",
             "|---|---|---:|---:|---:|---:|", *rows, END]
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
