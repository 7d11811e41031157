"""The repository's own house rules, checked on its files: it explains itself (no pointer to a
document outside it or to an issue tracker), engine modules stay short, and imports flow one
way (no layer imports a layer above it, no cycles)."""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GAME_IDS = ("gin_rummy", "hollywood_gin", "rummy500", "manipulation_rummy", "least_count")
ENGINE_MODULE_LINES = 650  # "about 600": no engine module is much longer
PACKAGES = ("rummy_envs", "agents", "training", "benchmarks")

# Pointers a reader of the repository cannot follow: the design notes and the rules
# specifications the project was written from, their section numbers, and issue numbers.
OUTSIDE_POINTERS = {
    "the design notes": r"\bDESIGN\.md\b",
    "a rules specification": r"(?<!docs/)(?<![\w/])rules/[a-z_0-9]+\.md",
    "a section sign": "\u00a7",
    "an issue number": r"\b[Ii]ssues? #?\d+",
    "the specification": r"\b[Tt]he spec\b|\b[Tt]he spec's\b|\bspecification's\b",
}


def tracked_files(*suffixes: str) -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / name for name in listed if name.endswith(suffixes) and (ROOT / name).exists()
            and not name.startswith(("tests/fixtures/", "agents/checkpoints/"))]


def pointer_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """(line number, kind, line) of every outside pointer in ``text``."""
    for number, line in enumerate(text.splitlines(), 1):
        for kind, pattern in OUTSIDE_POINTERS.items():
            if re.search(pattern, line):
                yield number, kind, line.strip()


def test_pointer_patterns_have_teeth():
    # written in pieces, so that the lines of this test are no pointers themselves
    samples = ["see DESIGN" + ".md", "rules" + "/least_count.md", "least_count.md \u00a76", "fixed in iss" + "ue 12",
               "as the spec says"]
    assert [kind for sample in samples for _, kind, _ in pointer_lines(sample)] == list(OUTSIDE_POINTERS)
    assert not list(pointer_lines("docs/least_count.md#elimination and GameSpec's spec.options"))


def test_no_pointer_outside_the_repository():
    found = [f"{path.relative_to(ROOT)}:{number}: {kind}: {line}"
             for path in tracked_files(".py", ".md", ".yaml", ".toml", ".ipynb", ".cfg", ".txt")
             if path != Path(__file__).resolve()
             for number, kind, line in pointer_lines(path.read_text())]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("game", GAME_IDS)
def test_one_package_per_game_of_short_modules(game):
    package = ROOT / "rummy_envs" / "games" / game
    assert (package / "__init__.py").exists()
    long = {path.name: n for path in package.glob("*.py") if (n := len(path.read_text().splitlines())) > ENGINE_MODULE_LINES}
    assert not long, f"engine modules over {ENGINE_MODULE_LINES} lines: {long}"
    for place in (f"rummy_envs/envs/{game}.py", f"rummy_envs/{game}_v0.py", f"docs/{game}.md"):
        assert (ROOT / place).exists(), place


# ---------------------------------------------------------------------------------------
# Imports flow one way

def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imports_of(path: Path) -> Iterator[tuple[str, bool]]:
    """(imported module, whether at module level) for every import of the project's own modules."""
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base for alias in node.names]
        for name in names:
            if name.split(".")[0] in PACKAGES and is_module(name):
                yield name, id(node) in top_level


def layer(module: str) -> int:
    """Lower layers never import higher ones: shared card code, the engine contract, the
    engines, the envs, the library's entry points, agents, training, benchmarks."""
    parts = module.split(".")
    if parts[0] != "rummy_envs":
        return {"agents": 5, "training": 6, "benchmarks": 7}[parts[0]]
    if parts[1:3] == ["games", "base"]:
        return 1
    if len(parts) > 1 and parts[1] == "games":
        return 2 if len(parts) > 2 else 1
    if len(parts) > 1 and parts[1] == "envs":
        return 3
    if len(parts) == 1 or parts[1].endswith("_v0") or parts[1] in ("wrappers", "replay", "adapters", "openspiel"):
        return 4
    return 0


def project_modules() -> list[Path]:
    return [p for p in tracked_files(".py") if p.relative_to(ROOT).parts[0] in PACKAGES]


def test_no_module_imports_a_layer_above_it():
    wrong = []
    for path in project_modules():
        me = module_name(path)
        for target, _ in imports_of(path):
            if layer(target) > layer(me):
                wrong.append(f"{me} (layer {layer(me)}) imports {target} (layer {layer(target)})")
    assert not wrong, "\n".join(wrong)


def test_game_packages_import_no_other_game_but_hollywood_gin_its_base():
    wrong = []
    for path in project_modules():
        me = module_name(path).split(".")
        if me[:2] != ["rummy_envs", "games"] or len(me) < 3 or me[2] not in GAME_IDS:
            continue
        for target, _ in imports_of(path):
            other = target.split(".")
            if other[:2] == ["rummy_envs", "games"] and len(other) > 2 and other[2] in GAME_IDS and other[2] != me[2]:
                if (me[2], other[2]) != ("hollywood_gin", "gin_rummy"):
                    wrong.append(f"{'.'.join(me)} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    graph = {module_name(p): {t for t, top in imports_of(p) if top} for p in project_modules()}
    done: set[str] = set()
    on_path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in on_path:
            return on_path[on_path.index(node):] + [node]
        if node in done:
            return None
        on_path.append(node)
        for nxt in sorted(graph.get(node, ())):
            # a module importing a name from its own package's __init__ is Python's package
            # import, not a cycle between modules
            if node.startswith(nxt + "."):
                continue
            if cycle := visit(nxt):
                return cycle
        on_path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start)
        assert cycle is None, " -> ".join(cycle)


def test_layering_checks_have_teeth():
    assert layer("rummy_envs.games.least_count.state") > layer("rummy_envs.games.base") > layer("rummy_envs.cards")
    assert layer("rummy_envs.envs.least_count") > layer("rummy_envs.games.least_count")
    assert layer("agents.least_count") > layer("rummy_envs.least_count_v0") > layer("rummy_envs.envs.base")
    assert layer("training.tournament") > layer("agents.base")


def anchors_of(doc: Path) -> set[str]:
    """A doc's link targets: its explicit ``<a id="...">`` anchors and GitHub's heading slugs."""
    text = doc.read_text()
    slugs = {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
             for heading in re.findall(r"^#+ (.+)$", text, re.M)}
    return set(re.findall(r'<a id="([^"]+)"></a>', text)) | slugs


def test_every_cited_doc_anchor_exists():
    """Code comments cite the rules as ``docs/<game>.md#anchor``: each must lead somewhere."""
    cited = {(doc, anchor, path.relative_to(ROOT))
             for path in tracked_files(".py", ".md")
             for doc, anchor in re.findall(r"docs/([a-z_0-9]+\.md)#([\w-]+)", path.read_text())}
    assert len(cited) > 20
    missing = sorted(f"{where}: docs/{doc}#{anchor}" for doc, anchor, where in cited
                     if not (ROOT / "docs" / doc).exists() or anchor not in anchors_of(ROOT / "docs" / doc))
    assert not missing, "\n".join(missing)
