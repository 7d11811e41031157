"""Trained policies played with numpy alone: the ``ppo:<path>`` agent.

Training (``training.train``) exports each policy network to a small ``.npz``: the weights
of the MLP that maps an observation to action logits, its activation, and what it was
trained on (game, env options, feature set, input layout and its hash, steps). Playing it needs neither
torch nor stable-baselines3: the agent takes the masked argmax of the logits, the same
action as the torch policy's deterministic ``predict``. Loaded files are cached per path
(and modification time), so a tournament that builds an agent per game reads a file once.

A policy records its input segments (name, size, bound). When a later rummy-envs adds
observation segments, the policy still plays: its input is cut from the new observation by
segment name, exactly the values it was trained on. A segment it was trained on that is gone
or changed makes it refuse to load.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

import rummy_envs
from agents.features import FeatureSet, feature_set, policy_layout
from rummy_envs.envs.base import Segment
from rummy_envs.wrappers import describe_layout, layout_hash

def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0), elementwise."""
    return np.maximum(x, 0.0)


ACTIVATIONS = {"tanh": np.tanh, "relu": relu}  # module-level functions, so policies pickle into subprocesses
FORMAT_VERSION = 1


@dataclass(frozen=True)
class PolicyInfo:
    """What an exported policy was trained on. ``layout_hash`` covers the policy's whole
    input: the env's observation segments, then those of ``features`` (a feature set of
    ``agents.features``, or None); ``layout`` lists those segments as ``[name, size, high]``
    (None in files written before it was recorded: they need the same layout exactly).
    ``seed`` is None for a model trained without one and exported by ``rummy export``."""

    game: str
    env_options: dict[str, Any]
    features: str | None
    layout_hash: str
    steps: int
    rummy_envs_version: str
    seed: int | None
    layout: list[list[Any]] | None = None


class NumpyPolicy:
    """An MLP ``input -> action logits``: hidden layers with one activation, then a linear
    head. The input is the observation, followed by the features of the player's view when
    the policy has a feature set. Weights are kept transposed (``x @ W``) and float32, as in
    training."""

    def __init__(self, hidden: list[tuple[np.ndarray, np.ndarray]], head: tuple[np.ndarray, np.ndarray],
                 activation: str, info: PolicyInfo) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; known: {', '.join(ACTIVATIONS)}")
        self.hidden = [(np.ascontiguousarray(w, np.float32), np.asarray(b, np.float32)) for w, b in hidden]
        self.head = (np.ascontiguousarray(head[0], np.float32), np.asarray(head[1], np.float32))
        self.activation = activation
        self._activate = ACTIVATIONS[activation]
        self.info = info
        self.features: FeatureSet | None = None if info.features is None else feature_set(info.features, info.game)
        self.input_size = (self.hidden[0][0] if self.hidden else self.head[0]).shape[0]
        self.num_actions = self.head[0].shape[1]
        self._layout_checked = False
        self._columns: np.ndarray | None = None  # the policy's input within a longer one (``check_layout``)

    def policy_input(self, observation: np.ndarray, view: Any) -> np.ndarray:
        """The observation, with the features of ``view`` appended if the policy has them;
        only the segments the policy was trained on when the env has added others."""
        full = observation if self.features is None else np.concatenate([observation, self.features.compute(view)])
        return full if self._columns is None else full[self._columns]

    def logits(self, policy_input: np.ndarray) -> np.ndarray:
        """Action logits for one policy input (1-D) or a batch (2-D)."""
        x = np.asarray(policy_input, np.float32)
        if x.shape[-1] != self.input_size:
            raise ValueError(f"the policy input has {x.shape[-1]} entries but this {self.info.game} policy expects "
                             f"{self.input_size} (trained with env options {self.info.env_options} and features "
                             f"{self.info.features})")
        for weight, bias in self.hidden:
            x = self._activate(x @ weight + bias)
        return x @ self.head[0] + self.head[1]

    def best_action(self, policy_input: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal action of highest logit (the lowest id on a tie)."""
        legal = np.asarray(action_mask).astype(bool)
        if not legal.any():
            raise ValueError("the action mask is empty: no legal action (not this player's turn?)")
        return int(np.where(legal, self.logits(policy_input), -np.inf).argmax())

    def best_actions(self, policy_inputs: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``best_action`` of every row of a batch, in one forward pass."""
        legal = np.asarray(action_masks).astype(bool)
        if not legal.any(axis=1).all():
            raise ValueError("an action mask of the batch is empty: no legal action (not that player's turn?)")
        return np.where(legal, self.logits(policy_inputs), -np.inf).argmax(axis=1)

    def check_layout(self) -> None:
        """Fail unless this package still builds the observation layout the policy was trained
        on (checked once per loaded policy)."""
        if self._layout_checked:
            return
        info = self.info
        if info.game not in rummy_envs.ENVS:
            raise ValueError(f"policy trained for game {info.game!r}, which this rummy-envs does not have")
        env = rummy_envs.ENVS[info.game].raw_env(**info.env_options)
        layout = policy_layout(env.observation_layout(), self.features)
        now = layout_hash(layout, env.num_actions)
        if now != info.layout_hash:
            self._columns = self._trained_columns(layout, env.num_actions, now)
        self._layout_checked = True

    def _trained_columns(self, layout: dict[str, Segment], num_actions: int, now: str) -> np.ndarray:
        """Where the segments the policy was trained on lie in ``layout``, a layout that adds
        others; refused when one of them is gone or changed, or the file records no layout."""
        info = self.info
        refusal = (f"policy for {info.game} was trained on observation layout {info.layout_hash} (rummy-envs "
                   f"{info.rummy_envs_version}, env options {info.env_options}), but this rummy-envs "
                   f"{rummy_envs.__version__} builds layout {now} for those options")
        if info.layout is None or layout_hash(info.layout, num_actions) != info.layout_hash:
            raise ValueError(f"{refusal}, and the file does not record its segments; retrain it")
        current = {entry[0]: entry for entry in describe_layout(layout)}
        changed = [name for name, size, high in info.layout if current.get(name) != [name, size, float(high)]]
        if changed:
            raise ValueError(f"{refusal}, where its segments {', '.join(changed)} are gone or changed; retrain it")
        return np.concatenate([np.arange(layout[name].offset, layout[name].offset + size)
                               for name, size, _ in info.layout])

    def save(self, path: str | Path) -> None:
        """Write the ``.npz`` (no pickles: plain arrays and a JSON string)."""
        arrays: dict[str, np.ndarray] = {}
        for i, (weight, bias) in enumerate(self.hidden):
            arrays[f"hidden_{i}_weight"], arrays[f"hidden_{i}_bias"] = weight, bias
        arrays["head_weight"], arrays["head_bias"] = self.head
        meta = {"format": FORMAT_VERSION, "activation": self.activation, **asdict(self.info)}
        arrays["meta"] = np.array(json.dumps(meta, sort_keys=True))
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as out:  # a file object, so numpy does not append ".npz" to the name
            np.savez_compressed(out, **arrays)

    @classmethod
    def load(cls, path: str | Path) -> NumpyPolicy:
        """Read an exported policy (use ``load_policy`` for the cached read)."""
        with np.load(path, allow_pickle=False) as data:
            if "meta" not in data or "head_weight" not in data:
                raise ValueError(f"{path} is not an exported rummy-envs policy (no meta or head_weight array)")
            meta = json.loads(str(data["meta"]))
            count = sum(1 for key in data.files if key.endswith("_weight") and key.startswith("hidden_"))
            hidden = [(data[f"hidden_{i}_weight"], data[f"hidden_{i}_bias"]) for i in range(count)]
            head = (data["head_weight"], data["head_bias"])
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{path}: policy format {meta.get('format')!r}; this version reads format {FORMAT_VERSION}")
        info = PolicyInfo(**{k: meta[k] for k in PolicyInfo.__dataclass_fields__ if k in meta or k != "layout"})
        return cls(hidden, head, meta["activation"], info)


def load_policy(path: str | Path) -> NumpyPolicy:
    """The policy at ``path``, read once per file version (path, modification time, size)."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_file():
        raise ValueError(f"no exported policy at {path} (resolved to {resolved})")
    stat = resolved.stat()
    return _load_cached(str(resolved), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load_cached(path: str, mtime_ns: int, size: int) -> NumpyPolicy:
    return NumpyPolicy.load(path)


class PPOAgent:
    """Plays an exported policy deterministically: the masked argmax of its logits."""

    name = "ppo"

    def __init__(self, policy: NumpyPolicy, game: str | None = None, seed: int | None = None) -> None:
        self.policy = policy
        self.game = game or policy.info.game

    def reset(self) -> None:
        """A feed-forward policy has no memory to forget."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any = None) -> int:
        return self.policy.best_action(self.policy.policy_input(observation, view), action_mask)


def make_ppo_agent(path: str, game: str, seed: int | None = None) -> PPOAgent:
    """The ``ppo:<path>`` agent: the policy at ``path``, which must have been trained for
    ``game`` on the observation layout this package builds."""
    policy = load_policy(path)
    if policy.info.game != game:
        raise ValueError(f"policy {path} was trained for {policy.info.game!r}, not {game!r}")
    policy.check_layout()
    return PPOAgent(policy, game, seed)
