"""gin_rummy: the rules engine of two-player Gin Rummy, standard and Oklahoma, pure Python over
card bitmasks (docs/gin_rummy.md states the rules; its section "Where the rules live in the
code" maps each rule to its function).

The modules, in the order they build on each other:

- ``actions``: the phases of a hand, the action ids and their names.
- ``options``: ``GinConfig``, the rules options.
- ``scoring``: a hand's stakes (the Oklahoma upcard), the points of a showdown, ``HandResult``.
- ``solvers``: the exact searches: deadwood, the best arrangement, the knock discards, the
  defender's best reply (``best_layoffs``) and the knocker's ``auto_best`` melds.
- ``view``: ``GinView``, what one seat may see.
- ``match``: ``StandardMatch``, the score of a match to the target, with its bonuses.
- ``rules``: the deal, what is legal in each phase and what each action does (``GinRules``).
- ``state_dict``: the state dict, written and read back with every check (``GinStateDict``).
- ``state``: ``GinState``, the game as the engine contract has it (apply, clone, views,
  ``sample_determinization``, ``sample_from_view``), and ``replay``.

Hollywood Gin (``rummy_envs.games.hollywood_gin``) is this engine with its own scoresheet.
"""

from rummy_envs.games.gin_rummy.actions import (BIG_GIN, DISCARD, DONE, DRAW_STOCK, HAND_SIZE, KNOCK, LAYOFF,
                                                MAX_KNOCKER_MELDS, MELD, NUM_ACTIONS, NUM_PLAYERS, PASS, TAKE_DISCARD,
                                                Phase, action_to_str, str_to_action)
from rummy_envs.games.gin_rummy.match import MATCH_KEYS, StandardMatch
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.rules import deck_for_hand
from rummy_envs.games.gin_rummy.scoring import HAND_KINDS, HandResult, hand_stakes, showdown_points
from rummy_envs.games.gin_rummy.solvers import best_arrangement, best_layoffs, deadwood, knock_discards
from rummy_envs.games.gin_rummy.state import GinState, replay
from rummy_envs.games.gin_rummy.state_dict import RESULT_KEYS, STATE_KEYS
from rummy_envs.games.gin_rummy.view import GinView

__all__ = [
    "BIG_GIN", "DISCARD", "DONE", "DRAW_STOCK", "HAND_KINDS", "HAND_SIZE", "KNOCK", "LAYOFF", "MATCH_KEYS",
    "MAX_KNOCKER_MELDS", "MELD", "NUM_ACTIONS", "NUM_PLAYERS", "PASS", "RESULT_KEYS", "STATE_KEYS", "TAKE_DISCARD",
    "GinConfig", "GinState", "GinView", "HandResult", "Phase", "StandardMatch",
    "action_to_str", "best_arrangement", "best_layoffs", "deadwood", "deck_for_hand", "hand_stakes",
    "knock_discards", "replay", "showdown_points", "str_to_action",
]
