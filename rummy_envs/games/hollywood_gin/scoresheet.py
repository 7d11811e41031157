"""Hollywood's scoresheet (docs/hollywood_gin.md#the-scoresheet): three columns played at
once, won hands recorded by the entry rule, columns closing at the target and each closed
column settled like a gin game. A small pure component, usable without any env; the state
keeps it as its match score (the methods of gin's ``StandardMatch``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rummy_envs.games.gin_rummy import NUM_PLAYERS, GinConfig, HandResult
from rummy_envs.games.hollywood_gin.options import HollywoodConfig
from rummy_envs.games.hollywood_gin.view import HollywoodView
from rummy_envs.state_dicts import Fields

NUM_COLUMNS = 3
SHEET_KEYS = ("score", "entered", "hands", "closed_by", "wins")


def _grid(value: Any = 0) -> list[list[Any]]:
    return [[value] * NUM_COLUMNS for _ in range(NUM_PLAYERS)]


@dataclass
class Scoresheet:
    """Three columns of a Hollywood match. ``score[p][c]``, ``entered[p][c]`` and
    ``hands[p][c]`` (hands won recorded in column c) per player; ``closed_by[c]`` is the
    column's winner, or -1 while it is open; ``wins[p]`` counts every hand p won."""

    score: list[list[int]] = field(default_factory=_grid)
    entered: list[list[bool]] = field(default_factory=lambda: _grid(False))
    hands: list[list[int]] = field(default_factory=_grid)
    closed_by: list[int] = field(default_factory=lambda: [-1] * NUM_COLUMNS)
    wins: list[int] = field(default_factory=lambda: [0] * NUM_PLAYERS)

    # -- recording ---------------------------------------------------------------------------
    def is_open(self, column: int) -> bool:
        return self.closed_by[column] < 0

    def record_win(self, player: int, points: int, target: int) -> None:
        """A won hand worth ``points``: enter the lowest open column not yet entered (at
        most one), add the points to every open column entered, close what reached ``target``."""
        self.wins[player] += 1
        row = self.entered[player]
        for c in range(NUM_COLUMNS):
            if self.is_open(c) and not row[c]:
                row[c] = True
                break
        for c in range(NUM_COLUMNS):
            if self.is_open(c) and row[c]:
                self.score[player][c] += points
                self.hands[player][c] += 1
        for c in range(NUM_COLUMNS):
            if self.is_open(c):
                for p in range(NUM_PLAYERS):
                    if self.score[p][c] >= target:
                        self.closed_by[c] = p

    def record(self, config: GinConfig, result: HandResult) -> None:
        """Match-score protocol of the gin engine: dead hands change nothing."""
        if result.winner >= 0:
            self.record_win(result.winner, result.points[result.winner], config.target_score)

    # -- results -----------------------------------------------------------------------------
    def is_over(self) -> bool:
        return all(w >= 0 for w in self.closed_by)

    def settle(self, column: int, config: HollywoodConfig) -> list[int]:
        """A column's totals: raw while open or without bonuses; once closed, with the game
        bonus, a box per hand recorded in it and the shutout rule, as a gin game."""
        raw = [self.score[p][column] for p in range(NUM_PLAYERS)]
        winner = self.closed_by[column]
        if winner < 0 or not config.column_bonuses:
            return raw
        loser = 1 - winner
        shutout = raw[loser] == 0
        if shutout and config.shutout_rule == "double_points":
            raw[winner] *= 2
        raw[winner] += config.game_bonus * (2 if shutout and config.shutout_rule == "double_game_bonus" else 1)
        for p in range(NUM_PLAYERS):
            raw[p] += config.box_bonus * self.hands[p][column]
        return raw

    def scores(self, config: HollywoodConfig) -> list[int]:
        """Each player's sum of the three columns (closed ones settled)."""
        columns = [self.settle(c, config) for c in range(NUM_COLUMNS)]
        return [sum(col[p] for col in columns) for p in range(NUM_PLAYERS)]

    def columns_won(self) -> list[int]:
        return [sum(1 for w in self.closed_by if w == p) for p in range(NUM_PLAYERS)]

    def standings(self, config: HollywoodConfig) -> list[int]:
        """Columns won (``games_won``) or settled points (``total_points``)."""
        return self.columns_won() if config.match_winner_rule == "games_won" else self.scores(config)

    def winner(self, config: HollywoodConfig) -> int:
        """The match winner by ``match_winner_rule``, or -1 on a tie."""
        first, second = self.standings(config)
        return 0 if first > second else 1 if second > first else -1

    @property
    def totals(self) -> list[int]:
        """Raw points over all columns, per player (what the gin view reports as scores)."""
        return [sum(row) for row in self.score]

    # -- what a seat sees of it, and back -------------------------------------------------------
    def view_fields(self, player: int) -> dict[str, Any]:
        """The view's fields of the sheet, ``player``'s row first: the raw totals, the hands
        won and every column (its winner as 0 for ``player``, 1 for the opponent)."""
        seats = (player, 1 - player)
        return {
            "scores": (sum(self.score[player]), sum(self.score[1 - player])),
            "hands_won": (self.wins[player], self.wins[1 - player]),
            "column_scores": tuple(tuple(self.score[p]) for p in seats),
            "columns_entered": tuple(tuple(self.entered[p]) for p in seats),
            "column_hands": tuple(tuple(self.hands[p]) for p in seats),
            "column_winners": tuple(None if w < 0 else seats.index(w) for w in self.closed_by),
        }

    @classmethod
    def from_view(cls, view: HollywoodView) -> Scoresheet:
        """The sheet a view shows, seats absolute again."""
        seats = (view.player, 1 - view.player)
        sheet = cls()
        for row, p in enumerate(seats):
            sheet.score[p] = list(view.column_scores[row])
            sheet.entered[p] = list(view.columns_entered[row])
            sheet.hands[p] = list(view.column_hands[row])
            sheet.wins[p] = view.hands_won[row]
        sheet.closed_by = [-1 if w is None else seats[w] for w in view.column_winners]
        return sheet

    # -- copies ------------------------------------------------------------------------------
    def clone(self) -> Scoresheet:
        return Scoresheet([list(r) for r in self.score], [list(r) for r in self.entered],
                          [list(r) for r in self.hands], list(self.closed_by), list(self.wins))

    def to_dict(self) -> dict[str, Any]:
        return {"score": [list(r) for r in self.score], "entered": [list(r) for r in self.entered],
                "hands": [list(r) for r in self.hands], "closed_by": list(self.closed_by), "wins": list(self.wins)}

    @classmethod
    def from_dict(cls, data: Any, path: str = "match") -> Scoresheet:
        """Read ``to_dict`` output; ValueError naming the entry of a wrong type or range."""
        fields = Fields(data, SHEET_KEYS, path)
        fresh = cls()
        return cls(
            score=fields.integer_grid("score", fresh.score, NUM_PLAYERS, NUM_COLUMNS, 0),
            entered=fields.boolean_grid("entered", fresh.entered, NUM_PLAYERS, NUM_COLUMNS),
            hands=fields.integer_grid("hands", fresh.hands, NUM_PLAYERS, NUM_COLUMNS, 0),
            closed_by=fields.integers("closed_by", fresh.closed_by, NUM_COLUMNS, -1, NUM_PLAYERS - 1,
                                      "the seat that closed each column, -1 while it is open"),
            wins=fields.integers("wins", fresh.wins, NUM_PLAYERS, 0),
        )

    def problem(self, config: HollywoodConfig) -> str:
        """What in this sheet contradicts the rules of ``config`` ("" if nothing): a column is
        closed exactly by the one player who reached the target in it, a player's column holds
        points and hands only once entered, and never more hands than that player won."""
        target = config.target_score
        for c in range(NUM_COLUMNS):
            reached = [p for p in range(NUM_PLAYERS) if self.score[p][c] >= target]
            if reached != ([self.closed_by[c]] if self.closed_by[c] >= 0 else []):
                return f"column {c} is closed exactly by the player whose score in it reached target_score={target}"
            for p in range(NUM_PLAYERS):
                if self.entered[p][c] != (self.hands[p][c] > 0) or (self.score[p][c] and not self.entered[p][c]):
                    return f"player {p} enters column {c} with a won hand, and has points or hands there only then"
                if self.hands[p][c] > self.wins[p]:
                    return f"player {p} has more hands in column {c} than hands won"
        return ""

    def holds(self, recorded: Scoresheet) -> bool:
        """Does this sheet include ``recorded`` (the sheet of some of its hands): at least as many
        hands won by each player? (Points are not compared: a sheet that started with closed
        columns adds a hand's points to fewer of them.)"""
        return all(self.wins[p] >= recorded.wins[p] for p in range(NUM_PLAYERS))

