"""Least Count's speed against gin's, as ratios measured in the same run, and where a step
spends its time.

Run from the repository root::

    python -m benchmarks.bench_least_count [--seconds S] [--out benchmarks/RESULTS.md]

Measurements (timed by ``benchmarks.harness``, everything seeded):

1. Environment throughput under uniform-random legal play, in agent decisions per second:
   ``least_count_v0.env()`` with 4 and 10 players (one-round episodes) and 4-player matches,
   interleaved in one group with our gin env (``gin_rummy_v0.env()``), as ratios to gin's figure.
2. A profile of where a 4-player random-play step spends its time.

The results are printed and written as Markdown into the ``bench_least_count`` section of
``--out`` (the other scripts' sections are kept). Not run in CI.
"""

from __future__ import annotations

import sys

from benchmarks.harness import (GIN_KEY, GIN_RATIO_METHOD, OURS_ENV_METHOD, Target, against_gin, files, machine_line,
                                parse, parser, profile_lines, publish, report, results_table, targets_table, try_profile)

MODULE = "bench_least_count"
ROWS = (
    # (key suffix, label, options): one-round episodes (the default) at 4 and 10 players, and matches
    ("4p", "4 players", {"num_players": 4}),
    ("10p", "10 players", {"num_players": 10}),
    ("4p_match", "4 players, episode=\"match\"", {"num_players": 4, "episode": "match"}),
)
TARGETS = (Target("env_least_count_4p", GIN_KEY, 1.0, "least_count 4-player env steps/s >= gin's"),)
PROFILE_PARTS = (
    # (part, (files, functions whose own time counts for it; None: every function of those files))
    ("mask (legal actions)", (files("games/least_count"), frozenset({
        "_compute_legal", "legal_actions", "fast_legal_discards", "_legal_discards_by_rank_bits", "_sequence_windows",
        "_legal_discards_by_suit_or_copies", "_sets_of_ranks", "_position_map", "_add_sets", "_add_runs",
        "_add_sequences", "_add_flush", "_runs_in_row", "may_declare"}))),
    ("engine apply, deal and showdown", (files("games/least_count"), None)),
    ("observation encoding", (files("envs/least_count.py"), None)),
    ("game seeds and keyed shuffles", (files("cards.py", "envs/base.py"), frozenset({
        "keyed_permutation", "keyed_order", "keyed_word", "episode_seed"}))),
    ("the benchmark's random choice of action", (files("random.py"), None)),
)


def main(argv: list[str] | None = None) -> int:
    args = parse(parser(MODULE, __doc__), argv)
    machine = machine_line()
    print("Least Count benchmark;", machine)

    print("\n[1] environment throughput (uniform-random legal play), against gin's")
    rates, rows = against_gin("least_count", ROWS, args)

    print("\n[2] where a 4-player step spends its time")
    profile = try_profile(args.seed, args.seconds, "least_count", PROFILE_PARTS)

    body = ["", *results_table(rows, "/ gin env steps/s", blank=True), *profile_lines("4-player", profile),
            *targets_table(rates, TARGETS)]
    method = [OURS_ENV_METHOD.replace("<game>", "least_count"), GIN_RATIO_METHOD,
              "- Profile: the engine's package as a whole, its mask functions by name."]
    lines = report(MODULE, "Least Count: the env against gin's and a profile", argv, args, machine, body, method)
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
