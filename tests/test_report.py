"""Tournament outputs: the plots are drawn on plain matplotlib Figures (writing them never
switches the backend, so a notebook that runs a tournament keeps showing its figures
inline); ``results_long.csv`` has a row per agent per game."""

from __future__ import annotations

import csv
from pathlib import Path

import matplotlib
import pytest

from training.report import head_to_head_figure, markdown, ratings_figure, seat_rows, write_plots
from training.tournament import run

SUMMARY = {
    "config": {"game": "gin_rummy"},
    "ratings": [{"agent": "heuristic", "rating": 150.0, "low": 120.0, "high": 190.0},
                {"agent": "random", "rating": -150.0, "low": -190.0, "high": -120.0}],
    "pairings": [{"focal": "heuristic", "opponent": "random", "margin": {"mean": 12.5}},
                 {"focal": "random", "opponent": "heuristic", "margin": {"mean": -12.5}}],
}


def test_plots_leave_the_backend_alone(tmp_path):
    before = matplotlib.get_backend()
    matplotlib.use("template")  # a backend a notebook could have chosen, other than Agg
    try:
        paths = write_plots(tmp_path, SUMMARY)
        assert matplotlib.get_backend() == "template"
        assert [p.name for p in paths] == ["head_to_head.png", "ratings.png"]
        assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
    finally:
        matplotlib.use(before)


def test_figures_are_objects_a_notebook_can_show():
    heat, ratings = head_to_head_figure(SUMMARY), ratings_figure(SUMMARY)
    assert [t.get_text() for t in heat.axes[0].texts] == ["+12.5", "-12.5"]
    assert [label.get_text() for label in ratings.axes[0].get_xticklabels()] == ["heuristic", "random"]


def test_markdown_shows_ratings_on_the_elo_scale_with_their_interval():
    summary = {**SUMMARY, "games": 2, "config": {"game": "gin_rummy", "options": {}, "episode": "hand", "deals": 1,
                                                 "seed": 0},
               "pairings": [{**p, "games": 2, "margin": {**p["margin"], "low": None},
                             "win_rate": {"mean": 0.5, "low": 0.1, "high": 0.9, "n": 1}} for p in SUMMARY["pairings"]]}
    table = markdown(summary)
    assert "| # | agent | rating (Elo, 95% CI) |" in table
    assert "| 1 | heuristic | +150 [+120, +190] |" in table and "| 2 | random | -150 [-190, -120] |" in table


def test_seat_rows_of_a_known_game():
    """Four seats, two tied for second: places 2, 1, 2, 4 and won 1/2, 1, 1/2, 0."""
    record = {"game_id": 17, "game": "least_count", "deal": 3, "rotation": 2, "seats": ["o", "o", "f", "o"],
              "agents": ["novice", "novice", "heuristic", "novice"], "scores": [-5, 9, -5, -20],
              "standings": [5, 9, 5, 1], "rewards": [-0.5, 13.5, -0.5, -12.5]}
    rows = seat_rows(record)
    assert [r["place"] for r in rows] == [2, 1, 2, 4]
    assert [r["won"] for r in rows] == [0.5, 1.0, 0.5, 0.0]
    assert [r["focal"] for r in rows] == [False, False, True, False]
    assert rows[2] == {"game_id": 17, "game": "least_count", "deal": 3, "rotation": 2, "seat": 2, "label": "f",
                       "agent": "heuristic", "points": -5, "reward": -0.5, "place": 2, "won": 0.5, "focal": True}


@pytest.fixture(scope="module")
def tiny_tournament(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tournament")
    run({"game": "gin_rummy", "agents": {"mine": "novice", "theirs": "random"}, "deals": 3, "seed": 7,
         "plots": False, "output_dir": str(out)})
    return out


def test_long_results_have_a_row_per_agent_per_game(tiny_tournament):
    games = {int(r["game_id"]): r for r in csv.DictReader((tiny_tournament / "results.csv").open())}
    rows = list(csv.DictReader((tiny_tournament / "results_long.csv").open()))
    assert len(rows) == len(games) * 2 == 12
    for game_id, game in games.items():
        seats = sorted((r for r in rows if int(r["game_id"]) == game_id), key=lambda r: int(r["seat"]))
        assert [r["label"] for r in seats] == game["seats"].split()
        assert [r["agent"] for r in seats] == game["agents"].split()
        assert [float(r["points"]) for r in seats] == [float(v) for v in game["scores"].split()]
        assert sum(float(r["won"]) for r in seats) == 1.0
        [focal] = [r for r in seats if r["focal"] == "True"]
        assert focal["label"] == game["focal"] and float(focal["won"]) == float(game["focal_win"])


def test_long_results_group_by_label_in_pandas(tiny_tournament):
    pandas = pytest.importorskip("pandas")
    long = pandas.read_csv(tiny_tournament / "results_long.csv")
    by_label = long.groupby("label")["won"].agg(["count", "sum"])
    assert list(by_label["count"]) == [6, 6] and by_label["sum"].sum() == 6.0
    assert long["focal"].dtype == bool and long["place"].between(1, 2).all()
