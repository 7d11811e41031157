"""Manipulation Rummy's player view field by field: at random positions of seeded
games (hand and match episodes, both knock timings, two and three players), every field of
``state.player_view(seat)`` for every seat equals what the test computes itself from the
engine state's own attributes (counts, seats, totals), seats relative to the viewer. A new
view field without a check of its own fails ``test_every_view_field_is_checked``."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

import pytest

from rummy_envs.games.manipulation_rummy import ManipulationState, ManipulationView, Phase
from test_manipulation_rummy_state_dict import game

JOKER = 52
RULE_SETS = {  # (options, seeds)
    "hand": ({}, (1, 2)),
    "match": ({"episode": "match", "target_score": 60}, (1, 3)),
    "start_knock_last_card": ({"knock_timing": "start_of_turn", "knock_limit": 12,
                               "stock_out_trigger": "last_card_drawn"}, (4,)),
    "winner_deals_play_on": ({"episode": "match", "target_score": 40, "tie_break": "play_on",
                              "next_dealer": "winner", "max_draws": 2}, (5,)),
    "three_players_capped": ({"num_players": 3, "num_decks": 1, "episode": "match", "max_rounds": 2,
                              "target_score": 400, "next_dealer": "loser"}, (6,)),
}
POSITIONS_PER_GAME = 12


def ids(counts: list[int]) -> tuple[int, ...]:
    """Card ids of a count list, ascending, copies repeated."""
    return tuple(card for card in range(len(counts)) for _ in range(counts[card]))


def card_value(card: int) -> int:
    """A = 1, 2-10 their rank, J/Q/K 10, the joker 25 (docs/manipulation_rummy.md#cards-and-melds)."""
    return 25 if card == JOKER else min(card % 13 + 1, 10)


def relative(values: list[int], s: ManipulationState, seat: int) -> tuple[int, ...]:
    """Per-seat values reordered so that index 0 is ``seat`` and the others follow to its left."""
    return tuple(values[(seat + k) % s.n] for k in range(s.n))


def table_counts(s: ManipulationState) -> list[int]:
    """Identities on the table now: its naturals plus the jokers standing for them."""
    return [natural + joker for natural, joker in zip(s.naturals, s.jokers_at)]


def committed_table(s: ManipulationState) -> tuple[int, ...]:
    """The table as last committed: the commit's start during a commit, else the table now."""
    if s.start_naturals is None:
        return ids(table_counts(s))
    return ids([natural + joker for natural, joker in zip(s.start_naturals, s.start_jokers)])


CHECKS: dict[str, Callable[[ManipulationState, int], Any]] = {
    "player": lambda s, seat: seat,
    "num_players": lambda s, seat: s.config.num_players,
    "phase": lambda s, seat: s.phase,
    "is_my_turn": lambda s, seat: s.current_player == seat,
    "to_move": lambda s, seat: None if s.phase == Phase.GAME_OVER else (s.current_player - seat) % s.n,
    "dealer": lambda s, seat: (s.dealer - seat) % s.n,
    "hand": lambda s, seat: ids(s.hands[seat]),
    "hand_value": lambda s, seat: sum(k * card_value(card) for card, k in enumerate(s.hands[seat])),
    "table": lambda s, seat: ids(table_counts(s)),
    "table_jokers": lambda s, seat: ids(s.jokers_at),
    "arrangement": lambda s, seat: s.arrangement,
    "placed": lambda s, seat: ids(s.placed),
    "spare_naturals": lambda s, seat: ids(s.naturals if s.start_naturals is None else s.spare),
    "freed_jokers": lambda s, seat: s.free_jokers,
    "draws": lambda s, seat: s.draws,
    "table_ops": lambda s, seat: s.ops,
    "hand_sizes": lambda s, seat: relative([sum(hand) for hand in s.hands], s, seat),
    "known": lambda s, seat: relative([ids(k) for k in s.known], s, seat),
    "limit_seen": lambda s, seat: relative(s.limit_seen, s, seat),
    "stock_size": lambda s, seat: len(s.stock),
    "scores": lambda s, seat: relative(s.totals if s.final is None else s.final, s, seat),
    "rounds_won": lambda s, seat: relative(s.rounds_won, s, seat),
    "round_number": lambda s, seat: s.round_index + 1,
    "legal_actions": lambda s, seat: tuple(s.legal_actions()) if s.current_player == seat else (),
    "rules": lambda s, seat: s.config,
}


def check_views(s: ManipulationState) -> None:
    """Every field of every seat's view is the one computed from the state's attributes, and
    the arrangement is the table as last committed."""
    for seat in range(s.n):
        view = s.player_view(seat)
        for name, expected in CHECKS.items():
            assert getattr(view, name) == expected(s, seat), f"seat {seat}, field {name}"
        assert tuple(sorted(c for meld in view.arrangement for c in meld)) == committed_table(s), f"seat {seat}"
    for q, seen in enumerate(s.limit_seen):  # a hand seen against knock_limit as its turn ended is still on that side
        value = sum(k * card_value(card) for card, k in enumerate(s.hands[q]))
        assert seen is None or (s.config.knock_timing == "end_of_turn"
                                and (seen == "within") == (value <= s.config.knock_limit)), (q, seen, value)


def test_every_view_field_is_checked():
    assert {f.name for f in dataclasses.fields(ManipulationView)} == set(CHECKS)


@pytest.mark.parametrize("rule_set", RULE_SETS)
def test_every_view_field_follows_the_state(rule_set):
    options, seeds = RULE_SETS[rule_set]
    seen_phases, seen_commit, rounds = set(), False, 0
    for seed in seeds:
        states = game(seed, **options)
        picked = random.Random(seed).sample(range(len(states) - 1), min(POSITIONS_PER_GAME, len(states) - 1))
        for s in [states[i] for i in picked] + [states[-1]]:
            check_views(s)
            seen_phases.add(s.phase)
            seen_commit |= s.start_naturals is not None
        rounds = max(rounds, states[-1].round_index)
    assert Phase.MELD in seen_phases and Phase.GAME_OVER in seen_phases, seen_phases
    assert seen_commit, "no commit in progress among the positions checked"
    if options.get("episode") == "match":
        assert rounds >= 1, "a match of one round: the round number and the dealer were not tested past round 1"
