"""The player views of Gin Rummy (``GinView``) and Hollywood Gin (``HollywoodView``) checked
field by field: at random points of seeded games under several rule sets (hand
and match mode, the explicit showdown, Oklahoma, the 50th card), every field of each seat's
``player_view`` equals what the test computes itself from the engine state's attributes,
seats relative to the viewer (docs/gin_rummy.md#player-view, docs/hollywood_gin.md#player-view).
A view field without a computation here fails ``test_every_view_field_is_checked``.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from rummy_envs import cards as C
from rummy_envs.games.gin_rummy import GinState, GinView, Phase
from rummy_envs.games.hollywood_gin import HollywoodState, HollywoodView
from test_gin_rummy_env import varied

SHOWDOWN = {Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF}
ALWAYS = SHOWDOWN | {Phase.LAST_CHANCE, Phase.GAME_OVER}
EXPLICIT = {"knocker_arrangement": "explicit", "layoff_mode": "explicit"}
CHECK_EVERY = 0.25  # the share of ordinary decisions checked (those of ALWAYS always are)


def cards(mask: int) -> tuple[int, ...]:
    """The card ids of a bitmask, lowest first."""
    return tuple(c for c in range(C.NUM_CARDS) if mask >> c & 1)


def relative(seat: int, viewer: int) -> int:
    """0 for the viewer, 1 for the other seat."""
    return 0 if seat == viewer else 1


def pair(values: list[Any], viewer: int, of: Callable[[Any], Any] = lambda v: v) -> tuple[Any, Any]:
    """A per-seat list as the viewer sees it: its own entry first."""
    return of(values[viewer]), of(values[1 - viewer])


def showdown(s: GinState, viewer: int) -> dict[str, Any]:
    """What the viewer sees of the knocker's melds and deadwood and of its own melds: the
    defender sees the knocker's hand face up (the melds declared so far, with its layoffs on
    them once the knocker is done); the knocker sees its own declaration when it arranges
    explicitly, and everything once the hand is over."""
    none = {"knocker_melds": (), "knocker_deadwood": (), "my_melds": ()}
    if s.knocker < 0:
        return none
    over = s.phase == Phase.GAME_OVER
    melded = 0
    for meld in s.knocker_melds:
        melded |= meld
    deadwood = cards(s.hands[s.knocker] & ~melded)
    if s.knocker == viewer and not over:
        if s.config.knocker_arrangement != "explicit":
            return none
        declared = tuple(cards(m) for m in s.knocker_melds)
        return {"knocker_melds": declared, "knocker_deadwood": deadwood, "my_melds": declared}
    shown = s.knocker_melds if s.phase == Phase.KNOCKER_MELD else s.meld_extents
    mine = s.knocker_melds if s.knocker == viewer else s.defender_melds
    return {"knocker_melds": tuple(cards(m) for m in shown), "knocker_deadwood": deadwood,
            "my_melds": tuple(cards(m) for m in mine)}


def gin_fields(s: GinState, viewer: int) -> dict[str, Any]:
    """Every ``GinView`` field, computed from the state's attributes."""
    opp, moving, over = 1 - viewer, s.current_player == viewer, s.phase == Phase.GAME_OVER
    taken = s.taken_card if s.taken_card >= 0 else None
    return {
        "player": viewer,
        "phase": s.phase,
        "is_my_turn": moving,
        "hand": cards(s.hands[viewer]),
        "top_discard": s.pile[-1] if s.pile else None,
        "discard_pile": tuple(s.pile),
        "discarded": pair(s.discarded, viewer, cards),
        "opponent_known": cards(s.known[opp]),
        "opponent_hand_size": len(cards(s.hands[opp])),
        "stock_size": len(s.stock),
        "is_dealer": s.dealer == viewer,
        "upcard_passed": tuple(s.passed),
        "knock_limit": s.knock_limit,
        "multiplier": s.multiplier,
        "taken_card": taken if moving else None,
        "knocker": None if s.knocker < 0 else relative(s.knocker, viewer),
        **showdown(s, viewer),
        "layoffs": tuple(tuple(layoff) for layoff in s.layoffs) if s.knocker == opp or over else (),
        "scores": pair(s.match.totals, viewer),
        "hands_won": pair(s.match.wins, viewer),
        "legal_actions": tuple(s.legal_actions()) if moving else (),
        "hand_index": s.hand_index,
        "upcard": s.upcard,
        "turns": s.turns,
        "my_known": cards(s.known[viewer]),
        "opponent_taken_card": taken if s.current_player == opp else None,
        "knock_card": s.knock_card if s.knocker == viewer and s.knock_card >= 0 else None,
        "hand_results": tuple(s.hand_results),
        "rules": s.config,
    }


def hollywood_fields(s: HollywoodState, viewer: int) -> dict[str, Any]:
    """Every ``HollywoodView`` field: gin's, the scores summed over the columns, and the sheet."""
    sheet = s.match
    return {
        **gin_fields(s, viewer),
        "scores": pair(sheet.score, viewer, sum),
        "column_scores": pair(sheet.score, viewer, tuple),
        "columns_entered": pair(sheet.entered, viewer, tuple),
        "column_hands": pair(sheet.hands, viewer, tuple),
        "column_winners": tuple(None if w < 0 else relative(w, viewer) for w in sheet.closed_by),
    }


CHECKERS: dict[type[GinState], tuple[type[GinView], Callable[[Any, int], dict[str, Any]]]] = {
    GinState: (GinView, gin_fields),
    HollywoodState: (HollywoodView, hollywood_fields),
}

GAMES: dict[type[GinState], dict[str, tuple[dict, int]]] = {  # per game: rule sets (rules, games)
    GinState: {
        "hand": ({}, 6),
        "explicit_big_gin": ({**EXPLICIT, "big_gin_bonus": 31}, 6),
        "oklahoma_last_chance": ({"variant": "oklahoma", "stock_end_rule": "opponent_last_chance",
                                  "dead_stock_size": 25}, 6),
        "match": ({"episode": "match", "target_score": 40, "next_dealer": "loser", "variant": "oklahoma"}, 2),
    },
    HollywoodState: {
        "hand": ({}, 4),
        "match_explicit": ({"episode": "match", "target_score": 30, "variant": "oklahoma", **EXPLICIT}, 2),
    },
}


def check_view(s: GinState, viewer: int, values: dict[str, set[str]]) -> None:
    """Each field of ``viewer``'s view against its own computation, naming the first that
    differs; the values seen are added to ``values`` (by field, as text)."""
    view_class, expected_fields = CHECKERS[type(s)]
    view = s.player_view(viewer)
    assert type(view) is view_class
    for name, expected in expected_fields(s, viewer).items():
        assert getattr(view, name) == expected, f"{name} of seat {viewer} in {s.phase.name}"
        values.setdefault(name, set()).add(repr(expected))


def check_games(state_class: type[GinState], rules: dict, games: int, seed: int,
                values: dict[str, set[str]]) -> Counter:
    """Play seeded games, checking both seats' views at random decisions, in every showdown
    and 50th-card decision and at the end; the phases checked, counted."""
    rng = random.Random(seed)
    config = state_class.config_class(**rules)
    checked: Counter = Counter()
    for game in range(games):
        s = state_class(config, seed * 100 + game)
        while True:
            if s.phase in ALWAYS or rng.random() < CHECK_EVERY:
                for viewer in (0, 1):
                    check_view(s, viewer, values)
                checked[s.phase] += 1
            if s.is_terminal():
                break
            s.apply(varied(s, rng))
    return checked


@pytest.mark.parametrize("state_class", list(GAMES))
def test_every_view_field_matches_the_engine_state(state_class):
    """Under each rule set, every phase the rules reach is checked; over all of them, every
    field takes two values at least (a field stuck at one value would check nothing)."""
    values: dict[str, set[str]] = {}
    for name, (rules, games) in GAMES[state_class].items():
        checked = check_games(state_class, rules, games, len(name), values)
        assert checked[Phase.GAME_OVER] == games and checked[Phase.DISCARD] and checked[Phase.DRAW], (name, checked)
        if rules.get("layoff_mode") == "explicit":
            assert all(checked[phase] for phase in SHOWDOWN), (name, checked)
        if rules.get("stock_end_rule") == "opponent_last_chance":
            assert checked[Phase.LAST_CHANCE], (name, checked)
    assert not [name for name, seen in values.items() if len(seen) < 2]


@pytest.mark.parametrize("state_class", list(CHECKERS))
def test_every_view_field_is_checked(state_class):
    view_class, expected_fields = CHECKERS[state_class]
    state = state_class(state_class.config_class(), 0)
    assert set(expected_fields(state, 0)) == {f.name for f in dataclasses.fields(view_class)}
