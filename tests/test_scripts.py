"""Smoke runs of every script: the demo (the README's run command) and the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_as_in_the_readme(tmp_path):
    out = subprocess.run([sys.executable, "-m", "training", "--deals", "2", "--seconds", "0.2", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=True).stdout
    for game in ("gin_rummy", "hollywood_gin"):
        assert f"=== {game}: tournament" in out and f"{game}:" in out
        assert (tmp_path / f"{game}_2deals_seed0" / "head_to_head.png").exists()
    assert "rating" in out and "agent steps/s" in out and "deadwood" in out


def test_tournament_benchmark_runs_and_writes_its_section(tmp_path):
    pytest.importorskip("rlcard")
    from benchmarks import bench_tournament

    out = tmp_path / "RESULTS.md"
    out.write_text("# Results\n")
    assert bench_tournament.main(["--seconds", "0.05", "--deals", "2", "--out", str(out)]) == 0
    assert bench_tournament.main(["--seconds", "0.05", "--deals", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Results") and text.count(bench_tournament.BEGIN) == 1 and "RLCard" in text


def test_benchmark_runs_and_writes_results(tmp_path):
    pytest.importorskip("rlcard")
    pytest.importorskip("pyspiel")
    from benchmarks import bench_gin

    out = tmp_path / "RESULTS.md"
    out.write_text("<!-- other:begin -->\nanother script's section\n<!-- other:end -->\n")
    for _ in range(2):
        code = bench_gin.main(["--seconds", "0.05", "--warmup", "0", "--hands", "40", "--chunk", "20",
                               "--slices", "1", "--out", str(out)])
        assert code == 0
    text = out.read_text()
    assert "another script's section" in text and text.count(bench_gin.BEGIN) == 1
    assert "OpenSpiel" in text and "RLCard" in text
    assert "## Rummy 500" in text and "rummy500 2-player env steps/s >= 0.5x gin's" in text
