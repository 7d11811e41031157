"""Tournament speed: games per second per game and agent, against RLCard in the same run,
and the speed-up of the local backend from 1 to 2 worker processes.

Run from the repository root::

    python -m benchmarks.bench_tournament [--seconds S] [--deals N] [--out benchmarks/RESULTS.md]

1. Games/s of one process playing whole hands through ``training.tournament.play_game``
   (the code path of a tournament: env, agents, rewards), for every pair of equal agents
   of every game but the search agents (``bench_search`` times their decisions). The peer is RLCard's ``gin-rummy`` env with its bundled
   ``GinRummyNoviceRuleAgent`` in both seats (``env.run``), timed in the same run: our
   gin ``novice`` against it is the like-for-like ratio.
2. The wall time of one tournament (random, novice, heuristic on gin_rummy, ``--deals``
   deals) with ``workers: 1`` and ``workers: 2``; the ratio is the speed-up.

The figures replace the section between the markers in ``--out``. Not run in CI.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

import rummy_envs
from agents import registered_agents
from benchmarks.harness import write_section
from training.tournament import deal_seed, parse_config, play_game, run_tournament

BEGIN, END = "<!-- bench_tournament:begin -->", "<!-- bench_tournament:end -->"
SEARCH_AGENTS = ("ismcts", "pimc")  # timed per decision by benchmarks/bench_search.py, not by whole games


def games_per_second(game: str, agent: str, seconds: float) -> float:
    """Hands per second of ``agent`` in every seat (the game's default player count), seeded deals, one process."""
    names = {agent: agent}
    seats = len(rummy_envs.ENVS[game].raw_env().possible_agents)
    played, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_game(game, {}, [agent] * seats, names, deal_seed(0, played), [played + s for s in range(seats)])
        played += 1
    return played / (time.perf_counter() - start)


def rlcard_novice_games_per_second(seconds: float) -> float:
    """RLCard's gin-rummy env with its novice rule agent in both seats."""
    import numpy as np
    import rlcard
    from rlcard.models.gin_rummy_rule_models import GinRummyNoviceRuleAgent

    np.random.seed(0)
    env = rlcard.make("gin-rummy", config={"seed": 0})
    env.set_agents([GinRummyNoviceRuleAgent(), GinRummyNoviceRuleAgent()])
    played, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.run(is_training=False)
        played += 1
    return played / (time.perf_counter() - start)


def tournament_seconds(workers: int, deals: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        config = parse_config({"game": "gin_rummy", "agents": ["random", "novice", "heuristic"], "deals": deals,
                               "workers": workers, "output_dir": out, "plots": False, "chunk_deals": 25})
        start = time.perf_counter()
        run_tournament(config)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="time per games/s measurement")
    parser.add_argument("--deals", type=int, default=200, help="deals of the 1-vs-2-worker tournament")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)

    rows = []
    for game in rummy_envs.ENVS:
        for agent in [name for name in registered_agents(game) if name not in SEARCH_AGENTS]:
            rate = games_per_second(game, agent, args.seconds)
            rows.append((game, agent, rate))
            print(f"{game} {agent} vs {agent}: {rate:,.1f} games/s")
    peer = rlcard_novice_games_per_second(args.seconds)
    ours = next(rate for game, agent, rate in rows if (game, agent) == ("gin_rummy", "novice"))
    print(f"RLCard gin-rummy novice vs novice: {peer:,.1f} games/s; ours/RLCard = {ours / peer:.2f}x")
    one, two = tournament_seconds(1, args.deals), tournament_seconds(2, args.deals)
    print(f"tournament of {args.deals} deals: 1 worker {one:.1f} s, 2 workers {two:.1f} s, speed-up {one / two:.2f}x")

    lines = [BEGIN, "## Tournaments (`python -m benchmarks.bench_tournament`)", "",
             f"{platform.processor() or platform.machine()}, {platform.python_implementation()} "
             f"{platform.python_version()}, {args.seconds:g} s per rate, one run.", "",
             "| game | agent (every seat) | games/s, one process |", "|---|---|---:|"]
    lines += [f"| {game} | {agent} | {rate:,.1f} |" for game, agent, rate in rows]
    lines += ["", "| measurement | ours | peer | ratio |", "|---|---:|---:|---:|",
              f"| gin hands/s, novice rule agent in both seats | {ours:,.1f} | RLCard {peer:,.1f} | **{ours / peer:.2f}x** |",
              f"| gin tournament, random/novice/heuristic, {args.deals} deals ({6 * args.deals} games), seconds | "
              f"2 workers {two:.1f} | 1 worker {one:.1f} | **{one / two:.2f}x** speed-up |", END]
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
