"""hollywood_gin_v0: Gin Rummy hands scored on Hollywood's three-column sheet."""

from __future__ import annotations

from typing import Any

import numpy as np

from rummy_envs.envs.gin_rummy import GinRummyEnv
from rummy_envs.games.hollywood_gin import NUM_COLUMNS, HollywoodState

_COLS = 2 * NUM_COLUMNS


class HollywoodGinEnv(GinRummyEnv):
    """Hollywood Gin as an AEC environment: gin's observation, actions and options, with
    Hollywood's defaults, plus the scoresheet (docs/hollywood_gin.md#observation)."""

    metadata = {"name": "hollywood_gin_v0", "render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    state_class = HollywoodState

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._sheet_start = self._off["sheet_scores"]

    def _score_parts(self) -> list[tuple[str, int, float, str]]:
        """The sheet, in both episode modes; per column, my value then the opponent's."""
        return [
            ("sheet_scores", _COLS, np.inf, "score in columns G1-G3 / target: mine (3), then the opponent's (3)"),
            ("sheet_entered", _COLS, 1.0, "columns entered: mine (3), then the opponent's (3)"),
            ("sheet_closed", NUM_COLUMNS, 1.0, "1 for each closed column G1-G3"),
            ("sheet_column_won", _COLS, 1.0, "closed columns won: by me (3), by the opponent (3)"),
            ("sheet_hands_won", _COLS, np.inf, "hands won recorded per column / 10: mine (3), then the opponent's (3)"),
        ]

    def _write_scores(self, obs: np.ndarray, player: int) -> None:
        sheet = self.game.match
        target, cols = self.config.target_score, range(NUM_COLUMNS)
        mine, theirs = player, 1 - player
        # The five sheet segments are contiguous: one list, one slice assignment.
        values = [sheet.score[p][c] / target for p in (mine, theirs) for c in cols]
        values += [sheet.entered[p][c] for p in (mine, theirs) for c in cols]
        values += [w >= 0 for w in sheet.closed_by]
        values += [w == p for p in (mine, theirs) for w in sheet.closed_by]
        values += [sheet.hands[p][c] / 10.0 for p in (mine, theirs) for c in cols]
        obs[self._sheet_start : self._sheet_start + len(values)] = values

    def _hand_info(self, player: int) -> dict[str, Any]:
        info = super()._hand_info(player)
        sheet = self.game.match
        info["sheet"] = sheet.to_dict()
        info["column_totals"] = [sheet.settle(c, self.config) for c in range(NUM_COLUMNS)]
        match_over = self.config.episode == "match" and self.game.is_terminal()
        info["match_winner"] = sheet.winner(self.config) if match_over else None
        return info

    def _frame_score_line_count(self) -> int:
        return 3

    def _frame_score_lines(self, view: Any, me: int) -> list[str]:
        """The scoresheet: each player's three column scores (* entered), and who closed each."""
        def ordered(pair: tuple) -> tuple:
            return pair if me == 0 else pair[::-1]
        lines = []
        for q, (scores, entered) in enumerate(zip(ordered(view.column_scores), ordered(view.columns_entered))):
            cells = "  ".join(f"G{c + 1} {score}{'*' if on else ''}" for c, (score, on) in enumerate(zip(scores, entered)))
            lines.append(f"sheet player_{q}: {cells}")
        closed = [w if w is None else (me if w == 0 else 1 - me) for w in view.column_winners]
        lines.append("closed by: " + "  ".join(f"G{c + 1} {'-' if w is None else f'player_{w}'}" for c, w in enumerate(closed)))
        return lines

    def _score_lines(self) -> list[str]:
        sheet = self.game.match
        lines = ["   sheet      G1    G2    G3   (* entered, [closed by])"]
        for p in range(2):
            cells = [f"{sheet.score[p][c]:>4}{'*' if sheet.entered[p][c] else ' '}" for c in range(NUM_COLUMNS)]
            lines.append(f"   player_{p} " + " ".join(cells))
        lines.append("   closed by: " + " ".join(f"G{c + 1}:{'-' if w < 0 else f'player_{w}'}" for c, w in enumerate(sheet.closed_by)))
        return lines
