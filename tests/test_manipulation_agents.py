"""Manipulation Rummy's novice and heuristic agents: legal moves only, blind to hidden
cards, reproducible, and the moves each is designed to make. (They are not in the agent
registry yet, so tournaments and the demo do not seat them: see docs/tournaments.md.)

Random seats are left out here: a random player hoards cards (it rarely completes a
commit), and masks over 30-card hands are the solver's slowest case; the shared checks of
tests/test_agents.py cover the random agent in every other game.
"""

from __future__ import annotations

import pytest

from agents.manipulation import ManipulationHeuristicAgent, ManipulationNoviceAgent, identity_limit
from rummy_envs.games import manipulation_rummy as M
from tests.test_agents import blind_check, play
from tests.test_manipulation_rules import A, names, scenario

GAME = "manipulation_rummy"
AGENTS = {"novice": ManipulationNoviceAgent, "heuristic": ManipulationHeuristicAgent}


def make_agent(name: str, game: str, seed: int):
    return AGENTS[name](game, seed)
OPTION_SETS = [
    {"num_players": 2},
    {"num_players": 3, "knock_timing": "start_of_turn", "max_draws": 2},
    {"num_players": 4, "stock_out_trigger": "last_card_drawn", "joker_identity_limit": "none"},
    {"num_players": 3, "episode": "match", "target_score": 60, "max_rounds": 3},
]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_agents_pick_only_legal_actions(options):
    seats = options["num_players"]
    for seed in range(2):
        names_by_seat = ["heuristic" if (s + seed) % 2 else "novice" for s in range(seats)]
        play(GAME, options, [make_agent(n, GAME, seed + s) for s, n in enumerate(names_by_seat)], seed)


@pytest.mark.parametrize("name", ["novice", "heuristic"])
def test_agents_never_change_when_hidden_cards_change(name):
    options = {"num_players": 3}
    checked = blind_check(GAME, options, lambda seed: [make_agent(name, GAME, seed + s) for s in range(3)], range(1))
    assert checked > 50


@pytest.mark.parametrize("name", ["novice", "heuristic"])
def test_agents_are_reproducible_from_their_seed(name):
    runs = [play(GAME, {}, [make_agent(name, GAME, 3 + s) for s in range(3)], seed=11) for _ in range(2)]
    assert runs[0] == runs[1]


def decide(agent, state):
    return M.action_to_str(agent.act(None, None, state.view(state.current_player)))


def test_novice_melds_its_most_valuable_card_first_and_knocks():
    s = scenario(["3C 4C 5C KS KH KD 2S", "2C 3D", "4H 5H"])
    assert decide(ManipulationNoviceAgent(), s) == "PLACE(KD)"
    s = scenario(["AS 2C", "9C 9D", "KH QH"], phase="END_OF_TURN")
    assert decide(ManipulationNoviceAgent(), s) == "KNOCK"


def test_heuristic_frees_a_joker_with_its_own_natural():
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    agent = ManipulationHeuristicAgent()
    assert decide(agent, s) == "REPLACE_FROM_HAND(8D)"
    s.apply(M.str_to_action("REPLACE_FROM_HAND(8D)"))
    assert decide(agent, s) in {"FREED_AS(4S)", "FREED_AS(7S)"}  # where 5S and 6S can follow it


def test_heuristic_knocks_only_when_likely_lowest():
    low = scenario(["AS 2C", "9C 9D 8S", "KH QH JD"], phase="END_OF_TURN")
    assert decide(ManipulationHeuristicAgent(), low) == "KNOCK"
    risky = scenario(["AS 4C", "9C", "KH QH"], phase="END_OF_TURN")  # a one-card hand may be lower
    assert decide(ManipulationHeuristicAgent(), risky) == "END_TURN"


def test_heuristic_keeps_a_joker_unless_it_pays():
    s = scenario(["3C 4C JK 9D KS", "2C 3D 5D 6D 7D 8D 9H TH JH QH", "4H 5H"])
    legal = names(s)
    assert {"JOKER_AS(5C)", "PLACE(3C)", "PLACE(4C)"} <= legal  # 3C 4C go down only with the joker
    assert decide(ManipulationHeuristicAgent(), s) == "NO_MELD"  # too early to spend it on two small cards
    assert decide(ManipulationNoviceAgent(), s) == "PLACE(4C)"  # the novice melds them, joker and all


def test_identity_limit_read_from_the_cards_in_play():
    assert identity_limit(scenario(["3C", "4C"], num_players=2).view(A)) == 1
    assert identity_limit(scenario(["3C", "4C", "5C"]).view(A)) == 2
