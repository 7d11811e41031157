"""Refusal table of Manipulation Rummy's reader, ``ManipulationState.from_dict``:
one case per clause of its state_dict.py and match_checks.py, each a dict the rules reach (a
seeded game's or a played scenario's ``to_dict``) changed so that only that clause refuses
it, with the values just past each bound. ``check_table`` fails if a clause has fewer cases
than the ways its guard can hold. The bounds the reader hands to the shared field getters
(seats, draws, placements, action ids) have their own test, since those refusals are raised
by the shared module: each is tried one past it, on a dict the reader accepts.

Two-player games (one deck, one joker) keep the table solver quick.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

import env_contract as contract
from refusals import Case, adjust, changed, check_table, edit, option, then
from rummy_envs.games.manipulation_rummy import NUM_ACTIONS, ManipulationConfig, ManipulationState, Phase
from test_manipulation_rummy_rules import play, scenario
from test_manipulation_rummy_state_dict import MATCH, TRUNCATED, game

MODULES = ["rummy_envs/games/manipulation_rummy/state_dict.py", "rummy_envs/games/manipulation_rummy/match_checks.py"]
TWO = {"num_players": 2}


# -- bases -----------------------------------------------------------------------------------------
def scene(hands: list[str], *actions: str, **options: Any) -> Callable[[], dict]:
    """A case base: the dict of a two-player ``scenario`` after ``actions`` (names)."""
    @cache
    def build() -> dict:
        state = scenario(hands, **TWO, **options)
        play(state, *actions)
        return state.to_dict()
    return build


@cache
def played(seed: int, options: tuple[tuple[str, Any], ...]) -> list[ManipulationState]:
    """Every position of a seeded two-player game (``game``), played once for all its bases."""
    return game(seed, **dict(options))


def seeded(seed: int, round_index: int | None = None, **options: Any) -> Callable[[], dict]:
    """A case base: the end of a seeded two-player game, or the first meld decision of its
    round ``round_index``."""
    @cache
    def build() -> dict:
        states = played(seed, tuple(sorted(options.items())))
        if round_index is None:
            return states[-1].to_dict()
        return next(s for s in states if s.round_index == round_index and s.phase == Phase.MELD
                    and not s.in_commit).to_dict()
    return build


def but(base: Callable[[], dict], **fields: Any) -> Callable[[], dict]:
    """A case base: ``base`` with top-level fields replaced (``options`` merged)."""
    def build() -> dict:
        d = base()
        return changed(d, **{**fields, "options": {**d["options"], **fields.get("options", {})}})
    return build


def left_out(base: Callable[[], dict], rounds: int) -> Callable[[], dict]:
    """A case base: ``base`` with its first ``rounds`` recorded rounds left out (as a scenario may)."""
    def build() -> dict:
        d = base()
        return changed(d, hand_results=d["hand_results"][rounds:])
    return build


@cache
def dealt_from_deck() -> dict:
    """A fresh two-player deal from a given deck (``initial_deck`` recorded)."""
    config = ManipulationConfig(**TWO)
    deck = list(config.full_deck())
    random.Random(0).shuffle(deck)
    return ManipulationState(config, seed=0, deck=deck).to_dict()


MID = seeded(1, round_index=0)  # round 0 of a hand, seat 0's first meld decision
OUT = seeded(1)  # seat 1 went out; the joker on the table stands for QS, whose natural is in the stock
KNOCKED = seeded(0)  # seat 1 knocked with a hand worth 3
KNOCKED_AT_LIMIT = but(KNOCKED, options={"knock_limit": 3})
MATCH_MID = seeded(1, round_index=2, **MATCH)  # two rounds recorded, totals [0, 58]
MATCH_WON = seeded(1, **MATCH)  # three rounds; the second ended on totals [0, 58]
TRUNCATED_END = seeded(5, **{**TRUNCATED, "max_rounds": 1})  # seat 0 went out scoring 72, below the target
WINNER_MID = but(MATCH_MID, options={"next_dealer": "winner"})  # seat 1, the dealer, won both rounds
ONE_UNRECORDED = left_out(MATCH_MID, 1)
UNRECORDED = left_out(MATCH_MID, 2)  # two rounds left out: 2 to 4 wins in them
ALL_TIED = but(UNRECORDED, rounds_won=[2, 2])  # both rounds tied: the most wins they hold
# Two knocks of 60 points, one each, tie the final totals: under tie_break="play_on" the match
# plays on, which it may only if the first knock did not reach the target (61).
KNOCK_60 = {"kind": "knock", "winners": [0], "points": [60, 0], "totals": [60, 0], "values": [], "hands": [],
            "table": [], "table_jokers": []}
PLAYED_ON = but(MATCH_MID, options={"target_score": 61, "tie_break": "play_on"}, totals=[60, 60], rounds_won=[1, 1],
                hand_results=[{**KNOCK_60, "ender": 0},
                              {**KNOCK_60, "ender": 1, "winners": [1], "points": [0, 60], "totals": [60, 60]}])
HAND_UNRECORDED = left_out(OUT, 1)  # a finished hand whose round is left out


def unscored(base: Callable[[], dict], *fields: str, rounds: tuple[int, ...] = (0,)) -> Callable[[], dict]:
    """A case base: ``base`` with these fields of its recorded ``rounds`` left out (as a scenario
    may), so that the checks of what they would show stay quiet."""
    def build() -> dict:
        d = base()
        return changed(d, hand_results=[{**r, **{k: [] for k in fields}} if i in rounds else r
                                        for i, r in enumerate(d["hand_results"])])
    return build


OUT_UNSCORED = unscored(OUT, "hands", "values", "winners", "points", "totals")  # seat 1 went out: it won
KNOCK_UNSCORED = unscored(KNOCKED, "hands", "values")
STOCK_OUT_UNREVEALED = unscored(MATCH_MID, "hands", rounds=(1,))  # round 1: a stock-out won by seat 1 (10 to 27)
STOCK_OUT_UNVALUED = unscored(MATCH_MID, "hands", "values", rounds=(1,))
MATCH_UNTOTALLED = unscored(MATCH_MID, "totals", rounds=(0, 1))
ONE_UNRECORDED_UNTOTALLED = unscored(ONE_UNRECORDED, "totals")

TURN_START = scene(["3C", "AH AD KC"], phase="TURN_START", draws=0, knock_timing="start_of_turn", knock_limit=3)
STOCK_LEFT = scene(["3C", "AH AD KC"], phase="TURN_START", draws=0, knock_timing="start_of_turn", stock_top="5D",
                   rest_to="table")
STOCK_EMPTIED = but(STOCK_LEFT, stock=[], hands=[["3C"], ["AH", "AD", "KC", "5D"]])  # the last card drawn by seat 1
END_OF_TURN = scene(["2C", "KS QS"], phase="END_OF_TURN", knock_limit=2)
AFTER_LAST_DRAW = scene(["AC AD AH AS", "KS QS"], phase="END_OF_TURN", draws=3)  # 3 drawn and 1 from before
TWO_CARDS = scene(["5H 6H", "KS QS"])  # a meld decision after one draw
SECOND_DRAW = scene(["5H 6H 7C KD", "KS QS"], draws=2)  # a third draw would still leave a card from before
JOKER_HELD = scene(["2C 3C", "4H 5H"], table="7D 9D 8S 8H 8C", jokers="8D")
EMPTIED_IN_COMMIT = scene(["5S 6S 7S", "2D 3D"], "PLACE(5S)", "PLACE(6S)", "PLACE(7S)")  # may go out with COMMIT
PLACED_THREE = scene(["5S 6S 7S 2C", "2D 3D"], "PLACE(5S)", "PLACE(6S)", "PLACE(7S)")  # 3 ops, hand 2C
PLACED_TWO = scene(["5S 6S 7S QC", "2D 3D"], "PLACE(5S)", "PLACE(6S)")
JOKER_STAYS = scene(["5S 6S 7S QC", "2C 3D"], "PLACE(5S)", "PLACE(6S)", table="7D 9D", jokers="8D")
# M3: the hand's 8D frees the joker at 8D (2 or 3 ops: REPLACE_FROM_HAND, or PLACE then REPLACE_FROM_TABLE)
FREED = scene(["8D 5S 6S QC", "2C 3D"], "REPLACE_FROM_HAND(8D)", "PLACE(5S)", table="7D 9D", jokers="8D")
JOKER_PLACED = scene(["JK 5S 6S QC", "2C 3D"], "PLACE(5S)", "JOKER_AS(7S)", table="7D 8D 9D")
OPS_CAPPED = scene(["5S 6S 7S 2C", "2D 3D"], "PLACE(5S)", "PLACE(6S)", "PLACE(7S)", max_table_ops_per_turn=4)


# -- changes ---------------------------------------------------------------------------------------
def to_stock(seat: int) -> Callable[[dict], dict]:
    """Every card of a hand put at the end of the stock: the hand emptied."""
    return lambda d: changed(d, hands=[[] if q == seat else h for q, h in enumerate(d["hands"])],
                             stock=d["stock"] + d["hands"][seat])


def card_to_stock(seat: int) -> Callable[[dict], dict]:
    """The last card of a hand put at the end of the stock."""
    return lambda d: changed(d, hands=[h[:-1] if q == seat else h for q, h in enumerate(d["hands"])],
                             stock=d["stock"] + d["hands"][seat][-1:])


def stock_card_to(seat: int) -> Callable[[dict], dict]:
    """The top stock card put in a hand."""
    return lambda d: changed(d, hands=[h + d["stock"][:1] if q == seat else h for q, h in enumerate(d["hands"])],
                             stock=d["stock"][1:])


def swap_with_stock(seat: int, card: str, stock_card: str) -> Callable[[dict], dict]:
    """A card of a hand and one of the stock trade places."""
    def apply(d: dict) -> dict:
        out = copy.deepcopy(d)
        hand, stock = out["hands"][seat], out["stock"]
        hand[hand.index(card)], stock[stock.index(stock_card)] = stock_card, card
        return out
    return apply


def stock_to(field: str) -> Callable[[dict], dict]:
    """The top stock card moved to another list of cards (``table_naturals``)."""
    return lambda d: changed(d, stock=d["stock"][1:], **{field: d[field] + d["stock"][:1]})


def plus_one(path: str, index: int) -> Callable[[dict], dict]:
    """One entry of a list of numbers raised by one, e.g. ``plus_one("totals", 1)``."""
    return adjust(f"{path}.{index}", lambda value: value + 1)


def result(field: str, value: Any, index: int = 0) -> Callable[[dict], dict]:
    return edit(f"hand_results.{index}.{field}", value)


def commit_field(field: str, value: Callable[[dict], Any]) -> Callable[[dict], dict]:
    """A field of the commit in progress set to ``value(commit)``."""
    return lambda d: changed(d, commit={**d["commit"], field: value(d["commit"])})


def deck_edit(edit_deck: Callable[[list[str]], list[str]]) -> Callable[[dict], dict]:
    return lambda d: changed(d, initial_deck=edit_deck(list(d["initial_deck"])))


def finished_commit(d: dict) -> dict:
    """A commit just begun (its table the table now) on a finished game."""
    return changed(d, commit={"start_naturals": d["table_naturals"], "start_jokers": d["table_jokers"], "placed": [],
                              "spare_naturals": d["table_naturals"], "free_jokers": 0, "ops": 1})


def cut_meld(d: dict) -> dict:
    """The first meld of the first recorded table cut to two cards."""
    table = d["hand_results"][0]["table"]
    return result("table", [table[0][:2], *table[1:]])(d)


def doubled_meld(d: dict) -> dict:
    """The first meld of the first recorded table twice: one deck holds each card once."""
    table = d["hand_results"][0]["table"]
    return result("table", [*table, table[0]])(d)


def joker_off_table(d: dict) -> dict:
    table = d["hand_results"][0]["table"]
    return result("table_jokers", [next(c for c in range(52) if all(c not in m for m in table))])(d)


def stock_out_recorded(d: dict) -> dict:
    """The recorded round called a stock-out (no ender, nor what its values decide)."""
    r = d["hand_results"][0]
    return changed(d, hand_results=[{**r, "kind": "stock_out", "ender": -1, "winners": [], "points": [], "values": [],
                                     "hands": []}])


def table_card_in_hand(d: dict) -> dict:
    """A card of the first recorded table also in a recorded hand (values, points, winners left out)."""
    r = d["hand_results"][0]
    hands = [r["hands"][0] + [r["table"][0][0]], *r["hands"][1:]]
    return changed(d, hand_results=[{**r, "hands": hands, "values": [], "points": [], "winners": []},
                                    *d["hand_results"][1:]])


# -- the table --------------------------------------------------------------------------------------
CASES = {
    # the header, the deck, every card in one place, the identity limit
    "an_initial_deck_with_a_card_twice": Case(dealt_from_deck, deck_edit(lambda deck: deck[:-1] + deck[:1]),
                                              "initial_deck"),
    "an_initial_deck_a_card_short": Case(dealt_from_deck, deck_edit(lambda deck: deck[:-1]), "initial_deck"),
    "an_initial_deck_a_card_over": Case(dealt_from_deck, deck_edit(lambda deck: deck + deck[:1]), "initial_deck"),
    "a_card_missing": Case(MID, lambda d: changed(d, stock=d["stock"][1:]), "stock"),
    "a_card_twice": Case(MID, lambda d: changed(d, stock=d["stock"] + d["stock"][:1]), "stock"),
    "a_joker_over_the_identity_limit": Case(JOKER_HELD, edit("table_jokers", ["8S"]), "table_jokers"),
    "a_known_card_not_in_its_hand": Case(MID, lambda d: changed(d, known=[d["stock"][:1], []]), "known[0]"),
    "a_hand_seen_within_the_limit_above_it": Case(END_OF_TURN, edit("limit_seen", ["within", "within"]), "limit_seen"),
    "a_hand_seen_above_the_limit_within_it": Case(END_OF_TURN, edit("limit_seen", ["above", None]), "limit_seen"),
    "a_hand_seen_against_the_limit_with_the_start_of_turn_knock": Case(TURN_START, edit("limit_seen", [None, "above"]),
                                                                       "limit_seen"),
    "a_meld_decision_of_a_hand_seen_at_its_turn_end": Case(MID, edit("limit_seen", ["above", None]), "limit_seen"),
    "a_limit_seen_neither_within_nor_above": Case(MID, edit("limit_seen", [None, "below"]), "limit_seen"),
    "a_known_card_of_the_mover_neither_held_nor_placed": Case(PLACED_TWO, edit("known", [["KD"], []]), "known[0]"),
    # the seat to move against the phase
    "nobody_to_move_in_play": Case(MID, edit("current_player", -1), "current_player"),
    "a_seat_to_move_once_over": Case(OUT, edit("current_player", 0), "current_player"),
    "a_commit_once_over": Case(OUT, finished_commit, "commit"),
    "a_table_of_no_melds": Case(MID, stock_to("table_naturals"), "table_naturals"),
    # the turn
    "turn_start_without_the_option": Case(TURN_START, option("knock_timing", "end_of_turn"), "phase"),
    "turn_start_after_a_draw": Case(TURN_START, edit("draws", 1), "draws"),
    "turn_start_above_the_knock_limit": Case(TURN_START, option("knock_limit", 2), "hands"),
    "a_turn_on_a_stock_drawn_out": Case(STOCK_EMPTIED, option("stock_out_trigger", "last_card_drawn"), "stock"),
    "a_meld_decision_before_a_draw": Case(MID, edit("draws", 0), "draws"),
    "a_meld_decision_after_the_last_draw": Case(SECOND_DRAW, edit("draws", 3), "draws"),
    "more_draws_than_the_hand_holds": Case(TWO_CARDS, edit("draws", 2), "draws"),
    "end_of_turn_without_the_option": Case(END_OF_TURN, option("knock_timing", "start_of_turn"), "phase"),
    "end_of_turn_above_the_knock_limit": Case(END_OF_TURN, option("knock_limit", 1), "hands"),
    "end_of_turn_with_an_empty_hand": Case(END_OF_TURN, to_stock(0), "hands"),
    "end_of_turn_before_a_draw": Case(END_OF_TURN, edit("draws", 0), "draws"),
    "the_last_draw_into_too_small_a_hand": Case(AFTER_LAST_DRAW, card_to_stock(0), "hands[0]"),
    "an_empty_hand_waiting": Case(END_OF_TURN, to_stock(1), "hands[1]"),
    "an_empty_hand_to_move_out_of_a_commit": Case(TURN_START, to_stock(0), "hands[0]"),
    # the commit in progress
    "a_commit_at_a_knock_decision": Case(PLACED_THREE, edit("phase", "END_OF_TURN"), "commit"),
    "a_start_natural_not_on_the_table": Case(PLACED_THREE, commit_field("start_naturals", lambda c: ["AH"]),
                                             "commit.start_naturals"),
    "a_start_joker_gone": Case(PLACED_THREE, commit_field("start_jokers", lambda c: ["AH"]), "commit.start_jokers"),
    "a_spare_natural_never_on_the_table": Case(PLACED_THREE, commit_field(
        "spare_naturals", lambda c: c["spare_naturals"] + ["KS"]), "commit.spare_naturals"),
    "a_joker_moved_without_a_natural": Case(JOKER_STAYS, edit("table_jokers", ["7S"]), "commit.start_jokers"),
    "a_freed_joker_nothing_freed": Case(JOKER_PLACED, then(edit("table_jokers", []), commit_field(
        "free_jokers", lambda c: 1)), "commit.free_jokers"),
    "a_natural_freed_no_joker": Case(PLACED_THREE, commit_field("spare_naturals", lambda c: c["spare_naturals"][1:]),
                                     "commit.spare_naturals"),
    "placements_one_under_the_fewest": Case(PLACED_THREE, commit_field("ops", lambda c: 2), "commit.ops"),
    "placements_one_over_the_most": Case(EMPTIED_IN_COMMIT, commit_field("ops", lambda c: 4), "commit.ops"),
    "a_freeing_commit_one_under_the_fewest": Case(FREED, commit_field("ops", lambda c: 1), "commit.ops"),
    "a_freeing_commit_one_over_the_most": Case(FREED, commit_field("ops", lambda c: 4), "commit.ops"),
    "a_commit_that_cannot_end": Case(PLACED_TWO, swap_with_stock(0, "7S", "KD"), "hands[0]"),
    # a recorded round
    "an_out_without_an_ender": Case(OUT, result("ender", -1), "hand_results[0].ender"),
    "a_stock_out_with_an_ender": Case(OUT_UNSCORED, result("kind", "stock_out"), "hand_results[0].kind"),
    "a_value_too_many": Case(STOCK_OUT_UNREVEALED, result("values", [27, 10, 30], 1), "hand_results[1].values"),
    "a_value_too_few": Case(STOCK_OUT_UNREVEALED, result("values", [27], 1), "hand_results[1].values"),
    "points_too_many": Case(STOCK_OUT_UNVALUED, result("points", [0, 17, 0], 1), "hand_results[1].points"),
    "a_value_not_the_hands": Case(OUT, plus_one("hand_results.0.values", 0), "hand_results[0].values"),
    "an_out_called_a_knock": Case(OUT, result("kind", "knock"), "hand_results[0].kind"),
    "a_knock_called_an_out": Case(KNOCKED, result("kind", "out"), "hand_results[0].kind"),
    "a_knock_above_the_limit": Case(KNOCKED_AT_LIMIT, option("knock_limit", 2), "hand_results[0].values"),
    "round_winners_not_the_values": Case(OUT, result("winners", [0]), "hand_results[0].winners"),
    "an_out_credited_to_another_seat": Case(OUT_UNSCORED, result("winners", [0]), "hand_results[0].winners"),
    "round_points_not_the_values": Case(OUT, plus_one("hand_results.0.points", 1), "hand_results[0].points"),
    "a_recorded_meld_of_two": Case(MATCH_MID, cut_meld, "hand_results[0].table"),
    "a_recorded_table_over_the_identity_limit": Case(MATCH_MID, doubled_meld, "hand_results[0].table"),
    "a_recorded_joker_off_the_table": Case(MATCH_MID, joker_off_table, "hand_results[0].table_jokers"),
    "a_recorded_card_twice": Case(MATCH_MID, table_card_in_hand, "hand_results[0].hands"),
    # the match's summaries
    "a_second_round_of_a_hand": Case(MID, edit("round_index", 1), "round_index"),
    "more_results_than_rounds": Case(MATCH_MID, edit("round_index", 1), "round_index"),
    "totals_not_the_points": Case(MATCH_UNTOTALLED, plus_one("totals", 1), "totals"),
    "wins_not_the_winners": Case(MATCH_MID, plus_one("rounds_won", 0), "rounds_won"),
    "an_out_won_by_another_seat": Case(OUT_UNSCORED, edit("rounds_won", [1, 0]), "rounds_won"),
    "totals_below_the_recorded_points": Case(ONE_UNRECORDED_UNTOTALLED, edit("totals", [0, 16]), "totals"),
    "wins_below_the_recorded_winners": Case(ONE_UNRECORDED, edit("rounds_won", [0, 0]), "rounds_won"),
    "a_first_total_not_its_points": Case(MATCH_MID, plus_one("hand_results.0.totals", 1), "hand_results[0].totals"),
    "a_later_total_not_the_sum": Case(MATCH_MID, plus_one("hand_results.1.totals", 1), "hand_results[1].totals"),
    "unrecorded_rounds_one_win_short": Case(UNRECORDED, edit("rounds_won", [0, 1]), "rounds_won"),
    "unrecorded_rounds_one_win_over": Case(ALL_TIED, edit("rounds_won", [2, 3]), "rounds_won"),
    "a_seat_won_more_rounds_than_played": Case(UNRECORDED, edit("rounds_won", [0, 3]), "rounds_won"),
    "points_without_a_win": Case(UNRECORDED, edit("totals", [1, 58]), "totals"),
    "totals_not_the_last_recorded": Case(ONE_UNRECORDED, plus_one("totals", 1), "totals"),
    "a_truncated_hand": Case(OUT, edit("truncated", True), "truncated"),
    "a_truncated_match_in_play": Case(MATCH_MID, edit("truncated", True), "truncated"),
    "truncated_before_the_round_cap": Case(TRUNCATED_END, option("max_rounds", 2), "truncated"),
    "a_winner_twice": Case(OUT, edit("winners", [1, 1]), "winners"),
    "final_totals_of_a_hand": Case(OUT, edit("final", [0, 41]), "final"),
    "final_totals_in_play": Case(MATCH_MID, edit("final", [0, 58]), "final"),
    "final_totals_of_a_truncated_match": Case(TRUNCATED_END, edit("final", [72, 0]), "final"),
    "truncated_though_won": Case(TRUNCATED_END, option("target_score", 72), "truncated"),
    "hand_winners_scoring_apart": Case(HAND_UNRECORDED, then(edit("rounds_won", [1, 1]), edit("totals", [1, 41])),
                                       "totals"),
    "a_finished_match_nobody_won": Case(MATCH_WON, option("target_score", 100), "totals"),
    "final_totals_without_the_bonuses": Case(MATCH_WON, plus_one("final", 1), "final"),
    "winners_in_play": Case(MATCH_MID, edit("winners", [1]), "winners"),
    "no_winners_of_a_finished_hand": Case(OUT, edit("winners", []), "winners"),
    "a_loser_listed_as_a_winner": Case(OUT, edit("winners", [0]), "winners"),
    "match_winners_not_the_leaders": Case(MATCH_WON, edit("winners", [0]), "winners"),
    "winners_of_a_truncated_match": Case(TRUNCATED_END, edit("winners", [0]), "winners"),
    "a_match_won_yet_in_play": Case(UNRECORDED, edit("totals", [0, 60]), "totals"),
    "an_earlier_round_won_the_match": Case(MATCH_WON, option("target_score", 58), "hand_results[1].totals"),
    "an_earlier_round_won_a_match_in_play": Case(PLAYED_ON, option("target_score", 60), "hand_results[0].totals"),
    "a_dealer_not_the_next": Case(MATCH_MID, lambda d: changed(d, dealer=1 - d["dealer"]), "dealer"),
    "a_first_dealer_not_the_first": Case(MATCH_MID, lambda d: changed(d, first_dealer=1 - d["first_dealer"]),
                                         "first_dealer"),
    "a_dealer_not_the_winner": Case(WINNER_MID, lambda d: changed(d, dealer=1 - d["dealer"]), "dealer"),
    "a_dealer_not_after_an_unrecorded_round": Case(ONE_UNRECORDED, lambda d: changed(d, dealer=1 - d["dealer"]),
                                                   "dealer"),
    # the end of the last round
    "two_empty_hands_at_the_end": Case(OUT_UNSCORED, then(edit("limit_seen", [None, None]), to_stock(0)), "hands"),
    "an_empty_hand_after_a_knock": Case(KNOCK_UNSCORED, to_stock(1), "hands"),
    "the_seat_out_holding_a_card": Case(OUT_UNSCORED, stock_card_to(1), "hands"),
    "hands_not_the_recorded_ones": Case(OUT, swap_with_stock(0, "TH", "5S"), "hands"),
    "hands_not_worth_the_recorded_values": Case(OUT, then(result("hands", []), swap_with_stock(0, "TH", "5S")),
                                                "hand_results[0].values"),
    "a_knocker_above_the_limit_at_the_end": Case(KNOCK_UNSCORED, then(edit("limit_seen", [None, None]),
                                                                      swap_with_stock(1, "3C", "KH")),
                                                 "hand_results[0].ender"),
    "a_table_not_the_recorded_one": Case(OUT, lambda d: result("table", d["hand_results"][0]["table"][:-1])(d),
                                         "hand_results[0].table"),
    "jokers_not_the_recorded_ones": Case(OUT, result("table_jokers", ["JS"]), "hand_results[0].table"),
    "a_stock_out_leaving_a_stock": Case(KNOCKED, stock_out_recorded, "hand_results[0].kind"),
}

EXEMPT: dict[str, str] = {}


def test_every_clause_of_the_reader_refuses_its_own_case():
    check_table(ManipulationState.from_dict, CASES, MODULES, EXEMPT)


BOUNDS = {  # (a base the reader accepts, at the bound where it can be, the change one past it, the field named)
    "dealer_over": (MID, edit("dealer", 2), "dealer"),
    "dealer_under": (MID, edit("dealer", -1), "dealer"),
    "first_dealer_over": (MID, edit("first_dealer", 2), "first_dealer"),
    "first_dealer_under": (MID, edit("first_dealer", -1), "first_dealer"),
    "round_index_over": (but(MATCH_MID, options={"max_rounds": 3}), option("max_rounds", 2), "round_index"),
    "round_index_under": (MID, edit("round_index", -1), "round_index"),
    "current_player_over": (MID, edit("current_player", 2), "current_player"),
    "current_player_under": (OUT, edit("current_player", -2), "current_player"),
    "draws_over": (MID, edit("draws", 4), "draws"),
    "draws_under": (TURN_START, edit("draws", -1), "draws"),
    "free_jokers_over": (FREED, commit_field("free_jokers", lambda c: 2), "commit.free_jokers"),
    "free_jokers_under": (PLACED_THREE, commit_field("free_jokers", lambda c: -1), "commit.free_jokers"),
    "ops_over": (OPS_CAPPED, option("max_table_ops_per_turn", 3), "commit.ops"),
    "ops_under": (PLACED_THREE, commit_field("ops", lambda c: 0), "commit.ops"),
    "winners_over": (OUT, edit("winners", [2]), "winners[0]"),
    "winners_under": (OUT, edit("winners", [-1]), "winners[0]"),
    "totals_under": (MATCH_MID, edit("totals", [-1, 58]), "totals[0]"),
    "history_over": (MID, edit("history", [NUM_ACTIONS]), "history[0]"),
    "history_under": (MID, edit("history", [-1]), "history[0]"),
    "ender_over": (OUT, result("ender", 2), "hand_results[0].ender"),
    "ender_under": (KNOCKED, result("ender", -2), "hand_results[0].ender"),
    "result_winners": (OUT, result("winners", [2]), "hand_results[0].winners[0]"),
    "totals_length": (MATCH_MID, lambda d: changed(d, totals=d["totals"] + [0]), "totals"),
}


@pytest.mark.parametrize("name", BOUNDS)
def test_the_bounds_the_reader_gives_refuse_one_past_them(name):
    """A value one past a bound ``_read_fields`` gives a shared getter is refused naming the field."""
    base, change, field = BOUNDS[name]
    data = base()
    ManipulationState.from_dict(copy.deepcopy(data))
    with pytest.raises(ValueError) as info:
        ManipulationState.from_dict(change(copy.deepcopy(data)))
    assert field in contract.named_fields(str(info.value)), str(info.value)
