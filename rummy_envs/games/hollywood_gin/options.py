"""The rules options of Hollywood Gin (docs/hollywood_gin.md#options): gin's, with
Hollywood's defaults, plus the scoresheet's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rummy_envs.games.gin_rummy import GinConfig
from rummy_envs.options import check_bool, check_choice


@dataclass(frozen=True)
class HollywoodConfig(GinConfig):
    """Gin's options with Hollywood's defaults, plus the sheet's; every player knows them."""

    game: ClassVar[str] = "hollywood_gin"
    undercut_bonus: int = 10
    next_dealer: str = "winner"
    column_bonuses: bool = True
    match_winner_rule: str = "games_won"
    continuous: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_bool("column_bonuses", self.column_bonuses)
        check_choice("match_winner_rule", self.match_winner_rule, ("games_won", "total_points"))
        check_bool("continuous", self.continuous)
        if self.boxes_count_toward_target:
            raise ValueError("option boxes_count_toward_target=True is invalid for Hollywood: boxes are settled per column")
        if self.continuous:
            raise ValueError("option continuous=True is invalid: continuous Hollywood (a 4th column) is not supported")
