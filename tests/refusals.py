"""Refusal tables: one case per clause of a state-dict reader, and a check that every clause
has one.

A *clause* is a ``raise`` statement of a reader module (a game's ``state_dict.py`` and its
check modules, and the shared ``rummy_envs/state_dicts.py``), or a ``return`` of a message
(a non-empty string) such as the ``problem`` methods give for their caller to raise. One
guarded by an ``if`` whose test can hold in k ways (an ``or`` of k parts, a ``not`` of an
``and`` of k parts, an ``and`` of a condition and an ``or`` of k parts...) counts as k
clauses, since weakening one way (``or`` into ``and``) refuses less. A
*case* starts from a dict the reader accepts (the nearest reachable one), changes it, and
expects a refusal naming a field; the runner records the clauses that ran while the reader
refused it (a line tracer on the reader modules). ``Coverage.check`` then asks every clause
to be hit by as many cases as it has parts, or to be exempt with the reason, so a new clause
without a case fails the suite.
"""

from __future__ import annotations

import ast
import copy
import functools
import math
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import env_contract as contract

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """``change(base())`` must be refused naming ``field`` (None: a refusal of the whole dict,
    which names no field: not a mapping), while ``base()`` is accepted; by the
    table's reader, or by ``read`` when given (an env's reset, another game's reader)."""

    base: Callable[[], dict]
    change: Callable[[dict], Any]
    field: str | None
    read: Callable[[Any], Any] | None = None


def changed(d: dict, **fields: Any) -> dict:
    """A copy of ``d`` with top-level fields replaced."""
    return {**copy.deepcopy(d), **fields}


def _place(d: dict, path: str) -> tuple[Any, Any]:
    """The container and key of a nested field, the path written ``"hands.0"`` or
    ``"hand_results.-1.points.1"``."""
    *parents, last = path.split(".")
    node: Any = d
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node, int(last) if isinstance(node, list) else last


def adjust(path: str, change: Callable[[Any], Any]) -> Callable[[dict], dict]:
    """A change of one nested field to ``change(its value)``."""

    def apply(d: dict) -> dict:
        out = copy.deepcopy(d)
        node, key = _place(out, path)
        node[key] = change(node[key])
        return out

    return apply


def edit(path: str, value: Any) -> Callable[[dict], dict]:
    """A change setting one nested field (added when absent)."""

    def apply(d: dict) -> dict:
        out = copy.deepcopy(d)
        node, key = _place(out, path)
        node[key] = value
        return out

    return apply


def option(name: str, value: Any) -> Callable[[dict], dict]:
    """A rules option changed."""
    return edit(f"options.{name}", value)


def then(*changes: Callable[[dict], dict]) -> Callable[[dict], dict]:
    """Several changes in turn (a value and the field or option it must agree with)."""

    def apply(d: dict) -> dict:
        for change in changes:
            d = change(d)
        return d

    return apply


def is_message(node: ast.AST) -> bool:
    """A ``return`` of a non-empty string or f-string: a clause's message for its caller."""
    value = getattr(node, "value", None)
    return isinstance(node, ast.Return) and (isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value != ""))


def is_clause(node: ast.AST) -> bool:
    return (isinstance(node, ast.Raise) and node.exc is not None) or is_message(node)


def clause_parts(tree: ast.AST) -> dict[int, int]:
    """The line of each clause (``raise``, or ``return`` of a message) in ``tree`` and the
    number of clauses it stands for: the ways the test of the innermost ``if`` whose body
    holds it can hold (``count``); else 1."""

    def count(test: ast.expr, negated: bool = False) -> int:
        """The ways ``test`` can hold, one case each: an ``or`` holds by any of its parts (their
        ways add up), an ``and`` by all (theirs multiply); ``not`` swaps the two (De Morgan)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return count(test.operand, not negated)
        if isinstance(test, ast.BoolOp):
            ways = [count(v, negated) for v in test.values]
            if isinstance(test.op, ast.Or) != negated:
                return sum(ways)
            return math.prod(ways)
        return 1

    parts: dict[int, int] = {}
    for node in ast.walk(tree):
        if is_clause(node):
            parts.setdefault(node.lineno, 1)
        if isinstance(node, ast.If):  # visited before the ifs inside it, which then count instead
            for stmt in node.body:
                if is_clause(stmt):
                    parts[stmt.lineno] = count(node.test)
    return parts


@functools.cache
def module_clauses(module: str) -> dict[int, int]:
    """``clause_parts`` of one module (a repository path), parsed once per test process."""
    return clause_parts(ast.parse((ROOT / module).read_text()))


def clauses(modules: list[str]) -> Counter:
    """``Counter({"path:line": parts})`` over every clause of the modules (repository paths)."""
    return Counter({f"{module}:{line}": parts for module in modules for line, parts in module_clauses(module).items()})


def traced(read: Callable[[dict], Any], data: dict, modules: list[str]) -> tuple[BaseException | None, set[str]]:
    """Read ``data``, tracing the lines run in the modules: the error (None if accepted) and
    the clauses among those lines."""
    files = {str(ROOT / m): (m, set(module_clauses(m))) for m in modules}
    ran: set[str] = set()

    def local(frame, event, arg):
        if event == "line":
            module, lines = files[frame.f_code.co_filename]
            if frame.f_lineno in lines:
                ran.add(f"{module}:{frame.f_lineno}")
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        read(data)
    except ValueError as err:
        return err, ran
    finally:
        sys.settrace(previous)
    return None, ran


def refusal(read: Callable[[dict], Any], case: Case, modules: list[str]) -> set[str]:
    """Run one case: the base is read, the changed dict is refused naming ``case.field``
    (left as it was); the clauses that ran while it was refused are returned."""
    read = case.read or read
    base = case.base()
    read(copy.deepcopy(base))
    bad = case.change(copy.deepcopy(base))
    before = copy.deepcopy(bad)
    error, ran = traced(read, bad, modules)
    assert error is not None, f"the changed dict was accepted (expected a refusal naming {case.field!r})"
    named = contract.named_fields(str(error))
    assert (case.field in named) if case.field is not None else (not named and str(error).startswith("state dict")), \
        f"expected a refusal naming {case.field!r}, got: {error}"
    assert bad == before, "the reader changed the dict it refused"
    assert ran, f"no clause of {modules} ran for the refusal: {error}"
    return ran


def check_table(read: Callable[[dict], Any], cases: dict[str, Case], modules: list[str],
                exempt: dict[str, str]) -> None:
    """Run every case of a game's table (each refused naming its field) and check that every
    clause of the modules was hit by as many cases as it has parts, or is exempt: ``exempt``
    maps the text of a clause's line (stripped), or its ``path:line``, to the reason no dict
    can reach it through ``read``. Every failure is listed at once."""
    failures, hits = [], Counter()
    for name, case in cases.items():
        try:
            hits.update(refusal(read, case, modules))
        except (AssertionError, ValueError, KeyError, IndexError, TypeError) as err:
            failures.append(f"case {name}: {type(err).__name__}: {err}")
    missing = []
    for site, parts in clauses(modules).items():
        module, line = site.rsplit(":", 1)
        text = (ROOT / module).read_text().splitlines()[int(line) - 1].strip()
        if site not in exempt and text not in exempt and hits[site] < parts:
            missing.append(f"{site} ({hits[site]} of {parts} cases): {text}")
    unused = [key for key in exempt if key not in clauses(modules) and not any(
        (ROOT / m).read_text().count(key) for m in modules)]
    assert not failures, "cases that failed:\n" + "\n".join(failures)
    assert not missing, "clauses without a case of their own:\n" + "\n".join(missing)
    assert not unused, f"exemptions that match no clause: {unused}"
