"""The ``rummy`` command: ``rummy tournament CONFIG.yaml`` and ``rummy play GAME``."""

from __future__ import annotations

import argparse
import sys

from training.config import ConfigError


def tournament_main(argv: list[str]) -> int:
    """``rummy tournament CONFIG.yaml [--workers N] [--deals N] [--output-dir DIR] ...``"""
    from training.tournament import load_config, run

    parser = argparse.ArgumentParser(prog="rummy tournament", description="Play a duplicate round-robin "
                                     "tournament from a YAML config; the flags override its keys.")
    parser.add_argument("config", help="YAML tournament config (see configs/tournaments/)")
    parser.add_argument("--workers", type=int, help="parallel worker processes (or Ray CPUs)")
    parser.add_argument("--deals", type=int, help="number of shared deals")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--output-dir", dest="output_dir")
    parser.add_argument("--backend", choices=["local", "ray"])
    parser.add_argument("--ray-address", dest="ray_address", help="address of a running Ray cluster")
    parser.add_argument("--no-plots", dest="plots", action="store_false", default=None)
    args = vars(parser.parse_args(argv))
    path = args.pop("config")
    try:
        config = load_config(path, **args)
    except (ConfigError, OSError) as err:
        print(f"rummy tournament: {err}", file=sys.stderr)
        return 2
    run(config, show=True)
    print(f"outputs in {config.output_dir}/")
    return 0


def play_main(argv: list[str]) -> int:
    from training.play import main

    return main(argv)


COMMANDS = {"tournament": tournament_main, "play": play_main}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: rummy {tournament,play} ...\n"
              "  rummy tournament CONFIG.yaml   a duplicate round-robin tournament\n"
              "  rummy play GAME --opponent NAME   play an agent in the terminal", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
