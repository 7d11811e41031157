"""YAML configs checked at load time by pydantic models: an unknown key or a bad value fails
with a ``ConfigError`` naming the key (nested keys dotted, ``ppo.batch_size``) and what was
expected, before any game is played or any step trained."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import takewhile
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

import rummy_envs
from agents import make_agent


class ConfigError(ValueError):
    """A config key or value that cannot be used; the message names the key."""


class KeyProblem(ValueError):
    """What a validator raises: the problem of ``key``, dotted and relative to the key it
    validates (empty: that key itself), so that the ConfigError names the full key."""

    def __init__(self, key: str, problem: str) -> None:
        super().__init__(problem)
        self.key = key


class ConfigModel(BaseModel):
    """A config or a section of one: unknown keys are refused, values are never converted
    (``"8"`` is not an integer, ``1`` is not ``true``) and a loaded config does not change."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


NoneIsEmpty = BeforeValidator(lambda value: {} if value is None else value)
"""An empty YAML key (``None``) as an empty mapping: a section of defaults, no options."""
Number = Annotated[float, Field(allow_inf_nan=False)]
"""A finite number (an integer is accepted, a string or a boolean is not)."""
Options = Annotated[dict[str, Any], NoneIsEmpty]
Folder = Annotated[str, Field(min_length=1), BeforeValidator(lambda value: str(value) if isinstance(value, PurePath) else value)]
"""A folder as text; from Python a ``pathlib`` path is accepted too."""
GameId = Literal[tuple(rummy_envs.ENVS)]  # type: ignore[valid-type]
"""A game of ``rummy_envs.ENVS`` (the schemas list them)."""

Model = TypeVar("Model", bound=ConfigModel)


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping at the top of a YAML file (ConfigError when it is anything else)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top of the config must be a mapping of keys, got {type(data).__name__}")
    return dict(data)


def validate(model: type[Model], data: Mapping[str, Any], where: str) -> Model:
    """``data`` as a ``model``, or a ConfigError with a line per problem, each naming its key."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError("\n".join(f"{where}: {describe(model, error)}" for error in err.errors())) from None


def describe(model: type[ConfigModel], error: ErrorDetails) -> str:
    """One pydantic error as a sentence naming the dotted key and what was expected."""
    keys = [str(part) for part in takewhile(lambda part: isinstance(part, str), error["loc"])]
    item = error["loc"][len(keys):]
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, KeyProblem):
        key = ".".join(keys + [cause.key] if cause.key else keys)
        return f"config key {key!r}: {cause}"
    key = ".".join(keys)
    if error["type"] == "missing":
        return f"missing key {key!r}"
    if error["type"] == "extra_forbidden":
        return f"unknown key {key!r}; known keys: {', '.join(sorted(section_model(model, keys[:-1]).model_fields))}"
    message = error["msg"][0].lower() + error["msg"][1:]
    where = f"item {item[0]}: " if item else ""
    hint = " (YAML reads 3e-4 as text: write 3.0e-4)" if "number" in message and isinstance(error["input"], str) else ""
    return f"config key {key!r}: {where}{message}, got {error['input']!r}{hint}"


def section_model(model: type[ConfigModel], keys: list[str]) -> type[ConfigModel]:
    """The model of the section at dotted ``keys`` below ``model``."""
    for key in keys:
        model = model.model_fields[key].annotation  # type: ignore[assignment]
    return model


def check(build: Callable[[], object], key: str = "") -> None:
    """Call ``build`` (an env, a feature set, an agent made to check the config); the error
    it raises (TypeError, ValueError, OSError) becomes a KeyProblem of ``key``."""
    try:
        build()
    except (TypeError, ValueError, OSError) as err:
        raise KeyProblem(key, str(err)) from err


def check_agent(name: str, game: str, key: str = "", also: tuple[str, ...] = ()) -> None:
    """An agent name ``make_agent`` builds for ``game`` (a registry name, with parameters or
    not, ``ppo:<path>`` or ``module:Class``), or one of ``also``; else a KeyProblem naming it."""
    if name in also:
        return
    check(lambda: make_agent(name, game, 0), key)
