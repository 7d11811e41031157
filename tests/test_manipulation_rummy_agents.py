"""Manipulation Rummy's novice and heuristic agents: in the registry, legal moves only,
blind to hidden cards, reproducible, and the moves each is designed to make.

Random seats are left out of the play tests here: a random player hoards cards (it rarely
completes a commit), and masks over 30-card hands are the solver's slowest case.
"""

from __future__ import annotations

import pytest

from agents import make_agent, registered_agents
from agents.manipulation_rummy import (ManipulationHeuristicAgent, ManipulationNoviceAgent, commit_problem,
                                       joker_exposure, out_chance, unseen_cards)
from rummy_envs import cards as C
from rummy_envs.games import manipulation_rummy as M
from tests.test_agents import blind_check, play
from tests.test_manipulation_rummy_rules import A, scenario

GAME = "manipulation_rummy"
OPTION_SETS = [
    {"num_players": 2},
    {"num_players": 3, "knock_timing": "start_of_turn", "max_draws": 2},
    {"num_players": 4, "stock_out_trigger": "last_card_drawn", "joker_identity_limit": "none"},
    {"num_players": 2, "num_jokers": 3},
    {"num_players": 3, "episode": "match", "target_score": 60, "max_rounds": 3},
]


def test_both_agents_are_registered():
    assert registered_agents(GAME) == ["heuristic", "ismcts", "novice", "pimc", "random"]
    assert isinstance(make_agent("novice", GAME, 0), ManipulationNoviceAgent)
    assert isinstance(make_agent("heuristic", GAME, 0), ManipulationHeuristicAgent)


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
    return M.action_to_str(agent.act(None, None, state.player_view(state.current_player)))


def commit_of(agent, state):
    """Play ``agent``'s whole commit on a copy of ``state``; its actions and the copy."""
    state = state.clone()
    actions = []
    while state.phase == M.Phase.MELD and state.current_player == A:
        action = agent.act(None, None, state.player_view(A))
        actions.append(M.action_to_str(action))
        state.apply(action)
        if action in (M.COMMIT, M.NO_MELD, M.ABORT):
            break
    return actions, state


def test_novice_melds_its_most_valuable_card_first_and_knocks():
    s = scenario(["3C 4C 5C KS KH KD 2S", "2C 3D", "4H 5H"])
    assert decide(ManipulationNoviceAgent(), s) == "PLACE(KD)"
    s = scenario(["AS 2C", "9C 9D", "KH QH"], phase="END_OF_TURN")
    assert decide(ManipulationNoviceAgent(), s) == "KNOCK"


def test_heuristic_sheds_more_value_than_the_greedy_novice():
    # greedy takes 7S, the most valuable card that fits, and then only 3S (10 points); the
    # two sixes and 3S go down together for 15
    s = scenario(["5C 6C 5H 6H QH AS 3S 7S 9S", "2C 3D"], table="8C 7D 8D 9D 8H 4S 5S 6S 8S", num_players=2)
    novice_moves, after_novice = commit_of(ManipulationNoviceAgent(), s)
    heuristic_moves, after_heuristic = commit_of(ManipulationHeuristicAgent(), s)
    assert novice_moves == ["PLACE(7S)", "PLACE(3S)", "COMMIT"]
    assert sorted(heuristic_moves) == ["COMMIT", "PLACE(3S)", "PLACE(6C)", "PLACE(6H)"]
    assert s.hand_value(A) - after_novice.hand_value(A) == 10
    assert s.hand_value(A) - after_heuristic.hand_value(A) == 15


def test_heuristic_frees_a_table_joker_with_its_own_natural():
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    moves, after = commit_of(ManipulationHeuristicAgent(), s)
    assert moves[-1] == "COMMIT" and C.format(after.hand_cards(A)) == "QC"
    assert C.format(after.player_view(A).table_jokers) in {"4S", "7S"}  # the freed joker next to 5S 6S


def test_heuristic_goes_out_with_its_joker():
    # 9S alone fits the run; the joker is kept for later unless it empties the hand
    s = scenario(["9S JK", "2C 3D"], table="6S 7S 8S", num_players=2)
    moves, after = commit_of(ManipulationHeuristicAgent(), s)
    assert moves[-1] == "COMMIT" and after.is_terminal() and after.hand_results[-1].kind == "out"


def test_heuristic_draws_again_when_the_next_card_likely_takes_it_out():
    # late in a round: JC or JH fits now but KS is stuck; KC, KD or the joker (3 of the 9
    # unseen cards) would take the whole hand down, so the heuristic draws again
    table = ("AC 2C 3C 4C 6C 7C 8C 9C QC AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD AH 2H 3H 4H 5H 6H 7H 8H 9H TH QH KH "
             "AS 2S 3S 4S 5S 6S 7S QS")
    s = scenario(["JC JH KS", "5C 8S"], table=table, num_players=2)
    assert out_chance(s.player_view(A)) == pytest.approx(3 / 9)
    assert ManipulationHeuristicAgent.draw_for_out <= 3 / 9
    assert decide(ManipulationNoviceAgent(), s) == "PLACE(JC)"
    assert decide(ManipulationHeuristicAgent(), s) == "NO_MELD"


def test_out_chance_counts_the_cards_that_empty_the_hand():
    # after 5H, only AH, 6H or the joker lets the whole hand go down: 3 of the 49 unseen cards
    s = scenario(["5H", "2C 3D"], table="2H 3H 4H", num_players=2, phase="END_OF_TURN")
    assert sum(unseen_cards(s.player_view(A))) == 49
    assert out_chance(s.player_view(A)) == pytest.approx(3 / 49)


def test_joker_identities_that_only_the_hand_can_free_come_first():
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    view = s.player_view(A)
    problem = commit_problem(view)
    kept = tuple(problem.hand)
    order = joker_exposure(problem, kept, 2, 0.5)
    both_held = C.parse("5S")[0]
    assert min([C.parse("4S")[0], both_held], key=order) == both_held  # one 5S held, one unseen vs two unseen
    assert order(C.parse("7D")[0])[0] > order(C.parse("4S")[0])[0]  # a natural on the table frees it for anyone


def test_heuristic_knocks_only_when_likely_lowest():
    low = scenario(["AS 2C", "9C 9D 8S", "KH QH JD"], phase="END_OF_TURN")
    assert decide(ManipulationHeuristicAgent(), low) == "KNOCK"
    risky = scenario(["AS 4C", "9C", "KH QH"], phase="END_OF_TURN")  # a one-card hand may be lower
    assert decide(ManipulationHeuristicAgent(), risky) == "END_TURN"


def test_the_solver_problem_and_the_unseen_cards_follow_the_rules_options():
    two = scenario(["3C 9H", "4C"], num_players=2, num_jokers=4).player_view(A)
    assert commit_problem(two).max_copies == 1 and sum(unseen_cards(two)) == 52 + 4 - 2
    three = scenario(["3C 9H", "4C", "5C"]).player_view(A)
    assert commit_problem(three).max_copies == 2 and sum(unseen_cards(three)) == 106 - 2
    free = scenario(["3C 9H", "4C", "5C"], num_decks=1, joker_identity_limit="none").player_view(A)
    assert commit_problem(free).max_copies is None and sum(unseen_cards(free)) == 53 - 2


@pytest.mark.parametrize("max_draws, draws, expected", [(3, 1, "NO_MELD"), (2, 1, "PLACE(JC)"), (3, 2, "PLACE(JC)"),
                                                         (4, 2, "NO_MELD")])
def test_heuristic_draws_again_only_before_the_turns_last_meld_decision(max_draws, draws, expected):
    # the position of test_heuristic_draws_again_when_the_next_card_likely_takes_it_out: at
    # the last meld decision of a turn (draw max_draws - 1) it commits what it can
    table = ("AC 2C 3C 4C 6C 7C 8C 9C QC AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD AH 2H 3H 4H 5H 6H 7H 8H 9H TH QH KH "
             "AS 2S 3S 4S 5S 6S 7S QS")
    s = scenario(["JC JH KS", "5C 8S"], table=table, num_players=2, max_draws=max_draws, draws=draws)
    assert decide(ManipulationHeuristicAgent(), s) == expected
