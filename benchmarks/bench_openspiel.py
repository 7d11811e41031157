"""What the OpenSpiel bridge costs: random play through ``pyspiel`` against our env of the
same game and, for gin, against OpenSpiel's native C++ ``gin_rummy``, measured in one run.

Run from the repository root::

    python -m benchmarks.bench_openspiel [--seconds S] [--out benchmarks/RESULTS.md]

For each game one interleaved group times, in agent decisions per second under
uniform-random legal play:

- our env (``<game>_v0.env()``, as every game benchmark drives it);
- the bridged game (``rummy_envs.openspiel.load_game(game)``), driven as an OpenSpiel user
  drives a game: chance nodes sampled from ``chance_outcomes()``, the mover's
  ``observation_tensor()`` read at every decision (what an RL loop reads), then
  ``apply_action`` of a random legal action;
- for gin, OpenSpiel's native ``gin_rummy`` in the same loop (``bench_gin_rummy``'s peer).

The results are printed and written as Markdown into the ``bench_openspiel`` section of
``--out`` (the other scripts' sections are kept). Not run in CI; ``pip install -e
".[openspiel]"`` installs OpenSpiel.
"""

from __future__ import annotations

import random
import sys

import numpy as np

from benchmarks.bench_gin_rummy import openspiel_env_unit
from benchmarks.harness import (GIN_KEY, OURS_ENV_METHOD, MAX_DECISIONS_PER_GAME, Rate, Row, Runner, Unit,
                                env_runner, gin_runner, machine_line, measure_group, parse, parser, publish, ratio,
                                report, results_table)

MODULE = "bench_openspiel"
GAMES = ("gin_rummy", "hollywood_gin", "rummy500", "manipulation_rummy", "least_count")
NATIVE = "openspiel_native_gin"


def bridge_unit(seed: int, game: str) -> tuple[Unit, None]:
    """A unit plays one bridged game through pyspiel by random legal play (chance by its
    outcomes), reading the mover's observation tensor at each decision."""
    from rummy_envs import openspiel

    spiel_game = openspiel.load_game(game)
    rng = random.Random(seed)
    choice, randrange, asarray, f32 = rng.choice, rng.randrange, np.asarray, np.float32

    def play_one_game() -> int:
        state = spiel_game.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()  # uniform seed bytes: sampling by index is exact
                state.apply_action(outcomes[randrange(len(outcomes))][0])
                continue
            asarray(state.observation_tensor(state.current_player()), dtype=f32)
            state.apply_action(choice(state.legal_actions()))
            steps += 1
            if steps > MAX_DECISIONS_PER_GAME:
                raise RuntimeError(f"a bridged {game} game exceeded {MAX_DECISIONS_PER_GAME} decisions")
        return steps

    return play_one_game, None


def game_group(game: str, args: object) -> tuple[dict[str, Rate], list[Row]]:
    """Our env, the bridge (and for gin OpenSpiel's native gin) in one interleaved group."""
    env_key, bridge_key = (GIN_KEY if game == "gin_rummy" else f"env_{game}"), f"bridge_{game}"
    runners = [gin_runner(args.seed) if game == "gin_rummy" else env_runner(env_key, f"ours {game}_v0.env()",
                                                                             args.seed, game),
               Runner(Rate(bridge_key, f"bridged {game} through pyspiel (+obs tensor)", "steps/s"),
                      lambda: bridge_unit(args.seed, game))]
    if game == "gin_rummy":
        runners.append(Runner(Rate(NATIVE, "OpenSpiel gin_rummy, native C++ (+obs tensor)", "steps/s"),
                              lambda: openspiel_env_unit(args.seed)))
    rates = measure_group(runners, args)
    rows: list[Row] = [(f"{game}: env", rates[env_key], None),
                       (f"{game}: bridge / our env", rates[bridge_key], ratio(rates[bridge_key], rates[env_key]))]
    if game == "gin_rummy":
        rows.append(("gin_rummy: bridge / OpenSpiel native", rates[NATIVE], ratio(rates[bridge_key], rates[NATIVE])))
    return rates, rows


def main(argv: list[str] | None = None) -> int:
    args = parse(parser(MODULE, __doc__), argv)
    machine = machine_line(("open_spiel",))
    print("OpenSpiel bridge benchmark;", machine)
    rates: dict[str, Rate] = {}
    rows: list[Row] = []
    for game in GAMES:
        print(f"\n[{game}] random play: our env, the bridge" + (", OpenSpiel's native gin" if game == "gin_rummy" else ""))
        group_rates, group_rows = game_group(game, args)
        rates |= group_rates
        rows += group_rows
    body = ["", *results_table(rows, "ratio", blank=True)]
    method = [OURS_ENV_METHOD.replace("<game>", "each game's"),
              "- Bridge: `rummy_envs.openspiel.load_game(game)` (default options), `new_initial_state()`, the eight "
              "seed-byte chance nodes sampled from `chance_outcomes()`, then at each decision "
              "`observation_tensor(current_player())` as float32 and `apply_action` of a random legal action; "
              "OpenSpiel's native gin is driven by the same loop (its stock draws are chance nodes too). A ratio "
              "row divides the bridge's steps/s by the figure named, measured in the same group."]
    lines = report(MODULE, "OpenSpiel bridge: random play through pyspiel against our envs and native gin",
                   argv, args, machine, body, method)
    return publish(MODULE, lines, args.out, rates)


if __name__ == "__main__":
    sys.exit(main())
