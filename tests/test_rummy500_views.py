"""Rummy 500's player view, field by field: at random points of seeded games of
several rule sets (two to eight players, jokers, two decks, the reshuffle rule, the daily
deal, matches to a target and to a hand cap), every field of ``player_view(seat)`` for every
seat equals what is computed here from the engine state's own attributes (bitmasks and
multisets decoded here, seats turned relative to the viewer where the view says so), not
through the view builder or its helpers. A field added to the view without a check here
fails ``test_every_view_field_is_checked``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from rummy_envs.games.rummy500 import JOKER, MeldView, Rummy500State, Rummy500View
from test_rummy500_engine import random_points

# name: (options, players, games, seed)
RULE_SETS: dict[str, tuple[dict, int, int, int]] = {
    "two_players": ({}, 2, 2, 1),
    "three_players_jokers_match": ({"num_jokers": 1, "episode": "match", "target_score": 100}, 3, 1, 2),
    "four_players_reshuffles": ({"num_jokers": 2, "stock_end_rule": "reshuffle_discards", "hand_size": 10}, 4, 2, 3),
    "five_players_two_decks_daily": ({"deal_seed_mode": "daily", "daily_date": "2026-11-30",
                                      "layoff_credit": "meld_owner"}, 5, 1, 4),
    "eight_players_anytime_rediscard": ({"target_use_timing": "anytime_before_discard",
                                         "allow_rediscard_taken_card": True}, 8, 1, 5),
    "two_players_capped_match": ({"episode": "match", "max_hands": 2, "max_turns_per_hand": 40}, 2, 2, 6),
}


def cards_of(multiset: list[int]) -> tuple[int, ...]:
    """The sorted card ids of a ``[once, twice, jokers]`` multiset, copies repeated, jokers last."""
    once, twice, jokers = multiset
    naturals = [card for card in range(JOKER) for bit in (once, twice) if bit >> card & 1]
    return tuple(naturals) + (JOKER,) * jokers


def ids_of(mask: int) -> tuple[int, ...]:
    """The card ids of a bitmask, ascending."""
    return tuple(card for card in range(JOKER + 1) if mask >> card & 1)


def relative(state: Rummy500State, seat: int, q: int) -> int:
    """Absolute seat ``q`` as seen from ``seat`` (0: itself, then round the table in seat order)."""
    return (q - seat) % state.n


def by_viewer(state: Rummy500State, seat: int, values: list[Any]) -> tuple[Any, ...]:
    """A per-seat list reordered from the viewer round the table."""
    return tuple(values[(seat + k) % state.n] for k in range(state.n))


def table_order(meld: Any) -> tuple[int, ...]:
    """A meld's identities as they lie: a set by suit, a sequence from its low position (an ace
    at position 13 is the high ace)."""
    if meld.is_set:
        return ids_of(meld.cards)
    return tuple(meld.key * 13 + position % 13 for position in range(meld.lo, meld.hi + 1))


MELD_CHECKS: dict[str, Callable[[Rummy500State, int, Any], Any]] = {
    "is_set": lambda s, seat, m: m.is_set,
    "cards": lambda s, seat, m: table_order(m),
    "jokers": lambda s, seat, m: ids_of(m.jokers),
    "credit": lambda s, seat, m: tuple(relative(s, seat, m.credit[card]) for card in table_order(m)),
    "owner": lambda s, seat, m: relative(s, seat, m.owner),
}


def meld_fields(state: Rummy500State, seat: int) -> list[dict[str, Any]]:
    """Each table meld as a dict of its view's fields."""
    return [{name: check(state, seat, meld) for name, check in MELD_CHECKS.items()} for meld in state.melds]


CHECKS: dict[str, Callable[[Rummy500State, int], Any]] = {
    "player": lambda s, seat: seat,
    "num_players": lambda s, seat: s.config.num_players,
    "phase": lambda s, seat: s.phase,
    "is_my_turn": lambda s, seat: s.current_player == seat,
    "to_move": lambda s, seat: None if s.current_player == -1 else relative(s, seat, s.current_player),
    "dealer": lambda s, seat: relative(s, seat, s.dealer),
    "hand": lambda s, seat: cards_of(s.hands[seat]),
    "pending": lambda s, seat: ids_of(s.pending & ~s.pending_jokers),
    "pending_jokers": lambda s, seat: ids_of(s.pending_jokers),
    "discard_pile": lambda s, seat: tuple(s.pile),
    "stock_size": lambda s, seat: len(s.stock),
    "hand_sizes": lambda s, seat: by_viewer(s, seat, [len(cards_of(h)) for h in s.hands]),
    "known": lambda s, seat: by_viewer(s, seat, [cards_of(k) for k in s.known]),
    "melds": meld_fields,
    "target": lambda s, seat: None if s.target == -1 else s.target,
    "banned": lambda s, seat: None if s.banned == -1 else s.banned,
    "turns": lambda s, seat: s.turns,
    "scores": lambda s, seat: by_viewer(s, seat, s.totals),
    "hand_number": lambda s, seat: s.hand_index + 1,
    "reshuffles": lambda s, seat: s.reshuffles,
    "hand_results": lambda s, seat: tuple(s.hand_results),
    "winners": lambda s, seat: tuple(relative(s, seat, q) for q in s.winners),
    "truncated": lambda s, seat: s.truncated,
    "daily_date": lambda s, seat: s.daily_date,
    "rules": lambda s, seat: s.config,
    "legal_actions": lambda s, seat: tuple(s.legal_actions()) if s.current_player == seat else (),
}


def shown(view: Rummy500View, name: str) -> Any:
    """A field of the view, melds as dicts of their fields."""
    value = getattr(view, name)
    return [dataclasses.asdict(m) for m in value] if name == "melds" else value


@cache
def sampled(name: str) -> tuple[Rummy500State, ...]:
    """States at random points of the seeded games of a rule set, and each game's end."""
    options, players, games, seed = RULE_SETS[name]
    return tuple(random_points(options, players, games, seed, every=0.08, ends=True))


def check_views(state: Rummy500State) -> None:
    """Every field of every seat's view equals its check."""
    for seat in range(state.n):
        view = state.player_view(seat)
        for name, expected in CHECKS.items():
            assert shown(view, name) == expected(state, seat), (name, seat, state.to_dict())


def test_every_view_field_is_checked():
    assert set(CHECKS) == {f.name for f in dataclasses.fields(Rummy500View)}
    assert set(MELD_CHECKS) == {f.name for f in dataclasses.fields(MeldView)}


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_each_view_field_equals_the_engine_state(name):
    states = sampled(name)
    for state in states:
        check_views(state)
    seen = {"melds": any(s.melds for s in states), "known": any(k[0] for s in states for k in s.known),
            "over": any(s.is_terminal() for s in states), "mid_turn": any(s.pending for s in states)}
    assert all(seen.values()), seen


def test_the_sample_reaches_what_the_checks_decide():
    """Across the rule sets some state shows jokers on the table, a target, a banned card, a
    later hand of a match, match winners, a truncated episode, a reshuffle and a daily date,
    so the checks of those fields compare something."""
    states = [state for name in RULE_SETS for state in sampled(name)]
    seen = {"table jokers": any(m.jokers for s in states for m in s.melds),
            "target": any(s.target >= 0 for s in states), "banned": any(s.banned >= 0 for s in states),
            "later hand": any(s.hand_index for s in states),
            "winners": any(s.winners for s in states), "truncated": any(s.truncated for s in states),
            "reshuffle": any(s.reshuffles for s in states), "daily": any(s.daily_date for s in states),
            "two copies": any(h[1] for s in states for h in s.hands)}
    assert all(seen.values()), seen
