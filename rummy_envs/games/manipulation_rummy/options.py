"""The rules options of Manipulation Rummy (docs/manipulation_rummy.md#options)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs.options import build, check_choice, check_int

GAME = "manipulation_rummy"


@dataclass(frozen=True)
class ManipulationConfig(C.MultiDeckDeal):
    """The rules options, plus the episode length. ``None`` for ``num_decks`` /
    ``num_jokers`` means the default for the number of players: one deck and one joker for
    two players, two decks and two jokers for 3-5."""

    game: ClassVar[str] = GAME
    num_players: int = 3
    num_decks: int | None = None
    num_jokers: int | None = None
    knock_timing: str = "end_of_turn"
    knock_limit: int = 5
    max_draws: int = 3
    stock_out_trigger: str = "required_draw"
    stock_out_bonus: int = 0
    joker_identity_limit: str = "num_decks"
    out_bonus: int = 25
    not_knocker_bonus: int = 10
    game_bonus: int = 100
    target_score: int = 150
    round_win_bonus: int = 25
    next_dealer: str = "left"
    tie_break: str = "share"
    max_rounds: int = 100
    max_table_ops_per_turn: int = 64
    episode: str = "hand"

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, 2, 5)
        if self.num_decks is not None:
            check_int("num_decks", self.num_decks, 1, 2)
        if self.num_jokers is not None:
            check_int("num_jokers", self.num_jokers, 0, 4)
        check_choice("knock_timing", self.knock_timing, ("end_of_turn", "start_of_turn"))
        check_int("knock_limit", self.knock_limit, 0)
        check_int("max_draws", self.max_draws, 1)
        check_choice("stock_out_trigger", self.stock_out_trigger, ("required_draw", "last_card_drawn"))
        check_choice("joker_identity_limit", self.joker_identity_limit, ("num_decks", "none"))
        for name in ("stock_out_bonus", "out_bonus", "not_knocker_bonus", "game_bonus", "round_win_bonus"):
            check_int(name, getattr(self, name), 0)
        check_int("target_score", self.target_score, 1)
        check_choice("next_dealer", self.next_dealer, ("left", "winner", "loser"))
        check_choice("tie_break", self.tie_break, ("share", "play_on"))
        check_int("max_rounds", self.max_rounds, 1)
        check_int("max_table_ops_per_turn", self.max_table_ops_per_turn, 1)
        check_choice("episode", self.episode, ("hand", "match"))

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ManipulationConfig:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    @property
    def decks(self) -> int:
        """Decks in play: ``num_decks``, else one for two players and two for 3-5."""
        return self.num_decks if self.num_decks is not None else (1 if self.num_players == 2 else 2)

    @property
    def total_jokers(self) -> int:
        """Jokers in play: ``num_jokers``, else one per deck."""
        return self.num_jokers if self.num_jokers is not None else self.decks

    @property
    def identity_limit(self) -> int | None:
        """Most cards one identity may have on the table (the solver's ``max_copies``)."""
        return self.decks if self.joker_identity_limit == "num_decks" else None
