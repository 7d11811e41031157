"""Training throughput: env steps per second of ``rummy train`` per game, and where the
time goes (the env and its opponents, the policy's forward passes, the PPO updates).

Run from the repository root (needs the ``train`` extra)::

    python -m benchmarks.bench_train [--steps N] [--games gin_rummy ...] [--out benchmarks/RESULTS.md]

For each game with a ``configs/<game>/ppo.yaml``, the run uses that config's settings
(vectorised envs, network, opponent mix, reward shaping) for ``--steps`` learner steps,
without the periodic evaluations and checkpoints (measured separately by the tournament
benchmark). The time is split by timers around the calls themselves (no profiler overhead):
- env: ``VecEnv.step``, ``reset`` and the action masks, i.e. the rules engine, the
  observation encoding, the wrapper, the learner's features and shaping potential and the
  opponents' moves; of which
- opponents: the ``act`` calls of the opponent agents (pool snapshots and bundled agents);
- features + shaping: the learner's feature vector and shaping potential (``training.learner_env``);
- policy: the rest of the rollout collection (the forward pass that picks the learner's
  actions and values, buffer writes);
- update: ``MaskablePPO.train`` (the gradient epochs).
The figures replace the section between the markers in ``--out``. Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

import rummy_envs
from agents import Agent
from benchmarks.harness import write_section
from training.learner_env import FeatureObservation, PotentialShaping
from training.selfplay import OpponentPool
from training.train import export_policy, make_vec_env, new_model
from training.train_config import load_config

BEGIN, END = "<!-- bench_train:begin -->", "<!-- bench_train:end -->"


class Clock:
    """Seconds accumulated by one part of the loop."""

    def __init__(self) -> None:
        self.seconds = 0.0


class TimedAgent:
    """An opponent whose ``act`` calls are timed."""

    def __init__(self, agent: Agent, clock: Clock) -> None:
        self.agent, self.clock = agent, clock

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any) -> int:
        start = time.perf_counter()
        action = self.agent.act(observation, action_mask, view)
        self.clock.seconds += time.perf_counter() - start
        return action


class TimedPool(OpponentPool):
    """The config's opponent pool, handing out timed opponents."""

    clock: Clock

    def __call__(self, rng: np.random.Generator) -> Agent:
        return TimedAgent(super().__call__(rng), self.clock)


class TimedVecEnv(VecEnvWrapper):
    """Times every call into the vectorised envs."""

    def __init__(self, venv: VecEnv, clock: Clock) -> None:
        super().__init__(venv)
        self.clock = clock

    def reset(self) -> Any:
        start = time.perf_counter()
        obs = self.venv.reset()
        self.clock.seconds += time.perf_counter() - start
        return obs

    def step_wait(self) -> Any:
        start = time.perf_counter()
        result = self.venv.step_wait()
        self.clock.seconds += time.perf_counter() - start
        return result

    def step_async(self, actions: np.ndarray) -> None:
        start = time.perf_counter()
        self.venv.step_async(actions)
        self.clock.seconds += time.perf_counter() - start

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        start = time.perf_counter()
        result = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
        self.clock.seconds += time.perf_counter() - start
        return result


def timed_method(cls: type, name: str, clock: Clock) -> Any:
    """Replace ``cls.name`` by a version that adds its time to ``clock``; returns the original."""
    original = getattr(cls, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = original(*args, **kwargs)
        clock.seconds += time.perf_counter() - start
        return result

    setattr(cls, name, timed)
    return original


def measure(game: str, steps: int) -> dict[str, float]:
    """Train ``steps`` steps with the game's ppo.yaml settings; seconds per part."""
    with tempfile.TemporaryDirectory() as out:
        config = load_config(f"configs/{game}/ppo.yaml", output_dir=out, total_steps=steps)
        torch.set_num_threads(config.torch_threads)
        env_clock, opponent_clock, update_clock, rollout_clock = Clock(), Clock(), Clock(), Clock()
        learner_extras = Clock()
        originals = {(FeatureObservation, "observation"): timed_method(FeatureObservation, "observation", learner_extras),
                     (PotentialShaping, "_phi"): timed_method(PotentialShaping, "_phi", learner_extras)}
        pool = TimedPool(game, config.self_play.opponents, config.self_play.pool_size)
        pool.clock = opponent_clock
        env = TimedVecEnv(make_vec_env(config), env_clock)
        model = new_model(config, env, Path(out), config.seed)
        pool.add(export_policy(model, Path(out) / "snapshot.npz", config, 0, config.seed))
        env.env_method("set_opponents", pool)
        for name, clock in (("train", update_clock), ("collect_rollouts", rollout_clock)):
            method = getattr(model, name)

            def timed(*args: Any, _method: Any = method, _clock: Clock = clock, **kwargs: Any) -> Any:
                start = time.perf_counter()
                result = _method(*args, **kwargs)
                _clock.seconds += time.perf_counter() - start
                return result

            setattr(model, name, timed)
        start = time.perf_counter()
        model.learn(total_timesteps=steps)
        total = time.perf_counter() - start
        env.close()
        for (cls, name), original in originals.items():
            setattr(cls, name, original)
        done = int(model.num_timesteps)
    return {"steps": done, "total": total, "env": env_clock.seconds, "opponents": opponent_clock.seconds,
            "extras": learner_extras.seconds,
            "policy": rollout_clock.seconds - env_clock.seconds, "update": update_clock.seconds,
            "n_envs": config.n_envs, "net": "x".join(map(str, config.ppo.net_arch))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=65_536, help="learner steps per game")
    parser.add_argument("--games", nargs="*", default=[g for g in rummy_envs.ENVS if Path(f"configs/{g}/ppo.yaml").exists()])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)

    load = os.getloadavg()[0]
    rows = []
    for game in args.games:
        r = measure(game, args.steps)
        rows.append((game, r))
        share = {k: 100 * r[k] / r["total"] for k in ("env", "opponents", "extras", "policy", "update")}
        print(f"{game}: {r['steps'] / r['total']:,.0f} steps/s; env {share['env']:.0f}% (opponents "
              f"{share['opponents']:.0f}%, features + shaping {share['extras']:.0f}%), policy {share['policy']:.0f}%, "
              f"update {share['update']:.0f}%")

    lines = [BEGIN, "## Training (`python -m benchmarks.bench_train`)", "",
             f"{platform.processor() or platform.machine()}, {platform.python_implementation()} "
             f"{platform.python_version()}, torch {torch.__version__} (CPU, "
             f"{load_config(f'configs/{args.games[0]}/ppo.yaml').torch_threads} thread), {args.steps:,} learner steps "
             "per game with the settings of `configs/<game>/ppo.yaml` (no evaluation or checkpoints), one run, "
             f"on {os.cpu_count()} cores shared with other work (load average {load:.1f} at the start). "
             "Shares of the wall time; *env* includes the opponents' moves "
             "and the learner's features and shaping potential; *engine + wrapper* is what is left of it.", "",
             "| game | envs x net | env steps/s | env | opponents | features + shaping | engine + wrapper "
             "| policy forward | PPO update |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for game, r in rows:
        pct = lambda seconds: f"{100 * seconds / r['total']:.0f}%"  # noqa: E731
        rest = r["env"] - r["opponents"] - r["extras"]
        lines.append(f"| {game} | {r['n_envs']} x {r['net']} | {r['steps'] / r['total']:,.0f} | {pct(r['env'])} | "
                     f"{pct(r['opponents'])} | {pct(r['extras'])} | {pct(rest)} | {pct(r['policy'])} | "
                     f"{pct(r['update'])} |")
    lines.append(END)
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
