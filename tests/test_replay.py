"""Game logs (rummy_envs.replay), for every env of the contract suite: a log of a random game
replays exactly through the engine and through the env (also from JSON text, from a given
deck and dealer, and a daily deal on another day); a log holding an illegal or out-of-range
action fails naming its index and the legal actions there; bad logs are refused naming the
field."""

from __future__ import annotations

import json
import random
import re

import pytest

import rummy_envs
from env_contract import GameSpec, params
from rummy_envs import replay as RP
from rummy_envs.games import rummy500 as R
from test_env_contract import SPECS


def played(spec: GameSpec, seed: int, given: bool = False) -> object:
    """A finished game of the GameSpec's main rules under its policy (from a shuffled deck and a
    dealer given to it when ``given``)."""
    config = spec.config(spec.main_rules)
    rng = random.Random(seed)
    deck = dealer = None
    if given:
        deck = sorted(spec.full_deck(config))
        rng.shuffle(deck)
        dealer = seed % len(spec.agents)
    state = spec.state_class(config, seed, deck, dealer)
    while not state.is_terminal():
        state.apply(spec.policy(state, rng))
    return state


@pytest.mark.parametrize("spec", params(SPECS))
@pytest.mark.parametrize("given", [False, True], ids=["seeded", "deck_and_dealer"])
def test_a_log_replays_exactly(spec, given):
    state = played(spec, 3, given)
    log = json.loads(json.dumps(RP.game_log(state)))
    assert log["game"] == state.config.game and log["seed"] == state.seed and log["actions"] == state.history
    assert (log["deck"] is not None) == given and log["dealer"] == state.first_dealer
    assert RP.replay(log).to_dict() == state.to_dict()
    env = RP.replay_env(log)
    assert env.game.to_dict() == state.to_dict() and env.agents == []
    middle = len(state.history) // 2  # a log of a game in progress replays to that point
    prefix = RP.replay({**log, "actions": log["actions"][:middle]})
    assert prefix.history == state.history[:middle] and not prefix.is_terminal()


@pytest.mark.parametrize("spec", params(SPECS))
def test_an_illegal_action_fails_naming_its_index_and_the_legal_actions(spec):
    state = played(spec, 5)
    log = RP.game_log(state)
    rng = random.Random(1)
    index = rng.randrange(len(log["actions"]))
    before = RP.replay({**log, "actions": log["actions"][:index]})
    legal = before.legal_actions()
    illegal = next(a for a in range(spec.num_actions) if a not in legal)
    for bad in (illegal, -1, spec.num_actions, 10**9):
        for replay in (RP.replay, RP.replay_env):
            actions = list(log["actions"])
            actions[index] = bad
            with pytest.raises(RP.ReplayError) as info:
                replay({**log, "actions": actions})
            error = info.value
            assert isinstance(error, ValueError) and (error.index, error.action, error.legal) == (index, bad, legal)
            message = str(error)
            assert f"'actions[{index}]'" in message and f"action {bad} " in message
            assert f"player {before.current_player}" in message and before.phase.name in message
            assert all(f"{a} ({spec.action_name(a)})" in message for a in legal)


@pytest.mark.parametrize("spec", params(SPECS))
def test_actions_after_the_end_fail(spec):
    log = RP.game_log(played(spec, 7))
    n = len(log["actions"])
    for replay in (RP.replay, RP.replay_env):
        with pytest.raises(RP.ReplayError, match=rf"'actions\[{n}\]': the game is over after {n} actions") as info:
            replay({**log, "actions": log["actions"] + [0]})
        assert info.value.index == n and info.value.legal == []


def test_env_options_and_a_daily_deal_replay():
    """A log keeps the env options it was played under (they do not change the play), and a
    daily deal's date, so it replays the same deal on any later day."""
    env = rummy_envs.rummy500_v0.raw_env(num_players=3, deal_seed_mode="daily", reward="win_loss")
    env.reset(seed=4)
    rng = random.Random(2)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
        else:
            env.step(rng.choice(env.game.legal_actions()))
    options = {"num_players": 3, "deal_seed_mode": "daily", "reward": "win_loss"}
    log = RP.game_log(env.game, options)
    assert log["options"] == {**options, "daily_date": env.game.daily_date} and env.game.daily_date is not None
    replayed, original = RP.replay_env(log).game.to_dict(), env.game.to_dict()
    assert replayed["options"] == {**original["options"], "daily_date": env.game.daily_date}  # the date fixed
    assert {**replayed, "options": None} == {**original, "options": None}
    other_day = {**log, "options": {**log["options"], "daily_date": "2001-01-01"}}
    with pytest.raises(RP.ReplayError):  # another day deals other cards: the log's actions do not fit
        RP.replay(other_day)
    assert R.Rummy500State.from_dict(env.game.to_dict()).daily_date == env.game.daily_date


def good_log() -> dict:
    from rummy_envs.games import gin_rummy as G

    return RP.game_log(G.GinState(G.GinConfig(), seed=1))


@pytest.mark.parametrize("change, field", [
    ({"actoins": []}, "actoins"),
    ({"format_version": 2}, "format_version"),
    ({"game": "poker"}, "game"),
    ({"options": {"knock_limit": -1}}, "options"),
    ({"options": "knock_limit=5"}, "options"),
    ({"seed": "7"}, "seed"),
    ({"deck": ["AS"] * 52}, "deck"),
    ({"deck": ["ZZ"]}, "deck[0]"),
    ({"dealer": 2}, "dealer"),
    ({"dealer": -1}, "dealer"),
    ({"actions": [2, "PASS"]}, "actions[1]"),
    ({"actions": 2}, "actions"),
])
def test_bad_logs_are_refused_naming_the_field(change, field):
    name = re.escape(field)
    with pytest.raises(ValueError, match=rf"^game log(?: field '{name}'|: unknown key\(s\) '{name}')"):
        RP.replay({**good_log(), **change})


def test_missing_fields_and_records_with_more_keys():
    log = good_log()
    with pytest.raises(ValueError, match="game log field 'seed': is required"):
        RP.replay({k: v for k, v in log.items() if k != "seed"})
    record = {**log, "game_id": 4, "margin": 1.5}
    with pytest.raises(ValueError, match="unknown key"):
        RP.replay(record)
    assert RP.replay(record, extra_keys=("game_id", "margin")).to_dict() == RP.replay(log).to_dict()
    with pytest.raises(ValueError, match="game log: expected a mapping"):
        RP.replay([log])
