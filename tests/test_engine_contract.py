"""Every engine against the engine contract (``rummy_envs/games/base.py``), by names and by
behaviour, for each env spec of the contract suite that runs by default (one per game and
player count): the protocols' members exist; the view carries the rules; illegal actions
raise and change nothing; clones are independent; action names round-trip; and a state
sampled from a seat's view alone shows that seat the same view, holds every card, plays on
to the end, and puts the hidden cards in each zone as often as ``sample_determinization``
does from the true state."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

import env_contract as contract
import rummy_envs
from env_contract import GameSpec, params
from rummy_envs.games.base import GameConfig, GameState, PlayerView
from test_env_contract import SPECS

DEFAULT_SPECS = [spec for spec in SPECS if not spec.slow_contract]
SAMPLES = 240  # worlds drawn each way for the distribution comparison
MAX_ZONE_GAP = 0.2  # the largest total-variation distance allowed between the two samplers, per card


def random_points(spec: GameSpec, games: int = 3, seed: int = 5, per_game: int = 4) -> list[Any]:
    return contract.snapshots(spec, spec.main_rules, games, seed=seed, every=0.2, per_game=per_game)


@pytest.mark.parametrize("spec", params(DEFAULT_SPECS))
def test_states_and_views_meet_the_protocols(spec):
    for state in random_points(spec, games=1):
        assert isinstance(state, GameState) and isinstance(state.config, GameConfig)
        assert state.config.game in rummy_envs.ENVS and state.config.num_players == len(spec.agents)
        for p in range(state.config.num_players):
            view = state.player_view(p)
            assert isinstance(view, PlayerView) and view.player == p
            assert view.rules == state.config, "a view carries the rules options"
            if view.is_my_turn:
                assert view.legal_actions == tuple(state.legal_actions())


@pytest.mark.parametrize("spec", params(DEFAULT_SPECS))
def test_views_are_hashable_and_equal_for_equal_positions(spec):
    """Views are values: a search keys positions by the mover's view (``check_playable``),
    also at the end of a game or match, where the views hold the finished hands' results."""
    for name in spec.rule_sets:
        for d in contract.game_points(spec, name, seed=1, count=6):
            state = spec.state_class.from_dict(d)
            for p in range(state.config.num_players):
                view = state.player_view(p)
                assert hash(view) == hash(state.clone().player_view(p)) and view == state.clone().player_view(p)


@pytest.mark.parametrize("spec", params(DEFAULT_SPECS))
def test_apply_clone_and_action_names(spec):
    contract.engine_illegal_action_atomic(spec)
    for state in random_points(spec):
        before = state.to_dict()
        copy = state.clone()
        for action in state.legal_actions():
            assert state.str_to_action(state.action_to_str(action)) == action
        if not state.is_terminal():
            copy.apply(state.legal_actions()[0])
            assert state.to_dict() == before, "a clone shares nothing with its original"
        assert type(state).from_dict(before).to_dict() == before


def zones(state: Any) -> Counter:
    """(card, zone) of every card of a state, the zone being the state dict's list that holds
    it (a hand, the stock, a pile, a meld), whatever its position in that list."""
    d = state.to_dict()
    found: Counter = Counter()
    for path in contract._card_lists(d):
        for card in contract._at(d, path):
            found[card, path] += 1
    return found


def zone_gap(a: list[Counter], b: list[Counter]) -> tuple[float, str]:
    """The largest total-variation distance, over cards, between where two samplers put it."""
    def shares(samples: list[Counter]) -> dict[str, Counter]:
        out: dict[str, Counter] = {}
        for sample in samples:
            for (card, zone), k in sample.items():
                out.setdefault(card, Counter())[zone] += k
        return out

    sa, sb = shares(a), shares(b)
    worst, where = 0.0, ""
    for card in sa.keys() | sb.keys():
        za, zb = sa.get(card, Counter()), sb.get(card, Counter())
        ta, tb = sum(za.values()), sum(zb.values())
        gap = 0.5 * sum(abs(za[z] / ta - zb[z] / tb) for z in za.keys() | zb.keys())
        if gap > worst:
            worst, where = gap, f"{card}: {dict(za)} against {dict(zb)}"
    return worst, where


@pytest.mark.parametrize("spec", params(DEFAULT_SPECS))
def test_sample_from_view_shows_the_same_view_and_plays_on(spec):
    rng = random.Random(61)
    n = len(spec.agents)
    checked = 0
    for state in random_points(spec, games=4, seed=7):
        for p in contract.observers(state, n, rng):
            view = state.player_view(p)
            sampled = type(state).sample_from_view(view, rng)
            assert sampled.player_view(p) == view, f"seat {p} sees another view in {state.phase.name}"
            if view.is_my_turn:  # another seat's legal actions depend on its hidden hand
                assert sampled.legal_actions() == state.legal_actions()
            assert sampled.current_player == state.current_player
            assert Counter(card for (card, _), k in zones(sampled).items() for _ in range(k)) == \
                Counter(card for (card, _), k in zones(state).items() for _ in range(k)), "cards not conserved"
            contract.play_out(spec, sampled, rng, f"sampled for seat {p} in {state.phase.name}")
            checked += 1
    assert checked >= 8


@pytest.mark.parametrize("spec", params(DEFAULT_SPECS))
def test_sample_from_view_agrees_with_sample_determinization(spec):
    rng = random.Random(67)
    points = [s for s in random_points(spec, games=3, seed=11, per_game=2) if not s.is_terminal()][:3]
    assert points
    for state in points:
        p = state.current_player
        view = state.player_view(p)
        from_view = [zones(type(state).sample_from_view(view, rng)) for _ in range(SAMPLES)]
        from_state = [zones(state.sample_determinization(p, rng)) for _ in range(SAMPLES)]
        gap, where = zone_gap(from_view, from_state)
        assert gap < MAX_ZONE_GAP, f"{state.phase.name}, seat {p}: {where}"


def test_zone_gap_has_teeth():
    """A sampler that never deals a hidden card into the other hand is told apart."""
    fair = [Counter({("AS", ("hands", 1)): 1}) if i % 4 == 0 else Counter({("AS", ("stock",)): 1}) for i in range(400)]
    biased = [Counter({("AS", ("stock",)): 1}) for _ in range(400)]
    assert zone_gap(fair, biased)[0] > MAX_ZONE_GAP
    assert zone_gap(fair, fair[::-1])[0] == 0
