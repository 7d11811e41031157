"""The docs agree with the code: docs/gin_rummy.md, docs/rummy500.md and
docs/least_count.md (observation, options, action, phase and info tables, documented sizes)
and docs/hollywood_gin.md, and their ``>>>`` examples run as doctests."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import random
import re
from pathlib import Path

import pytest

from rummy_envs import gin_rummy_v0, least_count_v0, rummy500_v0
from rummy_envs.games import gin_rummy as G
from rummy_envs.games import least_count as L
from rummy_envs.games import rummy500 as R

DOCS = Path(__file__).resolve().parent.parent / "docs"
GIN_DOC = DOCS / "gin_rummy.md"
ENV_OPTIONS = ("render_mode", "reward", "reward_scale", "illegal_action", "rich_info", "observe_opponent_hand",
               "num_players")


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


def code_defaults() -> dict[str, object]:
    defaults = {f.name: f.default for f in dataclasses.fields(G.GinConfig)}
    signature = inspect.signature(gin_rummy_v0.raw_env.__init__)
    for name in ENV_OPTIONS:
        defaults[name] = signature.parameters[name].default
    return defaults


def test_observation_table_matches_layout():
    rows = table(["segment", "offset", "size", "meaning"])
    documented = [(ticked(r[0]), int(r[1]), int(r[2])) for r in rows]
    layout = gin_rummy_v0.raw_env().observation_layout()
    assert documented == [(s.name, s.offset, s.size) for s in layout.values()]


def test_optional_segments_match_layout():
    rows = table(["optional segment", "when", "size"])
    sizes = {ticked(r[0]): int(r[2]) for r in rows}
    base = gin_rummy_v0.raw_env().observation_layout()
    full = gin_rummy_v0.raw_env(episode="match", observe_opponent_hand=True).observation_layout()
    extra = [name for name in full if name not in base]
    assert list(sizes) == extra
    assert sizes == {name: full[name].size for name in extra}
    assert list(gin_rummy_v0.raw_env(episode="match").observation_layout())[len(base):] == ["scores"]
    assert list(gin_rummy_v0.raw_env(observe_opponent_hand=True).observation_layout())[len(base):] == ["opponent_hand"]


def test_options_table_names_and_defaults():
    rows = table(["option", "default", "allowed", "meaning"])
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    defaults = code_defaults()
    assert set(documented) == set(defaults)
    for name, value in documented.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name


def test_options_table_choices_are_accepted():
    """Every quoted choice in the 'allowed' column constructs an env."""
    for row in table(["option", "default", "allowed", "meaning"]):
        name = ticked(row[0])
        for choice in re.findall(r'`("[^"`]*")`', row[2]):
            gin_rummy_v0.raw_env(**{name: ast.literal_eval(choice)})


def test_action_table_matches_constants():
    rows = table(["action", "ids", "meaning"])
    ranges = {}
    for r in rows:
        bounds = [int(x) for x in re.findall(r"\d+", r[1])]
        ranges[ticked(r[0])] = (bounds[0], bounds[-1])
    constants = {name: getattr(G, name) for name in ranges}
    assert {name: lo for name, (lo, _) in ranges.items()} == constants
    ends = sorted(ranges.values())
    assert ends[0][0] == 0 and ends[-1][1] == G.NUM_ACTIONS - 1
    for (_, hi), (lo, _) in zip(ends, ends[1:]):
        assert lo == hi + 1, "the documented id ranges must tile the action space"
    assert set(ranges) == {"DRAW_STOCK", "TAKE_DISCARD", "PASS", "DONE", "BIG_GIN", "DISCARD", "KNOCK", "MELD", "LAYOFF"}


def test_documented_sizes():
    text = GIN_DOC.read_text()
    env = gin_rummy_v0.raw_env()
    assert f"Discrete({G.NUM_ACTIONS})" in text
    assert f"float32[{env.observation_size}]" in text and f"int8[{G.NUM_ACTIONS}]" in text
    env.reset(seed=0)
    assert f"{env.state().shape[0]} entries by default" in text


@pytest.mark.parametrize("doc", ["gin_rummy.md", "conventions.md", "rummy500.md", "tournaments.md", "least_count.md", "table_solver.md"])
def test_examples_run(doc):
    """The ``>>>`` examples in the fenced python blocks, run in order with shared names."""
    text = (DOCS / doc).read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    globs: dict[str, object] = {}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, globs, f"{doc}[{i}]", doc, 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {doc}; run pytest -s to see them"


HOLLYWOOD_DOC = DOCS / "hollywood_gin.md"


def test_hollywood_tables_match_the_code():
    from rummy_envs import hollywood_gin_v0
    from rummy_envs.games.hollywood_gin import HollywoodConfig

    tables = {tuple(h[:2]): rows for h, rows in markdown_tables(HOLLYWOOD_DOC.read_text())}
    layout = hollywood_gin_v0.raw_env().observation_layout()
    sheet = [(s.name, s.offset, s.size) for s in layout.values() if s.name.startswith("sheet_")]
    assert [(ticked(r[0]), int(r[1]), int(r[2])) for r in tables[("segment", "offset")]] == sheet
    assert hollywood_gin_v0.raw_env().observation_size == 617
    assert hollywood_gin_v0.raw_env(observe_opponent_hand=True).observation_size == 669
    own = {f.name: f.default for f in dataclasses.fields(HollywoodConfig)}
    gin = {f.name: f.default for f in dataclasses.fields(G.GinConfig)}
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in tables[("option", "default")]}
    assert documented == {k: own[k] for k in own if k not in gin}
    changed = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in tables[("option", "Hollywood default")]}
    assert changed == {k: own[k] for k in gin if own[k] != gin[k]}


def test_hollywood_examples_run():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(HOLLYWOOD_DOC.read_text(), {}, "hollywood_gin.md", str(HOLLYWOOD_DOC), 0)
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0 and result.attempted > 0


RUMMY500_DOC = DOCS / "rummy500.md"
RUMMY500_ENV_OPTIONS = ("render_mode", "reward", "reward_scale", "illegal_action", "rich_info")


def test_rummy500_observation_table_matches_layout():
    rows = table(["segment", "offset", "size", "meaning"], RUMMY500_DOC)
    documented = [(ticked(r[0]), int(r[1]), int(r[2])) for r in rows]
    layout = rummy500_v0.raw_env().observation_layout()
    assert documented == [(s.name, s.offset, s.size) for s in layout.values()]


def test_rummy500_options_table_names_and_defaults():
    rows = table(["option", "default", "allowed", "meaning"], RUMMY500_DOC)
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    defaults = {f.name: f.default for f in dataclasses.fields(R.Rummy500Config)}
    signature = inspect.signature(rummy500_v0.raw_env.__init__)
    defaults.update({name: signature.parameters[name].default for name in RUMMY500_ENV_OPTIONS})
    assert set(documented) == set(defaults)
    for name, value in documented.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name
    for row in rows:  # every quoted choice constructs an env
        for choice in re.findall(r'`("[^"`]*")`', row[2]):
            rummy500_v0.raw_env(**{ticked(row[0]): ast.literal_eval(choice)})


def test_rummy500_action_table_matches_constants():
    rows = table(["action", "ids", "meaning"], RUMMY500_DOC)
    ranges = {}
    for r in rows:
        bounds = [int(x) for x in re.findall(r"\d+", r[1].split("`")[0])]
        ranges[ticked(r[0])] = (bounds[0], bounds[-1])
    assert {name: lo for name, (lo, _) in ranges.items()} == {name: getattr(R, name) for name in ranges}
    ends = sorted(ranges.values())
    assert ends[0][0] == 0 and ends[-1][1] == R.NUM_ACTIONS - 1
    for (_, hi), (lo, _) in zip(ends, ends[1:]):
        assert lo == hi + 1, "the documented id ranges must tile the action space"
    assert len(ranges) == 10


def test_rummy500_phase_and_info_tables():
    phases = [ticked(r[0]) for r in table(["Phase", "Who acts"], RUMMY500_DOC)]
    assert phases == [p.name for p in R.Phase]
    fields = [ticked(r[0]) for r in table(["field", "meaning"], RUMMY500_DOC)]
    assert fields == [f.name for f in dataclasses.fields(R.HandResult)] + ["hand_number", "seat"]
    text = RUMMY500_DOC.read_text()
    for field in dataclasses.fields(R.Rummy500View):
        assert f"`{field.name}`" in text, f"player view field {field.name} is not documented"


def test_rummy500_documented_sizes():
    text = RUMMY500_DOC.read_text()
    env = rummy500_v0.raw_env()
    assert f"Discrete({R.NUM_ACTIONS})" in text and f"int8[{R.NUM_ACTIONS}]" in text
    assert f"float32[{env.observation_size}]" in text
    env.reset(seed=0)
    assert f"{env.state().shape[0]} entries by default" in text
    four, eight = rummy500_v0.raw_env(num_players=4), rummy500_v0.raw_env(num_players=8)
    assert f"Four players have {four.observation_size} entries, eight {eight.observation_size}" in text


LEAST_COUNT_DOC = DOCS / "least_count.md"


def test_least_count_observation_table_matches_layout():
    rows = table(["segment", "offset", "size", "meaning"], LEAST_COUNT_DOC)
    documented = [(ticked(r[0]), int(r[1]), int(r[2])) for r in rows]
    layout = least_count_v0.raw_env().observation_layout()
    assert documented == [(s.name, s.offset, s.size) for s in layout.values()]


def test_least_count_options_table_names_and_defaults():
    rows = table(["option", "default", "allowed", "meaning"], LEAST_COUNT_DOC)
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    defaults = {f.name: f.default for f in dataclasses.fields(L.LeastCountConfig)}
    signature = inspect.signature(least_count_v0.raw_env.__init__)
    defaults.update({name: signature.parameters[name].default for name in RUMMY500_ENV_OPTIONS})
    assert set(documented) == set(defaults)
    for name, value in documented.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name
    for row in rows:  # every quoted choice constructs an env
        for choice in re.findall(r'`("[^"`]*")`', row[2]):
            least_count_v0.raw_env(**{ticked(row[0]): ast.literal_eval(choice)})


def test_least_count_action_table_matches_constants():
    rows = table(["action", "ids", "meaning"], LEAST_COUNT_DOC)
    ranges = {}
    for r in rows:
        bounds = [int(x) for x in re.findall(r"\d+", r[1])]
        ranges[ticked(r[0])] = (bounds[0], bounds[-1])
    assert {name: lo for name, (lo, _) in ranges.items()} == {name: getattr(L, name) for name in ranges}
    ends = sorted(ranges.values())
    assert ends[0][0] == 0 and ends[-1][1] == L.NUM_ACTIONS - 1
    for (_, hi), (lo, _) in zip(ends, ends[1:]):
        assert lo == hi + 1, "the documented id ranges must tile the action space"
    assert set(ranges) == {"DECLARE", "DISCARD", "PICK_OPEN", "PICK_CLOSED"}


def test_least_count_phase_info_and_view_tables():
    phases = [ticked(r[0]) for r in table(["Phase", "Who acts"], LEAST_COUNT_DOC)]
    assert phases == [p.name for p in L.Phase]
    fields = [ticked(r[0]) for r in table(["field", "meaning"], LEAST_COUNT_DOC)]
    assert fields == [f.name for f in dataclasses.fields(L.RoundResult)] + ["hand_number", "seat"]
    text = LEAST_COUNT_DOC.read_text()
    for field in dataclasses.fields(L.LeastCountView):
        assert f"`{field.name}`" in text, f"player view field {field.name} is not documented"


def test_least_count_documented_sizes():
    text = LEAST_COUNT_DOC.read_text()
    env = least_count_v0.raw_env()
    assert f"Discrete({L.NUM_ACTIONS})" in text and f"int8[{L.NUM_ACTIONS}]" in text
    assert f"float32[{env.observation_size}]" in text
    env.reset(seed=0)
    assert f"{env.state().shape[0]} entries by default" in text
    two, ten = least_count_v0.raw_env(num_players=2), least_count_v0.raw_env(num_players=10)
    assert f"two players have {two.observation_size} entries, ten {ten.observation_size}" in text


# -- state dict tables (docs/<game>.md, "State dicts") ----------------------------------------
CARD = re.compile(r"(?:[A2-9TJQK][CDHS]|JK)")


def value_fits(value: object, kind: str) -> bool:
    """Does a JSON value fit a documented type: ``int``, ``bool``, ``str``, ``dict``, ``card``,
    ``cards`` (a list of cards), ``list of T``, ``[T, U]`` and ``T or null``?"""
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


STATE_DOCS = {
    "gin_rummy.md": (G.GinState, [G.GinConfig(), G.GinConfig(variant="oklahoma", knocker_arrangement="explicit",
                                                              layoff_mode="explicit", episode="match", target_score=30,
                                                              big_gin_bonus=31, max_hands_per_match=3)]),
    "rummy500.md": (R.Rummy500State, [R.Rummy500Config(), R.Rummy500Config(num_players=3, num_jokers=1, episode="match",
                                                                           max_hands=2, deal_seed_mode="daily")]),
    "least_count.md": (L.LeastCountState, [L.LeastCountConfig(), L.LeastCountConfig(cut_joker=True, episode="match",
                                                                                     num_printed_jokers=1, max_rounds=3)]),
}


def check_state_table(rows: list[list[str]], dicts: list[dict]) -> None:
    """The documented keys are the dicts' keys in order, and every value fits its type."""
    documented = [(ticked(r[0]), r[1]) for r in rows]
    assert [key for key, _ in documented] == list(dicts[0]), "the table's keys are not to_dict's, in order"
    for d in dicts:
        for key, kind in documented:
            assert value_fits(d[key], kind), f"{key} = {d[key]!r} is not {kind}"


@pytest.mark.parametrize("doc", sorted(STATE_DOCS))
def test_state_dict_table_matches_to_dict(doc):
    state_class, configs = STATE_DOCS[doc]
    dicts = sample_dicts(state_class, configs)
    check_state_table(table(["key", "type", "meaning"], DOCS / doc), dicts)
    if doc == "gin_rummy.md":
        check_state_table(table(["match key", "type", "meaning"], DOCS / doc), [d["match"] for d in dicts])
    if doc == "rummy500.md":
        melds = [m for d in dicts for m in d["melds"]]
        assert melds
        check_state_table(table(["meld key", "type", "meaning"], DOCS / doc), melds)


def test_hollywood_state_dict_table_matches_the_sheet():
    from rummy_envs.games.hollywood_gin import HollywoodConfig, HollywoodState

    dicts = sample_dicts(HollywoodState, [HollywoodConfig(episode="match", target_score=30, max_hands_per_match=4)])
    assert [ticked(r[0]) for r in table(["key", "type", "meaning"])] == list(dicts[0])  # gin's table holds
    check_state_table(table(["match key", "type", "meaning"], HOLLYWOOD_DOC), [d["match"] for d in dicts])


def test_value_fits_has_teeth():
    assert value_fits([["AS", 0]], "list of [card, int]") and not value_fits([["AS", "0"]], "list of [card, int]")
    assert value_fits(None, "card or null") and not value_fits("A", "card or null")
    assert value_fits([[1, 2]], "list of list of int") and not value_fits([[True]], "list of list of int")
