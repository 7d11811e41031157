"""benchmarks/mutation.py (docs/mutation.md): which mutants it makes and where it runs them.
Running mutants is by hand; these checks are quick."""

from __future__ import annotations

import json

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
    mutants = MT.find_mutants("demo", "demo.py", SOURCE)
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
    assert any(m.line == 16 for m in MT.find_mutants("demo", "demo.py", SOURCE, scope="all"))


def test_a_mutant_applies_only_to_its_own_line():
    mutant = MT.find_mutants("demo", "demo.py", SOURCE)[0]
    with pytest.raises(ValueError, match=f"line {mutant.line}"):
        MT.apply_mutant(SOURCE.replace(mutant.old, mutant.old + "  # edited"), mutant)


def test_samples_are_seeded_and_cover_the_modules(tmp_path):
    modules = ["hollywood_gin", "games_base"]  # the smallest targets: finding mutants compiles each
    first = MT.sample_mutants(modules, "rules", seed=3, sample=None, per_module=4)
    again = MT.sample_mutants(modules, "rules", seed=3, sample=None, per_module=4)
    assert first == again and [m.module for m in first] == ["hollywood_gin"] * 4 + ["games_base"] * 4
    assert {m.path for m in first[:4]} <= set(MT.TARGETS["hollywood_gin"].paths())
    assert MT.sample_mutants(modules, "rules", seed=4, sample=8, per_module=None) != first
    saved = tmp_path / "sample.jsonl"
    saved.write_text("".join(json.dumps({**m.__dict__, "id": m.id, "status": "survived"}) + "\n" for m in first))
    assert MT.read_mutants(saved, survivors_only=True) == first


def test_a_saved_mutant_is_found_again_in_another_module_of_its_target(tmp_path):
    package = tmp_path / "rummy_envs" / "games" / "hollywood_gin"
    package.mkdir(parents=True)
    mutant = MT.find_mutants("hollywood_gin", "rummy_envs/games/hollywood_gin/engine.py", SOURCE)[0]
    (package / "scoring.py").write_text("# moved here\n" + SOURCE)  # the engine split: the line moved down a file
    saved = tmp_path / "sample.jsonl"
    saved.write_text(json.dumps({**mutant.__dict__, "id": mutant.id}) + "\n")
    found = MT.read_mutants(saved, survivors_only=False, root=tmp_path)
    assert found == [MT.Mutant("hollywood_gin", "rummy_envs/games/hollywood_gin/scoring.py", mutant.line + 1,
                               mutant.kind, mutant.old, mutant.new)]


def test_the_module_tests_run_first_and_the_default_run_only_for_survivors():
    target = MT.TARGETS["gin_rummy"]
    own = MT.own_tests(target, [])
    assert own == sorted(p.relative_to(MT.REPO).as_posix() for p in MT.REPO.glob("tests/test_gin_rummy_*.py")) != []
    assert MT.stages(target, [], quick=False) == [own, own + ["tests"]]
    assert MT.stages(target, [], quick=True) == [own]
    assert MT.stages(target, [own[0]], quick=False) == [[own[0]]]
    assert MT.stages(target, [own[0], "tests/test_docs.py"], quick=False) == [[own[0]], [own[0], "tests/test_docs.py"]]
    command = MT.pytest_command(["tests/a.py"], ["tests/a.py::t"], True, "not slow")
    assert command[-6:] == ["tests/a.py", "-x", "-k", "not slow", "--deselect", "tests/a.py::t"]


def test_every_game_is_a_target_of_its_package_and_env_module():
    import rummy_envs

    assert set(rummy_envs.ENVS) <= set(MT.TARGETS)
    for game in rummy_envs.ENVS:
        paths = MT.TARGETS[game].paths()
        package = sorted(p.relative_to(MT.REPO).as_posix() for p in (MT.REPO / "rummy_envs" / "games" / game).glob("*.py"))
        assert paths == package + [f"rummy_envs/envs/{game}.py"] and MT.TARGETS[game].test_files(), game
    for target in MT.TARGETS.values():
        assert target.paths() and target.test_files()
