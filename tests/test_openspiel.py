"""The OpenSpiel bridge (``rummy_envs/openspiel.py``): every game and a few option sets pass
OpenSpiel's own random simulation test (with serialization); information-state strings are
equal for states a player cannot tell apart and differ where it can; nothing hidden leaks
into a player's strings or tensor; observations are the env's; OpenSpiel's ISMCTS plays
whole games of all five through ``evaluate_bots`` and outcome-sampling MCCFR runs on the
smallest variant."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import rummy_envs  # noqa: E402
from rummy_envs import openspiel as O  # noqa: E402

OPTION_SETS = [
    ("gin_rummy", {}),
    ("gin_rummy", {"variant": "oklahoma", "episode": "match", "max_hands_per_match": 3,
                   "knocker_arrangement": "explicit", "layoff_mode": "explicit"}),
    ("hollywood_gin", {"episode": "match", "target_score": 30, "max_hands_per_match": 3}),
    ("rummy500", {}),
    ("rummy500", {"num_players": 4, "num_jokers": 2, "episode": "match", "max_hands": 2}),
    ("manipulation_rummy", {"num_players": 2}),
    ("manipulation_rummy", {}),
    ("least_count", {}),
    ("least_count", {"num_players": 7, "cut_joker": True, "num_printed_jokers": 1, "sequence_lengths": (3,),
                     "episode": "match", "elimination_score": 40}),
]
IDS = [f"{game}-{i}" for i, (game, _) in enumerate(OPTION_SETS)]
SMALLEST = {"num_players": 2, "hand_size": 1, "initial_open_card": False, "max_turns_per_round": 4}
"""Least Count with one card a hand and four turns a round: the smallest game the options allow."""


def play_randomly(state: O.RummyState, rng: random.Random, steps: int | None = None) -> O.RummyState:
    """Random legal play (chance by its probabilities) for ``steps`` actions or to the end."""
    while not state.is_terminal() and (steps is None or steps > 0):
        if state.is_chance_node():
            state.apply_action(rng.randrange(256))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
            steps = None if steps is None else steps - 1
    return state


def snapshots(game: O.RummyGame, count: int, seed: int = 0) -> list[O.RummyState]:
    """Positions of random games: a few from each of several deals, the end included."""
    rng = random.Random(seed)
    found = []
    for deal in range(count):
        state = game.new_dealt_state(rng.getrandbits(64))
        while True:
            found.append(state.clone())
            if state.is_terminal() or len(found) >= count * (deal + 1):
                break
            play_randomly(state, rng, rng.randrange(1, 12))
    return found[:: max(1, len(found) // (3 * count))]


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_openspiel_random_simulation_with_serialization(name, options):
    game = O.load_game(name, **options)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("name", list(rummy_envs.ENVS))
def test_openspiel_python_games_simulation_checks(name):
    """OpenSpiel's own Python checks (``games_sim_test``): pickled games and game types, clones
    and serialization along a random game, returns in range at its end; a game and a state
    unpickled in a fresh process need nothing else."""
    from open_spiel.python.tests import games_sim_test

    game = O.load_game(name)
    games_sim_test.GamesSimTest("test_breakthrough").sim_game(game)
    again = pickle.loads(pickle.dumps(game))
    assert type(again) is type(game) and again.config == game.config
    state = play_randomly(game.new_dealt_state(5), random.Random(1), 5)
    assert str(pickle.loads(pickle.dumps(state))) == str(state)


def test_every_game_is_registered_and_loads_from_its_game_string():
    names = pyspiel.registered_names()
    for name in rummy_envs.ENVS:
        assert O.short_name(name) in names
    game = pyspiel.load_game("python_rummy500(num_players=4)")
    assert game.num_players() == 4 and game.config.num_players == 4
    again = pyspiel.load_game(str(O.load_game("least_count", num_players=6, sequence_lengths=(3, 4), num_decks=2)))
    assert again.config == O.load_game("least_count", num_players=6, sequence_lengths=(3, 4), num_decks=2).config
    assert again.config.sequence_lengths == (3, 4) and again.config.num_decks == 2
    assert O.load_game("least_count").config.num_decks is None, "an option whose default is none stays none"
    one = O.load_game("least_count", sequence_lengths=(4,))
    assert pyspiel.load_game(str(one)).config.sequence_lengths == (4,)


def test_bad_options_fail_at_load_naming_the_option():
    with pytest.raises(ValueError, match="hand_sise"):
        O.load_game("least_count", hand_sise=3)
    with pytest.raises(ValueError, match="hand_size"):
        O.load_game("least_count", hand_size=0)
    with pytest.raises(pyspiel.SpielError, match="hand_sise"):
        pyspiel.load_game("python_least_count(hand_sise=3)")
    with pytest.raises(ValueError, match="sequence_lengths"):
        pyspiel.load_game("python_least_count(sequence_lengths=three)")
    with pytest.raises(ValueError, match="game='poker'"):
        O.load_game("poker")


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_game_type_and_info_are_declared_honestly(name, options):
    game = O.load_game(name, **options)
    kind, engine = game.get_type(), game.state_class
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kind.utility == pyspiel.GameType.Utility.ZERO_SUM and game.utility_sum() == 0.0
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert (game.min_utility(), game.max_utility()) == tuple(map(float, engine.utility_bounds(game.config)))
    assert game.max_game_length() == engine.max_game_length(game.config)
    assert game.num_distinct_actions() == rummy_envs.ENVS[name].raw_env(**options).num_actions
    assert game.max_chance_outcomes() == 256
    assert game.observation_tensor_size() == game.encoder.observation_size


@pytest.mark.parametrize("name", list(rummy_envs.ENVS))
def test_the_seed_bytes_deal_the_engines_game(name):
    game = O.load_game(name)
    state = game.new_initial_state()
    seed = 0x0123456789ABCDEF
    for byte in seed.to_bytes(O.SEED_BYTES, "little"):
        assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 256 and sum(p for _, p in outcomes) == pytest.approx(1.0)
        assert state.legal_actions() == list(range(256))
        state.apply_action(byte)
    assert not state.is_chance_node()
    assert state.engine.to_dict() == game.state_class(game.config, seed).to_dict()
    assert str(state) == str(game.new_dealt_state(seed))
    with pytest.raises(ValueError, match="seed"):
        game.new_dealt_state(-1)


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_observations_are_the_envs_and_actions_its_names(name, options):
    game = O.load_game(name, **options)
    env = rummy_envs.ENVS[name].raw_env(**options)
    for state in snapshots(game, 3):
        env.reset(options={"state": state.engine.to_dict()})
        for p in range(game.num_players()):
            np.testing.assert_array_equal(np.array(state.observation_tensor(p), np.float32),
                                          env.observe(env.possible_agents[p])["observation"])
            assert "hand: " in state.observation_string(p)
        if not state.is_terminal():
            player = state.current_player()
            assert state.legal_actions() == [a for a, m in enumerate(env.observe(env.agent_selection)["action_mask"]) if m]
            assert [state.action_to_string(player, a) for a in state.legal_actions()] == [
                env.action_to_str(a) for a in state.legal_actions()]


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_rewards_add_up_to_the_returns_and_are_the_envs_points(name, options):
    game = O.load_game(name, **options)
    env = rummy_envs.ENVS[name].raw_env(**options)
    rng = random.Random(3)
    state = game.new_dealt_state(11)
    env.reset(options={"state": state.engine.to_dict()})
    total = np.zeros(game.num_players())
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        env.step(action)
        total += state.rewards()
        paid = [env.rewards.get(agent, 0.0) for agent in env.possible_agents]
        np.testing.assert_allclose(state.rewards(), paid, atol=1e-9)
        while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            env.step(None)  # a seat eliminated from a Least Count match leaves the env
    np.testing.assert_allclose(total, state.returns(), atol=1e-9)
    assert sum(state.returns()) == pytest.approx(0.0)


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_information_state_has_perfect_recall(name, options):
    """Each player's string only grows, line by line, and names the player's own actions."""
    game = O.load_game(name, **options)
    rng = random.Random(5)
    state = game.new_dealt_state(7)
    before = [state.information_state_string(p) for p in range(game.num_players())]
    for _ in range(40):
        if state.is_terminal():
            break
        mover, action = state.current_player(), rng.choice(state.legal_actions())
        name_played = state.action_to_string(mover, action)
        state.apply_action(action)
        after = [state.information_state_string(p) for p in range(game.num_players())]
        for p in range(game.num_players()):
            assert after[p].startswith(before[p] + "\n")
            new_line = after[p][len(before[p]) + 1:]
            assert "\n" not in new_line
            if p == mover:
                assert new_line.startswith(f"I played {name_played}")
            else:
                assert new_line.startswith(f"player {mover} moved")
        before = after
    assert len(set(before)) == game.num_players(), "every player knows something the others do not"


HIDDEN_MOVES = {"gin_rummy-1": "a knock card goes face down before the knocker declares its melds"}
"""Option sets with moves other players cannot tell apart, which the next test must meet (the
other games' moves all show: their engines offer one action for identical cards)."""


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_strings_equal_exactly_where_the_player_cannot_tell_the_moves_apart(request, name, options):
    """For pairs of legal moves of a position and every other player: the two children give
    that player equal information states exactly when they give it equal views. Play mixes
    the heuristic's moves with random ones so that games reach knocks and declarations. An
    action's name leaking into another player's string (the face-down card of a gin knock)
    fails here."""
    from agents import make_agent

    game = O.load_game(name, **options)
    rng = random.Random(2)
    agent = make_agent("heuristic", name, seed=2)
    compared = equal = 0
    for _ in range(3):
        state = game.new_dealt_state(rng.getrandbits(64))
        agent.reset()
        while not state.is_terminal() and compared < 4000:
            mover, actions = state.current_player(), state.legal_actions()
            if len(actions) > 1:
                children = []
                for action in actions[:24]:
                    child = state.clone()
                    child.apply_action(action)
                    children.append(child)
                for p in set(range(game.num_players())) - {mover}:
                    views = [c.engine.player_view(p) for c in children]
                    infos = [c.information_state_string(p) for c in children]
                    for i in range(len(children)):
                        for j in range(i + 1, len(children)):
                            assert (views[i] == views[j]) == (infos[i] == infos[j])
                            compared += 1
                            equal += views[i] == views[j]
            if rng.random() < 0.7:
                mask = np.zeros(game.num_distinct_actions(), np.int8)
                mask[actions] = 1
                obs = np.array(state.observation_tensor(mover), np.float32)
                state.apply_action(agent.act(obs, mask, state.engine.player_view(mover)))
            else:
                state.apply_action(rng.choice(actions))
    assert compared > 0
    if request.node.callspec.id in HIDDEN_MOVES:
        assert equal > 0, HIDDEN_MOVES[request.node.callspec.id]


def hidden_cards(state: O.RummyState) -> dict:
    """The engine's state dict but its seed and history: where every card lies."""
    return {key: value for key, value in state.engine.to_dict().items() if key not in ("seed", "history")}


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_resampled_worlds_leak_nothing_and_play_on(name, options):
    """A state resampled for a player shows it the same information state, observation
    string and tensor, though the hidden cards differ; it plays on to the end."""
    game = O.load_game(name, **options)
    rng = random.Random(9)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    moved = 0
    for state in snapshots(game, 3, seed=4):
        worlds = [state.resample_from_infostate(p, sampler) for p in range(game.num_players())]
        for p, world in enumerate(worlds):
            assert world.information_state_string(p) == state.information_state_string(p)
            assert world.observation_string(p) == state.observation_string(p)
            assert world.observation_tensor(p) == state.observation_tensor(p)
            assert world.legal_actions() == state.legal_actions() or state.current_player() != p
            moved += hidden_cards(world) != hidden_cards(state)
        world = play_randomly(rng.choice(worlds), rng)
        assert world.is_terminal() and sum(world.returns()) == pytest.approx(0.0)
    assert moved > 0, "the resampled worlds deal the hidden cards afresh"


@pytest.mark.parametrize(("name", "options"), OPTION_SETS, ids=IDS)
def test_serialization_carries_the_state_and_the_records(name, options):
    game = O.load_game(name, **options)
    for state in snapshots(game, 2, seed=6):
        for copy in (game.deserialize_state(state.serialize()), pickle.loads(pickle.dumps(state))):
            assert str(copy) == str(state) and copy.history() == state.history()
            assert copy.rewards() == state.rewards() and copy.returns() == state.returns()
            for p in range(game.num_players()):
                assert copy.information_state_string(p) == state.information_state_string(p)
            if not state.is_terminal():
                assert copy.legal_actions() == state.legal_actions()
                action = copy.legal_actions()[0]
                copy.apply_action(action)
                state.clone().apply_action(action)


@pytest.mark.parametrize(("name", "options"), [
    ("gin_rummy", {}), ("hollywood_gin", {}), ("rummy500", {"max_turns_per_hand": 40}),
    ("manipulation_rummy", {"num_players": 2, "num_decks": 1, "num_jokers": 0}), ("least_count", {"num_players": 3}),
], ids=list(rummy_envs.ENVS))
def test_openspiel_ismcts_plays_whole_games_through_evaluate_bots(name, options):
    from open_spiel.python.algorithms import ismcts, mcts

    game = O.load_game(name, **options)
    random_state = np.random.RandomState(1)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    bots = [ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=4, random_state=random_state)
            for _ in range(game.num_players())]
    returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, 3)
    assert len(returns) == game.num_players() and sum(returns) == pytest.approx(0.0)
    assert game.min_utility() <= min(returns) <= max(returns) <= game.max_utility()


def test_outcome_sampling_mccfr_runs_on_the_smallest_variant():
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    game = O.load_game("least_count", **SMALLEST)
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    for _ in range(300):
        solver.iteration()
    policy = solver.average_policy()
    state = game.new_dealt_state(1)
    probabilities = policy.action_probabilities(state)
    assert set(probabilities) == set(state.legal_actions())
    assert sum(probabilities.values()) == pytest.approx(1.0)
    assert len(solver._infostates) > 50, "MCCFR met many information states of the game"


def test_the_docs_table_of_games_matches_the_code():
    from test_docs import DOCS, markdown_tables

    tables = {tuple(header[:2]): rows for header, rows in markdown_tables((DOCS / "openspiel.md").read_text())}
    rows = tables[("game", "OpenSpiel name")]
    assert [row[0].strip("`") for row in rows] == list(rummy_envs.ENVS)
    for row in rows:
        name = row[0].strip("`")
        game = O.load_game(name)
        fewest, most = O.PLAYER_COUNTS[name]
        players = str(fewest) if fewest == most else f"{fewest}-{most}"
        expected = [f"`{O.short_name(name)}`", players, str(game.num_players()), str(game.num_distinct_actions()),
                    str(game.observation_tensor_size()), f"{game.min_utility():g}", f"{game.max_utility():g}",
                    str(game.max_game_length())]
        assert row[1:] == expected, name
    for name, (fewest, most) in O.PLAYER_COUNTS.items():
        config_class = game_config_class(name)
        for players in (fewest, most):
            assert config_class.from_kwargs(**player_option(name, players)).num_players == players
        for players in (fewest - 1, most + 1):
            with pytest.raises(ValueError):
                config_class.from_kwargs(**player_option(name, players))


def game_config_class(name: str) -> type:
    return rummy_envs.ENVS[name].raw_env.state_class.config_class


def player_option(name: str, players: int) -> dict[str, int]:
    """The option that sets the number of players (the gin games have two, and no option)."""
    if name in ("gin_rummy", "hollywood_gin"):
        return {} if players == 2 else {"num_players": players}
    return {"num_players": players}
