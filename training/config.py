"""YAML configs checked at load time: an unknown key or a bad value fails with its name,
before any game is played or any step trained."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A config key or value that cannot be used; the message names the key."""


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The mapping at the top of a YAML file (ConfigError when it is anything else)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from err
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: the top of the config must be a mapping of keys, got {type(data).__name__}")
    return dict(data)


def check_keys(data: Mapping[str, Any], allowed: set[str] | frozenset[str], where: str) -> None:
    """Fail on the first key of ``data`` that is not ``allowed``, naming it and the known ones."""
    for key in data:
        if key not in allowed:
            raise ConfigError(f"{where}: unknown key {key!r}; known keys: {', '.join(sorted(allowed))}")


def expect_int(key: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int in [low, high], or a ConfigError naming ``key``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"config key {key!r}: expected an integer, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ConfigError(f"config key {key!r}: {value!r} is out of range; expected {bounds}")
    return value


def expect_choice(key: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else a ConfigError naming ``key``."""
    if value not in choices:
        raise ConfigError(f"config key {key!r}: {value!r} is not one of {', '.join(map(repr, choices))}")
    return value


def expect_mapping(key: str, value: Any) -> dict[str, Any]:
    """``value`` as a dict (None is empty), else a ConfigError naming ``key``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"config key {key!r}: expected a mapping, got {value!r}")
    return dict(value)
