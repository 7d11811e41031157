"""State dicts of every game, for every env of the contract suite (SPECS in
tests/test_env_contract.py, so a game listed there gets these checks): the format and its
version, round trips at random points of random games (also through JSON text), fuzzed
dicts, and the examples of the issue.

Fuzzing: hypothesis picks a rule set, a game, a point in it and a few mutations of its dict
(``env_contract.MUTATION_KINDS``: keys dropped or renamed, cards moved between zones,
duplicated, swapped or replaced, values of a wrong type, ints out of range, the phase or a
flag changed; summaries that disagree with the history, another seat to move, a single-card
field changed, a recorded hand dropped or repeated). ``from_dict`` must refuse the result
with a ValueError naming a field of the format, or accept a state that passes the game's
invariants, round-trips, plays to the end under random play with the invariants holding,
and, loaded into the env under a random reward mode, is paid zero-sum. 80 to 200 dicts
per game run by default (fewer where dicts play out slowly), many thousands under ``-m slow``, where a seeded census of 1,000
per spec (game and player count) also prints its counts per mutation kind.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import env_contract as contract
from env_contract import GameSpec, params
from rummy_envs import gin_rummy_v0, state_dicts
from refusals import Case, changed, check_table, edit
from rummy_envs.games import gin_rummy as G
from rummy_envs.games import hollywood_gin as H
from rummy_envs.games import rummy500 as R
from test_env_contract import SPECS

FUZZ_PER_GAME = 200
FUZZ_BUDGETS = {"rummy500": 120, "manipulation_rummy": 80}  # games whose dicts play out slowly: fewer
SLOW_FACTOR = 30
SPECS_PER_GAME = Counter((spec.module, spec.slow_contract) for spec in SPECS)


def examples(spec: GameSpec, factor: int = 1) -> int:
    """A game's fuzzing budget shared among its specs (player counts) of the same run: the
    default run's specs share one budget, the ``slow_contract`` ones another."""
    budget = FUZZ_BUDGETS.get(spec.module.__name__.rsplit(".", 1)[-1].removesuffix("_v0"), FUZZ_PER_GAME)
    return factor * budget // SPECS_PER_GAME[spec.module, spec.slow_contract]


def draw_point(spec: GameSpec, data: st.DataObject) -> dict:
    """The dict of a random point of a random game (rule set, seed, point drawn)."""
    name = data.draw(st.sampled_from(sorted(spec.rule_sets)), label="rule set")
    seed = data.draw(st.integers(0, 11), label="game seed")
    points = contract.game_points(spec, name, seed)
    return points[data.draw(st.integers(0, len(points) - 1), label="point")]


def fuzz_once(spec: GameSpec, data: st.DataObject) -> None:
    point = draw_point(spec, data)
    rng = random.Random(data.draw(st.integers(0, 2**32), label="mutation seed"))
    phases = [p.name for p in type(spec.new_state({}, 0).phase)]
    mutated, done = contract.mutate(point, rng, data.draw(st.integers(1, 3), label="mutations"), phases)
    note(f"mutations: {done}")
    contract.check_dict(spec, mutated, rng)


FUZZ_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                             HealthCheck.data_too_large])


@pytest.mark.parametrize("spec", params(SPECS))
def test_fuzzed_state_dicts(spec):
    @settings(max_examples=examples(spec), **FUZZ_SETTINGS)
    @given(data=st.data())
    def fuzz(data):
        fuzz_once(spec, data)

    fuzz()


@pytest.mark.slow
@pytest.mark.parametrize("spec", params(SPECS))
def test_fuzzed_state_dicts_slow(spec):
    @settings(max_examples=examples(spec, SLOW_FACTOR), deadline=None, derandomize=False,
              suppress_health_check=FUZZ_SETTINGS["suppress_health_check"])
    @given(data=st.data())
    def fuzz(data):
        fuzz_once(spec, data)

    fuzz()


CENSUS_DICTS = 1000


@pytest.mark.slow
@pytest.mark.parametrize("spec", params(SPECS, always=True))
def test_fuzz_census(spec):
    """``CENSUS_DICTS`` mutated dicts of every spec (game and player count), seeded, over every rule set and
    mutation kind: every one refused naming a field or accepted, played to the end and paid
    zero-sum by the env. Prints the counts per mutation kind (run with ``-s`` to see them)."""
    rng = random.Random(2026)
    phases = [p.name for p in type(spec.new_state({}, 0).phase)]
    names = sorted(spec.rule_sets)
    counts: dict[str, Counter] = {}
    totals: Counter = Counter()
    for i in range(CENSUS_DICTS):
        points = contract.game_points(spec, names[i % len(names)], rng.randrange(12))
        mutated, done = contract.mutate(rng.choice(points), rng, rng.randint(1, 3), phases)
        try:
            accepted = contract.check_dict(spec, mutated, rng)
        except AssertionError as failure:
            raise AssertionError(f"dict {i}, mutations {done}: {failure}") from failure
        outcome = "accepted" if accepted else "refused"
        totals[outcome] += 1
        for what in done:
            counts.setdefault(what.split()[0].rstrip(":"), Counter())[outcome] += 1
    print(f"\n{spec.id}: {CENSUS_DICTS} dicts, {dict(totals)}; dicts with each mutation kind: "
          + ", ".join(f"{kind} {dict(c)}" for kind, c in sorted(counts.items())))
    assert totals["accepted"] and totals["refused"]


@pytest.mark.parametrize("spec", params(SPECS))
def test_fuzzing_accepts_and_refuses(spec):
    """The mutations reach both outcomes: some dicts are refused, some accepted and played on."""
    rng = random.Random(5)
    phases = [p.name for p in type(spec.new_state({}, 0).phase)]
    outcomes = Counter()
    for seed in range(4):
        for point in contract.game_points(spec, next(iter(spec.rule_sets)), seed)[::4]:
            mutated, _ = contract.mutate(point, rng, 1, phases)
            outcomes[contract.check_dict(spec, mutated, rng)] += 1
    assert outcomes[True] and outcomes[False], outcomes


@pytest.mark.parametrize("spec", params(SPECS))
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trips_at_random_points(spec, data):
    """``from_dict(to_dict(s))`` is ``s`` at random points of random games, through JSON too."""
    point = draw_point(spec, data)
    state = spec.state_class.from_dict(point)
    assert state.to_dict() == point
    contract.round_trip(spec, state)


@pytest.mark.parametrize("spec", params(SPECS))
def test_state_dict_format(spec):
    contract.state_dict_format(spec)


# -- the examples of the issue, on gin_rummy_v0 through reset ---------------------------------
def gin_dict() -> dict:
    return G.GinState(G.GinConfig(), seed=1).to_dict()


@pytest.mark.parametrize("change, field, expected", [
    ({"phase": "NOPE"}, "phase", "expected one of 'OFFER_ND'"),
    ({"current_player": 7}, "current_player", "expected an integer -1..1"),
])
def test_issue_examples_bad_values(change, field, expected):
    env = gin_rummy_v0.env()
    with pytest.raises(ValueError) as info:
        env.reset(options={"state": {**gin_dict(), **change}})
    assert contract.named_fields(str(info.value)) == [field] and expected in str(info.value)


def test_issue_example_not_a_dict():
    with pytest.raises(ValueError, match="state dict: expected a mapping of field names to values, got 5"):
        gin_rummy_v0.env().reset(options={"state": 5})


def test_reset_from_an_engine_state_copies_it_and_refuses_other_rules():
    """``reset(options={"state": engine_state})`` plays a copy of the position (the given state
    never changes) and refuses a state of other rules, naming the option."""
    env = gin_rummy_v0.env()
    position = G.GinState(G.GinConfig(), seed=4)
    before = position.to_dict()
    env.reset(options={"state": position})
    assert env.unwrapped.game.to_dict() == before and env.unwrapped.game is not position
    env.step(int(env.observe(env.agent_selection)["action_mask"].nonzero()[0][0]))
    assert position.to_dict() == before
    with pytest.raises(ValueError, match="reset option 'state'"):
        env.reset(options={"state": G.GinState(G.GinConfig(knock_limit=5), seed=4)})
    with pytest.raises(ValueError, match="reset option 'state'"):
        env.reset(options={"state": H.HollywoodState(H.HollywoodConfig(), seed=4)})


def test_issue_example_hands_of_7_and_13():
    d = gin_dict()
    hands = d["hands"][0] + d["hands"][1]
    with pytest.raises(ValueError, match="state dict field 'hands': hands of 7 and 13 cards in phase OFFER_ND; "
                                         "expected 10 and 10"):
        gin_rummy_v0.env().reset(options={"state": {**d, "hands": [hands[:7], hands[7:]]}})


def test_issue_example_discard_phase_with_ten_cards():
    d = gin_dict()
    with pytest.raises(ValueError, match="state dict field 'hands': hands of 10 and 10 cards in phase DISCARD; "
                                         "expected 10 and 11"):
        gin_rummy_v0.env().reset(options={"state": {**d, "phase": "DISCARD", "current_player": 1}})


# -- check_playable, the rule every reader ends with, on a toy turn --------------------------
class ToyTurn:
    """A turn as a graph of positions: ``MOVES[position]`` maps each legal action to the next
    position (``"end"`` passes the turn); UNDO (action 0) puts back what was picked, and its
    counter moves on each time, as Rummy 500's CANCEL counts a turn step."""

    UNDO_ACTIONS = frozenset({0})
    MOVES: dict[str, dict[int, str]] = {}
    clones = 0

    class Phase:
        name = "PICK"

    def __init__(self, position: str = "start", undos: int = 0) -> None:
        self.position, self.undos, self.phase = position, undos, ToyTurn.Phase

    def is_terminal(self) -> bool:
        return False

    @property
    def current_player(self) -> int:
        return 1 if self.position == "end" else 0

    def legal_actions(self) -> list[int]:
        return sorted(self.MOVES.get(self.position, {}))

    def clone(self) -> ToyTurn:
        ToyTurn.clones += 1
        return type(self)(self.position, self.undos)

    def apply(self, action: int) -> None:
        self.undos += action in self.UNDO_ACTIONS
        self.position = self.MOVES[self.position][action]

    def player_view(self, player: int) -> tuple[str, int]:
        return self.position, self.undos


def toy(moves: dict[str, dict[int, str]]) -> ToyTurn:
    ToyTurn.MOVES, ToyTurn.clones = moves, 0
    return ToyTurn()


# start: pick a, b or c (each a group of one); from a group: UNDO back to start, or pick on;
# only a group of three melds (5), after which 7 discards and ends the turn
PICKS = {"start": {1: "a", 2: "b", 3: "c"}, "a": {0: "start", 2: "ab", 3: "ac"}, "b": {0: "start", 1: "ab", 3: "bc"},
         "c": {0: "start", 1: "ac", 2: "bc"}, "ab": {0: "start", 3: "abc"}, "ac": {0: "start", 2: "abc"},
         "bc": {0: "start", 1: "abc"}, "abc": {0: "start", 5: "melded"}, "melded": {7: "end"}}


def test_check_playable_finds_a_deep_finish_without_going_round_undo_loops():
    """The finish is five actions deep and every position offers UNDO first (the lowest id
    in Rummy 500); a search that follows it re-enters the start with a new counter each
    time until its limit (about 2,000 clones per dict, what slowed every Rummy 500 reader)."""
    state = toy(PICKS)
    state_dicts.check_playable(state)
    assert ToyTurn.clones < 30 and state.position == "start" and state.undos == 0


def test_check_playable_uses_an_undo_where_it_is_the_way_out():
    """A dict read mid-group whose group cannot meld: putting it back is the way to go on."""
    state = toy({"start": {1: "a"}, "a": {0: "back", 2: "stuck"}, "back": {7: "end"}})
    state.position = "a"
    state_dicts.check_playable(state)


def test_check_playable_refuses_a_turn_that_cannot_end():
    """The issue's example: a pending group whose only way on (UNDO) leads where nothing is
    legal; and a position with no legal action at all."""
    with pytest.raises(ValueError, match="field 'phase': player 0 cannot finish the turn begun in phase PICK"):
        state_dicts.check_playable(toy({"start": {0: "dead"}}))
    with pytest.raises(ValueError, match="field 'phase': player 0 has no legal action in phase PICK"):
        state_dicts.check_playable(toy({}))


# -- the shared reader, clause by clause (tests/refusals.py) ------------------------------
def hollywood_dict() -> dict:
    return H.HollywoodState(H.HollywoodConfig(), seed=1).to_dict()


def gin_over_dict() -> dict:
    state, rng = G.GinState(G.GinConfig(), seed=1), random.Random(0)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state.to_dict()


def through_env(d):
    """The reset path: ``with_env_options`` first, then the game's reader."""
    gin_rummy_v0.env().reset(options={"state": d})


SHARED_CASES = {
    "not_a_mapping": Case(gin_dict, lambda d: 5, None),
    "an_unknown_key": Case(gin_dict, lambda d: changed(d, bogus=1), "bogus"),
    "a_required_key_left_out": Case(gin_over_dict, lambda d: changed(d, hand_results=[
        {k: v for k, v in d["hand_results"][0].items() if k != "kind"}]), "hand_results[0].kind"),
    "a_nested_record_not_a_mapping": Case(gin_dict, edit("match", 5), "match"),
    "an_integer_of_another_type": Case(gin_dict, edit("current_player", "0"), "current_player"),
    "an_integer_below_its_range": Case(gin_dict, edit("current_player", -2), "current_player"),
    "an_integer_past_its_range": Case(gin_dict, edit("current_player", 2), "current_player"),
    "a_choice_of_another_type": Case(gin_dict, edit("phase", 1), "phase"),
    "a_choice_not_offered": Case(gin_dict, edit("phase", "NOPE"), "phase"),
    "text_of_another_type": Case(lambda: R.Rummy500State(R.Rummy500Config(), seed=1).to_dict(),
                                 edit("daily_date", 5), "daily_date", R.Rummy500State.from_dict),
    "a_list_of_another_type": Case(gin_dict, edit("hands", 5), "hands"),
    "a_list_of_the_wrong_length": Case(gin_dict, lambda d: changed(d, hands=[*d["hands"], []]), "hands"),
    "cards_of_another_type": Case(gin_dict, edit("hands.0", 5), "hands[0]"),
    "a_card_of_another_type": Case(gin_dict, edit("hands.0.0", 1.5), "hands[0][0]"),
    "a_card_given_as_a_bool": Case(gin_dict, edit("hands.0.0", True), "hands[0][0]"),
    "a_card_that_is_no_card": Case(gin_dict, edit("hands.0.0", "ZZ"), "hands[0][0]"),
    "a_joker_in_a_game_without": Case(gin_dict, edit("hands.0.0", "JK"), "hands[0][0]"),
    "a_boolean_of_another_type": Case(gin_dict, edit("passed.0", 0), "passed[0]"),
    "a_mapping_of_another_type": Case(gin_dict, edit("options", [1]), "options"),
    "a_grid_row_of_another_type": Case(hollywood_dict, edit("match.score.0", 5), "match.score[0]",
                                       H.HollywoodState.from_dict),
    "a_grid_row_of_the_wrong_length": Case(hollywood_dict, edit("match.score.0", [0, 0]), "match.score[0]",
                                           H.HollywoodState.from_dict),
    "a_version_of_another_type": Case(gin_dict, edit(state_dicts.VERSION_KEY, "1"), state_dicts.VERSION_KEY),
    "a_version_not_readable": Case(gin_dict, edit(state_dicts.VERSION_KEY, max(state_dicts.READABLE_VERSIONS) + 1),
                                   state_dicts.VERSION_KEY),
    "another_game": Case(gin_dict, edit("game", "rummy500"), "game"),
    "options_the_game_refuses": Case(gin_dict, edit("options.knock_limit", "ten"), "options"),
    "a_card_twice": Case(gin_dict, lambda d: changed(d, stock=[d["hands"][0][0], *d["stock"][1:]]), "stock"),
    "not_a_mapping_at_reset": Case(gin_dict, lambda d: 5, None, through_env),
    "options_not_a_mapping_at_reset": Case(gin_dict, edit("options", 5), "options", through_env),
    "options_the_game_refuses_at_reset": Case(gin_dict, edit("options.knock_limit", "ten"), "options", through_env),
    "options_other_than_the_envs": Case(gin_dict, edit("options.knock_limit", 5), "options", through_env),
}
SHARED_EXEMPT = {
    "raise field_error(\"phase\", f\"player {player} has no legal action in phase {phase}\")":
        "every game's own checks refuse such a dict first; test_check_playable_* reach it on a toy turn",
    "raise field_error(\"phase\", f\"player {player} cannot finish the turn begun in phase {phase}: every sequence of \"":
        "as above: the toy turn of test_check_playable_refuses_a_turn_that_cannot_end",
}


def test_every_clause_of_the_shared_reader_refuses_its_own_case():
    check_table(G.GinState.from_dict, SHARED_CASES, ["rummy_envs/state_dicts.py"], SHARED_EXEMPT)
