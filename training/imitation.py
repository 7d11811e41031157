"""Imitation warm start: behaviour cloning of a teacher agent before PPO.

A fresh policy spends most of a short PPO run learning what a rule-based player already
knows (keep melds, shed high deadwood, knock when allowed). Cloning a teacher first (the
``imitation`` section of a config) starts self-play from the teacher's level: the learner's
seat is played by the teacher against copies of itself for ``decisions`` decisions, and
the policy network is fitted to the teacher's moves by maximum likelihood under the action
mask. The value net is left as it is unless ``fit_value``: then it is fitted too,
to the discounted returns the learner's seat earned in those games (shaping included), so
that PPO's first advantages measure the teacher's play rather than a random critic's
guesses. PPO then improves on the teacher; the first pool snapshot is the cloned policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import explained_variance

from agents import make_agent
from rummy_envs.wrappers import SingleAgentEnv
from training.train_config import TrainConfig

HELD_OUT = 0.05  # share of the decisions kept out of the fit to measure the accuracy


@dataclass(frozen=True)
class Demonstrations:
    """The teacher's decisions: policy inputs (float16 to halve the memory), masks, actions,
    and the discounted return from each decision (NaN after the last finished episode)."""

    inputs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray


def discounted_returns(rewards: np.ndarray, ends: np.ndarray, gamma: float) -> np.ndarray:
    """The return from each step to its episode's end (``ends[i]``: step i ended one);
    NaN for the steps of an episode still running at the end."""
    returns = np.full(len(rewards), np.nan)
    following = np.nan
    for i in range(len(rewards) - 1, -1, -1):
        following = rewards[i] + (0.0 if ends[i] else gamma * following)
        returns[i] = following
    return returns


def collect(config: TrainConfig, env: gymnasium.Env, seed: int) -> Demonstrations:
    """Play every seat of ``env`` (a ``make_env`` env) with the teacher, recording the
    learner's seat."""
    settings = config.imitation
    base: SingleAgentEnv = env.unwrapped
    base.set_opponents(lambda rng: make_agent(settings.teacher, config.game, int(rng.integers(2**62))))
    teacher = make_agent(settings.teacher, config.game, seed)
    size, num_actions = env.observation_space.shape[0], env.action_space.n
    inputs = np.zeros((settings.decisions, size), np.float16)
    masks = np.zeros((settings.decisions, num_actions), bool)
    actions = np.zeros(settings.decisions, np.int64)
    rewards, ends = np.zeros(settings.decisions), np.zeros(settings.decisions, bool)
    obs, _ = env.reset(seed=seed)
    teacher.reset()
    for i in range(settings.decisions):
        aec, learner = base.aec_env, base.learner
        observed = aec.observe(learner)
        action = teacher.act(observed["observation"], observed["action_mask"], aec.player_view(learner))
        inputs[i], masks[i], actions[i] = obs, base.action_masks(), action
        obs, rewards[i], terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            ends[i] = True
            obs, _ = env.reset()
            teacher.reset()
    return Demonstrations(inputs, masks, actions, discounted_returns(rewards, ends, config.ppo.gamma))


def clone(model: MaskablePPO, demos: Demonstrations, config: TrainConfig, seed: int) -> dict[str, float]:
    """Fit the policy network (and with ``fit_value`` the value network) to the
    demonstrations; returns the fit's figures, among them the accuracy on held-out decisions
    (the teacher's move is the policy's argmax) and the value's explained variance there."""
    settings = config.imitation
    policy = model.policy
    parameters = [*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters()]
    if settings.fit_value:
        parameters += [*policy.mlp_extractor.value_net.parameters(), *policy.value_net.parameters()]
    returns = torch.as_tensor(demos.returns, dtype=torch.float32)
    optimizer = torch.optim.Adam(parameters, lr=settings.learning_rate)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(demos.actions))
    held = order[: int(len(order) * HELD_OUT)]
    fit = order[len(held):]
    policy.set_training_mode(True)
    loss = torch.tensor(0.0)
    for _ in range(settings.epochs):
        rng.shuffle(fit)
        for start in range(0, len(fit), settings.batch_size):
            batch = fit[start : start + settings.batch_size]
            values, log_prob, _ = policy.evaluate_actions(torch.as_tensor(demos.inputs[batch], dtype=torch.float32),
                                                          torch.as_tensor(demos.actions[batch]),
                                                          torch.as_tensor(demos.masks[batch]))
            loss = -log_prob.mean()
            if settings.fit_value:
                target = returns[batch]
                known = ~torch.isnan(target)
                if known.any():
                    loss = loss + config.ppo.vf_coef * torch.mean((values.flatten()[known] - target[known]) ** 2)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        predicted, _ = model.predict(demos.inputs[held].astype(np.float32), action_masks=demos.masks[held],
                                     deterministic=True)
        values = policy.predict_values(torch.as_tensor(demos.inputs[held], dtype=torch.float32)).flatten().numpy()
    accuracy = float(np.mean(predicted == demos.actions[held])) if len(held) else float("nan")
    known = ~np.isnan(demos.returns[held])
    return {"decisions": len(demos.actions), "final_loss": loss.item(), "held_out_accuracy": accuracy,
            "held_out_value_explained_variance": float(explained_variance(values[known], demos.returns[held][known]))}
