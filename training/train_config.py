"""Training configs (``configs/<game>/*.yaml``), validated at load time.

Every key is checked before a step is trained: an unknown key, a bad value or a rules
option the game rejects fails with a ``ConfigError`` naming the key (``ppo.batch_size``,
``self_play.opponents.grandmaster``, ...). This module imports no torch, so configs can be
checked (and the opponent pool built) on machines without the ``train`` extra.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import rummy_envs
from agents import make_agent, registered_agents
from agents.base import PPO_PREFIX
from agents.features import feature_set
from training.config import ConfigError, check_keys, expect_choice, expect_int, expect_mapping, read_yaml
from training.learner_env import POTENTIALS

SELF = "self"  # the opponent-mix entry that stands for past snapshots of the learner
ENV_ONLY_OPTIONS = ("reward", "reward_scale", "illegal_action", "render_mode", "episode")  # not rules options
ACTIVATIONS = ("tanh", "relu")


@dataclass(frozen=True)
class PPOSettings:
    """MaskablePPO's hyperparameters (stable-baselines3 names) and the network."""

    learning_rate: float = 3e-4
    n_steps: int = 256
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None
    net_arch: tuple[int, ...] = (256, 256)
    activation: str = "tanh"


@dataclass(frozen=True)
class SelfPlaySettings:
    """The opponent pool: every ``snapshot_every`` steps the learner's policy joins the pool
    of the last ``pool_size`` snapshots; each opponent seat of each episode is drawn from
    ``opponents`` (weights; ``self`` means a uniformly drawn snapshot)."""

    snapshot_every: int = 50_000
    pool_size: int = 8
    opponents: dict[str, float] = field(default_factory=lambda: {SELF: 0.5, "heuristic": 0.2, "novice": 0.2,
                                                                 "random": 0.1})


@dataclass(frozen=True)
class EvalSettings:
    """Periodic duplicate tournaments of the learner against fixed agents, every ``every``
    steps and at the end, on the same ``deals`` shared deals (seed ``seed``) each time."""

    every: int = 100_000
    deals: int = 100
    opponents: tuple[str, ...] = ("random", "novice", "heuristic")
    workers: int = 1
    seed: int = 2027


@dataclass(frozen=True)
class ImitationSettings:
    """An optional warm start (``training.imitation``): before PPO, the policy clones
    ``teacher`` (an agent name; none: off) over ``decisions`` of its decisions, in
    ``epochs`` passes of ``batch_size`` at ``learning_rate``."""

    teacher: str | None = None
    decisions: int = 100_000
    epochs: int = 4
    batch_size: int = 512
    learning_rate: float = 1e-3


@dataclass(frozen=True)
class TrainConfig:
    """A training run: the game and env options, the budget, the runtime and the three
    groups of settings above. ``output_dir`` holds one folder per seed. ``reward_shaping``
    is the weight of the game's shaping potential (``training.learner_env``; 0 turns it off);
    ``features`` names a feature set of ``agents.features`` appended to the observation."""

    game: str
    total_steps: int
    env: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    n_envs: int = 8
    vec_env: str = "dummy"
    torch_threads: int = 1
    checkpoint_every: int = 100_000
    output_dir: str = "runs"
    export_dir: str | None = None
    progress_bar: bool = True
    tensorboard: bool = True
    reward_shaping: float = 0.0
    features: str | None = None
    ppo: PPOSettings = field(default_factory=PPOSettings)
    self_play: SelfPlaySettings = field(default_factory=SelfPlaySettings)
    evaluation: EvalSettings = field(default_factory=EvalSettings)
    imitation: ImitationSettings = field(default_factory=ImitationSettings)

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain JSON-able data (saved beside every checkpoint)."""
        data = asdict(self)
        data["ppo"]["net_arch"] = list(self.ppo.net_arch)
        data["evaluation"]["opponents"] = list(self.evaluation.opponents)
        return data

    @property
    def rules_options(self) -> dict[str, Any]:
        """The env options that are rules of the game (what a tournament's ``options`` holds)."""
        return {k: v for k, v in self.env.items() if k not in ENV_ONLY_OPTIONS}

    @property
    def episode(self) -> str:
        return self.env.get("episode", "hand")

    def with_overrides(self, **overrides: Any) -> TrainConfig:
        """A copy with top-level keys replaced (the command-line flags), validated again."""
        data = self.to_dict()
        data.update({k: v for k, v in overrides.items() if v is not None})
        return parse_config(data)


TOP_KEYS = frozenset(f.name for f in TrainConfig.__dataclass_fields__.values())
PPO_KEYS = frozenset(PPOSettings.__dataclass_fields__)
SELF_PLAY_KEYS = frozenset(SelfPlaySettings.__dataclass_fields__)
EVAL_KEYS = frozenset(EvalSettings.__dataclass_fields__)
IMITATION_KEYS = frozenset(ImitationSettings.__dataclass_fields__)


def load_config(path: str | Path, **overrides: Any) -> TrainConfig:
    """Read and validate a YAML training config; ``overrides`` replace top-level keys."""
    data = read_yaml(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, where=str(path))


def parse_config(data: dict[str, Any], where: str = "training config") -> TrainConfig:
    """Validate a config mapping (see the module docstring)."""
    check_keys(data, TOP_KEYS, where)
    for required in ("game", "total_steps"):
        if required not in data:
            raise ConfigError(f"{where}: missing key {required!r}")
    game = expect_choice("game", data["game"], tuple(rummy_envs.ENVS))
    env = expect_mapping("env", data.get("env"))
    try:
        rummy_envs.ENVS[game].raw_env(**env)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"config key 'env': {err}") from err
    ppo = _parse_ppo(expect_mapping("ppo", data.get("ppo")), where)
    n_envs = expect_int("n_envs", data.get("n_envs", TrainConfig.n_envs), 1, 256)
    if ppo.batch_size > ppo.n_steps * n_envs:
        raise ConfigError(f"config key 'ppo.batch_size': {ppo.batch_size} is larger than a rollout "
                          f"(ppo.n_steps * n_envs = {ppo.n_steps * n_envs})")
    return TrainConfig(
        game=game,
        total_steps=expect_int("total_steps", data["total_steps"], 1),
        env=env,
        seed=expect_int("seed", data.get("seed", 0), 0),
        n_envs=n_envs,
        vec_env=expect_choice("vec_env", data.get("vec_env", "dummy"), ("dummy", "subproc")),
        torch_threads=expect_int("torch_threads", data.get("torch_threads", 1), 1, 256),
        checkpoint_every=expect_int("checkpoint_every", data.get("checkpoint_every", TrainConfig.checkpoint_every), 1),
        output_dir=_expect_str("output_dir", data.get("output_dir", f"runs/{game}")),
        export_dir=None if data.get("export_dir") is None else _expect_str("export_dir", data["export_dir"]),
        progress_bar=_expect_bool("progress_bar", data.get("progress_bar", True)),
        tensorboard=_expect_bool("tensorboard", data.get("tensorboard", True)),
        reward_shaping=_parse_shaping(data.get("reward_shaping", 0.0), game),
        features=_parse_features(data.get("features"), game),
        ppo=ppo,
        self_play=_parse_self_play(expect_mapping("self_play", data.get("self_play")), game, where),
        evaluation=_parse_evaluation(expect_mapping("evaluation", data.get("evaluation")), game, where),
        imitation=_parse_imitation(expect_mapping("imitation", data.get("imitation")), game, where),
    )


def _parse_shaping(value: Any, game: str) -> float:
    weight = expect_number("reward_shaping", value, 0.0)
    if weight > 0 and game not in POTENTIALS:
        raise ConfigError(f"config key 'reward_shaping': {game} has no shaping potential (games with one: "
                          f"{', '.join(POTENTIALS)}); set it to 0")
    return weight


def _parse_features(value: Any, game: str) -> str | None:
    if value is None:
        return None
    try:
        feature_set(value, game)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"config key 'features': {err}") from err
    return value


def _parse_ppo(data: dict[str, Any], where: str) -> PPOSettings:
    check_keys(data, PPO_KEYS, f"{where}: ppo")
    d = PPOSettings()
    net_arch = data.get("net_arch", list(d.net_arch))
    if not isinstance(net_arch, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in net_arch):
        raise ConfigError(f"config key 'ppo.net_arch': expected a list of positive layer widths, got {net_arch!r}")
    target_kl = data.get("target_kl", d.target_kl)
    return PPOSettings(
        learning_rate=expect_number("ppo.learning_rate", data.get("learning_rate", d.learning_rate), 0.0, None, low_open=True),
        n_steps=expect_int("ppo.n_steps", data.get("n_steps", d.n_steps), 2),
        batch_size=expect_int("ppo.batch_size", data.get("batch_size", d.batch_size), 2),
        n_epochs=expect_int("ppo.n_epochs", data.get("n_epochs", d.n_epochs), 1),
        gamma=expect_number("ppo.gamma", data.get("gamma", d.gamma), 0.0, 1.0),
        gae_lambda=expect_number("ppo.gae_lambda", data.get("gae_lambda", d.gae_lambda), 0.0, 1.0),
        clip_range=expect_number("ppo.clip_range", data.get("clip_range", d.clip_range), 0.0, None, low_open=True),
        ent_coef=expect_number("ppo.ent_coef", data.get("ent_coef", d.ent_coef), 0.0),
        vf_coef=expect_number("ppo.vf_coef", data.get("vf_coef", d.vf_coef), 0.0),
        max_grad_norm=expect_number("ppo.max_grad_norm", data.get("max_grad_norm", d.max_grad_norm), 0.0, None,
                                    low_open=True),
        target_kl=None if target_kl is None else expect_number("ppo.target_kl", target_kl, 0.0, None, low_open=True),
        net_arch=tuple(net_arch),
        activation=expect_choice("ppo.activation", data.get("activation", d.activation), ACTIVATIONS),
    )


def _parse_self_play(data: dict[str, Any], game: str, where: str) -> SelfPlaySettings:
    check_keys(data, SELF_PLAY_KEYS, f"{where}: self_play")
    d = SelfPlaySettings()
    opponents = expect_mapping("self_play.opponents", data.get("opponents", d.opponents))
    weights = {}
    for name, weight in opponents.items():
        key = f"self_play.opponents.{name}"
        if name != SELF:
            _check_agent(key, name, game)
        weights[name] = expect_number(key, weight, 0.0)
    if not weights or sum(weights.values()) <= 0:
        raise ConfigError("config key 'self_play.opponents': expected at least one opponent with a weight > 0")
    return SelfPlaySettings(
        snapshot_every=expect_int("self_play.snapshot_every", data.get("snapshot_every", d.snapshot_every), 1),
        pool_size=expect_int("self_play.pool_size", data.get("pool_size", d.pool_size), 1),
        opponents=weights,
    )


def _parse_evaluation(data: dict[str, Any], game: str, where: str) -> EvalSettings:
    check_keys(data, EVAL_KEYS, f"{where}: evaluation")
    d = EvalSettings()
    opponents = data.get("opponents", list(d.opponents))
    if not isinstance(opponents, list) or not opponents or len(set(opponents)) != len(opponents):
        raise ConfigError(f"config key 'evaluation.opponents': expected a list of distinct agent names, got {opponents!r}")
    for name in opponents:
        _check_agent("evaluation.opponents", name, game)
    return EvalSettings(
        every=expect_int("evaluation.every", data.get("every", d.every), 1),
        deals=expect_int("evaluation.deals", data.get("deals", d.deals), 1),
        opponents=tuple(opponents),
        workers=expect_int("evaluation.workers", data.get("workers", d.workers), 1, 512),
        seed=expect_int("evaluation.seed", data.get("seed", d.seed), 0),
    )


def _parse_imitation(data: dict[str, Any], game: str, where: str) -> ImitationSettings:
    check_keys(data, IMITATION_KEYS, f"{where}: imitation")
    d = ImitationSettings()
    teacher = data.get("teacher")
    if teacher is not None:
        _check_agent("imitation.teacher", teacher, game)
    return ImitationSettings(
        teacher=teacher,
        decisions=expect_int("imitation.decisions", data.get("decisions", d.decisions), 1),
        epochs=expect_int("imitation.epochs", data.get("epochs", d.epochs), 1),
        batch_size=expect_int("imitation.batch_size", data.get("batch_size", d.batch_size), 1),
        learning_rate=expect_number("imitation.learning_rate", data.get("learning_rate", d.learning_rate), 0.0, None,
                                    low_open=True),
    )


def _check_agent(key: str, name: Any, game: str) -> None:
    """A registry name or ``ppo:<path>`` that builds for ``game``, else a ConfigError."""
    known = registered_agents(game)
    if not isinstance(name, str) or not (name in known or name.startswith(PPO_PREFIX)):
        raise ConfigError(f"config key {key!r}: unknown agent {name!r} for {game}; known: {', '.join(known)}, "
                          f"{SELF} (self-play opponents only) or {PPO_PREFIX}<path>")
    try:
        make_agent(name, game, 0)
    except (ValueError, OSError) as err:
        raise ConfigError(f"config key {key!r}: {err}") from err


def expect_number(key: str, value: Any, low: float | None = None, high: float | None = None,
                  low_open: bool = False) -> float:
    """``value`` as a finite float in [low, high] (``(low, high]`` with ``low_open``), or a
    ConfigError naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        hint = " (YAML reads 3e-4 as text: write 3.0e-4)" if isinstance(value, str) else ""
        raise ConfigError(f"config key {key!r}: expected a number, got {value!r}{hint}")
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        bounds = f"{'>' if low_open else '>='} {low}" + ("" if high is None else f" and <= {high}")
        raise ConfigError(f"config key {key!r}: {value!r} is out of range; expected {bounds}")
    return float(value)


def _expect_str(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"config key {key!r}: expected a non-empty string, got {value!r}")
    return value


def _expect_bool(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"config key {key!r}: expected true or false, got {value!r}")
    return value


def parse_seeds(text: str) -> list[int]:
    """``"3"``, ``"0-7"`` or ``"0,2,5"`` (ranges inclusive) as a list of distinct seeds."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            seeds += range(int(low), int(high or low) + 1)
    except ValueError as err:
        raise ConfigError(f"--seeds {text!r}: expected a seed, a range like 0-7 or a list like 0,2,5") from err
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise ConfigError(f"--seeds {text!r}: expected distinct seeds >= 0")
    return seeds
