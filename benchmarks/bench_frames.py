"""What ``render_mode="rgb_array"`` frames cost: random play with a frame drawn at every
decision against the same play without frames, per game, measured in one run.

Run from the repository root::

    python -m benchmarks.bench_frames [--seconds S] [--out benchmarks/RESULTS.md]

For each game one interleaved group times, in agent decisions per second under
uniform-random legal play, our env as every game benchmark drives it, and the same loop
calling ``env.render()`` (every card shown) after each decision; the frames per second of
drawing alone follow from the two rates. The results are printed and written as Markdown into
the ``bench_frames`` section of ``--out`` (the other scripts' sections are kept). Not run in CI.
"""

from __future__ import annotations

import sys

from benchmarks.harness import (OURS_ENV_METHOD, Rate, Row, Runner, env_runner, env_unit, machine_line, measure_group,
                                parse, parser, publish, ratio, report, results_table)

MODULE = "bench_frames"
GAMES = {"gin_rummy": {}, "hollywood_gin": {}, "rummy500": {"num_players": 3},
         "manipulation_rummy": {"num_players": 3}, "least_count": {"num_players": 4}}


def frames_per_second(plain: Rate, framed: Rate) -> float | None:
    """Frames drawn per second of drawing alone: the time per decision with a frame, less the
    time without."""
    if plain.rate is None or framed.rate is None or framed.rate >= plain.rate:
        return None
    return 1 / (1 / framed.rate - 1 / plain.rate)


def main(argv: list[str] | None = None) -> int:
    args = parse(parser(MODULE, __doc__), argv)
    machine = machine_line(("Pillow",))
    print("Frames benchmark;", machine)
    rates: dict[str, Rate] = {}
    rows: list[Row] = []
    drawing = ["", "| game | options | frames/s of drawing alone |", "|---|---|---:|"]
    for game, options in GAMES.items():
        print(f"\n[{game}] random play without and with a frame per decision")
        plain_key, framed_key = f"env_{game}", f"frames_{game}"
        group = measure_group([env_runner(plain_key, f"ours {game}_v0.env()", args.seed, game, **options),
                               Runner(Rate(framed_key, f"ours {game}_v0.env(), render() each decision", "steps/s"),
                                      lambda game=game, options=options: env_unit(args.seed, game, frames=True,
                                                                                  **options))],
                              args)
        rates |= group
        rows += [(f"{game}: no frames", group[plain_key], None),
                 (f"{game}: a frame each decision", group[framed_key], ratio(group[framed_key], group[plain_key]))]
        fps = frames_per_second(group[plain_key], group[framed_key])
        drawing.append(f"| {game} | {options or 'defaults'} | {'-' if fps is None else f'{fps:,.0f}'} |")
    body = ["", *results_table(rows, "/ no frames", blank=True), *drawing]
    method = [OURS_ENV_METHOD.replace("<game>", "each game's"),
              "- Frames: the same loop with `render_mode=\"rgb_array\"` and `env.render()` (every card shown) after "
              "each decision; drawing alone is 1 / (1 / framed rate - 1 / plain rate)."]
    lines = report(MODULE, "Frames: random play with and without a picture at every decision", argv, args, machine,
                   body, method)
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
