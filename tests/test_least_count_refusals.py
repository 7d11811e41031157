"""Least Count's refusal table: every clause of the state-dict reader
(``LeastCountState.from_dict``) refuses a case of its own, each a dict reached by a seeded game
(or a scenario) changed in the one way the clause forbids, so that weakening any clause fails
a case; the range checks of the fields read are refused one past each bound; and a dict that
leaves out ``current_player`` is read with the seat the rules put to move."""

from __future__ import annotations

import copy
import functools
import random
from collections.abc import Callable
from typing import Any

import pytest

from refusals import Case, check_table, edit, refusal, then
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState
from test_least_count_rules import scenario
from test_least_count_state_dicts import MATCH, drop_elimination, drop_first_result, points_of, un_eliminated

MODULES = ["rummy_envs/games/least_count/state_dict.py"]
SHARED = ["rummy_envs/state_dicts.py"]
GAMES = {
    "hand": {},
    "capped": {"max_turns_per_round": 6},
    "one_card": {"num_players": 2, "hand_size": 1},
    "cut": {"num_players": 3, "cut_joker": True},
    "match": MATCH,
    "first_elimination": {**MATCH, "match_end": "first_elimination"},
    "short_match": {**MATCH, "max_turns_per_round": 6, "max_rounds": 2},
}
Base = Callable[[], dict]
Change = Callable[[dict], dict]


# -- reachable dicts --------------------------------------------------------------------------
@functools.cache
def game(name: str, seed: int = 0) -> tuple[dict, ...]:
    """The dict of every point of a seeded random game of ``GAMES[name]``."""
    return tuple(points_of(seed, **GAMES[name]))


def over(d: dict) -> bool:
    return d["phase"] == "GAME_OVER"


def at(name: str, seed: int = 0, test: Callable[[dict], bool] = lambda d: True) -> Base:
    """A base: (a copy of) the first point of the game that passes ``test``."""
    return lambda: copy.deepcopy(next(d for d in game(name, seed) if test(d)))


def just_eliminated(d: dict) -> bool:
    """A match in play whose last round eliminated a seat, with two rounds recorded."""
    return not over(d) and max(d["out_round"]) == d["round_index"] > 0 and len(d["hand_results"]) >= 2


fresh = at("hand")  # seat 0 deals, seat 1 moves
first_pick = at("hand", 0, lambda d: d["phase"] == "PICK" and d["turns"] == 0)  # seat 1 picks
later_pick = at("hand", 0, lambda d: d["phase"] == "PICK" and d["turns"] >= 2)  # seat 3 picks
later_turn = at("hand", 0, lambda d: d["phase"] == "TURN_START" and d["turns"] >= 2)
five_card_discard = at("hand", 56, lambda d: L.DISCARD + 30 in d["history"])  # the largest action of a discard
open_ace_picked = at("hand", 57, lambda d: L.PICK_OPEN in d["history"])  # the first pick action
knowing = at("hand", 0, lambda d: any(d["known"]))
hand_over = at("hand", 3, over)  # a valid declaration
one_card_turn = at("one_card", 0, lambda d: d["phase"] == "TURN_START" and len(d["history"]) >= 4)
cut_over = at("cut", 0, over)
before_the_cap = at("capped", 0, lambda d: d["turns"] == 5 and d["phase"] == "TURN_START")
match_in_play = at("match", 0, just_eliminated)  # seat 0 out after round 1, seat 1 after round 3
match_over = at("match", 0, over)  # rounds 1-4, the last eliminating seat 2; seat 3 wins
first_elimination_over = at("first_elimination", 1, over)  # seats 1 and 2 out after round 3; seat 0 wins
short_match_over = at("short_match", 0, over)  # truncated after max_rounds=2 rounds


@functools.cache
def round_as_episode() -> tuple[dict, ...]:
    """A match's round read as a one-round episode (seat 0 out), played to its end."""
    data = match_in_play()
    data["options"]["episode"] = "hand"
    state, rng = LeastCountState.from_dict(data), random.Random(0)
    points = [state.to_dict()]
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
        points.append(state.to_dict())
    return tuple(points)


def episode_over() -> dict:
    return copy.deepcopy(round_as_episode()[-1])


@functools.cache
def declared_then_timed_out() -> dict:
    """A short match whose first round is declared as soon as it may be and whose second,
    the last, times out (truncated at max_rounds)."""
    state = LeastCountState(LeastCountConfig(**GAMES["short_match"]), seed=0)
    rng = random.Random(0)
    while not state.is_terminal():
        legal = state.legal_actions()
        declare = L.DECLARE in legal and state.round_index == 0
        state.apply(L.DECLARE if declare else rng.choice([a for a in legal if a != L.DECLARE]))
    assert [r.kind == "timeout" for r in state.hand_results] == [False, True]
    return state.to_dict()


def recorded() -> dict:
    """A hand-written scenario of round 3 of a match, seat 2 out after round 1, whose second
    round is recorded with its seats and points."""
    data = scenario(["AC", "TC", ""], totals=[0, 4, 120], out_round=[0, 0, 1], rounds_played=2, dealer=1,
                    episode="match").to_dict()
    record = {"kind": "valid_declaration", "declarer": 0, "players": [0, 1], "totals": [0, 4, 120],
              "points": [0, 4, 0]}
    return {**data, "hand_results": [{"kind": "timeout"}, record]}


def open_scenario(cards: str) -> Base:
    return lambda: scenario(["AC 2C", "TC"], open_set=cards).to_dict()


# -- changes ----------------------------------------------------------------------------------
def pile(d: dict, path: str) -> list:
    """The list at ``path`` (``"stock"``, ``"hands.1"``) of ``d``."""
    node: Any = d
    for key in path.split("."):
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def move(source: str, target: str, count: int | None = 1) -> Change:
    """Move the first ``count`` cards (all when None) of one pile onto another."""

    def apply(d: dict) -> dict:
        out = copy.deepcopy(d)
        taken = pile(out, source)[:count]
        del pile(out, source)[:len(taken)]
        pile(out, target).extend(taken)
        return out

    return apply


def using(make: Callable[[dict], Change]) -> Change:
    """A change that depends on the dict it changes."""
    return lambda d: make(d)(d)


def seat_out(d: dict) -> int:
    return next(q for q, out in enumerate(d["out_round"]) if out)


def last_seat_in(d: dict) -> int:
    """The last seat still in the match (the dealer of ``match_in_play``)."""
    return max(q for q, out in enumerate(d["out_round"]) if not out)


def winner(d: dict) -> int:
    return d["winners"][0]


def eliminated_now(d: dict, seats: list[int]) -> dict:
    """``seats`` out after the round before this one, past the threshold."""
    out = copy.deepcopy(d)
    for q in seats:
        out["out_round"][q] = max(out["round_index"], 1)
        out["totals"][q] = out["options"]["elimination_score"] + 1
    return out


def all_but_one_out(d: dict) -> dict:
    active = [q for q, out in enumerate(d["out_round"]) if not out]
    return eliminated_now(d, active[1:])


def history_at(d: dict, kind: Callable[[int], bool], start: int = 1) -> int:
    """The index of the first entry from ``start`` of the history that ``kind`` holds for."""
    return next(i for i, a in enumerate(d["history"]) if i >= start and kind(a))


def is_discard(a: int) -> bool:
    return L.DISCARD <= a < L.PICK_OPEN


def history_entry(kind: Callable[[int], bool], value: int) -> Change:
    return using(lambda d: edit(f"history.{history_at(d, kind)}", value))


def without_turn_after_declaring(d: dict) -> dict:
    """The discard and pick of the first turn after the declaration left out of the history."""
    out = copy.deepcopy(d)
    k = out["history"].index(L.DECLARE)
    del out["history"][k + 1:k + 3]
    return out


def last_round_eliminated_earlier(d: dict) -> dict:
    """The seats the last round eliminated, out a round earlier and without cards."""
    out = copy.deepcopy(d)
    for q in out["hand_results"][-1]["eliminated"]:
        out["out_round"][q] = out["round_index"]
        out["stock"] += out["hands"][q]
        out["hands"][q], out["known"][q] = [], []
    return out


def result_field(key: str, make: Callable[[dict, dict], Any], index: int = -1) -> Change:
    """Set ``hand_results[index].key`` to ``make(dict, result)``."""

    def apply(d: dict) -> dict:
        i = index % len(d["hand_results"])
        return edit(f"hand_results.{i}.{key}", make(d, d["hand_results"][i]))(d)

    return apply


def dealt_in(result: dict) -> int:
    """A seat dealt in that did not declare."""
    return next(q for q in result["players"] if q != result["declarer"])


def bumped(values: list[int], seat: int, by: int = 1) -> list[int]:
    return [v + by * (q == seat) for q, v in enumerate(values)]


def made_valid(result: dict) -> list[int]:
    """Counts that make a false declaration valid: the declarer at 0, every other above."""
    return [0 if q == result["declarer"] or q not in result["players"] else max(c, 1)
            for q, c in enumerate(result["counts"])]


def padded(result: dict, seat: int, size: int) -> list[list[int]]:
    """The shown hands, ``seat``'s made ``size`` cards long."""
    hands = copy.deepcopy(result["hands"])
    hands[seat] = (hands[seat] + list(range(size)))[:size]
    return hands


def raised_total(d: dict, result: dict) -> list[int]:
    """The result's totals with a seat still in past the threshold."""
    seat = next(q for q, out in enumerate(d["out_round"]) if not out)
    return [d["options"]["elimination_score"] + 1 if q == seat else t for q, t in enumerate(result["totals"])]


def lowest_plus_one(d: dict, result: dict) -> list[int]:
    """The result's totals with the lowest one more (still under the threshold)."""
    low = min(range(len(result["totals"])), key=result["totals"].__getitem__)
    return bumped(result["totals"], low)


def deck_dealt() -> dict:
    config = LeastCountConfig()
    return LeastCountState(config, seed=0, deck=random.Random(0).sample(config.full_deck(), 52)).to_dict()


# -- the table ------------------------------------------------------------------------------
CASES = {
    # cards and the cut card
    "initial_deck_with_a_card_twice": Case(deck_dealt, using(lambda d: edit("initial_deck.0", d["initial_deck"][1])),
                                           "initial_deck"),
    "a_card_in_two_places": Case(fresh, using(lambda d: edit("hands.0.0", d["stock"][0])), "hands"),
    "a_cut_card_without_cut_joker": Case(fresh, lambda d: {**d, "cut_card": d["stock"][0], "stock": d["stock"][1:]},
                                         "cut_card"),
    "no_cut_card_with_cut_joker": Case(cut_over, lambda d: {**d, "cut_card": None,
                                                            "stock": d["stock"] + [d["cut_card"]]}, "cut_card"),
    # seats and phases
    "nobody_to_move_in_play": Case(fresh, edit("current_player", -1), "current_player"),
    "a_seat_to_move_once_over": Case(hand_over, edit("current_player", 0), "current_player"),
    "an_eliminated_seat_to_move": Case(match_in_play, using(lambda d: edit("current_player", seat_out(d))),
                                       "current_player"),
    "an_eliminated_dealer": Case(match_in_play, using(lambda d: edit("dealer", seat_out(d))), "dealer"),
    "a_pending_discard_at_the_turn_start": Case(later_pick, edit("phase", "TURN_START"), "pending_discard"),
    "the_pick_phase_without_a_pending_discard": Case(later_turn, edit("phase", "PICK"), "pending_discard"),
    "an_open_set_no_hand_could_discard": Case(open_scenario("6H 7H 8H"),
                                              lambda d: {**d, "open_set": ["6H", "7H"], "stock": d["stock"] + ["8H"]},
                                              "open_set"),
    "an_open_set_larger_than_a_hand": Case(open_scenario("2S 7S 9S JS KS"), edit("options.hand_size", 4), "open_set"),
    "a_pending_discard_no_hand_could_discard": Case(first_pick, move("stock", "pending_discard", 1),
                                                    "pending_discard"),
    "no_open_set_after_a_turn": Case(later_turn, move("open_set", "stock", None), "open_set"),
    "nothing_to_pick": Case(first_pick, then(*(move(source, "hands.0", None) for source in ("open_set", "stock"))),
                            "stock"),
    # hands, known cards and turns
    "an_eliminated_seat_holds_cards": Case(match_in_play, using(lambda d: move("stock", f"hands.{seat_out(d)}")),
                                           "hands[0]"),
    "a_hand_larger_than_hand_size": Case(fresh, using(lambda d: move("stock", f"hands.{d['dealer']}")),
                                         "hands[0]"),
    "a_mover_holding_too_many_with_the_discard": Case(later_pick, using(
        lambda d: move("stock", f"hands.{d['current_player']}")), "hands[3]"),
    "a_seat_in_the_round_without_cards": Case(fresh, using(lambda d: move(f"hands.{d['dealer']}", "stock", None)),
                                              "hands[0]"),
    "a_known_card_not_held": Case(knowing, lambda d: {**d, "known": [[d["stock"][0]]] + d["known"][1:]}, "known[0]"),
    "the_turn_cap_in_play": Case(before_the_cap, edit("turns", 6), "turns"),
    # eliminations
    "out_after_the_round_in_play": Case(match_in_play, using(lambda d: edit(f"out_round.{last_seat_in(d)}",
                                                                             d["round_index"] + 1)), "out_round"),
    "out_after_a_round_past_the_last": Case(match_over, using(lambda d: edit(f"out_round.{winner(d)}",
                                                                              d["round_index"] + 2)), "out_round"),
    "out_in_a_one_round_episode": Case(episode_over, using(lambda d: edit(f"out_round.{last_seat_in(d)}",
                                                                           d["round_index"] + 1)), "out_round"),
    "out_at_the_threshold": Case(match_in_play, using(lambda d: edit(f"totals.{seat_out(d)}", 30)), "totals"),
    "out_before_the_last_round_of_a_first_elimination": Case(match_in_play,
                                                              edit("options.match_end", "first_elimination"),
                                                              "round_index"),
    "nobody_left": Case(match_over, lambda d: eliminated_now(d, [winner(d)]), "out_round"),
    "one_left_in_play": Case(match_in_play, all_but_one_out, "out_round"),
    "one_left_in_a_one_round_episode": Case(episode_over, all_but_one_out, "phase"),
    # the history
    "an_action_past_a_one_card_discard": Case(one_card_turn, history_entry(is_discard, L.DISCARD + 1), "history[2]"),
    "an_action_past_a_five_card_discard": Case(five_card_discard, history_entry(is_discard, L.DISCARD + 31),
                                               "history[2]"),
    "the_action_before_the_first_pick": Case(open_ace_picked, history_entry(is_discard, L.PICK_OPEN - 1), "history[2]"),
    "a_joker_picked_without_jokers": Case(later_turn, history_entry(lambda a: a >= L.PICK_OPEN, L.PICK_OPEN + L.JOKER),
                                          "history[1]"),
    "a_pick_after_a_pick": Case(later_turn, history_entry(is_discard, L.PICK_CLOSED), "history[2]"),
    "a_pick_last_in_the_pick_phase": Case(later_pick, lambda d: {**d, "history": d["history"][:-1]}, "history"),
    "over_after_a_pick_before_the_timeout": Case(later_turn, lambda d: {**d, "phase": "GAME_OVER",
                                                                        "current_player": -1}, "history"),
    "a_history_ending_a_round_not_recorded": Case(match_in_play, drop_first_result, "history"),
    "more_turns_than_picks_since_declaring": Case(match_in_play, lambda d: {**d, "turns": d["turns"] + 1}, "turns"),
    "a_timeout_after_picks_not_a_round_of_them": Case(declared_then_timed_out, without_turn_after_declaring, "turns"),
    # winners, truncation and the match end
    "a_winner_twice": Case(match_over, lambda d: {**d, "winners": d["winners"] * 2}, "winners"),
    "an_eliminated_winner": Case(match_over, using(lambda d: edit("winners", [seat_out(d)])), "winners"),
    "winners_in_play": Case(match_in_play, using(lambda d: edit("winners", [last_seat_in(d)])), "winners"),
    "truncated_in_play": Case(match_in_play, edit("truncated", True), "truncated"),
    "winners_of_a_one_round_episode": Case(hand_over, edit("winners", [0]), "winners"),
    "a_one_round_episode_truncated_without_the_timeout": Case(hand_over, edit("truncated", True), "truncated"),
    "more_results_than_rounds": Case(match_in_play, lambda d: {**d, "hand_results": d["hand_results"] * 2},
                                     "hand_results"),
    "totals_not_the_last_rounds": Case(hand_over, lambda d: {**d, "totals": bumped(d["totals"], 0, 5)}, "totals"),
    "totals_not_following_the_round_before": Case(match_in_play, result_field("totals", lowest_plus_one, 0),
                                                  "hand_results[1].totals"),
    "over_at_the_deal": Case(fresh, lambda d: {**d, "phase": "GAME_OVER", "current_player": -1}, "phase"),
    "declared_by_a_seat_without_a_turn": Case(hand_over, lambda d: {**d, "turn_done": [
        q != d["hand_results"][0]["declarer"] for q in range(4)]}, "phase"),
    "declared_at_the_turn_cap": Case(match_over, lambda d: {**d, "history": [],
                                                             "turns": d["options"]["max_turns_per_round"]},
                                     "hand_results[3].kind"),
    "last_hands_not_shown": Case(hand_over, lambda d: {**d, "hands": [d["hands"][0][1:] + [d["stock"][0]],
                                                                      *d["hands"][1:]],
                                                       "stock": d["stock"][1:] + d["hands"][0][:1]},
                                 "hand_results[0].hands"),
    "last_cut_card_not_shown": Case(cut_over, result_field("cut_card", lambda d, r: (r["cut_card"] + 13) % 52),
                                    "cut_card"),
    "a_match_over_without_winners_or_truncation": Case(match_over, edit("winners", []), "winners"),
    "truncated_when_an_elimination_ended_it": Case(match_over, lambda d: {**d, "winners": [], "truncated": True},
                                                   "truncated"),
    "truncated_before_max_rounds": Case(short_match_over, edit("options.max_rounds", 3), "truncated"),
    "two_seats_standing_at_the_end": Case(match_over, lambda d: {**un_eliminated(d), "winners": [
        q for q in range(4) if not d["out_round"][q]]}, "phase"),
    "the_last_elimination_a_round_early": Case(match_over, last_round_eliminated_earlier, "phase"),
    "a_winner_not_the_lowest": Case(first_elimination_over, edit("winners", [3]), "winners"),
    # recorded rounds
    "a_round_dealing_in_an_eliminated_seat": Case(recorded, edit("hand_results.1.players", [0, 1, 2]),
                                                  "hand_results[1].players"),
    "rounds_eliminating_nobody": Case(match_in_play, drop_elimination, "out_round"),
    "totals_eliminating_another_seat": Case(match_in_play, result_field("totals", raised_total, 0),
                                            "hand_results[0].totals"),
    "counts_one_short": Case(match_over, result_field("counts", lambda d, r: r["counts"][:-1]),
                             "hand_results[3].counts"),
    "counts_one_too_many": Case(match_over, result_field("counts", lambda d, r: r["counts"] + [0]),
                                "hand_results[3].counts"),
    "points_without_players": Case(recorded, edit("hand_results.1.players", []), "hand_results[1].players"),
    "a_seat_dealt_in_twice": Case(recorded, edit("hand_results.1.players", [0, 1, 1]), "hand_results[1].players"),
    "a_declaration_without_a_declarer": Case(match_over, result_field("declarer", lambda d, r: -1),
                                             "hand_results[3].declarer"),
    "a_timeout_with_a_declarer": Case(recorded, edit("hand_results.0", {"kind": "timeout", "declarer": 0}),
                                      "hand_results[0].declarer"),
    "a_declaration_truncated": Case(match_over, result_field("truncated", lambda d, r: True),
                                    "hand_results[3].truncated"),
    "a_cut_card_without_cut_joker_recorded": Case(recorded, edit("hand_results.0", {"kind": "timeout", "cut_card": 5}),
                                                  "hand_results[0].cut_card"),
    "a_declarer_not_dealt_in": Case(recorded, edit("hand_results.1.declarer", 2), "hand_results[1].declarer"),
    "an_elimination_not_dealt_in": Case(recorded, edit("hand_results.1.eliminated", [2]),
                                        "hand_results[1].eliminated"),
    "points_for_a_seat_not_dealt_in": Case(recorded, edit("hand_results.1.points", [0, 4, 2]),
                                           "hand_results[1].points"),
    "an_empty_hand_shown": Case(match_over, result_field("hands", lambda d, r: padded(r, dealt_in(r), 0)),
                                "hand_results[3].hands"),
    "a_hand_shown_one_card_too_long": Case(match_over, result_field("hands", lambda d, r: padded(r, dealt_in(r), 6)),
                                           "hand_results[3].hands"),
    "counts_not_of_the_hands_shown": Case(match_over, result_field("counts", lambda d, r: bumped(r["counts"],
                                                                                                 dealt_in(r))),
                                          "hand_results[3].counts"),
    "counts_of_a_valid_declaration_recorded_false": Case(match_over, then(
        result_field("hands", lambda d, r: []), result_field("counts", lambda d, r: made_valid(r))),
        "hand_results[3].kind"),
    "points_not_by_the_rules": Case(match_over, result_field("points", lambda d, r: bumped(r["points"], dealt_in(r))),
                                    "hand_results[3].points"),
}

EXEMPT = {
    'raise field_error([f"hand_results[{i}].totals", f"hand_results[{i}].eliminated"],':
        "its second way (a recorded round that ends the match but is not the game's last, or the last one that "
        "does not end it) is refused earlier by the eliminations and the match end once its first way does not "
        "hold; the first way has its case, totals_eliminating_another_seat",
}


def test_every_clause_of_the_reader_refuses_its_own_case():
    check_table(LeastCountState.from_dict, CASES, MODULES, EXEMPT)


# -- the ranges of the fields read, one past each bound ---------------------------------------
short_match_second_round = at("short_match", 0, lambda d: d["round_index"] == 1 and not over(d))
BOUNDS = {
    "a_dealer_one_past_the_last_seat": Case(fresh, edit("dealer", 4), "dealer"),
    "a_dealer_before_the_first_seat": Case(fresh, edit("dealer", -1), "dealer"),
    "a_first_dealer_one_past_the_last_seat": Case(fresh, edit("first_dealer", 4), "first_dealer"),
    "a_seat_to_move_one_past_the_last": Case(fresh, edit("current_player", 4), "current_player"),
    "a_seat_to_move_before_nobody": Case(fresh, edit("current_player", -2), "current_player"),
    "the_round_index_at_max_rounds": Case(short_match_second_round, edit("round_index", 2), "round_index"),
    "out_after_a_round_past_max_rounds": Case(short_match_second_round, edit("out_round.0", 3), "out_round[0]"),
    "turns_one_past_the_cap": Case(before_the_cap, edit("turns", 7), "turns"),
    "reshuffles_below_zero": Case(fresh, edit("reshuffles", -1), "reshuffles"),
    "a_total_one_past_what_max_rounds_score": Case(short_match_second_round, edit("totals.0", 2 * (20 + 10 * 5) + 1),
                                                   "totals[0]"),
    "a_total_below_zero": Case(fresh, edit("totals.0", -1), "totals[0]"),
    "a_winner_one_past_the_last_seat": Case(match_over, edit("winners", [4]), "winners[0]"),
    "an_action_one_past_the_last": Case(later_turn, history_entry(lambda a: a == L.PICK_CLOSED, L.NUM_ACTIONS),
                                        "history[1]"),
    "an_action_below_the_first": Case(later_turn, history_entry(lambda a: a == L.PICK_CLOSED, -1), "history[1]"),
    "a_turn_done_too_many": Case(fresh, lambda d: {**d, "turn_done": d["turn_done"] + [False]}, "turn_done"),
    "known_cards_of_a_seat_too_many": Case(fresh, lambda d: {**d, "known": d["known"] + [[]]}, "known"),
    "a_hand_too_many": Case(fresh, lambda d: {**d, "hands": d["hands"] + [[]]}, "hands"),
    "a_declarer_one_past_the_last_seat": Case(match_over, edit("hand_results.3.declarer", 4),
                                              "hand_results[3].declarer"),
    "a_declarer_before_the_timeout": Case(match_over, edit("hand_results.3.declarer", -2),
                                          "hand_results[3].declarer"),
    "a_seat_dealt_in_one_past_the_last": Case(match_over, edit("hand_results.3.players.1", 4),
                                              "hand_results[3].players[1]"),
    "a_seat_eliminated_one_past_the_last": Case(match_over, edit("hand_results.3.eliminated", [4]),
                                                "hand_results[3].eliminated[0]"),
    "a_count_below_zero": Case(match_over, edit("hand_results.3.counts.0", -1), "hand_results[3].counts[0]"),
    "a_recorded_cut_card_one_past_the_joker": Case(cut_over, edit("hand_results.0.cut_card", L.JOKER + 1),
                                                   "hand_results[0].cut_card"),
    "a_recorded_cut_card_before_none": Case(cut_over, edit("hand_results.0.cut_card", -2), "hand_results[0].cut_card"),
}


@pytest.mark.parametrize("name", list(BOUNDS))
def test_a_value_one_past_a_bound_is_refused(name):
    """Each range the reader gives a field (a seat, a round, an action id, a count) refuses the
    value just past its bound (the shared ``Fields`` getters raise it)."""
    refusal(LeastCountState.from_dict, BOUNDS[name], SHARED)


# -- the default seat to move -----------------------------------------------------------------
def test_a_dict_without_current_player_is_read_with_the_seat_the_rules_put_to_move():
    """Left out, ``current_player`` is the first seat still in from the dealer's left at the
    start of a round (before its first discard and while that discard waits for the pick),
    and nobody (-1) once the game is over: the seat the state that wrote the dict had."""
    phases, past_a_seat_out = set(), 0
    for name in ("hand", "one_card", "match", "first_elimination"):
        for seed in range(3):
            for d in game(name, seed):
                if d["turns"] and not over(d):
                    continue  # mid-round: the default is the round's first seat, the dict's is later
                data = {key: value for key, value in copy.deepcopy(d).items() if key != "current_player"}
                read = LeastCountState.from_dict(data)
                assert read.current_player == d["current_player"], (name, seed, d["phase"], d["round_index"])
                assert read.to_dict() == d
                phases.add(d["phase"])
                past_a_seat_out += d["current_player"] not in (-1, (d["dealer"] + 1) % len(d["hands"]))
    assert phases == {"TURN_START", "PICK", "GAME_OVER"} and past_a_seat_out, (phases, past_a_seat_out)
