"""Mutation testing of the rules engines and observation encoders: does the test suite fail
when the rules break?

The tool samples one-line mutants of the engines and encoders with a seed (an operator
swapped, a comparison flipped, a constant off by one, a statement dropped, two arguments
swapped, a condition negated, ...), runs the test command against each in a temporary copy
of the repository (never in the working tree: others may be editing and testing there) and
reports, per target, the mutants the tests caught and the ones that survived, with each
survivor's diff. docs/mutation.md has the latest score and the survivors, with the reason
each is equivalent.

Targets (``TARGETS``): one per game, named by its id, holding every module of
``rummy_envs/games/<game_id>/`` and its env module ``rummy_envs/envs/<game_id>.py``, tested
first by ``tests/test_<game_id>_*.py``; and the shared ``melds``, ``base`` (the env base
class) and ``games_base`` (the engine contract). Modules and test files are found by glob
when the tool runs, so a module split or a test file merged changes nothing here.

Run from the repository root::

    python -m benchmarks.mutation --sample 60 --seed 1 --out /tmp/mutation.jsonl   # the default test run
    python -m benchmarks.mutation --modules gin_rummy --per-module 10 --tests tests/test_gin_rummy_rules.py
    python -m benchmarks.mutation --list --modules melds                            # the candidates, nothing run
    python -m benchmarks.mutation --from-results /tmp/mutation.jsonl --quick        # its survivors again
    python -m benchmarks.mutation --sample 70 --seed 1 --list --save /tmp/sample.jsonl                 # fix a sample ...
    python -m benchmarks.mutation --mutants /tmp/sample.jsonl --only gin_rummy,melds --resume --out /tmp/m.jsonl  # ... run it in parts

Each mutant first runs ``python -m pytest -x -q`` over its target's own test files, stopping
at the first failure; only a mutant that survives them runs the whole
of ``--tests`` (default: the default suite, ``tests/`` with the ``not slow`` marker of
pyproject.toml), those files first. A failure in the first run is a failure of the second, so
the score is that of the default run at a fraction of its cost. Before the mutants, the
unmutated copy runs ``--tests`` once: tests that fail there (work in progress elsewhere) are
deselected in every mutant run, and its time sets the per-mutant timeout (a mutant that hangs
counts as caught). Results are appended to ``--out`` as JSON lines as they come, so
``--resume`` picks up a long run where it stopped; ``--save`` keeps a sample so that it can be
run in parts (``--mutants``, ``--only``) while the sources change under it (a mutant whose line
moved, even to another module of its target, is found again by the line's text); ``--quick`` runs
only the targets' own test files (a quick look while writing tests). Mutation runs are
CPU-heavy: run them niced, one at a time.

Scope: every function of the targets' modules except those that read and validate state
dicts or config options (``from_dict``, ``_read_*``, ``_check_*``, ``problem``, ``holds``,
``__post_init__``, ...) and text rendering, which are not the rules or the encoders; ``--scope
all`` includes them. Docstrings, annotations, ``raise`` statements (the error messages) and
``assert`` statements are never mutated.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Target:
    """Modules under mutation and the test files that exercise them most (run first), both
    glob patterns relative to the repository, expanded when used: a module split in two, or
    a test file renamed or merged, needs no change here."""

    sources: tuple[str, ...]
    tests: tuple[str, ...]

    def paths(self, root: Path = REPO) -> list[str]:
        return _expand(self.sources, root)

    def test_files(self, root: Path = REPO) -> list[str]:
        return _expand(self.tests, root)


def _expand(patterns: tuple[str, ...], root: Path) -> list[str]:
    """The files matching ``patterns`` under ``root``, each once, in pattern order, sorted within one."""
    found: dict[str, None] = {}
    for pattern in patterns:
        found.update(dict.fromkeys(path.relative_to(root).as_posix() for path in sorted(root.glob(pattern))))
    return list(found)


def game_targets(root: Path = REPO) -> dict[str, Target]:
    """One target per game package (``rummy_envs/games/<game_id>/``): every module of the
    package and the game's env module, tested first by ``tests/test_<game_id>_*.py``."""
    games = [init.parent.name for init in sorted((root / "rummy_envs" / "games").glob("*/__init__.py"))]
    return {game: Target((f"rummy_envs/games/{game}/*.py", f"rummy_envs/envs/{game}.py"), (f"tests/test_{game}_*.py",))
            for game in games}


TARGETS: dict[str, Target] = {
    "melds": Target(("rummy_envs/melds.py",), ("tests/test_gin_rummy_*.py",)),
    "base": Target(("rummy_envs/envs/base.py",), ("tests/test_env_contract.py", "tests/test_*_env.py")),
    "games_base": Target(("rummy_envs/games/base.py",), ("tests/test_engine_contract.py", "tests/test_env_contract.py")),
    **game_targets(),
}

# Functions outside the "rules" scope: state-dict and option reading/validation, text rendering.
_OUT_OF_SCOPE = re.compile(r"^(from_dict|_read_\w*|_check_\w*|problem|holds|_distinct|__post_init__|from_kwargs"
                           r"|_render_text|_score_lines|_seat_values|_lay_meld|_match_winners)$")

# One replacement per operator: each a real change of meaning in this code (``|`` becomes
# ``&``, not ``^``, which is the same on disjoint bitmasks).
_BINOPS = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "//"), ast.FloorDiv: ("//", "*"),
           ast.Div: ("/", "*"), ast.Mod: ("%", "//"), ast.BitOr: ("|", "&"), ast.BitAnd: ("&", "|"),
           ast.BitXor: ("^", "&"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<")}
_COMPARES = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
             ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.In: ("in", "not in"), ast.NotIn: ("not in", "in"),
             ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is")}
_BOOLOPS = {ast.And: ("and", "or"), ast.Or: ("or", "and")}
_SWAPPED_NAMES = {"min": "max", "max": "min", "any": "all", "all": "any"}


@dataclass(frozen=True)
class Mutant:
    """One single-line change of a file of a target: ``line`` (1-based) of ``path`` becomes ``new``."""

    module: str  # the target (a key of TARGETS)
    path: str  # the file, relative to the repository
    line: int
    kind: str
    old: str
    new: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.kind}:{self.new.strip()}"

    def diff(self) -> str:
        return "".join(difflib.unified_diff([self.old + "\n"], [self.new + "\n"], f"a/{self.path}", f"b/{self.path}",
                                            lineterm="\n", n=0)).replace("@@ -1 +1 @@", f"@@ line {self.line} @@")


# ----------------------------------------------------------------------------------------
# Finding the mutants of a module


class _Lines:
    """A module's lines, sliced by the UTF-8 byte columns that ``ast`` positions use."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")

    def text(self, line: int, start: int, end: int) -> str:
        return self.lines[line - 1].encode()[start:end].decode()

    def replaced(self, line: int, start: int, end: int, new: str) -> str:
        raw = self.lines[line - 1].encode()
        return (raw[:start] + new.encode() + raw[end:]).decode()


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: annotations, docstrings, raise and assert statements, f-strings."""
    skipped: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            skipped.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Raise, ast.Assert, ast.JoinedStr)):
            skip(node)
        elif isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        elif isinstance(node, ast.arg):
            skip(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip(node.returns)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip(first)
    return skipped


def _out_of_scope(tree: ast.Module) -> set[int]:
    """ids of the nodes inside functions outside the rules scope (``_OUT_OF_SCOPE``)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _OUT_OF_SCOPE.match(node.name):
            out.update(id(n) for n in ast.walk(node))
    return out


def _gap_mutant(lines: _Lines, left: ast.AST, right: ast.AST, old: str, new: str) -> str | None:
    """The line with the operator ``old`` between two operands replaced by ``new`` (None when
    the operator is not alone on one line between them)."""
    if left.end_lineno != right.lineno:
        return None
    gap = lines.text(right.lineno, left.end_col_offset, right.col_offset)
    if " ".join(gap.strip(" ()").split()) != old:
        return None
    i = gap.index(old.split()[0])
    j = gap.rindex(old.split()[-1]) + len(old.split()[-1])
    return lines.replaced(right.lineno, left.end_col_offset, right.col_offset, gap[:i] + new + gap[j:])


def _single_line(node: ast.AST) -> bool:
    return node.lineno == node.end_lineno


def find_mutants(module: str, path: str, source: str, scope: str = "rules") -> list[Mutant]:
    """Every candidate one-line mutant of ``source`` (the file ``path`` of target ``module``), in
    source order, deduplicated, each compiling."""
    tree = ast.parse(source)
    lines = _Lines(source)
    skipped = _skipped_nodes(tree) | (_out_of_scope(tree) if scope == "rules" else set())
    found: dict[tuple[int, str], Mutant] = {}

    def add(line: int, kind: str, new: str | None) -> None:
        old = lines.lines[line - 1]
        if new is not None and new != old and (line, new) not in found:
            found[(line, new)] = Mutant(module, path, line, kind, old, new)

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        for kind, line, new in _node_mutants(node, lines):
            add(line, kind, new)
    mutants = sorted(found.values(), key=lambda m: (m.line, m.kind, m.new))
    return [m for m in mutants if _compiles(source, m)]


def _node_mutants(node: ast.AST, lines: _Lines) -> Iterator[tuple[str, int, str | None]]:
    """(kind, line, mutated line) of the mutants of one node."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        old, new = _BINOPS[type(node.op)]
        yield "operator", node.right.lineno, _gap_mutant(lines, node.left, node.right, old, new)
    elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOPS and _single_line(node):
        old, new = _BINOPS[type(node.op)]
        yield "operator", node.lineno, _gap_mutant(lines, node.target, node.value, old + "=", new + "=")
    elif isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands, operands[1:]):
            if type(op) in _COMPARES:
                old, new = _COMPARES[type(op)]
                yield "comparison", right.lineno, _gap_mutant(lines, left, right, old, new)
    elif isinstance(node, ast.BoolOp):
        old, new = _BOOLOPS[type(node.op)]
        for left, right in zip(node.values, node.values[1:]):
            yield "boolean", right.lineno, _gap_mutant(lines, left, right, old, new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)) and _single_line(node):
        yield "unary dropped", node.lineno, lines.replaced(node.lineno, node.col_offset, node.operand.col_offset, "")
    elif isinstance(node, ast.Constant) and _single_line(node):
        yield from _constant_mutants(node, lines)
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return, ast.Continue, ast.Break)):
        if _single_line(node) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            yield "statement dropped", node.lineno, lines.replaced(node.lineno, node.col_offset, node.end_col_offset,
                                                                   "pass")
    if isinstance(node, ast.Call):
        yield from _call_mutants(node, lines)
    if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _single_line(node.test):
        test = node.test
        text = lines.text(test.lineno, test.col_offset, test.end_col_offset)
        yield "condition negated", test.lineno, lines.replaced(test.lineno, test.col_offset, test.end_col_offset,
                                                               f"not ({text})")


def _constant_mutants(node: ast.Constant, lines: _Lines) -> Iterator[tuple[str, int, str | None]]:
    value = node.value
    if isinstance(value, bool):
        replacements = [repr(not value)]
    elif isinstance(value, int):
        replacements = [str(value + 1), str(value - 1)] if value > 0 else [str(value + 1)]
    else:
        return
    for new in replacements:
        yield "constant", node.lineno, lines.replaced(node.lineno, node.col_offset, node.end_col_offset, new)


def _call_mutants(node: ast.Call, lines: _Lines) -> Iterator[tuple[str, int, str | None]]:
    if isinstance(node.func, ast.Name) and node.func.id in _SWAPPED_NAMES and _single_line(node.func):
        f = node.func
        yield "function swapped", f.lineno, lines.replaced(f.lineno, f.col_offset, f.end_col_offset,
                                                           _SWAPPED_NAMES[f.id])
    args = node.args
    if len(args) >= 2 and not any(isinstance(a, ast.Starred) for a in args[:2]) and args[0].lineno == args[1].end_lineno \
            and _single_line(args[0]) and _single_line(args[1]):
        a, b = args[0], args[1]
        first = lines.text(a.lineno, a.col_offset, a.end_col_offset)
        second = lines.text(b.lineno, b.col_offset, b.end_col_offset)
        between = lines.text(a.lineno, a.end_col_offset, b.col_offset)
        if first != second:
            yield "arguments swapped", a.lineno, lines.replaced(a.lineno, a.col_offset, b.end_col_offset,
                                                                second + between + first)


def _compiles(source: str, mutant: Mutant) -> bool:
    try:
        compile(apply_mutant(source, mutant), "<mutant>", "exec")
    except SyntaxError:
        return False
    return True


def apply_mutant(source: str, mutant: Mutant) -> str:
    """``source`` with the mutant's line replaced (ValueError if that line is not the expected one)."""
    lines = source.split("\n")
    if lines[mutant.line - 1] != mutant.old:
        raise ValueError(f"line {mutant.line} of {mutant.path} is not {mutant.old!r}")
    lines[mutant.line - 1] = mutant.new
    return "\n".join(lines)


def read_mutants(path: Path, survivors_only: bool, root: Path = REPO) -> list[Mutant]:
    """The mutants of a JSON-lines file (a results file, or a sample saved by ``--save``), or
    only those that survived, found again in today's sources (by their line's text, in any
    file of their target, where the line has moved); those whose line is gone are left out."""
    mutants = []
    for line in path.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        if not record or survivors_only and record.get("status") != "survived":
            continue
        place = _locate(record, root)
        if place is None:
            print(f"left out (its line is gone or not unique now): {record['id']}", file=sys.stderr)
            continue
        mutants.append(Mutant(record["module"], *place, record["kind"], record["old"], record["new"]))
    return mutants


def _locate(record: dict, root: Path) -> tuple[str, int] | None:
    """Where a recorded mutant's line is today: its own file and line, else the one line of
    its target's files with its text (None when there is none or several)."""
    source = root / record["path"]
    if source.exists():
        lines = source.read_text().split("\n")
        if 0 < record["line"] <= len(lines) and lines[record["line"] - 1] == record["old"]:
            return record["path"], record["line"]
    matches = [(name, number) for name in TARGETS[record["module"]].paths(root)
               for number, text in enumerate((root / name).read_text().split("\n"), 1) if text == record["old"]]
    return matches[0] if len(matches) == 1 else None


def sample_mutants(modules: list[str], scope: str, seed: int, sample: int | None, per_module: int | None,
                   root: Path = REPO) -> list[Mutant]:
    """A seeded sample: ``sample`` mutants drawn uniformly from all candidates of ``modules``,
    or ``per_module`` from each (all candidates when neither is given)."""
    rng = random.Random(seed)
    candidates = {m: [mutant for path in TARGETS[m].paths(root)
                      for mutant in find_mutants(m, path, (root / path).read_text(), scope)] for m in modules}
    if per_module is not None:
        chosen = [mut for m in modules for mut in rng.sample(candidates[m], min(per_module, len(candidates[m])))]
    else:
        pool = [mut for m in modules for mut in candidates[m]]
        chosen = rng.sample(pool, min(sample, len(pool))) if sample is not None else pool
    order = {m: i for i, m in enumerate(modules)}
    return sorted(chosen, key=lambda mut: (order[mut.module], mut.path, mut.line, mut.new))


# ----------------------------------------------------------------------------------------
# Running the tests against each mutant, in a copy of the repository

_COPY_IGNORED = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".pytest_cache", ".hypothesis", "runs",
                                       "tournament_results", "*.egg-info", ".ipynb_checkpoints")


def make_copy(root: Path = REPO) -> Path:
    """A copy of the working tree in a new temporary folder, importing its own code (checked)."""
    copy = Path(tempfile.mkdtemp(prefix="mutation-")) / "repo"
    shutil.copytree(root, copy, ignore=_COPY_IGNORED)
    probe = "import rummy_envs, agents, training, tests; print(rummy_envs.__file__, agents.__file__, training.__file__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=copy_env(copy), capture_output=True,
                         text=True, check=True).stdout.split()
    if not all(Path(f).resolve().is_relative_to(copy.resolve()) for f in out):
        raise RuntimeError(f"the copy at {copy} imports code from elsewhere: {out}")
    return copy


def copy_env(copy: Path) -> dict[str, str]:
    """The environment of a run in the copy: its code first on the path, no bytecode written
    (a mutant and its original have the same size, and may share an mtime second)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_tests(copy: Path, command: list[str], timeout: float) -> tuple[int | None, float, list[str], str]:
    """(return code or None on timeout, seconds, failed test ids, output tail) of one test run."""
    shutil.rmtree(copy / ".hypothesis", ignore_errors=True)  # examples a previous mutant made fail
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, cwd=copy, env=copy_env(copy), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - start, [], ""
    output = proc.stdout + proc.stderr
    failed = re.findall(r"^(?:FAILED|ERROR) (.+?)(?: - .*)?$", output, re.MULTILINE)
    return proc.returncode, time.perf_counter() - start, failed, output[-2000:]


def pytest_command(paths: list[str], deselect: list[str], stop_first: bool, keyword: str = "") -> list[str]:
    """``python -m pytest -q`` over ``paths`` in order, without the deselected test ids (and
    only the tests matching ``keyword``, a ``-k`` expression, when given)."""
    command = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *paths]
    command += ["-x"] if stop_first else []
    command += ["-k", keyword] if keyword else []
    for test_id in deselect:
        command += ["--deselect", test_id]
    return command


def own_tests(target: Target, tests: list[str]) -> list[str]:
    """The target's own test files (those among ``tests`` when given)."""
    return [t for t in target.test_files() if not tests or t in tests]


def stages(target: Target, tests: list[str], quick: bool) -> list[list[str]]:
    """The test runs of one mutant, each stopping at its first failure: the module's own test
    files, then, if it survived them (and not ``quick``), the whole of ``tests`` (default: the
    default suite) with those files first. A mutant that fails the first run fails the second
    too, so the second is only run for the survivors of the first."""
    first = own_tests(target, tests)
    if quick:
        return [first or tests or ["tests"]]
    full = first + [t for t in tests or ["tests"] if t not in first]
    return [first, full] if first and full != first else [full]


def main(argv: list[str] | None = None) -> None:
    """Choose the mutants (a sample, a file, the survivors of a results file) and list or run them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modules", default=",".join(TARGETS),
                        help=f"comma-separated targets to mutate, of: {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--sample", type=int, default=None, help="mutants drawn uniformly from all candidates")
    parser.add_argument("--per-module", type=int, default=None, help="mutants drawn from each module instead")
    parser.add_argument("--seed", type=int, default=0, help="the sampling seed")
    parser.add_argument("--scope", choices=("rules", "all"), default="rules",
                        help="rules: skip state-dict/option validation and rendering (default); all: every function")
    parser.add_argument("--tests", nargs="*", default=[], help="test files or ids to run (default: the default suite)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per mutant (default: 3 x the unmutated run, at least 120)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run (then give --timeout)")
    parser.add_argument("--keyword", default="",
                        help="a pytest -k expression for every run, e.g. 'not manipulation' for a game not landed yet")
    parser.add_argument("--quick", action="store_true",
                        help="only the module's own test files: a survivor is one of those, not of the default run")
    parser.add_argument("--out", type=Path, default=Path("mutation.jsonl"), help="JSON lines of the results")
    parser.add_argument("--resume", action="store_true", help="skip mutants already in --out, append to it")
    parser.add_argument("--from-results", type=Path, default=None,
                        help="run the survivors of an earlier results file instead of a sample")
    parser.add_argument("--mutants", type=Path, default=None,
                        help="run the mutants of a file written by --save (or every mutant of a results file)")
    parser.add_argument("--save", type=Path, default=None, help="write the chosen mutants to this JSON-lines file")
    parser.add_argument("--only", default="", help="comma-separated targets: run only the chosen mutants of these")
    parser.add_argument("--list", action="store_true", help="list the sampled mutants and their diffs, run nothing")
    args = parser.parse_args(argv)
    modules = [m.strip() for m in args.modules.split(",") if m.strip()]
    if unknown := [m for m in modules if m not in TARGETS]:
        parser.error(f"unknown module(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    if args.sample is not None and args.per_module is not None:
        parser.error("give --sample or --per-module, not both")
    if args.from_results is not None or args.mutants is not None:
        mutants = read_mutants(args.from_results or args.mutants, survivors_only=args.from_results is not None)
    else:
        mutants = sample_mutants(modules, args.scope, args.seed, args.sample, args.per_module)
    if args.only:
        mutants = [m for m in mutants if m.module in args.only.split(",")]
    if args.save is not None:
        args.save.write_text("".join(json.dumps({"id": m.id, **asdict(m)}) + "\n" for m in mutants))
    if args.list:
        for m in mutants:
            print(f"{m.id}  [{m.kind}]\n{m.diff()}")
        print(f"{len(mutants)} mutants")
        return
    run(mutants, args)


def run(mutants: list[Mutant], args: argparse.Namespace) -> None:
    """Run every mutant in one copy of the repository, appending each result to ``args.out``."""
    done = set()
    if args.resume and args.out.exists():
        done = {json.loads(line)["id"] for line in args.out.read_text().splitlines() if line.strip()}
    elif args.out.exists():
        args.out.unlink()
    copy = make_copy()
    # A kill ends the run through the finally below: the test run in progress is stopped and
    # the copy removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"stopped; {args.out} has the results so far"))
    print(f"copy: {copy}; {len(mutants)} mutants, {len(done)} already done", flush=True)
    try:
        deselect, timeout = baseline(copy, mutants, args)
        for i, mutant in enumerate(mutants, 1):
            if mutant.id not in done:
                record = run_mutant(copy, mutant, args, deselect, timeout)
                with args.out.open("a") as out:
                    out.write(json.dumps(record) + "\n")
                print(f"[{i}/{len(mutants)}] {record['status']:8} {record['seconds']:6.0f}s  {mutant.id}"
                      + (f"  <- {record['caught_by'][0]}" if record["caught_by"] else ""), flush=True)
    finally:
        shutil.rmtree(copy.parent, ignore_errors=True)
    print(report(args.out))


def baseline(copy: Path, mutants: list[Mutant], args: argparse.Namespace) -> tuple[list[str], float]:
    """The unmutated run: the test ids failing without a mutant (deselected in every mutant run)
    and the per-mutant timeout (``--timeout``, else three times this run, at least 120 s)."""
    if args.no_baseline:
        return [], args.timeout or 3600.0
    if args.quick:  # every module's own test files, once
        paths = sorted({t for m in mutants for t in own_tests(TARGETS[m.module], args.tests)})
    else:
        paths = args.tests or ["tests"]
    rc, seconds, failed, tail = run_tests(copy, pytest_command(paths, [], False, args.keyword), args.timeout or 3600.0)
    print(f"unmutated run: rc {rc} in {seconds:.0f}s; deselected in every mutant run: {failed or 'none'}", flush=True)
    if rc not in (0, 1):
        raise SystemExit(f"the unmutated tests did not run (rc {rc}):\n{tail}")
    return failed, args.timeout or max(120.0, 3 * seconds)


def run_mutant(copy: Path, mutant: Mutant, args: argparse.Namespace, deselect: list[str], timeout: float) -> dict:
    """Write the mutant into the copy, run its test stages until one fails, restore the module;
    the result as a JSON-able record."""
    target = TARGETS[mutant.module]
    path = copy / mutant.path
    original = path.read_text()
    path.write_text(apply_mutant(original, mutant))
    seconds, failed, paths = 0.0, [], []
    try:
        for paths in stages(target, args.tests, args.quick):
            rc, took, failed, _ = run_tests(copy, pytest_command(paths, deselect, True, args.keyword), timeout)
            seconds += took
            if rc != 0:
                break
    finally:
        path.write_text(original)
    status = "timeout" if rc is None else "survived" if rc == 0 else "caught"
    return {"id": mutant.id, **asdict(mutant), "status": status, "seconds": round(seconds, 1),
            "caught_by": failed[:1], "tests": paths, "diff": mutant.diff()}


def report(results: Path) -> str:
    """The per-target table of caught and survived mutants, then each survivor's diff."""
    records = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    lines = ["| target | mutants | caught | survived | score |", "|---|---|---|---|---|"]
    for module in [m for m in TARGETS if any(r["module"] == m for r in records)] + ["all"]:
        rows = [r for r in records if module in ("all", r["module"])]
        caught = sum(r["status"] != "survived" for r in rows)
        lines.append(f"| {module} | {len(rows)} | {caught} | {len(rows) - caught} | {100 * caught / len(rows):.0f}% |")
    for r in records:
        if r["status"] == "survived":
            lines += ["", f"survived: {r['id']} [{r['kind']}]", r["diff"].rstrip()]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
