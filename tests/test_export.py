"""``rummy export``: an SB3 model trained on the single-seat wrapper becomes a numpy policy
whose logits and masked argmax are the torch policy's and that plays as ``ppo:<path>``; the
example of docs/training.md runs as written; models of another env, unsupported networks and
existing files are refused with one line and exit code 2 on the command line."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import rummy_envs

pytest.importorskip("sb3_contrib", reason="the export tests need the train extra")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO, RecurrentPPO  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.base_class import BaseAlgorithm  # noqa: E402
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor  # noqa: E402

from agents import make_agent  # noqa: E402
from agents.features import feature_set  # noqa: E402
from agents.ppo import PolicyInfo, load_policy  # noqa: E402
from rummy_envs.wrappers import SingleAgentEnv  # noqa: E402
from training import cli  # noqa: E402
from training.export import ExportError, export_sb3, numpy_policy  # noqa: E402
from training.learner_env import FeatureObservation  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "training.md"
SECTION = "Exporting a model you trained yourself"


def docs_example() -> str:
    """The python block of docs/training.md's export section."""
    section = next(s for s in re.split(r"^## ", DOC.read_text(), flags=re.M) if s.startswith(SECTION))
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, f"section {SECTION!r} should hold one python block"
    return blocks[0]


def gin_with_features() -> gymnasium.Env:
    """Gin's single-seat wrapper with the gin_hand features, as ``rummy train`` builds it."""
    return FeatureObservation(SingleAgentEnv("gin_rummy"), feature_set("gin_hand", "gin_rummy"))


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """One torch thread, as ``rummy train`` uses: tiny nets gain nothing from more, and on a
    busy machine torch's waiting threads made these tests several times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[BaseAlgorithm, Path, Path]]:
    """(model, its zip, its exported policy) of: the docs' example (a MaskablePPO on gin
    with knock_limit 8), and a PPO (trained without masks) with ReLU and gin_hand features."""
    folder = tmp_path_factory.mktemp("export")
    names: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)  # the example writes its files where it runs
        exec(docs_example(), names)
    ppo = PPO("MlpPolicy", gin_with_features(), n_steps=64, batch_size=32, n_epochs=2, learning_rate=0.01, seed=3,
              verbose=0, device="cpu", policy_kwargs={"net_arch": [32, 16], "activation_fn": torch.nn.ReLU})
    with pytest.warns(RuntimeWarning, match="illegal actions"):  # unmasked PPO: the wrapper's warning
        ppo.learn(64)
    ppo.save(folder / "ppo.zip")
    export_sb3(folder / "ppo.zip", folder / "ppo.npz", "gin_rummy", features="gin_hand")
    return {"maskable": (names["model"], folder / "gin_model.zip", folder / "gin_policy.npz"),
            "ppo_features": (ppo, folder / "ppo.zip", folder / "ppo.npz")}


def test_the_docs_example_exports_what_it_claims(exported):
    model, _, path = exported["maskable"]
    info = load_policy(path).info
    assert (info.game, info.env_options, info.features) == ("gin_rummy", {"knock_limit": 8}, None)
    assert (info.steps, info.seed) == (model.num_timesteps, 0) and info.steps >= 256
    relu = load_policy(exported["ppo_features"][2])
    assert (relu.activation, relu.info.features, relu.info.seed) == ("relu", "gin_hand", 3)
    assert [w.shape for w, _ in relu.hidden] == [(590 + relu.features.size, 32), (32, 16)]


@pytest.mark.parametrize("kind", ["maskable", "ppo_features"])
def test_numpy_policy_has_the_torch_policys_logits_and_actions(exported, kind):
    """On 50 decisions of the training env: the same logits, and the same masked argmax as
    MaskablePPO's deterministic predict (PPO's predict ignores masks: its logits' masked
    argmax); the ppo agent, computing any features from the player's view, agrees."""
    model, _, path = exported[kind]
    policy = load_policy(path)
    agent = make_agent(f"ppo:{path}", "gin_rummy", 0)
    env = gymnasium.make("rummy_envs/gin_rummy-v0", knock_limit=8) if kind == "maskable" else gin_with_features()
    base = env.unwrapped
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    for _ in range(50):
        mask = base.action_masks().copy()
        with torch.no_grad():
            hidden = model.policy.mlp_extractor.forward_actor(torch.as_tensor(obs[None]))
            torch_logits = model.policy.action_net(hidden).numpy()[0]
        np.testing.assert_allclose(policy.logits(obs), torch_logits, rtol=1e-5, atol=1e-6)
        if kind == "maskable":
            torch_action = int(model.predict(obs, action_masks=mask, deterministic=True)[0])
        else:
            torch_action = int(np.where(mask, torch_logits, -np.inf).argmax())
        raw = base.aec_env.observe(base.learner)
        for action in (policy.best_action(obs, mask), agent.act(raw["observation"], raw["action_mask"],
                                                                base.aec_env.player_view(base.learner))):
            assert action == torch_action or abs(torch_logits[action] - torch_logits[torch_action]) < 1e-6
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()


@pytest.mark.parametrize("kind", ["maskable", "ppo_features"])
def test_exported_policy_plays_a_full_game_as_ppo_agent(exported, kind):
    """``make_agent("ppo:<path>", ...)`` plays a whole hand of the AEC env, which raises on
    an illegal move."""
    path = exported[kind][2]
    env = rummy_envs.ENVS["gin_rummy"].env(knock_limit=8, illegal_action="raise")
    seats = env.possible_agents
    players = {seats[0]: make_agent(f"ppo:{path}", "gin_rummy", 0), seats[1]: make_agent("random", "gin_rummy", 1)}
    env.reset(seed=5)
    moves = 0
    for agent in env.agent_iter(max_iter=2000):
        observed, _, terminated, truncated, _ = env.last()
        action = None
        if not (terminated or truncated):
            view = env.unwrapped.player_view(agent)
            action = players[agent].act(observed["observation"], observed["action_mask"], view)
            moves += agent == seats[0]
        env.step(action)
    assert not env.agents and moves > 5, "the game did not finish"


class MaskInObservation(gymnasium.ObservationWrapper):
    """The wrapper's observation and mask as a Dict: what a MultiInputPolicy would read."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = spaces.Dict({"observation": env.observation_space,
                                              "action_mask": spaces.MultiBinary(int(env.action_space.n))})

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": observation, "action_mask": self.env.unwrapped.action_masks().astype(np.int8)}


class FewerActions(gymnasium.Wrapper):
    """The wrapper's observation with another action count."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.action_space = spaces.Discrete(100)


class LinearExtractor(BaseFeaturesExtractor):
    """A learned projection of the observation before the MLP: a custom features extractor."""

    def __init__(self, observation_space: spaces.Box, features_dim: int = 8) -> None:
        super().__init__(observation_space, features_dim)
        self.linear = torch.nn.Linear(observation_space.shape[0], features_dim)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.linear(observations)


UNSUPPORTED: dict[str, tuple[Callable[[gymnasium.Env], BaseAlgorithm], str]] = {
    "leaky_relu": (lambda env: MaskablePPO("MlpPolicy", env, policy_kwargs={"activation_fn": torch.nn.LeakyReLU},
                                           device="cpu"),
                   r"activation LeakyReLU; the numpy policy supports torch.nn.Tanh and torch.nn.ReLU"),
    "dict_observation": (lambda env: PPO("MultiInputPolicy", MaskInObservation(env), device="cpu"),
                         r"observes a Dict \(action_mask, observation\): a MultiInputPolicy"),
    "rescaled_observation": (lambda env: MaskablePPO("MlpPolicy", gymnasium.wrappers.RescaleObservation(
        env, np.float32(0), np.float32(2)), device="cpu"), r"other bounds \(segments hand, "),
    "custom_extractor": (lambda env: PPO("MlpPolicy", env, policy_kwargs={"features_extractor_class": LinearExtractor},
                                         device="cpu"), r"reads its observation through a LinearExtractor"),
    "other_actions": (lambda env: PPO("MlpPolicy", FewerActions(env), device="cpu"),
                      r"has Discrete\(100\) actions but gin_rummy with env options \{\} and no features has "
                      r"Discrete\(450\)"),
    "recurrent": (lambda env: RecurrentPPO("MlpLstmPolicy", env, n_steps=16, batch_size=16, device="cpu"),
                  r"holds a RecurrentActorCriticPolicy; export takes MaskablePPO and PPO"),
}


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_models_are_refused_naming_what_is_supported(name, tmp_path):
    build, message = UNSUPPORTED[name]
    build(SingleAgentEnv("gin_rummy")).save(tmp_path / "model.zip")
    with pytest.raises(ExportError, match=message):
        export_sb3(tmp_path / "model.zip", tmp_path / "policy.npz", "gin_rummy")
    assert not (tmp_path / "policy.npz").exists()


def test_a_policy_net_of_other_layers_is_refused():
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("gin_rummy"), policy_kwargs={"net_arch": [8]}, device="cpu")
    info = PolicyInfo("gin_rummy", {}, None, "0" * 16, 0, rummy_envs.__version__, None)
    assert numpy_policy(model.policy, info).num_actions == 450
    model.policy.mlp_extractor.policy_net.append(torch.nn.Dropout())
    with pytest.raises(ExportError, match=r"policy_net is \['Linear', 'Tanh', 'Dropout'\]; export takes Linear layers"):
        numpy_policy(model.policy, info)


def test_a_model_of_another_env_is_refused_with_both_sizes(exported, tmp_path):
    _, maskable, _ = exported["maskable"]
    _, with_features, _ = exported["ppo_features"]
    out = tmp_path / "policy.npz"
    with pytest.raises(ExportError, match=r"input has 590 entries but least_count .* gives \d+: .*another game"):
        export_sb3(maskable, out, "least_count")
    with pytest.raises(ExportError, match=r"590 entries but gin_rummy with env options \{'episode': 'match'\} "
                                          r"and no features gives 594"):
        export_sb3(maskable, out, "gin_rummy", {"episode": "match"})
    with pytest.raises(ExportError, match=r"and features gin_hand gives \d+: .*that of gin_rummy without features"):
        export_sb3(maskable, out, "gin_rummy", features="gin_hand")
    with pytest.raises(ExportError, match=r"that of gin_rummy with --features gin_hand\)"):
        export_sb3(with_features, out, "gin_rummy")
    with pytest.raises(ExportError, match="unknown feature set 'poker'"):
        export_sb3(with_features, out, "gin_rummy", features="poker")
    with pytest.raises(ExportError, match="no model file"):
        export_sb3(tmp_path / "missing.zip", out, "gin_rummy")
    (tmp_path / "junk.zip").write_text("not a zip")
    with pytest.raises(ExportError, match="is not a stable-baselines3 model"):
        export_sb3(tmp_path / "junk.zip", out, "gin_rummy")
    assert not out.exists()


def test_an_existing_policy_is_replaced_only_with_force(exported, tmp_path):
    _, model, _ = exported["maskable"]
    out = tmp_path / "policy.npz"
    out.write_bytes(b"keep me")
    with pytest.raises(ExportError, match="already exists; pass --force"):
        export_sb3(model, out, "gin_rummy", {"knock_limit": 8})
    assert out.read_bytes() == b"keep me"
    export_sb3(model, out, "gin_rummy", {"knock_limit": 8}, force=True)
    assert load_policy(out).info.env_options == {"knock_limit": 8}
    with pytest.raises(ExportError, match="is the model itself"):
        export_sb3(model, model, "gin_rummy", force=True)


def test_cli_exports_and_fails_with_one_line_and_code_2(exported, tmp_path, capsys):
    _, model, _ = exported["maskable"]
    out = tmp_path / "policy.npz"
    command = ["export", str(model), str(out), "--game", "gin_rummy", "--option", "knock_limit=8"]
    assert cli.main(command) == 0
    assert f"plays as the agent ppo:{out}" in capsys.readouterr().out
    assert load_policy(out).info.env_options == {"knock_limit": 8}
    for argv, message in [(command, "already exists; pass --force"),
                          (["export", str(model), str(out), "--game", "rummy500", "--force"], "590 entries but rummy500"),
                          (["export", str(model), str(out), "--game", "poker", "--force"], "unknown game 'poker'")]:
        assert cli.main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and len(captured.err.splitlines()) == 1 and message in captured.err
        assert captured.err.startswith("rummy export: ")
    assert cli.main([*command, "--force"]) == 0
    capsys.readouterr()
    assert cli.main([]) == 2 and "rummy export MODEL.zip POLICY.npz" in capsys.readouterr().err
