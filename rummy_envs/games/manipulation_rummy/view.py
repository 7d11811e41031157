"""What one seat of Manipulation Rummy may see (docs/manipulation_rummy.md#player-view)."""

from __future__ import annotations

from dataclasses import dataclass

from rummy_envs.games.manipulation_rummy.actions import Phase
from rummy_envs.games.manipulation_rummy.options import ManipulationConfig


@dataclass(frozen=True)
class ManipulationView:
    """Exactly what one player may see, seats relative (index 0 is this player): its own
    hand; the whole table (every identity on it, which of them jokers hold, and the table
    as last committed, arranged); the commit in progress, which everybody watches; every
    hand's size and the cards each hand is known to hold (shown in a commit and taken back
    with ABORT, counted in the hand as its commit began for the player in a commit) and
    whether each hand was within ``knock_limit`` as its last turn ended (the knock was
    offered or not), the stock's size, the scores and rounds won; the turn (phase, seat to
    move, draws); its legal actions when it is to move; and the rules options (``rules``).
    Nothing in it depends on a card hidden from the player, so ``sample_from_view`` can
    rebuild a whole state from it."""

    player: int  # absolute seat
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None  # the seat to move, relative; None once the game is over
    dealer: int  # relative seat
    hand: tuple[int, ...]  # sorted ids, copies repeated, jokers (52) last
    hand_value: int
    table: tuple[int, ...]  # identities on the table now (naturals and declared jokers), sorted
    table_jokers: tuple[int, ...]  # identities held by jokers on the table now
    arrangement: tuple[tuple[int, ...], ...]  # the table as last committed, as legal groups and sequences
    placed: tuple[int, ...]  # cards the player to move has put on the table from its hand in this commit
    spare_naturals: tuple[int, ...]  # table naturals that may still replace a joker in this commit
    freed_jokers: int  # freed jokers waiting to be placed
    draws: int  # draws of the player to move this turn
    table_ops: int  # placements in the commit in progress (0: no commit in progress)
    hand_sizes: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]  # cards each seat took back with ABORT (as its commit began, for the mover)
    limit_seen: tuple[str | None, ...]  # each hand "within" or "above" knock_limit as its turn ended, until it draws
    stock_size: int
    scores: tuple[int, ...]  # match totals (final totals once a match is over)
    rounds_won: tuple[int, ...]
    round_number: int  # from 1
    legal_actions: tuple[int, ...]  # empty unless is_my_turn
    rules: ManipulationConfig  # the rules options, which every player knows
