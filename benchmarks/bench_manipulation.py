"""Manipulation Rummy: the table solver's speed, and the env's against gin's, as ratios.

Run from the repository root::

    python -m benchmarks.bench_manipulation [--games N] [--seconds S] [--out benchmarks/RESULTS.md]

Measurements (everything seeded; mask times in CPU seconds, ``time.process_time``, so that other
work on a shared machine does not inflate them; ratios with ``time.perf_counter``):

1. Positions: every meld decision of 3-player games (two decks, two jokers) played by
   uniform-random legal play and by a greedy player (places the most valuable card the
   mask offers, commits as soon as it can), with the table size at each.
2. The full commit mask (``table_solver.commit_options``, every placement entry at once)
   at those positions, each solved afresh (the per-problem cache cleared; the small
   transition memo tables stay warm, as they do in play): mean, median, 95th percentile
   and worst, by table size.
3. The DP against the integer program of ``tests/manipulation_rummy_table_oracle.py`` (``scipy.optimize.milp``)
   on the same positions: table legality (``is_legal``), and the full mask (one integer
   program per possible move) on a sample; both must agree before anything is timed.
4. Memory held by the solver's memo tables after solving every position from empty memo
   tables, in a separate untimed pass (``tracemalloc``).
5. Env throughput under uniform-random legal play (agent decisions per second) with 2 and
   4 players, interleaved with gin's in the same run, as a ratio to gin's.

The results are printed and written as Markdown into the marked ``bench_manipulation``
section of ``--out`` (the other scripts' sections are kept). Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import tracemalloc
from pathlib import Path

from benchmarks.sections import write_section
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.games import manipulation_rummy as M

BEGIN, END = "<!-- bench_manipulation:begin -->", "<!-- bench_manipulation:end -->"
SIZE_BANDS = ((0, 9), (10, 24), (25, 39), (40, 59), (60, 200))


def greedy_action(state: M.ManipulationState, rng: random.Random) -> int:
    """Place the most valuable offered natural (then jokers), commit once legal, knock."""
    legal = state.legal_actions()
    if M.KNOCK in legal:
        return M.KNOCK
    places = [a for a in legal if M.PLACE <= a < M.PLACE + M.NUM_CARDS]
    if places:
        return max(places, key=lambda a: (M.CARD_VALUES[a - M.PLACE], a))
    if M.COMMIT in legal:
        return M.COMMIT
    others = [a for a in legal if a >= M.JOKER_AS]
    if others:
        return others[0]
    return rng.choice(legal)


def collect_positions(games: int, policy: str, seed: int, max_decisions: int) -> list[TS.CommitProblem]:
    """The solver problem at every meld decision of ``games`` 3-player rounds (each cut
    after ``max_decisions`` decisions: random players hoard cards and rounds run long)."""
    rng = random.Random(seed)
    problems = []
    for game in range(games):
        state = M.ManipulationState(M.ManipulationConfig(num_players=3), seed=seed + game)
        for _ in range(max_decisions):
            if state.is_terminal():
                break
            if state.phase == M.Phase.MELD:
                problems.append(state.commit_problem())
            legal = state.legal_actions()
            action = greedy_action(state, rng) if policy == "greedy" else rng.choice(legal)
            state.apply(action)
    return problems


def time_masks(problems: list[TS.CommitProblem]) -> list[float]:
    """CPU seconds per full mask, each problem solved afresh (process time, so that other
    work on a shared machine does not inflate it)."""
    out = []
    for problem in problems:
        TS._commit_options.cache_clear()
        start = time.process_time()
        TS.commit_options(problem)
        out.append(time.process_time() - start)
    return out


def time_legality(problems: list[TS.CommitProblem]) -> tuple[float, float]:
    """Mean seconds of ``is_legal`` by the DP (cache cleared) and by the integer program."""
    from tests.manipulation_rummy_table_oracle import oracle_is_legal

    tables = [p.table for p in problems]
    for table, problem in zip(tables, problems):
        assert TS.is_legal(table, problem.max_copies) == oracle_is_legal(table, problem.max_copies)
    start = time.perf_counter()
    for table, problem in zip(tables, problems):
        TS._legal.cache_clear()
        TS.is_legal(table, problem.max_copies)
    dp = (time.perf_counter() - start) / len(tables)
    start = time.perf_counter()
    for table, problem in zip(tables, problems):
        oracle_is_legal(table, problem.max_copies)
    ilp = (time.perf_counter() - start) / len(tables)
    return dp, ilp


def time_oracle_masks(problems: list[TS.CommitProblem]) -> tuple[float, float]:
    """Mean seconds of a full mask by the DP and by the integer-program oracle (agreeing)."""
    from tests.manipulation_rummy_table_oracle import oracle_options

    start = time.perf_counter()
    expected = [oracle_options(p) for p in problems]
    ilp = (time.perf_counter() - start) / len(problems)
    dp = statistics.fmean(time_masks(problems))
    for problem, want in zip(problems, expected):
        assert TS.commit_options(problem) == want, problem
    return dp, ilp


def memo_bytes(problems: list[TS.CommitProblem]) -> int:
    """Bytes the solver's memo tables hold after solving ``problems`` from empty caches,
    measured in a separate untimed pass (``tracemalloc`` slows everything it watches)."""
    for cached in vars(TS).values():  # every lru_cache of the module
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
    tracemalloc.start()
    for problem in problems:
        TS.commit_options(problem)
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return sum(stat.size for stat in snapshot.statistics("filename")
               if stat.traceback[0].filename.endswith("table_solver.py"))


def env_rates(seconds: float, seed: int) -> dict[str, float]:
    """Random-play decisions per second, gin and Manipulation Rummy interleaved in slices."""
    import rummy_envs

    configs = {
        "gin_rummy": ("gin_rummy", {}),
        "manipulation_2p": ("manipulation_rummy", {"num_players": 2}),
        "manipulation_4p": ("manipulation_rummy", {"num_players": 4}),
    }
    envs = {key: rummy_envs.ENVS[game].env(**options) for key, (game, options) in configs.items()}
    totals = {key: [0, 0.0] for key in configs}
    rng = random.Random(seed)
    games = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        for key, env in envs.items():
            start = time.perf_counter()
            env.reset(seed=seed + games)
            steps = 0
            for _agent in env.agent_iter():
                obs, _reward, term, trunc, _info = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                env.step(int(rng.choice(obs["action_mask"].nonzero()[0])))
                steps += 1
                if time.perf_counter() > deadline:  # a long random game is cut, its steps counted
                    break
            totals[key][0] += steps
            totals[key][1] += time.perf_counter() - start
        games += 1
    return {key: steps / elapsed for key, (steps, elapsed) in totals.items()}


def band_rows(problems: list[TS.CommitProblem], seconds: list[float]) -> list[str]:
    rows = []
    for low, high in SIZE_BANDS:
        times = [t for p, t in zip(problems, seconds) if low <= sum(p.table) <= high]
        if times:
            rows.append(f"| {low}-{high} | {len(times)} | {statistics.fmean(times) * 1e3:.2f} | {max(times) * 1e3:.1f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20, help="rounds per policy for the positions")
    parser.add_argument("--oracle-sample", type=int, default=40, help="positions for the full-mask oracle timing")
    parser.add_argument("--seconds", type=float, default=20.0, help="env throughput budget")
    parser.add_argument("--max-decisions", type=int, default=300, help="decisions per round at most")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args()
    lines = [BEGIN, "## Manipulation Rummy: the table solver and the env", ""]
    lines.append(f"`python -m benchmarks.bench_manipulation --games {args.games} --max-decisions {args.max_decisions} "
                 f"--seconds {args.seconds:g}` (3-player positions; see the script's docstring for the method; "
                 f"load average {os.getloadavg()[0]:.1f} at the start on {os.cpu_count()} CPUs).")
    lines.append("")
    lines.append("| positions | decisions | mean table | mean ms / mask | median | p95 | worst | DP is_legal vs ILP |")
    lines.append("|---|---|---|---|---|---|---|---|")
    all_problems = []
    bands = []
    for policy in ("random", "greedy"):
        problems = collect_positions(args.games, policy, args.seed, args.max_decisions)
        all_problems += problems
        seconds = time_masks(problems)
        ordered = sorted(seconds)
        dp, ilp = time_legality(problems[:: max(1, len(problems) // 200)])
        lines.append(
            f"| {policy} play | {len(problems)} | {statistics.fmean(sum(p.table) for p in problems):.1f} cards | "
            f"{statistics.fmean(seconds) * 1e3:.2f} | {statistics.median(seconds) * 1e3:.2f} | "
            f"{ordered[int(0.95 * (len(ordered) - 1))] * 1e3:.2f} | {ordered[-1] * 1e3:.1f} | "
            f"{ilp / dp:.0f}x ({dp * 1e3:.2f} vs {ilp * 1e3:.1f} ms) |"
        )
        bands.append((policy, band_rows(problems, seconds)))
        print(lines[-1], flush=True)
    lines += ["", "Mask time by table size (cards on the table):", ""]
    for policy, rows in bands:
        lines += [f"| {policy}: table cards | decisions | mean ms | worst ms |", "|---|---|---|---|", *rows, ""]
    rng = random.Random(args.seed)
    sample = rng.sample(all_problems, min(args.oracle_sample, len(all_problems)))
    dp, ilp = time_oracle_masks(sample)
    lines.append(f"Full mask, DP against one integer program per possible move, on {len(sample)} of these positions "
                 f"(answers identical): {dp * 1e3:.2f} ms against {ilp * 1e3:.0f} ms, **{ilp / dp:.0f}x**.")
    memo = memo_bytes(all_problems)
    lines.append(f"Memory held by the solver's memo tables after the run: {memo / 2**20:.1f} MiB "
                 f"(`_step_outcomes` {TS._step_outcomes.cache_info().currsize} entries, "
                 f"`_legal` {TS._legal.cache_info().currsize}, `_commit_options` {TS._commit_options.cache_info().currsize}).")
    rates = env_rates(args.seconds, args.seed)
    lines += ["", "| env (random legal play) | decisions/s | vs gin_rummy_v0 |", "|---|---|---|"]
    for key, rate in rates.items():
        lines.append(f"| {key} | {rate:,.0f} | {rate / rates['gin_rummy']:.2f}x |")
    lines.append(END)
    section = "\n".join(lines)
    print(section)
    write_section(args.out, BEGIN, END, section)


if __name__ == "__main__":
    main()
