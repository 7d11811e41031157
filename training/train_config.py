"""Training configs (``configs/<game>/*.yaml``), validated at load time by the pydantic models below.

Every key is checked before a step is trained: an unknown key, a bad value or a rules
option the game rejects fails with a ``ConfigError`` naming the key (``ppo.batch_size``,
``self_play.opponents.grandmaster``, ...). This module imports no torch, so configs can be
checked (and the opponent pool built) on machines without the ``train`` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

import rummy_envs
from agents.features import feature_set
from training.config import (ConfigError, ConfigModel, Folder, GameId, KeyProblem, NoneIsEmpty, Number,
                             Options, check, check_agent, read_yaml, validate)
from training.learner_env import POTENTIALS

SELF = "self"  # the opponent-mix entry that stands for past snapshots of the learner
ENV_ONLY_OPTIONS = ("reward", "reward_scale", "illegal_action", "render_mode", "episode")  # not rules options


class PPOSettings(ConfigModel):
    """MaskablePPO's hyperparameters (stable-baselines3 names) and the network."""

    learning_rate: Number = Field(3e-4, gt=0)
    n_steps: int = Field(256, ge=2)
    batch_size: int = Field(512, ge=2)
    n_epochs: int = Field(4, ge=1)
    gamma: Number = Field(0.995, ge=0, le=1)
    gae_lambda: Number = Field(0.95, ge=0, le=1)
    clip_range: Number = Field(0.2, gt=0)
    ent_coef: Number = Field(0.01, ge=0)
    vf_coef: Number = Field(0.5, ge=0)
    max_grad_norm: Number = Field(0.5, gt=0)
    target_kl: Number | None = Field(None, gt=0)
    net_arch: list[Annotated[int, Field(gt=0)]] = [256, 256]
    activation: Literal["tanh", "relu"] = "tanh"


class SelfPlaySettings(ConfigModel):
    """The opponent pool: every ``snapshot_every`` steps the learner's policy joins the pool
    of the last ``pool_size`` snapshots; each opponent seat of each episode is drawn from
    ``opponents`` (weights; ``self`` means a uniformly drawn snapshot)."""

    snapshot_every: int = Field(50_000, ge=1)
    pool_size: int = Field(8, ge=1)
    opponents: dict[str, Annotated[Number, Field(ge=0)]] = {SELF: 0.5, "heuristic": 0.2, "novice": 0.2, "random": 0.1}

    @field_validator("opponents")
    @classmethod
    def _some_weight(cls, opponents: dict[str, float]) -> dict[str, float]:
        if sum(opponents.values()) <= 0:
            raise KeyProblem("", "expected at least one opponent with a weight > 0")
        return opponents


class EvalSettings(ConfigModel):
    """Periodic duplicate tournaments of the learner against fixed agents, every ``every``
    steps and at the end, on the same ``deals`` shared deals (seed ``seed``) each time."""

    every: int = Field(100_000, ge=1)
    deals: int = Field(100, ge=1)
    opponents: list[str] = ["random", "novice", "heuristic"]
    workers: int = Field(1, ge=1, le=512)
    seed: int = Field(2027, ge=0)

    @field_validator("opponents")
    @classmethod
    def _distinct(cls, opponents: list[str]) -> list[str]:
        if not opponents or len(set(opponents)) != len(opponents):
            raise KeyProblem("", f"expected a list of distinct agent names, got {opponents!r}")
        return opponents


class ImitationSettings(ConfigModel):
    """An optional warm start (``training.imitation``): before PPO, the policy clones
    ``teacher`` (an agent name; none: off) over ``decisions`` of its decisions, in
    ``epochs`` passes of ``batch_size`` at ``learning_rate``; with ``fit_value`` the value net
    learns the returns of those games too."""

    teacher: str | None = None
    decisions: int = Field(100_000, ge=1)
    epochs: int = Field(4, ge=1)
    batch_size: int = Field(512, ge=1)
    learning_rate: Number = Field(1e-3, gt=0)
    fit_value: bool = False


class TrainConfig(ConfigModel):
    """A training run: the game and env options, the budget, the runtime and the four
    sections above. ``output_dir`` (default ``runs/<game>``) holds one folder per seed.
    ``reward_shaping`` is the weight of the game's shaping potential (``training.learner_env``;
    0 turns it off); ``reward_baseline`` names a bundled agent whose return on the same deal
    is subtracted from each episode's (``training.learner_env.DuplicateBaseline``);
    ``features`` names a feature set of ``agents.features`` appended to the observation.
    The checks that need the game (its env options, agents, features and potential) run
    once the game is known: fields are validated in order."""

    game: GameId
    total_steps: int = Field(ge=1)
    env: Options = {}
    seed: int = Field(0, ge=0)
    n_envs: int = Field(8, ge=1, le=256)
    vec_env: Literal["dummy", "subproc", "batched"] = "dummy"
    env_workers: int = Field(1, ge=1, le=256)
    env_backend: Literal["local", "ray"] = "local"
    torch_threads: int = Field(1, ge=1, le=256)
    checkpoint_every: int = Field(100_000, ge=1)
    output_dir: Folder = "runs/<game>"
    export_dir: Folder | None = None
    progress_bar: bool = True
    tensorboard: bool = True
    reward_shaping: Number = Field(0.0, ge=0)
    reward_baseline: str | None = None
    features: str | None = None
    ppo: Annotated[PPOSettings, NoneIsEmpty] = Field(default_factory=PPOSettings, validate_default=True)
    self_play: Annotated[SelfPlaySettings, NoneIsEmpty] = Field(default_factory=SelfPlaySettings, validate_default=True)
    evaluation: Annotated[EvalSettings, NoneIsEmpty] = Field(default_factory=EvalSettings, validate_default=True)
    imitation: Annotated[ImitationSettings, NoneIsEmpty] = Field(default_factory=ImitationSettings, validate_default=True)

    @model_validator(mode="before")
    @classmethod
    def _output_dir_of_the_game(cls, data: Any) -> Any:
        if isinstance(data, dict) and "output_dir" not in data and isinstance(data.get("game"), str):
            return {**data, "output_dir": f"runs/{data['game']}"}
        return data

    @field_validator("env")
    @classmethod
    def _env_builds(cls, env: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if "game" in info.data:
            check(lambda: rummy_envs.ENVS[info.data["game"]].raw_env(**env))
        return env

    @field_validator("env_workers")
    @classmethod
    def _workers_of_batched_envs(cls, workers: int, info: ValidationInfo) -> int:
        if workers > 1 and info.data.get("vec_env") != "batched":
            raise KeyProblem("", f"{workers} env workers need vec_env: batched (vec_env: subproc runs a process per env)")
        if workers > info.data.get("n_envs", workers):
            raise KeyProblem("", f"{workers} env workers for {info.data['n_envs']} envs (n_envs): at most one per env")
        return workers

    @field_validator("env_backend")
    @classmethod
    def _ray_workers_of_batched_envs(cls, backend: str, info: ValidationInfo) -> str:
        if backend == "ray" and info.data.get("vec_env") != "batched":
            raise KeyProblem("", "env workers on Ray need vec_env: batched")
        return backend

    @field_validator("reward_shaping")
    @classmethod
    def _game_has_a_potential(cls, weight: float, info: ValidationInfo) -> float:
        game = info.data.get("game")
        if weight > 0 and game is not None and game not in POTENTIALS:
            raise KeyProblem("", f"{game} has no shaping potential (games with one: {', '.join(POTENTIALS)}); "
                                 "set it to 0")
        return weight

    @field_validator("reward_baseline")
    @classmethod
    def _baseline_plays_the_game(cls, name: str | None, info: ValidationInfo) -> str | None:
        if name is not None and "game" in info.data:
            check_agent(name, info.data["game"], "")
        return name

    @field_validator("features")
    @classmethod
    def _features_of_the_game(cls, name: str | None, info: ValidationInfo) -> str | None:
        if name is not None and "game" in info.data:
            check(lambda: feature_set(name, info.data["game"]))
        return name

    @field_validator("ppo")
    @classmethod
    def _batch_fits_a_rollout(cls, ppo: PPOSettings, info: ValidationInfo) -> PPOSettings:
        n_envs = info.data.get("n_envs")
        if n_envs is not None and ppo.batch_size > ppo.n_steps * n_envs:
            raise KeyProblem("batch_size", f"{ppo.batch_size} is larger than a rollout "
                                           f"(ppo.n_steps * n_envs = {ppo.n_steps * n_envs})")
        return ppo

    @field_validator("self_play")
    @classmethod
    def _pool_agents_play_the_game(cls, self_play: SelfPlaySettings, info: ValidationInfo) -> SelfPlaySettings:
        for name in self_play.opponents if "game" in info.data else ():
            check_agent(name, info.data["game"], f"opponents.{name}", also=(SELF,))
        return self_play

    @field_validator("evaluation")
    @classmethod
    def _opponents_play_the_game(cls, evaluation: EvalSettings, info: ValidationInfo) -> EvalSettings:
        for name in evaluation.opponents if "game" in info.data else ():
            check_agent(name, info.data["game"], "opponents")
        return evaluation

    @field_validator("imitation")
    @classmethod
    def _teacher_plays_the_game(cls, imitation: ImitationSettings, info: ValidationInfo) -> ImitationSettings:
        if imitation.teacher is not None and "game" in info.data:
            check_agent(imitation.teacher, info.data["game"], "teacher")
        return imitation

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain JSON-able data (saved beside every checkpoint)."""
        return self.model_dump(mode="json")

    @property
    def rules_options(self) -> dict[str, Any]:
        """The env options that are rules of the game (what a tournament's ``options`` holds)."""
        return {k: v for k, v in self.env.items() if k not in ENV_ONLY_OPTIONS}

    @property
    def episode(self) -> str:
        return self.env.get("episode", "hand")

    @property
    def agent_names(self) -> list[str]:
        """Every agent the run builds by name: pool opponents, evaluation opponents, the teacher."""
        names = [n for n in self.self_play.opponents if n != SELF] + self.evaluation.opponents
        return names + [self.imitation.teacher] * (self.imitation.teacher is not None)

    def with_overrides(self, **overrides: Any) -> TrainConfig:
        """A copy with top-level keys replaced (the command-line flags), validated again."""
        return parse_config({**self.to_dict(), **{k: v for k, v in overrides.items() if v is not None}})


TOP_KEYS = frozenset(TrainConfig.model_fields)
PPO_KEYS = frozenset(PPOSettings.model_fields)
SELF_PLAY_KEYS = frozenset(SelfPlaySettings.model_fields)
EVAL_KEYS = frozenset(EvalSettings.model_fields)
IMITATION_KEYS = frozenset(ImitationSettings.model_fields)


def load_config(path: str | Path, **overrides: Any) -> TrainConfig:
    """Read and validate a YAML training config; ``overrides`` replace top-level keys."""
    data = read_yaml(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, where=str(path))


def parse_config(data: dict[str, Any], where: str = "training config") -> TrainConfig:
    """Validate a config mapping (see the module docstring)."""
    return validate(TrainConfig, data, where)


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
