"""The recipes of docs/integrations.md, executed as written on every env of rummy_envs.ENVS:
TorchRL, Tianshou, RLlib (a few PPO iterations), Stable-Baselines3 (a little MaskablePPO)
and PettingZoo's parallel conversion, a few hundred steps each.

A library that is not installed makes its tests skip, saying which; with
``RUMMY_REQUIRE_INTEGRATIONS=1`` (set by .ci/run, which installs the ``integrations``
extra) a missing library fails instead, so an install step that went missing cannot hide
behind skips."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import rummy_envs

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"
GAMES = list(rummy_envs.ENVS)
FIRST_LINE = 'GAME = "gin_rummy"  # any name of rummy_envs.ENVS'
RECIPES = {  # recipe name: (its section's heading starts with, the library it needs)
    "torchrl": ("TorchRL", "torchrl"),
    "tianshou": ("Tianshou", "tianshou"),
    "rllib": ("RLlib", "ray.rllib"),
    "sb3": ("Stable-Baselines3", "sb3_contrib"),
    "parallel": ("A parallel env", "pettingzoo"),
}


def library(name: str) -> ModuleType:
    """Import a recipe's library, or skip (fail under RUMMY_REQUIRE_INTEGRATIONS) without it."""
    if os.environ.get("RUMMY_REQUIRE_INTEGRATIONS"):
        return importlib.import_module(name)
    return pytest.importorskip(name, reason=f"{name} is not installed (pip install -e '.[integrations]')")


def recipe(name: str) -> str:
    """The python block of the recipe's section of docs/integrations.md."""
    heading = RECIPES[name][0]
    sections = re.split(r"^## ", DOC.read_text(), flags=re.M)
    section = next(s for s in sections if s.startswith(heading))
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"section {heading!r} should hold one python block"
    return blocks[0]


def run_recipe(name: str, game: str) -> dict[str, Any]:
    """Execute a recipe with ``GAME`` set to ``game``; returns the names it defined."""
    library(RECIPES[name][1])
    code = recipe(name)
    first, rest = code.split("\n", 1)
    assert first == FIRST_LINE, f"recipe {name!r} must start with {FIRST_LINE!r}"
    namespace: dict[str, Any] = {"__name__": f"integrations_{name}"}
    exec(compile(f"GAME = {game!r}\n{rest}", f"{DOC} ({name} recipe)", "exec"), namespace)
    return namespace


def test_every_recipe_is_tested():
    """Each python block of the doc is one of the recipes run here."""
    assert len(re.findall(r"```python\n", DOC.read_text())) == len(RECIPES)
    for name in RECIPES:
        assert recipe(name).startswith(FIRST_LINE + "\n")


@pytest.mark.parametrize("game", GAMES)
def test_torchrl_recipe(game):
    ns = run_recipe("torchrl", game)
    rollout = ns["rollout"]
    raw = rummy_envs.ENVS[game].raw_env()
    agents = raw.possible_agents
    assert rollout.shape == (300,)
    assert rollout["state"].shape == (300, *raw.state_space.shape)  # state() at every step
    moved = sum(int(rollout[agent, "mask"].sum()) for agent in agents)
    assert moved == 300  # exactly one agent acts per step, always a legal action (else the env raises)
    info = rollout["next", agents[0], "info"]
    assert info["scores"].shape == (300, 1, len(agents)) and info["hand_points"].shape == (300, 1, len(agents))
    if rollout["next", "done"].any():
        assert info["hands_finished"].max() >= 1


@pytest.mark.parametrize("game", GAMES)
def test_tianshou_recipe(game):
    ns = run_recipe("tianshou", game)
    stats, buffer = ns["stats"], ns["collector"].buffer
    n = len(rummy_envs.ENVS[game].env().possible_agents)
    assert stats.n_collected_steps == 300 and len(buffer) == 300
    data, _ = buffer.sample(0)  # every stored step
    assert data.info.scores.shape == (300, n) and data.info.hand_points.dtype == np.float32
    assert data.obs.mask[np.arange(300), data.act].all()  # the policies chose only allowed actions


def rllib_check(game: str) -> None:
    """Run the RLlib recipe on ``game`` and check it: PPO sampled its steps, and the
    action-masking module puts illegal actions out of reach."""
    torch = library("torch")
    ns = run_recipe("rllib", game)
    algo = ns["algo"]
    try:
        assert ns["results"][-1]["env_runners"]["num_env_steps_sampled_lifetime"] >= 400
        env = ns["rllib_env"](game)
        observations, _ = env.reset(seed=3)
        (obs,) = observations.values()
        assert set(obs) == {"observations", "action_mask"}
        batch = {"obs": {key: torch.as_tensor(value[None]) for key, value in obs.items()}}
        logits = algo.get_module("shared").forward_inference(batch)["action_dist_inputs"][0]
        legal = torch.as_tensor(obs["action_mask"], dtype=torch.bool)
        assert (logits[~legal] < -1e30).all() and (logits[legal] > -1e30).all()
    finally:
        algo.stop()


RLLIB_DRIVER = f"""
import json, sys, traceback
sys.path.insert(0, {str(Path(__file__).parent)!r})
import ray
from test_integrations import GAMES, rllib_check
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
outcome = {{}}
for game in GAMES:
    try:
        rllib_check(game)
        outcome[game] = "ok"
    except BaseException:
        outcome[game] = traceback.format_exc()
print("OUTCOME " + json.dumps(outcome))
"""


@pytest.fixture(scope="module")
def rllib_outcomes() -> dict[str, str]:
    """The RLlib recipe on every game, in a process of its own: one local Ray for all games,
    whose threads and global state then cannot reach the rest of the test session."""
    library("ray.rllib")
    done = subprocess.run([sys.executable, "-c", RLLIB_DRIVER], capture_output=True, text=True, timeout=900,
                          cwd=Path(__file__).parent.parent)
    lines = [line for line in done.stdout.splitlines() if line.startswith("OUTCOME ")]
    assert done.returncode == 0 and lines, f"the RLlib run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(lines[-1].removeprefix("OUTCOME "))


@pytest.mark.parametrize("game", GAMES)
def test_rllib_recipe(game, rllib_outcomes):
    assert rllib_outcomes[game] == "ok", rllib_outcomes[game]


@pytest.mark.parametrize("game", GAMES)
def test_sb3_recipe(game):
    ns = run_recipe("sb3", game)
    assert ns["model"].num_timesteps >= 256
    assert ns["env"].unwrapped.action_masks()[int(ns["action"])]


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.filterwarnings("ignore:ignoring unknown reset option")  # parallel_api_test passes made-up options
def test_parallel_recipe(game):
    ns = run_recipe("parallel", game)
    env = ns["env"]
    assert env.state_space.contains(env.state())
