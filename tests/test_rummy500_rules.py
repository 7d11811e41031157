"""Rummy 500's rules: the worked examples R1-R6 of docs/rummy500.md#worked-examples exactly,
a scenario for every option and for the corner cases of the rules (the match's end, jokers,
aces, two decks, the deep take), the daily deal, and the validation of options and state
dicts. Mid-hand positions are engine states built from hand-written dicts (``scenario``);
the rest of the deck goes to the stock."""

from __future__ import annotations

import dataclasses
import hashlib
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import rummy500_oracle as oracle
from rummy_envs import IllegalActionError, rummy500_v0
from rummy_envs import cards as C
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Phase, Rummy500Config, Rummy500State
from env_contract import check_within_bounds

P, Q = 0, 1  # seats of the two players of a scenario; P is to move
JOKER = R.JOKER


def scenario(hands: list[str], pile: str = "", melds: list[dict] | None = None, stock_top: str = "",
             phase: str = "MELD", current: int = P, dealer: int = Q, rest_to: str = "stock",
             **options) -> Rummy500State:
    """A state with these hands, pile (bottom first) and melds. Every other card of the game
    goes, in id order, to the stock after ``stock_top`` (``rest_to="stock"``) or to the
    bottom of the pile, the stock then empty (``rest_to="pile"``)."""
    config = Rummy500Config(**options)
    melds = melds or []
    used = Counter(c for h in hands for c in C.parse(h)) + Counter(C.parse(pile)) + Counter(C.parse(stock_top))
    for meld in melds:
        jokers = set(C.parse(meld.get("jokers", [])))
        used.update(R.JOKER if c in jokers else c for c in C.parse(meld["cards"]))
    rest = C.format(sorted((Counter(config.full_deck()) - used).elements())).split()
    stock, bottom = (stock_top.split() + rest, []) if rest_to == "stock" else (stock_top.split(), rest)
    return Rummy500State.from_dict({"options": dataclasses.asdict(config), "hands": hands, "melds": melds,
                                    "discard_pile": bottom + pile.split(), "stock": stock, "phase": phase,
                                    "current_player": current, "dealer": dealer})


def names(state: Rummy500State) -> set[str]:
    return {R.action_to_str(a) for a in state.legal_actions()}


def play(state: Rummy500State, *actions: str) -> None:
    for text in actions:
        state.apply(R.str_to_action(text))


def meld(state: Rummy500State, cards: str, commit: str = "MELD_NEW") -> None:
    """Pick the cards one by one, then commit them (a new meld by default)."""
    play(state, *[f"PICK({c})" for c in cards.split()], commit)


# -- R1: deep discard take -----------------------------------------------------------------
R1_PILE = "4C KD 9S 5H JC"
R1_HAND = "9D 9H 2H 3H 4H KC 7S"


def test_r1_deep_take_gives_the_cards_above_and_the_target_goes_first():
    s = scenario([R1_HAND, "2C 3C 5C 6C 8D QS AS"], R1_PILE, phase="DRAW")
    assert {"TAKE_DISCARD(2)", "TAKE_DISCARD(4)", "DRAW_STOCK"} <= names(s)
    play(s, "TAKE_DISCARD(2)")
    assert s.player_view(P).hand == tuple(sorted(C.parse(R1_HAND + " 9S 5H JC")))
    assert s.pile == C.parse("4C KD") and s.target == C.parse_card("9S")
    # The first table action must include 9S: 2H-3H-4H may not go first, nothing may be discarded.
    legal = names(s)
    assert {"PICK(9S)", "PICK(9D)", "PICK(9H)"} <= legal
    assert not any(a.startswith(("DISCARD", "PICK(2H)", "PICK(3H)", "PICK(4H)")) for a in legal), legal
    meld(s, "9S 9D 9H")
    assert s.table_points()[P] == 27 and s.melds[0].credit == dict.fromkeys(C.parse("9S 9D 9H"), P)
    assert s.target == -1 and "PICK(2H)" in names(s) and "DISCARD(JC)" in names(s)


def test_r1_deep_take_not_offered_when_the_target_cannot_be_placed():
    s = scenario(["2D 3H 4H 7C 8C JS KC", "2C 3C 5C 6C 8D QS AS"], R1_PILE, phase="DRAW")
    assert "TAKE_DISCARD(2)" not in names(s)
    with pytest.raises(IllegalActionError, match="TAKE_DISCARD"):
        play(s, "TAKE_DISCARD(2)")
    # 9S fits a table meld: the deep take is offered again.
    s = scenario(["2D 3H 4H 7C 8C KC", "2C 3C 5C 6C 8D AS"], R1_PILE, phase="DRAW",
                 melds=[{"cards": ["TS", "JS", "QS"], "credit": [Q, Q, Q]}])
    assert "TAKE_DISCARD(2)" in names(s)
    play(s, "TAKE_DISCARD(2)", "PICK(9S)")
    assert names(s) == {"LAY_OFF(0)", "CANCEL"}


def test_r1_top_card_always_legal_but_not_rediscarded():
    s = scenario(["2D 3H 4H 7C 8C JS KC", "2C 3C 5C 6C 8D QS AS"], R1_PILE, phase="DRAW")
    assert "TAKE_DISCARD(4)" in names(s)
    play(s, "TAKE_DISCARD(4)")
    assert s.target == -1 and s.banned == C.parse_card("JC")
    assert "DISCARD(JC)" not in names(s) and "DISCARD(KC)" in names(s)


def test_a_deep_take_of_the_ace_of_clubs_into_a_set():
    """The target may be card 0: AC deep in the pile, AD AH in hand, is taken for a set."""
    state = scenario(["AD AH 9S", "KH 2D 3C"], pile="AC KD 5H", phase="DRAW")
    assert R.TAKE_DISCARD in state.legal_actions()
    assert set(state.legal_actions()) == oracle.legal_actions(state.to_dict())


# -- R2: ace values ------------------------------------------------------------------------
@pytest.mark.parametrize("cards, value", [("AS 2S 3S", 6), ("QH KH AH", 35), ("AC AD AH", 45)])
def test_r2_meld_values(cards, value):
    s = scenario([cards + " 9D", "2C 3C"])
    meld(s, cards)
    assert s.table_points() == [value, 0]


def test_r2_ace_laid_off_low_counts_one_and_ace_in_hand_fifteen():
    s = scenario(["AD 9C", "AC 2C"], melds=[{"cards": ["2D", "3D", "4D"], "credit": [Q, Q, Q]}])
    play(s, "PICK(AD)", "LAY_OFF(0)")
    assert s.table_points() == [1, 9] and s.melds[0].ordered() == C.parse("AD 2D 3D 4D")
    play(s, "DISCARD(9C)")  # P goes out
    result = s.hand_results[-1]
    assert result.kind == "out" and result.hand_points == [0, 15 + 2]
    assert result.points == [1, 9 - 17]


def test_r2_king_ace_two_is_illegal():
    s = scenario(["KC AC 2C 9D", "3C 4C"])
    assert not any(a.startswith("PICK") for a in names(s))
    assert R.classify(C.to_mask(C.parse("KC AC 2C"))) is None
    assert R.classify(C.to_mask(C.parse("QC KC AC"))) == (False, 0, 11, 13)


# -- R3: layoff credit and hand score ------------------------------------------------------
def test_r3_layoff_credit_and_hand_score():
    s = scenario(["7C 7D 7H 8S 2D", "KH AD 3C"], melds=[{"cards": ["5S", "6S", "7S"], "credit": [Q, Q, Q]}])
    meld(s, "7C 7D 7H")
    play(s, "PICK(8S)", "LAY_OFF_HIGH(0)", "DISCARD(2D)")
    result = s.hand_results[-1]
    assert result.kind == "out" and result.went_out == P
    assert result.table_points == [29, 18] and result.hand_points == [0, 28]
    assert result.points == [29, -10] and s.scores() == [29, -10]
    assert s.melds[0].credit[C.parse_card("8S")] == P


# -- R4: going out without a discard -------------------------------------------------------
def test_r4_going_out_by_melding():
    s = scenario(["4D 5D", "KH AD 3C"], stock_top="6D", phase="DRAW")
    play(s, "DRAW_STOCK")
    assert s.player_view(P).hand == tuple(C.parse("4D 5D 6D"))
    meld(s, "4D 5D 6D")
    assert s.is_terminal() and s.hand_results[-1].kind == "out" and s.hand_results[-1].points[P] == 15


def test_r4_must_discard_to_go_out():
    s = scenario(["4D 5D", "KH AD 3C"], stock_top="6D", phase="DRAW", must_discard_to_go_out=True)
    play(s, "DRAW_STOCK")
    assert names(s) == {"DISCARD(4D)", "DISCARD(5D)", "DISCARD(6D)"}
    with pytest.raises(IllegalActionError, match="PICK"):
        play(s, "PICK(4D)")


# -- R5: stock exhausted -------------------------------------------------------------------
def exhausted(hands: list[str], top: str = "5H", melds: list[dict] | None = None, **options) -> Rummy500State:
    """P's draw with an empty stock: every card not in a hand or meld is in the pile, ``top`` on top."""
    return scenario(hands, top, melds, phase="DRAW", rest_to="pile", **options)


def test_r5_end_hand_when_the_stock_is_empty():
    s = exhausted(["5C 5D 2S", "KH AD 3C"])
    assert "DRAW_STOCK" not in names(s) and {"END_HAND", f"TAKE_DISCARD({len(s.pile) - 1})"} <= names(s)
    play(s, "END_HAND")
    result = s.hand_results[-1]
    assert s.is_terminal() and result.kind == "stock_exhausted" and not s.truncated
    assert result.points == [-(5 + 5 + 2), -(10 + 15 + 3)]


def test_r5_take_the_top_card_and_play_on():
    s = exhausted(["5C 5D 2S 9S", "KH AD 3C"])
    play(s, f"TAKE_DISCARD({len(s.pile) - 1})")
    meld(s, "5C 5D 5H")
    play(s, "DISCARD(2S)")
    assert not s.is_terminal() and s.current_player == Q and s.phase == Phase.DRAW
    assert "END_HAND" in names(s) and "DRAW_STOCK" not in names(s)
    assert s.table_points() == [15, 0] and s.pile[-1] == C.parse_card("2S")


# -- R6: game end --------------------------------------------------------------------------
def r6_state(before: list[int], **options) -> Rummy500State:
    """A match hand about to end by END_HAND scoring A (P) 30 - 2 = 28 and B (Q) 18 - 3 = 15."""
    melds = [{"cards": ["TC", "TD", "TH"], "credit": [P] * 3}, {"cards": ["5S", "6S", "7S"], "credit": [Q] * 3}]
    s = exhausted(["2C", "3H"], melds=melds, episode="match", **options)
    d = s.to_dict()
    d["totals"] = before
    return Rummy500State.from_dict(d)


@pytest.mark.parametrize("before, after, winners", [
    ([482, 490], [510, 505], [P]),
    ([477, 490], [505, 505], []),
    ([452, 505], [480, 520], [Q]),
])
def test_r6_game_end(before, after, winners):
    s = r6_state(before)
    play(s, "END_HAND")
    assert s.hand_results[-1].points == [28, 15]
    assert s.totals == after and s.winners == winners
    if winners:
        assert s.is_terminal() and not s.truncated and s.scores() == after
        assert s.returns() == [after[0] - sum(after) / 2, after[1] - sum(after) / 2]
    else:  # tied leaders over the target: another hand is dealt
        assert not s.is_terminal() and s.hand_index == 1 and s.phase == Phase.DRAW
        assert s.dealer == P and s.current_player == Q  # the deal passed left


def test_r6_tie_shared():
    s = r6_state([477, 490], tie_break="share")
    play(s, "END_HAND")
    assert s.is_terminal() and s.winners == [P, Q] and s.totals == [505, 505]


# The match's end in tables worked out by hand: A scores 28 and B 15 in the hand ending here.
@pytest.mark.parametrize("before, options, totals, winners, over", [
    ([472, 0], {}, [500, 15], [0], True),  # exactly the target
    ([471, 0], {}, [499, 15], [], False),
    ([472, 490], {}, [500, 505], [1], True),  # both past it: the higher total wins
    ([477, 490], {}, [505, 505], [], False),  # tied leaders: play on
    ([477, 490], {"tie_break": "share"}, [505, 505], [0, 1], True),
    ([-100, 470], {}, [-72, 485], [], False),  # negative totals are fine
    ([472, 0], {"target_score": 520}, [500, 15], [], False),
    ([30, 0], {"target_score": 58}, [58, 15], [0], True),
])
def test_match_end_table(before, options, totals, winners, over):
    melds = [{"cards": ["TC", "TD", "TH"], "credit": [0] * 3}, {"cards": ["5S", "6S", "7S"], "credit": [1] * 3}]
    state = exhausted(["2C", "3H"], melds=melds, episode="match", **options)
    d = state.to_dict()
    d["totals"] = before
    state = Rummy500State.from_dict(d)
    play(state, "END_HAND")
    assert state.hand_results[-1].points == [28, 15]
    assert state.totals == totals and state.winners == winners and state.is_terminal() == over
    assert state.scores() == totals and not state.truncated


def test_match_hand_cap_truncates_and_ranks_by_total():
    melds = [{"cards": ["TC", "TD", "TH"], "credit": [0] * 3}]
    state = exhausted(["2C", "3H"], melds=melds, episode="match", max_hands=1)
    play(state, "END_HAND")
    assert state.is_terminal() and state.truncated and state.winners == []
    assert state.scores() == [28, -3] and state.standings() == [28, -3]


# -- options -------------------------------------------------------------------------------
@pytest.mark.parametrize("players, cards, decks", [(2, 13, 1), (3, 7, 1), (4, 7, 1), (5, 7, 2), (8, 7, 2)])
def test_deal_sizes_and_decks(players, cards, decks):
    s = Rummy500State(Rummy500Config(num_players=players), seed=4)
    assert s.config.decks == decks and s.sizes == [cards] * players
    assert len(s.stock) == 52 * decks - players * cards - 1 and len(s.pile) == 1
    assert s.current_player == (s.dealer + 1) % players


def test_deal_order_from_a_given_deck():
    deck = list(range(52))
    s = Rummy500State(Rummy500Config(num_players=3, hand_size=2), seed=0, deck=deck, dealer=1)
    # one card at a time from the dealer's left: seats 2, 0, 1, 2, 0, 1; then the upcard, then the stock
    assert [s.hand_cards(q) for q in range(3)] == [[1, 4], [2, 5], [0, 3]]
    assert s.pile == [6] and s.stock[-1] == 7 and s.current_player == 2


def test_a_deal_without_stock_is_refused_where_no_hand_could_be_played():
    """Three hands of 17 and the first discard take the 52 cards: with end_on_decline the
    first player may still take the discard, but reshuffle_discards has no stock and a pile of
    one card to reshuffle, so every hand would end at its deal."""
    Rummy500State(Rummy500Config(num_players=3, hand_size=17), seed=0)
    with pytest.raises(ValueError, match="stock_end_rule='reshuffle_discards' is invalid with 3 hands of 17"):
        Rummy500Config(num_players=3, hand_size=17, stock_end_rule="reshuffle_discards")
    with pytest.raises(ValueError, match="stock_end_rule='reshuffle_discards' is invalid"):
        Rummy500Config(num_players=2, hand_size=26, num_jokers=1, stock_end_rule="reshuffle_discards")
    Rummy500Config(num_players=3, hand_size=16, stock_end_rule="reshuffle_discards")


def test_hand_size_and_num_decks_options():
    s = Rummy500State(Rummy500Config(num_players=4, hand_size=10, num_decks=2), seed=1)
    assert s.sizes == [10] * 4 and len(s.stock) == 104 - 41
    with pytest.raises(ValueError, match="hand_size"):
        Rummy500Config(num_players=4, hand_size=13)
    with pytest.raises(ValueError, match="num_decks"):
        Rummy500Config(num_players=8, num_decks=1)


def test_two_decks_sets_need_distinct_suits():
    s = scenario(["7C 7C 7D 2S", "3C", "4C", "5C", "6C"], num_players=5)
    assert "PICK(7C)" not in names(s)  # 7C 7C 7D is no set
    s = scenario(["7C 7C 7D 7H 2S", "3C", "4C", "5C", "6C"], num_players=5)
    meld(s, "7C 7D 7H")
    assert s.hand_cards(P) == C.parse("7C 2S") and "PICK(7C)" not in names(s)  # the set has a 7C
    assert s.melds[0].cards == C.to_mask(C.parse("7C 7D 7H")) and "DISCARD(7C)" in names(s)


def test_jokers_in_the_deck_and_declared():
    config = Rummy500Config(num_jokers=2)
    assert config.full_deck().count(R.JOKER) == 2 and len(config.full_deck()) == 54
    assert Rummy500Config(num_players=6, num_jokers=1).full_deck().count(R.JOKER) == 2
    s = scenario(["JK 9D 9H 2C", "3C"], num_jokers=2)
    assert {a for a in names(s) if a.startswith("PICK_JOKER")} == {"PICK_JOKER(9C)", "PICK_JOKER(9S)"}
    s = scenario(["JK 9D 2C", "3C"], num_jokers=2, melds=[{"cards": ["9H", "9S", "9C"], "credit": [Q] * 3}])
    jokers = {a for a in names(s) if a.startswith("PICK_JOKER")}
    assert jokers == {"PICK_JOKER(9D)"}  # as 9D on the set (the natural 9D kept); 8D-9D needs a third card
    s = scenario(["JK 9D 9H 2C", "3C"], num_jokers=2)
    play(s, "PICK_JOKER(9S)", "PICK(9D)", "PICK(9H)", "MELD_NEW")
    assert s.melds[0].jokers == C.to_mask(C.parse("9S")) and s.table_points() == [15 + 18, 0]
    assert s.player_view(Q).melds[0].jokers == (C.parse_card("9S"),)


def test_a_joker_target_must_be_in_the_first_commit():
    s = scenario(["9D 9H 9C 2S KD", "3C"], "4C JK 5H", phase="DRAW", num_jokers=1)
    play(s, "TAKE_DISCARD(1)")
    assert s.target == R.JOKER and "PICK_JOKER(9S)" in names(s)
    play(s, "PICK(9D)", "PICK(9H)", "PICK(9C)")
    assert "MELD_NEW" not in names(s) and "PICK_JOKER(9S)" in names(s)
    play(s, "PICK_JOKER(9S)", "MELD_NEW")
    assert s.target == -1 and s.melds[0].jokers == 1 << C.parse_card("9S") and "DISCARD(5H)" in names(s)


def test_joker_identity_rules_one_deck():
    # a joker cannot be declared as a card already on the table...
    s = scenario(["JK 6D 2C", "3C"], melds=[{"cards": ["7D", "8D", "9D"], "credit": [Q, Q, Q]}], num_jokers=1)
    legal = names(s)
    assert "PICK_JOKER(TD)" in legal and "PICK_JOKER(5D)" in legal
    assert "PICK_JOKER(8D)" not in legal and "PICK_JOKER(7D)" not in legal
    # ...and a natural card cannot be placed while a joker holds its identity
    s = scenario(["TD 2C", "3C"], melds=[{"cards": ["8D", "9D", "TD"], "jokers": ["TD"], "credit": [Q, Q, Q]}],
                 num_jokers=1)
    assert "PICK(TD)" not in names(s)
    s = scenario(["TD JD 2C", "3C"], melds=[{"cards": ["8D", "9D", "TD"], "jokers": ["TD"], "credit": [Q, Q, Q]}],
                 num_jokers=1)
    assert "PICK(TD)" not in names(s) and "PICK(JD)" in names(s)  # JD still extends the meld


@pytest.mark.parametrize("leaves_by", ["DISCARD(JK)", "PICK_JOKER(5S)"])
def test_a_joker_taken_from_the_pile_is_known_until_it_leaves(leaves_by):
    """P takes the joker on top of the pile: everybody knows P holds it, until it is discarded
    (re-discards allowed) or declared into a meld."""
    state = scenario(["5C 5D 5H 9S", "KH AD 3C"], pile="4C JK", phase="DRAW", num_jokers=2,
                     allow_rediscard_taken_card=True)
    play(state, f"TAKE_DISCARD({len(state.pile) - 1})")
    assert state.player_view(1).known[1] == (JOKER,) and state.player_view(0).known[0] == (JOKER,)
    if leaves_by == "DISCARD(JK)":
        play(state, "DISCARD(JK)")
        assert state.pile[-1] == JOKER and state.current_player == 1
    else:
        play(state, "PICK(5C)", "PICK(5D)", leaves_by, "MELD_NEW")
        assert state.melds[-1].jokers == 1 << C.parse_card("5S")
    assert state.player_view(1).known[1] == () and JOKER not in state.hand_cards(0)


def test_joker_value_and_a_low_ace_with_a_joker_two():
    s = scenario(["AS JK 3S 5C", "3C KD"], num_jokers=1, joker_value=25)
    play(s, "PICK(AS)", "PICK_JOKER(2S)", "PICK(3S)", "MELD_NEW")
    assert s.table_points() == [1 + 25 + 3, 0]
    s = scenario(["JK 5C", "3C KD"], num_jokers=1, joker_value=25, rest_to="pile", phase="DRAW")
    play(s, "END_HAND")
    assert s.hand_results[-1].hand_points == [25 + 5, 3 + 10]


def test_two_decks_allow_an_identity_twice():
    s = scenario(["JK 8D 9D 2C", "3C", "4C", "5C", "6C"], num_players=5, num_jokers=1,
                 melds=[{"cards": ["8D", "9D", "TD"], "credit": [Q, Q, Q]}])
    assert "PICK_JOKER(TD)" in names(s)  # TD is on the table once; two decks allow it twice


def test_top_discard_must_be_used():
    hand = "7C 7D 2S 4H"
    s = scenario([hand, "3C"], "KD 7H", phase="DRAW", top_discard_must_be_used=True)
    play(s, "TAKE_DISCARD(1)")
    assert s.target == C.parse_card("7H") and not any(a.startswith("DISCARD") for a in names(s))
    meld(s, "7C 7D 7H")
    assert "DISCARD(2S)" in names(s)
    s = scenario(["2C 5D 9S", "3C"], "KD 7H", phase="DRAW", top_discard_must_be_used=True)
    assert "TAKE_DISCARD(1)" not in names(s)  # 7H cannot be placed
    s = scenario(["2C 5D 9S", "3C"], "KD 7H", phase="DRAW")
    assert "TAKE_DISCARD(1)" in names(s)


def test_target_use_timing_anytime_before_discard():
    hand = "9D 9H 2H 3H 4H KC"
    s = scenario([hand, "3C"], R1_PILE, phase="DRAW", target_use_timing="anytime_before_discard")
    play(s, "TAKE_DISCARD(2)")
    assert "PICK(2H)" in names(s) and not any(a.startswith("DISCARD") for a in names(s))
    meld(s, "2H 3H 4H")
    assert s.target == C.parse_card("9S") and not any(a.startswith("DISCARD") for a in names(s))
    meld(s, "9S 9D 9H")
    assert "DISCARD(KC)" in names(s)


def test_anytime_never_offers_a_commit_that_strands_the_target():
    # 9S fits only 9D-9H: melding 9D TD JD first would strand it, so TD and JD are not offered.
    s = scenario(["9D 9H TD JD KC", "3C"], "4C KD 9S 5H", phase="DRAW", target_use_timing="anytime_before_discard")
    play(s, "TAKE_DISCARD(2)")
    assert "PICK(TD)" not in names(s) and "PICK(JD)" not in names(s) and "PICK(9S)" in names(s)
    play(s, "PICK(9D)")
    assert "PICK(TD)" not in names(s) and "PICK(9H)" in names(s)
    # 9D 9H 9C first leaves 9S a place (the fourth suit of that set): offered.
    s = scenario(["9D 9H 9C KC", "3C"], "4C KD 9S 5H", phase="DRAW", target_use_timing="anytime_before_discard")
    play(s, "TAKE_DISCARD(2)")
    meld(s, "9D 9H 9C")
    assert names(s) == {"PICK(9S)"}


def test_allow_rediscard_taken_card():
    for allowed in (False, True):
        s = scenario(["2C 5D 9S", "3C"], "KD 7H", phase="DRAW", allow_rediscard_taken_card=allowed)
        play(s, "TAKE_DISCARD(1)")
        assert ("DISCARD(7H)" in names(s)) == allowed
        assert s.banned == (-1 if allowed else C.parse_card("7H"))


def test_no_dead_end_with_the_banned_card():
    # Taking 7H and melding 4C 5C 6C would leave only 7H, which may not be discarded and fits
    # nowhere: that meld (so any pick) is not offered.
    s = scenario(["4C 5C 6C", "3D"], "KD 7H", phase="DRAW")
    play(s, "TAKE_DISCARD(1)")
    assert names(s) == {"DISCARD(4C)", "DISCARD(5C)", "DISCARD(6C)"}
    # 7H can be laid off after the meld, going out: offered...
    table = [{"cards": ["4H", "5H", "6H"], "credit": [Q] * 3}]
    s = scenario(["4C 5C 6C", "3D"], "KD 7H", table, phase="DRAW")
    play(s, "TAKE_DISCARD(1)", "PICK(4C)", "PICK(5C)", "PICK(6C)", "MELD_NEW")
    assert names(s) == {"PICK(7H)"}
    play(s, "PICK(7H)", "LAY_OFF_HIGH(0)")
    assert s.hand_results[-1].kind == "out"
    # ...but not when a player must discard to go out.
    s = scenario(["4C 5C 6C", "3D"], "KD 7H", table, phase="DRAW", must_discard_to_go_out=True)
    play(s, "TAKE_DISCARD(1)")
    assert not any(a.startswith("PICK(4C)") for a in names(s))


def test_two_decks_both_copies_of_the_banned_card_cannot_end_a_turn():
    """Two decks: P holds a 7H and takes the other 7H from the top of the pile. Melding
    5C 6C 7C would leave only the two banned 7H, so no group with them is offered; discarding
    a club ends the turn."""
    hands = ["7H 5C 6C 7C", "2C 3C", "4D 5D", "6S 8S", "9C TC"]
    state = scenario(hands, pile="KD 7H", phase="DRAW", num_players=5)
    assert state.config.decks == 2
    play(state, f"TAKE_DISCARD({len(state.pile) - 1})")
    legal = set(state.legal_actions())
    assert legal == oracle.legal_actions(state.to_dict())
    assert R.str_to_action("PICK(5C)") not in legal and R.str_to_action("DISCARD(5C)") in legal
    assert R.str_to_action("DISCARD(7H)") not in legal


def test_layoff_credit_meld_owner():
    for rule, seat in (("layer", P), ("meld_owner", Q)):
        s = scenario(["8S 2D 4C", "KH"], melds=[{"cards": ["5S", "6S", "7S"], "credit": [Q, Q, Q]}], layoff_credit=rule)
        play(s, "PICK(8S)", "LAY_OFF_HIGH(0)")
        assert s.melds[0].credit[C.parse_card("8S")] == seat
        assert s.table_points() == ([8, 18] if seat == P else [0, 26])


def test_sequence_ends_and_aces():
    s = scenario(["AH 2C", "3C"], melds=[{"cards": ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH",
                                                    "QH", "KH"], "credit": [Q] * 12}])
    play(s, "PICK(AH)")
    assert names(s) == {"LAY_OFF(0)", "LAY_OFF_HIGH(0)", "CANCEL"}  # the ace fits either end
    play(s, "LAY_OFF_HIGH(0)")
    assert s.melds[0].hi == 13 and s.table_points()[P] == 15
    s = scenario(["QS KS AS 2S 3S 9D", "3C"])
    meld(s, "QS KS AS")
    assert not any(a.startswith("PICK(2S)") for a in names(s))  # nothing extends past the ace
    s = scenario(["4S KS 9D", "3C"], melds=[{"cards": ["AS", "2S", "3S"], "credit": [Q] * 3}])
    assert "PICK(4S)" in names(s) and "PICK(KS)" not in names(s)  # an ace-low sequence grows upward only


def test_a_full_suit_melded_at_once_counts_its_ace_high():
    """docs/rummy500.md#choices: a full suit as a new meld (A to K) counts its ace high (15)."""
    spades = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"
    state = scenario([f"{spades} 4H", "KH AD 3C"])
    play(state, *[f"PICK({c})" for c in spades.split()], "MELD_NEW")
    assert state.table_points()[0] == 15 + sum(range(2, 11)) + 3 * 10
    assert state.player_view(1).melds[0].cards[-1] == C.parse_card("AS")  # laid out as 2S .. KS AS


def test_layoff_of_several_cards_must_be_contiguous_at_one_end():
    s = scenario(["4S 8S 9S 2D", "3C"], melds=[{"cards": ["5S", "6S", "7S"], "credit": [Q] * 3}])
    play(s, "PICK(8S)", "PICK(9S)")
    assert names(s) == {"LAY_OFF_HIGH(0)", "CANCEL"}
    play(s, "CANCEL", "PICK(4S)")
    assert "PICK(8S)" not in names(s)  # 4S and 8S sit at different ends: no one commit


def test_stock_end_rule_reshuffle_discards():
    # Q discards with the stock empty: P's turn begins by turning the pile but its top into a stock.
    def q_discards(**options) -> Rummy500State:
        state = scenario(["5C 5D", "KH 3C"], "9D 2S", phase="MELD", current=Q, rest_to="pile",
                         stock_end_rule="reshuffle_discards", **options)
        play(state, "DISCARD(3C)")
        return state

    s = q_discards()
    assert s.current_player == P and s.pile == C.parse("3C") and s.reshuffles == 1
    assert len(s.stock) == 52 - 4 and C.parse_card("2S") in s.stock
    assert "END_HAND" not in names(s) and "DRAW_STOCK" in names(s)
    assert q_discards().stock == s.stock  # shuffled from the game's seed
    daily = q_discards(deal_seed_mode="daily", daily_date="2026-11-30")
    assert sorted(daily.stock) == sorted(s.stock) and daily.stock != s.stock
    # with nothing under the top card, no stock can be rebuilt: the hand ends
    s = scenario(["5C 2S", "KH 3C" + " " + " ".join(C.format(sorted(
        (Counter(Rummy500Config().full_deck()) - Counter(C.parse("5C 2S KH 3C"))).elements())).split())],
        phase="MELD", current=Q, stock_end_rule="reshuffle_discards")
    play(s, "DISCARD(3C)")
    assert s.is_terminal() and s.hand_results[-1].kind == "stock_exhausted"
    # the default rule ends the hand only when the pile is empty too (here it holds 3C)
    s = scenario(["5C 2S", "KH 3C" + " " + " ".join(C.format(sorted(
        (Counter(Rummy500Config().full_deck()) - Counter(C.parse("5C 2S KH 3C"))).elements())).split())],
        phase="MELD", current=Q)
    play(s, "DISCARD(3C)")
    assert not s.is_terminal() and names(s) == {"END_HAND", "TAKE_DISCARD(0)"}


def draw_and_discard(s: Rummy500State) -> int:
    """A tiny policy: draw from the stock, then discard the highest card (or end the hand)."""
    legal = s.legal_actions()
    return R.DRAW_STOCK if R.DRAW_STOCK in legal else max(legal)


def test_max_turns_per_hand_scores_and_truncates():
    s = Rummy500State(Rummy500Config(max_turns_per_hand=3), seed=2)
    while not s.is_terminal():
        s.apply(draw_and_discard(s))
    result = s.hand_results[-1]
    assert result.kind == "turn_cap" and s.truncated and s.turns == 3
    assert result.points == [t - h for t, h in zip(result.table_points, result.hand_points)]


def test_out_bonus():
    s = scenario(["4D 5D 6D 9C", "KH"], out_bonus=25)
    meld(s, "4D 5D 6D")
    play(s, "DISCARD(9C)")
    assert s.hand_results[-1].points == [15 + 25, -10]


def test_match_plays_hands_to_the_target_and_caps_hands():
    s = Rummy500State(Rummy500Config(episode="match", max_hands=3, target_score=10_000), seed=3)
    dealers = []
    while not s.is_terminal():
        if s.phase == Phase.DRAW and s.turns == 0 and s.dealer not in dealers[-1:]:
            dealers.append(s.dealer)
        s.apply(draw_and_discard(s))
    assert len(s.hand_results) == 3 and s.truncated and s.winners == []
    assert dealers == [dealers[0], 1 - dealers[0], dealers[0]]
    assert s.totals == [sum(r.points[q] for r in s.hand_results) for q in range(2)]


def test_hand_mode_scores_once_over():
    s = Rummy500State(Rummy500Config(), seed=1)
    assert s.scores() == [0, 0]
    while not s.is_terminal():
        s.apply(draw_and_discard(s))
    assert s.scores() == s.hand_results[-1].points and s.standings() == s.scores()


# -- daily deals ---------------------------------------------------------------------------
def reference_daily_shuffle(cards: list[int], key: str) -> list[int]:
    """The algorithm of docs/rummy500.md#seeding, written out independently of rummy_envs.cards."""
    def words():
        k = 0
        while True:
            digest = hashlib.sha256(f"{key}|{k}".encode()).digest()
            yield from (int.from_bytes(digest[i:i + 8], "big") for i in range(0, 32, 8))
            k += 1
    stream, out = words(), list(cards)
    for i in range(len(out) - 1, 0, -1):
        bound = i + 1
        while (w := next(stream)) >= 2**64 - 2**64 % bound:
            pass
        j = w % bound
        out[i], out[j] = out[j], out[i]
    return out


def daily(date: str = "2026-11-30", salt: str = "", **options) -> Rummy500State:
    return Rummy500State(Rummy500Config(deal_seed_mode="daily", daily_date=date, daily_salt=salt, **options), seed=7)


def test_daily_deal_pinned():
    s = daily()
    d = s.to_dict()
    assert s.dealer == 1 and d["daily_date"] == "2026-11-30"
    assert d["hands"] == [["6C", "TC", "KC", "9D", "TD", "QD", "3H", "9H", "2S", "3S", "5S", "7S", "JS"],
                          ["AC", "3C", "5C", "8C", "JC", "3D", "7D", "8D", "JD", "6H", "7H", "JH", "KH"]]
    assert d["discard_pile"] == ["8S"] and d["stock"][:3] == ["9C", "2D", "KS"]
    order = reference_daily_shuffle(list(range(52)), "v1|rummy500|2026-11-30||1")
    assert s.hand_cards(0) == sorted(order[0:26:2]) and s.pile == [order[26]]


def test_daily_deal_ignores_the_seed_and_differs_by_date_and_salt():
    base = daily().to_dict()["hands"]
    assert Rummy500State(daily().config, seed=99).to_dict()["hands"] == base
    assert daily("2026-12-01").to_dict()["hands"] != base
    assert daily(salt="club").to_dict()["hands"] != base
    assert daily(salt="club").to_dict()["hands"] == daily(salt="club").to_dict()["hands"]
    env = rummy500_v0.env(deal_seed_mode="daily", daily_date="2026-11-30")
    env.reset(seed=1)
    assert env.unwrapped.game.to_dict()["hands"] == base
    env.reset(seed=2)
    assert env.unwrapped.game.to_dict()["hands"] == base


def test_daily_deal_same_in_another_process():
    code = ("from rummy_envs.games import rummy500 as R; "
            "s = R.Rummy500State(R.Rummy500Config(num_players=5, num_jokers=2, deal_seed_mode='daily', "
            "daily_date='2027-02-14', daily_salt='x'), seed=3); print(s.to_dict()['hands'], s.dealer)")
    here = daily("2027-02-14", "x", num_players=5, num_jokers=2).to_dict()
    for hash_seed in ("0", "12345"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": hash_seed, "PATH": ""}, cwd=Path(__file__).parent.parent).stdout
        assert out.strip() == f"{here['hands']} {here['dealer']}"


def test_daily_date_defaults_to_today_utc_and_later_hands_differ():
    s = Rummy500State(Rummy500Config(deal_seed_mode="daily", episode="match"), seed=0)
    assert s.daily_date == R.today_utc()
    first = s.to_dict()["hands"]
    while s.hand_index == 0:
        s.apply(draw_and_discard(s))
    assert s.to_dict()["hands"] != first
    key = C.daily_key("rummy500", s.daily_date, "", 2)
    assert s.hand_cards((s.dealer + 1) % 2) == sorted(reference_daily_shuffle(s.config.full_deck(), key)[0:26:2])


# -- validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, name", [
    ({"num_players": 1}, "num_players"), ({"num_players": 9}, "num_players"), ({"num_decks": 3}, "num_decks"),
    ({"num_jokers": 3}, "num_jokers"), ({"joker_value": -1}, "joker_value"), ({"hand_size": 0}, "hand_size"),
    ({"target_use_timing": "x"}, "target_use_timing"), ({"layoff_credit": "x"}, "layoff_credit"),
    ({"stock_end_rule": "x"}, "stock_end_rule"), ({"tie_break": "x"}, "tie_break"), ({"episode": "x"}, "episode"),
    ({"deal_seed_mode": "x"}, "deal_seed_mode"), ({"daily_date": "2026-13-01"}, "daily_date"),
    ({"daily_date": "20261130"}, "daily_date"), ({"daily_salt": "a|b"}, "daily_salt"), ({"daily_salt": 3}, "daily_salt"),
    ({"max_turns_per_hand": 0}, "max_turns_per_hand"), ({"max_hands": 0}, "max_hands"),
    ({"target_score": 0}, "target_score"), ({"out_bonus": -5}, "out_bonus"),
    ({"must_discard_to_go_out": 1}, "must_discard_to_go_out"), ({"num_plyers": 2}, "num_plyers"),
])
def test_bad_options_rejected(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Rummy500Config.from_kwargs(**kwargs)
    with pytest.raises(ValueError, match=name):
        rummy500_v0.env(**kwargs)


def test_bad_state_dicts_rejected():
    good = scenario(["7C 7D 7H 2S", "KH"]).to_dict()
    for change, needle in (
        ({"stock": good["stock"][1:]}, "missing"),
        ({"melds": [{"cards": ["KC", "AC", "2C"]}]}, "not a set or a sequence"),
        ({"melds": [{"cards": ["5S", "6S", "7S"], "jokers": ["9S"]}]}, "jokers"),
        ({"melds": [{"cards": ["5S", "6S", "7S"], "credit": [0, 5, 0]}]}, "seat"),
        ({"pending": ["9S"]}, "pending"),
        ({"hands": [["7C"]]}, "hands"),
        ({"current_player": -1}, "current_player"),
        ({"game": "gin_rummy"}, "gin_rummy"),
    ):
        with pytest.raises(ValueError, match=needle):
            Rummy500State.from_dict({**good, **change})


def test_a_finished_hand_has_nobody_to_move_and_reads_back():
    state = exhausted(["2C", "3H"])
    play(state, "END_HAND")
    assert state.is_terminal() and state.current_player == -1
    assert Rummy500State.from_dict(state.to_dict()).to_dict() == state.to_dict()


# -- bounds of any game (OpenSpiel's GameInfo) ---------------------------------------------
BOUND_OPTIONS = [
    {},
    {"num_players": 4, "num_jokers": 2, "joker_value": 25, "out_bonus": 30, "max_turns_per_hand": 80},
    {"num_players": 6, "num_jokers": 1, "stock_end_rule": "reshuffle_discards", "must_discard_to_go_out": True,
     "layoff_credit": "meld_owner", "max_turns_per_hand": 60},
    {"num_players": 8, "num_decks": 1, "hand_size": 6, "allow_rediscard_taken_card": True, "max_turns_per_hand": 50},
    {"max_turns_per_hand": 5},
    {"episode": "match", "target_score": 60, "max_hands": 4, "num_jokers": 1, "out_bonus": 10,
     "max_turns_per_hand": 40},
    {"episode": "match", "num_players": 3, "target_score": 40, "tie_break": "share", "max_hands": 3,
     "top_discard_must_be_used": True, "target_use_timing": "anytime_before_discard", "max_turns_per_hand": 30},
    # The fullest deal the options allow: no stock, the first player takes the discard or ends.
    {"episode": "match", "num_players": 3, "hand_size": 17, "max_hands": 3},
]


def random_move(state: Rummy500State, rng: random.Random, stall: bool) -> int:
    """A uniform legal action or, stalling, the longest way through a turn: a random pick
    while one is offered, then ``CANCEL``."""
    legal = state.legal_actions()
    picks = [a for a in legal if R.PICK <= a < R.LAY_OFF]
    if stall and (picks or R.CANCEL in legal):
        return rng.choice(picks) if picks else R.CANCEL
    return rng.choice(legal)


@pytest.mark.parametrize("options", BOUND_OPTIONS)
def test_random_games_stay_within_the_bounds(options):
    """Every return seen at every step lies within ``utility_bounds``, and no game applies more
    actions than ``max_game_length`` (the checks of OpenSpiel's random-simulation test)."""
    check_within_bounds(Rummy500State, Rummy500Config(**options), range(6),
                        lambda state, rng, seed: random_move(state, rng, stall=seed >= 4))


def extreme_hand(**options) -> Rummy500State:
    """P about to go out with 2S 3S 4S, credited with the three other suits melded in full; Q
    holds the other spades and every joker. P's table and Q's hand hold every point of the game."""
    suits = [{"cards": [f"{r}{s}" for r in "23456789TJQKA"], "credit": [P] * 13} for s in "CDH"]
    jokers = Rummy500Config(**options).total_jokers
    return scenario(["2S 3S 4S", "5S 6S 7S 8S 9S TS JS QS KS AS" + " JK" * jokers], melds=suits, **options)


@pytest.mark.parametrize("options", [{}, {"out_bonus": 20}, {"num_jokers": 2, "joker_value": 25, "out_bonus": 7}])
def test_utility_bounds_are_reached_with_two_players(options):
    state = extreme_hand(**options)
    meld(state, "2S 3S 4S")
    assert state.is_terminal() and state.hand_results[-1].kind == "out"
    assert tuple(reversed(state.returns())) == Rummy500State.utility_bounds(state.config)


def test_utility_bounds_of_a_match_add_up_over_its_hands():
    """Hand 1 of a two-hand match ends at the extreme, and so does hand 2, from the totals hand 1 left."""
    first = extreme_hand(episode="match", max_hands=2)
    meld(first, "2S 3S 4S")
    assert not first.is_terminal() and first.hand_index == 1
    last = extreme_hand(episode="match", max_hands=2).to_dict()
    last.update(hand_index=1, first_dealer=P, totals=first.totals)  # the dealer, Q, passed left once
    last = Rummy500State.from_dict(last)
    meld(last, "2S 3S 4S")
    assert last.is_terminal() and last.winners == [P] and last.totals == [2 * first.totals[P], 2 * first.totals[Q]]
    assert tuple(reversed(last.returns())) == Rummy500State.utility_bounds(last.config)


def test_max_game_length_is_reached_but_for_the_table():
    """The longest hand: after one draw, ``max_turns_per_hand`` times a full suit picked and
    put back; only the bound's room for table plays (two actions a card of the game) is left."""
    cap = 20
    state = scenario(["2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", "2D"], phase="DRAW", max_turns_per_hand=cap)
    play(state, "DRAW_STOCK")
    for _ in range(cap):
        meld(state, "AC 7C 2C 3C 4C 5C 6C 8C 9C TC JC QC KC", "CANCEL")
    assert state.is_terminal() and state.truncated and state.hand_results[-1].kind == "turn_cap"
    assert len(state.history) == Rummy500State.max_game_length(state.config) - 2 * state.config.deck_size
