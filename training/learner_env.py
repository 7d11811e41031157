"""What training adds to the learner's env: hand features and reward shaping.

``FeatureObservation`` appends a feature set of ``agents.features`` (computed from the
learner's player view) to the observation, exactly as the ``ppo:<path>`` agent does when it
plays the exported policy.

``PotentialShaping`` is potential-based reward shaping (Ng, Harada and Russell, 1999).
Each step's reward gains ``weight * (gamma * phi(s') - phi(s))`` where ``phi`` is a game's
potential of the learner's position and ``phi`` of a finished episode is 0. Such shaping
leaves the optimal policy unchanged (the shaping terms telescope to ``-phi(s_0)``, which no
action affects) but tells the learner at once which moves improved its hand, instead of
only at the hand's end. Potentials read the learner's ``player_view``, so they see nothing
hidden. A game gets shaping by adding its potential to ``POTENTIALS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from agents.features import FeatureSet, policy_layout
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import Segment
from rummy_envs.games.gin import GinView
from rummy_envs.wrappers import SingleAgentEnv


def gin_hand_potential(view: GinView) -> float:
    """Minus the deadwood the hand keeps: of 11 cards, after its best discard."""
    hand = C.to_mask(view.hand)
    if len(view.hand) <= 10:
        return -float(M.min_deadwood(hand))
    return -float(min(M.min_deadwood(hand & ~(1 << card)) for card in view.hand))


POTENTIALS: dict[str, Callable[[Any], float]] = {"gin_rummy": gin_hand_potential, "hollywood_gin": gin_hand_potential}
"""The potential of each game that has one, a function of the learner's player view."""


class PotentialShaping(gymnasium.Wrapper):
    """Adds ``weight * (gamma * phi(s') - phi(s)) / reward_scale`` to the learner's rewards
    (the env's ``reward_scale``, so shaping and game rewards share their units)."""

    def __init__(self, env: SingleAgentEnv, weight: float, gamma: float) -> None:
        super().__init__(env)
        base: SingleAgentEnv = env.unwrapped
        if base.game not in POTENTIALS:
            raise ValueError(f"no shaping potential for {base.game}; games with one: {', '.join(POTENTIALS)}")
        self.potential = POTENTIALS[base.game]
        self.scale = weight / base.aec_env.reward_scale
        self.gamma = gamma
        self.last = 0.0

    def _phi(self) -> float:
        base: SingleAgentEnv = self.env.unwrapped
        return self.potential(base.aec_env.player_view(base.learner))

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.last = self._phi()
        return obs, info

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        now = 0.0 if terminated or truncated else self._phi()
        shaped = reward + self.scale * (self.gamma * now - self.last)
        self.last = now
        return obs, shaped, terminated, truncated, info


class FeatureObservation(gymnasium.ObservationWrapper):
    """The observation followed by the features of the learner's view; its
    ``observation_layout()`` is the policy's input layout (env segments, then features)."""

    def __init__(self, env: gymnasium.Env, features: FeatureSet) -> None:
        super().__init__(env)
        self.features = features
        box = env.observation_space
        extra = np.concatenate([np.full(size, high, np.float32) for _, size, high, _ in features.parts])
        self.observation_space = spaces.Box(np.concatenate([box.low, np.zeros_like(extra)]),
                                            np.concatenate([box.high, extra]), dtype=np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        base: SingleAgentEnv = self.env.unwrapped
        return np.concatenate([observation, self.features.compute(base.aec_env.player_view(base.learner))])

    def observation_layout(self) -> dict[str, Segment]:
        return policy_layout(self.env.unwrapped.observation_layout(), self.features)
