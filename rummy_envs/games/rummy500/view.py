"""What one Rummy 500 player may see (docs/rummy500.md#player-view): ``Rummy500View``, built by
``Rummy500State.player_view`` on every agent step (so it is cheap: ints, tuples and the
state's own config and finished results), and from which ``Rummy500State.sample_from_view``
rebuilds a state."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy_envs.games.rummy500.actions import Phase
from rummy_envs.games.rummy500.options import Rummy500Config
from rummy_envs.games.rummy500.scoring import HandResult


@dataclass(frozen=True)
class MeldView:
    """One table meld as a player sees it; seats relative to the viewer (0 = me)."""

    is_set: bool
    cards: tuple[int, ...]  # identities in table order
    jokers: tuple[int, ...]  # the identities held by jokers
    credit: tuple[int, ...]  # seat credited with each card of ``cards``
    owner: int


@dataclass(frozen=True)
class Rummy500View:
    """Exactly what one player may see, seats relative (index 0 is this player; ``player`` is
    its absolute seat): its own hand; the pending group of the player to move; the spread
    discard pile; the stock's size and every hand's size; the cards each seat took from the
    pile or showed in a cancelled group and still holds; the table melds with each card's
    credited seat; the turn's target and banned card; the turn, hand and reshuffle counters;
    the match totals and, once over, the winners and whether a cap cut the episode; the
    finished hands' results (as the infos give them: seats absolute); the daily deal's date;
    the rules options; and, on its turn, its legal actions."""

    player: int
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None
    dealer: int
    hand: tuple[int, ...]
    pending: tuple[int, ...]  # natural cards in the pending group
    pending_jokers: tuple[int, ...]  # identities declared for jokers in it
    discard_pile: tuple[int, ...]  # bottom first
    stock_size: int
    hand_sizes: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]  # cards each seat took from the pile or showed, and still holds
    melds: tuple[MeldView, ...]
    target: int | None  # the card that must go on the table before the discard
    banned: int | None  # the card that may not be discarded this turn
    turns: int
    scores: tuple[int, ...]  # match totals
    hand_number: int
    reshuffles: int  # times the pile became the stock this hand
    # the finished hands of the episode, seats absolute (left out of the hash: a result holds lists)
    hand_results: tuple[HandResult, ...] = field(hash=False)
    winners: tuple[int, ...]  # the match winners once the match is over
    truncated: bool  # the episode ended at a cap
    daily_date: str | None  # the daily deal's date (deal_seed_mode="daily")
    rules: Rummy500Config  # the rules options, which every player knows
    legal_actions: tuple[int, ...]
