"""The phases of a turn and the action ids: named offsets of one ``Discrete(266)`` space
(docs/manipulation_rummy.md#actions), with their readable names."""

from __future__ import annotations

from enum import IntEnum

from rummy_envs import cards as C
from rummy_envs.games.base import read_action_name
from rummy_envs.games.manipulation_rummy.counts import JOKER, NUM_CARDS


class Phase(IntEnum):
    """Decision points of a turn (the draws are automatic); GAME_OVER ends the episode."""

    TURN_START = 0  # knock_timing="start_of_turn": KNOCK, or DRAW to play the turn
    MELD = 1  # after a draw: the commit's placements, COMMIT, ABORT, or NO_MELD
    END_OF_TURN = 2  # knock_timing="end_of_turn": KNOCK or END_TURN
    GAME_OVER = 3


COMMIT = 0
ABORT = 1
NO_MELD = 2
KNOCK = 3
END_TURN = 4
DRAW = 5  # at TURN_START: do not knock, draw
PLACE = 6  # PLACE + c: the hand's natural c onto the table
JOKER_AS = PLACE + NUM_CARDS  # JOKER_AS + c: a hand joker onto the table declared as c
REPLACE_FROM_HAND = JOKER_AS + NUM_CARDS  # + c: the hand's natural c replaces a table joker at c
REPLACE_FROM_TABLE = REPLACE_FROM_HAND + NUM_CARDS  # + c: a table natural c replaces a table joker at c
FREED_AS = REPLACE_FROM_TABLE + NUM_CARDS  # + c: a freed joker onto the table declared as c
NUM_ACTIONS = FREED_AS + NUM_CARDS
_SIMPLE_NAMES = {COMMIT: "COMMIT", ABORT: "ABORT", NO_MELD: "NO_MELD", KNOCK: "KNOCK", END_TURN: "END_TURN",
                 DRAW: "DRAW"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()}
_CARD_ACTIONS = {"PLACE": PLACE, "JOKER_AS": JOKER_AS, "REPLACE_FROM_HAND": REPLACE_FROM_HAND,
                 "REPLACE_FROM_TABLE": REPLACE_FROM_TABLE, "FREED_AS": FREED_AS}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``COMMIT``, ``PLACE(7H)``, ``FREED_AS(4S)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    for name, start in _CARD_ACTIONS.items():
        if start <= action < start + NUM_CARDS:
            return f"{name}({C.format_card(action - start)})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    found = read_action_name(text, _SIMPLE_IDS)
    if isinstance(found, int):
        return found
    head, arg = found
    if head not in _CARD_ACTIONS:
        raise ValueError(f"cannot parse action {text!r}")
    card = C.parse_card(arg)
    if card == JOKER:
        raise ValueError(f"cannot parse action {text!r}: {head} takes a card identity, not a joker")
    return _CARD_ACTIONS[head] + card
