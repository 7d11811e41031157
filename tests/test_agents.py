"""Every registered agent of every game: legal moves only, blind to hidden cards, and
reproducible from its seed. New games and agents are picked up from the registry."""

from __future__ import annotations

import copy
import random
import re

import pytest

import rummy_envs
from agents import RandomAgent, make_agent, registered_agents

# Option sets that reach every phase an agent must handle (showdowns played as actions,
# the 50th-card chance, Oklahoma stakes, big gin, matches; in Rummy 500 2, 4 and 8 players,
# two decks, jokers, the turn rules the view does not show; in Least Count 2 to 10 players,
# every discard pattern option, jokers and the cut joker, the declare rules, timeouts,
# reshuffles of the dead pile, and matches to the last player standing or the first
# elimination).
OPTION_SETS = {
    "gin_rummy": [
        {},
        {"knocker_arrangement": "explicit", "layoff_mode": "explicit", "stock_end_rule": "opponent_last_chance"},
        {"variant": "oklahoma", "big_gin_bonus": 31, "allow_rediscard_taken_card": True},
        {"episode": "match", "target_score": 60, "max_hands_per_match": 4},
    ],
    "hollywood_gin": [
        {},
        {"knocker_arrangement": "explicit", "layoff_mode": "explicit"},
        {"episode": "match", "target_score": 40, "max_hands_per_match": 4},
    ],
    "rummy500": [
        {},
        {"num_players": 4, "must_discard_to_go_out": True, "stock_end_rule": "reshuffle_discards"},
        {"num_jokers": 2, "top_discard_must_be_used": True, "target_use_timing": "anytime_before_discard"},
        {"num_players": 8, "allow_rediscard_taken_card": True},
        {"episode": "match", "target_score": 150, "max_hands": 3},
    ],
    # Two players: three-player random seats hoard two-deck hands, whose masks are the solver's
    # slowest (tests/test_manipulation_rummy_agents.py plays the three-player game).
    "manipulation_rummy": [
        {"num_players": 2},
        {"num_players": 2, "episode": "match", "target_score": 60, "knock_timing": "start_of_turn"},
    ],
    "least_count": [
        {},
        {"num_players": 2, "hand_size": 7, "sequence_same_suit": True, "sequence_lengths": [3, 4, 5],
         "allow_three_of_a_kind": True, "allow_two_different_pairs": True},
        {"num_players": 3, "num_printed_jokers": 2, "cut_joker": True, "declare_max_count": 10,
         "tie_declaration_valid": True, "false_declare_penalty": 40, "initial_open_card": False},
        {"num_players": 6, "hand_size": 7, "num_decks": 1, "declare_max_count": 4,
         "declare_timing": "start_of_any_turn", "max_turns_per_round": 60},
        {"num_players": 10, "num_printed_jokers": 1, "max_turns_per_round": 40},
        {"num_players": 4, "episode": "match", "elimination_score": 50, "eliminate_on_equal": True, "max_rounds": 8},
        {"num_players": 3, "episode": "match", "match_end": "first_elimination", "elimination_score": 40},
    ],
}
CASES = [(game, name, i) for game in OPTION_SETS for name in registered_agents(game)
         for i in range(len(OPTION_SETS[game]))]
# Search agents play here with a budget small enough for the default suite (their own tests:
# tests/test_search_agents.py), and in fewer games.
SMALL_BUDGETS = {"ismcts": "ismcts:iterations=3,rollout_depth=6", "pimc": "pimc:iterations=1,rollout_depth=2,prior=None"}


def agent(name, game, seed):
    """``make_agent`` with a search agent's small test budget."""
    return make_agent(SMALL_BUDGETS.get(name, name), game, seed)


def seats_of(game, options):
    """Players of ``game`` under ``options`` (the game's default when not given)."""
    return len(rummy_envs.ENVS[game].raw_env(**options).possible_agents)


def test_every_game_with_agents_has_random_and_novice():
    assert set(OPTION_SETS) <= set(rummy_envs.ENVS)
    for game in OPTION_SETS:
        assert {"random", "novice"} <= set(registered_agents(game))


def play(game, options, seat_agents, seed, on_decision=None):
    """One episode; ``on_decision(env, agent_name, player, obs, action)`` sees every move."""
    env = rummy_envs.ENVS[game].raw_env(**options)
    env.reset(seed=seed)
    for a in seat_agents:
        a.reset()
    actions = []
    while env.agents:
        name = env.agent_selection
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        player = seat_agents[env.agent_name_mapping[name]]
        memory = copy.deepcopy(player) if on_decision else None
        action = player.act(obs["observation"], obs["action_mask"], env.player_view(name))
        assert obs["action_mask"][action] == 1, f"{player.name} picked masked action {env.action_to_str(action)}"
        if on_decision:
            on_decision(env, name, memory, obs, action)
        actions.append(action)
        env.step(action)
    return actions


@pytest.mark.parametrize(("game", "name", "option_set"), CASES)
def test_agents_pick_only_legal_actions(game, name, option_set):
    options = OPTION_SETS[game][option_set]
    seats = seats_of(game, options)
    games = (6 if options.get("episode") == "match" else 30) * 2 // seats  # fewer with more seats
    if name in SMALL_BUDGETS:
        games = max(2, games // 10)
    pool = [n for n in registered_agents(game) if n not in SMALL_BUDGETS]  # the search agents' games are their own
    for seed in range(games):
        rivals = [name, pool[seed % len(pool)]]
        rivals = rivals if seed % 2 else rivals[::-1]
        play(game, options, [agent(rivals[s % 2], game, seed) for s in range(seats)], seed)


def blind_check(game, options, agents_by_seat, seeds):
    """Play ``seeds`` games; at every decision a copy of the mover (same memory), shown the
    same seat of a redealt world (every card hidden from that player swapped at random),
    must pick the same action. Returns the number of decisions checked."""
    rng = random.Random(0)
    checked = 0

    def same_in_redealt_world(env, agent_name, memory, obs, action):
        nonlocal checked
        player = env.agent_name_mapping[agent_name]
        other = rummy_envs.ENVS[game].raw_env(**options)
        other.reset(options={"state": env.game.sample_determinization(player, rng).to_dict()})
        other_obs = other.observe(agent_name)
        Peeker.world = other
        redealt_action = memory.act(other_obs["observation"], other_obs["action_mask"], other.player_view(agent_name))
        Peeker.world = env
        assert redealt_action == action, f"{memory.name} changed its move when hidden cards changed"
        checked += 1

    for seed in seeds:
        play(game, options, agents_by_seat(seed), seed, same_in_redealt_world)
    return checked


@pytest.mark.parametrize(("game", "name", "option_set"), CASES)
def test_agents_never_change_when_hidden_cards_change(game, name, option_set):
    options = OPTION_SETS[game][option_set]
    seats = range(seats_of(game, options))
    checked = played = 0
    while checked <= 50 and played < 16:  # one deal at a time until 50 decisions are checked
        checked += blind_check(game, options, lambda seed: [agent(name, game, seed + s) for s in seats], [played])
        played += 1
    assert checked > 50


@pytest.mark.parametrize(("game", "name"), sorted({(game, name) for game, name, _ in CASES}))
def test_agents_are_reproducible_from_their_seed(game, name):
    seats = range(seats_of(game, {}))
    runs = [play(game, {}, [agent(name, game, 3 + s) for s in seats], seed=11) for _ in range(2)]
    assert runs[0] == runs[1]


class Peeker(RandomAgent):
    """A cheat that reads the opponent's hand from the env it is acting in."""

    name = "peeker"
    world = None

    def act(self, observation, action_mask, view=None):
        legal = sorted(view.legal_actions)
        return legal[Peeker.world.game.hands[1 - view.player] % len(legal)]


def test_a_peeking_agent_is_caught():
    """The hidden-card check can fail: an agent that looks at hidden cards is detected."""

    def peekers(seed):
        Peeker.world = None
        return [Peeker(seed=seed), Peeker(seed=seed + 1)]

    original_reset = rummy_envs.ENVS["gin_rummy"].raw_env.reset

    def reset_and_track(env, *args, **kwargs):
        original_reset(env, *args, **kwargs)
        if Peeker.world is None:
            Peeker.world = env

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rummy_envs.ENVS["gin_rummy"].raw_env, "reset", reset_and_track)
        with pytest.raises(AssertionError, match="changed its move"):
            blind_check("gin_rummy", {}, peekers, range(3))


def test_unknown_agents_and_games_are_named():
    with pytest.raises(ValueError, match="grandmaster"):
        make_agent("grandmaster", "gin_rummy")
    with pytest.raises(ValueError, match="poker"):
        make_agent("novice", "poker")


# -- agent names: registry names with parameters, import paths, mistakes ----------------------

def test_import_paths_build_your_own_agents():
    lowest = make_agent("my_agents:LowestLegal", "gin_rummy", 3)
    second = make_agent("my_agents:LowestLegal:rank=1", "least_count", 3)
    highest = make_agent("my_agents:make_highest", "rummy500", 3)
    assert (lowest.rank, second.rank, highest.rank) == (0, 1, 10**6)
    env = rummy_envs.ENVS["gin_rummy"].env()
    env.reset(seed=1)
    mask = env.observe(env.agent_selection)["action_mask"]
    legal = [int(a) for a in mask.nonzero()[0]]
    view = env.unwrapped.player_view(env.agent_selection)
    assert lowest.act(None, mask, view) == legal[0] and highest.act(None, mask, view) == legal[-1]


@pytest.mark.parametrize("name, message", [
    ("heuristc", "did you mean 'heuristic'?"),
    ("no_such_module_here:Agent", "cannot import module 'no_such_module_here'"),
    ("my_agents:Missing", "has no class or function 'Missing'"),
    ("my_agents:NOT_AN_AGENT", "has no class or function 'NOT_AN_AGENT'"),
    ("my_agents:LowestLegal:depth=2", "unexpected keyword argument 'depth'"),
    ("my_agents:LowestLegal:rank", "parameter 'rank' is not key=value"),
    ("agents.base:agent_forms", "which has no act(observation, action_mask, view) and reset()"),
    ("random:foo=1", "unexpected keyword argument 'foo'"),
])
def test_bad_agent_names_say_what_is_wrong(name, message):
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        make_agent(name, "gin_rummy", 0)
    if ":" not in name:
        assert "ppo:<path>" in str(caught.value) and "module:Class" in str(caught.value)


def test_registered_agents_take_parameters():
    agent = make_agent("random:seed=5", "gin_rummy")
    again = make_agent("random", "gin_rummy", 5)
    mask = [1] * 10
    assert [agent.act(None, mask) for _ in range(20)] == [again.act(None, mask) for _ in range(20)]
