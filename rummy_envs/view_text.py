"""Player views as text: the terminal player's generic screen and the OpenSpiel bridge's
observation and information-state strings.

A view is a frozen dataclass of plain values; card ids are written as cards (``7H``) where
the field's name says it holds cards (``hand``, ``pile``, ``melds``, ...) and not a number
of them (``hand_sizes``, ``stock_size``).
"""

from __future__ import annotations

import dataclasses
import functools
from enum import Enum
from typing import Any

from rummy_envs import cards as C

_CARD_WORDS = {"hand", "hands", "cards", "card", "discard", "discarded", "pile", "meld", "melds", "known", "set",
               "deadwood", "upcard", "pending", "table", "placed", "naturals"}
_NUMBER_WORDS = ("size", "count", "won", "score", "limit", "number", "turn", "credit", "column")  # prefixes


def cards_text(cards: Any) -> str:
    """Card ids as space-separated cards, ``-`` for none."""
    return C.format(list(cards)) or "-"


def _is_card(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= C.JOKER


def field_text(name: str, value: Any) -> str:
    """A view field or info entry as text: card ids (guessed from the name) as card strings,
    nested records field by field."""
    words = name.split("_")
    cardish = bool(_CARD_WORDS.intersection(words)) and not any(w.startswith(_NUMBER_WORDS) for w in words)
    if isinstance(value, Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return "(" + ", ".join(f"{key}: {field_text(key, v)}" for key, v in value.items()) + ")"
    if isinstance(value, (list, tuple)):
        if cardish and all(map(_is_card, value)):
            return cards_text(value)
        if value and all(isinstance(v, (list, tuple, dict)) or dataclasses.is_dataclass(v) for v in value):
            return " | ".join(field_text(name, v) for v in value)
    if cardish and _is_card(value) and {"card", "discard", "upcard"}.intersection(words):
        return C.format_card(value)
    return str(value)


@functools.cache
def shown_fields(view_class: type, skip: tuple[str, ...] = ("legal_actions",)) -> tuple[str, ...]:
    """The field names of a view class but those in ``skip``, in field order."""
    return tuple(f.name for f in dataclasses.fields(view_class) if f.name not in skip)


def view_fields(view: Any, skip: tuple[str, ...] = ("legal_actions",)) -> list[tuple[str, str]]:
    """``(name, text)`` of every field of a view but those in ``skip``, in field order."""
    return [(name, field_text(name, getattr(view, name))) for name in shown_fields(type(view), skip)]
