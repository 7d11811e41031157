"""The batched training envs (training/vec_env.py) and the rollouts their workers play
(training/rollouts.py): the same games as a DummyVecEnv of the same envs and seeds, in one
process and in subprocess shards; the opponents' policy moves really batched; rollouts that
are the torch policy's; the same policy trained twice and on Ray actors; config keys checked
at load; a worker's error reported."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="the training tests need the train extra")

import torch  # noqa: E402

import agents.ppo  # noqa: E402
from rummy_envs.wrappers import SingleAgentEnv  # noqa: E402
from training.config import ConfigError, read_yaml  # noqa: E402
from training.selfplay import OpponentPool  # noqa: E402
from training.train import export_policy, make_vec_env, new_model, train  # noqa: E402
from training.train_config import load_config, parse_config  # noqa: E402
from training.vec_env import BatchedOpponentsVecEnv, learner_wrappers, shard_sizes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "configs" / "gin_rummy" / "smoke.yaml"
# A two-seat game with features and shaping, and a four-seat game whose opponents of one env
# are often the same snapshot: both pools mix snapshots with rule-based agents.
GAMES = {"gin_rummy": {"self": 0.5, "heuristic": 0.2, "novice": 0.2, "random": 0.1},
         "least_count": {"self": 0.6, "novice": 0.2, "random": 0.2}}


def config_for(game: str, tmp_path: Path, **changes):
    config = load_config(ROOT / "configs" / game / "smoke.yaml", output_dir=str(tmp_path))
    return config.model_copy(update={"n_envs": 5, **changes})


def play(game: str, tmp_path: Path, steps: int, **changes) -> list[tuple]:
    """Random learner moves in ``n_envs`` envs against a pool of two snapshots and the
    game's agents; every step's observations, rewards, dones, masks and end-of-episode infos."""
    config = config_for(game, tmp_path, **changes)
    env = make_vec_env(config)
    try:
        model = new_model(config, env, tmp_path, 0)
        pool = OpponentPool(game, GAMES[game], 2)
        for k in range(2):
            torch.manual_seed(k)
            model.policy.mlp_extractor.policy_net[0].weight.data.normal_()  # two policies that differ
            pool.add(export_policy(model, tmp_path / f"snapshot_{k}.npz", config, k, 0))
        env.env_method("set_opponents", pool)
        env.seed(7)
        env.reset()
        rng = np.random.default_rng(0)
        trace = []
        for _ in range(steps):
            masks = np.stack(env.env_method("action_masks"))
            actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
            obs, rewards, dones, infos = env.step(actions)
            ends = [(i["episode_return"], i["terminal_observation"].tolist()) for i, d in zip(infos, dones) if d]
            trace.append((obs.tolist(), rewards.tolist(), dones.tolist(), masks.tolist(), ends))
        return trace
    finally:
        env.close()


@pytest.mark.parametrize("game", GAMES)
def test_batched_and_sharded_envs_play_the_games_of_a_dummy_vec_env(game, tmp_path):
    alone = play(game, tmp_path, 80)
    assert sum(len(step[4]) for step in alone) >= 3, "too few episodes ended to compare"
    assert play(game, tmp_path, 80, vec_env="batched") == alone
    if game == "gin_rummy":  # the shards hold the same code whatever the game: spawning them is the cost
        assert play(game, tmp_path, 80, vec_env="batched", env_workers=2) == alone


def test_policy_moves_are_answered_in_one_forward_pass_per_policy(tmp_path, monkeypatch):
    batches = []
    original = agents.ppo.NumpyPolicy.best_actions

    def counted(policy, inputs, masks):
        batches.append(len(inputs))
        return original(policy, inputs, masks)

    monkeypatch.setattr(agents.ppo.NumpyPolicy, "best_actions", counted)
    config = config_for("gin_rummy", tmp_path, vec_env="batched", n_envs=8)
    env = make_vec_env(config)
    model = new_model(config, env, tmp_path, 0)
    pool = OpponentPool("gin_rummy", {"self": 1.0}, 1)
    pool.add(export_policy(model, tmp_path / "snapshot.npz", config, 0, 0))
    env.env_method("set_opponents", pool)
    env.seed(1)
    env.reset()
    for _ in range(5):
        env.step(np.array([np.flatnonzero(m)[0] for m in env.env_method("action_masks")]))
    env.close()
    assert max(batches) == 8 and len(batches) <= 6 * 2  # every env's opponent in each call, not one call each


@pytest.mark.parametrize("change, message", [
    ({"env_workers": 2}, "'env_workers'.*need vec_env: batched"),
    ({"vec_env": "batched", "env_workers": 3}, "'env_workers'.*3 env workers for 2 envs"),
    ({"env_backend": "ray"}, "'env_backend'.*need vec_env: batched"),
    ({"vec_env": "threads"}, "'vec_env'"),
    ({"vec_env": "batched", "env_workers": 0}, "'env_workers'"),
])
def test_bad_env_worker_settings_fail_at_load_with_the_key(change, message):
    data = {**read_yaml(SMOKE), **change}
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_a_worker_error_reaches_the_driver_with_its_traceback(tmp_path):
    env = make_vec_env(config_for("gin_rummy", tmp_path, vec_env="batched", env_workers=2))
    try:
        env.reset()
        with pytest.raises(RuntimeError, match=r"an env worker failed:(.|\n)*no_such_method"):
            env.env_method("no_such_method")
        assert len(env.env_method("observation_layout", indices=[4])) == 1  # the workers still answer
    finally:
        env.close()


def test_only_learner_wrappers_may_sit_on_a_batched_env():
    import gymnasium

    plain = SingleAgentEnv("gin_rummy")
    assert learner_wrappers(plain) == []
    with pytest.raises(TypeError, match="LearnerWrappers only, not TimeLimit"):
        BatchedOpponentsVecEnv([lambda: gymnasium.wrappers.TimeLimit(SingleAgentEnv("gin_rummy"), 50)])


def test_shards_are_as_even_as_possible():
    assert shard_sizes(16, 2) == [8, 8] and shard_sizes(5, 2) == [3, 2] and shard_sizes(3, 3) == [1, 1, 1]
    with pytest.raises(ValueError, match="3 env workers for 2 envs"):
        shard_sizes(2, 3)


def test_rollouts_played_in_the_workers_are_the_torch_policys(tmp_path):
    """Every step of a worker-played rollout: a legal action, and the value and log-probability
    the torch policy gives it; episodes end with their returns in the infos."""
    from stable_baselines3.common.callbacks import BaseCallback

    config = config_for("least_count", tmp_path, vec_env="batched", env_workers=2, n_envs=4)
    env = make_vec_env(config)
    try:
        model = new_model(config, env, tmp_path, 0)
        pool = OpponentPool("least_count", GAMES["least_count"], 1)
        pool.add(export_policy(model, tmp_path / "snapshot.npz", config, 0, 0))
        env.env_method("set_opponents", pool)
        seen = []

        class Steps(BaseCallback):
            def _on_step(self) -> bool:
                seen.append((self.num_timesteps, [i["episode_return"] for i, d in zip(self.locals["infos"],
                                                                                      self.locals["dones"]) if d]))
                return True

        steps = config.ppo.n_steps
        model._setup_learn(steps * 4, None)
        callback = Steps()
        callback.init_callback(model)
        assert model.collect_rollouts(env, callback, model.rollout_buffer, steps)
        buffer = model.rollout_buffer
        observations = torch.as_tensor(buffer.observations.reshape(steps * 4, -1))
        actions = torch.as_tensor(buffer.actions.reshape(-1))
        masks = buffer.action_masks.reshape(steps * 4, -1)
        assert masks[np.arange(steps * 4), buffer.actions.reshape(-1).astype(int)].all()
        with torch.no_grad():
            values, log_probs, _ = model.policy.evaluate_actions(observations, actions, action_masks=masks)
        np.testing.assert_allclose(values.numpy().ravel(), buffer.values.ravel(), atol=1e-4)
        np.testing.assert_allclose(log_probs.numpy(), buffer.log_probs.ravel(), atol=1e-4)
        assert [n for n, _ in seen] == [4 * (t + 1) for t in range(steps)] and model.num_timesteps == 4 * steps
        assert sum(len(ends) for _, ends in seen) >= 2 and len(model.ep_info_buffer) >= 2
    finally:
        env.close()


def test_a_config_with_env_workers_trains_the_same_policy_twice_and_on_ray_actors(tmp_path):
    """Rollouts played by two subprocess workers, twice, and by two Ray actors on a local Ray:
    the same policy each time (the workers' sampling is seeded from the run's seed)."""
    data = read_yaml(SMOKE)
    data.update(total_steps=256, vec_env="batched", env_workers=2, imitation={},
                evaluation={**data["evaluation"], "opponents": ["random"]})
    runs = {"first": {}, "second": {}}
    if importlib.util.find_spec("ray") is not None or os.environ.get("RUMMY_REQUIRE_INTEGRATIONS"):
        runs["ray"] = {"env_backend": "ray"}  # a local Ray with two actors (CI has Ray: it must run there)
    policies = []
    for run, changes in runs.items():
        result = train(parse_config({**data, **changes, "output_dir": str(tmp_path / run)}))
        assert result.steps == 256
        with np.load(result.policy) as policy:
            policies.append({key: policy[key] for key in policy.files if key != "meta"})
    for other in policies[1:]:
        assert other.keys() == policies[0].keys()
        assert all(np.array_equal(policies[0][key], other[key]) for key in policies[0])
