"""docs/manipulation_rummy.md agrees with the code: the observation, options, action, phase,
info, view and state-dict tables and the documented sizes, and its ``>>>`` examples run."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import random
import re

from rummy_envs import manipulation_rummy_v0
from rummy_envs.games import manipulation_rummy as M
from test_docs import DOCS, table, ticked

DOC = DOCS / "manipulation_rummy.md"
ENV_OPTIONS = ("render_mode", "reward", "reward_scale", "illegal_action", "rich_info")


def test_observation_table_matches_layout():
    rows = table(["segment", "offset", "size", "meaning"], DOC)
    documented = [(ticked(r[0]), int(r[1]), int(r[2])) for r in rows]
    layout = manipulation_rummy_v0.raw_env().observation_layout()
    assert documented == [(s.name, s.offset, s.size) for s in layout.values()]


def test_options_table_names_defaults_and_choices():
    rows = table(["option", "default", "allowed", "meaning"], DOC)
    documented = {ticked(r[0]): ast.literal_eval(ticked(r[1])) for r in rows}
    assert len(documented) == len(rows), "an option is documented twice"
    defaults = {f.name: f.default for f in dataclasses.fields(M.ManipulationConfig)}
    signature = inspect.signature(manipulation_rummy_v0.raw_env.__init__)
    defaults.update({name: signature.parameters[name].default for name in ENV_OPTIONS})
    assert set(documented) == set(defaults)
    for name, value in documented.items():
        assert value == defaults[name] and type(value) is type(defaults[name]), name
    for row in rows:  # every quoted choice constructs an env
        for choice in re.findall(r'`("[^"`]*")`', row[2]):
            manipulation_rummy_v0.raw_env(**{ticked(row[0]): ast.literal_eval(choice)})


def test_action_table_matches_constants():
    rows = table(["action", "ids", "meaning"], DOC)
    ranges = {}
    for r in rows:
        bounds = [int(x) for x in re.findall(r"\d+", r[1])]
        ranges[ticked(r[0])] = (bounds[0], bounds[-1])
    assert {name: lo for name, (lo, _) in ranges.items()} == {name: getattr(M, name) for name in ranges}
    ends = sorted(ranges.values())
    assert ends[0][0] == 0 and ends[-1][1] == M.NUM_ACTIONS - 1
    for (_, hi), (lo, _) in zip(ends, ends[1:]):
        assert lo == hi + 1, "the documented id ranges must tile the action space"
    assert len(ranges) == 11
    placements = [ticked(r[0]).split("(")[0] for r in table(["placement", "effect"], DOC)]
    assert placements == ["PLACE", "JOKER_AS", "REPLACE_FROM_HAND", "REPLACE_FROM_TABLE", "FREED_AS"]


def test_phase_info_and_view_tables():
    phases = [ticked(r[0]) for r in table(["Phase", "Who acts"], DOC)]
    assert phases == [p.name for p in M.Phase]
    fields = [ticked(r[0]) for r in table(["field", "meaning"], DOC)]
    assert fields == [f.name for f in dataclasses.fields(M.RoundResult)] + ["hand_number", "seat"]
    text = DOC.read_text()
    for field in dataclasses.fields(M.ManipulationView):
        assert f"`{field.name}`" in text, f"player view field {field.name} is not documented"


def test_state_dict_tables_list_to_dicts_keys():
    rng = random.Random(4)
    state = M.ManipulationState(M.ManipulationConfig(num_players=2), seed=1)
    keys = [ticked(r[0]) for r in table(["key", "type", "meaning"], DOC)]
    assert keys == list(state.to_dict()) == list(M.STATE_KEYS)
    while not state.in_commit:
        state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal():
            state = M.ManipulationState(state.config, rng.randrange(100))
    commit_keys = [ticked(r[0]) for r in table(["commit key", "type", "meaning"], DOC)]
    assert commit_keys == list(state.to_dict()["commit"]) == list(M.COMMIT_KEYS)


def test_documented_sizes():
    text = DOC.read_text()
    env = manipulation_rummy_v0.raw_env()
    assert f"Discrete({M.NUM_ACTIONS})" in text and f"int8[{M.NUM_ACTIONS}]" in text
    assert f"float32[{env.observation_size}]" in text
    env.reset(seed=0)
    assert f"{env.state().shape[0]} entries by default" in text
    two, five = manipulation_rummy_v0.raw_env(num_players=2), manipulation_rummy_v0.raw_env(num_players=5)
    assert f"two players have {two.observation_size} entries, five {five.observation_size}" in text


def test_the_examples_run():
    """The ``>>>`` examples in the fenced python blocks, run in order with shared names."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    globs: dict[str, object] = {}
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for i, block in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(block, globs, f"manipulation_rummy.md[{i}]", str(DOC), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs
    assert runner.tries > 10 and runner.failures == 0, "failing example(s); run pytest -s to see them"
