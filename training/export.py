"""``rummy export MODEL.zip POLICY.npz``: a stable-baselines3 model as a numpy policy.

A MaskablePPO (sb3-contrib) or PPO (stable-baselines3) model with an MLP policy, trained on
the single-seat wrapper (``gymnasium.make("rummy_envs/<game>-v0", **options)``, optionally
with ``training.learner_env.FeatureObservation`` appending a feature set), becomes the same
``policy.npz`` that ``rummy train`` writes, so it plays as the agent ``ppo:<path>`` without
torch. The export checks the model against the env it claims (game, env options, features):
a policy fed another layout would play, badly and silently, so a mismatch is refused.
``numpy_policy`` is the weight extraction that ``training.train`` uses for its own exports.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3 import PPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.save_util import load_from_zip_file
from stable_baselines3.common.torch_layers import FlattenExtractor

import rummy_envs
from agents.features import feature_set, feature_sets_of
from agents.ppo import NumpyPolicy, PolicyInfo
from rummy_envs.wrappers import SingleAgentEnv, describe_layout, layout_hash
from training.learner_env import FeatureObservation

TORCH_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}  # what NumpyPolicy computes
POLICY_CLASSES = {MaskableActorCriticPolicy: MaskablePPO, ActorCriticPolicy: PPO}  # policy class -> algorithm
SAME_AS_BASE = ("_predict", "get_distribution")  # a subclass overriding these computes its actions otherwise


class ExportError(ValueError):
    """A model that cannot become a numpy policy, or an output file in the way."""


def numpy_policy(policy: ActorCriticPolicy | MaskableActorCriticPolicy, info: PolicyInfo) -> NumpyPolicy:
    """The policy network (observation -> action logits) of an SB3 MLP actor-critic policy as
    a ``NumpyPolicy``: the ``Linear`` layers of ``mlp_extractor.policy_net``, then
    ``action_net``, with ``policy.activation_fn``. Anything else is refused, since the numpy
    policy would compute other logits than the torch one."""
    name = type(policy).__name__
    if not isinstance(policy.pi_features_extractor, FlattenExtractor):
        raise ExportError(f"the {name} reads its observation through a {type(policy.pi_features_extractor).__name__}; "
                          "export takes the MlpPolicy's FlattenExtractor over a flat observation")
    activations = {cls: key for key, cls in TORCH_ACTIVATIONS.items()}
    activation = activations.get(policy.activation_fn)
    if activation is None:
        raise ExportError(f"the {name} uses activation {policy.activation_fn.__name__}; the numpy policy supports "
                          f"{' and '.join(f'torch.nn.{cls.__name__}' for cls in TORCH_ACTIVATIONS.values())}")
    layers = list(policy.mlp_extractor.policy_net)
    expected = [torch.nn.Linear, policy.activation_fn] * (len(layers) // 2)
    if len(layers) % 2 or not all(type(layer) is kind for layer, kind in zip(layers, expected)):
        raise ExportError(f"the {name}'s policy_net is {[type(layer).__name__ for layer in layers]}; export takes "
                          f"Linear layers each followed by {policy.activation_fn.__name__} (an MlpPolicy's net_arch)")
    numpy_of = lambda t: t.detach().cpu().numpy()  # noqa: E731
    hidden = [(numpy_of(layer.weight).T, numpy_of(layer.bias)) for layer in layers[::2]]
    head = (numpy_of(policy.action_net.weight).T, numpy_of(policy.action_net.bias))
    return NumpyPolicy(hidden, head, activation, info)


def load_model(path: Path) -> BaseAlgorithm:
    """The MaskablePPO or PPO model saved at ``path``, on the CPU, without an env; the
    algorithm is read from the zip's policy class."""
    if not path.is_file():
        zipped = path.with_name(path.name + ".zip")
        raise ExportError(f"no model file at {path}" + (f"; did you mean {zipped}?" if zipped.is_file() else ""))
    try:
        data, _, _ = load_from_zip_file(path, device="cpu")
    except ValueError as err:
        raise ExportError(f"{path} is not a stable-baselines3 model ({err})") from err
    policy_class = (data or {}).get("policy_class")
    if not isinstance(policy_class, type):
        raise ExportError(f"{path} has no readable policy class; is it a model saved by stable-baselines3's save()?")
    base = next((b for b in POLICY_CLASSES if issubclass(policy_class, b)), None)
    if base is None or any(getattr(policy_class, m) is not getattr(base, m) for m in SAME_AS_BASE):
        raise ExportError(f"{path} holds a {policy_class.__name__}; export takes MaskablePPO and PPO models with an "
                          "MLP actor-critic policy (ActorCriticPolicy or MaskableActorCriticPolicy)")
    return POLICY_CLASSES[base].load(path, device="cpu")


def claimed_env(game: str, env_options: dict[str, Any], features: str | None) -> gymnasium.Env:
    """The env the model claims to have been trained on: the single-seat wrapper with
    ``env_options``, its observation followed by ``features`` if named."""
    try:
        env: gymnasium.Env = SingleAgentEnv(game, **env_options)
        if features is not None:
            env = FeatureObservation(env, feature_set(features, game))
    except (TypeError, ValueError) as err:
        raise ExportError(f"cannot build {_claim(game, env_options, features)}: {err}") from err
    return env


def check_spaces(model: BaseAlgorithm, env: gymnasium.Env, game: str, env_options: dict[str, Any],
                 features: str | None) -> None:
    """Fail clearly unless the model observes and acts in ``env``'s spaces: the same flat
    observation (size, then bounds) and the same number of actions."""
    observed, wanted = model.observation_space, env.observation_space
    claim = _claim(game, env_options, features)
    if isinstance(observed, spaces.Dict):
        raise ExportError(f"the model observes a Dict ({', '.join(observed.spaces)}): a MultiInputPolicy. Export takes "
                          "models trained on the single-seat wrapper's flat observation (MlpPolicy), which passes "
                          "the mask through action_masks() rather than into the network")
    if not isinstance(observed, spaces.Box) or len(observed.shape) != 1:
        raise ExportError(f"the model observes {observed}; export takes the single-seat wrapper's flat Box observation")
    if observed.shape != wanted.shape:
        raise ExportError(f"the model's input has {observed.shape[0]} entries but {claim} gives {wanted.shape[0]}: "
                          f"the model was trained on another game, other env options or features"
                          f"{_features_hint(observed.shape[0], env, game, features)}")
    if not (np.array_equal(observed.low, wanted.low) and np.array_equal(observed.high, wanted.high)):
        layout = env.get_wrapper_attr("observation_layout")()
        starts = np.cumsum([0] + [s.size for s in layout.values()])
        differ = [name for name, lo, hi in zip(layout, starts, starts[1:])
                  if not all(np.array_equal(a[lo:hi], b[lo:hi]) for a, b in [(observed.low, wanted.low),
                                                                               (observed.high, wanted.high)])]
        named = ", ".join(differ[:4]) + (f" and {len(differ) - 4} more" if len(differ) > 4 else "")
        raise ExportError(f"the model's observation has the size of {claim} ({wanted.shape[0]}) but other bounds "
                          f"(segments {named}): was it trained on other env options, or on a rescaled observation?")
    if not isinstance(model.action_space, spaces.Discrete) or model.action_space.n != env.action_space.n:
        raise ExportError(f"the model has {model.action_space} actions but {claim} has Discrete({env.action_space.n})")


def _claim(game: str, env_options: dict[str, Any], features: str | None) -> str:
    """The env a model is claimed to be trained on, in words for the errors."""
    return f"{game} with env options {env_options} and {f'features {features}' if features else 'no features'}"


def _features_hint(size: int, env: gymnasium.Env, game: str, features: str | None) -> str:
    """A suggestion when the model's input size is that of ``game`` with another feature set."""
    base = env.unwrapped.observation_space.shape[0]
    sizes = {None: base} | {name: base + fs.size for name, fs in feature_sets_of(game).items()}
    matches = [name for name, total in sizes.items() if total == size and name != features]
    if not matches:
        return ""
    return f" (its size is that of {game} {f'with --features {matches[0]}' if matches[0] else 'without features'})"


def export_sb3(model_path: str | Path, out_path: str | Path, game: str, env_options: dict[str, Any] | None = None,
               features: str | None = None, force: bool = False) -> NumpyPolicy:
    """Write the policy of the SB3 model at ``model_path``, trained on ``game``'s single-seat
    wrapper with ``env_options`` (and the feature set ``features`` appended to the
    observation), to ``out_path`` as a numpy policy; returns it. An existing ``out_path`` is
    only replaced with ``force``."""
    model_path, out_path, env_options = Path(model_path), Path(out_path), dict(env_options or {})
    if out_path.exists() and not force:
        raise ExportError(f"{out_path} already exists; pass --force (force=True) to replace it")
    if out_path.exists() and model_path.exists() and out_path.samefile(model_path):
        raise ExportError(f"{out_path} is the model itself; write the policy to another file")
    model = load_model(model_path)
    env = claimed_env(game, env_options, features)
    try:
        check_spaces(model, env, game, env_options, features)
        layout = env.get_wrapper_attr("observation_layout")()
        info = PolicyInfo(game=game, env_options=env_options, features=features,
                          layout_hash=layout_hash(layout, int(env.action_space.n)), steps=int(model.num_timesteps),
                          rummy_envs_version=rummy_envs.__version__, seed=model.seed, layout=describe_layout(layout))
    finally:
        env.close()
    policy = numpy_policy(model.policy, info)
    policy.save(out_path)
    return policy
