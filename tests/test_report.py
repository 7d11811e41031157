"""Tournament plots are drawn on plain matplotlib Figures: writing them never switches the
backend, so a notebook that runs a tournament keeps showing its figures inline."""

from __future__ import annotations

import matplotlib

from training.report import head_to_head_figure, ratings_figure, write_plots

SUMMARY = {
    "config": {"game": "gin_rummy"},
    "ratings": [{"agent": "heuristic", "mu": 27.0, "sigma": 1.0}, {"agent": "random", "mu": 20.0, "sigma": 1.5}],
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
