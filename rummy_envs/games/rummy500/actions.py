"""Rummy 500's phases and actions: the decision points of a turn, the named offsets of the one
``Discrete`` action space and their readable names (docs/rummy500.md#actions).

A turn is a ``DRAW`` decision (the stock, the top discard or a deeper one) and then ``MELD``
decisions: table play built from micro-actions (pick cards into a pending group, then commit
it as a new meld or a layoff, or cancel it) until a discard ends the turn
(docs/rummy500.md#a-turn).
"""

from __future__ import annotations

from enum import IntEnum

from rummy_envs import cards as C
from rummy_envs.games.base import read_action_name

JOKER = C.JOKER
NUM_IDS = C.NUM_CARDS + 1  # card ids with the joker
MAX_PILE = 108  # two decks and four jokers
MAX_MELDS = MAX_PILE // 3


class Phase(IntEnum):
    """Decision points of a turn; GAME_OVER ends the episode (hand or match)."""

    DRAW = 0
    MELD = 1  # table micro-actions and the discard
    GAME_OVER = 2


# Action ids: named offsets of one Discrete space.
DRAW_STOCK = 0
END_HAND = 1  # decline the pile when the stock is empty
MELD_NEW = 2  # commit the pending group as a new meld
CANCEL = 3  # put the pending group back
TAKE_DISCARD = 4  # TAKE_DISCARD + position in the pile, 0 = bottom
PICK = TAKE_DISCARD + MAX_PILE  # PICK + card: a natural card into the pending group
PICK_JOKER = PICK + C.NUM_CARDS  # PICK_JOKER + identity: a joker declared as that card
LAY_OFF = PICK_JOKER + C.NUM_CARDS  # LAY_OFF + slot: onto a set, or a sequence's low end
LAY_OFF_HIGH = LAY_OFF + MAX_MELDS  # LAY_OFF_HIGH + slot: onto a sequence's high end
DISCARD = LAY_OFF_HIGH + MAX_MELDS  # DISCARD + card id (52: a joker)
NUM_ACTIONS = DISCARD + NUM_IDS
_SIMPLE_NAMES = {DRAW_STOCK: "DRAW_STOCK", END_HAND: "END_HAND", MELD_NEW: "MELD_NEW", CANCEL: "CANCEL"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()}
_CARD_ACTIONS = {"PICK": (PICK, C.NUM_CARDS), "PICK_JOKER": (PICK_JOKER, C.NUM_CARDS), "DISCARD": (DISCARD, NUM_IDS)}
_NUMBER_ACTIONS = {"TAKE_DISCARD": (TAKE_DISCARD, MAX_PILE), "LAY_OFF": (LAY_OFF, MAX_MELDS),
                   "LAY_OFF_HIGH": (LAY_OFF_HIGH, MAX_MELDS)}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``TAKE_DISCARD(2)``, ``PICK_JOKER(7H)``, ``LAY_OFF_HIGH(0)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    for name, (start, size) in (_NUMBER_ACTIONS | _CARD_ACTIONS).items():
        if start <= action < start + size:
            arg = action - start
            return f"{name}({C.format_card(arg) if name in _CARD_ACTIONS else arg})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    found = read_action_name(text, _SIMPLE_IDS)
    if isinstance(found, int):
        return found
    head, arg = found
    if head in _CARD_ACTIONS:
        start, size = _CARD_ACTIONS[head]
        card = C.parse_card(arg)
        if card >= size:
            raise ValueError(f"cannot parse action {text!r}: {head} takes a card, not a joker")
        return start + card
    if head in _NUMBER_ACTIONS and arg.isdigit() and int(arg) < _NUMBER_ACTIONS[head][1]:
        return _NUMBER_ACTIONS[head][0] + int(arg)
    raise ValueError(f"cannot parse action {text!r}")
