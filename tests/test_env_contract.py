"""The contract every environment honours (tests/env_contract.py), run for each env:
gin_rummy_v0, hollywood_gin_v0, rummy500_v0 with 2, 4 and 8 players, manipulation_rummy_v0
with 2, 3 and 5 players and least_count_v0 with 2, 4 and 10 players, over each env's option
sets. Fast versions run in CI (about 200 engine games per configuration at most); the
thousands-of-games versions are marked ``slow`` (``pytest -m slow``). Manipulation Rummy's
two-deck specs (3 and 5 players, ``slow_contract``) run only PettingZoo's own checks in CI
and the whole contract under ``-m slow``: their solver calls on two-deck tables make it
too slow for the default run."""

from __future__ import annotations

import pytest

import env_contract as contract
import rummy_envs
from rummy_envs import IllegalActionError
from env_contract import GameSpec, params
from test_gin_rummy_env import GIN
from test_hollywood_gin_env import HOLLYWOOD
from test_least_count_env import SPECS as LEAST_COUNT_SPECS
from test_manipulation_rummy_env import SPECS as MANIPULATION_SPECS
from test_rummy500_env import SPECS as RUMMY500_SPECS

SPECS: list[GameSpec] = [GIN, HOLLYWOOD, *RUMMY500_SPECS, *MANIPULATION_SPECS, *LEAST_COUNT_SPECS]
slow = pytest.mark.slow
SLOW_FACTOR = 15
ignore_reset_warning = pytest.mark.filterwarnings("ignore:ignoring unknown reset option")


@ignore_reset_warning
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("spec, name", params(SPECS, "env", always=True))
def test_api_test(spec, name):
    contract.check_api(spec, name)


@ignore_reset_warning
@pytest.mark.parametrize("spec, name", params(SPECS, "env", always=True))
def test_seed_test(spec, name):
    contract.check_seed(spec, name)


@ignore_reset_warning
@pytest.mark.filterwarnings("ignore:Environment's maximum state space value is infinity")  # match scores are unbounded
@pytest.mark.parametrize("spec, name", params(SPECS, "env", always=True))
def test_state_test(spec, name):
    contract.check_state_test(spec, name)


@pytest.mark.parametrize("spec", params(SPECS, always=True))
def test_metadata_and_registry(spec):
    game = spec.module.raw_env.metadata["name"].removesuffix("_v0")
    assert rummy_envs.ENVS[game] is spec.module and game in spec.module.__name__
    meta = spec.module.raw_env.metadata
    assert meta["render_modes"] == ["human", "ansi", "rgb_array"] and meta["is_parallelizable"] is False
    assert meta["render_fps"] == 2
    env = spec.make_env()
    assert env.possible_agents == [f"player_{i}" for i in range(len(spec.agents))]
    assert env.action_space(env.possible_agents[0]).n == spec.num_actions
    assert issubclass(IllegalActionError, ValueError)


# -- invariants over random play -------------------------------------------------------------
@pytest.mark.parametrize("spec, name", params(SPECS, "rule"))
def test_engine_invariants(spec, name):
    contract.engine_invariants(spec, name, spec.engine_games.get(name, 200))


@slow
@pytest.mark.parametrize("spec, name", params(SPECS, "rule"))
def test_engine_invariants_slow(spec, name):
    contract.engine_invariants(spec, name, SLOW_FACTOR * spec.engine_games.get(name, 200))


@pytest.mark.parametrize("spec, name", params(SPECS, "env"))
def test_env_invariants(spec, name):
    contract.env_invariants(spec, name, spec.env_episodes.get(name, 40), exhaustive_prob=0.02)


@slow
@pytest.mark.parametrize("spec, name", params(SPECS, "env"))
def test_env_invariants_slow(spec, name):
    contract.env_invariants(spec, name, SLOW_FACTOR * spec.env_episodes.get(name, 40), exhaustive_prob=0.02)


# -- information leaks and determinizations --------------------------------------------------
@pytest.mark.parametrize("spec, name", params(SPECS, "rule", "leak_sets"))
def test_information_leak(spec, name):
    assert sum(contract.leak_check(spec, name, games=spec.leak_games).values()) > 4 * spec.leak_games


@slow
@pytest.mark.parametrize("spec, name", params(SPECS, "rule", "leak_sets"))
def test_information_leak_slow(spec, name):
    contract.leak_check(spec, name, games=200)


@pytest.mark.parametrize("spec", params(SPECS))
def test_leak_check_has_teeth(spec):
    contract.leak_check_has_teeth(spec)


@pytest.mark.parametrize("spec, name", params(SPECS, "rule", "leak_sets"))
def test_sample_determinization_keeps_view_and_cards(spec, name):
    contract.determinization_check(spec, name, games=10)


@pytest.mark.parametrize("spec, name", params(SPECS, "rule"))
def test_sample_determinization_plays_on(spec, name):
    contract.determinizations_play_on(spec, name, games=spec.determinization_games)


@slow
@pytest.mark.parametrize("spec, name", params(SPECS, "rule"))
def test_sample_determinization_plays_on_slow(spec, name):
    contract.determinizations_play_on(spec, name, games=200)


# -- illegal actions -------------------------------------------------------------------------
@pytest.mark.parametrize("spec, name", params(SPECS, "env"))
def test_illegal_action_atomic(spec, name):
    contract.illegal_action_atomic(spec, name)


@pytest.mark.parametrize("spec", params(SPECS))
def test_engine_illegal_action_atomic(spec):
    contract.engine_illegal_action_atomic(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_illegal_action_terminate(spec):
    contract.illegal_action_terminate(spec)


# -- seeding and reset options ---------------------------------------------------------------
@pytest.mark.parametrize("spec", params(SPECS))
def test_same_seed_same_game(spec):
    contract.same_seed_same_game(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_unseeded_reset_continues_deterministically(spec):
    contract.unseeded_reset_continues(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_episode_seeds(spec):
    contract.episode_seeds(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_unknown_reset_options_warn(spec):
    contract.unknown_reset_options_warn(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_different_seeds_different_deals(spec):
    contract.different_seeds_different_deals(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_reset_never_drops_constructor_options(spec):
    contract.reset_keeps_constructor_options(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_bad_deck_rejected(spec):
    contract.check_bad_deck(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_dealer_option(spec):
    contract.check_dealer_option(spec)


# -- state dicts and replay ------------------------------------------------------------------
@pytest.mark.parametrize("spec, name", params(SPECS, "rule", "dict_sets"))
def test_state_dict_round_trip_and_replay(spec, name):
    contract.dict_and_replay(spec, name, max(2, spec.engine_games.get(name, 200) // 8))


@slow
@pytest.mark.parametrize("spec, name", params(SPECS, "rule"))
def test_state_dict_round_trip_and_replay_slow(spec, name):
    contract.dict_and_replay(spec, name, 2 * spec.engine_games.get(name, 200))


@pytest.mark.parametrize("spec", params(SPECS))
def test_reset_from_state_dict_continues_the_game(spec):
    contract.reset_from_state_dict_continues(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_state_dict_errors(spec):
    contract.state_dict_errors(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_reset_from_a_finished_state_dict_only_dead_steps(spec):
    contract.finished_state_dict_only_dead_steps(spec)


# -- layout, state(), rendering, action names, options, dead steps ---------------------------
@pytest.mark.parametrize("spec, name", params(SPECS, "env"))
def test_observation_layout(spec, name):
    contract.observation_layout(spec, name)


@pytest.mark.parametrize("spec", params(SPECS))
def test_state_vector(spec):
    contract.state_vector(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_render_ansi(spec):
    contract.render_ansi(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_render_human_and_none(spec, capsys):
    contract.render_human(spec, capsys)


@pytest.mark.parametrize("spec", params(SPECS))
def test_action_names_round_trip(spec):
    contract.action_names_round_trip(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_bad_env_options(spec):
    contract.bad_env_options(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_unknown_option_lists_every_accepted_name(spec):
    contract.unknown_option_lists_every_accepted_name(spec)


@pytest.mark.parametrize("spec", params(SPECS))
def test_dead_steps(spec):
    contract.dead_steps(spec)
