"""Training throughput: env steps per second of ``rummy train`` per game, where the time
goes, and a plain Stable-Baselines3 pipeline measured in the same run as the reference.

Run from the repository root (needs the ``train`` extra)::

    python -m benchmarks.bench_train [--steps N] [--games gin_rummy ...] [--pipelines config sb3]
                                     [--out benchmarks/RESULTS.md]

For each game with a ``configs/<game>/ppo.yaml`` and each pipeline, ``--steps`` learner
steps are trained with that config's network, PPO settings, opponent mix, features and
shaping, without the periodic evaluations and checkpoints (measured by the tournament
benchmark). The pipelines:
- ``config``: the envs as the config sets them (``vec_env``, ``env_workers``);
- ``dummy``: the config with ``vec_env: dummy`` (the envs stepped one by one, in process);
- ``batched``: ``vec_env: batched`` in the training process;
- ``sharded``: ``vec_env: batched`` with two subprocess env workers, which play whole
  rollouts (``training.rollouts``);
- ``sb3``: the reference a user would write from SB3's docs: sb3-contrib's MaskablePPO with
  the config's PPO settings and network over ``gymnasium.make("rummy_envs/<game>-v0")`` in a
  ``DummyVecEnv`` of the same number of envs, against random opponents, no features.
The time is split by timers around the calls themselves (no profiler), counting nested
timed calls once: *env* is the time the learner waits on the envs (stepping, resets, masks; with rollouts
played by env workers, the wait for the rollout less the learner's forward passes and action
draws in it);
*opponents* the opponents' moves (their ``act``, or the batched forward passes and their
inputs); *features + shaping* the learner's feature vector and shaping potential; *engine +
wrapper* the rest of *env*; *policy* the rest of rollout collection (the learner's forward
passes, buffer writes); *update* ``MaskablePPO.train``. With env workers the opponents' and
features' seconds are measured in the workers, summed and divided by the number of workers
(their wall-time equivalent when the shards are balanced). Each measurement runs in a fresh
process. The figures replace the section between the markers in ``--out``. Not run in CI (a
smoke run with a few steps is).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper

import rummy_envs
import rummy_envs.wrappers  # registers rummy_envs/<game>-v0 with Gymnasium
from agents.ppo import NumpyPolicy
from benchmarks.harness import write_section
from rummy_envs.wrappers import SingleAgentEnv
from training import rollouts
from training.export import TORCH_ACTIVATIONS
from training.learner_env import FeatureObservation, LearnerWrapper, PotentialShaping
from training.selfplay import OpponentPool
from training.train import export_policy, make_env, make_vec_env, new_model
from training.rollouts import sharded_env
from training.train_config import TrainConfig, load_config

BEGIN, END = "<!-- bench_train:begin -->", "<!-- bench_train:end -->"
PIPELINES = ("config", "dummy", "batched", "sharded", "sb3")
# The timed calls of each process: (class, method, clock). Opponent moves are SingleAgentEnv.answer
# (rule-based players, and any player stepped alone) or a batched policy's inputs and forward pass.
# A NumpyPolicy's logits outside those calls are the learner's own forward passes in rollouts
# played by env workers (training.rollouts), and its actions are drawn there by rollouts.sample:
# both are what MaskablePPO's policy does in a rollout it collects itself.
TIMED = [(SingleAgentEnv, "answer", "opponents"), (NumpyPolicy, "policy_input", "opponents"),
         (NumpyPolicy, "best_actions", "opponents"), (FeatureObservation, "observation", "extras"),
         (PotentialShaping, "_phi", "extras"), (NumpyPolicy, "logits", "learner"), (rollouts, "sample", "learner")]
CLOCKS: dict[str, float] = {"opponents": 0.0, "extras": 0.0, "learner": 0.0}
_timing = False  # a timed call is running: nested ones are not counted again
_installed: dict[tuple[Any, str], Any] = {}


def install_timers() -> None:
    """Wrap the ``TIMED`` methods of this process (once) so their seconds add to ``CLOCKS``."""
    for cls, name, clock in TIMED:
        if (cls, name) in _installed:
            continue
        original = _installed[cls, name] = getattr(cls, name)

        def timed(*args: Any, _original: Any = original, _clock: str = clock, **kwargs: Any) -> Any:
            global _timing
            if _timing:
                return _original(*args, **kwargs)
            _timing, start = True, time.perf_counter()
            try:
                return _original(*args, **kwargs)
            finally:
                CLOCKS[_clock] += time.perf_counter() - start
                _timing = False

        setattr(cls, name, timed)


def remove_timers() -> None:
    for (cls, name), original in _installed.items():
        setattr(cls, name, original)
    _installed.clear()


class ClockReader(LearnerWrapper):
    """The outermost wrapper of a benchmarked env: installs the timers in the process the env
    lives in, and reads that process's clocks (``env_method("bench_clocks")``)."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        install_timers()

    def bench_clocks(self) -> dict[str, float]:
        return dict(CLOCKS)


class TimedVecEnv(VecEnvWrapper):
    """Times every call into the vectorised envs."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self) -> Any:
        start = time.perf_counter()
        obs = self.venv.reset()
        self.seconds += time.perf_counter() - start
        return obs

    def step_wait(self) -> Any:
        start = time.perf_counter()
        result = self.venv.step_wait()
        self.seconds += time.perf_counter() - start
        return result

    def step_async(self, actions: np.ndarray) -> None:
        start = time.perf_counter()
        self.venv.step_async(actions)
        self.seconds += time.perf_counter() - start

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        start = time.perf_counter()
        result = self.venv.env_method(method_name, *args, indices=indices, **kwargs)
        self.seconds += time.perf_counter() - start
        return result


def worker_clocks(env: VecEnv) -> dict[str, float]:
    """The opponents' and features' seconds of the envs' processes, as wall-time equivalents:
    this process's own, or the workers' summed and divided by their number."""
    sharded = sharded_env(env)
    if sharded is None:
        return dict(CLOCKS)
    found = env.env_method("bench_clocks", indices=sharded.starts)  # one env of each worker
    return {clock: sum(f[clock] for f in found) / len(found) for clock in CLOCKS}


def timed_learn(model: MaskablePPO, steps: int) -> dict[str, float]:
    """``model.learn(steps)`` with its rollout collection and updates timed."""
    clocks = {"train": 0.0, "collect_rollouts": 0.0}
    for name in clocks:
        method = getattr(model, name)

        def timed(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return _method(*args, **kwargs)
            finally:
                clocks[_name] += time.perf_counter() - start

        setattr(model, name, timed)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    return {"total": time.perf_counter() - start, **clocks}


def measure(game: str, steps: int, pipeline: str) -> dict[str, Any]:
    """Train ``steps`` steps of a pipeline with the game's ppo.yaml settings; seconds per part."""
    with tempfile.TemporaryDirectory() as out:
        config = load_config(f"configs/{game}/ppo.yaml", output_dir=out, total_steps=steps)
        if pipeline in ("dummy", "batched", "sharded"):
            config = config.model_copy(update={"vec_env": "dummy" if pipeline == "dummy" else "batched",
                                               "env_workers": 2 if pipeline == "sharded" else 1, "env_backend": "local"})
        torch.set_num_threads(config.torch_threads)
        if pipeline == "sb3":
            return measure_reference(config, steps)
        for clock in CLOCKS:
            CLOCKS[clock] = 0.0
        install_timers()
        try:
            env = TimedVecEnv(make_vec_env(config, make=lambda: ClockReader(make_env(config))))
            sharded = sharded_env(env)
            if sharded is not None:  # rollouts played by the workers: the learner waits on collect
                collect = sharded.collect

                def timed_collect(*args: Any) -> Any:
                    start = time.perf_counter()
                    try:
                        return collect(*args)
                    finally:
                        env.seconds += time.perf_counter() - start

                sharded.collect = timed_collect
            model = new_model(config, env, Path(out), config.seed)
            pool = OpponentPool(game, config.self_play.opponents, config.self_play.pool_size)
            pool.add(export_policy(model, Path(out) / "snapshot.npz", config, 0, config.seed))
            env.env_method("set_opponents", pool)
            env.seconds = 0.0
            parts = timed_learn(model, steps)
            parts.update(worker_clocks(env), env=env.seconds)
            env.close()
        finally:
            remove_timers()
        return {**parts, "steps": int(model.num_timesteps), "config": config}


def measure_reference(config: TrainConfig, steps: int) -> dict[str, Any]:
    """SB3's documented pipeline: MaskablePPO over the registered Gymnasium env, random opponents."""
    p = config.ppo
    env = TimedVecEnv(DummyVecEnv([lambda: gymnasium.make(f"rummy_envs/{config.game}-v0", **config.env)
                                   for _ in range(config.n_envs)]))
    model = MaskablePPO("MlpPolicy", env, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
                        n_epochs=p.n_epochs, gamma=p.gamma, policy_kwargs={
                            "net_arch": {"pi": list(p.net_arch), "vf": list(p.net_arch)},
                            "activation_fn": TORCH_ACTIVATIONS[p.activation]}, seed=config.seed, device="cpu", verbose=0)
    env.seconds = 0.0
    parts = timed_learn(model, steps)
    env.close()
    return {**parts, "env": env.seconds, "opponents": 0.0, "extras": 0.0, "learner": 0.0, "steps": int(model.num_timesteps),
            "config": config}


def measure_fresh(game: str, steps: int, pipeline: str) -> dict[str, Any]:
    """``measure`` in a fresh Python process, so that no pipeline runs on caches (the meld
    tables' memos, imports) warmed by the one before it."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_train", "--measure-one", game, pipeline, str(steps)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"measuring {game} {pipeline} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    config = load_config(f"configs/{game}/ppo.yaml").model_copy(update=figures.pop("config_changes"))
    return {**figures, "config": config}


def describe(pipeline: str, config: TrainConfig) -> str:
    if pipeline == "sb3":
        return "SB3 reference (DummyVecEnv, random opponents)"
    workers = f", {config.env_workers} {config.env_backend} workers" if config.env_workers > 1 else ""
    return f"{pipeline}: {config.vec_env}{workers}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=65_536, help="learner steps per game and pipeline")
    parser.add_argument("--games", nargs="*", default=[g for g in rummy_envs.ENVS if Path(f"configs/{g}/ppo.yaml").exists()])
    parser.add_argument("--pipelines", nargs="*", choices=PIPELINES, default=["config", "sb3"])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    parser.add_argument("--measure-one", nargs=3, metavar=("GAME", "PIPELINE", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure_one:
        game, pipeline, steps = args.measure_one
        from benchmarks import bench_train  # by its name, not __main__: the env workers import it alike

        figures = bench_train.measure(game, int(steps), pipeline)
        config = figures.pop("config")
        figures["config_changes"] = {k: getattr(config, k) for k in ("vec_env", "env_workers", "env_backend")}
        print(json.dumps(figures))
        return 0

    load = os.getloadavg()[0]
    rows = []
    for game in args.games:
        for pipeline in args.pipelines:
            r = measure_fresh(game, args.steps, pipeline)
            rows.append((game, pipeline, r))
            print(f"{game} {describe(pipeline, r['config'])}: {r['steps'] / r['total']:,.0f} steps/s; env "
                  f"{100 * r['env'] / r['total']:.0f}%, update {100 * r['train'] / r['total']:.0f}%", flush=True)

    config = rows[0][2]["config"]
    lines = [BEGIN, "## Training (`python -m benchmarks.bench_train`)", "",
             f"{platform.processor() or platform.machine()}, {platform.python_implementation()} "
             f"{platform.python_version()}, torch {torch.__version__} (CPU, {config.torch_threads} thread), "
             f"{args.steps:,} learner steps per game and pipeline with the settings of `configs/<game>/ppo.yaml` "
             f"(no evaluation or checkpoints), one run, on {os.cpu_count()} cores (load average {load:.1f} at the "
             "start). *ref* is the SB3 reference of the same game in the same run. Shares of the wall time; *env* "
             "is the learner's wait on the envs, which includes the opponents' moves and the learner's features "
             "and shaping (with env workers: their wall-time equivalent); *engine + wrapper* is what is left of it.",
             "", "| game | pipeline | envs x net | env steps/s | / ref | env | opponents | features + shaping "
             "| engine + wrapper | policy forward | PPO update |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    reference = {game: r["steps"] / r["total"] for game, pipeline, r in rows if pipeline == "sb3"}
    for game, pipeline, r in rows:
        pct = lambda seconds: f"{100 * seconds / r['total']:.0f}%"  # noqa: E731
        rate = r["steps"] / r["total"]
        ratio = f"{rate / reference[game]:.2f}x" if game in reference else ""
        rest = max(0.0, r["env"] - r["opponents"] - r["extras"] - r["learner"])
        c = r["config"]
        lines.append(f"| {game} | {describe(pipeline, c)} | {c.n_envs} x {'x'.join(map(str, c.ppo.net_arch))} | "
                     f"{rate:,.0f} | {ratio} | {pct(r['env'] - r['learner'])} | {pct(r['opponents'])} | "
                     f"{pct(r['extras'])} | {pct(rest)} | {pct(r['collect_rollouts'] - r['env'] + r['learner'])} | "
                     f"{pct(r['train'])} |")
    lines.append(END)
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
