"""Rummy 500's speed against gin's, as ratios measured in the same run, the cost of its
action mask and where a step spends its time.

Run from the repository root::

    python -m benchmarks.bench_rummy500 [--seconds S] [--out benchmarks/RESULTS.md]

Measurements (timed by ``benchmarks.harness``, everything seeded):

1. Environment throughput under uniform-random legal play, in agent decisions per second:
   ``rummy500_v0.env()`` with 2 and 4 players, interleaved in one group with our gin env
   (``gin_rummy_v0.env()``), as ratios to gin's figure.
2. The cost of the exact mask of the micro-actions (the engine's legal actions, computed
   fresh) per decision, and its share of an env step.
3. A profile of where a 2-player random-play step spends its time.

The results are printed and written as Markdown into the ``bench_rummy500`` section of
``--out`` (the other scripts' sections are kept). Not run in CI.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from benchmarks.harness import (GIN_KEY, GIN_RATIO_METHOD, OURS_ENV_METHOD, Rate, Runner, Setup, Target, Unit,
                                against_gin, files, machine_line, measure_group, parse, parser, profile_lines, publish,
                                report, results_table, targets_table, try_profile)
from rummy_envs.games import rummy500 as R

MODULE = "bench_rummy500"
PLAYERS = (2, 4)
MASK_CHUNK = 200  # decisions whose masks one timed unit computes
TARGETS = (Target("env_rummy500_2p", GIN_KEY, 0.5, "rummy500 2-player env steps/s >= 0.5x gin's"),)
PROFILE_PARTS = (
    # (part, (files, functions whose own time counts for it; None: every function of those files))
    ("mask (legal actions)", (files("games/rummy500"), frozenset({
        "_compute_legal", "_draw_actions", "_meld_actions", "_shapes", "_coverings", "_commit_ok", "_may_take_discard",
        "_placeable", "_after", "legal_actions", "new_sequences_in"}))),
    ("engine apply", (files("games/rummy500"), None)),
    ("observation encoding", (files("envs/rummy500.py"), None)),
    ("bits to floats", (files("envs/base.py"), frozenset({"bits_to_array"}))),
)


def engine_states(seed: int, players: int, decisions: int) -> list[Any]:
    """Engine states of uniform-random Rummy 500 games, one per decision, each cloned
    before its legal actions were computed (so a clone of it computes them afresh)."""
    rng = random.Random(seed)
    config = R.Rummy500Config(num_players=players)
    out: list[Any] = []
    game = 0
    while len(out) < decisions:
        state = R.Rummy500State(config, seed + game)
        game += 1
        while not state.is_terminal() and len(out) < decisions:
            out.append(state.clone())
            state.apply(rng.choice(state.legal_actions()))
    return out


def mask_unit(seed: int, players: int) -> tuple[Unit, Setup]:
    """A unit computes the legal actions of ``MASK_CHUNK`` decisions from scratch; fresh
    clones are made (untimed) before each unit."""
    states = engine_states(seed, players, 20 * MASK_CHUNK)
    chunks = [states[i:i + MASK_CHUNK] for i in range(0, len(states), MASK_CHUNK)]
    work: dict[str, Any] = {"next": 0, "fresh": []}

    def before() -> None:
        work["fresh"] = [s.clone() for s in chunks[work["next"]]]
        work["next"] = (work["next"] + 1) % len(chunks)

    def unit() -> int:
        for state in work["fresh"]:
            state.legal_actions()
        return len(work["fresh"])

    return unit, before


def main(argv: list[str] | None = None) -> int:
    args = parse(parser(MODULE, __doc__), argv)
    machine = machine_line()
    print("Rummy 500 benchmark;", machine)

    print("\n[1] environment throughput (uniform-random legal play), against gin's")
    rates, rows = against_gin("rummy500", [(f"{n}p", f"{n} players", {"num_players": n}) for n in PLAYERS], args)

    print("\n[2] the mask of a decision, computed fresh")
    masks = measure_group([Runner(Rate(f"mask_rummy500_{n}p", f"mask of a decision, {n} players", "masks/s"),
                                  lambda n=n: mask_unit(args.seed, n)) for n in PLAYERS], args)
    for n in PLAYERS:
        mask, env = masks[f"mask_rummy500_{n}p"], rates[f"env_rummy500_{n}p"]
        if mask.rate is not None:
            mask.extra["us per decision"] = f"{1e6 / mask.rate:.1f}"
            if env.rate is not None:
                mask.extra["share of an env step"] = f"{env.rate / mask.rate:.0%}"
        rows.append(("mask of a decision, computed fresh", mask, None))
    rates.update(masks)

    print("\n[3] where a 2-player step spends its time")
    profile = try_profile(args.seed, args.seconds, "rummy500", PROFILE_PARTS)

    body = ["", *results_table(rows, "/ gin env steps/s", blank=True), *profile_lines("2-player", profile),
            *targets_table(rates, TARGETS)]
    method = [
        OURS_ENV_METHOD.replace("<game>", "rummy500"), GIN_RATIO_METHOD,
        "- Mask: engine states of uniform-random games are cloned before their legal actions are computed; each "
        f"timed unit computes the legal actions of {MASK_CHUNK} such states from scratch (fresh clones made untimed). "
        "The share of a step is that time per decision over the env's time per decision.",
        "- Profile: the engine's package as a whole, its mask functions by name.",
    ]
    lines = report(MODULE, "Rummy 500: the env against gin's, the mask and a profile", argv, args, machine, body,
                   method)
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
