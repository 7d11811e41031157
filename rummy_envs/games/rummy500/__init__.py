"""Rummy 500 (2-8 players): the pure rules engine, over card ids and bitmasks
(docs/rummy500.md states the rules this engine plays).

The package, module by module; each imports only modules above it in this list:

- ``actions``: the phases of a turn, the action ids (named offsets of one ``Discrete``
  space) and their readable names (``action_to_str``, ``str_to_action``).
- ``options``: ``Rummy500Config``, the rules options, checked when built.
- ``melds``: card values, a hand as a multiset ``[once, twice, jokers]``, the table's
  ``Meld`` and ``classify`` (what makes a new meld).
- ``scoring``: ``HandResult``, the points of the table and of a hand, each seat's score and
  the match's winners.
- ``rules``: ``Rummy500Rules``, the rules as methods of the state: the deal, the legal
  actions of each phase (the meld search; the deep discard take in ``_may_take_discard``),
  what each action does, and the end of a hand.
- ``view``: ``Rummy500View``, exactly what one seat may see.
- ``dict_checks``: ``Rummy500DictChecks``, the checks that a state read from a dict is one
  the rules can reach (the turn, the hand so far, a finished game's last hand, the match).
- ``state_dict``: writing and reading the versioned state dict, each meld's owner and each
  hand result checked as read, then ``dict_checks``.
- ``state``: ``Rummy500State`` (the engine contract of ``rummy_envs.games.base``: apply,
  clone, views, determinizations, ``sample_from_view``) and ``replay``.
"""

from rummy_envs.games.rummy500.actions import (CANCEL, DISCARD, DRAW_STOCK, END_HAND, JOKER, LAY_OFF, LAY_OFF_HIGH,
                                               MAX_MELDS, MAX_PILE, MELD_NEW, NUM_ACTIONS, NUM_IDS, PICK, PICK_JOKER,
                                               TAKE_DISCARD, Phase, action_to_str, str_to_action)
from rummy_envs.games.rummy500.melds import (RANK_POINTS, Meld, classify, classify_ordered, mask_points, multiset,
                                             multiset_cards)
from rummy_envs.games.rummy500.options import GAME, Rummy500Config
from rummy_envs.games.rummy500.rules import deck_for_hand, today_utc
from rummy_envs.games.rummy500.scoring import HandResult
from rummy_envs.games.rummy500.state import DETERMINIZATION_TRIES, Rummy500State, replay
from rummy_envs.games.rummy500.state_dict import HAND_KINDS, MELD_KEYS, RESULT_KEYS, STATE_KEYS
from rummy_envs.games.rummy500.view import MeldView, Rummy500View

__all__ = [
    "CANCEL", "DETERMINIZATION_TRIES", "DISCARD", "DRAW_STOCK", "END_HAND", "GAME", "HAND_KINDS", "JOKER", "LAY_OFF",
    "LAY_OFF_HIGH", "MAX_MELDS", "MAX_PILE", "MELD_KEYS", "MELD_NEW", "NUM_ACTIONS", "NUM_IDS", "PICK", "PICK_JOKER",
    "RANK_POINTS", "RESULT_KEYS", "STATE_KEYS", "TAKE_DISCARD", "HandResult", "Meld", "MeldView", "Phase",
    "Rummy500Config", "Rummy500State", "Rummy500View", "action_to_str", "classify", "classify_ordered",
    "deck_for_hand", "mask_points", "multiset", "multiset_cards", "replay", "str_to_action", "today_utc",
]
