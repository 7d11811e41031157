"""Manipulation Rummy: the table solver's speed, and the env's against gin's, as ratios
measured in the same run.

Run from the repository root::

    python -m benchmarks.bench_manipulation_rummy [--games N] [--seconds S] [--out benchmarks/RESULTS.md]

Measurements (everything seeded; mask times in CPU seconds, ``time.process_time``, so that other
work on a shared machine does not inflate them; ratios with ``time.perf_counter``):

1. Positions: every meld decision of 3-player games (two decks, two jokers) played by
   uniform-random legal play and by a greedy player (places the most valuable card the
   mask offers, commits as soon as it can), with the table size at each.
2. The full commit mask (the solver's ``commit_options``, every placement entry at once)
   at those positions, each solved afresh (the per-problem cache cleared; the small
   transition memo tables stay warm, as they do in play, and so does the forward pass of
   the position before, which the next solve starts from as far as its steps are the same):
   mean, median, 95th percentile and worst, by table size; and in an untimed pass, how many
   masks went to the witness search (``solver_witness``) and how many it answered.
3. The DP against the integer program of ``tests/manipulation_rummy_table_oracle.py`` (``scipy.optimize.milp``)
   on the same positions: table legality (``is_legal``), and the full mask (one integer
   program per possible move) on a sample; both must agree before anything is timed.
4. Memory the solver holds after solving every position from empty memo tables, in a
   separate untimed pass: its memo tables (``tracemalloc``), the compiled programme's split
   tables and the work arrays it keeps between solves (their sizes in bytes).
5. Env throughput under uniform-random legal play (agent decisions per second) with 2 and
   4 players, interleaved with gin's in one group (``benchmarks.harness``), as ratios to gin's.

The solver's entry points are ``table_solver``'s; its memo tables are found by name among
the modules of the game's package, whichever module holds them. The results are printed and written as Markdown into
the ``bench_manipulation_rummy`` section of ``--out`` (the other scripts' sections are kept).
Not run in CI.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (GIN_RATIO_METHOD, OURS_ENV_METHOD, against_gin, machine_line, parse, parser, publish,
                                report, results_table, spread)
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import solver_compiled as compiled
from rummy_envs.games.manipulation_rummy import solver_witness as witness
from rummy_envs.games.manipulation_rummy import table_solver as TS

MODULE = "bench_manipulation_rummy"
SIZE_BANDS = ((0, 9), (10, 24), (25, 39), (40, 59), (60, 200))
PACKAGE = Path(M.__file__).parent
MEMO_TABLES = ("is_legal_compiled", "_commit_options")  # the memo tables the report counts


def package_functions() -> dict[str, Any]:
    """Every function (and memoised function) defined in a module of the game's package, by name."""
    found: dict[str, Any] = {}
    for info in pkgutil.walk_packages(M.__path__, f"{M.__name__}."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if callable(value) and getattr(value, "__module__", None) == module.__name__:
                found.setdefault(name, value)
    return found


SOLVER = package_functions()
commit_options: Callable[[Any], Any] = TS.commit_options
is_legal: Callable[..., bool] = TS.is_legal


def clear_memo_tables() -> None:
    """Empty every memo table (``functools.lru_cache``) of the game's package."""
    for function in SOLVER.values():
        if hasattr(function, "cache_clear"):
            function.cache_clear()


def greedy_action(state: Any, rng: random.Random) -> int:
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


def collect_positions(games: int, policy: str, seed: int, max_decisions: int) -> list[Any]:
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


def time_masks(problems: list[Any]) -> list[float]:
    """CPU seconds per full mask, each problem solved afresh (process time, so that other
    work on a shared machine does not inflate it)."""
    out = []
    for problem in problems:
        SOLVER["_commit_options"].cache_clear()
        start = time.process_time()
        commit_options(problem)
        out.append(time.process_time() - start)
    return out


def witness_share(problems: list[Any]) -> tuple[int, int]:
    """How many of the masks the witness search was asked for (the full programme passed
    ``SEARCH_PAST_STATES`` states), and how many of those it answered, in an untimed pass."""
    search = witness._search
    answers: list[bool] = []
    masks = search.masks

    def spy(*args: Any) -> Any:
        answer = masks(*args)
        answers.append(answer is not None)
        return answer

    search.masks = spy  # type: ignore[method-assign]
    try:
        time_masks(problems)
    finally:
        del search.masks
    return len(answers), sum(answers)


def time_legality(problems: list[Any]) -> tuple[float, float]:
    """Mean seconds of ``is_legal`` by the DP (cache cleared) and by the integer program."""
    from tests.manipulation_rummy_table_oracle import oracle_is_legal

    for problem in problems:
        assert is_legal(problem.table, problem.max_copies) == oracle_is_legal(problem.table, problem.max_copies)
    start = time.perf_counter()
    for problem in problems:
        SOLVER["is_legal_compiled"].cache_clear()
        is_legal(problem.table, problem.max_copies)
    dp = (time.perf_counter() - start) / len(problems)
    start = time.perf_counter()
    for problem in problems:
        oracle_is_legal(problem.table, problem.max_copies)
    ilp = (time.perf_counter() - start) / len(problems)
    return dp, ilp


def time_oracle_masks(problems: list[Any]) -> tuple[float, float]:
    """Mean seconds of a full mask by the DP and by the integer-program oracle (agreeing)."""
    from tests.manipulation_rummy_table_oracle import oracle_options

    start = time.perf_counter()
    expected = [oracle_options(p) for p in problems]
    ilp = (time.perf_counter() - start) / len(problems)
    dp = statistics.fmean(time_masks(problems))
    for problem, want in zip(problems, expected):
        assert commit_options(problem) == want, problem
    return dp, ilp


def memo_bytes(problems: list[Any]) -> tuple[int, int, int]:
    """Bytes the solver holds after solving ``problems`` from empty caches, measured in a
    separate untimed pass (``tracemalloc`` slows everything it watches): its memo tables,
    the compiled programme's split tables, and the work arrays it keeps between solves."""
    clear_memo_tables()
    tracemalloc.start()
    for problem in problems:
        commit_options(problem)
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    memo = sum(stat.size for stat in snapshot.statistics("filename")
               if Path(stat.traceback[0].filename).parent == PACKAGE)
    work = sum(array.nbytes for space in (compiled._commits, compiled._tables) for array in space.arrays)
    work += sum(array.nbytes for array in vars(witness._search).values() if isinstance(array, np.ndarray))
    return memo, sum(table.nbytes for table in compiled._SPLIT_MEMO), work


def band_rows(problems: list[Any], seconds: list[float]) -> list[str]:
    rows = []
    for low, high in SIZE_BANDS:
        times = [t for p, t in zip(problems, seconds) if low <= sum(p.table) <= high]
        if times:
            rows.append(f"| {low}-{high} | {len(times)} | {statistics.fmean(times) * 1e3:.2f} | {max(times) * 1e3:.1f} |")
    return rows


def solver_lines(args: Any) -> list[str]:
    """The solver's part of the report: masks by policy and table size, the DP against the
    integer program, the memo tables."""
    lines = ["", "| positions | decisions | mean table | mean ms / mask | median | p95 | worst | DP is_legal vs ILP | "
             "witness search asked / answered |", "|---|---|---|---|---|---|---|---|---|"]
    all_problems = []
    bands = []
    for policy in ("random", "greedy"):
        problems = collect_positions(args.games, policy, args.seed, args.max_decisions)
        all_problems += problems
        seconds = time_masks(problems)
        ms = {k: v * 1e3 for k, v in spread(seconds).items()}
        dp, ilp = time_legality(problems[:: max(1, len(problems) // 200)])
        asked, answered = witness_share(problems)
        lines.append(f"| {policy} play | {len(problems)} | {statistics.fmean(sum(p.table) for p in problems):.1f} cards | "
                     f"{ms['mean']:.2f} | {ms['median']:.2f} | {ms['p95']:.2f} | {ms['worst']:.1f} | "
                     f"{ilp / dp:.0f}x ({dp * 1e3:.2f} vs {ilp * 1e3:.1f} ms) | {asked} / {answered} |")
        bands.append((policy, band_rows(problems, seconds)))
        print(lines[-1], flush=True)
    lines += ["", "Mask time by table size (cards on the table):", ""]
    for policy, rows in bands:
        lines += [f"| {policy}: table cards | decisions | mean ms | worst ms |", "|---|---|---|---|", *rows, ""]
    sample = random.Random(args.seed).sample(all_problems, min(args.oracle_sample, len(all_problems)))
    dp, ilp = time_oracle_masks(sample)
    lines.append(f"Full mask, DP against one integer program per possible move, on {len(sample)} of these positions "
                 f"(answers identical): {dp * 1e3:.2f} ms against {ilp * 1e3:.0f} ms, **{ilp / dp:.0f}x**.")
    memo, splits, work = memo_bytes(all_problems)
    entries = ", ".join(f"`{name}` {SOLVER[name].cache_info().currsize}" for name in MEMO_TABLES)
    lines.append(f"Memory the solver holds after the run: memo tables {memo / 2**20:.1f} MiB ({entries} entries), "
                 f"the compiled programme's split tables {splits / 2**20:.1f} MiB, its work arrays "
                 f"{work / 2**20:.1f} MiB (two sets, each dropped past {compiled.WORKSPACE_BYTES / 2**20:.0f} MiB, "
                 f"and the witness search's, of a fixed size).")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = parser(MODULE, __doc__)
    p.add_argument("--games", type=int, default=20, help="rounds per policy for the positions (default 20)")
    p.add_argument("--oracle-sample", type=int, default=40, help="positions for the full-mask oracle timing (default 40)")
    p.add_argument("--max-decisions", type=int, default=300, help="decisions per round at most (default 300)")
    p.set_defaults(seconds=20.0)
    args = parse(p, argv, games=1, oracle_sample=2, max_decisions=40)
    machine = machine_line()
    print("Manipulation Rummy benchmark;", machine)

    print("\n[1] the table solver at the meld decisions of 3-player games")
    body = solver_lines(args)

    print("\n[2] environment throughput (uniform-random legal play), against gin's")
    rates, rows = against_gin("manipulation_rummy", [(f"{n}p", f"{n} players", {"num_players": n}) for n in (2, 4)], args)
    body += ["", *results_table(rows, "/ gin env steps/s", blank=True)]
    method = [
        "- Solver: the positions, the masks (CPU time, each problem solved afresh), the integer-program oracle and "
        "the memo tables as the module docstring of `benchmarks/bench_manipulation_rummy.py` describes; "
        "3-player positions, two decks and two jokers.",
        OURS_ENV_METHOD.replace("<game>", "manipulation_rummy"), GIN_RATIO_METHOD,
    ]
    lines = report(MODULE, "Manipulation Rummy: the table solver and the env", argv, args, machine, body, method)
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
