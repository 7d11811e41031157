"""The rules options of Gin Rummy (docs/gin_rummy.md#options), checked when built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rummy_envs.games.gin_rummy.actions import NUM_PLAYERS
from rummy_envs.options import build, check_bool, check_choice, check_int


@dataclass(frozen=True)
class GinConfig:
    """The rules options, plus the episode length; every player knows them."""

    game: ClassVar[str] = "gin_rummy"
    num_players: ClassVar[int] = NUM_PLAYERS
    variant: str = "standard"
    knock_limit: int = 10
    gin_bonus: int = 25
    big_gin_bonus: int | None = None
    undercut_bonus: int = 25
    undercut_on_tie: bool = True
    allow_rediscard_taken_card: bool = False
    dead_stock_size: int = 2
    stock_end_rule: str = "dead"
    max_turns_per_hand: int = 200
    knocker_arrangement: str = "auto_best"
    layoff_mode: str = "auto_optimal"
    next_dealer: str = "alternate"
    episode: str = "hand"
    target_score: int = 100
    game_bonus: int = 100
    box_bonus: int = 25
    boxes_count_toward_target: bool = False
    shutout_rule: str = "double_points"
    max_hands_per_match: int = 200
    oklahoma_ace_gin_only: bool = True
    oklahoma_spade_double: bool = True

    def __post_init__(self) -> None:
        check_choice("variant", self.variant, ("standard", "oklahoma"))
        check_int("knock_limit", self.knock_limit, 0, 99)
        check_int("gin_bonus", self.gin_bonus, 0)
        if self.big_gin_bonus is not None:
            check_int("big_gin_bonus", self.big_gin_bonus, 0)
        check_int("undercut_bonus", self.undercut_bonus, 0)
        check_int("dead_stock_size", self.dead_stock_size, 0, 30)
        check_choice("stock_end_rule", self.stock_end_rule, ("dead", "opponent_last_chance"))
        check_int("max_turns_per_hand", self.max_turns_per_hand, 1)
        check_choice("knocker_arrangement", self.knocker_arrangement, ("auto_best", "explicit"))
        check_choice("layoff_mode", self.layoff_mode, ("auto_optimal", "explicit"))
        check_choice("next_dealer", self.next_dealer, ("alternate", "winner", "loser"))
        check_choice("episode", self.episode, ("hand", "match"))
        check_int("target_score", self.target_score, 1)
        check_int("game_bonus", self.game_bonus, 0)
        check_int("box_bonus", self.box_bonus, 0)
        check_choice("shutout_rule", self.shutout_rule, ("double_points", "double_game_bonus", "none"))
        check_int("max_hands_per_match", self.max_hands_per_match, 1)
        for name in ("undercut_on_tie", "allow_rediscard_taken_card", "boxes_count_toward_target",
                     "oklahoma_ace_gin_only", "oklahoma_spade_double"):
            check_bool(name, getattr(self, name))

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> GinConfig:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)
