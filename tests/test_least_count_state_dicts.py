"""Least Count's state dicts (docs/least_count.md#state-dicts): ``from_dict`` refuses what the
rules cannot reach (totals, eliminations and the match end against the recorded rounds and
the options, the open set, the history against the phase and the turns, a finished game's
hands), and an env reset from a dict pays, in every reward mode, what the env that wrote the
dict pays from the same point, zero-sum.

Each refusal is checked on a dict that differs from a reachable one (a point of a seeded
random game, or a scenario) in the one way named; the unchanged dicts are read back."""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable

import pytest

from rummy_envs import cards as C
from rummy_envs import least_count_v0
from rummy_envs.envs.base import rank_rewards
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState
from test_least_count_rules import scenario

MATCH = {"num_players": 4, "episode": "match", "elimination_score": 30}


def points_of(seed: int = 0, **options) -> list[dict]:
    """The dict of every point of a seeded random game under ``options``."""
    state = LeastCountState(LeastCountConfig(**options), seed=seed)
    rng = random.Random(seed)
    points = [state.to_dict()]
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        points.append(state.to_dict())
    return points


def after_elimination(points: list[dict]) -> dict:
    """The first point of a match in play with a seat out and two rounds recorded."""
    return copy.deepcopy(next(d for d in points if any(d["out_round"]) and d["phase"] != "GAME_OVER"
                              and len(d["hand_results"]) >= 2))


def final(**options) -> dict:
    return copy.deepcopy(points_of(**options)[-1])


def refused(data: dict, field: str) -> None:
    """``from_dict`` refuses ``data`` naming ``field`` (or an entry of it), and leaves the dict
    as it was."""
    before = copy.deepcopy(data)
    with pytest.raises(ValueError, match=re.escape(f"'{field}")):
        LeastCountState.from_dict(data)
    assert data == before


# -- rewards from a state read mid-match ----------------------------------------------------
def live_step(env, rng: random.Random) -> int | None:
    """The action of the agent selected: a random legal one, or None for a dead step."""
    raw = env.unwrapped
    agent = raw.agent_selection
    return None if raw.terminations[agent] or raw.truncations[agent] else rng.choice(raw.game.legal_actions())


@pytest.mark.parametrize("reward", ["points", "win_loss"])
def test_a_state_read_after_an_elimination_pays_what_its_writer_pays(reward):
    """Played on with the same actions, an env reset from the dict of a match with a seat out
    pays each step exactly what the env that wrote it pays, zero-sum, and so does an env
    reset from the dict of the finished match (at reset)."""
    options = {**MATCH, "reward": reward, "reward_scale": 2.0}
    checked = 0
    for seed in range(4):
        env = least_count_v0.env(**options)
        raw = env.unwrapped
        env.reset(seed=seed)
        rng = random.Random(seed)
        whole = 0.0
        while raw.agents and not (any(raw.game.out_round) and not any(raw.terminations.values())):
            env.step(live_step(env, rng))
            whole += sum(raw.rewards.values())
        if not raw.agents:
            continue
        loaded = least_count_v0.env(**options)
        loaded.reset(options={"state": raw.game.to_dict()})
        assert loaded.unwrapped.agents == raw.agents and loaded.agent_selection == env.agent_selection
        since = [0.0, 0.0]
        while raw.agents:
            action = live_step(env, rng)
            env.step(action)
            loaded.step(action)
            assert loaded.unwrapped.rewards == pytest.approx(raw.rewards)
            since[0] += sum(raw.rewards.values())
            since[1] += sum(loaded.unwrapped.rewards.values())
        whole += since[0]
        assert since == pytest.approx([0.0, 0.0], abs=1e-9) and whole == pytest.approx(0.0, abs=1e-9)
        over = least_count_v0.env(**options)
        over.reset(options={"state": raw.game.to_dict()})
        assert sum(over.unwrapped.rewards.values()) == pytest.approx(0.0, abs=1e-9)
        checked += 1
    assert checked


def test_a_match_round_played_as_one_episode_pays_zero_sum_with_seats_out():
    """A match's round read as a one-round episode (``episode="hand"``) with a seat out of
    the match: the seat ranks below the round's players and win_loss stays zero-sum."""
    data = after_elimination(points_of(1, **MATCH))
    data["options"]["episode"] = "hand"
    out = [q for q in range(4) if data["out_round"][q]]
    env = least_count_v0.env(**{**MATCH, "episode": "hand", "reward": "win_loss"})
    raw = env.unwrapped
    env.reset(options={"state": data})
    rng = random.Random(0)
    paid = 0.0
    while raw.agents:
        env.step(live_step(env, rng))
        paid += sum(raw.rewards.values())
    standings = raw.game.standings()
    assert paid == pytest.approx(0.0, abs=1e-9)
    assert all(standings[q] < min(standings[p] for p in range(4) if p not in out) for q in out)


def test_places_and_eliminations_need_no_recorded_rounds():
    """A match read at round 4 without its results: the seat out after round 2 ranks last,
    and a seat the round eliminates is out after round 4 and ranks above it."""
    config = LeastCountConfig(num_players=3, episode="match")
    state = LeastCountState.from_dict({
        "options": config.as_options(), "round_index": 3, "dealer": 2, "phase": "TURN_START", "current_player": 1,
        "hands": [[], ["AC"], ["TC"]], "open_set": ["KS"], "dead_pile": [], "turn_done": [False, True, True],
        "stock": [c for c in C.format(config.full_deck()).split() if c not in ("AC", "TC", "KS")],
        "totals": [120, 0, 95], "out_round": [2, 0, 0]})
    assert state.standings() == [-3, -1, -2]
    state.apply(L.DECLARE)  # valid: seat 2 scores 9, 104 in all
    assert state.out_round == [2, 0, 4] and state.winners == [1] and state.standings() == [-3, -1, -2]
    assert LeastCountState.from_dict(state.to_dict()).to_dict() == state.to_dict()


# -- refusals -------------------------------------------------------------------------------
def test_hand_totals_must_be_those_of_the_last_recorded_round():
    data = final(seed=2)
    LeastCountState.from_dict(data)
    data["totals"][0] += 5
    refused(data, "totals")
    played = after_elimination(points_of(1, **MATCH))  # a match's round read as one episode
    played["options"]["episode"] = "hand"
    LeastCountState.from_dict(played)
    played["totals"][0] += 1
    refused(played, "totals")


def test_totals_are_at_most_what_max_rounds_rounds_score():
    data = scenario(["AC", "TC"], totals=[7000, 0], episode="match").to_dict()  # 100 rounds of 20 + 5 * 10
    refused({**data, "totals": [7001, 0]}, "totals[0]")


def test_the_open_set_is_a_legal_discard_of_a_hand():
    for cards in ("6H 7H 8H", "6H 6C", "KS"):
        assert scenario(["AC 2C", "TC"], open_set=cards).open_set
    with pytest.raises(ValueError, match="'open_set'"):
        scenario(["AC 2C", "TC"], open_set="6H 7H")
    with pytest.raises(ValueError, match="'open_set'"):
        scenario(["AC 2C", "TC"], open_set="2S 7S 9S JS KS", hand_size=4)  # a flush of five, hands of four


def test_after_a_turn_the_open_set_is_not_empty():
    data = copy.deepcopy(next(d for d in points_of(3) if d["turns"] and d["phase"] == "TURN_START"))
    data["stock"] += data["open_set"]
    data["open_set"] = []
    refused(data, "open_set")


@pytest.mark.parametrize("hands, totals, out_round, dealer, options", [
    (["AC 2C", "", ""], [0, 120, 130], [0, 1, 1], 0, {}),  # one seat left: the match is over
    (["AC", "TC", ""], [0, 10, 120], [0, 0, 1], 1, {"match_end": "first_elimination"}),
], ids=["last_player_standing", "first_elimination"])
def test_eliminations_that_ended_the_match_are_refused_in_play(hands, totals, out_round, dealer, options):
    with pytest.raises(ValueError, match="'out_round'"):
        scenario(hands, totals=totals, out_round=out_round, rounds_played=1, dealer=dealer, episode="match",
                 **options)


def un_eliminated(data: dict) -> dict:
    """A finished match whose last round eliminated nobody: its seats out then are in."""
    for q in data["hand_results"][-1]["eliminated"]:
        data["out_round"][q] = 0
    data["hand_results"][-1]["eliminated"] = []
    return data


@pytest.mark.parametrize("options, change, field", [
    (MATCH, lambda d: {**un_eliminated(d), "winners": [q for q in range(4) if not d["out_round"][q]]}, "phase"),
    ({**MATCH, "match_end": "first_elimination"}, un_eliminated, "phase"),
    ({**MATCH, "max_turns_per_round": 6, "max_rounds": 3},
     lambda d: {**d, "options": {**d["options"], "max_rounds": 5}}, "truncated"),
], ids=["two_standing", "no_first_elimination", "cut_early"])
def test_a_finished_match_ended_as_the_match_end_says(options, change: Callable, field):
    """The last player standing is alone; a first elimination happened in the last round; a
    match is cut only at max_rounds."""
    data = final(**options)
    LeastCountState.from_dict(data)
    refused(change(data), field)


def drop_first_result(data: dict) -> dict:
    data["hand_results"].pop(0)
    return data


def drop_elimination(data: dict) -> dict:
    for result in data["hand_results"]:
        result["eliminated"] = []
    return data


def last_pick_undone(data: dict) -> dict:
    data["history"].append(L.PICK_CLOSED)
    return data


@pytest.mark.parametrize("change, field", [
    (drop_elimination, "out_round"),  # the rounds recorded eliminated nobody
    (drop_first_result, "history"),  # the history ends a round not recorded
    (lambda d: {**d, "turns": d["turns"] + 1}, "turns"),  # more turns than picks since the last declaration
    (last_pick_undone, "history"),  # a pick that follows a pick
    (lambda d: {**d, "options": {**d["options"], "max_rounds": d["round_index"]}}, "round_index"),
], ids=["eliminations", "results", "turns", "pick_after_pick", "max_rounds"])
def test_a_match_in_play_agrees_with_its_results_and_history(change: Callable, field):
    data = after_elimination(points_of(1, **MATCH))
    LeastCountState.from_dict(data)
    refused(change(data), field)


def test_the_history_fits_the_phase_and_the_turns_of_the_first_round():
    points = points_of(4)
    picking = copy.deepcopy(next(d for d in points if d["phase"] == "PICK" and d["turns"]))
    picking["history"].pop()
    refused(picking, "history")  # in PICK, the last action is a discard
    early = copy.deepcopy(next(d for d in points if d["turns"] > 2 and d["phase"] == "TURN_START"))
    refused({**early, "turns": early["turns"] - 1}, "turns")  # fewer turns than picks in the first round
    refused({**early, "phase": "GAME_OVER", "current_player": -1}, "history")  # over after a pick, not timed out


def test_a_finished_game_shows_the_hands_of_its_last_round():
    data = final(seed=5)
    seat = next(q for q in range(4) if data["hands"][q] and not data["known"][q])
    data["hands"][seat][0], data["stock"][0] = data["stock"][0], data["hands"][seat][0]
    data["hands"][seat] = C.format(sorted(C.parse(" ".join(data["hands"][seat])))).split()
    refused(data, "hand_results[0].hands")


def test_a_recorded_round_scores_nothing_for_seats_not_dealt_in():
    data = scenario(["AC", "TC", ""], totals=[0, 4, 120], out_round=[0, 0, 1], rounds_played=2, dealer=1,
                    episode="match").to_dict()
    record = {"kind": "valid_declaration", "declarer": 0, "players": [0, 1], "totals": [0, 4, 120]}
    LeastCountState.from_dict({**data, "hand_results": [{"kind": "timeout"}, {**record, "points": [0, 4, 0]}]})
    refused({**data, "hand_results": [{"kind": "timeout"}, {**record, "points": [0, 4, 2]}]}, "hand_results[1].points")
    refused({**data, "hand_results": [{"kind": "timeout", "cut_card": 5}]}, "hand_results[0].cut_card")


def test_win_loss_pays_eliminated_seats_their_final_places():
    """What the fix of the loaded rewards relies on: a seat's place, fixed when it is
    eliminated, is its place at the end."""
    for seed in range(3):
        points = points_of(seed, **MATCH)
        last = LeastCountState.from_dict(points[-1]).standings()
        for d in points[::5]:
            state = LeastCountState.from_dict(d)
            ranks, final_ranks = rank_rewards(state.standings()), rank_rewards(last)
            assert all(ranks[q] == final_ranks[q] for q in range(4) if state.out_round[q])


def test_rounds_timed_out_fit_the_turn_count():
    """A match whose rounds all timed out (no declaration in the history): the turn count now
    says how many turns the history's first round had before it, so how many rounds the
    history ends; here two, with one played."""
    state = LeastCountState(LeastCountConfig(**MATCH, max_turns_per_round=6), seed=1)
    while state.round_index < 1 or state.turns < 2:
        state.apply(state.legal_actions()[-1])  # never declares
    data = state.to_dict()
    LeastCountState.from_dict(data)
    refused({**data, "turns": 0}, "turns")


def test_a_round_ends_by_a_declaration_of_a_seat_that_played_a_turn():
    data = next(d for d in points_of(6) if d["phase"] == "GAME_OVER")
    declarer = data["hand_results"][-1]["declarer"]
    assert declarer >= 0 and data["turn_done"][declarer]
    refused({**data, "turn_done": [q != declarer for q in range(4)]}, "phase")
    refused({**points_of(6)[0], "phase": "GAME_OVER", "current_player": -1}, "phase")  # over at the deal
    anytime = points_of(6, declare_timing="start_of_any_turn")[0]
    LeastCountState.from_dict({**anytime, "phase": "GAME_OVER", "current_player": -1})  # declared at once
