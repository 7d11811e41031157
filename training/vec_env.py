"""Vectorised learner envs whose opponents' policy moves are batched, in one process or in
worker processes (or Ray actors) that step their share of the envs while the others do.

``BatchedOpponentsVecEnv`` is a ``DummyVecEnv`` of ``training.train.make_env`` envs that
steps them together: each env runs its reset or step as a generator
(``SingleAgentEnv.reset_turns`` / ``step_turns``) that stops at every opponent move, and the
moves of every env waiting on an exported policy (a snapshot of the pool) are answered by
one forward pass of that policy over all of them. Rule-based opponents act as they would
alone. Every env consumes its random stream exactly as it does stepped alone, so the games
are those of a ``DummyVecEnv`` of the same envs and seeds.

``ShardedVecEnv`` splits the envs into shards, each a ``BatchedOpponentsVecEnv`` in a
worker: a subprocess (``backend="local"``) or a Ray actor (``backend="ray"``, on a cluster
or a local Ray). Training asks each worker for a whole rollout at a time (``collect``, played
by a numpy copy of the learner: ``training.rollouts``), so the workers step in parallel with
one message each per rollout. Stepped as a plain VecEnv (``step``), every step sends each
shard its actions at once and gathers the results, the learner's masks coming back with the
observations. Seeds are those of a single VecEnv of all the envs: env ``i`` of the whole
gets seed ``seed + i`` whatever the sharding.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecMonitor
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper, VecEnvIndices, VecEnvStepReturn

from agents.ppo import PPOAgent
from rummy_envs.wrappers import OpponentTurn, SingleAgentEnv, Turns
from training.learner_env import LearnerWrapper
from training.rollouts import ActorCritic, Rollout, play_rollout

EnvFactory = Callable[[], gymnasium.Env]


def learner_wrappers(env: gymnasium.Env) -> list[LearnerWrapper]:
    """The wrappers of ``env`` above its ``SingleAgentEnv``, innermost first; every one must be
    a ``LearnerWrapper``, whose work the batched env can apply after stepping the base env."""
    chain = []
    while not isinstance(env, SingleAgentEnv):
        if not isinstance(env, LearnerWrapper):
            raise TypeError(f"a batched VecEnv steps SingleAgentEnv under LearnerWrappers only, not {type(env).__name__}")
        chain.append(env)
        env = env.env
    return chain[::-1]


class BatchedOpponentsVecEnv(DummyVecEnv):
    """A ``DummyVecEnv`` whose envs step together, the opponents' policy moves batched."""

    def __init__(self, env_fns: list[EnvFactory]) -> None:
        super().__init__(env_fns)
        self.bases: list[SingleAgentEnv] = [env.unwrapped for env in self.envs]
        self.chains = [learner_wrappers(env) for env in self.envs]

    def reset(self) -> np.ndarray:
        turns = [base.reset_turns(seed=self._seeds[i], options=self._options[i] or None)
                 for i, base in enumerate(self.bases)]
        for i, (obs, info) in enumerate(self._play(turns, range(self.num_envs))):
            obs, self.reset_infos[i] = self._after_reset(i, obs, info)
            self._save_obs(i, obs)
        self._reset_seeds()
        self._reset_options()
        return self._obs_from_buf()

    def step_wait(self) -> VecEnvStepReturn:
        results = self._play([base.step_turns(int(a)) for base, a in zip(self.bases, self.actions)], range(self.num_envs))
        finished = []
        for i, result in enumerate(results):
            obs, reward, terminated, truncated, info = result
            for wrapper in self.chains[i]:
                obs, reward, terminated, truncated, info = wrapper.after_step(obs, reward, terminated, truncated, info)
            self.buf_rews[i], self.buf_dones[i], self.buf_infos[i] = reward, terminated or truncated, info
            info["TimeLimit.truncated"] = truncated and not terminated
            if self.buf_dones[i]:
                info["terminal_observation"] = obs
                finished.append(i)
            else:
                self._save_obs(i, obs)
        for i, (obs, info) in zip(finished, self._play([self.bases[i].reset_turns() for i in finished], finished)):
            obs, self.reset_infos[i] = self._after_reset(i, obs, info)
            self._save_obs(i, obs)
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), deepcopy(self.buf_infos)

    def action_masks(self) -> np.ndarray:
        """Every env's learner mask, stacked."""
        return np.stack([base.action_masks() for base in self.bases])

    def _after_reset(self, i: int, obs: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        for wrapper in self.chains[i]:
            obs, info = wrapper.after_reset(obs, info)
        return obs, info

    def _play(self, turns: list[Turns], envs: Sequence[int]) -> list[Any]:
        """Run the generators (``turns[k]`` of env ``envs[k]``) to their ends, answering the
        moves of all those waiting on the same exported policy together; returns their
        results in order."""
        results: list[Any] = [None] * len(turns)
        waiting: dict[int, OpponentTurn] = {}

        def advance(k: int, action: int | None) -> None:
            try:
                waiting[k] = turns[k].send(action)
            except StopIteration as finished:
                results[k] = finished.value

        for k in range(len(turns)):
            advance(k, None)
        while waiting:
            now, answers = dict(waiting), {}
            waiting.clear()
            by_policy: dict[int, list[int]] = defaultdict(list)
            for k, turn in now.items():
                if isinstance(turn.player, PPOAgent):
                    by_policy[id(turn.player.policy)].append(k)
                else:
                    answers[k] = self.bases[envs[k]].answer(turn)
            for group in by_policy.values():
                policy = now[group[0]].player.policy
                views = ([self.bases[envs[k]].aec_env.player_view(now[k].agent) for k in group]
                         if policy.features is not None else [None] * len(group))  # only features read the view
                inputs = np.stack([policy.policy_input(now[k].observation, view) for k, view in zip(group, views)])
                moves = policy.best_actions(inputs, np.stack([now[k].action_mask for k in group]))
                answers.update(zip(group, moves.tolist()))
            for k, action in answers.items():
                advance(k, action)
        return results


# ----------------------------------------------------------------------------------------
# Shards in workers


class Shard:
    """The envs of one worker: a ``BatchedOpponentsVecEnv`` and the calls a ``ShardedVecEnv``
    makes on it. Each call returns plain data (arrays, lists)."""

    def __init__(self, env_fns: list[EnvFactory]) -> None:
        self.vec = BatchedOpponentsVecEnv(env_fns)
        self.monitored = VecMonitor(self.vec)  # every step goes through it: episode infos for the learner
        self.observations = np.zeros(0)
        self.starts = np.ones(self.vec.num_envs, bool)
        self.rng = np.random.default_rng()

    def reset(self, seeds: list[int | None], options: list[dict[str, Any]]) -> tuple[np.ndarray, list[dict], np.ndarray]:
        if seeds[0] is not None:
            self.rng = np.random.default_rng(seeds)  # the learner's sampling in collect
        self.vec._seeds, self.vec._options = list(seeds), list(options)
        self.observations, self.starts = self.monitored.reset(), np.ones(self.vec.num_envs, bool)
        return self.observations, list(self.vec.reset_infos), self.vec.action_masks()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict], list[dict], np.ndarray]:
        self.observations, rewards, dones, infos = self.monitored.step(actions)
        self.starts = dones
        return self.observations, rewards, dones, infos, list(self.vec.reset_infos), self.vec.action_masks()

    def collect(self, model: ActorCritic, n_steps: int, gamma: float) -> tuple[Rollout, np.ndarray, np.ndarray]:
        """A rollout of these envs played by ``model`` (``training.rollouts``); also the
        observations and masks it ends on."""
        rollout, self.observations = play_rollout(
            self.monitored, self.vec.action_masks, model, self.observations, self.starts, n_steps, gamma, self.rng)
        self.starts = rollout.dones[-1]
        return rollout, self.observations, self.vec.action_masks()

    def call(self, kind: str, name: str, indices: list[int], args: tuple = (), kwargs: dict | None = None) -> list[Any]:
        vec = self.vec
        if kind == "env_method":
            return vec.env_method(name, *args, indices=indices, **(kwargs or {}))
        if kind == "get_attr":
            return vec.get_attr(name, indices)
        if kind == "set_attr":
            vec.set_attr(name, args[0], indices)
            return []
        if kind == "env_is_wrapped":
            return vec.env_is_wrapped(args[0], indices)
        raise ValueError(f"unknown shard call {kind!r}")

    def close(self) -> None:
        self.vec.close()


def _serve_shard(remote: Any, parent_remote: Any, env_fns: CloudpickleWrapper) -> None:
    """A worker process: build the shard, then run its calls until ``close``."""
    parent_remote.close()
    try:
        shard = Shard(env_fns.var)
        remote.send(("ok", None))
        while True:
            method, args = remote.recv()
            try:
                remote.send(("ok", getattr(shard, method)(*args)))
            except Exception:  # noqa: BLE001 - the driver re-raises it with the worker's traceback
                remote.send(("error", traceback.format_exc()))
            if method == "close":
                break
    except Exception:  # noqa: BLE001
        remote.send(("error", traceback.format_exc()))
    except KeyboardInterrupt:
        pass
    finally:
        remote.close()


class _ProcessShard:
    """A shard in a subprocess; ``submit`` sends a call, ``result`` waits for its answer."""

    def __init__(self, env_fns: list[EnvFactory], context: Any) -> None:
        self.remote, worker_remote = context.Pipe()
        self.process = context.Process(target=_serve_shard, args=(worker_remote, self.remote, CloudpickleWrapper(env_fns)),
                                       daemon=True)
        self.process.start()
        worker_remote.close()
        self.result()

    def submit(self, method: str, *args: Any) -> None:
        self.remote.send((method, args))

    def result(self) -> Any:
        status, value = self.remote.recv()
        if status == "error":
            raise RuntimeError(f"an env worker failed:\n{value}")
        return value

    def stop(self) -> None:
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.terminate()


class _RayShard:
    """A shard in a Ray actor (same calls as ``_ProcessShard``)."""

    def __init__(self, env_fns: list[EnvFactory], ray: Any, registry: bytes) -> None:
        self.ray = ray
        self.actor = ray.remote(num_cpus=1)(_RayShardActor).remote(registry, CloudpickleWrapper(env_fns))
        self.pending: Any = None

    def submit(self, method: str, *args: Any) -> None:
        self.pending = self.actor.run.remote(method, args)

    def result(self) -> Any:
        return self.ray.get(self.pending)

    def stop(self) -> None:
        self.ray.kill(self.actor)


class _RayShardActor:
    """The Ray actor of a shard: the driver's agent registry installed, then a ``Shard``."""

    def __init__(self, registry: bytes, env_fns: CloudpickleWrapper) -> None:
        from training.distributed import install_packed_registry

        install_packed_registry(registry)
        self.shard = Shard(env_fns.var)

    def run(self, method: str, args: tuple) -> Any:
        return getattr(self.shard, method)(*args)


BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """One BLAS thread in the worker processes started meanwhile (where not set otherwise):
    the workers already use every core between them, and a policy's batched forward pass
    spread over more threads than cores made Rummy 500's training 25% slower. Ray sets
    ``OMP_NUM_THREADS`` to its actors' CPUs (one) itself."""
    unset = [name for name in BLAS_THREADS if name not in os.environ]
    os.environ.update({name: "1" for name in unset})
    try:
        yield
    finally:
        for name in unset:
            os.environ.pop(name, None)


def _results(shards: Sequence[Any]) -> list[Any]:
    """The answer of every shard asked, all read (so none is left behind in its pipe)
    before the first failure is raised."""
    results, failure = [], None
    for shard in shards:
        try:
            results.append(shard.result())
        except Exception as err:  # noqa: BLE001 - re-raised below, once every answer is in
            failure = failure or err
    if failure is not None:
        raise failure
    return results


def shard_sizes(num_envs: int, workers: int) -> list[int]:
    """Envs per shard: as even as possible, the first shards one larger."""
    if not 1 <= workers <= num_envs:
        raise ValueError(f"{workers} env workers for {num_envs} envs: expected 1 to {num_envs}")
    return [num_envs // workers + (k < num_envs % workers) for k in range(workers)]


class ShardedVecEnv(VecEnv):
    """``n`` envs in ``workers`` shards, each stepped by a worker (subprocess or Ray actor)."""

    def __init__(self, env_fns: list[EnvFactory], workers: int, backend: str = "local",
                 ray: Any = None, registry: bytes = b"") -> None:
        probe = env_fns[0]()
        observation_space, action_space = probe.observation_space, probe.action_space
        probe.close()
        self.sizes = shard_sizes(len(env_fns), workers)
        starts = np.cumsum([0, *self.sizes])
        groups = [env_fns[a:b] for a, b in zip(starts[:-1], starts[1:])]
        if backend == "local":
            with _single_threaded_blas():
                context = multiprocessing.get_context("spawn")  # a fresh interpreter that reads the variables
                self.shards: list[Any] = [_ProcessShard(group, context) for group in groups]
        elif backend == "ray":
            if ray is None:
                raise ValueError("env workers on Ray need a Ray session (training.distributed.ray_session)")
            self.shards = [_RayShard(group, ray, registry) for group in groups]
        else:
            raise ValueError(f"env worker backend {backend!r}: expected 'local' or 'ray'")
        self.starts = [int(s) for s in starts[:-1]]
        self.masks = np.zeros((len(env_fns), int(action_space.n)), bool)
        self.actions: np.ndarray | None = None
        self.observations = np.zeros(0)
        self.closed = False
        super().__init__(len(env_fns), observation_space, action_space)

    def _all(self, method: str, per_shard: Sequence[tuple]) -> list[Any]:
        for shard, args in zip(self.shards, per_shard):
            shard.submit(method, *args)
        return _results(self.shards)

    def _split(self, values: Sequence[Any]) -> list[list[Any]]:
        return [list(values[start:start + size]) for start, size in zip(self.starts, self.sizes)]

    def reset(self) -> np.ndarray:
        results = self._all("reset", list(zip(self._split(self._seeds), self._split(self._options))))
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [info for _, infos, _ in results for info in infos]
        self.masks = np.concatenate([masks for _, _, masks in results])
        self.observations = np.concatenate([obs for obs, _, _ in results])
        return self.observations

    def step_async(self, actions: np.ndarray) -> None:
        self.actions = np.asarray(actions)

    def collect(self, model: ActorCritic, n_steps: int, gamma: float) -> Rollout:
        """A rollout of every env, each worker playing its own with ``model`` (``training.rollouts``)."""
        results = self._all("collect", [(model, n_steps, gamma)] * len(self.shards))
        self.observations = np.concatenate([obs for _, obs, _ in results])
        self.masks = np.concatenate([masks for _, _, masks in results])
        return Rollout.joined([rollout for rollout, _, _ in results])

    def step_wait(self) -> VecEnvStepReturn:
        results = self._all("step", [(part,) for part in self._split(self.actions)])
        self.reset_infos = [info for r in results for info in r[4]]
        self.masks = np.concatenate([r[5] for r in results])
        self.observations = np.concatenate([r[0] for r in results])
        return (self.observations, np.concatenate([r[1] for r in results]),
                np.concatenate([r[2] for r in results]), [info for r in results for info in r[3]])

    def _call(self, kind: str, name: str, indices: VecEnvIndices, *args: Any, **kwargs: Any) -> list[Any]:
        wanted = self._get_indices(indices)
        chosen = [[i - start for i in wanted if start <= i < start + size] for start, size in zip(self.starts, self.sizes)]
        for shard, local in zip(self.shards, chosen):
            if local:
                shard.submit("call", kind, name, local, args, kwargs)
        asked = [shard for shard, local in zip(self.shards, chosen) if local]
        answers = iter(_results(asked))
        found = [next(answers) if local else [] for local in chosen]
        by_index = {start + i: value for start, local, values in zip(self.starts, chosen, found)
                    for i, value in zip(local, values)}
        return [by_index[i] for i in wanted] if kind != "set_attr" else []

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        if method_name == "action_masks" and not method_args and not method_kwargs:
            return list(self.masks[list(self._get_indices(indices))])
        return self._call("env_method", method_name, indices, *method_args, **method_kwargs)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._call("get_attr", attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._call("set_attr", attr_name, indices, value)

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return self._call("env_is_wrapped", "", indices, wrapper_class)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self._all("close", [()] * len(self.shards))
        finally:
            for shard in self.shards:
                shard.stop()
