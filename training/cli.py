"""The ``rummy`` command: ``rummy tournament CONFIG.yaml``, ``rummy play GAME``,
``rummy train CONFIG.yaml``, ``rummy export MODEL.zip POLICY.npz``, ``rummy view GAMES.jsonl``
and ``rummy serve --game GAME``."""

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
    try:
        run(config, show=True)
    except ConfigError as err:
        print(f"rummy tournament: {err}", file=sys.stderr)
        return 2
    print(f"outputs in {config.output_dir}/")
    return 0


def train_main(argv: list[str]) -> int:
    """``rummy train CONFIG.yaml [--seeds 0-7] [--backend ray] [--resume] ...``"""
    parser = argparse.ArgumentParser(prog="rummy train", description="Train a MaskablePPO self-play agent from a "
                                     "YAML config (see configs/<game>/ppo.yaml); the flags override its keys.")
    parser.add_argument("config", help="YAML training config")
    parser.add_argument("--seeds", help="seeds to train: 3, 0-7 or 0,2,5 (default: the config's seed)")
    parser.add_argument("--backend", choices=["local", "ray"], default="local",
                        help="several seeds one after another (local) or as Ray tasks (ray)")
    parser.add_argument("--ray-address", dest="ray_address", help="address of a running Ray cluster")
    parser.add_argument("--workers", type=int, help="CPUs of a local Ray (default: one per seed)")
    parser.add_argument("--resume", action="store_true", help="continue each seed from its latest checkpoint")
    parser.add_argument("--total-steps", dest="total_steps", type=int, help="train up to this many steps")
    parser.add_argument("--output-dir", dest="output_dir")
    parser.add_argument("--export-dir", dest="export_dir", help="copy the final policy here too (default: it stays "
                        "in the run's output dir)")
    parser.add_argument("--force", action="store_true", help="let --export-dir replace a policy already there")
    parser.add_argument("--no-progress", dest="progress_bar", action="store_false", default=None)
    args = parser.parse_args(argv)
    from training.train_config import load_config, parse_seeds

    try:
        config = load_config(args.config, total_steps=args.total_steps, output_dir=args.output_dir,
                             export_dir=args.export_dir)
        seeds = parse_seeds(args.seeds) if args.seeds else [config.seed]
    except (ConfigError, OSError) as err:
        print(f"rummy train: {err}", file=sys.stderr)
        return 2
    try:
        from training.train import train_seeds
    except ImportError as err:
        print(f"rummy train: {err}; install the training extra: pip install 'rummy-envs[train]'", file=sys.stderr)
        return 2
    try:
        results = train_seeds(config, seeds, args.backend, args.resume, args.ray_address, args.workers,
                              args.progress_bar, args.force)
    except (ConfigError, OSError) as err:
        print(f"rummy train: {err}", file=sys.stderr)
        return 2
    for result in results:
        print(f"seed {result.seed}: {result.steps:,} steps in {result.elapsed_seconds / 60:.1f} min; "
              f"policy {result.policy}")
    return 0


def play_main(argv: list[str]) -> int:
    from training.play import main

    return main(argv)


def view_main(argv: list[str]) -> int:
    from training.viewer import main

    return main(argv)


def serve_main(argv: list[str]) -> int:
    from training.serve import main

    return main(argv)


def export_main(argv: list[str]) -> int:
    """``rummy export MODEL.zip POLICY.npz --game GAME [--option KEY=VALUE ...] [--features NAME] [--force]``"""
    from training.play import parse_option

    parser = argparse.ArgumentParser(prog="rummy export", description="Turn a MaskablePPO or PPO model trained on "
                                     "the single-seat wrapper (rummy_envs/<game>-v0) into a numpy policy that plays "
                                     "as the agent ppo:<path> without torch.")
    parser.add_argument("model", metavar="MODEL.zip", help="the model, as stable-baselines3's model.save wrote it")
    parser.add_argument("policy", metavar="POLICY.npz", help="the numpy policy to write")
    parser.add_argument("--game", required=True, help="the game the model was trained on")
    parser.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE",
                        help="an env option it was trained with, repeatable (int, float, true/false, none or text)")
    parser.add_argument("--features", metavar="NAME",
                        help="the feature set appended to its observation in training (agents.features)")
    parser.add_argument("--force", action="store_true", help="replace POLICY if it exists")
    args = parser.parse_args(argv)
    try:
        from training.export import ExportError, export_sb3
    except ImportError as err:
        print(f"rummy export: {err}; install the training extra: pip install 'rummy-envs[train]'", file=sys.stderr)
        return 2
    try:
        export_sb3(args.model, args.policy, args.game, dict(args.option), args.features, args.force)
    except (ExportError, OSError) as err:
        print(f"rummy export: {err}", file=sys.stderr)
        return 2
    print(f"policy written to {args.policy}; it plays as the agent ppo:{args.policy}")
    return 0


COMMANDS = {"tournament": tournament_main, "play": play_main, "train": train_main, "export": export_main,
            "view": view_main, "serve": serve_main}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: rummy {tournament,play,train,export,view,serve} ...\n"
              "  rummy tournament CONFIG.yaml   a duplicate round-robin tournament\n"
              "  rummy play GAME --opponent NAME   play an agent in the terminal\n"
              "  rummy train CONFIG.yaml   train a self-play PPO agent (pip install 'rummy-envs[train]')\n"
              "  rummy export MODEL.zip POLICY.npz --game GAME   your SB3 model as a ppo:<path> agent\n"
              "  rummy view GAMES.jsonl [--game N]   a logged game as an HTML page\n"
              "  rummy serve --game GAME --opponent NAME   play an agent in the browser (pip install "
              "'rummy-envs[serve]')",
              file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
