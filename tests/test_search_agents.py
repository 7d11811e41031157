"""The search agents of agents/search.py (``ismcts``, ``pimc``) beyond what every agent is
tested for in tests/test_agents.py (legal moves, blind to hidden cards, reproducible): the
budget and its options, the bounded tree, the statistics a search leaves, and choices that
a search must get right."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import rummy_envs
from agents import make_agent
from agents.search import BELIEFS, MIN_SAMPLES, SETTINGS, ISMCTSAgent, PIMCAgent, mask_of, state_class_of
from rummy_envs import cards as C
from rummy_envs.games.gin_rummy import state as G

GAMES = list(rummy_envs.ENVS)


def decision_points(game, count, seed=0, options=None):
    """States of random play of ``game`` where the mover has a choice."""
    env = rummy_envs.ENVS[game].raw_env(**(options or {}))
    rng = random.Random(seed)
    found = []
    deal = 0
    while len(found) < count:
        state = env.state_class(env.config, seed * 100 + deal)
        deal += 1
        while not state.is_terminal() and len(found) < count:
            legal = state.legal_actions()
            if len(legal) > 1 and rng.random() < 0.1:
                found.append(state.clone())
            state.apply(rng.choice(legal))
    return found


def bare(agent_class, game, **options):
    """A search agent without a prior move, rolling out at random: the search alone."""
    return agent_class(game, rollout="random", prior=None, **options)


def choose(agent, state):
    view = state.player_view(state.current_player)
    return agent.act(None, mask_of(state.legal_actions()), view)


@pytest.mark.parametrize("bad, key", [
    ("iterations=0", "iterations"), ("iterations=2.5", "iterations"), ("ms=0", "ms"), ("ms=True", "ms"),
    ("rollout='expert'", "rollout"), ("rollout_depth=0", "rollout_depth"), ("exploration=-1", "exploration"),
    ("widening=0", "widening"), ("max_nodes=0", "max_nodes"), ("depth=3", "depth"), ("prior='random'", "prior"),
    ("confidence=-1", "confidence"), ("iterations=None", "iterations"), ("belief=1", "belief"),
    ("verify=3", "verify"), ("verify=-1", "verify"), ("verify_rollout='expert'", "verify_rollout"),
    ("verify_moves=0", "verify_moves"), ("verify_moves=1.5", "verify_moves"),
])
def test_bad_options_are_refused_by_name(bad, key):
    with pytest.raises(ValueError, match=key):
        make_agent(f"ismcts:{bad}", "gin_rummy", 0)


def test_an_unknown_game_is_refused():
    with pytest.raises(ValueError, match="poker"):
        state_class_of("poker")


@pytest.mark.parametrize("game", GAMES)
def test_the_iteration_budget_is_spent_exactly_and_the_tree_stays_bounded(game):
    for state in decision_points(game, 2, seed=1):
        agent = bare(ISMCTSAgent, game, seed=0, iterations=9, rollout_depth=8)
        assert choose(agent, state) in state.legal_actions()
        assert agent.last_search["iterations"] == 9
        assert sum(agent.last_search["visits"].values()) == 9, "every iteration passes through one root child"
        small = bare(ISMCTSAgent, game, seed=0, iterations=30, rollout_depth=8, max_nodes=4)
        assert choose(small, state) in state.legal_actions()
        assert small.last_search["nodes"] <= 4


@pytest.mark.parametrize("game", GAMES)
def test_a_decisions_worlds_are_read_from_the_view_once_and_all_fit_it(game, monkeypatch):
    """The first world of a decision comes from ``sample_from_view``, the others redeal its
    hidden cards: every one shows the seat the same view, the hidden cards differ, and the
    view is read once a decision."""
    state_class = state_class_of(game)
    reads = []
    original = state_class.sample_from_view.__func__
    monkeypatch.setattr(state_class, "sample_from_view",
                        classmethod(lambda cls, view, rng: reads.append(view) or original(cls, view, rng)))
    agent = PIMCAgent(game, seed=1, iterations=2)
    for state in decision_points(game, 3, seed=5):
        player = state.current_player
        view = state.player_view(player)
        worlds = [agent.world(view) for _ in range(12)]
        assert all(world.player_view(player) == view for world in worlds)
        others = {tuple(sorted(C.from_mask(world.hands[1 - player]))) if game in ("gin_rummy", "hollywood_gin")
                  else repr(world.to_dict()) for world in worlds}
        assert len(others) > 1  # hidden cards redealt
    assert len(reads) == 3


def test_a_time_budget_always_runs_at_least_one_iteration():
    state = decision_points("gin_rummy", 1)[0]
    agent = ISMCTSAgent("gin_rummy", seed=0, ms=1e-6)
    assert choose(agent, state) in state.legal_actions()
    assert agent.last_search["iterations"] >= 1
    capped = ISMCTSAgent("gin_rummy", seed=0, ms=60_000, iterations=5)
    choose(capped, state)
    assert capped.last_search["iterations"] == 5, "with both, the iteration count caps a time budget"


def test_progressive_widening_keeps_wide_nodes_narrow():
    """At a root with many moves, a node visited n times has at most widening * sqrt(n) children."""
    state = next(s for s in decision_points("gin_rummy", 40, seed=2) if len(s.legal_actions()) >= 10)
    narrow = bare(ISMCTSAgent, "gin_rummy", seed=0, iterations=16, widening=1.0)
    choose(narrow, state)
    assert len(narrow.last_search["visits"]) <= 1.0 * (16 ** 0.5) + 1
    wide = bare(ISMCTSAgent, "gin_rummy", seed=0, iterations=16, widening=None)
    choose(wide, state)
    assert len(wide.last_search["visits"]) == min(16, len(state.legal_actions()))


def gin_in_hand_after_the_draw():
    """A gin hand: the non-dealer holds AS-4S, 5H-7H and 9C 9D 9H, both pass the upcard (KD)
    and the non-dealer draws. Knocking with the drawn card is gin: at least 25 points."""
    hand = C.parse("AS 2S 3S 4S 5H 6H 7H 9C 9D 9H")
    dealer_hand = C.parse("KS QS JS KH QH JH 2C 4C 6C 8C")
    upcard = C.parse_card("KD")
    rest = [c for c in range(C.NUM_CARDS) if c not in hand + dealer_hand + [upcard]]
    random.Random(0).shuffle(rest)
    deck = [card for pair in zip(hand, dealer_hand) for card in pair] + [upcard] + rest
    state = G.GinState(state_class_of("gin_rummy").config_class(), 0, deck, 0)
    for action in (G.PASS, G.PASS, G.DRAW_STOCK):
        state.apply(action)
    assert state.phase == G.Phase.DISCARD and state.current_player == 1
    drawn = (C.to_mask(state.player_view(1).hand) & ~C.to_mask(hand)).bit_length() - 1
    return state, G.KNOCK + drawn


@pytest.mark.parametrize("agent_class", [ISMCTSAgent, PIMCAgent])
def test_a_search_goes_gin_when_it_can(agent_class):
    state, gin = gin_in_hand_after_the_draw()
    agent = bare(agent_class, "gin_rummy", seed=3, iterations=60 if agent_class is ISMCTSAgent else 4)
    assert choose(agent, state) == gin


def test_ismcts_spends_its_visits_on_the_sure_win():
    state, gin = gin_in_hand_after_the_draw()
    agent = bare(ISMCTSAgent, "gin_rummy", seed=3, iterations=200)
    choose(agent, state)
    visits = agent.last_search["visits"]
    runner_up = max(v for a, v in visits.items() if a != gin)
    assert visits[gin] > 2 * runner_up


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_budget_same_move_and_pimc_plays_every_game(game):
    for state in decision_points(game, 3, seed=4):
        first = choose(ISMCTSAgent(game, seed=7, iterations=12, rollout_depth=10), state)
        assert first == choose(ISMCTSAgent(game, seed=7, iterations=12, rollout_depth=10), state)
        assert choose(PIMCAgent(game, seed=7, iterations=1, rollout_depth=4), state) in state.legal_actions()


def test_an_agent_rollout_policy_plays_each_seat_with_its_own_agent():
    state = decision_points("least_count", 1, seed=5)[0]
    agent = ISMCTSAgent("least_count", seed=1, iterations=6, rollout="novice", prior=None)
    assert choose(agent, state) in state.legal_actions()
    assert len(agent._policies["novice"]) == state.config.num_players


@pytest.mark.parametrize("options", [{}, {"num_jokers": 2}, {"num_players": 4}])
def test_the_rummy500_leaf_value_reads_the_hand_score_off_each_view(options):
    """A rollout cut short is scored as if the hand ended: each seat's credited table points
    less its hand, read from its view, equal to the engine's count (the group the player to
    move is showing is counted as held)."""
    from agents.rummy500 import hand_score_now
    checked = 0
    for state in decision_points("rummy500", 60, seed=1, options=options):
        for p in range(state.config.num_players):
            view = state.player_view(p)
            showing = view.is_my_turn and (view.pending or view.pending_jokers)
            if not showing:
                assert hand_score_now(view) == state.table_points()[p] - state.hand_points(p)
                checked += 1
    assert checked > 60


@pytest.mark.parametrize("game", GAMES)
def test_the_defaults_are_the_games_settings(game):
    agent = make_agent("ismcts", game, 0)
    assert agent.iterations == SETTINGS[game]["iterations"] and agent.rollout_depth == SETTINGS[game]["rollout_depth"]
    assert (agent.rollout, agent.prior, agent.confidence) == ("novice", "heuristic", 2.5)
    assert agent.verify == SETTINGS[game].get("verify", 0)
    assert agent.verify_rollout == (SETTINGS[game].get("verify_rollout") or agent.rollout)
    assert agent.verify_moves == SETTINGS[game].get("verify_moves", 1)
    has_belief = game in BELIEFS and SETTINGS[game].get("belief", True)
    assert (agent.belief is not None) == has_belief == (make_agent("pimc", game, 0).belief is not None)
    assert make_agent("pimc", game, 0).iterations == MIN_SAMPLES
    timed = make_agent("ismcts:ms=50", game, 0)
    assert timed.iterations is None and timed.ms == 50


def verifying(game, **options):
    """``ismcts`` whose choice must beat the prior's move in 8 paired worlds of its own."""
    return ISMCTSAgent(game, verify=MIN_SAMPLES, verify_rollout="heuristic", **options)


@pytest.mark.parametrize("agent_class", [ISMCTSAgent, PIMCAgent, verifying])
def test_the_prior_move_is_kept_unless_another_is_clearly_better(agent_class):
    """With an unreachable confidence the search plays its prior's move everywhere; with none
    it plays the search's own choice, which differs somewhere."""
    heuristic = make_agent("heuristic", "gin_rummy", 0)
    differs = 0
    for state in decision_points("gin_rummy", 12, seed=6):
        prior_move = choose(heuristic, state)
        stubborn = agent_class("gin_rummy", seed=2, iterations=20, confidence=1e9)
        assert choose(stubborn, state) == prior_move
        differs += choose(agent_class("gin_rummy", seed=2, iterations=20, confidence=0), state) != prior_move
    assert differs > 0


def test_a_verified_choice_is_tested_in_its_own_paired_worlds(monkeypatch):
    """With ``verify``, the tree's choice, where it is not the prior's move, is played beside
    the prior's move in ``verify`` further worlds (and only then); it is played when it wins
    the paired test there, the prior's move otherwise."""
    states = decision_points("gin_rummy", 12, seed=6)
    prior_moves = [choose(make_agent("heuristic", "gin_rummy", 0), state) for state in states]
    for sign in (1, -1):
        tested = []
        monkeypatch.setattr(ISMCTSAgent, "_paired_gaps", lambda self, view, moves, default, worlds: tested.append(
            (*moves, default, worlds)) or {moves[0]: [sign * (1 + i % 2) for i in range(worlds)]})
        for state, prior_move in zip(states, prior_moves):
            agent = verifying("gin_rummy", seed=2, iterations=20, confidence=0)
            played = choose(agent, state)
            tree_choice = agent.last_search["choice"]  # the most visited move
            assert agent.last_search["visits"][tree_choice] == max(agent.last_search["visits"].values())
            assert agent.last_search["verified"] == (MIN_SAMPLES if tree_choice != prior_move else 0)
            assert played == (tree_choice if sign > 0 else prior_move)
        assert tested and all(default != best and worlds == MIN_SAMPLES for best, default, worlds in tested)


def test_paired_worlds_cancel_a_worlds_luck():
    """Both moves meet the same world: a move against itself gains exactly nothing in every
    world, and gin against a discard that breaks it gains in every world."""
    state, gin = gin_in_hand_after_the_draw()
    view = state.player_view(1)
    agent = verifying("gin_rummy", seed=4)
    assert agent._paired_gaps(view, [gin], gin, 8) == {gin: [0.0] * 8}
    breaking_discard = G.DISCARD + C.parse_card("9C")  # leaves 9D 9H unmatched
    assert min(agent._paired_gaps(view, [gin], breaking_discard, 8)[gin]) > 0


def test_several_verified_moves_meet_the_same_worlds_and_the_best_is_judged(monkeypatch):
    """With ``verify_moves=3`` the tree's three most visited moves other than the prior's are
    the candidates, also where the prior's move is the most visited; the one of the best mean
    gap is played when it passes the paired test, the prior's move otherwise."""
    states = decision_points("gin_rummy", 12, seed=6)
    prior_moves = [choose(make_agent("heuristic", "gin_rummy", 0), state) for state in states]
    for passing in (True, False):
        tested, prior_on_top = [], 0

        def gaps(self, view, moves, default, worlds):
            tested.append(moves)
            return {a: [(k + 2 if passing else 0.0) + (1 if i % 2 else -1) for i in range(worlds)]
                    for k, a in enumerate(moves)}

        monkeypatch.setattr(ISMCTSAgent, "_paired_gaps", gaps)
        for state, prior_move in zip(states, prior_moves):
            agent = verifying("gin_rummy", seed=2, iterations=30, verify_moves=3)
            played = choose(agent, state)
            visits = agent.last_search["visits"]
            moves = tested[-1] if agent.last_search["verified"] else []
            assert agent.last_search["verified"] == (MIN_SAMPLES if len(visits) > 1 else 0)
            assert prior_move not in moves and len(moves) in (min(3, len(visits)) - 1, min(3, len(visits)))
            others = [a for a in visits if a != prior_move and a not in moves]
            assert min((visits[a] for a in moves), default=0) >= max((visits[a] for a in others), default=0)
            assert played == (moves[-1] if passing and moves else prior_move)
            prior_on_top += bool(moves) and visits[prior_move] == max(visits.values())
        assert prior_on_top > 0 and any(len(moves) > 1 for moves in tested)


SMALL = "ismcts:iterations=4,rollout_depth=6"


def tournament(tmp_path, **changes):
    from training.tournament import parse_config, run_tournament
    config = {"game": "gin_rummy", "agents": {"search": SMALL, "heuristic": "heuristic"}, "deals": 2, "seed": 3,
              "output_dir": str(tmp_path / "out"), "plots": False, "chunk_deals": 1, **changes}
    return [json.dumps(r, sort_keys=True) for r in run_tournament(parse_config(config))]


def test_a_search_agent_plays_tournaments_alike_on_one_or_two_workers_and_on_ray(tmp_path):
    """With an iteration budget a search is a function of its seed and what it was shown, so
    the tournament's games do not depend on where they are played."""
    one = tournament(tmp_path / "1")
    assert one == tournament(tmp_path / "2", workers=2)
    pytest.importorskip("ray")
    assert one == tournament(tmp_path / "ray", backend="ray", workers=2)


def test_a_search_agent_is_an_opponent_of_the_single_seat_env():
    from rummy_envs.wrappers import SingleAgentEnv
    env = SingleAgentEnv("least_count", opponents=make_agent(SMALL, "least_count", 0), num_players=3)
    observation, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(30):
        mask = env.action_masks()
        observation, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            observation, info = env.reset()
