"""``rummy train CONFIG.yaml``: MaskablePPO with self-play on any rummy-envs game.

One run (one seed) lives in ``<output_dir>/seed_<seed>/``:
- ``checkpoints/step_<n>/``: ``model.zip`` (stable-baselines3), ``policy.npz`` (the numpy
  export) and ``meta.json`` (the resolved config, the rummy-envs version, the observation
  layout and its hash, the step count, the time spent);
- ``pool/step_<n>.npz``: the snapshots of the self-play opponent pool;
- ``eval/step_<n>/<opponent>/``: the evaluation tournaments; ``eval.csv`` their results;
- ``learning_curve.csv``: the learner's mean game return per rollout; ``tb/``: TensorBoard;
- ``imitation.json``: the figures of the imitation warm start, if configured;
- ``policy.npz``, ``meta.json`` and ``summary.json``: the final policy and results.

The learner plays one seat of ``rummy_envs.wrappers.SingleAgentEnv`` in ``n_envs``
vectorised envs; the other seats are drawn for every episode from the opponent pool
(``training.selfplay``). ``--resume`` continues a run from its latest checkpoint and keeps
counting steps from there. Several seeds run one after another, or as Ray tasks.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import sb3_contrib
import stable_baselines3
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

import rummy_envs
from agents.features import feature_set
from agents.ppo import NumpyPolicy, PolicyInfo
from rummy_envs.envs.base import Segment
from rummy_envs.wrappers import SingleAgentEnv, describe_layout, layout_hash
from training import imitation, tournament
from training.config import ConfigError
from training.distributed import install_packed_registry, packed_registry, ray_session
from training.export import TORCH_ACTIVATIONS, numpy_policy
from training.rollouts import WorkerPPO
from training.selfplay import OpponentPool
from training.learner_env import DuplicateBaseline, FeatureObservation, PotentialShaping
from training.train_config import TrainConfig
from training.vec_env import BatchedOpponentsVecEnv, ShardedVecEnv

CHECKPOINTS, POOL, EVAL = "checkpoints", "pool", "eval"
MODEL, POLICY, META, SUMMARY = "model.zip", "policy.npz", "meta.json", "summary.json"
EVAL_LOG, CURVE_LOG = "eval.csv", "learning_curve.csv"
LEARNER = "learner"  # the label of the policy in evaluation tournaments
EVAL_FIELDS = ["step", "opponent", "games", "margin", "margin_low", "margin_high", "win_rate", "win_low", "win_high"]
CURVE_FIELDS = ["step", "episodes", "mean_return", "elapsed_s", "steps_per_s"]
# Keys a resumed run must share with the run it continues (the others may change, such as
# total_steps to train longer).
SAME_ON_RESUME = ("game", "env", "features", "ppo")


class LayoutMismatchError(ConfigError):
    """A checkpoint met an env whose observation layout (or action count) differs."""


@dataclass(frozen=True)
class TrainResult:
    """What one seed's run produced (and where: the host and process that trained it)."""

    seed: int
    run_dir: str
    steps: int
    elapsed_seconds: float
    cpu_seconds: float
    policy: str
    evaluation: list[dict[str, Any]]
    host: str
    pid: int


# ----------------------------------------------------------------------------------------
# Layouts and checkpoints


def env_layout(env: gymnasium.Env | VecEnv) -> tuple[dict[str, Segment], int]:
    """The policy input layout (observation, then any features) and the action count of a
    learner's env or a VecEnv of them."""
    if isinstance(env, VecEnv):
        return env.env_method("observation_layout", indices=[0])[0], int(env.action_space.n)
    return env.get_wrapper_attr("observation_layout")(), int(env.action_space.n)


def check_layout(meta: dict[str, Any], env: gymnasium.Env | VecEnv, where: str) -> None:
    """Fail clearly unless ``env`` has the observation layout the checkpoint was trained on."""
    layout, num_actions = env_layout(env)
    now = layout_hash(layout, num_actions)
    if now == meta["layout_hash"]:
        return
    saved = {name: size for name, size, _ in meta["layout"]}
    current = {name: s.size for name, s in layout.items()}
    differences = [f"+{n} ({current[n]})" for n in current if n not in saved]
    differences += [f"-{n} ({saved[n]})" for n in saved if n not in current]
    differences += [f"{n} {saved[n]}->{current[n]}" for n in current if n in saved and saved[n] != current[n]]
    if num_actions != meta["num_actions"]:
        differences.append(f"actions {meta['num_actions']}->{num_actions}")
    raise LayoutMismatchError(
        f"{where} was trained on {meta['game']} (env options {meta['env_options']}) with observation layout "
        f"{meta['layout_hash']}, but this env has layout {now}: "
        f"{', '.join(differences) or 'same segment sizes, different bounds or order'}. A policy only plays the "
        "layout it was trained on; train one for this env.")


def read_meta(checkpoint: Path) -> dict[str, Any]:
    path = checkpoint / META
    if not path.is_file():
        raise FileNotFoundError(f"{checkpoint} is not a checkpoint: it has no {META}")
    return json.loads(path.read_text())


def load_checkpoint(checkpoint: str | Path, env: gymnasium.Env | VecEnv) -> MaskablePPO:
    """The model saved in a checkpoint folder, attached to ``env`` after checking that the
    env builds the observation layout the model was trained on."""
    checkpoint = Path(checkpoint)
    check_layout(read_meta(checkpoint), env, f"checkpoint {checkpoint}")
    return WorkerPPO.load(checkpoint / MODEL, env=env, device="cpu")


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint folder of the highest step in a run, if any."""
    found = [p for p in (run_dir / CHECKPOINTS).glob("step_*") if (p / META).is_file() and (p / MODEL).is_file()]
    return max(found, key=lambda p: int(p.name.split("_")[1]), default=None)


def export_policy(model: MaskablePPO, path: Path, config: TrainConfig, steps: int, seed: int) -> NumpyPolicy:
    """Write the policy network (observation -> action logits) to a numpy ``.npz``."""
    layout, num_actions = env_layout(model.get_env())
    info = PolicyInfo(game=config.game, env_options=dict(config.env), features=config.features,
                      layout_hash=layout_hash(layout, num_actions),
                      steps=int(steps), rummy_envs_version=rummy_envs.__version__, seed=seed,
                      layout=describe_layout(layout))
    exported = numpy_policy(model.policy, info)
    exported.save(path)
    return exported


def checkpoint_meta(config: TrainConfig, env: VecEnv, steps: int, seed: int, elapsed: float, cpu: float) -> dict[str, Any]:
    layout, num_actions = env_layout(env)
    return {
        "game": config.game,
        "env_options": dict(config.env),
        "features": config.features,
        "steps": int(steps),
        "seed": seed,
        "rummy_envs_version": rummy_envs.__version__,
        "layout_hash": layout_hash(layout, num_actions),
        "layout": describe_layout(layout),
        "num_actions": num_actions,
        "elapsed_seconds": round(elapsed, 1),
        "cpu_seconds": round(cpu, 1),
        "torch_version": torch.__version__,
        "stable_baselines3_version": stable_baselines3.__version__,
        "sb3_contrib_version": sb3_contrib.__version__,
        "config": config.to_dict(),
    }


# ----------------------------------------------------------------------------------------
# Environments, evaluation


def make_env(config: TrainConfig) -> gymnasium.Env:
    """One learner's env (random opponents until the pool is pushed), with the configured
    features, shaping and duplicate baseline."""
    env: gymnasium.Env = SingleAgentEnv(config.game, **config.env)
    if config.features is not None:
        env = FeatureObservation(env, feature_set(config.features, config.game))
    if config.reward_shaping:
        env = PotentialShaping(env, config.reward_shaping, config.ppo.gamma)
    if config.reward_baseline is not None:
        env = DuplicateBaseline(env, config.reward_baseline)
    return env


def make_vec_env(config: TrainConfig, ray: Any = None, make: Callable[[], gymnasium.Env] | None = None) -> VecEnv:
    """``n_envs`` envs of ``make`` (default: ``make_env``), monitored: stepped one by one in
    this process (``dummy``), a process each (``subproc``), or together with the opponents'
    policy moves batched (``batched``: in this process, or in ``env_workers`` shards in
    subprocesses or, with ``env_backend: ray``, Ray actors of the session ``ray``)."""
    makers = [make or (lambda: make_env(config)) for _ in range(config.n_envs)]
    if config.vec_env == "dummy":
        vec: VecEnv = DummyVecEnv(makers)
    elif config.vec_env == "subproc":
        vec = SubprocVecEnv(makers)
    elif config.env_workers == 1 and config.env_backend == "local":
        vec = BatchedOpponentsVecEnv(makers)
    else:
        registry = packed_registry(config.agent_names) if config.env_backend == "ray" else b""
        vec = ShardedVecEnv(makers, config.env_workers, config.env_backend, ray, registry)
    return VecMonitor(vec)


def evaluate(config: TrainConfig, policy_path: Path, steps: int, out_dir: Path) -> list[dict[str, Any]]:
    """Duplicate tournaments of the policy against each evaluation opponent; a row each."""
    rows = []
    settings = config.evaluation
    for opponent in settings.opponents:
        folder = out_dir / opponent.replace(":", "_").replace("/", "_")
        shutil.rmtree(folder, ignore_errors=True)  # never resume games of another policy
        summary = tournament.run({
            "game": config.game, "options": config.rules_options, "episode": config.episode,
            "agents": {LEARNER: f"ppo:{policy_path}", opponent: opponent}, "deals": settings.deals,
            "seed": settings.seed, "workers": settings.workers, "output_dir": str(folder), "plots": False,
            "chunk_deals": max(1, settings.deals // settings.workers),
        })
        result = next(p for p in summary["pairings"] if p["focal"] == LEARNER)
        margin, win = result["margin"], result["win_rate"]
        rows.append({"step": steps, "opponent": opponent, "games": result["games"], "margin": margin["mean"],
                     "margin_low": margin["low"], "margin_high": margin["high"], "win_rate": win["mean"],
                     "win_low": win["low"], "win_high": win["high"]})
    return rows


def _append_rows(path: Path, fields: list[str], rows: list[dict[str, Any]]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        if new:
            writer.writeheader()
        writer.writerows(rows)


def _evaluation_at(path: Path, step: int) -> list[dict[str, Any]]:
    """The rows of ``eval.csv`` at ``step`` (numbers parsed), so a resume does not redo them."""
    if not path.exists():
        return []
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["step"]) == step]
    number = lambda text: None if text == "" else float(text)  # noqa: E731
    return [{k: r[k] if k == "opponent" else int(r[k]) if k in ("step", "games") else number(r[k]) for k in EVAL_FIELDS}
            for r in rows]


def _drop_rows_after(path: Path, step: int) -> None:
    """Forget log rows of steps past a resumed checkpoint (a crashed run's tail)."""
    if not path.exists():
        return
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames or [], [r for r in reader if int(r["step"]) <= step]
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)


# ----------------------------------------------------------------------------------------
# The run


class _Run:
    """One seed's run: its folder, model, pool and clocks; saves, snapshots, evaluates."""

    def __init__(self, config: TrainConfig, seed: int, run_dir: Path, model: MaskablePPO, pool: OpponentPool,
                 prior_elapsed: float, prior_cpu: float) -> None:
        self.config, self.seed, self.dir, self.model, self.pool = config, seed, run_dir, model, pool
        self.prior_elapsed, self.prior_cpu = prior_elapsed, prior_cpu
        self.wall_start, self.cpu_start = time.perf_counter(), time.process_time()
        self.evaluation: list[dict[str, Any]] = []
        self.evaluated_step = -1
        self.learning = False  # whether the model's TensorBoard logger is set up (by learn)

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def elapsed(self) -> tuple[float, float]:
        return (self.prior_elapsed + time.perf_counter() - self.wall_start,
                self.prior_cpu + time.process_time() - self.cpu_start)

    def imitate(self) -> None:
        """The imitation warm start (see ``training.imitation``); its figures go to
        ``imitation.json``."""
        env = make_env(self.config)
        demos = imitation.collect(self.config, env, self.seed)
        env.close()
        figures = {"teacher": self.config.imitation.teacher, **imitation.clone(self.model, demos, self.config, self.seed),
                   "seconds": round(self.elapsed()[0], 1)}
        (self.dir / "imitation.json").write_text(json.dumps(figures, indent=1))
        print(f"[seed {self.seed}] imitation of {figures['teacher']}: {figures['decisions']:,} decisions, "
              f"held-out accuracy {figures['held_out_accuracy']:.1%}, {figures['seconds']:.0f} s", flush=True)

    def snapshot(self) -> None:
        """Add the current policy to the opponent pool (and save it for a resume)."""
        policy = export_policy(self.model, self.dir / POOL / f"step_{self.steps:09d}.npz", self.config, self.steps, self.seed)
        self.pool.add(policy)
        self.model.get_env().env_method("set_opponents", self.pool)

    def save_checkpoint(self) -> Path:
        folder = self.dir / CHECKPOINTS / f"step_{self.steps:09d}"
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save(folder / MODEL)
        export_policy(self.model, folder / POLICY, self.config, self.steps, self.seed)
        meta = checkpoint_meta(self.config, self.model.get_env(), self.steps, self.seed, *self.elapsed())
        (folder / META).write_text(json.dumps(meta, indent=1))
        return folder

    def evaluate(self) -> list[dict[str, Any]]:
        out = self.dir / EVAL / f"step_{self.steps:09d}"
        policy_path = out / POLICY
        export_policy(self.model, policy_path, self.config, self.steps, self.seed)
        rows = evaluate(self.config, policy_path, self.steps, out)
        _append_rows(self.dir / EVAL_LOG, EVAL_FIELDS, rows)
        if self.learning:
            for row in rows:
                self.model.logger.record(f"eval/margin_vs_{row['opponent']}", row["margin"])
                self.model.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"])
            self.model.logger.dump(self.steps)
        print(f"[seed {self.seed}] step {self.steps:,}: " + "; ".join(
            f"vs {r['opponent']} margin {r['margin']:+.2f} [{_fmt(r['margin_low'])}, {_fmt(r['margin_high'])}]"
            for r in rows), flush=True)
        self.evaluation, self.evaluated_step = rows, self.steps
        return rows


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


class _PeriodicCallback(BaseCallback):
    """Snapshots, checkpoints and evaluations every so many steps; a learning-curve row per
    rollout: the learner's mean episode return (game rewards only, without shaping)."""

    def __init__(self, run: _Run) -> None:
        super().__init__()
        self.run = run
        settings = run.config
        self.every = {"snapshot": settings.self_play.snapshot_every, "checkpoint": settings.checkpoint_every,
                      "evaluate": settings.evaluation.every}
        self.due = {k: (run.steps // every + 1) * every for k, every in self.every.items()}
        self.episodes = 0
        self.returns: list[float] = []

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        for done, info in zip(self.locals["dones"], self.locals["infos"]):
            if done:
                self.episodes += 1
                self.returns.append(info["episode_return"])
        actions = {"snapshot": self.run.snapshot if self.run.pool.wants_snapshots else None,
                   "checkpoint": self.run.save_checkpoint, "evaluate": self.run.evaluate}
        for kind, action in actions.items():
            if steps >= self.due[kind]:
                if action is not None:
                    action()
                self.due[kind] = (steps // self.every[kind] + 1) * self.every[kind]
        return True

    def _on_rollout_end(self) -> None:
        elapsed, _ = self.run.elapsed()
        mean_return = float(np.mean(self.returns)) if self.returns else None
        if mean_return is not None:
            self.logger.record("rollout/game_return", mean_return)
        _append_rows(self.run.dir / CURVE_LOG, CURVE_FIELDS, [{
            "step": self.num_timesteps, "episodes": self.episodes,
            "mean_return": "" if mean_return is None else round(mean_return, 5),
            "elapsed_s": round(elapsed, 1), "steps_per_s": round(self.num_timesteps / max(elapsed, 1e-9), 1)}])
        self.returns = []


def new_model(config: TrainConfig, env: VecEnv, run_dir: Path, seed: int) -> MaskablePPO:
    p = config.ppo
    return WorkerPPO(
        "MlpPolicy", env, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
        n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef,
        vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
        policy_kwargs={"net_arch": {"pi": list(p.net_arch), "vf": list(p.net_arch)},
                       "activation_fn": TORCH_ACTIVATIONS[p.activation]},
        tensorboard_log=str(run_dir / "tb") if config.tensorboard else None, seed=seed, device="cpu", verbose=0)


def _check_resumable(config: TrainConfig, meta: dict[str, Any], checkpoint: Path) -> None:
    saved, now = meta["config"], config.to_dict()
    differ = [k for k in SAME_ON_RESUME if saved.get(k) != now.get(k)]
    if differ:
        raise ConfigError(f"cannot resume {checkpoint}: config key(s) {', '.join(differ)} differ from the run's; "
                          "a resumed run keeps its game, env, features and ppo settings (use another output_dir)")


def train(config: TrainConfig, seed: int | None = None, resume: bool = False, progress_bar: bool | None = None,
          export_dir: str | Path | None = None, force: bool = False) -> TrainResult:
    """Train (or with ``resume``, continue) one seed up to ``config.total_steps`` steps, then
    save the final checkpoint, evaluate, and copy the policy to ``export_dir`` if given
    (a folder that already holds a policy only with ``force``, checked before training)."""
    seed = config.seed if seed is None else seed
    check_export_dir(export_dir, force)
    run_dir = Path(config.output_dir) / f"seed_{seed}"
    torch.set_num_threads(config.torch_threads)
    latest = latest_checkpoint(run_dir)
    if latest is not None and not resume:
        raise ConfigError(f"{run_dir} already holds a run (latest checkpoint {latest.name}); pass --resume to "
                          "continue it, or choose another output_dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(config.to_dict(), indent=1))
    pool = OpponentPool(config.game, config.self_play.opponents, config.self_play.pool_size)
    with ExitStack() as session:  # the envs close first, then a Ray started for their workers
        ray = (session.enter_context(ray_session(None, config.env_workers, "env_backend: ray"))
               if config.env_backend == "ray" else None)
        env = make_vec_env(config, ray)
        session.callback(env.close)
        if latest is not None:
            meta = read_meta(latest)
            _check_resumable(config, meta, latest)
            model = load_checkpoint(latest, env)
            model.tensorboard_log = str(run_dir / "tb") if config.tensorboard else None
            model.set_random_seed(seed + model.num_timesteps)
            pool.restore(run_dir / POOL, model.num_timesteps)
            for log in (EVAL_LOG, CURVE_LOG):
                _drop_rows_after(run_dir / log, model.num_timesteps)
            run = _Run(config, seed, run_dir, model, pool, meta["elapsed_seconds"], meta["cpu_seconds"])
            run.evaluation = _evaluation_at(run_dir / EVAL_LOG, run.steps)
            if run.evaluation:
                run.evaluated_step = run.steps
            print(f"[seed {seed}] resuming {latest} at step {run.steps:,}", flush=True)
        else:
            run = _Run(config, seed, run_dir, new_model(config, env, run_dir, seed), pool, 0.0, 0.0)
            if config.imitation.teacher is not None:
                run.imitate()
            if pool.wants_snapshots:
                run.snapshot()
        env.env_method("set_opponents", pool)
        remaining = config.total_steps - run.steps
        if remaining > 0:
            show = config.progress_bar if progress_bar is None else progress_bar
            run.learning = True
            run.model.learn(total_timesteps=remaining, callback=_PeriodicCallback(run), progress_bar=show,
                            reset_num_timesteps=latest is None, tb_log_name="ppo")
        final = run_dir / CHECKPOINTS / f"step_{run.steps:09d}"
        if not (final / META).is_file():
            run.save_checkpoint()
        evaluation = run.evaluation if run.evaluated_step == run.steps else run.evaluate()
    for name in (POLICY, META):
        shutil.copy2(final / name, run_dir / name)
    elapsed, cpu = run.elapsed()
    result = TrainResult(seed=seed, run_dir=str(run_dir), steps=run.steps, elapsed_seconds=round(elapsed, 1),
                         cpu_seconds=round(cpu, 1), policy=str(run_dir / POLICY), evaluation=evaluation,
                         host=socket.gethostname(), pid=os.getpid())
    (run_dir / SUMMARY).write_text(json.dumps({**asdict(result), "config": config.to_dict()}, indent=1))
    if export_dir is not None:
        export = Path(export_dir)
        export.mkdir(parents=True, exist_ok=True)
        for name in (POLICY, META, SUMMARY, EVAL_LOG, CURVE_LOG):
            if (run_dir / name).exists():
                shutil.copy2(run_dir / name, export / name)
    return result


# ----------------------------------------------------------------------------------------
# Several seeds, locally or on Ray


def check_export_dir(export_dir: str | Path | None, force: bool) -> None:
    """Refuse to overwrite a policy that this run did not make, unless ``force``."""
    if export_dir is not None and not force and (Path(export_dir) / POLICY).exists():
        raise ConfigError(f"export_dir {export_dir} already holds a {POLICY}; pass --force (force=True) to replace "
                          "it, or export elsewhere (without export_dir the policy stays in the run's output_dir)")


def train_seeds(config: TrainConfig, seeds: list[int], backend: str = "local", resume: bool = False,
                ray_address: str | None = None, workers: int | None = None,
                progress_bar: bool | None = None, force: bool = False) -> list[TrainResult]:
    """Train each seed: one after another (``local``) or as Ray tasks (``ray``: the cluster
    at ``ray_address``, or a local Ray with ``workers`` CPUs). With several seeds each exports
    into ``export_dir/seed_<s>``; every export folder is checked before any training."""
    several = len(seeds) > 1
    exports = {s: None if config.export_dir is None else Path(config.export_dir) / (f"seed_{s}" if several else "")
               for s in seeds}
    for export in exports.values():
        check_export_dir(export, force)
    if backend == "local":
        return [train(config, s, resume, progress_bar, exports[s], force) for s in seeds]
    if backend != "ray":
        raise ConfigError(f"--backend {backend!r}: expected 'local' or 'ray'")
    with ray_session(ray_address, workers or len(seeds), "--backend ray", log_to_driver=True) as ray:
        remote = ray.remote(num_cpus=config.torch_threads)(_train_on_worker)
        registry = packed_registry(config.agent_names)
        return ray.get([remote.remote(registry, config, s, resume, False, exports[s], force) for s in seeds])


def _train_on_worker(registry: bytes, *args: Any) -> TrainResult:
    """``train`` in a Ray worker, after registering the agents the driver registered."""
    install_packed_registry(registry)
    return train(*args)
