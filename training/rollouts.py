"""Rollouts collected in the env workers: one message per worker and rollout, not per step.

With env workers (``vec_env: batched`` and ``env_workers`` >= 2, or Ray actors), the learner
``WorkerPPO`` (sb3-contrib's MaskablePPO, only its rollout collection replaced) sends each
worker a numpy copy of its current actor and critic at the start of a rollout; the worker
plays ``n_steps`` steps of its envs on its own (the learner's actions sampled from the masked
policy, its values and log-probabilities computed as the torch policy computes them), and
sends back the whole rollout. The learner then fills MaskablePPO's rollout buffer step by
step, calls the callbacks of every step in order (so snapshots, checkpoints and
evaluations fall due as usual, though a snapshot taken during a rollout reaches the envs at
its end), and trains as MaskablePPO does. The workers step in parallel with no round trip
per step, which per-step sharding pays on every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from agents.ppo import NumpyPolicy, PolicyInfo
from training.export import numpy_policy

CRITIC_INFO = PolicyInfo(game="", env_options={}, features=None, layout_hash="", steps=0, rummy_envs_version="",
                         seed=None)  # the critic copy is never saved: what it was trained on is its actor's


@dataclass(frozen=True)
class ActorCritic:
    """Numpy copies of a MaskablePPO MlpPolicy's actor (observation -> logits) and critic
    (observation -> value), to play a rollout where torch's model is not."""

    actor: NumpyPolicy
    critic: NumpyPolicy

    @classmethod
    def of(cls, policy: Any) -> ActorCritic:
        actor = numpy_policy(policy, CRITIC_INFO)
        numpy_of = lambda t: t.detach().cpu().numpy()  # noqa: E731
        hidden = [(numpy_of(layer.weight).T, numpy_of(layer.bias)) for layer in list(policy.mlp_extractor.value_net)[::2]]
        critic = NumpyPolicy(hidden, (numpy_of(policy.value_net.weight).T, numpy_of(policy.value_net.bias)),
                             actor.activation, CRITIC_INFO)
        return cls(actor, critic)

    def values(self, observations: np.ndarray) -> np.ndarray:
        return self.critic.logits(observations)[:, 0]


def sample(logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One action per row from the softmax of the legal logits (Gumbel-max), and its log
    probability under that masked distribution."""
    masked = np.where(masks, logits.astype(np.float64), -np.inf)
    shifted = masked - masked.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    actions = np.where(masks, log_probs + rng.gumbel(size=log_probs.shape), -np.inf).argmax(axis=1)
    return actions, log_probs[np.arange(len(actions)), actions]


@dataclass
class Rollout:
    """``n_steps`` steps of some envs: per step the observations the actions were chosen on,
    the actions, rewards (a truncated episode's bootstrapped with its last value), episode
    starts, values, log-probabilities, masks, dones and infos; then the values of the
    observations it ends on."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    starts: np.ndarray
    values: np.ndarray
    log_probs: np.ndarray
    masks: np.ndarray
    dones: np.ndarray
    infos: list[list[dict[str, Any]]]
    last_values: np.ndarray

    @classmethod
    def joined(cls, parts: list[Rollout]) -> Rollout:
        """The rollouts of several workers side by side (their envs in order)."""
        fields = {name: np.concatenate([getattr(p, name) for p in parts], axis=1)
                  for name in ("observations", "actions", "rewards", "starts", "values", "log_probs", "masks", "dones")}
        infos = [[info for p in parts for info in p.infos[t]] for t in range(len(parts[0].infos))]
        return cls(**fields, infos=infos, last_values=np.concatenate([p.last_values for p in parts]))


def play_rollout(vec: VecEnv, masks_of: Any, model: ActorCritic, observations: np.ndarray, starts: np.ndarray,
                 n_steps: int, gamma: float, rng: np.random.Generator) -> tuple[Rollout, np.ndarray]:
    """``n_steps`` steps of ``vec`` from ``observations`` (``starts``: which begin an
    episode), the learner's actions sampled from ``model``; returns the rollout and the
    observations it ends on (its last dones say which of them begin an episode).
    ``masks_of()`` gives the envs' masks now."""
    steps: dict[str, list] = {k: [] for k in ("observations", "actions", "rewards", "starts", "values", "log_probs",
                                               "masks", "dones", "infos")}
    for _ in range(n_steps):
        masks = masks_of()
        actions, log_probs = sample(model.actor.logits(observations), masks, rng)
        values = model.values(observations)
        new_observations, rewards, dones, infos = vec.step(actions)
        rewards = rewards.astype(np.float32)
        for i, (done, info) in enumerate(zip(dones, infos)):
            if done and info.get("TimeLimit.truncated", False) and info.get("terminal_observation") is not None:
                rewards[i] += gamma * model.values(info["terminal_observation"][None])[0]
        for key, value in zip(steps, (observations, actions, rewards, starts, values, log_probs, masks, dones, infos)):
            steps[key].append(value)
        observations, starts = new_observations, dones
    arrays = {k: np.stack(v) for k, v in steps.items() if k != "infos"}
    return Rollout(**arrays, infos=steps["infos"], last_values=model.values(observations)), observations


def sharded_env(env: VecEnv) -> Any:
    """The ``ShardedVecEnv`` under ``env``'s wrappers, or None."""
    from training.vec_env import ShardedVecEnv

    while isinstance(env, VecEnvWrapper):
        env = env.venv
    return env if isinstance(env, ShardedVecEnv) else None


class WorkerPPO(MaskablePPO):
    """MaskablePPO whose rollouts are collected by the env workers of a ``ShardedVecEnv``
    (on any other env it collects as MaskablePPO does)."""

    def collect_rollouts(self, env: VecEnv, callback: BaseCallback, rollout_buffer: Any, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        sharded = sharded_env(env)
        if sharded is None or not use_masking:
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps, use_masking)
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()
        rollout = sharded.collect(ActorCritic.of(self.policy), n_rollout_steps, self.gamma)
        for t in range(n_rollout_steps):
            dones, infos = rollout.dones[t], rollout.infos[t]
            self.num_timesteps += env.num_envs
            callback.update_locals({"dones": dones, "infos": infos, "rewards": rollout.rewards[t],
                                    "actions": rollout.actions[t], "new_obs": None})
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            rollout_buffer.add(rollout.observations[t], rollout.actions[t].reshape(-1, 1), rollout.rewards[t],
                               rollout.starts[t], torch.as_tensor(rollout.values[t]),
                               torch.as_tensor(rollout.log_probs[t]), action_masks=rollout.masks[t])
        self._last_obs = sharded.observations
        self._last_episode_starts = rollout.dones[-1]
        rollout_buffer.compute_returns_and_advantage(last_values=torch.as_tensor(rollout.last_values),
                                                     dones=rollout.dones[-1])
        callback.on_rollout_end()
        return True
