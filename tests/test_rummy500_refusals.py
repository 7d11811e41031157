"""Rummy 500's state-dict reader, clause by clause: every clause of the reader
modules refuses its own case, a reachable dict changed in one field so that only that
clause objects (``refusals.check_table``); the ranges the reader hands to the shared field
getters refuse the value just past each bound; and dicts at the edge of a clause (the last
value the rules allow) are accepted, so a bound moved by one either way fails a test.

The reachable dicts come from seeded games of the meldy policy (``reached``) or from
scenarios of the rules tests (``scenario``, ``exhausted``), each built once (``cache``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache

import pytest

import env_contract as contract
from refusals import Case, changed, check_table, edit
from rummy_envs import cards as C
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Phase, Rummy500Config, Rummy500State
from test_rummy500_engine import MATCH, ended_by, later_hand, per_seat, reached, with_melds, with_options
from test_rummy500_rules import exhausted, play, scenario

MODULES = ["rummy_envs/games/rummy500/state_dict.py", "rummy_envs/games/rummy500/dict_checks.py"]
CAPPED_MATCH = {"episode": "match", "max_hands": 2}
read = Rummy500State.from_dict


# -- reachable dicts (the bases), each built once -------------------------------------------------
def mover_known(state: Rummy500State) -> list[int]:
    """The cards the player to move took from the pile and still holds."""
    return R.multiset_cards(state.known[state.current_player])


@cache
def fresh_hand() -> dict:
    """The first draw of a two-player hand, seat 0 dealing (so seat 1 moves)."""
    return reached({}, lambda s: s.dealer == 0)


@cache
def fresh_reshuffle_hand() -> dict:
    """The first draw of a hand under stock_end_rule='reshuffle_discards' (no turn, no reshuffle yet)."""
    return reached({"stock_end_rule": "reshuffle_discards"}, lambda s: s.dealer == 0)


@cache
def from_a_given_deck() -> dict:
    """A game dealt from a given deck (recorded as ``initial_deck``)."""
    deck = list(Rummy500Config().full_deck())[::-1]
    return Rummy500State(Rummy500Config(), 3, deck).to_dict()


@cache
def daily_deal() -> dict:
    """A game of the daily deal (its date recorded as ``daily_date``)."""
    return Rummy500State(Rummy500Config(deal_seed_mode="daily", daily_date="2026-11-30"), 1).to_dict()


@cache
def mid_group() -> dict:
    """A meld phase with a pending group."""
    return reached({}, lambda s: bool(s.pending))


@cache
def mid_group_all_jokers_pending() -> dict:
    """A pending group holding every joker of the mover's hand (the most it may hold)."""
    return reached({"num_jokers": 2}, lambda s: s.pending_jokers and
                   s.pending_jokers.bit_count() == s.hands[s.current_player][2])


@cache
def target_of_two_known() -> dict:
    """A deep take's target due, the mover knowing just it and the card above it (the fewest
    a deep take under first_table_action leaves)."""
    return reached({}, lambda s: s.target >= 0 and len(mover_known(s)) == 2)


@cache
def target_anytime() -> dict:
    """A target under anytime_before_discard (one known card suffices), two cards known."""
    return reached({"target_use_timing": "anytime_before_discard"},
                   lambda s: s.target >= 0 and len(mover_known(s)) >= 2 and mover_known(s).count(s.target) == 1)


@cache
def banned_in_hand() -> dict:
    """A top card taken alone, still in the mover's hand, so banned from the discard."""
    return reached({}, lambda s: s.banned >= 0 and s.banned in s.hand_cards(s.current_player))


@cache
def third_seat_first_turn() -> dict:
    """Three players, the third seat from the dealer's left at its first draw (two turns played)."""
    return reached({}, lambda s: s.turns == 2 and s.phase == Phase.DRAW, players=3)


@cache
def cancelled_once() -> dict:
    """The first mover after a cancel (turns 1, one short of every seat's turn), seat 1 the dealer."""
    return reached({}, lambda s: s.turns == 1 and s.dealer == 1 and s.current_player == 0 and s.phase == Phase.MELD)


@cache
def one_turn_before_the_cap() -> dict:
    """A hand in play one turn before max_turns_per_hand=6."""
    return reached({"max_turns_per_hand": 6}, lambda s: s.turns == 5 and not s.is_terminal())


@cache
def gone_out() -> dict:
    """A one-hand game that ended by a seat going out, melds on the table and cards in the stock."""
    return reached({}, lambda s: ended_by("out")(s) and len(s.melds) >= 2)


@cache
def at_the_turn_cap() -> dict:
    """A one-hand game ended at max_turns_per_hand=6 (so truncated)."""
    return reached({"max_turns_per_hand": 6}, lambda s: s.is_terminal() and s.hand_results[-1].kind == "turn_cap")


def rest_in_the_waiting_hand(pile: str, phase: str, **options) -> Rummy500State:
    """Seat 0 to move holding 5C 5D 2S, the pile just ``pile``, the stock empty and seat 1
    holding the rest of the deck."""
    config = Rummy500Config(**options)
    mine = "5C 5D 2S"
    rest = sorted(set(config.full_deck()) - set(C.parse(mine)) - set(C.parse(pile)))
    return scenario([mine, C.format(rest)], pile, phase=phase, **options)


@cache
def exhausted_pile_of_two() -> dict:
    """END_HAND on an empty stock with two discards (under end_on_decline)."""
    state = rest_in_the_waiting_hand("9H 5H", "DRAW")
    play(state, "END_HAND")
    return state.to_dict()


@cache
def draw_on_an_empty_stock() -> dict:
    """A draw under end_on_decline with the stock empty, every card not in a hand in the pile."""
    return exhausted(["5C 5D 2S", "KH AD 3C"]).to_dict()


@cache
def declined_long_pile() -> dict:
    """END_HAND with a long pile (every card not in a hand)."""
    state = exhausted(["5C 5D 2S", "KH AD 3C"])
    play(state, "END_HAND")
    return state.to_dict()


@cache
def match_later_hand() -> dict:
    """A match in play after its first hand (a result recorded)."""
    return reached(MATCH, later_hand)


@cache
def match_won_after_two_hands() -> dict:
    """A match won by one seat after at least two hands."""
    return reached(MATCH, lambda s: len(s.winners) == 1 and len(s.hand_results) >= 2)


@cache
def match_capped() -> dict:
    """A match cut at max_hands=2 without a winner."""
    return reached(CAPPED_MATCH, lambda s: s.is_terminal() and s.truncated)


@cache
def table_with_joker() -> dict:
    """Two melds, the second's 7C held by a joker (the natural 7C in the stock)."""
    return scenario(["2C 3D 4H 9S", "KH"], melds=[{"cards": "5S 6S 7S"}, {"cards": "7C 7D 7H", "jokers": ["7C"]}],
                    num_jokers=1).to_dict()


@cache
def a_sequence_with_a_layoff() -> dict:
    """A sequence melded by seat 0 (5S-7S), seat 1 credited with the 5S laid off below it."""
    return with_melds({"cards": "5S 6S 7S 8S", "credit": [1, 0, 0, 0], "owner": 0})


@cache
def a_set_with_a_layoff() -> dict:
    """A set of nines melded by seat 0, seat 1 credited with the 9S laid off."""
    return with_melds({"cards": "9C 9D 9H 9S", "credit": [0, 0, 0, 1]})


@cache
def meld_owner_credit() -> dict:
    """A four-card sequence credited to its owner alone, under layoff_credit='meld_owner'."""
    return with_options(with_melds({"cards": "5S 6S 7S 8S", "credit": [0, 0, 0, 0]}), layoff_credit="meld_owner")


# -- changes ---------------------------------------------------------------------------------------
def mover(d: dict) -> int:
    """The seat to move of a dict."""
    return d["current_player"]


def a_card_outside(d: dict, seat: int) -> str:
    """The stock's first card that seat ``seat`` does not hold."""
    return next(c for c in d["stock"] if c not in d["hands"][seat])


def last_result(path: str, value) -> Callable[[dict], dict]:
    """A change of one field of the last hand result (``"points.0"``)."""
    return lambda d: edit(f"hand_results.{len(d['hand_results']) - 1}.{path}", value)(d)


def result_with(change: Callable[[dict], None]) -> Callable[[dict], dict]:
    """A change of the last hand result made in place (on a copy) by ``change``."""

    def apply(d: dict) -> dict:
        out = copy.deepcopy(d)
        change(out["hand_results"][-1])
        return out

    return apply


def loser(result: dict) -> int:
    """The seat of a two-player hand that did not go out."""
    return 1 - result["went_out"]


def one_more_point(result: dict) -> None:
    result["points"][0] += 1


def show_a_card_of_the_seat_gone_out(result: dict) -> None:
    result["hands"][result["went_out"]] = ["2C"]


def hand_points_for_the_seat_gone_out(result: dict) -> None:
    """Five hand points for the seat that went out (no table points shown, so the points still add up)."""
    del result["table_points"]
    result["hand_points"][result["went_out"]] = 5


def one_more_hand_point(result: dict) -> None:
    """One more hand point for the loser than its hand holds (no table points shown)."""
    del result["table_points"]
    result["hand_points"][loser(result)] += 1


def one_more_table_point(result: dict) -> None:
    """One more table point for seat 0 than its melds hold (no hand points shown)."""
    del result["hand_points"]
    result["table_points"][0] += 1


def move_pile_to_waiting_hand(d: dict) -> dict:
    """The pile emptied into the hand of the seat not to move (nothing to draw, nothing to take)."""
    other = 1 - mover(d)
    return per_seat(changed(d, discard_pile=[]), "hands", other, d["hands"][other] + d["discard_pile"])


def empty_a_waiting_hand(d: dict) -> dict:
    """The hand of the seat not to move put at the bottom of the stock."""
    other = 1 - mover(d)
    return per_seat(changed(d, stock=d["stock"] + d["hands"][other]), "hands", other, [])


def unmatched_went_out_hand(d: dict) -> dict:
    """A card of the stock put in the empty hand of the seat that went out (the result shows no hands)."""
    out = result_with(lambda r: r.update(hands=[]))(d)
    seat = out["hand_results"][-1]["went_out"]
    return per_seat(changed(out, stock=d["stock"][1:]), "hands", seat, [d["stock"][0]])


def swap_a_hidden_card_with_the_stock(d: dict) -> dict:
    """A card of the losing hand that it did not take from the pile swapped with the stock's first."""
    seat = loser(d["hand_results"][-1])
    card = next(c for c in d["hands"][seat] if c not in d["known"][seat])
    hand = [d["stock"][0] if c == card else c for c in d["hands"][seat]]
    return per_seat(changed(d, stock=[card, *d["stock"][1:]]), "hands", seat, hand)


def without_target_in_known(d: dict) -> dict:
    """The target taken out of the mover's known cards (once)."""
    known = list(d["known"][mover(d)])
    known.remove(d["target"])
    return per_seat(d, "known", mover(d), known)


def won_by_more(d: dict) -> dict:
    """The winner's total raised by 1000, so the match was won a hand earlier."""
    winner = d["winners"][0]
    return per_seat(d, "totals", winner, d["totals"][winner] + 1000)


def raise_first_total(d: dict) -> dict:
    """Seat 0's total raised by 1000, past any target."""
    return per_seat(d, "totals", 0, d["totals"][0] + 1000)


def one_more_result(d: dict) -> dict:
    """The last hand result recorded twice."""
    return changed(d, hand_results=d["hand_results"] + d["hand_results"][-1:])


def rules_changed(**values) -> Callable[[dict], dict]:
    """A change of rules options only (the position kept)."""
    return lambda d: with_options(copy.deepcopy(d), **values)


def deck_with_a_card_twice(d: dict) -> dict:
    """The given deck's last card replaced by a second copy of its first."""
    return changed(d, initial_deck=d["initial_deck"][:-1] + d["initial_deck"][:1])


def pending_card_not_held(d: dict) -> dict:
    """A card the mover does not hold added to its pending group."""
    return changed(d, pending=d["pending"] + [a_card_outside(d, mover(d))])


def one_more_pending_joker(d: dict) -> dict:
    """One more identity declared for a joker in the pending group than the hand has jokers."""
    taken = set(d["pending"]) | set(d["pending_jokers"])
    extra = next(c for c in C.format(list(range(R.JOKER))).split() if c not in taken)
    return changed(d, pending_jokers=d["pending_jokers"] + [extra])


CASES = {
    # the header, the deal and where every card is (state_dict.py)
    "a_date_without_the_daily_deal": Case(fresh_hand, edit("daily_date", "2026-11-30"), "daily_date"),
    "a_daily_date_no_calendar_has": Case(daily_deal, edit("daily_date", "2026-02-30"), "daily_date"),
    "an_initial_deck_with_a_card_twice": Case(from_a_given_deck, deck_with_a_card_twice, "initial_deck"),
    "a_card_missing_from_the_stock": Case(fresh_hand, lambda d: changed(d, stock=d["stock"][1:]), "stock"),
    "a_card_extra_in_the_stock": Case(fresh_hand, lambda d: changed(d, stock=d["stock"] + d["stock"][:1]), "stock"),
    "known_cards_not_in_the_hand": Case(fresh_hand, lambda d: per_seat(d, "known", 1, [a_card_outside(d, 1)]),
                                        "known[1]"),
    "a_pending_card_also_a_pending_joker": Case(mid_group, lambda d: changed(d, pending_jokers=d["pending"][:1]),
                                                "pending"),
    "an_identity_twice_on_the_table_with_one_deck": Case(
        table_with_joker, edit("melds.1", {"cards": ["7D", "7H", "7S"], "jokers": ["7S"]}), "melds[1].cards"),
    # each meld
    "a_meld_that_is_no_set_nor_sequence": Case(a_sequence_with_a_layoff, edit("melds.0.cards", "5S 6S 7S 9S"),
                                               "melds[0].cards"),
    "a_joker_for_a_card_not_in_the_meld": Case(a_sequence_with_a_layoff, edit("melds.0.jokers", ["9S"]),
                                               "melds[0].jokers"),
    "a_sequence_nobody_founded": Case(a_sequence_with_a_layoff, edit("melds.0.credit", [0, 0, 1, 1]),
                                      "melds[0].credit"),
    "a_set_nobody_founded": Case(a_set_with_a_layoff, edit("melds.0.credit", [0, 1, 1, 0]), "melds[0].credit"),
    "an_owner_credited_with_a_layoff_only": Case(a_sequence_with_a_layoff, edit("melds.0.owner", 1),
                                                 "melds[0].owner"),
    "a_layoff_credited_under_meld_owner": Case(meld_owner_credit, edit("melds.0.credit", [1, 0, 0, 0]),
                                               "melds[0].credit"),
    # each hand result
    "table_points_of_one_seat_too_many": Case(gone_out, last_result("table_points", [0, 0, 0]),
                                              "hand_results[0].table_points"),
    "hand_points_of_one_seat_too_few": Case(gone_out, last_result("hand_points", [0]), "hand_results[0].hand_points"),
    "out_with_nobody_gone_out": Case(gone_out, last_result("went_out", -1), "hand_results[0].kind"),
    "a_seat_gone_out_of_an_exhausted_stock": Case(declined_long_pile, last_result("went_out", 0),
                                                  "hand_results[0].kind"),
    "points_that_are_not_table_minus_hand": Case(gone_out, result_with(one_more_point), "hand_results[0].points"),
    "a_seat_gone_out_shown_holding_a_card": Case(gone_out, result_with(show_a_card_of_the_seat_gone_out),
                                                 "hand_results[0].hands"),
    "a_seat_gone_out_with_hand_points": Case(gone_out, result_with(hand_points_for_the_seat_gone_out),
                                             "hand_results[0].hand_points"),
    "hand_points_that_are_not_the_hands": Case(gone_out, result_with(one_more_hand_point),
                                               "hand_results[0].hand_points"),
    "table_points_that_are_not_the_melds": Case(gone_out, result_with(one_more_table_point),
                                                "hand_results[0].table_points"),
    # seats, phase and the turn counters (dict_checks.py, _check_rules)
    "nobody_to_move_in_play": Case(fresh_hand, edit("current_player", -1), "current_player"),
    "a_seat_to_move_once_over": Case(gone_out, edit("current_player", 0), "current_player"),
    "an_empty_hand_in_play": Case(fresh_hand, empty_a_waiting_hand, "hands"),
    "a_draw_from_an_empty_stock_under_reshuffle": Case(
        draw_on_an_empty_stock, rules_changed(stock_end_rule="reshuffle_discards"), "stock"),
    "a_draw_with_no_stock_and_no_pile": Case(draw_on_an_empty_stock, move_pile_to_waiting_hand, "discard_pile"),
    "a_turn_past_the_cap": Case(one_turn_before_the_cap, edit("turns", 6), "turns"),
    "a_reshuffle_without_the_reshuffle_rule": Case(fresh_hand, edit("reshuffles", 1), "reshuffles"),
    "a_reshuffle_before_any_turn": Case(fresh_reshuffle_hand, edit("reshuffles", 1), "reshuffles"),
    "a_dealer_the_deal_did_not_pass_to": Case(fresh_hand, edit("first_dealer", 1), "dealer"),
    # the turn in progress (_check_turn)
    "a_pending_group_before_the_draw": Case(fresh_hand, lambda d: changed(d, pending=d["hands"][1][:1]), "pending"),
    "a_target_before_the_draw": Case(fresh_hand, lambda d: changed(d, target=d["hands"][1][0]), "target"),
    "a_banned_card_before_the_draw": Case(fresh_hand, lambda d: changed(d, banned=d["hands"][1][0]), "banned"),
    "a_pending_card_the_mover_does_not_hold": Case(mid_group, pending_card_not_held, "pending"),
    "more_pending_jokers_than_the_hand_holds": Case(mid_group_all_jokers_pending, one_more_pending_joker,
                                                    "pending_jokers"),
    "a_target_and_a_banned_card": Case(target_of_two_known, lambda d: changed(d, banned=d["stock"][0]), "banned"),
    "a_target_not_in_the_hand": Case(target_of_two_known, lambda d: changed(d, target=a_card_outside(d, mover(d))),
                                     "target"),
    "a_target_nobody_saw_taken": Case(target_anytime, without_target_in_known, "target"),
    "a_target_without_the_card_above_it": Case(target_of_two_known, lambda d: per_seat(d, "known", mover(d),
                                                                                       [d["target"]]), "target"),
    "a_banned_card_where_a_taken_card_may_be_rediscarded": Case(
        banned_in_hand, rules_changed(allow_rediscard_taken_card=True), "banned"),
    "a_banned_card_where_the_top_card_is_a_target": Case(banned_in_hand, rules_changed(top_discard_must_be_used=True),
                                                         "banned"),
    "a_banned_card_nobody_saw_taken": Case(banned_in_hand, lambda d: per_seat(d, "known", mover(d), []), "banned"),
    "a_pending_group_no_commit_holds": Case(lambda: scenario(["2C 9D KH 5S 7S", "3H"]).to_dict(),
                                            edit("pending", ["2C", "9D"]), "pending"),
    # the turns of the hand so far (_check_hand_so_far)
    "one_turn_fewer_than_seats_before_the_mover": Case(third_seat_first_turn, edit("turns", 1), "turns"),
    "known_cards_of_a_seat_yet_to_move": Case(fresh_hand, lambda d: per_seat(d, "known", 0, d["hands"][0][:1]),
                                              "known[0]"),
    "known_cards_of_the_dealer_after_a_cancel": Case(
        cancelled_once, lambda d: per_seat(d, "known", 1, d["hands"][1][:1]), "known[1]"),
    # a finished game against its last result (_check_last_hand)
    "a_finished_match_without_results": Case(match_won_after_two_hands, edit("hand_results", []), "hand_results"),
    "hands_that_are_not_the_results": Case(gone_out, swap_a_hidden_card_with_the_stock, "hand_results[0].hands"),
    "melds_that_are_not_the_results": Case(gone_out, result_with(lambda r: r["melds"].reverse()),
                                           "hand_results[0].melds"),
    "an_empty_hand_of_a_seat_that_did_not_go_out": Case(gone_out, unmatched_went_out_hand, "hands"),
    "an_exhausted_stock_with_cards": Case(
        declined_long_pile, lambda d: changed(d, stock=d["discard_pile"][:1], discard_pile=d["discard_pile"][1:]),
        "stock"),
    "an_exhausted_stock_with_two_discards_to_reshuffle": Case(
        exhausted_pile_of_two, rules_changed(stock_end_rule="reshuffle_discards"), "stock"),
    "a_turn_cap_not_reached": Case(at_the_turn_cap, edit("turns", 5), "turns"),
    "an_exhausted_stock_at_the_turn_cap": Case(declined_long_pile, lambda d: with_options(
        changed(d, turns=1), max_turns_per_hand=1), "turns"),
    # the match (_check_match)
    "a_winner_listed_twice": Case(match_won_after_two_hands, lambda d: changed(d, winners=d["winners"] * 2),
                                  "winners"),
    "a_hand_in_play_truncated": Case(fresh_hand, edit("truncated", True), "truncated"),
    "winners_of_a_one_hand_episode": Case(gone_out, edit("winners", [0]), "winners"),
    "totals_in_a_one_hand_episode": Case(fresh_hand, edit("totals", [5, -5]), "totals"),
    "a_later_hand_in_a_one_hand_episode": Case(fresh_hand, lambda d: changed(d, hand_index=1, first_dealer=1),
                                               "hand_index"),
    "a_result_before_the_hand_ends": Case(fresh_hand, lambda d: changed(d, hand_results=gone_out()["hand_results"]),
                                          "hand_results"),
    "a_finished_hand_without_its_result": Case(gone_out, edit("hand_results", []), "hand_results"),
    "a_finished_hand_truncated_though_out": Case(gone_out, edit("truncated", True), "truncated"),
    "a_turn_cap_not_truncated": Case(at_the_turn_cap, edit("truncated", False), "truncated"),
    "more_results_than_hands_played": Case(match_later_hand, one_more_result, "hand_results"),
    "more_results_than_max_hands": Case(match_won_after_two_hands, lambda d: with_options(
        d, max_hands=len(d["hand_results"]) - 1), "hand_results"),
    "a_hand_in_play_after_max_hands": Case(match_later_hand, lambda d: with_options(d, max_hands=d["hand_index"]),
                                           "hand_results"),
    "winners_mid_match": Case(match_later_hand, edit("winners", [1]), "winners"),
    "winners_the_totals_do_not_decide": Case(match_won_after_two_hands, lambda d: changed(
        d, winners=[1 - d["winners"][0]]), "winners"),
    "a_won_match_called_truncated": Case(match_won_after_two_hands, edit("truncated", True), "truncated"),
    "a_match_nobody_won_not_truncated": Case(match_capped, edit("truncated", False), "truncated"),
    "a_match_nobody_won_before_max_hands": Case(match_capped, lambda d: with_options(
        d, max_hands=len(d["hand_results"]) + 1), "truncated"),
    "totals_that_won_before_the_last_hand": Case(match_won_after_two_hands, won_by_more, "totals"),
    "totals_that_won_a_hand_ago": Case(match_later_hand, raise_first_total, "totals"),
}

EXEMPT = {
    'raise field_error(["melds", "discard_pile"], f"at most {MAX_MELDS} melds and {MAX_PILE} discards fit the "':
        "the largest deck has MAX_PILE = 3 * MAX_MELDS cards, so more melds or discards fail the card count first",
}


def test_every_clause_of_the_reader_refuses_its_own_case():
    check_table(read, CASES, MODULES, EXEMPT)


def past(path: str, *values) -> list[Callable[[dict], dict]]:
    """Changes setting one nested field to each of ``values`` (the values just past its bounds)."""
    return [edit(path, value) for value in values]


# The ranges state_dict.py gives the shared field getters (rummy_envs/state_dicts.py, which
# refuses): for each, a reachable dict and the values just past each bound, refused naming the field.
BOUNDS: dict[str, tuple[Callable[[], dict], list[Callable[[dict], dict]], str]] = {
    "dealer": (fresh_hand, past("dealer", 2, -1), "dealer"),
    "first_dealer": (fresh_hand, past("first_dealer", 2, -1), "first_dealer"),
    "hand_index": (fresh_hand, past("hand_index", -1), "hand_index"),
    "current_player": (fresh_hand, past("current_player", 2, -2), "current_player"),
    "hands": (fresh_hand, [lambda d: changed(d, hands=d["hands"] + [[]]), lambda d: changed(d, hands=d["hands"][:1])],
              "hands"),
    "known": (fresh_hand, [lambda d: changed(d, known=d["known"] + [[]]), lambda d: changed(d, known=d["known"][:1])],
              "known"),
    "turns": (one_turn_before_the_cap, past("turns", 7, -1), "turns"),
    "reshuffles": (fresh_hand, past("reshuffles", -1), "reshuffles"),
    "totals": (match_later_hand, [lambda d: changed(d, totals=d["totals"] + [0]),
                                  lambda d: changed(d, totals=d["totals"][:1])], "totals"),
    "winners": (match_won_after_two_hands, past("winners", [2], [-1]), "winners[0]"),
    "history": (fresh_hand, past("history", [R.NUM_ACTIONS], [-1]), "history[0]"),
    "meld_owner": (a_sequence_with_a_layoff, past("melds.0.owner", 2, -1), "melds[0].owner"),
    "meld_credit_seat": (a_sequence_with_a_layoff, past("melds.0.credit", [1, 0, 0, 2], [-1, 0, 0, 0]),
                         "melds[0].credit"),
    "meld_credit_length": (a_sequence_with_a_layoff, past("melds.0.credit", [1, 0, 0, 0, 0], [1, 0, 0]),
                           "melds[0].credit"),
    "result_went_out": (gone_out, [last_result("went_out", 2), last_result("went_out", -2)],
                        "hand_results[0].went_out"),
    "result_points": (gone_out, [last_result("points", [0, 0, 0]), last_result("points", [0])],
                      "hand_results[0].points"),
}


@pytest.mark.parametrize("name", list(BOUNDS))
def test_each_range_refuses_the_values_just_past_its_bounds(name):
    base, changes, field = BOUNDS[name]
    read(copy.deepcopy(base()))
    for change in changes:
        with pytest.raises(ValueError) as info:
            read(change(base()))
        assert any(named.startswith(field) for named in contract.named_fields(str(info.value))), str(info.value)


@cache
def reshuffles_run_out() -> dict:
    """Under reshuffle_discards, a discard onto an empty pile with the stock empty: one card is
    no pile to rebuild the stock from, so the stock is exhausted."""
    state = rest_in_the_waiting_hand("", "MELD", stock_end_rule="reshuffle_discards")
    play(state, "DISCARD(2S)")
    return state.to_dict()


# Reachable dicts at the last value a clause or range allows, each accepted: a bound moved by
# one towards them refuses one.
AT_THE_BOUNDS: dict[str, Callable[[], dict]] = {
    "the_last_seat_to_move": fresh_hand,
    "the_last_seat_dealing": lambda: reached({}, lambda s: s.dealer == 1 and s.current_player == 1),
    "the_last_seat_gone_out": lambda: reached({}, lambda s: s.is_terminal() and s.hand_results[-1].went_out == 1),
    "the_last_seat_winning": lambda: reached(MATCH, lambda s: s.winners == [1]),
    "the_last_action_id_in_the_history": lambda: reached({"num_jokers": 2}, lambda s: R.NUM_ACTIONS - 1 in s.history),
    "the_turn_cap_reached": at_the_turn_cap,
    "one_turn_before_the_cap": one_turn_before_the_cap,
    "as_many_turns_as_seats_before_the_mover": third_seat_first_turn,
    "the_known_cards_a_deep_take_leaves": target_of_two_known,
    "every_joker_of_the_hand_pending": mid_group_all_jokers_pending,
    "a_discard_onto_no_pile_under_reshuffle": reshuffles_run_out,
    "a_match_cut_at_max_hands": match_capped,
    "as_many_results_as_hands_played": match_later_hand,
}


@pytest.mark.parametrize("name", list(AT_THE_BOUNDS))
def test_dicts_at_the_bounds_are_accepted(name):
    d = AT_THE_BOUNDS[name]()
    assert read(copy.deepcopy(d)).to_dict() == d
