"""Small adapters between the rummy envs and the conventions of RL libraries.

Each one exists because a library expects something PettingZoo leaves open
(docs/integrations.md has a runnable recipe per library):

- ``ObservationKeys`` renames the keys of the observation dict: RLlib's
  ``ActionMaskingTorchRLModule`` reads ``"observations"`` and ``"action_mask"`` where
  PettingZoo's convention is ``"observation"``.
- ``rllib_env`` builds RLlib's ``PettingZooEnv`` over a game with those keys, and with
  ``illegal_action="terminate"``, since RLlib's environment check steps sampled, unmasked
  actions.
- ``TurnBasedParallel`` is PettingZoo's ``turn_based_aec_to_parallel`` with what libraries
  built for simultaneous moves need: that conversion adds the name of the agent to move to
  the infos (a string, which TorchRL cannot make a tensor of), and every live agent acts each
  step, so a waiting agent's all-zero mask breaks masked sampling.
- ``torchrl_parallel_env`` builds TorchRL's ``PettingZooWrapper`` over ``TurnBasedParallel``.

This module imports no RL library at import time; ``rllib_env`` and ``torchrl_parallel_env``
import theirs when called.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

import rummy_envs

RLLIB_KEYS = {"observation": "observations", "action_mask": "action_mask"}
"""The observation keys RLlib's ``ActionMaskingTorchRLModule`` reads, by our key."""


class ObservationKeys(BaseWrapper):
    """An AEC env whose observation dicts (and their spaces) use other key names.

    ``keys`` maps each key of the env's observation dict to its new name; every key must be
    mapped, to distinct names. Everything else (steps, rewards, infos, ``state()``,
    ``render(mode)``) passes through unchanged."""

    def __init__(self, env: AECEnv, keys: dict[str, str]) -> None:
        super().__init__(env)
        own = set(env.observation_space(env.possible_agents[0]).spaces)
        if set(keys) != own or len(set(keys.values())) != len(keys):
            raise ValueError(f"keys={keys!r} is invalid; expected each of {sorted(own)} mapped to distinct names")
        self.keys = dict(keys)
        self._spaces = {agent: spaces.Dict({self.keys[k]: s for k, s in env.observation_space(agent).spaces.items()})
                        for agent in env.possible_agents}

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, Any]:
        return {self.keys[k]: v for k, v in super().observe(agent).items()}

    def render(self, mode: str | None = None) -> str | None:
        """The wrapped env's render, with its optional mode argument (RLlib passes one)."""
        return self.env.render(mode)


def rllib_env(game: str, **options: Any) -> Any:
    """RLlib's multi-agent ``PettingZooEnv`` over ``game`` (a name of ``rummy_envs.ENVS``) with
    RLlib's observation keys (``RLLIB_KEYS``), ready for ``ActionMaskingTorchRLModule``.

    ``options`` go to the env; ``illegal_action`` defaults to ``"terminate"`` here, because
    RLlib's environment check steps sampled actions that ignore the mask."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    if game not in rummy_envs.ENVS:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(rummy_envs.ENVS)}")
    options.setdefault("illegal_action", "terminate")
    return PettingZooEnv(ObservationKeys(rummy_envs.ENVS[game].env(**options), RLLIB_KEYS))


WAITING_ACTION = 0
"""The one action ``TurnBasedParallel`` allows an agent that is not to move; it is ignored."""


class TurnBasedParallel(BaseParallelWrapper):
    """PettingZoo's ``turn_based_aec_to_parallel`` over an AEC env of ``rummy_envs.ENVS``, made
    fit for libraries that have every live agent act at every step (TorchRL's parallel mode).

    - Infos keep one fixed structure, from ``reset`` on, of numbers and arrays only: the
      conversion's ``"active_agent"`` (the name of the agent to move, added to the AEC env's
      own info dicts after each step, not at reset) is taken out again and replaced by
      ``"active_seat"``, that agent's seat (-1 once the episode is over), in every info.
    - Every mask allows at least one action: the mover's is exact, and an agent not to move
      may take only ``WAITING_ACTION``, which the conversion ignores. Masked samplers (TorchRL's
      ``rand_action``, ``MaskedCategorical``) fail on a row with no legal action.

    Steps, rewards, ``state()`` and ``state_space`` are the conversion's."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(turn_based_aec_to_parallel(env))

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._masked(observations), self._infos(infos)

    def step(self, actions: dict[str, int]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                      dict[str, bool], dict[str, dict[str, Any]]]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._masked(observations), rewards, terminations, truncations, self._infos(infos)

    @staticmethod
    def _masked(observations: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """The observations with ``WAITING_ACTION`` allowed in every all-zero mask (each
        ``observe`` makes a fresh mask, so this changes nothing of the env's)."""
        for obs in observations.values():
            mask = obs["action_mask"]
            if not mask.any():
                mask[WAITING_ACTION] = 1
        return observations

    def _infos(self, infos: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each info without ``"active_agent"`` (which also leaves the AEC env's own dicts as
        they were) and with ``"active_seat"``."""
        env = self.unwrapped
        seat = env.agent_name_mapping[env.agent_selection] if env.agents else -1
        for info in infos.values():
            info.pop("active_agent", None)
        return {agent: {**info, "active_seat": seat} for agent, info in infos.items()}


def torchrl_parallel_env(game: str, seed: int | None = None, **options: Any) -> Any:
    """TorchRL's ``PettingZooWrapper`` over ``TurnBasedParallel`` of ``game`` (a name of
    ``rummy_envs.ENVS``), its agents in one group ``"player"`` that acts at every step.

    ``options`` go to the env. It has masks (``use_mask=True``), categorical actions,
    ``state()`` under ``"state"`` and ``done_on_any=False``: an agent that leaves a Least Count
    match early is done alone, where TorchRL's parallel default would end the episode."""
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    if game not in rummy_envs.ENVS:
        raise ValueError(f"unknown game {game!r}; known games: {', '.join(rummy_envs.ENVS)}")
    return PettingZooWrapper(TurnBasedParallel(rummy_envs.ENVS[game].env(**options)), use_mask=True,
                             categorical_actions=True, return_state=True, done_on_any=False, seed=seed)
