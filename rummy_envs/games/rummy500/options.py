"""Rummy 500's rules options (docs/rummy500.md#options): one frozen dataclass, checked when it
is built, with the deck arithmetic that follows from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs.options import build, check_bool, check_choice, check_date, check_int, check_text

GAME = "rummy500"


@dataclass(frozen=True)
class Rummy500Config(C.MultiDeckDeal):
    """The rules options, plus the episode length and the daily deal's date. ``None`` for
    ``hand_size`` / ``num_decks`` means the usual value for the number of players
    (docs/rummy500.md#the-deal)."""

    game: ClassVar[str] = GAME
    num_players: int = 2
    hand_size: int | None = None
    num_decks: int | None = None
    num_jokers: int = 0
    joker_value: int = 15
    top_discard_must_be_used: bool = False
    target_use_timing: str = "first_table_action"
    allow_rediscard_taken_card: bool = False
    must_discard_to_go_out: bool = False
    layoff_credit: str = "layer"
    stock_end_rule: str = "end_on_decline"
    max_turns_per_hand: int = 300
    out_bonus: int = 0
    episode: str = "hand"
    target_score: int = 500
    tie_break: str = "play_on"
    max_hands: int = 100
    deal_seed_mode: str = "random"
    daily_date: str | None = None
    daily_salt: str = ""

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, 2, 8)
        if self.num_decks is not None:
            check_int("num_decks", self.num_decks, 1, 2)
        check_int("num_jokers", self.num_jokers, 0, 2)
        if self.hand_size is not None:
            check_int("hand_size", self.hand_size, 1)
            if self.num_players * self.hand_size + 1 > self.deck_size:
                raise ValueError(f"option hand_size={self.hand_size!r} is invalid: {self.num_players} hands of "
                                 f"{self.hand_size} and the first discard need more than the {self.deck_size} cards")
        check_int("joker_value", self.joker_value, 0)
        check_choice("target_use_timing", self.target_use_timing, ("first_table_action", "anytime_before_discard"))
        check_choice("layoff_credit", self.layoff_credit, ("layer", "meld_owner"))
        check_choice("stock_end_rule", self.stock_end_rule, ("end_on_decline", "reshuffle_discards"))
        check_int("max_turns_per_hand", self.max_turns_per_hand, 1)
        check_int("out_bonus", self.out_bonus, 0)
        check_choice("episode", self.episode, ("hand", "match"))
        check_int("target_score", self.target_score, 1)
        check_choice("tie_break", self.tie_break, ("play_on", "share"))
        check_int("max_hands", self.max_hands, 1)
        check_choice("deal_seed_mode", self.deal_seed_mode, ("random", "daily"))
        if self.daily_date is not None:
            check_date("daily_date", self.daily_date)
        check_text("daily_salt", self.daily_salt, forbidden="|")
        for name in ("top_discard_must_be_used", "allow_rediscard_taken_card", "must_discard_to_go_out"):
            check_bool(name, getattr(self, name))
        if self.num_players * self.cards_per_hand + 1 > self.deck_size:
            raise ValueError(f"option num_decks={self.num_decks!r} is invalid: {self.num_players} hands of "
                             f"{self.cards_per_hand} need more than the {self.deck_size} cards")
        if self.stock_end_rule == "reshuffle_discards" and self.num_players * self.cards_per_hand + 1 == self.deck_size:
            raise ValueError(f"option stock_end_rule='reshuffle_discards' is invalid with {self.num_players} hands of "
                             f"{self.cards_per_hand} from {self.deck_size} cards: the deal leaves no stock and a pile "
                             "of one card, too few to reshuffle, so every hand would end at its deal (use a smaller "
                             "hand_size or end_on_decline)")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Rummy500Config:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    @property
    def decks(self) -> int:
        """Decks in play: ``num_decks``, else one for 2-4 players and two for 5 or more."""
        return self.num_decks if self.num_decks is not None else (1 if self.num_players <= 4 else 2)

    @property
    def cards_per_hand(self) -> int:
        """Cards dealt to each player: ``hand_size``, else 13 with two players and 7 with more."""
        return self.hand_size if self.hand_size is not None else (13 if self.num_players == 2 else 7)

    @property
    def total_jokers(self) -> int:
        return self.num_jokers * self.decks
