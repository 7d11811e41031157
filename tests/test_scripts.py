"""Smoke runs of every script: the demo (the README's run command) and the benchmark."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_as_in_the_readme():
    out = subprocess.run([sys.executable, "-m", "training", "--hands", "1", "--seconds", "0.2"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    for game in ("gin_rummy", "hollywood_gin"):
        assert f"=== {game}" in out and f"{game}:" in out
    assert "agent steps/s" in out and "deadwood" in out


def test_benchmark_runs_and_writes_results(tmp_path):
    pytest.importorskip("rlcard")
    pytest.importorskip("pyspiel")
    from benchmarks import bench_gin

    out = tmp_path / "RESULTS.md"
    code = bench_gin.main(["--seconds", "0.05", "--warmup", "0", "--hands", "40", "--chunk", "20",
                           "--slices", "1", "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert "OpenSpiel" in text and "RLCard" in text
    assert "## Rummy 500" in text and "rummy500 2-player env steps/s >= 0.5x gin's" in text
