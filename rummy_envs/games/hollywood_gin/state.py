"""``HollywoodState``: the gin engine, hand for hand, with the scoresheet as its match score
(docs/hollywood_gin.md)."""

from __future__ import annotations

from typing import ClassVar

from rummy_envs.games.gin_rummy import GinState
from rummy_envs.games.hollywood_gin.options import HollywoodConfig
from rummy_envs.games.hollywood_gin.scoresheet import Scoresheet
from rummy_envs.games.hollywood_gin.view import HollywoodView


class HollywoodState(GinState):
    """A Hollywood Gin game: the gin engine with a ``Scoresheet`` as its match score and the
    sheet in every seat's view."""

    config_class: ClassVar[type[HollywoodConfig]] = HollywoodConfig
    match_class: ClassVar[type[Scoresheet]] = Scoresheet
    view_class: ClassVar[type[HollywoodView]] = HollywoodView
    config: HollywoodConfig
    match: Scoresheet
