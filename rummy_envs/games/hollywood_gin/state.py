"""``HollywoodState``: the gin engine, hand for hand, with the scoresheet as its match score
(docs/hollywood_gin.md)."""

from __future__ import annotations

from typing import ClassVar

from rummy_envs.games.gin_rummy import GinState
from rummy_envs.games.gin_rummy.scoring import hand_points_bound
from rummy_envs.games.gin_rummy.state import game_score_bound
from rummy_envs.games.hollywood_gin.options import HollywoodConfig
from rummy_envs.games.hollywood_gin.scoresheet import NUM_COLUMNS, Scoresheet
from rummy_envs.games.hollywood_gin.view import HollywoodView


class HollywoodState(GinState):
    """A Hollywood Gin game: the gin engine with a ``Scoresheet`` as its match score and the
    sheet in every seat's view."""

    config_class: ClassVar[type[HollywoodConfig]] = HollywoodConfig
    match_class: ClassVar[type[Scoresheet]] = Scoresheet
    view_class: ClassVar[type[HollywoodView]] = HollywoodView
    config: HollywoodConfig
    match: Scoresheet

    @classmethod
    def max_score(cls, config: HollywoodConfig) -> int:  # type: ignore[override]
        """The most any seat's ``scores()`` can be in a game under ``config`` dealt from the
        start; gin's for one hand. A match scores the sum of three columns, each a game to
        ``target_score`` that a won hand enters with all its points: raw points under the
        target while open, at most the target less one plus a hand once closed, settled like
        a gin match with ``column_bonuses`` (``game_score_bound``; the hands recorded in a
        column are bounded as a match's hands won). With the defaults 3 x 3044: 99 one-point
        wins then a gin against 98, recorded in every column, come within 1% of it."""
        if config.episode == "hand":
            return super().max_score(config)
        raw = config.target_score - 1 + hand_points_bound(config)
        return NUM_COLUMNS * (game_score_bound(config) if config.column_bonuses else raw)
