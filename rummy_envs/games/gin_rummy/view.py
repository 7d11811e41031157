"""``GinView``: what one seat of a gin game may see (docs/gin_rummy.md#player-view)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rummy_envs.games.gin_rummy.actions import Phase
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.scoring import HandResult


@dataclass(frozen=True)
class GinView:
    """Exactly what one player may see: for rule-based agents, search, humans and the
    observation. Seats are relative: index 0 of a pair is this player, 1 the opponent;
    cards are ids.

    It holds the hand, the discard pile and every discard, the opponent's cards it took from
    the pile, the sizes of the hidden zones, the opening offer, the hand's stakes, the
    showdown as far as this player may see it, the match score, the results of the hands
    played and the rules options: all a state needs to be rebuilt around it
    (``GinState.sample_from_view``). ``hand_results`` shares the engine's records, which
    are never changed once written: read them, do not change them."""

    player: int
    phase: Phase
    is_my_turn: bool
    hand: tuple[int, ...]
    top_discard: int | None
    discard_pile: tuple[int, ...]
    discarded: tuple[tuple[int, ...], tuple[int, ...]]
    opponent_known: tuple[int, ...]  # the opponent's cards taken from the pile, not discarded since
    opponent_hand_size: int
    stock_size: int
    is_dealer: bool
    upcard_passed: tuple[bool, bool]  # (non-dealer passed, dealer passed)
    knock_limit: int
    multiplier: int
    taken_card: int | None  # the card I took from the pile this turn (banned from my discard)
    knocker: int | None  # 0 me, 1 the opponent
    knocker_melds: tuple[tuple[int, ...], ...]
    knocker_deadwood: tuple[int, ...]
    my_melds: tuple[tuple[int, ...], ...]
    layoffs: tuple[tuple[int, int], ...]
    scores: tuple[int, int]
    hands_won: tuple[int, int]
    legal_actions: tuple[int, ...]
    hand_index: int  # the hand of the match in play, from 0
    upcard: int  # this hand's upcard (Oklahoma: it set the knock limit)
    turns: int  # turns finished this hand (plain discards)
    my_known: tuple[int, ...]  # my cards the opponent saw me take from the pile
    opponent_taken_card: int | None  # the card the opponent took from the pile this turn
    knock_card: int | None  # my face-down knock card, once I knocked with one
    # every finished hand's result, in order (left out of the hash: a result holds lists)
    hand_results: tuple[HandResult, ...] = field(hash=False)
    rules: GinConfig
