"""The notebooks are committed executed, figures included, by ``notebooks/execute.py``; the
tests run that same script at tiny sizes (``--quick``) so the notebooks never rot, and
check that the figures come out inline."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("sb3_contrib", reason="the training notebook needs the train extra")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WITH_FIGURES = {"training", "tournament_analysis"}


def _code_cells(path: Path) -> list:
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def _images(cells: list) -> int:
    return sum("image/png" in output.get("data", {}) for cell in cells for output in cell.outputs)


def test_the_three_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} >= {"quickstart", "training", "tournament_analysis"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_executed_with_its_outputs(path):
    cells = _code_cells(path)
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1)), "run it with notebooks/execute.py"
    assert all(cell.outputs for cell in cells), "a code cell without output"
    assert not [o for cell in cells for o in cell.outputs if o.output_type == "error"]
    assert (_images(cells) > 0) == (path.stem in WITH_FIGURES)
    assert "RUMMY_NOTEBOOK_QUICK" not in str(nbformat.read(path, as_version=4).metadata)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_with_inline_figures(path, tmp_path, monkeypatch):
    from notebooks import execute

    monkeypatch.setenv("MPLBACKEND", "Agg")  # a caller's backend must not reach the notebook
    assert execute.main([path.stem, "--quick", "--into", str(tmp_path)]) == 0
    cells = _code_cells(tmp_path / path.name)
    assert all(cell.execution_count for cell in cells)
    assert (_images(cells) > 0) == (path.stem in WITH_FIGURES)
