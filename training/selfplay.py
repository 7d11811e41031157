"""The self-play opponent pool: past snapshots of the learner mixed with fixed agents.

An ``OpponentPool`` is the opponent factory of ``rummy_envs.wrappers.SingleAgentEnv``:
for every opponent seat of every episode it draws an entry of the mix by weight, then
either a uniformly drawn snapshot (the ``self`` entry) or a fresh agent built by name from
the env's random stream (so seeded envs replay exactly). It holds numpy policies only, so it
pickles small and cheap into subprocess envs and needs no torch; it carries the registry
entries of its agents, so a subprocess that never ran the ``register`` calls builds them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from typing import Any

from agents import Agent, make_agent
from agents.ppo import NumpyPolicy, PPOAgent, load_policy
from training.distributed import install_packed_registry, packed_registry
from training.train_config import SELF


class OpponentPool:
    """Opponents drawn from ``weights`` (agent name or ``self`` -> weight) with the last
    ``pool_size`` snapshots standing for ``self``."""

    def __init__(self, game: str, weights: dict[str, float], pool_size: int) -> None:
        total = sum(weights.values())
        self.game = game
        self.names = list(weights)
        self.probabilities = np.array([weights[n] / total for n in self.names])
        self.pool_size = pool_size
        self.snapshots: list[NumpyPolicy] = []

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "registry": packed_registry(n for n in self.names if n != SELF)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        install_packed_registry(state.pop("registry"))
        self.__dict__.update(state)

    @property
    def wants_snapshots(self) -> bool:
        return SELF in self.names and self.probabilities[self.names.index(SELF)] > 0

    def add(self, policy: NumpyPolicy) -> None:
        """Add the newest snapshot; the oldest beyond ``pool_size`` leaves."""
        self.snapshots = (self.snapshots + [policy])[-self.pool_size:]

    def restore(self, folder: Path, up_to_step: int) -> None:
        """Refill from the snapshot files ``step_<n>.npz`` saved in ``folder`` up to a step (resume)."""
        files = sorted(folder.glob("step_*.npz"), key=lambda p: int(p.stem.split("_")[1]))
        for path in [p for p in files if int(p.stem.split("_")[1]) <= up_to_step][-self.pool_size:]:
            self.add(load_policy(path))

    def __call__(self, rng: np.random.Generator) -> Agent:
        name = self.names[int(rng.choice(len(self.names), p=self.probabilities))]
        if name == SELF:
            if not self.snapshots:
                raise RuntimeError("the opponent pool has no snapshot yet; add() one before playing 'self'")
            return PPOAgent(self.snapshots[int(rng.integers(len(self.snapshots)))], self.game)
        return make_agent(name, self.game, int(rng.integers(2**62)))
