"""Small adapters between the rummy envs and the conventions of RL libraries.

Each one exists because a library expects something PettingZoo leaves open
(docs/integrations.md has a runnable recipe per library):

- ``ObservationKeys`` renames the keys of the observation dict: RLlib's
  ``ActionMaskingTorchRLModule`` reads ``"observations"`` and ``"action_mask"`` where
  PettingZoo's convention is ``"observation"``.
- ``rllib_env`` builds RLlib's ``PettingZooEnv`` over a game with those keys, and with
  ``illegal_action="terminate"``, since RLlib's environment check steps sampled, unmasked
  actions.

This module imports no RL library at import time; ``rllib_env`` imports RLlib when called.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

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
