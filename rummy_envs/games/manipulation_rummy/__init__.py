"""Manipulation Rummy (Carousel), 2-5 players: the rules engine (docs/manipulation_rummy.md).

A map of the package, rules first:
- ``options``: ``ManipulationConfig``, the rules options.
- ``counts``: cards as count lists (hands of 53, the table as two lists of 52), card values.
- ``actions``: the phases of a turn, the action ids and their names.
- ``commit``: the meld commit as card counts (``CommitProblem``, ``after``) and, stated
  plainly, when a table is legal (``table_is_legal``) and when a commit may end with
  COMMIT (``commit_is_legal``, the commit rule).
- ``rules``: the turn: the deal, the automatic draws, what is legal in each phase
  (``_compute_legal``), what each action does (``_place``, ``_commit``, ``_abort``) and
  how a round ends (``_end_round``).
- ``scoring``: round winners and points, the match bonuses, ``RoundResult``.
- ``table_solver`` (with ``solver_steps``, ``solver_moves``, ``solver_layers``): the exact
  solver the rules ask which placements keep a legal COMMIT reachable, and how to arrange
  a legal table (docs/table_solver.md).
- ``view``: ``ManipulationView``, what one seat may see.
- ``state``: ``ManipulationState``, the data, ``apply`` and the search API; ``replay``.
- ``state_dict``: writing and reading (checking) the state dict; ``match_checks``: its
  checks of the match's summaries against the rounds played.
- ``sampling``: a whole state from one seat's view (``sample_from_view``).
"""

from rummy_envs.games.manipulation_rummy.actions import (
    ABORT,
    COMMIT,
    DRAW,
    END_TURN,
    FREED_AS,
    JOKER_AS,
    KNOCK,
    NO_MELD,
    NUM_ACTIONS,
    PLACE,
    REPLACE_FROM_HAND,
    REPLACE_FROM_TABLE,
    Phase,
    action_to_str,
    str_to_action,
)
from rummy_envs.games.manipulation_rummy.commit import (
    CommitOptions,
    CommitProblem,
    commit_is_legal,
    is_meld,
    table_is_legal,
)
from rummy_envs.games.manipulation_rummy.counts import (
    CARD_VALUES,
    HAND_SIZE,
    JOKER,
    JOKER_VALUE,
    NUM_CARDS,
    NUM_IDS,
    cards_of,
    counts_of,
    hand_value,
)
from rummy_envs.games.manipulation_rummy.options import GAME, ManipulationConfig
from rummy_envs.games.manipulation_rummy.rules import round_deck
from rummy_envs.games.manipulation_rummy.sampling import DETERMINIZATION_TRIES
from rummy_envs.games.manipulation_rummy.scoring import (
    ROUND_KINDS,
    RoundResult,
    match_final_totals,
    round_points,
    round_winners,
)
from rummy_envs.games.manipulation_rummy.state import ManipulationState, replay
from rummy_envs.games.manipulation_rummy.state_dict import COMMIT_KEYS, RESULT_KEYS, STATE_KEYS
from rummy_envs.games.manipulation_rummy.view import ManipulationView

__all__ = [
    "ABORT", "CARD_VALUES", "COMMIT", "COMMIT_KEYS", "DETERMINIZATION_TRIES", "DRAW", "END_TURN", "FREED_AS", "GAME",
    "HAND_SIZE", "JOKER", "JOKER_AS", "JOKER_VALUE", "KNOCK", "NO_MELD", "NUM_ACTIONS", "NUM_CARDS", "NUM_IDS", "PLACE",
    "REPLACE_FROM_HAND", "REPLACE_FROM_TABLE", "RESULT_KEYS", "ROUND_KINDS", "STATE_KEYS",
    "CommitOptions", "CommitProblem", "ManipulationConfig", "ManipulationState", "ManipulationView", "Phase",
    "RoundResult",
    "action_to_str", "cards_of", "commit_is_legal", "counts_of", "hand_value", "is_meld", "match_final_totals",
    "replay", "round_deck", "round_points", "round_winners", "str_to_action", "table_is_legal",
]
