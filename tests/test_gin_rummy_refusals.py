"""Refusal table of the gin readers, ``GinState.from_dict`` and ``HollywoodState.from_dict``
one case per clause of gin's state_dict.py and match.py and of Hollywood's
scoresheet.py, each a dict the rules reach (a scripted or seeded game's ``to_dict``) changed
in one field so that only that clause refuses it, with the values just past each bound.
``check_table`` fails if a clause has fewer cases than the ways its guard can hold.

The two games share one table: Hollywood is gin's engine with its scoresheet as the match
score, so gin's clauses are covered once, by gin cases, and the sheet's by Hollywood cases,
which carry their own reader (``Case.read``).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from refusals import Case, changed, check_table, edit, option, then
from rummy_envs import cards as C
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinConfig, GinState, Phase
from rummy_envs.games.gin_rummy.match import won_hand_bound
from rummy_envs.games.hollywood_gin import HollywoodState
from test_gin_rummy_env import knocky, uniform
from test_gin_rummy_rules import G3_DEFENDER, G3_KNOCKER, G5_DEFENDER, G5_KNOCKER, last_chance_state, make_deck
from test_hollywood_gin_rules import sheet_after

MODULES = ["rummy_envs/games/gin_rummy/state_dict.py", "rummy_envs/games/gin_rummy/match.py",
           "rummy_envs/games/hollywood_gin/scoresheet.py"]

# -- scripted hands (dealer 1, so seat 0 is the non-dealer and the knocker) --------------------
EXPLICIT = {"knocker_arrangement": "explicit", "layoff_mode": "explicit"}
OPENING = ("PASS", "PASS", "DRAW_STOCK")
G3_KNOCK = (*OPENING, "KNOCK(8C)")  # G3: deadwood 1 (AS); the melds sort as 9s, diamonds, hearts
G3_MELDED = (*G3_KNOCK, "MELD(2H 3H 4H)", "MELD(9S 9C 9D)", "MELD(JD QD KD)", "DONE")
G3_DEFENDED = (*G3_MELDED, "MELD(TC TH TD)", "DONE")
HEARTS = 2  # the slot of 2H 3H 4H among G3's knocker melds
G3_DECK = make_deck(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C")
# Two melds that touch (AC-3C, 4C-6C, merged into one run once declared) and a set: two slots.
RUN_KNOCKER, RUN_DEFENDER = "AC 2C 3C 4C 5C 6C 9S 9H 9D 2D", "3S 4S 7H 8H JC QH KD QS JS TD"
RUN_DECK = make_deck(RUN_KNOCKER, RUN_DEFENDER, "8S", stock_top="KS")
RUN_MELDED = (*OPENING, "KNOCK(KS)", "MELD(AC 2C 3C)", "MELD(4C 5C 6C)", "MELD(9S 9H 9D)", "DONE")


@cache
def scripted(actions: tuple[str, ...], deck: tuple[int, ...] = tuple(G3_DECK), state_class: type[GinState] = GinState,
             **options: Any) -> dict:
    """The dict after playing ``actions`` (names) from a deal of ``deck`` with dealer 1."""
    state = state_class(state_class.config_class(**options), seed=0, deck=list(deck), dealer=1)
    for name in actions:
        state.apply(G.str_to_action(name))
    return state.to_dict()


def script(*actions: str, deck: list[int] = G3_DECK, state_class: type[GinState] = GinState,
           **options: Any) -> Callable[[], dict]:
    """A case base: ``scripted`` for later."""
    return lambda: scripted(actions, tuple(deck), state_class, **options)


@cache
def seeded(until: Callable[[GinState], bool], state_class: type[GinState] = GinState, policy=uniform,
           **options: Any) -> dict:
    """The dict of the first state of seeded games (seeds 0, 1, ...) for which ``until`` holds."""
    config = state_class.config_class(**options)
    for seed in range(200):
        state, rng = state_class(config, seed), random.Random(seed)
        while True:
            if until(state):
                return state.to_dict()
            if state.is_terminal():
                break
            state.apply(policy(state, rng))
    raise AssertionError(f"no seeded game reached the state wanted under {options}")


def play(until: Callable[[GinState], bool], state_class: type[GinState] = GinState, policy=uniform,
         **options: Any) -> Callable[[], dict]:
    """A case base: ``seeded`` for later."""
    return lambda: seeded(until, state_class, policy, **options)


def fresh(state_class: type[GinState] = GinState, seed: int = 0, **options: Any) -> Callable[[], dict]:
    """A case base: a new deal."""
    return lambda: state_class(state_class.config_class(**options), seed).to_dict()


def last_chance() -> dict:
    """A case base: seat 1's 50th-card decision, the stock down to dead_stock_size=2."""
    return last_chance_state("2H 3H 4H 9C 9D JD QD KD AS 5S", "7C 9S").to_dict()


def with_match(base: Callable[[], dict], match: dict) -> Callable[[], dict]:
    """A case base: ``base`` with its match score replaced (a scenario starting from given scores)."""
    return lambda: changed(base(), match=match)


# -- the states the seeded bases stop at ---------------------------------------------------------
# (module-level functions, so that ``seeded`` caches each base once)
def draw_above_dead_stock(s: GinState) -> bool:
    return s.phase == Phase.DRAW and len(s.stock) == s.config.dead_stock_size + 1


def discard_at_dead_stock(s: GinState) -> bool:
    return s.phase == Phase.DISCARD and len(s.stock) == s.config.dead_stock_size


def draw_before_turn_cap(s: GinState) -> bool:
    return s.phase == Phase.DRAW and s.turns == s.config.max_turns_per_hand - 1


def turn_capped(s: GinState) -> bool:
    return s.is_terminal() and s.hand_results[-1].kind == "turn_cap"


def second_hand_drawn(s: GinState) -> bool:
    """In a match, a draw of the second hand after a won first hand."""
    return s.phase == Phase.DRAW and s.hand_index == 1 and s.hand_results[0].winner >= 0


def match_won(s: GinState) -> bool:
    return s.is_terminal() and not s.truncated


def match_capped(s: GinState) -> bool:
    return s.is_terminal() and s.truncated


def taken_and_known(s: GinState) -> bool:
    """The mover took the top discard and the other seat also holds a card taken from the pile."""
    return s.phase == Phase.DISCARD and s.taken_card >= 0 and s.known[1 - s.current_player]


# -- changes -------------------------------------------------------------------------------------
def without(key: str) -> Callable[[dict], dict]:
    """The key left out (a scenario that does not give it)."""
    return lambda d: {k: v for k, v in d.items() if k != key}


def stock_to_pile(count: int) -> Callable[[dict], dict]:
    """Move the last ``count`` stock cards under the discard pile (its top unchanged)."""
    def apply(d: dict) -> dict:
        cut = len(d["stock"]) - count
        return changed(d, stock=d["stock"][:cut], discard_pile=d["stock"][cut:] + d["discard_pile"])
    return apply


def pile_to_stock(count: int) -> Callable[[dict], dict]:
    """Move the bottom ``count`` pile cards to the end of the stock."""
    return lambda d: changed(d, stock=d["stock"] + d["discard_pile"][:count], discard_pile=d["discard_pile"][count:])


def moved_knock_card(d: dict) -> dict:
    """The knock card put back at the end of the stock: a knock without its face-down card."""
    return changed(d, stock=d["stock"] + [d["knock_card"]], knock_card=None)


def other_hand_card(seat: int) -> Callable[[dict], dict]:
    """``taken_card`` set to a card of the other seat's hand."""
    return lambda d: changed(d, taken_card=d["hands"][1 - seat][0])


def result_appended(d: dict) -> dict:
    """One more hand result, a copy of the last."""
    return changed(d, hand_results=d["hand_results"] + [copy.deepcopy(d["hand_results"][-1])])


def result_dropped(d: dict) -> dict:
    """The last hand result left out."""
    return changed(d, hand_results=d["hand_results"][:-1])


def match_winner(d: dict) -> dict:
    """A mid-hand match won by seat 0 exactly at the target."""
    target = d["options"]["target_score"]
    return changed(d, match={"totals": [target, 0], "wins": [1, 0], "winner": 0})


# -- bases -----------------------------------------------------------------------------------------
DEALT = script()
OFFER_D = script("PASS")
FORCED = script("PASS", "PASS")
TAKEN = script("TAKE_DISCARD")  # the non-dealer took the upcard 8S
DRAW = script(*OPENING, "DISCARD(AS)")
DISCARD = script(*OPENING)
KNOCKER_MELD = script(*G3_KNOCK, "MELD(2H 3H 4H)", **EXPLICIT)
DEFENDER_MELD = script(*G3_MELDED, **EXPLICIT)
LAYOFF = script(*G3_DEFENDED, f"LAYOFF(5H,{HEARTS})", **EXPLICIT)
KNOCKED_OVER = script(*G3_KNOCK)
AT_LIMIT = script(*G3_MELDED, knock_limit=1, **EXPLICIT)
RUN_DEFENDER_MELD = script(*RUN_MELDED, deck=RUN_DECK, **EXPLICIT)
RUN_LAYOFF = script(*RUN_MELDED, "DONE", deck=RUN_DECK, **EXPLICIT)  # the defender melds nothing
GIN_DEFENDER_MELD = script(*OPENING, "KNOCK(KC)", deck=make_deck(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="KC"),
                           layoff_mode="explicit")
BIG_GIN_OVER = script(*OPENING, "BIG_GIN", deck=make_deck(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="QS"),
                      big_gin_bonus=31)
OKLAHOMA = fresh(variant="oklahoma")
DRAW_AT_3 = play(draw_above_dead_stock)
DISCARD_AT_2 = play(discard_at_dead_stock)
BEFORE_CAP = play(draw_before_turn_cap, max_turns_per_hand=4)
CAPPED = play(turn_capped, max_turns_per_hand=4)
KNOWN = play(taken_and_known)
SMALL_MATCH = {"episode": "match", "target_score": 30}
CAPS = {"episode": "match", "max_turns_per_hand": 7, "max_hands_per_match": 4, "knock_limit": 3}
MATCH_DRAW = play(second_hand_drawn, policy=knocky, **SMALL_MATCH)
MATCH_WON = play(match_won, policy=knocky, **SMALL_MATCH)
MATCH_CAPPED = play(match_capped, policy=knocky, **CAPS)
MATCH_FRESH = fresh(episode="match")
CAPS_FRESH = fresh(**CAPS)
MHP = won_hand_bound(GinConfig())  # the most one won hand adds under the default bonuses (SMALL_MATCH's)

# Hollywood: a fresh match from a sheet the entry rule reached (seat 0 closed column 0 at 105;
# seat 1 entered column 1 with one hand of 12), and a match after a won hand.
SHEET = sheet_after([(0, 40), (0, 30), (0, 20), (0, 15), (1, 12)]).to_dict()
HOLLYWOOD = with_match(fresh(HollywoodState, episode="match"), SHEET)
HOLLYWOOD_WON_HAND = play(second_hand_drawn, HollywoodState, knocky, **SMALL_MATCH)


def gin_cases() -> dict[str, Case]:
    """Gin's clauses (state_dict.py and match.py), in the order the reader runs them."""
    deck = [C.format_card(c) for c in G3_DECK]
    cases = {
        # initial_deck: not 52 distinct cards (one short, one over, one repeated)
        "deck_one_short": Case(DEALT, edit("initial_deck", deck[:-1]), "initial_deck"),
        "deck_one_over": Case(DEALT, edit("initial_deck", deck + deck[:1]), "initial_deck"),
        "deck_repeat": Case(DEALT, edit("initial_deck", deck[:-1] + deck[:1]), "initial_deck"),
        # every card in one place
        "card_missing": Case(DEALT, lambda d: changed(d, stock=d["stock"][1:]), "stock"),
        "card_twice": Case(DEALT, lambda d: changed(d, stock=d["stock"] + d["discard_pile"]), "discard_pile"),
        "knock_card_in_stock": Case(KNOCKED_OVER, lambda d: changed(d, stock=d["stock"] + [d["knock_card"]]),
                                    "knock_card"),
        # stakes
        "oklahoma_without_upcard": Case(OKLAHOMA, without("upcard"), "upcard"),
        "knock_limit_one_over": Case(DEALT, edit("knock_limit", 11), "knock_limit"),
        "knock_limit_one_under": Case(DEALT, edit("knock_limit", 9), "knock_limit"),
        "oklahoma_limit_one_over": Case(OKLAHOMA, lambda d: changed(d, knock_limit=d["knock_limit"] + 1),
                                        "knock_limit"),
        "multiplier_doubled": Case(DEALT, edit("multiplier", 2), "multiplier"),
        # seat and phase
        "over_with_a_mover": Case(KNOCKED_OVER, edit("current_player", 0), "current_player"),
        "playing_without_a_mover": Case(DRAW, edit("current_player", -1), "current_player"),
        "dealer_offered_first": Case(DEALT, edit("current_player", 1), "current_player"),
        "a_first_hand_dealt_by_another_seat": Case(DEALT, lambda d: changed(d, first_dealer=1 - d["dealer"]),
                                                   "first_dealer"),
        "non_dealer_offered_second": Case(OFFER_D, edit("current_player", 0), "current_player"),
        "dealer_forced_to_draw": Case(FORCED, edit("current_player", 1), "current_player"),
        # knock fields
        "showdown_without_knocker": Case(DEFENDER_MELD, edit("knocker", -1), "knocker"),
        "big_gin_without_knock": Case(DRAW, edit("big_gin", True), "big_gin"),
        "extents_without_knock": Case(DRAW, edit("meld_extents", [["2H", "3H", "4H"]]), "meld_extents"),
        "remaining_without_knock": Case(DRAW, edit("remaining", ["AD"]), "remaining"),
        "knock_in_draw": Case(KNOCKER_MELD, then(edit("phase", "DRAW"), edit("current_player", 1)), "knocker"),
        "knock_in_discard": Case(KNOCKER_MELD, edit("phase", "DISCARD"), "knocker"),
        "knock_card_and_big_gin": Case(KNOCKER_MELD, edit("big_gin", True), "big_gin"),
        "knock_without_knock_card": Case(KNOCKER_MELD, moved_knock_card, "knock_card"),
        "big_gin_not_played": Case(BIG_GIN_OVER, option("big_gin_bonus", None), "big_gin"),
        # hand sizes
        "hand_one_short": Case(DEALT, lambda d: changed(d, hands=[d["hands"][0][1:], d["hands"][1]],
                                                        stock=d["stock"] + d["hands"][0][:1]), "hands"),
        "hand_one_over": Case(DEALT, lambda d: changed(d, hands=[d["hands"][0] + d["stock"][:1], d["hands"][1]],
                                                       stock=d["stock"][1:]), "hands"),
        "discarder_without_draw": Case(DISCARD, lambda d: changed(d, hands=[d["hands"][0][1:], d["hands"][1]],
                                                                  stock=d["stock"] + d["hands"][0][:1]), "hands"),
        "big_gin_hand_of_ten": Case(BIG_GIN_OVER, lambda d: changed(d, hands=[d["hands"][0][1:], d["hands"][1]],
                                                                    stock=d["stock"] + d["hands"][0][:1]), "hands"),
        # the opening offer, the pile and the stock
        "dealer_passed_alone": Case(TAKEN, edit("passed", [False, True]), "passed"),
        "offer_nd_after_a_pass": Case(DEALT, edit("passed", [True, False]), "passed"),
        "offer_d_before_a_pass": Case(OFFER_D, edit("passed", [False, False]), "passed"),
        "forced_draw_one_pass": Case(FORCED, edit("passed", [True, False]), "passed"),
        "offer_after_a_turn": Case(DEALT, edit("turns", 1), "turns"),
        "offer_pile_of_two": Case(DEALT, stock_to_pile(1), "discard_pile"),
        "draw_from_empty_pile": Case(DRAW, lambda d: pile_to_stock(len(d["discard_pile"]))(d), "discard_pile"),
        "last_chance_empty_pile": Case(last_chance, lambda d: pile_to_stock(len(d["discard_pile"]))(d),
                                       "discard_pile"),
        "draw_at_dead_stock": Case(DRAW_AT_3, stock_to_pile(1), "stock"),
        "discard_below_dead_stock": Case(DISCARD_AT_2, stock_to_pile(1), "stock"),
        "last_chance_above_dead_stock": Case(last_chance, pile_to_stock(1), "stock"),
        "last_chance_when_dead": Case(last_chance, option("stock_end_rule", "dead"), "phase"),
        "taken_card_in_draw": Case(DRAW, lambda d: changed(d, taken_card=d["hands"][1][0]), "taken_card"),
        "taken_card_of_the_other_hand": Case(TAKEN, other_hand_card(0), "taken_card"),
        "known_not_in_hand_0": Case(KNOWN, lambda d: changed(d, known=[d["hands"][1][:1], d["known"][1]]),
                                    "known[0]"),
        "known_not_in_hand_1": Case(KNOWN, lambda d: changed(d, known=[d["known"][0], d["hands"][0][:1]]),
                                    "known[1]"),
        "discarded_in_stock_0": Case(KNOWN, lambda d: changed(d, discarded=[d["stock"][:1], d["discarded"][1]]),
                                     "discarded[0]"),
        "discarded_in_stock_1": Case(KNOWN, lambda d: changed(d, discarded=[d["discarded"][0], d["stock"][-1:]]),
                                     "discarded[1]"),
        "turns_at_the_cap": Case(BEFORE_CAP, edit("turns", 4), "turns"),
        # the showdown
        "knocker_meld_by_defender": Case(KNOCKER_MELD, edit("current_player", 1), "current_player"),
        "defender_meld_by_knocker": Case(DEFENDER_MELD, edit("current_player", 0), "current_player"),
        "knocker_meld_auto_best": Case(KNOCKER_MELD, option("knocker_arrangement", "auto_best"), "phase"),
        "knocker_meld_long_run": Case(RUN_DEFENDER_MELD, then(
            edit("phase", "KNOCKER_MELD"), edit("current_player", 0), edit("remaining", ["2D"]),
            edit("meld_extents", [])), "knocker_melds[0]"),
        "defender_melds_early": Case(KNOCKER_MELD, edit("defender_melds", [["TC", "TH", "TD"]]), "defender_melds"),
        "layoffs_early": Case(KNOCKER_MELD, edit("layoffs", [["5H", 0]]), "layoffs"),
        "extents_early": Case(KNOCKER_MELD, edit("meld_extents", [["2H", "3H", "4H"]]), "meld_extents"),
        "knocker_remaining_short": Case(KNOCKER_MELD, lambda d: changed(d, remaining=d["remaining"][1:]),
                                        "remaining"),
        "defender_meld_auto_layoffs": Case(DEFENDER_MELD, option("layoff_mode", "auto_optimal"), "phase"),
        "layoff_auto_layoffs": Case(LAYOFF, option("layoff_mode", "auto_optimal"), "phase"),
        "touching_runs": Case(RUN_DEFENDER_MELD, then(
            edit("knocker_melds", [["AC", "2C", "3C"], ["4C", "5C", "6C"], ["9S", "9H", "9D"]]),
            edit("meld_extents", [["AC", "2C", "3C"], ["4C", "5C", "6C"], ["9S", "9H", "9D"]])), "knocker_melds"),
        "deadwood_one_over_the_limit": Case(AT_LIMIT, then(option("knock_limit", 0), edit("knock_limit", 0)),
                                            "knocker_melds"),
        "meld_left_out": Case(DEFENDER_MELD, lambda d: changed(d, knocker_melds=d["knocker_melds"][1:],
                                                               meld_extents=d["meld_extents"][1:]), "knocker_melds"),
        "layoff_after_gin": Case(GIN_DEFENDER_MELD, edit("phase", "LAYOFF"), "phase"),
        "layoff_in_defender_meld": Case(DEFENDER_MELD, edit("layoffs", [["5H", HEARTS]]), "layoffs"),
        "layoff_past_the_melds": Case(RUN_LAYOFF, edit("layoffs", [["7H", 2]]), "layoffs[0]"),
        "layoff_of_a_stock_card": Case(LAYOFF, lambda d: changed(d, layoffs=d["layoffs"] + [[d["stock"][0], 0]]),
                                       "layoffs[1]"),
        "layoff_twice": Case(LAYOFF, lambda d: changed(d, layoffs=d["layoffs"] * 2), "layoffs[1]"),
        "layoff_of_a_melded_card": Case(LAYOFF, edit("layoffs", [["TH", HEARTS]]), "layoffs[0]"),
        "layoff_that_does_not_fit": Case(LAYOFF, edit("layoffs", [["6H", HEARTS]]), "layoffs"),
        "extents_without_the_layoff": Case(LAYOFF, edit(f"meld_extents.{HEARTS}", ["2H", "3H", "4H"]),
                                           "meld_extents"),
        "over_remaining_of_the_knocker": Case(KNOCKED_OVER, lambda d: changed(d, remaining=d["hands"][0][:1]),
                                              "remaining"),
        "defender_remaining_short": Case(DEFENDER_MELD, lambda d: changed(d, remaining=d["remaining"][1:]),
                                         "remaining"),
        # the match and the truncation flag
        "truncated_mid_hand": Case(DRAW, edit("truncated", True), "truncated"),
        "hand_over_without_its_result": Case(KNOCKED_OVER, edit("hand_results", []), "hand_results"),
        "knock_recorded_as_dead": Case(KNOCKED_OVER, lambda d: changed(d, hand_results=[{
            **d["hand_results"][0], "kind": "dead", "winner": -1, "points": [0, 0], "knocker": -1}]), "hand_results"),
        "capped_hand_with_a_knocker": Case(CAPPED, lambda d: changed(d, hand_results=[{
            **d["hand_results"][0], "kind": "knock", "winner": 1, "knocker": 1}]), "hand_results"),
        "knock_truncated": Case(KNOCKED_OVER, edit("truncated", True), "truncated"),
        "turn_cap_not_truncated": Case(CAPPED, edit("truncated", False), "truncated"),
        "match_won_mid_hand": Case(MATCH_DRAW, match_winner, "match"),
        "won_match_truncated": Case(MATCH_WON, edit("truncated", True), "truncated"),
        "capped_match_not_truncated": Case(MATCH_CAPPED, edit("truncated", False), "truncated"),
        "result_one_too_many": Case(MATCH_DRAW, result_appended, "hand_results"),
        "over_result_one_too_many": Case(MATCH_CAPPED, result_appended, "hand_results"),
        "score_below_the_results": Case(MATCH_DRAW, edit("match", {"totals": [0, 0], "wins": [0, 0], "winner": -1}),
                                        "match"),
        "capped_match_one_hand_short": Case(MATCH_CAPPED, result_dropped, "hand_results"),
        # match.py: the score against the target
        "target_reached_without_winner": Case(MATCH_FRESH, edit("match", {"totals": [100, 0], "wins": [1, 0],
                                                                          "winner": -1}), "match"),
        "winner_one_below_target": Case(MATCH_WON, edit("match", {"totals": [29, 0], "wins": [1, 0], "winner": 0}),
                                        "match"),
        "both_at_the_target": Case(MATCH_WON, edit("match", {"totals": [30, 30], "wins": [1, 1], "winner": 0}),
                                   "match"),
        "points_without_a_win": Case(MATCH_FRESH, edit("match", {"totals": [0, 5], "wins": [1, 0], "winner": -1}),
                                     "match"),
        "one_win_too_many": Case(CAPS_FRESH, edit("match", {"totals": [0, 0], "wins": [3, 2], "winner": -1}),
                                 "match"),
        "winner_a_hand_past_target": Case(MATCH_WON, edit("match", {"totals": [30 + MHP, 0], "wins": [1, 0],
                                                                    "winner": 0}), "match"),
    }
    cases |= {f"{key}_{seat}_repeat": Case(KNOWN, edit(f"{key}.{seat}", ["AC", "AC"]), f"{key}[{seat}]")
              for key in ("known", "discarded") for seat in (0, 1)}
    cases |= {
        "remaining_repeat": Case(DEFENDER_MELD, lambda d: changed(d, remaining=d["remaining"][:1] * 2), "remaining"),
        "knocker_meld_of_two": Case(DEFENDER_MELD, edit("knocker_melds.0", ["9S", "9C"]), "knocker_melds[0]"),
        "knocker_melds_overlap": Case(DEFENDER_MELD, edit("knocker_melds.1", ["9S", "9C", "9D"]), "knocker_melds[1]"),
        "defender_meld_of_the_knocker": Case(DEFENDER_MELD, edit("defender_melds", [["2H", "3H", "4H"]]),
                                             "defender_melds[0]"),
        "layoff_not_a_pair": Case(LAYOFF, edit("layoffs.0", "5H"), "layoffs[0]"),
        "layoff_of_three": Case(LAYOFF, edit("layoffs.0", ["5H", HEARTS, 0]), "layoffs[0]"),
        "result_layoff_of_one": Case(KNOCKED_OVER, edit("hand_results.0.layoffs", [["5H"]]),
                                     "hand_results[0].layoffs[0]"),
        "dead_hand_with_winner": Case(CAPPED, edit("hand_results.0.winner", 0), "hand_results[0].winner"),
        "knock_without_winner": Case(KNOCKED_OVER, edit("hand_results.0.winner", -1), "hand_results[0].winner"),
        "loser_scores": Case(KNOCKED_OVER, edit("hand_results.0.points.1", 1), "hand_results[0].points"),
        "capped_with_knocker": Case(CAPPED, edit("hand_results.0.knocker", 0), "hand_results[0].knocker"),
        "knock_without_knocker": Case(KNOCKED_OVER, edit("hand_results.0.knocker", -1), "hand_results[0].knocker"),
    }
    return cases


def sheet_case(base: Callable[[], dict], change: Callable[[dict], dict]) -> Case:
    """A case of Hollywood's reader, refused naming the match (its scoresheet)."""
    return Case(base, change, "match", HollywoodState.from_dict)


def hollywood_cases() -> dict[str, Case]:
    """The sheet's clauses (scoresheet.py): each column closed by who reached the target in it,
    entered exactly when it holds a won hand, holding points only once entered."""
    return {
        "closed_column_left_open": sheet_case(HOLLYWOOD, edit("match.closed_by", [-1, -1, -1])),
        "column_closed_below_target": sheet_case(HOLLYWOOD, edit("match.closed_by", [0, 0, -1])),
        "column_at_target_left_open": sheet_case(HOLLYWOOD, edit("match.score.0.1", 100)),
        "entered_without_a_hand": sheet_case(HOLLYWOOD, edit("match.entered.1.2", True)),
        "hand_in_a_column_not_entered": sheet_case(HOLLYWOOD, edit("match.hands.1.2", 1)),
        "points_in_a_column_not_entered": sheet_case(HOLLYWOOD, edit("match.score.1.2", 5)),
        "more_hands_than_wins": sheet_case(HOLLYWOOD, edit("match.hands.1.1", 2)),
        "one_win_short": sheet_case(HOLLYWOOD, edit("match.wins.0", 3)),
        "sheet_below_the_results": sheet_case(HOLLYWOOD_WON_HAND, edit("match", {})),
    }


CASES = {**gin_cases(), **{f"hollywood_{name}": case for name, case in hollywood_cases().items()}}
EXEMPT: dict[str, str] = {}


def test_every_clause_of_the_reader_refuses_its_own_case():
    check_table(GinState.from_dict, CASES, MODULES, EXEMPT)


def test_a_hollywood_column_entered_without_a_won_hand_is_refused():
    """The sheet of a real match reads back; a column entered with no hand in it, or holding
    points while not entered, is refused naming the match (the entry rule's two halves)."""
    assert HollywoodState.from_dict(HOLLYWOOD()).match.entered[1] == [False, True, False]
    for change in (edit("match.entered.1.2", True), edit("match.score.1.2", 5)):
        with pytest.raises(ValueError, match="'match': player 1 enters column 2 with a won hand"):
            HollywoodState.from_dict(change(HOLLYWOOD()))
