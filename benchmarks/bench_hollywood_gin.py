"""Hollywood Gin's speed against the gin envs of RLCard and OpenSpiel, as ratios measured in the same run.

Run from the repository root::

    python -m benchmarks.bench_hollywood_gin [--seconds S] [--out benchmarks/RESULTS.md]

Environment throughput under uniform-random legal play, in agent decisions per second: ours
(``hollywood_gin_v0.env()``, hand episodes: gin's hands with the three-column scoresheet)
interleaved in one group with OpenSpiel's and RLCard's plain gin envs, driven as
``benchmarks.bench_gin_rummy`` drives them (neither has Hollywood scoring: the peers are the
nearest loops an RL user would otherwise run).

The results are printed and written as Markdown into the ``bench_hollywood_gin`` section of
``--out`` (the other scripts' sections are kept). Not run in CI; ``pip install -e ".[bench]"``
installs the peers.
"""

from __future__ import annotations

import sys

from benchmarks.bench_gin_rummy import PEER_KEYS, PEERS_METHOD, peer_runners
from benchmarks.harness import (OURS_ENV_METHOD, Target, add_game_figures, env_runner, machine_line, measure_group,
                                parse, parser, publish, ratio, report, results_table, targets_table)

MODULE = "bench_hollywood_gin"
OURS = "env_hollywood_gin"
TARGETS = (Target(OURS, "env_openspiel", 1.0, "hollywood env steps/s >= 1.0x OpenSpiel's gin loop"),)


def main(argv: list[str] | None = None) -> int:
    args = parse(parser(MODULE, __doc__), argv)
    machine = machine_line(("rlcard", "open_spiel"))
    print("Hollywood Gin benchmark;", machine)
    print("\n[1] environment throughput (uniform-random legal play)")
    ours = env_runner(OURS, "ours hollywood_gin_v0.env()", args.seed, "hollywood_gin")
    rates = measure_group([ours, *peer_runners(args.seed)], args)
    add_game_figures(rates)
    rows = [("hollywood env throughput", rates[OURS], None),
            *[("hollywood env throughput", rates[key], ratio(rates[OURS], rates[key])) for key in PEER_KEYS]]
    body = ["", *results_table(rows, "ours / this", blank=True), *targets_table(rates, TARGETS)]
    lines = report(MODULE, "Hollywood Gin: the env against RLCard's and OpenSpiel's gin", argv, args, machine, body,
                   [OURS_ENV_METHOD.replace("<game>", "hollywood_gin"), PEERS_METHOD])
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
