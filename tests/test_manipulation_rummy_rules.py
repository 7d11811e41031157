"""Manipulation Rummy: the worked scenarios M1-M6 (docs/manipulation_rummy.md#scenarios)
exactly, joker replacement from the hand and from the table, the freed-joker rule, a table
that is not legal never committed, a scenario for every option, option and state-dict
validation, and states sampled from a seat's view (``sample_from_view``). Mid-round
positions are engine states built from hand-written dicts (``scenario``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from rummy_envs import IllegalActionError
from rummy_envs import cards as C
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import ManipulationConfig, ManipulationState, Phase
from rummy_envs.games.manipulation_rummy import sampling
from rummy_envs.games.manipulation_rummy import table_solver as TS
from env_contract import check_within_bounds

A, B, Cs, D = 0, 1, 2, 3  # seats of a scenario's players; A is to move


def scenario(hands: list[str], table: str = "", jokers: str = "", stock_top: str = "", rest_to: str = "stock",
             phase: str = "MELD", current: int = A, draws: int = 1, dealer: int | None = None,
             **options) -> ManipulationState:
    """A state with these hands and this table (``table``: its natural cards; ``jokers``:
    the identities of the jokers on it). Every other card goes, in id order, to the stock
    after ``stock_top`` (``rest_to="stock"``), or onto the table (``rest_to="table"``, the
    stock then holding ``stock_top`` only), its jokers declared as the first identities the
    table lacks (one deck keeps that table small enough to check quickly). The dealer sits
    right of ``current`` unless given."""
    config = ManipulationConfig(**options)
    naturals, joker_ids = C.parse(table), C.parse(jokers)
    used = Counter(c for h in hands for c in C.parse(h)) + Counter(naturals) + Counter(C.parse(stock_top))
    used[M.JOKER] += len(joker_ids)
    rest = Counter(config.full_deck()) - used
    rest_jokers = rest.pop(M.JOKER, 0)
    stock = stock_top.split()
    if rest_to == "stock":
        stock += C.format(sorted(rest.elements()) + [M.JOKER] * rest_jokers).split()
    else:
        naturals += sorted(rest.elements())
        on_table = Counter(naturals + joker_ids)
        lacking = [c for c in range(52) for _ in range(config.decks - on_table[c])]
        joker_ids += lacking[:rest_jokers]
    return ManipulationState.from_dict({
        "options": {**options}, "hands": hands, "table_naturals": C.format(naturals).split(),
        "table_jokers": C.format(joker_ids).split(), "stock": stock, "phase": phase, "current_player": current,
        "draws": draws, "dealer": (current - 1) % config.num_players if dealer is None else dealer})


def names(state: ManipulationState) -> set[str]:
    return {M.action_to_str(a) for a in state.legal_actions()}


def play(state: ManipulationState, *actions: str) -> None:
    for text in actions:
        state.apply(M.str_to_action(text))


def is_meld(cards: tuple[int, ...] | list[int]) -> bool:
    """An independent check of one meld (docs/manipulation_rummy.md#cards-and-melds): a group
    of 3-4 distinct suits of one rank, or 3+ consecutive cards of one suit, the ace low or
    high, given in rank order."""
    if len(cards) < 3:
        return False
    ranks, suits = [c % 13 for c in cards], [c // 13 for c in cards]
    if len(set(ranks)) == 1:
        return len(cards) <= 4 and len(set(suits)) == len(cards)
    if len(set(suits)) != 1:
        return False
    positions = ranks[:-1] + [13 if ranks[-1] == 0 and len(cards) > 1 and ranks[-2] == 12 else ranks[-1]]
    return positions == list(range(positions[0], positions[0] + len(cards)))


def assert_table_legal(state: ManipulationState) -> None:
    """The committed table is exactly its arrangement's cards, and every meld is legal."""
    arranged = Counter(c for meld in state.arrangement for c in meld)
    assert arranged == Counter(M.cards_of(state.table_counts())), "the arrangement is not the table"
    for meld in state.arrangement:
        assert is_meld(meld), f"illegal meld {C.format(meld)}"


def melds(state: ManipulationState) -> set[str]:
    """The committed table's melds: sequences in rank order, groups in suit order."""
    return {C.format(m) for m in state.arrangement}


# -- M1: legal rearrangement ---------------------------------------------------------------
def test_m1_legal_rearrangement():
    s = scenario(["6H 6D KS", "2C 3D", "4H 5S"], table="3C 4C 5C 6C 9S 9H 9D")
    assert names(s) == {"NO_MELD", "PLACE(6H)", "PLACE(6D)"}
    play(s, "PLACE(6H)")
    assert names(s) == {"ABORT", "PLACE(6D)"}  # [6C 6H] alone cannot be committed
    play(s, "PLACE(6D)", "COMMIT")
    assert melds(s) == {"3C 4C 5C", "6C 6D 6H", "9D 9H 9S"}
    assert_table_legal(s)
    assert s.player_view(A).hand == (C.parse_card("KS"),) and s.hand_value(A) == 10
    # KS is worth 10 > 5: no knock decision; the turn ended at once and B drew.
    assert s.current_player == B and s.phase == Phase.MELD and s.draws == 1


# -- M2: illegal plans ---------------------------------------------------------------------
def test_m2a_taking_from_a_run_that_breaks_it_is_not_offered():
    s = scenario(["6H 6D", "2C 3D", "4H 5S"], table="4S 5S 6S 7S")
    assert names(s) == {"NO_MELD"}
    before = s.to_dict()
    for bad in ("PLACE(6H)", "PLACE(6D)", "COMMIT"):
        with pytest.raises(IllegalActionError, match=bad.replace("(", r"\(").replace(")", r"\)")):
            play(s, bad)
        assert s.to_dict() == before


def test_m2b_rearranging_table_cards_only_is_never_committed():
    s = scenario(["5S 6S 7S 2C", "3D", "4H"], table="7D 9D 8D 8H 8S 8C", jokers="8D")
    assert "REPLACE_FROM_TABLE(8D)" in names(s) and "COMMIT" not in names(s)
    play(s, "REPLACE_FROM_TABLE(8D)")  # the group's 8D takes the joker's place in the run
    assert s.free_jokers == 1 and "COMMIT" not in names(s)
    play(s, "FREED_AS(8D)")  # the table is legal again, but no card came from the hand
    assert s.free_jokers == 0 and TS.is_legal(s.table_counts(), 2)
    assert "COMMIT" not in names(s) and "ABORT" in names(s)


def test_m2c_no_table_card_ever_returns_to_a_hand():
    s = scenario(["6H 6D 5C 8D", "2C 3D", "4H 5S"], table="3C 4C 5C 6C 9S 9H 9C 7D 9D 8H 8S 8C", jokers="8D")
    seen = 0
    for state in commit_walk(s, random.Random(1), 200):
        hand = state.hands[A]
        for a in state.legal_actions():
            if a in (M.ABORT, M.NO_MELD):
                continue
            trial = state.clone()
            trial.apply(a)
            assert all(x <= y for x, y in zip(trial.hands[A], hand)), M.action_to_str(a)
            seen += 1
    assert seen > 50


def commit_walk(state: ManipulationState, rng: random.Random, steps: int):
    """States of random placements from ``state`` (restarting from it after each commit or
    abort), every commit checked legal."""
    s = state.clone()
    for _ in range(steps):
        yield s
        legal = s.legal_actions()
        action = M.COMMIT if M.COMMIT in legal and rng.random() < 0.3 else rng.choice(legal)
        s.apply(action)
        if action == M.COMMIT:
            assert_table_legal(s)
        if s.current_player != state.current_player or not s.in_commit:
            s = state.clone()


@pytest.mark.parametrize("hand, meldable", [("8S 8S 8H 5C", False), ("KH AH 2H 5C", False),
                                            ("QH KH AH 5C", True), ("AH 2H 3H 5C", True)])
def test_m2d_identical_cards_and_wrapping_are_illegal(hand, meldable):
    s = scenario([hand, "2C 3D", "4H 5S"])
    cards = hand.split()[:3]
    if not meldable:
        assert names(s) == {"NO_MELD"}
        return
    assert names(s) == {"NO_MELD"} | {f"PLACE({c})" for c in cards}
    play(s, *[f"PLACE({c})" for c in cards], "COMMIT")
    assert melds(s) == {" ".join(cards)}


# -- M3: joker replacement from the hand -----------------------------------------------------
M3 = (["8D 5S 6S QC", "2C 3D", "4H 5H"], "7D 9D", "8D")


def test_m3_joker_replaced_from_the_hand_then_placed_anew():
    s = scenario(M3[0], table=M3[1], jokers=M3[2])
    assert "REPLACE_FROM_HAND(8D)" in names(s)
    play(s, "REPLACE_FROM_HAND(8D)")
    assert s.free_jokers == 1 and s.jokers_at[C.parse_card("8D")] == 0
    assert "COMMIT" not in names(s) and "FREED_AS(7S)" in names(s)
    play(s, "PLACE(5S)", "PLACE(6S)")
    assert "COMMIT" not in names(s), "the freed joker must be placed first"
    play(s, "FREED_AS(7S)", "COMMIT")
    assert melds(s) == {"7D 8D 9D", "5S 6S 7S"} and s.player_view(B).table_jokers == (C.parse_card("7S"),)
    assert_table_legal(s)
    assert s.hand_cards(A) == [C.parse_card("QC")] and s.current_player == B  # QC = 10: no knock


def test_m3_illegal_versions():
    s = scenario(M3[0], table=M3[1], jokers=M3[2])
    # Re-declaring the joker while 8D stays in the hand: no natural 8D is on the table to free it.
    assert "REPLACE_FROM_TABLE(8D)" not in names(s) and not any(n.startswith("FREED_AS") for n in names(s))
    # The freed joker is left unplaced: no commit; it cannot go to the hand either (no action
    # does that), and ABORT puts it back where it was, 8D back in the hand.
    play(s, "REPLACE_FROM_HAND(8D)", "PLACE(5S)", "PLACE(6S)")
    assert "COMMIT" not in names(s)
    with pytest.raises(IllegalActionError):
        play(s, "COMMIT")
    hand_before = s.hand_cards(A)
    play(s, "ABORT")
    assert s.jokers_at[C.parse_card("8D")] == 1 and s.free_jokers == 0
    assert s.hands[A][C.parse_card("8D")] == 1 and s.hands[A][M.JOKER] == 0
    assert len(s.hand_cards(A)) == len(hand_before) + 3 + 1  # the three placed back, then a draw (NO_MELD)
    assert s.draws == 2


def test_joker_replaced_from_the_table():
    s = scenario(["5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D 8D 8H 8S 8C", jokers="8D")
    assert "REPLACE_FROM_TABLE(8D)" in names(s) and "REPLACE_FROM_HAND(8D)" not in names(s)
    play(s, "REPLACE_FROM_TABLE(8D)")
    assert s.spare[C.parse_card("8D")] == 0 and "REPLACE_FROM_TABLE(8D)" not in names(s)
    play(s, "PLACE(5S)", "PLACE(6S)", "FREED_AS(7S)", "COMMIT")
    assert melds(s) == {"7D 8D 9D", "8C 8H 8S", "5S 6S 7S"}
    assert_table_legal(s)


def test_freed_joker_may_go_anywhere_and_a_hand_joker_too():
    s = scenario(["8D JK 2H 3H 9C", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    legal = names(s)
    assert {"JOKER_AS(AH)", "JOKER_AS(4H)", "PLACE(2H)", "REPLACE_FROM_HAND(8D)"} <= legal
    play(s, "REPLACE_FROM_HAND(8D)", "PLACE(2H)", "PLACE(3H)", "FREED_AS(4H)", "COMMIT")
    assert melds(s) == {"7D 8D 9D", "2H 3H 4H"} and s.hands[A][M.JOKER] == 1
    assert_table_legal(s)


def test_a_table_that_is_not_legal_is_never_committed():
    rng = random.Random(5)
    s = scenario(["JK 4S 5S 6H 6D 7S 9H KD KH", "2C 3D", "4H 5H"],
                 table="3C 4C 5C 6C 9S 9D 9C 7D 9D 8H 8S 8C QS KS AS", jokers="8D")
    commits = blocked = 0
    for state in commit_walk(s, rng, 600):
        legal = state.legal_actions()
        problem = state.commit_problem()
        legal_table = TS.is_legal(problem.table, 2)
        ready = state.in_commit and not problem.need_hand_card and not problem.free_jokers
        assert (M.COMMIT in legal) == (ready and legal_table)
        commits += M.COMMIT in legal
        blocked += ready and not legal_table
    assert commits > 20 and blocked > 20


# -- M4: draw sequence and stock-out --------------------------------------------------------
def test_m4_three_draws_then_the_turn_ends():
    config = ManipulationConfig()
    deck = config.full_deck()
    random.Random(4).shuffle(deck)
    s = ManipulationState(config, 0, deck, dealer=2)
    assert s.current_player == A and s.draws == 1 and len(s.hand_cards(A)) == 11
    assert s.hand_cards(A) == sorted(deck[0:30:3] + [deck[30]])
    play(s, "NO_MELD")
    assert s.draws == 2 and s.phase == Phase.MELD and deck[31] in s.hand_cards(A)
    play(s, "NO_MELD")  # the third draw ends the turn: no meld decision after it
    assert len(s.hand_cards(A)) == 13 and deck[32] in s.hand_cards(A)
    assert s.current_player == B and s.draws == 1 and deck[33] in s.hand_cards(B)


def test_m4_commit_not_offered_after_the_third_draw():
    s = scenario(["AC AD 2C 3C 4C 9S 9H", "KS QS", "KH QH"], stock_top="2D 3D", draws=1, knock_limit=60)
    play(s, "NO_MELD", "NO_MELD")  # draws 2D, then 3D: the third draw
    assert s.phase == Phase.END_OF_TURN and names(s) == {"KNOCK", "END_TURN"}


def test_m4_stock_out_after_no_meld_with_an_empty_stock():
    s = scenario(["4C 7H 8H 9C", "9S KD", "AH"], stock_top="2D", rest_to="table", phase="END_OF_TURN",
                 current=Cs, num_decks=1)
    play(s, "END_TURN")  # C (an ace: it could knock) ends its turn; A draws the last card
    assert s.current_player == A and s.stock == [] and s.phase == Phase.MELD
    play(s, "NO_MELD")
    result = s.hand_results[-1]
    assert result.kind == "stock_out" and s.is_terminal()
    assert result.values == [30, 19, 1] and result.winners == [Cs] and result.points == [0, 0, 29 + 18]


# -- M5: round scoring ---------------------------------------------------------------------
def knock(hands: list[str], **options) -> M.RoundResult:
    s = scenario(hands, phase="END_OF_TURN", **options)
    play(s, "KNOCK")
    assert s.is_terminal()
    return s.hand_results[-1]


def test_m5a_the_lowest_hand_beats_the_knocker():
    r = knock(["AS 2C 2D", "3S", "KS 4D"])
    assert r.kind == "knock" and r.ender == A and r.values == [5, 3, 14]
    assert r.winners == [B] and r.points == [0, 23, 0]


def test_m5b_the_knocker_tied_by_one_player():
    r = knock(["4C", "AH 3D", "9S"])
    assert r.winners == [B] and r.points == [0, 15, 0]


def test_m5c_four_players_two_co_winners():
    r = knock(["4C", "4D", "4H", "QC 2C"], num_players=4)
    assert r.winners == [B, Cs] and r.points == [0, 18, 18, 0]


def test_m5d_two_players_the_knocker_wins_the_difference():
    r = knock(["3C", "7C KD"], num_players=2)
    assert r.winners == [A] and r.points == [14, 0]


def test_m5e_going_out():
    s = scenario(["5H 6H 7H", "QC 2C", "JK 5C"])
    play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")
    r = s.hand_results[-1]
    assert r.kind == "out" and r.ender == A and r.values == [0, 12, 30]
    assert r.winners == [A] and r.points == [67, 0, 0] and r.hands[A] == []


def test_m5f_stock_out_ties_share():
    s = scenario(["5C 2D", "7D", "KC QC"], rest_to="table", num_decks=1)  # A drew the 2D, the last card
    assert s.stock == []
    play(s, "NO_MELD")
    r = s.hand_results[-1]
    assert r.kind == "stock_out" and r.ender == -1 and r.winners == [A, B] and r.points == [13, 13, 0]


def test_m5g_a_joker_alone_may_not_knock():
    s = scenario(["JK 5H 6H 7H", "QC 2C", "9S 5C"])
    play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")
    assert s.hand_cards(A) == [M.JOKER] and s.hand_value(A) == 25
    assert s.current_player == B and M.KNOCK not in s.legal_actions()
    with pytest.raises(ValueError, match="END_OF_TURN"):
        scenario(["JK", "QC 2C", "9S 5C"], phase="END_OF_TURN")


# -- M6: match end -------------------------------------------------------------------------
def match_scenario(totals: list[int], won: list[int], hands: list[str], earlier: int | None = None,
                   **options) -> ManipulationState:
    """A match after ``earlier`` rounds (by default one per win), which are not recorded, with
    these totals and wins (the first dealer is the one the dealer implies)."""
    s = scenario(hands, phase="END_OF_TURN", episode="match", **options)
    data = {k: v for k, v in s.to_dict().items() if k != "first_dealer"}
    data.update(totals=totals, rounds_won=won, hand_results=[],
                round_index=sum(won) if earlier is None else earlier)
    return ManipulationState.from_dict(data)


def test_m6_match_end_bonuses():
    s = match_scenario([142, 90, 40], [3, 3, 1], ["2C", "8C", "6C"])
    play(s, "KNOCK")  # A wins the round alone: (8 - 2) + (6 - 2) = 10, reaching 152
    assert s.hand_results[-1].points == [10, 0, 0] and s.totals == [152, 90, 40] and s.rounds_won == [4, 3, 1]
    assert s.is_terminal() and not s.truncated
    assert s.scores() == [352, 165, 65] and s.winners == [A]
    assert s.returns() == pytest.approx([352 - 194, 165 - 194, 65 - 194])


def test_match_goes_on_below_the_target():
    s = match_scenario([100, 90, 40], [3, 3, 1], ["2C", "8C", "6C"])
    play(s, "KNOCK")
    assert not s.is_terminal() and s.totals == [110, 90, 40] and s.round_index == 7 + 1
    assert s.scores() == [110, 90, 40] and s.final is None and len(s.hand_results) == 1
    assert all(len(s.hand_cards(q)) >= 10 for q in range(3))


def test_earlier_rounds_may_go_unrecorded_but_not_in_the_first_round():
    s = match_scenario([100, 90, 40], [3, 3, 1], ["2C", "8C", "6C"])
    play(s, "KNOCK")  # one recorded round after seven unrecorded ones
    d = s.to_dict()
    assert len(d["hand_results"]) == 1 and ManipulationState.from_dict(d).to_dict() == d
    with pytest.raises(ValueError, match="rounds_won"):  # fewer wins than the recorded round gives
        ManipulationState.from_dict({**d, "rounds_won": [0, 3, 1]})
    first = match_scenario([0, 0, 0], [0, 0, 0], ["2C", "8C", "6C"], earlier=0).to_dict()
    for field, value in (("totals", [10, 0, 0]), ("rounds_won", [1, 0, 0])):
        with pytest.raises(ValueError, match=field):  # nothing was played before the first round
            ManipulationState.from_dict({**first, field: value})


@pytest.mark.parametrize("tie_break", ["share", "play_on"])
def test_tie_break(tie_break):
    # A reaches 150 with 4 rounds won (350 with the bonuses); B, at 125 below the target with 9
    # rounds won, also finishes on 350.
    s = match_scenario([140, 125, 0], [3, 9, 1], ["2C", "8C", "6C"], tie_break=tie_break)
    play(s, "KNOCK")
    assert s.totals == [150, 125, 0] and s.rounds_won == [4, 9, 1]
    if tie_break == "share":
        assert s.is_terminal() and s.winners == [A, B] and s.scores() == [350, 350, 25]
    else:  # another round, no bonus paid yet
        assert not s.is_terminal() and s.final is None and s.scores() == [150, 125, 0]
        assert s.round_index == 13 + 1
        assert ManipulationState.from_dict(s.to_dict()).to_dict() == s.to_dict()
    # Without a tie both rules end the match.
    s = match_scenario([140, 124, 0], [3, 9, 1], ["2C", "8C", "6C"], tie_break=tie_break)
    play(s, "KNOCK")
    assert s.is_terminal() and s.winners == [A] and s.scores() == [350, 349, 25]


def test_max_rounds_truncates_without_bonuses():
    s = match_scenario([10, 0, 0], [1, 0, 0], ["2C", "8C", "6C"], earlier=1, max_rounds=2)
    play(s, "KNOCK")  # the second round of two
    assert s.is_terminal() and s.truncated and s.winners == [] and s.final is None
    assert s.scores() == [20, 0, 0]


def test_a_seeded_match_plays_rounds_to_the_target_and_the_deal_passes_left():
    rng = random.Random(2)
    s = ManipulationState(ManipulationConfig(episode="match", num_decks=1), seed=3)
    dealers = [s.dealer]
    while not s.is_terminal():
        rounds = len(s.hand_results)
        s.apply(meldy(s, rng))
        if len(s.hand_results) != rounds and not s.is_terminal():
            dealers.append(s.dealer)
    assert len(s.hand_results) >= 2 and max(s.totals) >= 150 and not s.truncated
    assert [sum(r.points[q] for r in s.hand_results) for q in range(3)] == s.totals
    assert dealers == [(dealers[0] + k) % 3 for k in range(len(dealers))]


def meldy(state: ManipulationState, rng: random.Random) -> int:
    """Random play that commits when it can and mostly places cards (uniform play would
    mostly abort its commits); shared by the env tests and the env contract."""
    legal = state.legal_actions()
    if M.COMMIT in legal and rng.random() < 0.7:
        return M.COMMIT
    placements = [a for a in legal if a >= M.PLACE]
    if placements and rng.random() < 0.9:
        return rng.choice(placements)
    return rng.choice(legal)


# -- the deal ------------------------------------------------------------------------------
@pytest.mark.parametrize("players, cards, jokers", [(2, 53, 1), (3, 106, 2), (5, 106, 2)])
def test_deal_sizes_and_decks(players, cards, jokers):
    s = ManipulationState(ManipulationConfig(num_players=players), seed=1)
    assert s.config.deck_size == cards and s.config.full_deck().count(M.JOKER) == jokers
    sizes = [len(s.hand_cards(q)) for q in range(players)]
    mover = s.current_player
    assert mover == (s.dealer + 1) % players and s.draws == 1
    assert sizes == [11 if q == mover else 10 for q in range(players)]
    assert len(s.stock) == cards - 10 * players - 1


def test_deck_and_joker_options():
    assert ManipulationConfig(num_players=2, num_decks=2).deck_size == 106
    assert ManipulationConfig(num_players=4, num_jokers=0).deck_size == 104
    assert ManipulationConfig(num_players=5, num_decks=1).deck_size == 53
    s = ManipulationState(ManipulationConfig(num_players=5, num_decks=1, num_jokers=0), seed=2)
    assert len(s.stock) == 1 and M.JOKER not in s.config.full_deck()


# -- options -------------------------------------------------------------------------------
def test_knock_timing_start_of_turn():
    s = scenario(["2C 5H 6H 7H", "AH AD", "KS QS"], knock_timing="start_of_turn", knock_limit=5)
    play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")  # 2C left: no knock at the end of the turn
    assert s.current_player == B and s.phase == Phase.TURN_START and names(s) == {"KNOCK", "DRAW"}
    assert s.draws == 0 and len(s.hand_cards(B)) == 2
    play(s, "DRAW")
    assert s.draws == 1 and len(s.hand_cards(B)) == 3 and s.phase == Phase.MELD
    s = scenario(["3C", "AH AD", "KS QS"], phase="TURN_START", current=B, draws=0, knock_timing="start_of_turn")
    play(s, "KNOCK")
    r = s.hand_results[-1]
    assert r.kind == "knock" and r.ender == B and r.winners == [B] and r.points == [0, 19, 0]


def test_knock_limit():
    assert knock(["5C 5D", "KS QS", "KH 9H"], knock_limit=10).points == [19, 0, 0]
    with pytest.raises(ValueError, match="END_OF_TURN"):
        scenario(["5C 5D", "KS QS", "KH 9H"], phase="END_OF_TURN")


@pytest.mark.parametrize("left, knock", [("5C", True), ("6C", False)])
def test_the_knock_is_offered_up_to_the_limit_exactly(left, knock):
    s = scenario([f"{left} 6H 7H 8H", "QC 2C", "9S 5D"])
    play(s, "PLACE(6H)", "PLACE(7H)", "PLACE(8H)", "COMMIT")
    assert (s.current_player == A and names(s) == {"KNOCK", "END_TURN"}) == knock
    assert s.current_player == (A if knock else B)
    value = 5 if knock else 6  # at the start of the turn, before the draw
    s = scenario(["2C 6H 7H 8H", f"AH {value - 1}D", "9S 5D"], knock_timing="start_of_turn")
    play(s, "PLACE(6H)", "PLACE(7H)", "PLACE(8H)", "COMMIT")
    assert s.current_player == B and (s.phase == Phase.TURN_START) == knock and s.draws == (0 if knock else 1)


@pytest.mark.parametrize("max_draws", [1, 2, 5])
def test_max_draws(max_draws):
    config = ManipulationConfig(max_draws=max_draws)
    s = ManipulationState(config, seed=9)
    first = s.current_player
    if max_draws == 1:  # no meld decision ever: turns pass until a knock decision or the stock-out
        assert s.phase in (Phase.END_OF_TURN, Phase.GAME_OVER) and not s.history
        while not s.is_terminal():
            play(s, "END_TURN")
        assert s.hand_results[-1].kind == "stock_out" and not s.stock
        return
    for k in range(1, max_draws):
        assert s.current_player == first and s.draws == k and M.NO_MELD in s.legal_actions()
        play(s, "NO_MELD")
    assert s.current_player != first and len(s.hand_cards(first)) == 10 + max_draws


def test_stock_out_trigger_last_card_drawn():
    for trigger in ("required_draw", "last_card_drawn"):
        s = scenario(["AC 2D", "5H 6H 7H 9S", "3S"], rest_to="table", current=B, num_decks=1,
                     knock_timing="start_of_turn", stock_out_trigger=trigger)
        assert s.stock == []
        play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")  # B drew the last card, melds, ends its turn
        if trigger == "last_card_drawn":
            r = s.hand_results[-1]
            assert s.is_terminal() and r.kind == "stock_out" and r.winners == [A, Cs]
        else:  # C may still knock at the start of its turn, before the draw that is impossible
            assert s.current_player == Cs and s.phase == Phase.TURN_START
            play(s, "DRAW")
            assert s.is_terminal() and s.hand_results[-1].kind == "stock_out"


def test_stock_out_bonus():
    s = scenario(["5C 2D", "7D", "KC QC"], rest_to="table", num_decks=1, stock_out_bonus=10)
    play(s, "NO_MELD")
    assert s.hand_results[-1].points == [23, 23, 0]


def test_joker_identity_limit():
    # One deck: 8D is on the table, so a joker declared as 8D too cannot be committed (unless
    # the limit is off) until the natural 8D has taken its place and freed it again.
    hands = ["JK 7D 9D 2C", "3C 4C", "5C 6C"]
    kept = scenario(hands, table="8S 8H 8D", num_players=3, num_decks=1, num_jokers=1)
    play(kept, "JOKER_AS(8D)", "PLACE(7D)", "PLACE(9D)")
    assert kept.table_counts()[C.parse_card("8D")] == 2 and "COMMIT" not in names(kept)
    assert ManipulationState.from_dict(kept.to_dict()).to_dict() == kept.to_dict()  # on its way: a state all the same
    play(kept, "REPLACE_FROM_TABLE(8D)", "FREED_AS(8C)", "COMMIT")
    assert melds(kept) == {"7D 8D 9D", "8C 8H 8S"} and kept.jokers_at[C.parse_card("8C")] == 1
    assert_table_legal(kept)
    free = scenario(hands, table="8S 8H 8D", num_players=3, num_decks=1, num_jokers=1, joker_identity_limit="none")
    play(free, "JOKER_AS(8D)", "PLACE(7D)", "PLACE(9D)", "COMMIT")
    assert free.table_counts()[C.parse_card("8D")] == 2 and free.jokers_at[C.parse_card("8D")] == 1
    assert_table_legal(free)


def test_bonus_options():
    assert knock(["4C", "AH 3D", "9S"], not_knocker_bonus=3).points == [0, 8, 0]
    s = scenario(["5H 6H 7H", "QC 2C", "JK 5C"], out_bonus=0)
    play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")
    assert s.hand_results[-1].points == [42, 0, 0]
    s = match_scenario([142, 90, 40], [3, 3, 1], ["2C", "8C", "6C"], game_bonus=7, round_win_bonus=1,
                       target_score=152)
    play(s, "KNOCK")
    assert s.is_terminal() and s.scores() == [152 + 7 + 4, 90 + 3, 40 + 1]
    s = match_scenario([142, 90, 40], [3, 3, 1], ["2C", "8C", "6C"], target_score=153)
    play(s, "KNOCK")
    assert not s.is_terminal()


@pytest.mark.parametrize("rule, dealer", [("left", B), ("winner", Cs), ("loser", A)])
def test_next_dealer(rule, dealer):
    s = match_scenario([0, 0, 0], [0, 0, 0], ["KC QC", "8C", "2C"], next_dealer=rule, knock_limit=20, dealer=A)
    play(s, "KNOCK")  # values 20, 8 and 2: C wins, A holds the most
    assert s.hand_results[-1].winners == [Cs] and not s.is_terminal()
    assert s.dealer == dealer and s.current_player == (dealer + 1) % 3


def test_max_table_ops_per_turn_forces_the_abort():
    s = scenario(["5H 6H 7H 9C", "2C 3D", "4H 5S"], max_table_ops_per_turn=3, stock_top="KD")
    play(s, "PLACE(5H)", "PLACE(6H)")
    assert s.in_commit and s.ops == 2
    play(s, "PLACE(7H)")  # the third placement reaches the cap: everything goes back, and A draws
    assert not s.in_commit and s.table_counts() == [0] * 52
    assert s.hand_cards(A) == sorted(C.parse("5H 6H 7H 9C KD")) and s.draws == 2


def test_voluntary_abort_counts_as_no_meld():
    s = scenario(["5H 6H 7H 9C", "2C 3D", "4H 5S"], stock_top="KD QD")
    play(s, "PLACE(5H)", "ABORT")
    assert not s.in_commit and s.draws == 2 and s.hand_cards(A) == sorted(C.parse("5H 6H 7H 9C KD"))
    assert "NO_MELD" in names(s)
    play(s, "NO_MELD")
    assert s.current_player == B


def test_hand_mode_scores_once_over():
    s = scenario(["5H 6H 7H", "QC 2C", "JK 5C"])
    assert s.scores() == [0, 0, 0]
    play(s, "PLACE(5H)", "PLACE(6H)", "PLACE(7H)", "COMMIT")
    assert s.scores() == [67, 0, 0] and s.standings() == [67, 0, 0]
    assert s.returns() == pytest.approx([67 - 67 / 3, -67 / 3, -67 / 3])


# -- validation ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, name", [
    ({"num_players": 6}, "num_players"), ({"num_players": 1}, "num_players"), ({"num_decks": 3}, "num_decks"),
    ({"num_jokers": -1}, "num_jokers"), ({"knock_timing": "never"}, "knock_timing"),
    ({"knock_limit": -1}, "knock_limit"), ({"max_draws": 0}, "max_draws"),
    ({"stock_out_trigger": "x"}, "stock_out_trigger"), ({"stock_out_bonus": -5}, "stock_out_bonus"),
    ({"joker_identity_limit": "two"}, "joker_identity_limit"), ({"out_bonus": 1.5}, "out_bonus"),
    ({"not_knocker_bonus": None}, "not_knocker_bonus"), ({"game_bonus": -1}, "game_bonus"),
    ({"target_score": 0}, "target_score"), ({"round_win_bonus": True}, "round_win_bonus"),
    ({"next_dealer": "right"}, "next_dealer"), ({"tie_break": "coin"}, "tie_break"),
    ({"max_rounds": 0}, "max_rounds"), ({"max_table_ops_per_turn": 0}, "max_table_ops_per_turn"),
    ({"episode": "tournament"}, "episode"), ({"hand_size": 7}, "hand_size"),
])
def test_bad_options_rejected(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ManipulationConfig.from_kwargs(**kwargs)


def test_bad_state_dicts_rejected():
    good = scenario(M3[0], table=M3[1], jokers=M3[2])
    play(good, "REPLACE_FROM_HAND(8D)", "PLACE(5S)")
    d = good.to_dict()
    assert ManipulationState.from_dict(d).to_dict() == d
    cases = [
        ({"hands": d["hands"][:2]}, "hands"),
        ({"stock": d["stock"][1:]}, "stock"),
        ({"phase": "DANCE"}, "phase"),
        ({"draws": 3}, "draws"),
        ({"current_player": 5}, "current_player"),
        ({"seed": "x"}, "seed"),
        ({"table_jokers": ["JK"]}, "table_jokers"),
        ({"hands": [["ZZ"], *d["hands"][1:]]}, "hands"),
        ({"commit": dict(d["commit"], ops=0)}, "ops"),
        ({"commit": dict(d["commit"], free_jokers=-1)}, "free_jokers"),
        ({"commit": dict(d["commit"], placed=["5S"])}, "placed"),
        ({"commit": dict(d["commit"], spare_naturals=["KS"])}, "spare_naturals"),
        ({"commit": None}, "commit"),
        ({"totals": [1, 2]}, "totals"),
        ({"options": {"num_players": 9}}, "num_players"),
    ]
    for change, needle in cases:
        with pytest.raises(ValueError, match=needle):
            ManipulationState.from_dict({**d, **change})
    with pytest.raises(ValueError, match="not legal"):
        scenario(["2C 9H", "3C", "4C"], table="5S 6S")
    with pytest.raises(ValueError, match="joker_identity_limit"):
        scenario(["2C", "3C"], table="8S 8H 8D 7D 9D", jokers="8D", num_players=2)


def test_match_dicts_must_agree_with_their_round_results():
    rng = random.Random(6)
    s = ManipulationState(ManipulationConfig(num_players=2, episode="match", target_score=60), seed=5)
    while not s.is_terminal():
        s.apply(meldy(s, rng))
    d = s.to_dict()
    assert len(d["hand_results"]) >= 2 and ManipulationState.from_dict(d).to_dict() == d
    result = d["hand_results"][0]
    loser = 1 - result["winners"][0]
    cases = [({"totals": [t + 1 for t in d["totals"]]}, "totals"),
             ({"rounds_won": d["rounds_won"][::-1] if d["rounds_won"][0] != d["rounds_won"][1] else [0, 0]},
              "rounds_won"),
             ({"hand_results": [dict(result, points=[p + 1 for p in result["points"]]), *d["hand_results"][1:]]},
              "points"),
             ({"hand_results": [dict(result, winners=[loser]), *d["hand_results"][1:]]}, "winners"),
             ({"round_index": d["round_index"] + 1}, "round_index")]
    for change, needle in cases:
        with pytest.raises(ValueError, match=needle):
            ManipulationState.from_dict({**d, **change})


def test_action_names():
    assert M.NUM_ACTIONS == 266
    assert M.action_to_str(M.PLACE) == "PLACE(AC)" and M.action_to_str(M.FREED_AS + 51) == "FREED_AS(KS)"
    assert M.str_to_action("replace_from_table(8d)") == M.REPLACE_FROM_TABLE + C.parse_card("8D")
    for bad in ("PLACE(JK)", "PLACE", "JOKER_AS(1Z)", "KNOCK(AS)"):
        with pytest.raises(ValueError):
            M.str_to_action(bad)


def test_a_natural_placed_in_the_commit_may_free_a_joker_later():
    """One deck: with JK(=8D) on the table, placing the hand's 8D makes two 8Ds, legal only
    once that natural frees the joker: PLACE(8D) is offered because REPLACE_FROM_TABLE(8D)
    then is (the mask never offers a dead end)."""
    s = scenario(["8D 5S 6S QC", "2C 3D"], table="7D 9D", jokers="8D", num_players=2)
    assert "PLACE(8D)" in names(s) and "REPLACE_FROM_TABLE(8D)" not in names(s)
    play(s, "PLACE(8D)")
    assert "REPLACE_FROM_TABLE(8D)" in names(s) and "COMMIT" not in names(s)
    play(s, "REPLACE_FROM_TABLE(8D)", "PLACE(5S)", "PLACE(6S)", "FREED_AS(7S)", "COMMIT")
    assert melds(s) == {"7D 8D 9D", "5S 6S 7S"}
    assert_table_legal(s)


# -- states sampled from a seat's view ---------------------------------------------------------
SAMPLE_OPTION_SETS = [  # (options, games played, samples played on to the end)
    ({"num_players": 2}, 2, 2), ({}, 2, 1), ({"num_players": 5, "episode": "match", "target_score": 30}, 1, 0),
    ({"knock_timing": "start_of_turn", "knock_limit": 12, "stock_out_trigger": "last_card_drawn"}, 2, 1),
    ({"joker_identity_limit": "none", "num_jokers": 3, "max_draws": 2, "knock_limit": 9}, 2, 0),
]


def every_card(state: ManipulationState) -> Counter:
    """Every card of a state, wherever it is (freed jokers included)."""
    found = Counter(M.cards_of(state.naturals)) + Counter(state.stock)
    found[M.JOKER] += sum(state.jokers_at) + state.free_jokers
    for q in range(state.n):
        found.update(state.hand_cards(q))
    return found


def check_sample(state: ManipulationState, p: int, rng: random.Random) -> ManipulationState:
    """A state sampled from seat ``p``'s view shows ``p`` the same view, holds every card
    once, offers ``p`` the same moves and keeps what ``p`` saw of another player to move."""
    view = state.player_view(p)
    sample = ManipulationState.sample_from_view(view, rng)
    assert sample.player_view(p) == view
    assert every_card(sample) == Counter(state.config.full_deck())
    assert sample.sizes == state.sizes and len(sample.stock) == len(state.stock)
    if state.current_player == p:
        assert sample.legal_actions() == state.legal_actions()
    elif state.limited_hands(p):
        assert sample._hands_consistent(p)
    return sample


@pytest.mark.parametrize("options, games, play_outs", SAMPLE_OPTION_SETS)
def test_states_sampled_from_a_view_show_that_view_and_play_on(options, games, play_outs):
    """At random points of random play (and at the end), for a random seat; a few samples
    are played on to the end (random play over large hands is slow: the solver's worst case)."""
    rng = random.Random(11)
    checked = played = 0
    for seed in range(games):
        state = ManipulationState(ManipulationConfig(**options), seed=seed)
        while True:
            if rng.random() < 0.15 or state.is_terminal():
                sample = check_sample(state, rng.randrange(state.n), rng)
                checked += 1
                if played < play_outs:
                    while not sample.is_terminal():
                        sample.apply(meldy(sample, rng))
                    played += 1
            if state.is_terminal():
                break
            state.apply(meldy(state, rng))
    assert checked > 10 and played == play_outs


def test_samples_keep_a_commit_and_a_knock_decision_of_another_player():
    rng = random.Random(4)
    knock = scenario(["AS 2C", "KS QS 9D", "4H 5H 8C"], phase="END_OF_TURN")
    commit = scenario(["5S 6S QC 8D 2H", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    play(commit, "REPLACE_FROM_HAND(8D)", "PLACE(5S)")
    start = scenario(["3C", "AH AD KC", "KS QS"], phase="TURN_START", draws=0, knock_timing="start_of_turn")
    for state in (knock, commit, start):
        for _ in range(10):
            check_sample(state, B, rng)


def test_cards_placed_and_taken_back_stay_known_in_that_hand():
    """PLACE then ABORT shows the placed cards to everybody: every view lists them in the
    placer's hand, both samplers keep them there (the draw after the abort adds a card the
    others do not see), and a COMMIT that lays one down makes it known no longer."""
    state = ManipulationState(ManipulationConfig(num_players=2), seed=1)
    play(state, "PLACE(9D)", "ABORT")
    nine = C.parse_card("9D")
    assert state.known[A][nine] == 1
    assert state.player_view(B).known == ((), (nine,)) and state.player_view(A).known == ((nine,), ())
    rng = random.Random(3)
    for _ in range(30):
        for sample in (state.sample_determinization(B, rng), check_sample(state, B, rng)):
            assert sample.hands[A][nine] >= 1 and sample.known == state.known
    copy = ManipulationState.from_dict(state.to_dict())
    assert copy.known == state.known and copy.player_view(B) == state.player_view(B)
    later = scenario(["9D 9H 9S 2C", "2D 3D", "4H 5S"], num_players=3, num_decks=1)
    play(later, "PLACE(9D)", "ABORT")  # then the second draw, and A melds again
    assert later.player_view(B).known[2] == (nine,) and later.phase == Phase.MELD and later.current_player == A
    play(later, "PLACE(9D)", "PLACE(9H)", "PLACE(9S)")
    assert later.player_view(B).known[2] == (nine,), "in a commit, the hand as the commit began"
    assert sampling.held_known(later.player_view(B), A) == []
    assert ManipulationState.from_dict(later.to_dict()).known == later.known, "a placed card known as it began"
    play(later, "COMMIT")
    assert later.known[A][nine] == 0


def test_a_hand_seen_against_the_knock_limit_as_its_turn_ended_stays_on_that_side():
    """Whether KNOCK is offered at the end of a turn is public: a seat that declined it holds
    a hand within knock_limit, one that was not offered it a hand above it, until it next
    draws. Both samplers keep every hand on its side (with knock_limit=20 a seat that
    declined holding 14 points used to be dealt hands worth more in about 4 samples of 10)."""
    state = scenario(["5S 9C", "KS QS 9D", "4H 5H 8C"], phase="END_OF_TURN", num_players=3, knock_limit=20)
    play(state, "END_TURN")  # seat 0 declined with 14 points; seat 1 draws: over 20, not offered
    assert state.limit_seen[A] == "within" and state.player_view(B).limit_seen == (None, None, "within")
    play(state, "NO_MELD", "NO_MELD")
    assert state.limit_seen[B] == "above" and state.limit_seen[A] == "within"
    rng = random.Random(5)
    for viewer in (1, 2):
        for _ in range(40):
            for sample in (state.sample_determinization(viewer, rng), check_sample(state, viewer, rng)):
                assert sample.hand_value(A) <= 20 and (viewer == B or sample.hand_value(B) > 20)
    copy = ManipulationState.from_dict(state.to_dict())
    assert copy.limit_seen == state.limit_seen and copy.player_view(2) == state.player_view(2)
    start = scenario(["5S 9C", "KS QS 9D"], phase="TURN_START", draws=0, knock_timing="start_of_turn", knock_limit=20,
                     num_players=2)
    play(start, "DRAW")
    assert start.limit_seen == [None, None], "a knock offered as a turn starts says nothing once the player draws"


def zone_counts(states: list[ManipulationState], p: int) -> Counter:
    """How often each card lands in each hidden zone: another seat's hand, or the stock."""
    found: Counter = Counter()
    for state in states:
        for q in range(state.n):
            if q != p:
                found.update((q, card) for card in state.hand_cards(q))
        found.update(("stock", card) for card in state.stock)
    return found


@pytest.mark.parametrize("hands, phase", [(["5H 6H 7H 9C", "2C 3D", "4H 5S"], "MELD"),
                                          (["AS 2C", "KS QS 9D", "4H 5H 8C"], "END_OF_TURN")])
def test_samples_deal_the_hidden_cards_as_determinizations_do(hands, phase):
    """Over many samples each hidden card lands in each zone about as often with
    ``sample_from_view`` as with ``sample_determinization`` (at a knock decision of the
    player to move, whose hand is then worth at most ``knock_limit``)."""
    state = scenario(hands, phase=phase, num_players=3, num_decks=1)
    rng, runs = random.Random(8), 600
    view = state.player_view(B)
    ours = zone_counts([ManipulationState.sample_from_view(view, rng) for _ in range(runs)], B)
    theirs = zone_counts([state.sample_determinization(B, rng) for _ in range(runs)], B)
    assert set(ours) <= set(theirs) | {key for key in ours if ours[key] < 40}
    for key in set(ours) | set(theirs):
        a, b = ours[key], theirs[key]
        assert abs(a - b) <= 5 * max(1.0, ((a + b) / 2) ** 0.5 * 2 ** 0.5), (key, a, b)


def test_a_value_draw_is_uniform_among_the_draws_within_its_bounds():
    pool = C.parse("AC AD 2C 3C 5H KS")  # within 4: AC AD, AC 2C, AD 2C, AC 3C, AD 3C
    rng = random.Random(3)
    for draw in (sampling.value_draw, sampling._counted_draw):
        seen = Counter(tuple(sorted(draw(pool, 2, rng, 4, 0))) for _ in range(3000))
        assert len(seen) == 5 and all(abs(k - 600) < 120 for k in seen.values()), seen
        above = Counter(tuple(sorted(draw(pool, 2, rng, None, 9))) for _ in range(3000))  # 5H KS, 3C KS, ...
        assert len(above) == 5 and all(abs(k - 600) < 120 for k in above.values()), above
    many = [card for card in range(52) for _ in range(2)]  # rejection almost never finds 5 cards within 6
    hand = sampling.value_draw(many, 5, rng, most=6)
    assert len(hand) == 5 and sum(M.CARD_VALUES[c] for c in hand) <= 6
    low = [card for card in many if M.CARD_VALUES[card] <= 2] + [51]  # only the KS makes 3 cards worth 12 or more
    assert 51 in sampling.value_draw(low, 3, rng, least=12)
    with pytest.raises(ValueError, match="inconsistent"):
        sampling._counted_draw(C.parse("KS QS"), 1, rng, 5, 0)


# -- bounds of any game (OpenSpiel's GameInfo) ----------------------------------------------
BOUND_OPTIONS = [
    {"num_players": 2},
    {"num_players": 2, "episode": "match", "target_score": 60, "max_rounds": 3, "max_draws": 2,
     "max_table_ops_per_turn": 4},
    {"num_players": 2, "knock_timing": "start_of_turn", "knock_limit": 12, "stock_out_trigger": "last_card_drawn",
     "num_jokers": 3, "joker_identity_limit": "none"},
]


@pytest.mark.parametrize("options", BOUND_OPTIONS)
def test_random_games_stay_within_the_bounds(options):
    """Every return seen at every step lies within ``utility_bounds``, and no game applies more
    actions than ``max_game_length`` (the checks of OpenSpiel's random-simulation test)."""
    check_within_bounds(ManipulationState, ManipulationConfig(**options), range(2),
                        lambda state, rng, seed: meldy(state, rng))


def against_the_rest(hand: str, phase: str = "MELD", **options) -> ManipulationState:
    """Two players: A (to move, in ``phase``) holds ``hand``, B every other card of the game,
    the stock is empty."""
    config = ManipulationConfig(num_players=2, **options)
    rest = Counter(config.full_deck()) - Counter(C.parse(hand))
    return scenario([hand, C.format(sorted(rest.elements()))], phase=phase, num_players=2, **options)


@pytest.mark.parametrize("options", [{}, {"episode": "match", "max_rounds": 1}])
def test_utility_bounds_are_reached_by_going_out_with_three_aces(options):
    """Out with AC AD AH against the other 50 cards: 365 - 3 + 25 points (with the match
    bonuses of the one round of a match: + 100 + 25)."""
    state = against_the_rest("AC AD AH", **options)
    play(state, "PLACE(AC)", "PLACE(AD)", "PLACE(AH)", "COMMIT")
    assert state.is_terminal() and state.hand_results[-1].points == [387, 0]
    assert tuple(reversed(state.returns())) == ManipulationState.utility_bounds(state.config)


def test_utility_bounds_are_reached_by_a_knock_with_an_ace():
    """Without an out bonus the most a round pays is a knock (or stock-out) with AC against
    everything else: 364 - 1."""
    state = against_the_rest("AC", phase="END_OF_TURN", out_bonus=0, not_knocker_bonus=0)
    play(state, "KNOCK")
    assert state.hand_results[-1].points == [363, 0]
    assert tuple(reversed(state.returns())) == ManipulationState.utility_bounds(state.config)


@pytest.mark.parametrize("options", [{}, {"episode": "match", "max_rounds": 3, "target_score": 10**6}])
def test_max_game_length_is_reached_with_one_draw_a_turn(options):
    """One draw a turn and a knock decision before each: every one of the 33 stock cards
    takes a DRAW, and one more DRAW meets the empty stock, in each round."""
    config = ManipulationConfig(num_players=2, max_draws=1, knock_timing="start_of_turn", knock_limit=1000, **options)
    state = ManipulationState(config, seed=1)
    while not state.is_terminal():
        play(state, "DRAW")
    assert all(r.kind == "stock_out" for r in state.hand_results)
    assert len(state.history) == ManipulationState.max_game_length(config)
