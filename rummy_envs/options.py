"""Validation of rules options: unknown names and bad values fail at construction, by name."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any


def check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> None:
    """ValueError naming the option unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"option {name}={value!r} is invalid; choose one of {', '.join(map(repr, choices))}")


def check_int(name: str, value: Any, low: int, high: int | None = None) -> None:
    """ValueError naming the option unless ``value`` is an int in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"option {name}={value!r} is invalid; expected an integer {bound}")


def check_number(name: str, value: Any, low: float, inclusive: bool = True) -> None:
    """ValueError naming the option unless ``value`` is a number >= ``low`` (> when not
    ``inclusive``); NaN is no number here."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (value >= low if inclusive else value > low):
        raise ValueError(f"option {name}={value!r} is invalid; expected a number {'>=' if inclusive else '>'} {low}")


def check_bool(name: str, value: Any) -> None:
    """ValueError naming the option unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise ValueError(f"option {name}={value!r} is invalid; expected True or False")


def check_date(name: str, value: Any) -> None:
    """ValueError naming the option unless ``value`` is a ``"YYYY-MM-DD"`` calendar date."""
    try:
        valid = isinstance(value, str) and datetime.date.fromisoformat(value).isoformat() == value
    except ValueError:
        valid = False
    if not valid:
        raise ValueError(f"option {name}={value!r} is invalid; expected a date written YYYY-MM-DD")


def check_text(name: str, value: Any, forbidden: str = "") -> None:
    """ValueError naming the option unless ``value`` is a str free of the ``forbidden`` characters."""
    if not isinstance(value, str) or any(ch in value for ch in forbidden):
        extra = f" without {', '.join(map(repr, forbidden))}" if forbidden else ""
        raise ValueError(f"option {name}={value!r} is invalid; expected a string{extra}")


def unknown_options_error(what: str, unknown: set[str], known: list[str] | set[str]) -> ValueError:
    """The error for options ``what`` does not take, naming them and every accepted one."""
    return ValueError(f"unknown option(s) for {what}: {', '.join(sorted(unknown))}; "
                      f"known options: {', '.join(sorted(known))}")


def build(config_class: type, kwargs: dict[str, Any], what: str) -> Any:
    """Construct a frozen options dataclass, naming any unknown option."""
    names = {f.name for f in dataclasses.fields(config_class)}
    unknown = set(kwargs) - names
    if unknown:
        raise unknown_options_error(what, unknown, names)
    return config_class(**kwargs)
