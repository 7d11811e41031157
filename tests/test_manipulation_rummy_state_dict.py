"""Manipulation Rummy's state dicts (docs/manipulation_rummy.md#state-dicts): ``from_dict``
refuses, naming the field, every position the rules could not reach (the summaries of the
game against what they summarise, the turn, the commit in progress) and leaves the dict
as it was; the positions of seeded games read back. The reader's older refusals are tested
in tests/test_manipulation_rummy_rules.py (``test_bad_state_dicts_rejected``,
``test_match_dicts_must_agree_with_their_round_results``)."""

from __future__ import annotations

import copy
import random

import pytest

from rummy_envs.games.manipulation_rummy import ManipulationConfig, ManipulationState, Phase
from test_manipulation_rummy_rules import meldy, play, scenario

MATCH = {"episode": "match", "target_score": 60}
TRUNCATED = {"episode": "match", "target_score": 400, "max_rounds": 2}
WINNER_DEALS = {"episode": "match", "target_score": 100, "next_dealer": "winner"}


def game(seed: int, **options) -> list[ManipulationState]:
    """Every position of a seeded two-player game played to the end by ``meldy``."""
    rng = random.Random(seed)
    state = ManipulationState(ManipulationConfig(**{"num_players": 2, **options}), seed=seed)
    states = [state.clone()]
    while not state.is_terminal():
        state.apply(meldy(state, rng))
        states.append(state.clone())
    return states


def mid_round(seed: int, round_index: int, **options) -> dict:
    """The dict of the first meld decision of round ``round_index`` of a seeded game."""
    return next(s for s in game(seed, **options) if s.round_index == round_index and s.phase == Phase.MELD
                and not s.in_commit).to_dict()


def refused(data: dict, *fields: str) -> str:
    """``from_dict`` refuses ``data`` naming each of ``fields``, and leaves it as it was."""
    before = copy.deepcopy(data)
    with pytest.raises(ValueError) as info:
        ManipulationState.from_dict(data)
    assert data == before, "from_dict changed the dict it refused"
    message = str(info.value)
    assert all(repr(name) in message for name in fields), message
    return message


def read_back(data: dict) -> ManipulationState:
    state = ManipulationState.from_dict(data)
    assert state.to_dict() == data
    return state


@pytest.mark.parametrize("options", [{}, MATCH])
def test_winners_are_listed_only_once_the_game_is_over(options):
    d = mid_round(1, 0, **options)
    read_back(d)
    for winners in ([0], [0, 1]):
        refused({**d, "winners": winners}, "winners")


def test_a_finished_hand_lists_the_winners_of_its_round():
    d = game(1)[-1].to_dict()
    assert d["winners"] == d["hand_results"][0]["winners"] == [1]
    read_back(d)
    for winners in ([0], [0, 1], []):
        refused({**d, "winners": winners}, "winners")


def test_a_won_match_lists_the_leaders_of_its_final_totals():
    d = game(5, **MATCH)[-1].to_dict()
    assert d["winners"] == [0] and d["final"] == [197, 0]
    read_back(d)
    for winners in ([1], [0, 1], []):
        refused({**d, "winners": winners}, "winners")
    refused({**d, "final": [198, 0]}, "final")
    refused({**d, "final": None}, "final")  # its last round is recorded: it ended the match
    refused({**d, "options": {**d["options"], "target_score": 80}}, "totals")  # 72 does not reach it


def test_a_truncated_match_ends_at_the_round_cap_without_winners():
    d = game(5, **TRUNCATED)[-1].to_dict()
    assert d["truncated"] and d["round_index"] == 1 and d["final"] is None
    read_back(d)
    refused({**d, "winners": [0]}, "winners")
    refused({**d, "truncated": False}, "truncated")
    refused({**d, "options": {**d["options"], "max_rounds": 3}}, "truncated")
    refused({**d, "options": {**d["options"], "target_score": 130}}, "truncated")  # 134 won the match
    hand = game(1)[-1].to_dict()
    refused({**hand, "truncated": True}, "truncated")


def test_a_match_goes_on_only_while_nobody_has_won_it():
    d = mid_round(1, 2, **MATCH, tie_break="play_on")
    d.update(hand_results=[], totals=[70, 0], rounds_won=[2, 0])  # the two rounds before left unrecorded
    refused(d, "totals")
    tied = {**d, "totals": [70, 95], "rounds_won": [2, 1]}  # final totals tied at 220: play on
    read_back(tied)
    refused({**tied, "options": {**d["options"], "tie_break": "share"}}, "totals")


def test_a_hand_episode_plays_only_its_first_round():
    d = mid_round(1, 0)
    refused({**d, "round_index": 1}, "round_index")


def test_wins_and_points_fit_the_rounds_played():
    d = mid_round(1, 2, **WINNER_DEALS)
    d.update(hand_results=[], totals=[10, 5], rounds_won=[2, 0])  # the two rounds before left unrecorded
    refused(d, "totals")  # points go to round winners only
    refused({**d, "totals": [10, 0], "rounds_won": [3, 0]}, "rounds_won")  # three wins in two rounds


def test_the_dealer_follows_next_dealer():
    d = mid_round(1, 2, **MATCH)
    read_back(d)
    refused({**d, "dealer": 1 - d["dealer"]}, "dealer")
    refused({**d, "first_dealer": 1 - d["first_dealer"]}, "first_dealer")
    scenario_dict = {k: v for k, v in d.items() if k not in ("first_dealer", "hand_results")}
    assert ManipulationState.from_dict(scenario_dict).first_dealer == d["first_dealer"]  # implied by the dealer
    winner = mid_round(1, 2, **WINNER_DEALS)
    assert winner["hand_results"][1]["winners"] == [winner["dealer"]] == [0]
    read_back(winner)
    refused({**winner, "dealer": 1}, "dealer")
    first = mid_round(1, 0, **WINNER_DEALS)
    refused({**first, "first_dealer": 1 - first["dealer"]}, "first_dealer")


def test_a_finished_game_is_the_end_of_its_last_round():
    d = game(1)[-1].to_dict()
    result = d["hand_results"][0]
    hands = copy.deepcopy(d["hands"])
    hands[0][0], stock = d["stock"][0], [hands[0][0], *d["stock"][1:]]
    refused({**d, "hands": hands, "stock": stock}, "hands")  # not the hands the round ended with
    moved = copy.deepcopy(result)
    moved["hands"][1].append(moved["hands"][0].pop())
    refused({**d, "hand_results": [moved]}, "hand_results[0].values")  # the values of other hands
    knocked = game(0)[-1].to_dict()
    assert knocked["hand_results"][0]["kind"] == "knock" and knocked["stock"]
    stock_out = {**knocked["hand_results"][0], "kind": "stock_out", "ender": -1, "winners": [], "points": [],
                 "values": [], "hands": []}
    refused({**knocked, "hand_results": [stock_out]}, "stock")  # a stock-out leaves no stock


def test_a_round_result_shows_a_legal_table_of_the_decks_cards():
    d = mid_round(1, 2, **MATCH)
    result = next(r for r in d["hand_results"] if r["table"])
    i = d["hand_results"].index(result)
    meld = result["table"][0]

    def changed(**fields) -> dict:
        results = copy.deepcopy(d["hand_results"])
        results[i].update(fields)
        return {**d, "hand_results": results}

    refused(changed(table=[meld[:2], *result["table"][1:]]), f"hand_results[{i}].table")  # two cards: no meld
    refused(changed(table=[*result["table"], meld]), f"hand_results[{i}].table")  # one deck: a card twice
    off_table = next(c for c in range(52) if all(c not in m for m in result["table"]))
    message = refused(changed(table_jokers=[off_table]), f"hand_results[{i}].table_jokers")
    assert "identities of cards on the table" in message
    hands = copy.deepcopy(result["hands"])
    hands[0].append(meld[0])  # a card of the table in a hand too
    refused(changed(hands=hands, values=[], points=[], winners=[]), f"hand_results[{i}].hands")


def test_a_turn_fits_its_draws():
    s = scenario(["2C", "KS QS", "KH 9H"], phase="END_OF_TURN")
    read_back(s.to_dict())
    refused({**s.to_dict(), "draws": 0}, "draws")  # a knock decision after no draw
    s = scenario(["5H 6H", "KS QS", "KH 9H"], draws=1)
    read_back(s.to_dict())
    refused({**s.to_dict(), "draws": 2}, "draws")  # two draws into a hand of two
    s = scenario(["3C", "AH AD KC", "KS QS"], phase="TURN_START", draws=0, knock_timing="start_of_turn",
                 stock_top="5D", rest_to="table", num_decks=1)
    d = s.to_dict()
    empty = {**d, "stock": [], "hands": [d["hands"][0], d["hands"][1] + ["5D"], d["hands"][2]]}
    ManipulationState.from_dict(empty)  # with stock_out_trigger="required_draw" the draw ends the round
    refused({**empty, "options": {**d["options"], "stock_out_trigger": "last_card_drawn"}}, "stock")


def commit_state() -> ManipulationState:
    """Scenario M3 two placements into the commit: the joker at 8D freed by the hand's 8D, then 5S."""
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    play(s, "REPLACE_FROM_HAND(8D)", "PLACE(5S)")
    return s


def test_a_commit_counts_its_placements():
    d = commit_state().to_dict()
    read_back(d)
    read_back({**d, "commit": {**d["commit"], "ops": 3}})  # PLACE(8D), REPLACE_FROM_TABLE(8D), PLACE(5S)
    for ops in (1, 4):
        refused({**d, "commit": {**d["commit"], "ops": ops}}, "commit.ops")


def test_a_joker_changes_identity_only_once_freed():
    s = scenario(["5S 6S 7S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    play(s, "PLACE(5S)", "PLACE(6S)")
    d = s.to_dict()
    read_back(d)
    refused({**d, "table_jokers": ["7S"]}, "commit.start_jokers", "table_jokers")
    s = scenario(["JK 5S 6S QC", "2C 3D", "4H 5H"], table="7D 8D 9D")
    play(s, "PLACE(5S)", "JOKER_AS(7S)")
    d = s.to_dict()
    read_back(d)
    refused({**d, "table_jokers": [], "commit": {**d["commit"], "free_jokers": 1}}, "commit.free_jokers")


def test_a_commit_in_progress_can_still_be_completed():
    s = scenario(["5S 6S 7S QC", "2C 3D", "4H 5H"], table="7D 8D 9D")
    play(s, "PLACE(5S)", "PLACE(6S)")
    d = s.to_dict()
    read_back(d)
    stock = d["stock"]
    refused({**d, "hands": [["KD", "QC"], *d["hands"][1:]], "stock": ["7S", *stock[:stock.index("KD")],
                                                                        *stock[stock.index("KD") + 1:]]},
            "commit", "hands[0]")


@pytest.mark.parametrize("options", [{}, MATCH, TRUNCATED, WINNER_DEALS, {"next_dealer": "loser", **MATCH}])
def test_positions_of_seeded_games_read_back(options):
    for state in game(3, **options)[::7]:
        read_back(state.to_dict())
