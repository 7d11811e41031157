"""The docs agree with the code, for every game by one parametrised set of checks: each
docs/<game_id>.md's observation, options, action, phase, info and player-view tables and its
documented sizes; its state-dict tables against ``to_dict``; and the ``>>>`` examples of the
docs run as doctests."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import rummy_envs
from rummy_envs.games import gin_rummy as G
from rummy_envs.games import hollywood_gin as H
from rummy_envs.games import least_count as L
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games import rummy500 as R

DOCS = Path(__file__).resolve().parent.parent / "docs"
GIN_DOC = DOCS / "gin_rummy.md"
HOLLYWOOD_DOC = DOCS / "hollywood_gin.md"
ENV_OPTIONS = ("render_mode", "reward", "reward_scale", "illegal_action", "rich_info", "render_seat")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every markdown table: (header cells, body rows as cell lists)."""
    tables = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\s*\|[\s:|-]+\|\s*", lines[i + 1]):
            header = _cells(lines[i])
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            tables.append((header, rows))
        else:
            i += 1
    return tables


def table(header_start: list[str], doc: Path = GIN_DOC) -> list[list[str]]:
    """Rows of the one table of ``doc`` whose header begins with ``header_start``."""
    found = [rows for header, rows in markdown_tables(doc.read_text()) if header[: len(header_start)] == header_start]
    assert len(found) == 1, f"expected one table headed {header_start}, found {len(found)}"
    return found[0]


def ticked(cell: str) -> str:
    """The first backticked name in a cell."""
    match = re.search(r"`([^`]+)`", cell)
    assert match, f"no backticked name in {cell!r}"
    return match.group(1)


@dataclass(frozen=True)
class DocSpec:
    """What a game's doc documents, to check against the code."""

    game: str  # the game id: docs/<game>.md, rummy_envs.ENVS[game]
    package: ModuleType  # rummy_envs.games.<game>: action offsets and NUM_ACTIONS
    config_class: type
    actions: frozenset[str]  # the action table's names
    phase: type  # the Phase enum of the phase table
    result: type  # the hand result of the info table
    view: type  # the player view whose every field the doc names
    sizes: tuple[str, Callable[[int], int]] | None  # sentence with {} for two player counts' sizes
    player_counts: tuple[int, int] = (2, 2)
    env_options: tuple[str, ...] = ENV_OPTIONS
    state_configs: tuple[Any, ...] = ()
    sub_tables: dict[str, Callable[[dict], list[dict]]] = field(default_factory=dict)

    @property
    def doc(self) -> Path:
        return DOCS / f"{self.game}.md"

    def raw_env(self, **options: Any) -> Any:
        return rummy_envs.ENVS[self.game].raw_env(**options)


def _size(game: str) -> Callable[[int], int]:
    return lambda players: rummy_envs.ENVS[game].raw_env(num_players=players).observation_size


SPECS = [
    DocSpec("gin_rummy", G, G.GinConfig, frozenset({"DRAW_STOCK", "TAKE_DISCARD", "PASS", "DONE", "BIG_GIN", "DISCARD",
                                                   "KNOCK", "MELD", "LAYOFF"}), G.Phase, G.HandResult, G.GinView, None,
            env_options=ENV_OPTIONS + ("observe_opponent_hand", "num_players"),
            state_configs=(G.GinConfig(), G.GinConfig(variant="oklahoma", knocker_arrangement="explicit",
                                                      layoff_mode="explicit", episode="match", target_score=30,
                                                      big_gin_bonus=31, max_hands_per_match=3)),
            sub_tables={"match key": lambda d: [d["match"]]}),
    DocSpec("rummy500", R, R.Rummy500Config, frozenset({"DRAW_STOCK", "END_HAND", "MELD_NEW", "CANCEL", "TAKE_DISCARD",
                                                        "PICK", "PICK_JOKER", "LAY_OFF", "LAY_OFF_HIGH", "DISCARD"}),
            R.Phase, R.HandResult, R.Rummy500View, ("Four players have {} entries, eight {}", _size("rummy500")),
            (4, 8), state_configs=(R.Rummy500Config(), R.Rummy500Config(num_players=3, num_jokers=1, episode="match",
                                                                      max_hands=2, deal_seed_mode="daily")),
            sub_tables={"meld key": lambda d: d["melds"]}),
    DocSpec("least_count", L, L.LeastCountConfig, frozenset({"DECLARE", "DISCARD", "PICK_OPEN", "PICK_CLOSED"}),
            L.Phase, L.RoundResult, L.LeastCountView, ("two players have {} entries, ten {}", _size("least_count")),
            (2, 10), state_configs=(L.LeastCountConfig(), L.LeastCountConfig(cut_joker=True, episode="match",
                                                                           num_printed_jokers=1, max_rounds=3))),
    DocSpec("manipulation_rummy", M, M.ManipulationConfig, frozenset(), M.Phase, M.RoundResult, M.ManipulationView,
            ("two players have {} entries, five {}", _size("manipulation_rummy")), (2, 5),
            state_configs=(M.ManipulationConfig(num_players=2),),
            sub_tables={"commit key": lambda d: [d["commit"]] if d["commit"] else []}),
]
ids = [spec.game for spec in SPECS]


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_observation_table_matches_layout(spec):
    rows = table(["segment", "offset", "size", "meaning"], spec.doc)
    documented = [(ticked(r[0]), int(r[1]), int(r[2])) for r in rows]
    layout = spec.raw_env().observation_layout()
    assert documented == [(s.name, s.offset, s.size) for s in layout.values()]


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_options_table_names_defaults_and_choices(spec):
    rows = table(["option", "default", "allowed", "meaning"], spec.doc)
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    defaults = {f.name: f.default for f in dataclasses.fields(spec.config_class)}
    signature = inspect.signature(rummy_envs.ENVS[spec.game].raw_env.__init__)
    defaults.update({name: signature.parameters[name].default for name in spec.env_options})
    assert set(documented) == set(defaults)
    for name, value in documented.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name
    for row in rows:  # every quoted choice constructs an env
        for choice in re.findall(r'`("[^"`]*")`', row[2]):
            spec.raw_env(**{ticked(row[0]): ast.literal_eval(choice)})


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_action_table_matches_constants(spec):
    ranges = {}
    for r in table(["action", "ids", "meaning"], spec.doc):
        bounds = [int(x) for x in re.findall(r"\d+", r[1].split("`")[0])]
        ranges[ticked(r[0])] = (bounds[0], bounds[-1])
    assert {name: lo for name, (lo, _) in ranges.items()} == {name: getattr(spec.package, name) for name in ranges}
    ends = sorted(ranges.values())
    assert ends[0][0] == 0 and ends[-1][1] == spec.package.NUM_ACTIONS - 1
    for (_, hi), (lo, _) in zip(ends, ends[1:]):
        assert lo == hi + 1, "the documented id ranges must tile the action space"
    if spec.actions:
        assert set(ranges) == spec.actions
    else:
        assert len(ranges) == 11  # Manipulation: the five placements are also listed with their effects
        placements = [ticked(r[0]).split("(")[0] for r in table(["placement", "effect"], spec.doc)]
        assert placements == ["PLACE", "JOKER_AS", "REPLACE_FROM_HAND", "REPLACE_FROM_TABLE", "FREED_AS"]


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_phase_info_and_view_tables(spec):
    phases = [ticked(r[0]) for r in table(["Phase", "Who acts"], spec.doc)]
    assert phases == [p.name for p in spec.phase]
    fields = [name for r in table(["field", "meaning"], spec.doc) for name in re.findall(r"`([^`]+)`", r[0])]
    assert fields == [f.name for f in dataclasses.fields(spec.result)] + ["hand_number", "seat"]
    text = spec.doc.read_text()
    for view_field in dataclasses.fields(spec.view):
        assert f"`{view_field.name}`" in text, f"player view field {view_field.name} is not documented"


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_documented_sizes(spec):
    text = spec.doc.read_text()
    env = spec.raw_env()
    actions = spec.package.NUM_ACTIONS
    assert f"Discrete({actions})" in text and f"int8[{actions}]" in text
    assert f"float32[{env.observation_size}]" in text
    env.reset(seed=0)
    assert f"{env.state().shape[0]} entries by default" in text
    if spec.sizes:
        sentence, size = spec.sizes
        assert sentence.format(*(size(n) for n in spec.player_counts)) in text


def test_gin_optional_segments_match_layout():
    rows = table(["optional segment", "when", "size"])
    sizes = {ticked(r[0]): int(r[2]) for r in rows}
    env = rummy_envs.ENVS["gin_rummy"].raw_env
    base = env().observation_layout()
    full = env(episode="match", observe_opponent_hand=True).observation_layout()
    extra = [name for name in full if name not in base]
    assert list(sizes) == extra
    assert sizes == {name: full[name].size for name in extra}
    assert list(env(episode="match").observation_layout())[len(base):] == ["scores"]
    assert list(env(observe_opponent_hand=True).observation_layout())[len(base):] == ["opponent_hand"]


def test_hollywood_tables_match_the_code():
    tables = {tuple(h[:2]): rows for h, rows in markdown_tables(HOLLYWOOD_DOC.read_text())}
    env = rummy_envs.ENVS["hollywood_gin"].raw_env
    layout = env().observation_layout()
    sheet = [(s.name, s.offset, s.size) for s in layout.values() if s.name.startswith("sheet_")]
    assert [(ticked(r[0]), int(r[1]), int(r[2])) for r in tables[("segment", "offset")]] == sheet
    assert env().observation_size == 617
    assert env(observe_opponent_hand=True).observation_size == 669
    own = {f.name: f.default for f in dataclasses.fields(H.HollywoodConfig)}
    gin = {f.name: f.default for f in dataclasses.fields(G.GinConfig)}
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in tables[("option", "default")]}
    assert documented == {k: own[k] for k in own if k not in gin}
    changed = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in tables[("option", "Hollywood default")]}
    assert changed == {k: own[k] for k in gin if own[k] != gin[k]}


@pytest.mark.parametrize("doc", ["gin_rummy.md", "hollywood_gin.md", "rummy500.md", "manipulation_rummy.md",
                                 "least_count.md", "table_solver.md", "conventions.md", "tournaments.md", "openspiel.md",
                                 "frames.md"])
def test_examples_run(doc):
    """The ``>>>`` examples of a doc, run in order with shared names (those of fenced python
    blocks where it has them, else the whole text's)."""
    text = (DOCS / doc).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S) or [text]
    globs: dict[str, object] = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, globs, f"{doc}[{i}]", doc, 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    assert runner.tries > 0 and runner.failures == 0, f"{runner.failures} failing example(s) in {doc}; run pytest -s"


# -- state dict tables (docs/<game>.md, "State dicts") ----------------------------------------
CARD = re.compile(r"(?:[A2-9TJQK][CDHS]|JK)")


def value_fits(value: object, kind: str) -> bool:
    """Does a JSON value fit a documented type: ``int``, ``bool``, ``str``, ``dict``, ``card``,
    ``cards`` (a list of cards), ``list of T`` (``list of (T or U)`` for mixed entries),
    ``[T, U]`` and ``T or null``?"""
    if kind.startswith("list of (") and kind.endswith(")"):
        return isinstance(value, list) and all(value_fits(v, kind[len("list of ("):-1]) for v in value)
    if " or " in kind:
        return any(value_fits(value, part) for part in kind.split(" or "))
    if kind.startswith("list of "):
        return isinstance(value, list) and all(value_fits(v, kind[len("list of "):]) for v in value)
    if kind.startswith("["):
        parts = kind[1:-1].split(", ")
        return isinstance(value, list) and len(value) == len(parts) and all(map(value_fits, value, parts))
    checks = {"null": lambda v: v is None, "int": lambda v: type(v) is int, "bool": lambda v: type(v) is bool,
              "str": lambda v: type(v) is str, "dict": lambda v: type(v) is dict,
              "card": lambda v: type(v) is str and CARD.fullmatch(v) is not None,
              "cards": lambda v: isinstance(v, list) and all(value_fits(c, "card") for c in v)}
    assert kind in checks, f"unknown documented type {kind!r}"
    return checks[kind](value)


def sample_dicts(state_class: type, configs: list, games: int = 4) -> list[dict]:
    """Dicts of random points (the deal, some turns, the end) of random games of each config."""
    rng = random.Random(12)
    out = []
    for config in configs:
        for seed in range(games):
            state = state_class(config, seed)
            out.append(state.to_dict())
            while not state.is_terminal():
                state.apply(rng.choice(state.legal_actions()))
                if rng.random() < 0.05:
                    out.append(state.to_dict())
            out.append(state.to_dict())
    return out


def check_state_table(rows: list[list[str]], dicts: list[dict]) -> None:
    """The documented keys are the dicts' keys in order, and every value fits its type."""
    documented = [(ticked(r[0]), r[1]) for r in rows]
    assert [key for key, _ in documented] == list(dicts[0]), "the table's keys are not to_dict's, in order"
    for d in dicts:
        for key, kind in documented:
            assert value_fits(d[key], kind), f"{key} = {d[key]!r} is not {kind}"


@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_state_dict_tables_match_to_dict(spec):
    dicts = sample_dicts(rummy_envs.ENVS[spec.game].raw_env.state_class, list(spec.state_configs))
    check_state_table(table(["key", "type", "meaning"], spec.doc), dicts)
    for header, rows_of in spec.sub_tables.items():
        rows = [row for d in dicts for row in rows_of(d)]
        assert rows, f"no sampled dict has a {header!r} entry"
        check_state_table(table([header, "type", "meaning"], spec.doc), rows)


def test_hollywood_state_dict_table_matches_the_sheet():
    dicts = sample_dicts(H.HollywoodState, [H.HollywoodConfig(episode="match", target_score=30, max_hands_per_match=4)])
    assert [ticked(r[0]) for r in table(["key", "type", "meaning"])] == list(dicts[0])  # gin's table holds
    check_state_table(table(["match key", "type", "meaning"], HOLLYWOOD_DOC), [d["match"] for d in dicts])


def test_value_fits_has_teeth():
    assert value_fits([["AS", 0]], "list of [card, int]") and not value_fits([["AS", "0"]], "list of [card, int]")
    assert value_fits(None, "card or null") and not value_fits("A", "card or null")
    assert value_fits([[1, 2]], "list of list of int") and not value_fits([[True]], "list of list of int")
