"""The recipes of docs/integrations.md, executed as written on every env of rummy_envs.ENVS:
TorchRL (its AEC and parallel APIs), Tianshou, RLlib (a few PPO iterations),
Stable-Baselines3 (a little MaskablePPO) and PettingZoo's parallel conversion, a few hundred
steps each; and the adapters those recipes use (rummy_envs.adapters).

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
from rummy_envs.adapters import WAITING_ACTION, TurnBasedParallel
from rummy_envs.envs.base import INFO_KEYS

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"
GAMES = list(rummy_envs.ENVS)
# RLlib's recipe runs on a two-seat and a four-seat game only: it is the same code for every game
# (the other recipes run all five) and each game costs RLlib several seconds of setup.
RLLIB_GAMES = ["gin_rummy", "least_count"]
FIRST_LINE = 'GAME = "gin_rummy"  # any name of rummy_envs.ENVS'
RECIPES = {  # recipe name: (its section's heading starts with, the library it needs)
    "torchrl": ("TorchRL: `PettingZooWrapper`", "torchrl"),
    "torchrl_parallel": ("TorchRL: the parallel API", "torchrl"),
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


@pytest.mark.parametrize("game", [pytest.param(g, marks=[] if g == "gin_rummy" else [pytest.mark.slow]) for g in GAMES])
def test_torchrl_parallel_recipe(game):
    """The recipe as written; gin in the default run, every game under ``-m slow``."""
    torch = library("torch")
    ns = run_recipe("torchrl_parallel", game)
    rollout, n = ns["rollout"], len(rummy_envs.ENVS[game].raw_env().possible_agents)
    assert rollout.shape == (300,) and rollout["player", "action"].shape == (300, n)
    assert rollout["state"].shape == (300, *ns["env"].observation_spec["state"].shape)
    seat = rollout["player", "info", "active_seat"]
    assert (seat == seat[:, :1]).all() and ((seat >= 0) & (seat < n)).all()  # the same mover in every info
    mask, action, mover = rollout["player", "action_mask"], rollout["player", "action"], ns["mover"]
    waiting = torch.arange(n) != mover[:, None]
    assert mask[waiting].sum(-1).eq(1).all() and mask[waiting][:, WAITING_ACTION].all()  # only the ignored action
    assert (action[waiting] == WAITING_ACTION).all()
    assert mask[~waiting][torch.arange(300), ns["moves"]].all()  # the moves played were legal (the env raises else)
    info = rollout["next", "player", "info"]
    assert info["scores"].shape == (300, n, n) and info["hand_points"].shape == (300, n, n)


@pytest.mark.parametrize("game", GAMES)
def test_turn_based_parallel_infos_and_masks(game):
    """TurnBasedParallel: the AEC env's infos plus an int ``active_seat``, from reset on, with
    nothing left behind in the AEC env's own infos; the mover's mask is the env's, every
    other live agent may take only WAITING_ACTION."""
    env = TurnBasedParallel(rummy_envs.ENVS[game].env())
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    observations, infos = env.reset(seed=0)
    episodes = 0
    for _ in range(300):
        mover = raw.agent_name_mapping[raw.agent_selection] if raw.agents else -1
        for agent, info in infos.items():
            assert list(info) == [*INFO_KEYS, "active_seat"] and info["active_seat"] == mover
            assert not any(isinstance(value, str) for value in info.values())
        assert all(list(info) == list(INFO_KEYS) for info in raw.infos.values())
        actions = {}
        for agent, obs in observations.items():
            own = raw.observe(agent)["action_mask"]
            if raw.agent_name_mapping[agent] == mover:
                assert (obs["action_mask"] == own).all() and own.any()
            else:
                assert not own.any() and np.flatnonzero(obs["action_mask"]).tolist() == [WAITING_ACTION]
            actions[agent] = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        observations, _, _, _, infos = env.step(actions)
        if not env.agents:
            assert all(info["active_seat"] == -1 for info in infos.values())
            episodes += 1
            observations, infos = env.reset()
    assert episodes or game in ("rummy500", "manipulation_rummy")  # their episodes run longer than 300 steps


def test_torchrl_parallel_env_plays_whole_least_count_matches():
    """An agent eliminated from a match is done alone: every episode ends with all agents done."""
    library("torchrl")
    from rummy_envs.adapters import torchrl_parallel_env

    env = torchrl_parallel_env("least_count", seed=0, episode="match", elimination_score=30)
    rollout = env.rollout(1000, break_when_any_done=False)
    done = rollout["next", "player", "done"][..., 0]
    ended = rollout["next", "done"][:, 0]
    assert rollout["next", "player", "info", "eliminated"].any() and ended.any()
    assert done[ended].all()  # an episode ends only when every agent is done
    assert (done.any(-1) & ~done.all(-1)).any()  # and some are done before the others


def test_pettingzoo_conversion_alone_fails_in_torchrl():
    """What the parallel recipe works around (docs/integrations.md): if TorchRL or PettingZoo
    stop failing so, the adapter and its doc are due for a look."""
    torch = library("torch")
    library("torchrl")
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    def make() -> Any:
        return PettingZooWrapper(turn_based_aec_to_parallel(rummy_envs.ENVS["gin_rummy"].env()), use_mask=True,
                                 seed=0)

    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        make().rollout(10)

    def any_action_where_none_is_legal(td: Any) -> Any:
        mask = td["player", "action_mask"]
        td["player", "action"] = torch.where(mask.any(-1), mask.float().argmax(-1), 0)
        return td

    with pytest.raises(TypeError, match="invalid data type 'str'"):
        make().rollout(10, policy=any_action_where_none_is_legal)


TORCH_WARNING_DRIVER = """
import warnings
warnings.filterwarnings("error", message="The given NumPy array is not writable")
import numpy as np
import torch
import rummy_envs
from rummy_envs.adapters import torchrl_parallel_env
for game, module in rummy_envs.ENVS.items():
    env = module.env()
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter(300):
        obs, _, term, trunc, info = env.last()
        for value in [*obs.values(), *info.values(), env.state()]:
            torch.as_tensor(value)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if not env.agents:
            env.reset()
    torchrl_parallel_env(game, seed=0).rollout(20)
print("no warning")
"""


def test_torch_takes_env_arrays_without_warning():
    """Observations, masks, infos and state() are writable arrays, so torch.as_tensor (and
    TorchRL, building its specs) never warns "The given NumPy array is not writable". torch
    gives that warning once per process, so this runs in a fresh one."""
    library("torchrl")
    done = subprocess.run([sys.executable, "-c", TORCH_WARNING_DRIVER], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0 and "no warning" in done.stdout, done.stderr[-3000:]


def test_adapters_import_no_rl_library():
    """rummy_envs.adapters imports its RL libraries only when a function needs one."""
    code = ("import sys, rummy_envs.adapters; "
            "print(sorted(m for m in ('torch', 'torchrl', 'tensordict', 'ray', 'tianshou') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parent.parent)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr[-3000:]


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
from test_integrations import RLLIB_GAMES, rllib_check
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
outcome = {{}}
for game in RLLIB_GAMES:
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


@pytest.mark.parametrize("game", RLLIB_GAMES)
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
