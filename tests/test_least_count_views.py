"""Least Count's player view field by field: at random points of seeded games
(2, 4 and 10 players, one round and matches with eliminations), every field of
``state.player_view(seat)`` for every seat equals what the test computes from the engine
state's own attributes, seats relative to the viewer (index 0 is the viewer) where the view
says so; and every field of ``LeastCountView`` has such a check."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

import pytest

from least_count_oracle import legal_subsets, oracle_value
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState, LeastCountView, Phase
from test_least_count_engine import oracle_rules
from test_least_count_env import declaring, patient, uniform


def relative(state: LeastCountState, seat: int, values: list[Any]) -> tuple:
    """Per-seat ``values`` listed from ``seat`` on, clockwise (the viewer first)."""
    return tuple(values[(seat + k) % state.n] for k in range(state.n))


def legal(state: LeastCountState) -> tuple[int, ...]:
    """The legal actions of the player to move, from the oracle's discards and the rules of
    declaring and picking (docs/least_count.md#turn)."""
    cfg, p = state.config, state.current_player
    if state.phase == Phase.TURN_START:
        hand = state.hands[p]
        count = sum(oracle_value(c, state.cut_card) for c in hand)
        may_declare = (state.turn_done[p] or cfg.declare_timing == "start_of_any_turn") and (
            cfg.declare_max_count is None or count <= cfg.declare_max_count)
        masks = legal_subsets(hand, **oracle_rules(state.rules))
        return tuple(sorted([L.DECLARE] * may_declare + [L.DISCARD - 1 + mask for mask in masks]))
    if state.phase == Phase.PICK:
        picks = [L.PICK_OPEN + card for card in set(state.open_set)]
        return tuple(sorted(picks + [L.PICK_CLOSED] * bool(state.stock or state.dead)))
    return ()


def round_number(state: LeastCountState) -> int:
    """The round in play (from 1), or the last one once over: one past the rounds recorded
    before it (these games record every round), and ``round_index + 1``."""
    number = len(state.hand_results) + (not state.is_terminal())
    assert number == state.round_index + 1
    return number


EXPECTED: dict[str, Callable[[LeastCountState, int], Any]] = {
    "player": lambda s, seat: seat,
    "num_players": lambda s, seat: s.config.num_players,
    "phase": lambda s, seat: s.phase,
    "is_my_turn": lambda s, seat: s.current_player == seat,
    "to_move": lambda s, seat: None if s.current_player < 0 else (s.current_player - seat) % s.n,
    "dealer": lambda s, seat: (s.dealer - seat) % s.n,
    "hand": lambda s, seat: tuple(s.hands[seat]),
    "count": lambda s, seat: sum(oracle_value(c, s.cut_card) for c in s.hands[seat]),
    "open_set": lambda s, seat: tuple(s.open_set),
    "pending_discard": lambda s, seat: tuple(s.pending),
    "dead_pile": lambda s, seat: tuple(s.dead),
    "stock_size": lambda s, seat: len(s.stock),
    "cut_card": lambda s, seat: s.cut_card if s.cut_card >= 0 else None,
    "hand_sizes": lambda s, seat: relative(s, seat, [len(h) for h in s.hands]),
    "known": lambda s, seat: relative(s, seat, [tuple(k) for k in s.known]),
    "totals": lambda s, seat: relative(s, seat, s.totals),
    "eliminated": lambda s, seat: relative(s, seat, [out > 0 for out in s.out_round]),
    "out_round": lambda s, seat: relative(s, seat, s.out_round),
    "turn_done": lambda s, seat: relative(s, seat, s.turn_done),
    "turns": lambda s, seat: s.turns,
    "round_number": lambda s, seat: round_number(s),
    "winners": lambda s, seat: tuple((q - seat) % s.n for q in s.winners),
    "truncated": lambda s, seat: s.truncated,
    "rules": lambda s, seat: s.config,
    "legal_actions": lambda s, seat: legal(s) if s.current_player == seat else (),
}

Policy = Callable[[LeastCountState, random.Random], int]
# name: (options, games, policy); patient play runs rounds long (reshuffles, known cards, timeouts)
GAMES: dict[str, tuple[dict, int, Policy]] = {
    "two_players_timed_out": ({"num_players": 2, "max_turns_per_round": 30}, 3, patient),
    "four_players_jokers_cut": ({"num_printed_jokers": 2, "cut_joker": True, "hand_size": 7,
                                 "allow_three_of_a_kind": True}, 2, patient),
    "ten_players": ({"num_players": 10, "max_turns_per_round": 60}, 1, patient),
    "match_of_four": ({"episode": "match", "elimination_score": 30, "declare_max_count": 20}, 2, declaring),
    "match_of_two_first_elimination": ({"num_players": 2, "episode": "match", "elimination_score": 40,
                                        "match_end": "first_elimination"}, 4, declaring),
    "match_of_ten": ({"num_players": 10, "episode": "match", "elimination_score": 25,
                      "declare_timing": "start_of_any_turn"}, 1, uniform),
}


def check_views(state: LeastCountState) -> None:
    """Every field of every seat's view against ``EXPECTED``."""
    for seat in range(state.n):
        view = state.player_view(seat)
        for name, expected in EXPECTED.items():
            assert getattr(view, name) == expected(state, seat), (name, seat)


@pytest.mark.parametrize("name", list(GAMES))
def test_each_view_field_is_what_the_state_says(name):
    """At random points of the seeded games (about one in four), and at each game's end."""
    options, games, policy = GAMES[name]
    seen = {"eliminated": 0, "rounds": 0, "points": 0, "truncated": 0}
    for seed in range(games):
        state, rng = LeastCountState(LeastCountConfig(**options), seed=seed), random.Random(seed)
        while not state.is_terminal():
            if rng.random() < 0.25:
                check_views(state)
                seen["points"] += 1
                seen["eliminated"] += any(state.out_round)
            state.apply(policy(state, rng))
        check_views(state)
        seen["rounds"] += state.round_index + 1
        seen["truncated"] += state.truncated
    assert seen["points"] >= 20, seen
    if options.get("episode") == "match":
        assert seen["rounds"] > games and (seen["eliminated"] or options["match_end"] == "first_elimination"), seen
    else:
        assert seen["truncated"], seen


def test_every_view_field_is_checked():
    """A field added to the view without a check here fails."""
    assert set(EXPECTED) == {f.name for f in dataclasses.fields(LeastCountView)}
