"""The single-agent Gymnasium view: Gymnasium's checker for every game, the registered ids,
seat rotation, each seat's observations and rewards kept apart, masks, opponents, seeding;
and the shipped policies (agents/checkpoints), which play through the same observations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import rummy_envs
from agents import make_agent, registered_agents
from rummy_envs import IllegalActionError
from rummy_envs.wrappers import SingleAgentEnv, UniformRandomPlayer, env_layout_hash, layout_hash

GAMES = list(rummy_envs.ENVS)
EPISODE_OPTIONS = {"manipulation_rummy": {"num_players": 2}}
"""Options for the tests that play whole random episodes: uniform-random Manipulation Rummy
hoards cards, and three-player rounds reach 60-card tables whose masks take seconds each
(docs/table_solver.md), so those tests play its two-player game (one deck, one joker)."""
SHIPPED = sorted((Path(agents.__file__).parent / "checkpoints").glob("*/policy.npz"))


@pytest.mark.parametrize("game", GAMES)
def test_passes_gymnasiums_env_checker(game):
    check_env(SingleAgentEnv(game), skip_render_check=True)
    check_env(SingleAgentEnv(game, render_mode="ansi", learner_seat=1))


@pytest.mark.parametrize("game", GAMES)
def test_registered_with_gymnasium_make(game):
    env = gymnasium.make(f"rummy_envs/{game}-v0", reward_scale=4.0)
    assert isinstance(env.unwrapped, SingleAgentEnv) and env.unwrapped.game == game
    assert env.unwrapped.aec_env.reward_scale == 4.0
    obs, _ = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    raw = rummy_envs.ENVS[game].raw_env()
    assert env_layout_hash(env) == layout_hash(raw.observation_layout(), raw.num_actions)


def random_episode(env: SingleAgentEnv, rng: np.random.Generator, seed: int | None = None):
    """Play the learner at random; return (observations, masks, rewards, final info)."""
    obs, _ = env.reset(seed=seed)
    seen, masks, rewards = [obs], [env.action_masks().copy()], []
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            return seen, masks, rewards, info
        seen.append(obs)
        masks.append(env.action_masks().copy())


@pytest.mark.parametrize("game", GAMES)
def test_learning_seat_rotates_over_episodes(game):
    env = SingleAgentEnv(game, **EPISODE_OPTIONS.get(game, {}))
    rng = np.random.default_rng(0)
    env.reset(seed=1)
    seats = []
    for _ in range(2 * env.num_players):
        random_episode(env, rng)
        seats.append(env.learner_seat)
    n = env.num_players
    assert all(seats[k + 1] == (seats[k] + 1) % n for k in range(len(seats) - 1)), seats
    fixed = SingleAgentEnv(game, learner_seat=n - 1, **EPISODE_OPTIONS.get(game, {}))
    for seed in range(3):
        fixed.reset(seed=seed)
        assert fixed.learner_seat == n - 1


class RecordingPlayer:
    """An opponent (the novice where the game has one, so hands end with points) that checks
    it is shown its own seat's observation and view."""

    def __init__(self, env: SingleAgentEnv, seed: int) -> None:
        name = "novice" if "novice" in registered_agents(env.game) else "random"
        self.env, self.agent, self.moves = env, make_agent(name, env.game, seed), 0

    def reset(self) -> None:
        self.agent.reset()

    def act(self, observation, action_mask, view):
        aec = self.env.aec_env
        me = aec.agent_selection
        assert me != self.env.learner
        assert np.array_equal(observation, aec.observe(me)["observation"])
        assert np.array_equal(action_mask, aec.observe(me)["action_mask"])
        assert view == aec.player_view(me)
        self.moves += 1
        return self.agent.act(observation, action_mask, view)


@pytest.mark.parametrize("game", GAMES)
def test_each_seat_sees_only_its_own_observation_and_reward(game):
    env = SingleAgentEnv(game, reward_scale=5.0, **EPISODE_OPTIONS.get(game, {}))
    recorder = RecordingPlayer(env, 0)
    env.set_opponents(recorder)
    rng = np.random.default_rng(1)
    env.reset(seed=11)
    returns = []
    for _ in range(6):
        seen, masks, rewards, info = random_episode(env, rng)
        aec = env.aec_env
        learner = aec.agent_name_mapping[env.learner]
        assert np.array_equal(seen[-1], aec.observe(env.learner)["observation"]) or aec.terminations[env.learner]
        scores = aec.game.scores()
        expected = (scores[learner] - sum(scores) / len(scores)) / 5.0  # the learner's own points reward
        assert sum(rewards) == pytest.approx(expected), (rewards, scores)
        assert info["episode_return"] == pytest.approx(expected)
        assert all(m.any() for m in masks)
        returns.append(expected)
    assert recorder.moves > 0 and any(returns), "no episode paid points: the check proved nothing"


@pytest.mark.parametrize("game", GAMES)
def test_action_masks_are_the_learners_legal_moves(game):
    env = SingleAgentEnv(game)
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(2)
    for _ in range(40):
        mask = env.action_masks()
        aec = env.aec_env
        assert aec.agent_selection == env.learner
        assert set(np.flatnonzero(mask)) == set(aec.game.legal_actions())
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            assert not env.action_masks().any()
            obs, _ = env.reset()


def test_same_seed_same_episode_with_seeded_opponents():
    def make(seed: int) -> SingleAgentEnv:
        return SingleAgentEnv("gin_rummy", opponents=lambda rng: make_agent("novice", "gin_rummy", int(rng.integers(99))))

    runs = [random_episode(make(0), np.random.default_rng(4), seed=21) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0][0], runs[1][0])) and runs[0][2] == runs[1][2]
    other = random_episode(make(0), np.random.default_rng(4), seed=22)
    assert not np.array_equal(runs[0][0][0], other[0][0])


def test_opponent_forms_and_bad_ones():
    novice = make_agent("novice", "gin_rummy", 0)
    for opponents in (novice, [novice], lambda rng: UniformRandomPlayer(rng), None):
        env = SingleAgentEnv("gin_rummy", opponents=opponents)
        random_episode(env, np.random.default_rng(0), seed=1)
    with pytest.raises(ValueError, match="one per other seat"):
        SingleAgentEnv("gin_rummy", opponents=[novice, novice])
    with pytest.raises(ValueError, match="unknown game"):
        SingleAgentEnv("poker")
    with pytest.raises(ValueError, match="learner_seat"):
        SingleAgentEnv("gin_rummy", learner_seat=2)


def test_illegal_action_ends_the_episode_or_raises():
    env = SingleAgentEnv("gin_rummy", reward_scale=2.0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -0.5 and info["offender"] == env.learner
    strict = SingleAgentEnv("gin_rummy", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError):
        strict.step(illegal)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_library_and_numpy_agents_import_no_torch():
    code = ("import sys, rummy_envs, rummy_envs.wrappers, agents, agents.ppo, training.train_config, "
            "training.selfplay, training.tournament; assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_game_ships_a_policy():
    assert {p.parent.name for p in SHIPPED} == set(rummy_envs.ENVS)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_shipped_policy_loads_for_this_layout_and_plays_legally(path):
    game = path.parent.name
    ppo = make_agent(f"ppo:{path}", game)  # refuses a policy whose layout this version no longer builds
    assert path.stat().st_size < 5_000_000
    env = SingleAgentEnv(game, opponents=ppo, illegal_action="raise", **ppo.policy.info.env_options)
    rng = np.random.default_rng(0)
    for seed in range(3):
        random_episode(env, rng, seed=seed)  # every ppo move went through the env, which raises on an illegal one


def test_a_render_mode_we_do_not_draw_is_refused_as_gymnasium_expects():
    for make in (lambda: rummy_envs.ENVS["gin_rummy"].raw_env(render_mode="video"),
                 lambda: gymnasium.make("rummy_envs/gin_rummy-v0", render_mode="video")):
        with pytest.raises(TypeError, match="render_mode='video' is invalid"):
            make()
        with pytest.raises(ValueError, match="render_mode='video' is invalid"):
            make()


def test_make_vec_env_works_with_its_defaults():
    """Stable-Baselines3 asks for render_mode="rgb_array" and falls back on a TypeError."""
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    vec = env_util.make_vec_env("rummy_envs/gin_rummy-v0", n_envs=4, seed=3)
    observations = vec.reset()
    assert observations.shape == (4, vec.observation_space.shape[0])
    vec.close()


@pytest.mark.parametrize("game", GAMES)
def test_metadata_belongs_to_each_env(game):
    """A wrapper that edits an env's metadata (PettingZoo's CaptureStdoutWrapper appends a
    render mode) changes that env only, never the class or later envs."""
    from pettingzoo.utils.wrappers import CaptureStdoutWrapper

    module = rummy_envs.ENVS[game]
    before = module.raw_env.metadata["render_modes"][:]
    CaptureStdoutWrapper(module.raw_env(render_mode="human", **EPISODE_OPTIONS.get(game, {})))
    assert module.raw_env.metadata["render_modes"] == before
    assert module.raw_env(**EPISODE_OPTIONS.get(game, {})).metadata["render_modes"] == before
    single = SingleAgentEnv(game, **EPISODE_OPTIONS.get(game, {}))
    single.metadata["render_modes"].append("x")
    assert SingleAgentEnv.metadata["render_modes"] == before


def test_an_unmasked_learner_is_warned_once_under_terminate():
    env = SingleAgentEnv("gin_rummy")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.warns(RuntimeWarning, match="3 illegal actions") as caught:
        for _ in range(8):
            _, reward, terminated, _, _ = env.step(illegal)
            assert terminated and reward < 0
            env.reset()
            illegal = int(np.flatnonzero(~env.action_masks())[0])
    assert len([w for w in caught if issubclass(w.category, RuntimeWarning)]) == 1
    legal_only = SingleAgentEnv("gin_rummy")
    legal_only.reset(seed=0)
    for _ in range(5):
        legal_only.step(int(np.flatnonzero(legal_only.action_masks())[0]))
        if legal_only.aec_env.game.is_terminal():
            break
    assert legal_only.illegal_actions == 0
