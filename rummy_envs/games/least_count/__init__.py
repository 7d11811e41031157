"""Least Count ("Least Score", 2-10 players): the pure rules engine. docs/least_count.md
states the rules; its section "Where the rules live in the code" points at each function.

Where to look:
- ``rules.py``: the options (``LeastCountConfig``, ``DiscardRules``), card values, the
  phases and action ids with their names, which cards may be discarded together
  (``is_legal_discard``, ``legal_discards``), and the deal order.
- ``scoring.py``: the round's points (``score_round``), eliminations and the match end
  (``match_after_round``), and the ``RoundResult`` each round records.
- ``state.py``: ``LeastCountState``, the game in progress (the deal, what each phase
  offers and what each action does, the showdown, views, clones, determinizations and
  ``sample_from_view``), its per-seat ``LeastCountView``, and ``replay``.
- ``state_dict.py``: the state dict, written by ``to_dict`` and read and checked by
  ``from_dict``.
- ``fast.py``: ``fast_legal_discards``, the fast path of ``legal_discards`` that
  ``legal_actions`` uses (a property test holds the two equal).
"""

from rummy_envs.games.least_count.rules import (
    DECLARE,
    DISCARD,
    FLUSH_SIZE,
    GAME,
    JOKER,
    JOKER_RANK,
    MAX_HAND,
    NUM_ACTIONS,
    NUM_IDS,
    PICK_CLOSED,
    PICK_OPEN,
    DiscardRules,
    LeastCountConfig,
    Phase,
    action_to_str,
    card_values,
    deal_order,
    discard_action,
    first_dealer,
    is_legal_discard,
    is_sequence,
    legal_discards,
    rank_of,
    str_to_action,
    subset_cards,
    takes_first_copies,
)
from rummy_envs.games.least_count.scoring import (
    MatchAfterRound,
    RoundResult,
    is_past_elimination,
    match_after_round,
    score_round,
)
from rummy_envs.games.least_count.state import LeastCountState, LeastCountView, replay

__all__ = [
    "DECLARE", "DISCARD", "FLUSH_SIZE", "GAME", "JOKER", "JOKER_RANK", "MAX_HAND", "NUM_ACTIONS", "NUM_IDS",
    "PICK_CLOSED", "PICK_OPEN", "DiscardRules", "LeastCountConfig", "LeastCountState", "LeastCountView",
    "MatchAfterRound", "Phase", "RoundResult", "action_to_str", "card_values", "deal_order", "discard_action",
    "first_dealer", "is_legal_discard", "is_past_elimination", "is_sequence", "legal_discards", "match_after_round",
    "rank_of", "replay", "score_round", "str_to_action", "subset_cards", "takes_first_copies",
]
