"""benchmarks/mutation.py (docs/mutation.md): which mutants it makes and where it runs them.
Running mutants is by hand; these checks are quick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import mutation as MT

SOURCE = '''"""A module docstring with 1 < 2."""
from __future__ import annotations

LIMIT: int | None = 10


def knock(hand: list[int], limit: int = 3) -> bool:
    """A docstring: x + 1."""
    total = sum(hand) - 1
    if total <= limit and hand:
        return max(hand) != 0
    raise ValueError(f"bad {total + 1}")


def from_dict(data: dict) -> int:
    return data["x"] + 1
'''


def mutated_lines(mutants: list[MT.Mutant]) -> set[str]:
    return {m.new.strip() for m in mutants}


def test_every_kind_of_mutant_and_nothing_outside_the_rules():
    mutants = MT.find_mutants("demo", SOURCE)
    new = mutated_lines(mutants)
    assert {"total = sum(hand) + 1", "total = sum(hand) - 2", "total = sum(hand) - 0", "pass",
            "if total < limit and hand:", "if total <= limit or hand:", "if not (total <= limit and hand):",
            "return min(hand) != 0", "return max(hand) == 0", "LIMIT: int | None = 11",
            "def knock(hand: list[int], limit: int = 4) -> bool:"} <= new
    assert all(m.line not in (1, 8, 12, 16) for m in mutants)  # docstrings, raise, out-of-scope from_dict
    assert not any("int & None" in line for line in new)  # annotations stay
    for m in mutants:  # one line changed, and it compiles
        compile(MT.apply_mutant(SOURCE, m), "<mutant>", "exec")
        assert MT.apply_mutant(SOURCE, m).split("\n")[m.line - 1] == m.new
    assert any(m.line == 16 for m in MT.find_mutants("demo", SOURCE, scope="all"))


def test_a_mutant_applies_only_to_its_own_line():
    mutant = MT.find_mutants("demo", SOURCE)[0]
    with pytest.raises(ValueError, match=f"line {mutant.line}"):
        MT.apply_mutant(SOURCE.replace(mutant.old, mutant.old + "  # edited"), mutant)


def test_samples_are_seeded_and_cover_the_modules(tmp_path):
    modules = ["hollywood", "hollywood_env"]  # the smallest modules: finding mutants compiles each
    first = MT.sample_mutants(modules, "rules", seed=3, sample=None, per_module=4)
    again = MT.sample_mutants(modules, "rules", seed=3, sample=None, per_module=4)
    assert first == again and [m.module for m in first] == ["hollywood"] * 4 + ["hollywood_env"] * 4
    assert MT.sample_mutants(modules, "rules", seed=4, sample=8, per_module=None) != first
    saved = tmp_path / "sample.jsonl"
    saved.write_text("".join(json.dumps({**m.__dict__, "status": "survived"}) + "\n" for m in first))
    assert MT.read_mutants(saved, survivors_only=True) == first


def test_the_module_tests_run_first_and_the_default_run_only_for_survivors():
    target = MT.TARGETS["gin"]
    own = MT.own_tests(target, [])
    assert own and all(Path(MT.REPO / t).exists() for t in own) and own[0] == "tests/test_gin_rummy_mutants.py"
    assert MT.stages(target, [], quick=False) == [own, own + ["tests"]]
    assert MT.stages(target, [], quick=True) == [own]
    assert MT.stages(target, ["tests/test_gin_rummy_rules.py"], quick=False) == [["tests/test_gin_rummy_rules.py"]]
    assert MT.stages(target, ["tests/test_gin_rummy_rules.py", "tests/test_docs.py"], quick=False) == [
        ["tests/test_gin_rummy_rules.py"], ["tests/test_gin_rummy_rules.py", "tests/test_docs.py"]]
    command = MT.pytest_command(["tests/a.py"], ["tests/a.py::t"], True, "not slow")
    assert command[-6:] == ["tests/a.py", "-x", "-k", "not slow", "--deselect", "tests/a.py::t"]


def test_every_target_module_exists():
    for target in MT.TARGETS.values():
        assert (MT.REPO / target.path).exists()
