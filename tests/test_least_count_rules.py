"""Least Count: the worked examples L1-L6 of docs/least_count.md#examples exactly, a scenario
for every option, the fast legal discards equal to the readable rule (a hypothesis
property under every discard option, with one deck, jokers and two decks), round scores
and eliminations against tables worked out by hand and the oracles of
tests/least_count_oracle.py, and option validation. Mid-round positions are engine states
built from hand-written dicts (``scenario``, ``declare_state``); the rest of the deck goes
to the closed deck."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from least_count_oracle import oracle_round
from rummy_envs import IllegalActionError, least_count_v0
from rummy_envs import cards as C
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState, Phase
from rummy_envs.games.least_count.fast import fast_legal_discards
from env_contract import check_within_bounds


def scenario(hands: list[str], open_set: str = "", dead: str = "", stock_top: str = "", phase: str = "TURN_START",
             current: int = 0, dealer: int | None = None, turn_done: bool = True, totals: list[int] | None = None,
             out_round: list[int] | None = None, rounds_played: int = 0, cut_card: str | None = None,
             rest_to: str = "stock", **options) -> LeastCountState:
    """A state with these hands, open set, dead pile and closed deck top, every seat having
    finished a turn (``turn_done``), after ``rounds_played`` rounds. Every other card of the
    game goes, in id order, to the closed deck after ``stock_top`` (``rest_to="stock"``) or to
    the dead pile after ``dead`` (``"dead"``)."""
    config = LeastCountConfig(num_players=len(hands), **options)
    used = Counter(c for h in hands for c in C.parse(h)) + Counter(C.parse(open_set + " " + dead + " " + stock_top))
    if cut_card:
        used[C.parse_card(cut_card)] += 1
    rest = C.format(sorted((Counter(config.full_deck()) - used).elements())).split()
    piles = {"stock": stock_top.split(), "dead": dead.split()}
    piles[rest_to] += rest
    n = len(hands)
    return LeastCountState.from_dict({
        "options": config.as_options(), "hands": hands, "open_set": open_set.split(), "dead_pile": piles["dead"],
        "stock": piles["stock"], "phase": phase, "current_player": current,
        "dealer": (current - 1) % n if dealer is None else dealer, "turn_done": [turn_done] * n,
        "totals": totals or [0] * n, "out_round": out_round or [0] * n, "cut_card": cut_card,
        "round_index": rounds_played, "hand_results": [{"kind": "valid_declaration"}] * rounds_played,
    })


def names(state: LeastCountState) -> set[str]:
    return {L.action_to_str(a) for a in state.legal_actions()}


def play(state: LeastCountState, *actions: str) -> None:
    for text in actions:
        state.apply(L.str_to_action(text))


def discard(state: LeastCountState, cards: str) -> None:
    state.apply(L.discard_action(state.hands[state.current_player], cards))


def may_discard(cards: str, **options) -> bool:
    """Is discarding exactly ``cards`` (the whole hand here) legal?"""
    other = next(c for c in C.parse("2D 4S QH") if c not in C.parse(cards))
    state = scenario([cards, C.format_card(other)], **options)
    return L.discard_action(state.hands[0], cards) in state.legal_actions()


# -- L1: discard legality -----------------------------------------------------------------
L1_LEGAL = ["KS KH", "KS KH KD KC", "2C 3D 4H", "QS KD AH", "AS 2D 3C", "6C 7D 8H 9S TC", "2S 7S 9S JS KS"]
L1_ILLEGAL = ["KS KH KD", "5C 6D 7H 8S", "KS AD 2H", "3C 3D 9H 9S", "3C 3D 4H"]


@pytest.mark.parametrize("cards", L1_LEGAL)
def test_l1_legal_discards(cards):
    assert may_discard(cards)


@pytest.mark.parametrize("cards", L1_ILLEGAL)
def test_l1_illegal_discards(cards):
    assert not may_discard(cards)


def test_l1_any_single_card_and_nothing_else_of_a_plain_hand():
    state = scenario(["2C 5D 9H JS KS", "2D"])
    assert names(state) == {"DECLARE"} | {f"DISCARD({i})" for i in range(5)}


def test_l1_sequences_of_one_suit_with_sequence_same_suit():
    assert not may_discard("2C 3D 4H", sequence_same_suit=True)
    assert may_discard("2C 3C 4C", sequence_same_suit=True)
    assert may_discard("2S 7S 9S JS KS", sequence_same_suit=True)  # the flush is unchanged


def test_default_discard_patterns_are_the_documented_ones():
    """docs/least_count.md#legal-discards with the default options: sequences of exactly 3 or
    5, any suits; ``DiscardRules()`` (for ``legal_discards`` called directly) has the same
    defaults, for the readable rule and its fast path alike."""
    rules = L.DiscardRules.of(LeastCountConfig())
    assert L.DiscardRules() == rules
    for cards, legal in (("6C 7D 8H 9S TC", True), ("5C 6D 7H 8S", False), ("2C 3D 4H", True)):
        hand = sorted(C.parse(cards))
        full = (1 << len(hand)) - 1
        assert (full in L.legal_discards(hand, rules)) == legal, cards
        assert (full in fast_legal_discards(hand, rules)) == legal, cards


# -- the fast legal discards: the readable rule, fast ---------------------------------------
DECKS = {"one": C.deck(1, 0), "jokers": C.deck(1, 2), "two_decks_jokers": C.deck(2, 4)}
# Every combination of the options the legal discards depend on.
ALL_DISCARD_RULES = st.builds(
    L.DiscardRules,
    sequence_lengths=st.sets(st.integers(3, 13), min_size=1).map(lambda lengths: tuple(sorted(lengths))),
    sequence_same_suit=st.booleans(), allow_three_of_a_kind=st.booleans(), allow_two_different_pairs=st.booleans(),
)


@st.composite
def neighbourly_hands(draw: st.DrawFn, deck: list[int]) -> list[int]:
    """A sorted hand of 1-7 cards of ``deck``: uniform, or of a few neighbouring ranks in a few
    suits (and jokers), where groups, sequences and flushes are common."""
    if draw(st.booleans()):
        low, width = draw(st.integers(0, 12)), draw(st.integers(1, 7))
        suits = draw(st.sets(st.integers(0, 3), min_size=1))
        ranks = {(low + k) % 13 for k in range(width)}
        deck = [c for c in deck if c == L.JOKER or (c % 13 in ranks and c // 13 in suits)]
    picks = draw(st.lists(st.integers(0, len(deck) - 1), min_size=1, max_size=min(L.MAX_HAND, len(deck)), unique=True))
    return sorted(deck[i] for i in picks)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), rules=ALL_DISCARD_RULES, deck_name=st.sampled_from(list(DECKS)))
def test_fast_discards_equal_the_readable_rule(data, rules, deck_name):
    """``fast.fast_legal_discards`` (rank bits, the shape memo, the direct path) gives exactly
    what the readable ``rules.legal_discards`` does, under every discard option, with one
    deck, jokers, and two decks with jokers."""
    hand = data.draw(neighbourly_hands(DECKS[deck_name]))
    assert fast_legal_discards(hand, rules) == L.legal_discards(hand, rules)


# -- L2: the open set and the pick ----------------------------------------------------------
def test_l2_open_set_and_pick():
    a, b, c, d = "4C 4D 6H 6S KC", "QC QD", "JS 2H 2D 5C 9C", "3S 8S"
    state = scenario([a, b, c, d], open_set="7C 8D 9H", current=2)
    discard(state, "JS")
    assert state.phase == Phase.PICK
    assert names(state) == {"PICK_OPEN(7C)", "PICK_OPEN(8D)", "PICK_OPEN(9H)", "PICK_CLOSED"}
    with pytest.raises(IllegalActionError, match="PICK_OPEN"):
        play(state, "PICK_OPEN(JS)")
    dead_before = list(state.dead)
    play(state, "PICK_OPEN(7C)")
    assert state.dead == dead_before + C.parse("8D 9H")
    assert state.open_set == C.parse("JS") and state.current_player == 3
    assert C.format(state.hands[2]) == "5C 7C 9C 2D 2H"
    view = state.player_view(3)
    assert view.open_set == (C.parse_card("JS"),) and view.known[3] == (C.parse_card("7C"),)
    assert names(state) >= {"DISCARD(0)", "DISCARD(1)"} and state.phase == Phase.TURN_START


def declare_state(hands: list[str], totals: list[int], **options) -> LeastCountState:
    """A match at seat 0's turn start, every seat having played a turn, with given totals."""
    n = len(hands)
    cfg = LeastCountConfig(num_players=n, episode="match", **options)
    state = LeastCountState(cfg, seed=1)
    held = [c for h in hands for c in C.parse(h)]
    rest = [c for c in cfg.full_deck() if c not in held]
    data = state.to_dict()
    data.update({"hands": [h.split() for h in hands], "open_set": [C.format_card(rest[0])],
                 "stock": C.format(rest[1:]).split(), "dead_pile": [], "phase": "TURN_START",
                 "current_player": 0, "turn_done": [True] * n, "totals": totals, "turns": n, "known": [[]] * n,
                 "pending_discard": []})
    return LeastCountState.from_dict(data)


def test_pick_from_the_open_set_after_a_discard():
    state = declare_state(["AC 2C 3D", "4D 6D 8S", "5H 7H 9H"], [0, 0, 0])
    state.apply(L.discard_action(state.hands[0], "AC 2C 3D"))  # a mixed-suit sequence
    open_card = state.open_set[0]
    assert set(state.legal_actions()) == {L.PICK_OPEN + open_card, L.PICK_CLOSED}
    state.apply(L.PICK_OPEN + open_card)
    assert state.hands[0] == [open_card] and state.known[0] == [open_card]
    assert state.open_set == C.parse("AC 2C 3D") and state.dead == []
    state.apply(L.discard_action(state.hands[1], "8S"))
    state.apply(L.PICK_CLOSED)
    assert state.dead == C.parse("AC 2C 3D") and state.open_set == C.parse("8S")


# -- L3, L4: declarations -------------------------------------------------------------------
A10, B16, C17 = "AC 2C 3D 3C AH", "2D 2H 4C 4D 4H", "5C 5D 5H AD AS"
B8, C20 = "2D 2H 4C", "TC TD"
A8 = "AC 2C 3D 2S"


def declare(hands: list[str], **options) -> L.RoundResult:
    state = scenario(hands, **options)
    play(state, "DECLARE")
    assert state.is_terminal()
    return state.hand_results[-1]


def test_l3_valid_declaration():
    result = declare([A10, B16, C17])
    assert result.counts == [10, 16, 17] and result.kind == "valid_declaration"
    assert result.points == [0, 6, 7]


def test_l4_false_declaration_pays_the_penalty_and_the_difference():
    result = declare([A10, B8, C20])
    assert result.counts == [10, 8, 20] and result.kind == "false_declaration"
    assert result.points == [22, 0, 0]


def test_l4_a_tie_is_false_by_default_and_valid_with_tie_declaration_valid():
    assert declare([A8, B8, C20]).points == [20, 0, 0]
    result = declare([A8, B8, C20], tie_declaration_valid=True)
    assert result.kind == "valid_declaration" and result.points == [0, 0, 12]


def test_false_declare_penalty_option():
    assert declare([A10, B8, C20], false_declare_penalty=40).points == [42, 0, 0]


@pytest.mark.parametrize("declarer, counts, options, kind, points", [
    (0, [3, 9, 4, 20], {}, "valid_declaration", [0, 6, 1, 17]),  # everyone pays the difference
    (0, [4, 9, 4, 20], {}, "false_declaration", [20, 0, 0, 0]),  # a tie is false: 20 + (d - min)
    (0, [4, 9, 4, 20], {"tie_declaration_valid": True}, "valid_declaration", [0, 5, 0, 16]),
    (2, [3, 9, 5, 20], {}, "false_declaration", [0, 0, 22, 0]),  # beaten: 20 + (5 - 3)
    (2, [3, 9, 5, 20], {"false_declare_penalty": 40}, "false_declaration", [0, 0, 42, 0]),
    (-1, [3, 9, 5, 20], {}, "timeout", [0, 6, 2, 17]),  # count - min
    (-1, [7, 7, 7, 7], {}, "timeout", [0, 0, 0, 0]),
])
def test_round_scores(declarer, counts, options, kind, points):
    cfg = LeastCountConfig(**options)
    assert L.score_round(cfg, declarer, [0, 1, 2, 3], counts) == (kind, points)
    assert oracle_round(cfg, declarer, [0, 1, 2, 3], dict(enumerate(counts))) == points


def test_round_scores_skip_seats_not_dealt_in():
    """Seat 1 is out of the match: its zero count is not the minimum, and it scores nothing."""
    cfg = LeastCountConfig()
    assert L.score_round(cfg, 0, [0, 2, 3], [6, 0, 9, 4])[1] == [22, 0, 0, 0]
    assert L.score_round(cfg, -1, [0, 2, 3], [6, 0, 9, 4])[1] == [2, 0, 5, 0]


# -- L5: declare timing ---------------------------------------------------------------------
def test_l5_no_declaration_in_ones_first_turn_and_only_at_the_start_of_a_turn():
    state = LeastCountState(LeastCountConfig(num_players=3), seed=5, dealer=0)
    for turn, player in enumerate((1, 2, 0), start=1):
        assert state.current_player == player and "DECLARE" not in names(state), turn
        state.apply(state.legal_actions()[0])
        state.apply(state.legal_actions()[-1])
    assert state.current_player == 1 and "DECLARE" in names(state)
    state.apply(state.legal_actions()[1])  # a discard
    assert state.phase == Phase.PICK and "DECLARE" not in names(state)
    state.apply(state.legal_actions()[-1])
    for player in (2, 0):
        assert state.current_player == player and "DECLARE" in names(state)
        state.apply(state.legal_actions()[1])
        state.apply(state.legal_actions()[-1])
    assert state.current_player == 1 and "DECLARE" in names(state)


def test_declare_timing_start_of_any_turn_allows_the_first_turn():
    state = LeastCountState(LeastCountConfig(num_players=3, declare_timing="start_of_any_turn"), seed=5, dealer=0)
    assert "DECLARE" in names(state)
    state.apply(L.DISCARD)
    assert "DECLARE" not in names(state)


def test_declare_needs_a_finished_turn_and_the_threshold():
    state = declare_state(["AC 2C", "4D 6D", "5H 7H"], [0, 0, 0], declare_max_count=3)
    assert L.DECLARE in state.legal_actions()
    state = declare_state(["AC 3C", "4D 6D", "5H 7H"], [0, 0, 0], declare_max_count=3)
    assert L.DECLARE not in state.legal_actions()  # count 4 > 3
    fresh = LeastCountState(LeastCountConfig(), seed=3)
    assert L.DECLARE not in fresh.legal_actions()
    anytime = LeastCountState(LeastCountConfig(declare_timing="start_of_any_turn"), seed=3)
    assert L.DECLARE in anytime.legal_actions()


def test_declare_max_count():
    eleven, ten = "AC 2C 3D 3C 2S", "AC 2C 3D 3C AH"
    assert "DECLARE" not in names(scenario([eleven, B16], declare_max_count=10))
    assert "DECLARE" in names(scenario([ten, B16], declare_max_count=10))
    assert "DECLARE" in names(scenario([eleven, B16]))  # no threshold by default


# -- L6: elimination ------------------------------------------------------------------------
def test_l6_elimination_through_the_env():
    state = scenario(["AC 2C", "TC", "9C"], totals=[30, 45, 10], elimination_score=50, episode="match")
    env = least_count_v0.env(num_players=3, elimination_score=50, episode="match")
    raw = env.unwrapped
    env.reset(options={"state": state.to_dict()})
    env.step(L.DECLARE)
    result = raw.game.hand_results[-1]
    assert result.counts == [3, 10, 9] and result.points == [0, 7, 6] and result.totals == [30, 52, 16]
    assert result.eliminated == [1] and raw.game.active_seats() == [0, 2]
    assert raw.terminations["player_1"] and env.agent_selection == "player_1"
    assert raw.infos["player_1"]["eliminated"] is True
    mean = (0 - 7 - 6) / 3
    assert env.last()[1] == pytest.approx(-7 - mean)  # its last reward
    env.step(None)  # its dead step
    assert env.agents == ["player_0", "player_2"] and "player_1" not in raw.rewards
    assert raw.game.round_index == 1 and not raw.game.hands[1]
    rng = random.Random(6)
    for agent in env.agent_iter():
        assert agent != "player_1", "the eliminated player acts again"
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else rng.choice(obs["action_mask"].nonzero()[0].tolist()))
    assert len(raw.game.winners) == 1 and raw.game.winners[0] in (0, 2)


@pytest.mark.parametrize("totals, options, eliminated, over, winners", [
    ([90, 95, 80], {}, [1], False, []),  # 95 + 7 is past 100
    ([90, 93, 80], {}, [], False, []),  # 93 + 7 = 100 is not past 100
    ([90, 93, 80], {"eliminate_on_equal": True}, [1], False, []),
    ([90, 95, 100], {}, [1, 2], True, [0]),  # the last player standing wins
    ([101, 95, 100], {}, [1, 2], True, [0]),  # everyone past 100: the lowest total stays
    ([90, 95, 80], {"match_end": "first_elimination"}, [1], True, [2]),  # the lowest total wins
])
def test_eliminations_and_match_end(totals, options, eliminated, over, winners):
    """Seat 0 (AC 2C, count 3) declares against 10 and 12: valid, 7 and 9 points."""
    state = declare_state(["AC 2C", "4D 6D", "5H 7H"], totals, **options)
    state.apply(L.DECLARE)
    result = state.hand_results[-1]
    assert result.kind == "valid_declaration" and result.points == [0, 7, 9]
    assert sorted(result.eliminated) == eliminated
    assert state.is_terminal() == over
    assert state.winners == winners


def test_standings_rank_by_elimination_round_then_total():
    """Later eliminations rank higher; in one round, the lower total; seats still in first."""
    state = declare_state(["AC 2C", "4D 6D", "5H 7H", "9S 9C"], [10, 95, 98, 20])
    state.apply(L.DECLARE)  # seats 1 (105) and 2 (107) go out together; 3 (35) and 0 play on
    assert sorted(state.hand_results[-1].eliminated) == [1, 2]
    assert state.standings() == [-1, -3, -4, -2]
    assert state.player_view(0).eliminated == (False, True, True, False)


def test_eliminate_on_equal():
    for on_equal, eliminated in ((False, []), (True, [1])):
        state = scenario(["AC 2C", "TC", "9C"], totals=[30, 43, 10], elimination_score=50, episode="match",
                         eliminate_on_equal=on_equal)
        play(state, "DECLARE")
        assert state.hand_results[-1].totals[1] == 50 and state.hand_results[-1].eliminated == eliminated


def test_players_eliminated_together_rank_by_total_and_later_eliminations_rank_higher():
    state = scenario(["AC", "TC", "9C", "KC"], totals=[0, 95, 95, 0], out_round=[0, 0, 0, 0], episode="match")
    play(state, "DECLARE")  # 1 and 2 cross 100 in the same round: 104 against 103
    assert state.hand_results[-1].eliminated == [1, 2] and state.totals == [0, 104, 103, 9]
    assert state.standings() == [-1, -4, -3, -2]
    later = scenario(["AC", "", "", "KC"], totals=[0, 104, 103, 90], out_round=[0, 1, 1, 0], rounds_played=1,
                     current=3, dealer=0, episode="match")
    play(later, "DECLARE")  # a false declaration: 20 + (10 - 1) takes seat 3 to 119
    assert later.hand_results[-1].eliminated == [3] and later.is_terminal() and later.winners == [0]
    assert later.standings() == [-1, -4, -3, -2]


def test_when_nobody_would_be_left_the_lowest_total_stays():
    state = scenario(["AC", "TC"], totals=[120, 130], episode="match")
    play(state, "DECLARE")
    assert state.hand_results[-1].eliminated == [1] and state.is_terminal() and state.winners == [0]


def test_match_end_first_elimination_ranks_everyone_by_total():
    state = scenario(["AC", "TC", "9C"], totals=[30, 95, 10], episode="match", match_end="first_elimination")
    play(state, "DECLARE")
    assert state.is_terminal() and state.totals == [30, 104, 18] and state.winners == [2]
    assert state.standings() == [-30, -104, -18]


def test_the_deal_and_the_turn_skip_eliminated_players():
    state = scenario(["AC", "TC", "9C", "5D"], totals=[0, 0, 95, 0], episode="match", current=0, dealer=2)
    play(state, "DECLARE")  # seat 2 out; the deal passes from seat 2 to seat 3
    assert state.out_round == [0, 0, 1, 0] and state.dealer == 3 and state.current_player == 0
    assert [len(h) for h in state.hands] == [5, 5, 0, 5]
    seen = set()
    while not state.is_terminal() and len(state.hand_results) == 1:
        seen.add(state.current_player)
        state.apply(state.legal_actions()[-1])
    assert 2 not in seen


# -- the other options ----------------------------------------------------------------------
def test_hand_size_seven_and_subsets_of_seven_positions():
    state = LeastCountState(LeastCountConfig(hand_size=7), seed=3)
    assert all(len(h) == 7 for h in state.hands)
    assert max(state.legal_actions()) <= L.DISCARD + 127 - 1
    with pytest.raises(ValueError, match="hand_size"):
        LeastCountConfig(hand_size=8)


def test_sequence_lengths_option():
    assert not may_discard("5C 6D 7H 8S")
    assert may_discard("5C 6D 7H 8S", sequence_lengths=(3, 4, 5))
    assert not may_discard("2C 3D 4H", sequence_lengths=[4])
    assert may_discard("9C TD JH QS KS AC", hand_size=6, sequence_lengths=(6,))


def test_allow_two_different_pairs_and_three_of_a_kind():
    assert may_discard("3C 3D 9H 9S", allow_two_different_pairs=True)
    assert not may_discard("3C 3D 9H", allow_two_different_pairs=True)
    assert may_discard("KS KH KD", allow_three_of_a_kind=True)
    assert not may_discard("KS KH KD KC AS", allow_three_of_a_kind=True)


def test_printed_jokers_pair_only_with_jokers_and_are_worth_zero():
    options = {"num_printed_jokers": 2, "allow_two_different_pairs": True}
    assert may_discard("JK JK", **options) and may_discard("JK JK 7H 7C", **options)
    assert not may_discard("JK 7H", **options) and not may_discard("JK 3C 4C", **options)
    assert not may_discard("JK 2S 7S 9S JS", **options)
    state = scenario(["JK JK 3C", "AD"], **options)
    assert state.count(0) == 3
    assert Counter(LeastCountConfig(num_players=8, num_printed_jokers=2).full_deck())[L.JOKER] == 4


def test_cut_joker_rank_is_worth_zero_and_a_cut_joker_leaves_only_jokers_wild():
    state = scenario(["7C 7D 2H", "AD"], cut_card="7S", cut_joker=True)
    assert state.count(0) == 2 and state.player_view(1).cut_card == C.parse_card("7S")
    assert may_discard("6C 7D 8H", cut_joker=True, cut_card="7S")  # cut-rank cards keep rank and suit
    jokers = scenario(["7C JK 2H", "AD"], cut_card="JK", cut_joker=True, num_printed_jokers=2)
    assert jokers.count(0) == 9


def test_the_cut_card_is_turned_after_the_deal_and_before_the_open_card():
    config = LeastCountConfig(num_players=2, cut_joker=True)
    order = config.full_deck()
    random.Random(4).shuffle(order)
    state = LeastCountState(config, seed=0, deck=order, dealer=1)
    assert state.hands[0] == sorted(order[0:10:2]) and state.hands[1] == sorted(order[1:10:2])
    assert state.cut_card == order[10] and state.open_set == [order[11]] and state.stock[-1] == order[12]
    assert state.values[order[10]] == 0 and order[10] not in state.stock


def test_two_decks_identical_cards():
    config = LeastCountConfig(num_players=7)
    assert config.decks == 2 and LeastCountConfig(num_players=6).decks == 1
    assert LeastCountConfig(num_players=4, num_decks=2).deck_size == 104
    assert may_discard("7H 7H", num_decks=2)
    assert may_discard("7H 7H 7C 7D", num_decks=2)
    assert not may_discard("2S 7S 7S 9S JS", num_decks=2)
    assert not may_discard("2S 2S 3S", num_decks=2)
    state = scenario(["7H 7H 8C", "AD"], num_decks=2)  # one action per set of cards: the first copy
    assert names(state) == {"DECLARE", "DISCARD(0)", "DISCARD(1)", "DISCARD(1,2)"}


def test_initial_open_card_option():
    without = LeastCountState(LeastCountConfig(initial_open_card=False), seed=2)
    assert without.open_set == [] and len(without.stock) == 52 - 20
    without.apply(L.DISCARD)
    assert names(without) == {"PICK_CLOSED"}
    with_card = LeastCountState(LeastCountConfig(), seed=2)
    assert len(with_card.open_set) == 1 and len(with_card.stock) == 52 - 21


def test_the_dead_pile_is_reshuffled_when_the_closed_deck_is_empty():
    state = scenario(["AC 2C", "TC"], open_set="KD", dead="3H", rest_to="dead")
    assert state.stock == [] and len(state.dead) > 1
    discard(state, "AC")
    assert "PICK_CLOSED" in names(state)
    dead = sorted(state.dead)
    play(state, "PICK_CLOSED")
    drawn = next(c for c in state.hands[0] if c != C.parse_card("2C"))
    assert state.reshuffles == 1 and state.dead == [C.parse_card("KD")] and sorted(state.stock + [drawn]) == dead
    again = scenario(["AC 2C", "TC"], open_set="KD", dead="3H", rest_to="dead")
    discard(again, "AC")
    play(again, "PICK_CLOSED")
    assert again.stock == state.stock  # the reshuffle is seeded


def test_with_nothing_to_reshuffle_the_pick_is_from_the_open_set():
    """Ten hands of 5 from one deck with a cut card and no open card leave one closed card:
    the first player draws it, and the second, with nothing to draw, picks the open set."""
    state = LeastCountState(LeastCountConfig(num_players=10, num_decks=1, cut_joker=True, initial_open_card=False),
                            seed=1)
    assert len(state.stock) == 1 and not state.open_set
    state.apply(L.DISCARD)
    play(state, "PICK_CLOSED")
    assert not state.stock and not state.dead and len(state.open_set) == 1
    state.apply(L.DISCARD)
    assert names(state) == {f"PICK_OPEN({C.format(state.open_set)})"}


def test_max_turns_per_round_times_out_and_truncates_one_round():
    state = LeastCountState(LeastCountConfig(num_players=3, max_turns_per_round=4), seed=1)
    while not state.is_terminal():
        state.apply(state.legal_actions()[-1])
    result = state.hand_results[-1]
    assert result.kind == "timeout" and result.truncated and state.truncated and state.turns == 4
    low = min(result.counts)
    assert result.points == [c - low for c in result.counts]


def test_the_turn_cap_does_not_truncate_a_match_but_the_round_cap_does():
    state = LeastCountState(LeastCountConfig(episode="match", max_turns_per_round=3, max_rounds=4), seed=1)
    while not state.is_terminal():
        state.apply(state.legal_actions()[-1])
    assert len(state.hand_results) == 4 and state.truncated and state.winners == []
    assert all(r.kind == "timeout" for r in state.hand_results)


def test_hand_episode_plays_one_round():
    state = scenario([A10, B16, C17])
    play(state, "DECLARE")
    assert state.is_terminal() and state.scores() == [0, -6, -7] and state.standings() == [0, -6, -7]
    assert state.hand_results[-1].eliminated == []


def test_first_dealer_is_seeded_and_the_deal_passes_to_the_next_active_player():
    dealers = {LeastCountState(LeastCountConfig(), seed=s).dealer for s in range(20)}
    assert dealers == {0, 1, 2, 3}
    state = LeastCountState(LeastCountConfig(episode="match"), seed=1, dealer=2)
    assert state.current_player == 3
    while len(state.hand_results) < 1:
        state.apply(state.legal_actions()[0])
    assert state.dealer == 3 and state.current_player == 0


# -- option validation ----------------------------------------------------------------------
@pytest.mark.parametrize("options, name", [
    ({"num_players": 1}, "num_players"), ({"num_players": 11}, "num_players"), ({"num_decks": 3}, "num_decks"),
    ({"num_printed_jokers": 3}, "num_printed_jokers"), ({"cut_joker": 1}, "cut_joker"), ({"hand_size": 0}, "hand_size"),
    ({"sequence_lengths": (2, 3)}, "sequence_lengths"), ({"sequence_lengths": ()}, "sequence_lengths"),
    ({"sequence_lengths": 3}, "sequence_lengths"), ({"declare_timing": "end_of_turn"}, "declare_timing"),
    ({"declare_max_count": -1}, "declare_max_count"), ({"false_declare_penalty": -5}, "false_declare_penalty"),
    ({"max_turns_per_round": 0}, "max_turns_per_round"), ({"elimination_score": 0}, "elimination_score"),
    ({"match_end": "first_win"}, "match_end"), ({"episode": "tournament"}, "episode"),
    ({"max_rounds": 0}, "max_rounds"),
    ({"num_players": 8, "num_decks": 1, "hand_size": 7}, "hand_size"), ({"colour": "red"}, "colour"),
])
def test_bad_options_fail_by_name(options, name):
    with pytest.raises(ValueError, match=name):
        LeastCountConfig.from_kwargs(**options)
    with pytest.raises(ValueError, match=name):
        least_count_v0.env(**options)


def test_bad_scenarios_are_refused():
    good = scenario([A10, B16, C17]).to_dict()
    for change, needle in (({"current_player": 5}, "current_player"), ({"phase": "PICK"}, "pending"),
                           ({"stock": good["stock"][1:]}, "deck"), ({"out_round": [0, 1, 0]}, "eliminated"),
                           ({"known": [["KS"], [], []]}, "known"), ({"cut_card": "KS"}, "cut")):
        with pytest.raises(ValueError, match=needle):
            LeastCountState.from_dict({**good, **change})
    with pytest.raises(ValueError, match="game"):
        LeastCountState.from_dict({**good, "game": "gin_rummy"})


def test_every_round_is_dealt_with_no_reshuffle_made():
    """A round starts with its reshuffle count at 0, so its first reshuffle is keyed by index
    0 (the order a seed gives the dead pile is part of the game's reproducibility)."""
    config = LeastCountConfig(episode="match", elimination_score=30, num_players=3)
    state = LeastCountState(config, seed=4)
    rng = random.Random(4)
    rounds_seen = set()
    while not state.is_terminal():
        if state.round_index not in rounds_seen:
            rounds_seen.add(state.round_index)
            assert state.reshuffles == 0 and state.to_dict()["reshuffles"] == 0, state.round_index
        state.apply(rng.choice(state.legal_actions()))
    assert len(rounds_seen) >= 2


# -- bounds of any game (OpenSpiel's GameInfo) ----------------------------------------------
BOUND_OPTIONS = [  # (options, games)
    ({"num_players": 2}, 8),
    ({"num_players": 2, "hand_size": 3, "episode": "match", "elimination_score": 40,
      "declare_timing": "start_of_any_turn"}, 6),
    ({"num_players": 3, "episode": "match", "elimination_score": 30, "max_turns_per_round": 30}, 6),
    ({"num_players": 6, "hand_size": 7, "num_printed_jokers": 2, "cut_joker": True}, 6),
    ({"num_players": 7, "episode": "match", "elimination_score": 25, "eliminate_on_equal": True,
      "declare_max_count": 10, "match_end": "first_elimination"}, 4),
    ({"num_players": 10, "episode": "match", "max_rounds": 4, "max_turns_per_round": 25,
      "tie_declaration_valid": True, "false_declare_penalty": 40}, 4),
]


def random_move(state: LeastCountState, rng: random.Random, declare: float) -> int:
    """A random legal action, ``DECLARE`` with probability ``declare`` when offered (uniform
    play declares at once and mostly falsely; rare declarations make long rounds)."""
    legal = state.legal_actions()
    if legal[0] == L.DECLARE and len(legal) > 1:
        return L.DECLARE if rng.random() < declare else rng.choice(legal[1:])
    return rng.choice(legal)


@pytest.mark.parametrize("options, games", BOUND_OPTIONS)
def test_random_games_stay_within_the_bounds(options, games):
    """Every return seen at every step lies within ``utility_bounds``, and no game applies more
    actions than ``max_game_length`` (the checks of OpenSpiel's random-simulation test)."""
    check_within_bounds(LeastCountState, LeastCountConfig(**options), range(games),
                        lambda state, rng, seed: random_move(state, rng, declare=(0.5, 0.05)[seed % 2]))


def test_utility_bounds_are_reached_by_a_false_declaration():
    """Two players: 50 declared against an ace pays 20 + 49, the most a round pays."""
    state = scenario(["TC JC QC KC TD", "AS"])
    play(state, "DECLARE")
    assert state.hand_results[-1].points == [69, 0]
    assert tuple(state.returns()) == LeastCountState.utility_bounds(state.config)


def test_utility_bounds_of_a_match_are_reached_from_the_threshold():
    """Two players: seat 0 reaches the threshold 30 exactly, then declares falsely with 50
    against an ace, ending on 30 + 69, the most a total can be."""
    first = scenario(["TC JC QC AC", "AS"], current=1, episode="match", elimination_score=30)
    play(first, "DECLARE")
    assert first.totals == [30, 0] and not first.is_terminal()
    data = first.to_dict()  # round 2, with round 1 recorded
    second = scenario(["TC JC QC KC TD", "AS"], episode="match", elimination_score=30, totals=[30, 0]).to_dict()
    for key in ("hands", "stock", "open_set", "dead_pile", "phase", "current_player", "dealer", "turn_done", "turns",
                "known", "pending_discard"):
        data[key] = second[key]
    state = LeastCountState.from_dict({**data, "history": []})
    play(state, "DECLARE")
    assert state.is_terminal() and state.totals == [99, 0] and state.winners == [1]
    assert tuple(state.returns()) == LeastCountState.utility_bounds(state.config)


@pytest.mark.parametrize("options", [{"max_turns_per_round": 4}, {"episode": "match", "max_turns_per_round": 3,
                                                                   "max_rounds": 4}])
def test_max_game_length_is_reached_by_timeouts(options):
    """Nobody declares: every round times out, and a match runs to its round cap."""
    state = LeastCountState(LeastCountConfig(num_players=3, **options), seed=1)
    while not state.is_terminal():
        state.apply(state.legal_actions()[-1])
    assert state.truncated and len(state.history) == LeastCountState.max_game_length(state.config)
