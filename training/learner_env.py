"""What training adds to the learner's env: hand features, reward shaping and a duplicate
baseline.

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

``DuplicateBaseline`` scores each episode against a bundled agent's score on the same deal,
as duplicate bridge scores a table against the other tables of the same boards: most of a
hand's points are the luck of the deal, which the difference cancels.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from agents import rummy500 as R5A
from agents import least_count as LC
from agents.base import make_agent
from agents.features import FeatureSet, policy_layout
from agents.ppo import PPOAgent
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import Segment
from rummy_envs.games import rummy500 as R5
from rummy_envs.games.gin_rummy import GinView
from rummy_envs.games.least_count import LeastCountView
from rummy_envs.games.manipulation_rummy import ManipulationView
from rummy_envs.games.rummy500 import Rummy500View
from rummy_envs.wrappers import SingleAgentEnv, StepResult


def gin_hand_potential(view: GinView) -> float:
    """Minus the deadwood the hand keeps: of 11 cards, after its best discard."""
    hand = C.to_mask(view.hand)
    if len(view.hand) <= 10:
        return -float(M.min_deadwood(hand))
    return -float(min(M.min_deadwood(hand & ~(1 << card)) for card in view.hand))


RUMMY500_MEAN_CARD = sum(R5.RANK_POINTS) / len(R5.RANK_POINTS)  # a hidden card's expected points in a hand


def rummy500_score_potential(view: Rummy500View) -> float:
    """My hand score if the hand ended now, minus the mean of every seat's (the points
    reward's centring): table points credited minus the points in the hand, an opponent's
    hidden cards counted at a card's mean value."""
    joker = view.rules.joker_value
    table = [0.0] * view.num_players
    for meld in view.melds:
        for position, (card, seat) in enumerate(zip(meld.cards, meld.credit)):
            rank = card % C.NUM_RANKS
            low_ace = rank == 0 and not meld.is_set and position == 0
            table[seat] += joker if card in meld.jokers else 1 if low_ace else R5.RANK_POINTS[rank]
    in_hand = [sum(R5A.card_value(c, joker) for c in view.known[seat]) + RUMMY500_MEAN_CARD * (size - len(view.known[seat]))
               for seat, size in enumerate(view.hand_sizes)]
    in_hand[0] = sum(R5A.card_value(c, joker) for c in view.hand)
    scores = [t - h for t, h in zip(table, in_hand)]
    return scores[0] - sum(scores) / len(scores)


def least_count_potential(view: LeastCountView) -> float:
    """Minus the hand's value (the heuristic agent's): its count less the most points one
    legal discard of it sheds (picking: of the cards kept)."""
    shape = LC.Shape(view.hand, LC.context_of(view))
    return -float(shape.count - shape.best)


def manipulation_potential(view: ManipulationView) -> float:
    """Minus the points left in the hand (cards placed in a commit in progress count as gone:
    an ABORT takes the gain back)."""
    return -float(view.hand_value)


POTENTIALS: dict[str, Callable[[Any], float]] = {"gin_rummy": gin_hand_potential, "hollywood_gin": gin_hand_potential,
                                                 "rummy500": rummy500_score_potential,
                                                 "manipulation_rummy": manipulation_potential,
                                                 "least_count": least_count_potential}
"""The potential of each game that has one, a function of the learner's player view."""


class LearnerWrapper(gymnasium.Wrapper):
    """A wrapper of ``SingleAgentEnv`` whose work after the inner reset and step is done by
    ``after_reset`` and ``after_step``, from their results and the base env's state alone.
    So a batched VecEnv (``training.vec_env``), which steps the base envs itself to answer
    their opponents' moves together, applies the same wrappers afterwards."""

    def reset(self, **kwargs: Any) -> tuple[np.ndarray, dict[str, Any]]:
        return self.after_reset(*self.env.reset(**kwargs))

    def step(self, action: int) -> StepResult:
        return self.after_step(*self.env.step(action))

    def after_reset(self, observation: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        return observation, info

    def after_step(self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool,
                   info: dict[str, Any]) -> StepResult:
        return observation, reward, terminated, truncated, info


class PotentialShaping(LearnerWrapper):
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

    def after_reset(self, observation: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        self.last = self._phi()
        return observation, info

    def after_step(self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool,
                   info: dict[str, Any]) -> StepResult:
        now = 0.0 if terminated or truncated else self._phi()
        shaped = reward + self.scale * (self.gamma * now - self.last)
        self.last = now
        return observation, shaped, terminated, truncated, info


class FeatureObservation(LearnerWrapper):
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

    def after_reset(self, observation: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        return self.observation(observation), info

    def after_step(self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool,
                   info: dict[str, Any]) -> StepResult:
        return self.observation(observation), reward, terminated, truncated, info

    def observation_layout(self) -> dict[str, Segment]:
        return policy_layout(self.env.unwrapped.observation_layout(), self.features)


class DuplicateBaseline(LearnerWrapper):
    """Scores each episode against ``agent``'s score on the same deal: at the end of an
    episode the learner's reward is less ``agent``'s return when it plays the learner's seat
    from the learner's first move, on the same cards and against the same opponents.

    At each reset the position (the dealt state at the learner's first move) and the
    opponents as they stand (their memory included; snapshot policies are shared, not
    copied) are copied, and the copy is played out in a second env of the same rules and
    reward options, with ``agent`` in the learner's seat. So when the learner plays as
    ``agent`` would, the episode pays exactly 0, and otherwise what its own moves made of the
    deal against what ``agent`` made of it. The baseline depends on the deal, never on the
    learner's actions, so the policy gradient stays unbiased (a control variate); for a
    policy near ``agent``, such as a clone of it, the reward's spread falls several times
    (docs/training.md#duplicate-baseline). It costs one more episode of play per episode.
    ``info["baseline_return"]`` at the episode's end holds the baseline; ``episode_return``
    stays the learner's own return."""

    def __init__(self, env: gymnasium.Env, agent: str) -> None:
        super().__init__(env)
        base: SingleAgentEnv = env.unwrapped
        self.stand_in = make_agent(agent, base.game, 0)
        self.shadow = copy.deepcopy(base.aec_env)  # the same rules, reward and illegal-action options
        self.baseline = 0.0

    def after_reset(self, observation: np.ndarray, info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        self.baseline = self.baseline_return()
        return observation, info

    def after_step(self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool,
                   info: dict[str, Any]) -> StepResult:
        if terminated or truncated:
            reward -= self.baseline
            info = {**info, "baseline_return": self.baseline}
        return observation, reward, terminated, truncated, info

    def baseline_return(self) -> float:
        """``agent``'s return in the learner's seat from the current position of the base env
        (the learner to move), the opponents continuing as copies of themselves."""
        base: SingleAgentEnv = self.env.unwrapped
        shadow, learner = self.shadow, base.learner
        shadow.reset(options={"state": base.aec_env.game})
        shared = {id(p.policy): p.policy for p in base.seat_players.values() if isinstance(p, PPOAgent)}
        players = copy.deepcopy(base.seat_players, shared)
        players[learner] = self.stand_in
        self.stand_in.reset()
        total = 0.0
        while not (shadow.terminations[learner] or shadow.truncations[learner]):
            agent = shadow.agent_selection
            if shadow.terminations[agent] or shadow.truncations[agent]:
                shadow.step(None)
            else:
                observed = shadow.observe(agent)
                shadow.step(int(players[agent].act(observed["observation"], observed["action_mask"],
                                                   shadow.player_view(agent))))
            total += shadow.rewards.get(learner, 0.0)
        return total
