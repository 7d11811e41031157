"""The decision points of a gin hand and its actions: the ``Phase`` enum, the action ids
(named offsets of one ``Discrete`` space) and their names (docs/gin_rummy.md#actions)."""

from __future__ import annotations

from enum import IntEnum

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.base import read_action_name

NUM_PLAYERS = 2
HAND_SIZE = 10
MAX_KNOCKER_MELDS = 3  # 10 or 11 cards never hold 4 disjoint melds


class Phase(IntEnum):
    """Decision points of a gin hand; GAME_OVER ends the episode (hand or match)
    (docs/gin_rummy.md#turn-phases)."""

    OFFER_ND = 0
    OFFER_D = 1
    FORCED_DRAW = 2
    DRAW = 3
    DISCARD = 4
    LAST_CHANCE = 5
    KNOCKER_MELD = 6
    DEFENDER_MELD = 7
    LAYOFF = 8
    GAME_OVER = 9


DRAW_STOCK = 0
TAKE_DISCARD = 1  # also takes the upcard in the offer phases and the 50th card
PASS = 2
DONE = 3  # ends a meld declaration or the layoffs
BIG_GIN = 4
DISCARD = 5  # DISCARD + card
KNOCK = DISCARD + C.NUM_CARDS  # KNOCK + card
MELD = KNOCK + C.NUM_CARDS  # MELD + meld index (rummy_envs.melds.MELDS)
LAYOFF = MELD + M.NUM_MELDS  # LAYOFF + slot * 52 + card, slot = knocker meld 0..2
NUM_ACTIONS = LAYOFF + MAX_KNOCKER_MELDS * C.NUM_CARDS
_SIMPLE_NAMES = {DRAW_STOCK: "DRAW_STOCK", TAKE_DISCARD: "TAKE_DISCARD", PASS: "PASS", DONE: "DONE", BIG_GIN: "BIG_GIN"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()} | {"TAKE_UPCARD": TAKE_DISCARD}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``DISCARD(TH)``, ``MELD(7S 7H 7D)``, ``LAYOFF(5H,1)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    if DISCARD <= action < KNOCK:
        return f"DISCARD({C.format_card(action - DISCARD)})"
    if KNOCK <= action < MELD:
        return f"KNOCK({C.format_card(action - KNOCK)})"
    if MELD <= action < LAYOFF:
        return f"MELD({C.format(M.MELD_CARDS[action - MELD])})"
    if LAYOFF <= action < NUM_ACTIONS:
        slot, card = divmod(action - LAYOFF, C.NUM_CARDS)
        return f"LAYOFF({C.format_card(card)},{slot})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    found = read_action_name(text, _SIMPLE_IDS)
    if isinstance(found, int):
        return found
    head, args = found
    if head in ("DISCARD", "KNOCK"):
        return (DISCARD if head == "DISCARD" else KNOCK) + C.parse_card(args)
    if head == "MELD":
        spaced = text[text.index("(") + 1 : text.rindex(")")]
        mask = C.to_mask(C.parse(spaced))
        if mask not in M.MELD_INDEX:
            raise ValueError(f"{spaced!r} is not a meld of the meld table (sets, runs of 3-5)")
        return MELD + M.MELD_INDEX[mask]
    if head == "LAYOFF":
        card, _, slot = args.partition(",")
        if slot not in ("0", "1", "2"):
            raise ValueError(f"cannot parse action {text!r}: slot must be 0, 1 or 2")
        return LAYOFF + int(slot) * C.NUM_CARDS + C.parse_card(card)
    raise ValueError(f"cannot parse action {text!r}")
