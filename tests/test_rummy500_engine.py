"""The Rummy 500 engine against the brute-force oracle of tests/rummy500_oracle.py (the
exact mask of the micro-actions and of the deep takes, on random mid-hand states of every
rule family), and properties over random games (hypothesis): every table card credited to
whoever the rules say, every card conserved, every hand scored as table points minus hand
points, the turn never stuck.

Fast versions run in CI; the ``slow`` ones (``pytest -m slow``) check thousands of states.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rummy500_oracle as oracle
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Phase, Rummy500Config, Rummy500State
from test_rummy500_env import ScoreWatcher, check_hand_score, check_state, meldy

slow = pytest.mark.slow

# Rule families the mask depends on; each is played with 2, 4 and 8 players below.
MASK_RULES = {
    "default": {},
    "jokers": {"num_jokers": 2},
    "anytime_top_must_use": {"num_jokers": 1, "target_use_timing": "anytime_before_discard",
                             "top_discard_must_be_used": True},
    "must_discard": {"must_discard_to_go_out": True, "num_jokers": 1},
    "rediscard_two_decks": {"allow_rediscard_taken_card": True, "num_decks": 2},
    "small_hands_two_decks": {"hand_size": 3, "num_decks": 2, "stock_end_rule": "reshuffle_discards"},
}
PLAYERS = (2, 4, 8)


def oracle_states(rules: dict, players: int, games: int, seed: int, every: float) -> list[Rummy500State]:
    """Clones of states the oracle can check, from games of the meldy policy."""
    config = Rummy500Config(num_players=players, **rules)
    rng = random.Random(seed)
    out = []
    for i in range(games):
        s = Rummy500State(config, seed * 1000 + i)
        while not s.is_terminal():
            if rng.random() < every and oracle.affordable(s.to_dict()):
                out.append(s.clone())
            s.apply(meldy(s, rng))
    return out


def check_against_oracle(rules: dict, players: int, games: int, every: float) -> Counter:
    seen: Counter = Counter()
    for state in oracle_states(rules, players, games, seed=players + len(rules), every=every):
        d = state.to_dict()
        expected = oracle.legal_actions(d)
        got = set(state.legal_actions())
        assert got == expected, (f"{d['phase']}: engine extra {[R.action_to_str(a) for a in got - expected]}, "
                                 f"missing {[R.action_to_str(a) for a in expected - got]}; hand {d['hands'][d['current_player']]}, "
                                 f"pile {d['discard_pile']}, melds {[m['cards'] for m in d['melds']]}, "
                                 f"pending {d['pending']} {d['pending_jokers']}, target {d['target']}, banned {d['banned']}")
        seen[d["phase"]] += 1
        seen["deep take offered"] += any(R.TAKE_DISCARD <= a < R.TAKE_DISCARD + len(state.pile) - 1 for a in got)
        seen["deep take refused"] += state.phase == Phase.DRAW and len(state.pile) > 2 and not any(
            R.TAKE_DISCARD <= a < R.TAKE_DISCARD + len(state.pile) - 1 for a in got)
        seen["pending group"] += bool(state.pending)
        seen["target due"] += state.target >= 0
        seen["joker picks"] += any(R.PICK_JOKER <= a < R.LAY_OFF for a in got)
    return seen


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("name", list(MASK_RULES))
def test_mask_equals_the_brute_force_oracle(name, players):
    seen = check_against_oracle(MASK_RULES[name], players, games=24 // players, every=0.3)
    assert seen["DRAW"] > 5 and seen["MELD"] > 20 and seen["pending group"] > 5, seen


def test_the_oracle_states_cover_the_hard_cases():
    """Across the families the sample holds deep takes offered and refused, targets due and
    joker declarations, so the oracle comparison above decides them."""
    total: Counter = Counter()
    for name in ("default", "jokers", "anytime_top_must_use"):
        total += check_against_oracle(MASK_RULES[name], 2, games=6, every=0.3)
    for key in ("deep take offered", "deep take refused", "target due", "joker picks"):
        assert total[key] >= 3, total


@slow
@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("name", list(MASK_RULES))
def test_mask_equals_the_brute_force_oracle_slow(name, players):
    check_against_oracle(MASK_RULES[name], players, games=200 // players, every=0.5)


def test_oracle_has_teeth():
    """Positive control: the oracle disagrees with a wrong mask (an extra discard while a
    deep-take target is due)."""
    states = [s for s in oracle_states({}, 2, games=10, seed=3, every=1.0) if s.target >= 0]
    assert states
    d = states[0].to_dict()
    assert not any(R.DISCARD <= a for a in oracle.legal_actions(d))
    d["target"] = None
    assert any(R.DISCARD <= a for a in oracle.legal_actions(d))


# ---------------------------------------------------------------------------------------
# Properties over random games
# ---------------------------------------------------------------------------------------

OPTIONS = st.fixed_dictionaries({
    "num_players": st.integers(2, 8),
    "num_jokers": st.integers(0, 2),
    "joker_value": st.sampled_from([0, 15, 25]),
    "top_discard_must_be_used": st.booleans(),
    "target_use_timing": st.sampled_from(["first_table_action", "anytime_before_discard"]),
    "allow_rediscard_taken_card": st.booleans(),
    "must_discard_to_go_out": st.booleans(),
    "layoff_credit": st.sampled_from(["layer", "meld_owner"]),
    "stock_end_rule": st.sampled_from(["end_on_decline", "reshuffle_discards"]),
    "out_bonus": st.sampled_from([0, 10]),
})
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_checked(options: dict, seed: int) -> Rummy500State:
    """A hand under random meldy play, with the credit, conservation and score checks of
    every action (``ScoreWatcher``, ``check_state``)."""
    config = Rummy500Config(**options)
    s = Rummy500State(config, seed)
    watcher = ScoreWatcher(config)
    rng = random.Random(seed)
    while not s.is_terminal():
        watcher.before(s)
        s.apply(meldy(s, rng))
        check_state(s)
        watcher.after(s)
    return s


@FAST
@given(OPTIONS, st.integers(0, 10**6))
def test_credit_conservation_and_scores(options, seed):
    s = play_checked(options, seed)
    result = s.hand_results[-1]
    check_hand_score(s.config, result)
    assert sum(map(len, result.hands)) + sum(len(m["cards"]) for m in result.melds) + len(s.pile) + len(s.stock) \
        == s.config.deck_size


@slow
@SLOW
@given(OPTIONS, st.integers(0, 10**6))
def test_credit_conservation_and_scores_slow(options, seed):
    play_checked(options, seed)


def test_watcher_has_teeth():
    """Positive control: a hand result with a wrong credit or score fails the checks."""
    s = play_checked({}, 4)
    result = s.hand_results[-1]
    assert result.melds
    wrong = R.HandResult(**{**result.__dict__, "points": [p + 1 for p in result.points]})
    with pytest.raises(AssertionError):
        check_hand_score(s.config, wrong)
    moved = [dict(m, credit=[1 - c for c in m["credit"]]) for m in result.melds]
    with pytest.raises(AssertionError):
        check_hand_score(s.config, R.HandResult(**{**result.__dict__, "melds": moved}))
