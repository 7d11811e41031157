"""``HollywoodView``: gin's view of one seat plus the scoresheet, which is public
(docs/hollywood_gin.md#player-view)."""

from __future__ import annotations

from dataclasses import dataclass

from rummy_envs.games.gin_rummy import GinView


@dataclass(frozen=True)
class HollywoodView(GinView):
    """What one seat may see of a Hollywood game: ``GinView`` (its ``scores`` are the raw
    points summed over the columns, ``hands_won`` every hand won) and the sheet, seats
    relative (index 0 is this player), one entry per column G1-G3."""

    column_scores: tuple[tuple[int, ...], tuple[int, ...]]  # each seat's raw points in each column
    columns_entered: tuple[tuple[bool, ...], tuple[bool, ...]]
    column_hands: tuple[tuple[int, ...], tuple[int, ...]]  # each seat's won hands recorded in each column
    column_winners: tuple[int | None, ...]  # None while open, 0 me, 1 the opponent
