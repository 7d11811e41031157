"""Hollywood Gin: the worked examples H1-H6 (docs/hollywood_gin.md#worked-examples), the
dealer rule, sheet invariants (hypothesis), the sheet in each seat's view, states sampled
from a view alone, which keep the sheet and show that seat the same view, and the bounds of
returns and game length the engine declares (OpenSpiel's GameInfo)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from env_contract import play_out
from rummy_envs import hollywood_gin_v0
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.hollywood_gin import NUM_COLUMNS, HollywoodConfig, HollywoodState, HollywoodView, Scoresheet
from test_gin_rummy_env import check_state, knocky
from env_contract import check_within_bounds
from test_gin_rummy_rules import G3_DEFENDER, G3_KNOCKER, GIN_KNOCKER, MOST_DEADWOOD, make_deck
from test_hollywood_gin_env import EXPLICIT, HOLLYWOOD, SMALL, snapshots

A, B = 0, 1


def sheet_after(wins: list[tuple[int, int]], target: int = 100) -> Scoresheet:
    sheet = Scoresheet()
    for player, points in wins:
        sheet.record_win(player, points, target)
    return sheet


def test_h1_distribution():
    sheet = sheet_after([(A, 20), (B, 15), (A, 30), (A, 25), (B, 10)])
    assert sheet.score == [[75, 55, 25], [25, 10, 0]]
    assert sheet.entered == [[True, True, True], [True, True, False]]
    assert sheet.closed_by == [-1, -1, -1]


def test_h2_column_closes_and_a_shut_out_player_carries_over():
    sheet = sheet_after([(A, 40), (A, 30), (A, 20), (A, 15)])
    assert sheet.score[A] == [105, 65, 35] and sheet.closed_by == [A, -1, -1]
    sheet.record_win(B, 12, 100)
    assert sheet.score[B] == [0, 12, 0] and sheet.score[A] == [105, 65, 35]
    sheet.record_win(B, 18, 100)
    assert sheet.score[B] == [0, 30, 18]
    assert sheet.settle(0, HollywoodConfig()) == [410, 0]
    assert sheet.settle(0, HollywoodConfig(column_bonuses=False)) == [105, 0]
    assert sheet.settle(0, HollywoodConfig(shutout_rule="double_game_bonus")) == [105 + 200 + 100, 0]
    assert sheet.settle(0, HollywoodConfig(shutout_rule="none")) == [105 + 100 + 100, 0]


def knock_state(**options) -> HollywoodState:
    """G3's hands: the non-dealer (player 0) knocks with 1 deadwood in explicit arrangement."""
    deck = make_deck(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C")
    return HollywoodState(HollywoodConfig(**options), seed=0, deck=deck, dealer=1)


def play(state: G.GinState, *names: str) -> None:
    for name in names:
        state.apply(G.str_to_action(name))


def test_h3_undercut_at_ten():
    knocker, defender = "AS 2S 3S 4C 5C 6C 8H 8D 8C 7D", "4S KH KS KD 6D 6H 6S 2D 3D AH"
    for bonus, expected in ((None, 1 + 10), (25, 26)):
        options = {} if bonus is None else {"undercut_bonus": bonus}
        state = HollywoodState(HollywoodConfig(**options), seed=0, deck=make_deck(knocker, defender, "9S", "QC"), dealer=1)
        play(state, "PASS", "PASS", "DRAW_STOCK", "KNOCK(QC)")
        assert state.hand_results[-1].points == [0, expected]


def test_h3_scores_from_deadwood_seven_against_five():
    for options, expected in (({}, 12), ({"undercut_bonus": 25}, 27)):
        assert G.showdown_points(HollywoodConfig(**options), 7, 5, False, 1) == (False, expected)  # an undercut


def test_h4_gin_refuses_layoffs():
    knocker, defender = "AC 2C 3C 4C 5H 5S 5D 9S TS JS", "6C 7C 8C QH QD 2H 3D 8S 9H KH"
    state = HollywoodState(HollywoodConfig(), seed=0, deck=make_deck(knocker, defender, "9D", "KC"), dealer=1)
    play(state, "PASS", "PASS", "DRAW_STOCK", "KNOCK(KC)")
    result = state.hand_results[-1]
    assert result.kind == "gin" and result.layoffs == [] and result.points == [25 + 52, 0]


def test_h5_winner_deals_and_dead_hands_keep_the_dealer():
    state = knock_state(episode="match")
    play(state, "PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)")
    assert state.hand_results[-1].winner == A and state.dealer == A and state.hand_index == 1
    sheet_before, entered_before = state.match.to_dict(), [sum(r) for r in state.match.entered]
    state.stock = state.stock[-3:]  # play the hand down to a dead end
    while len(state.hand_results) == 1:
        legal = state.legal_actions()
        discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
        state.apply(discards[0] if discards else G.PASS if G.PASS in legal else G.DRAW_STOCK)
    assert state.hand_results[-1].kind == "dead"
    assert state.dealer == A and state.match.to_dict() == sheet_before
    assert [sum(r) for r in state.match.entered] == entered_before


def test_h5_alternate_dealer_option():
    state = knock_state(episode="match", next_dealer="alternate")
    play(state, "PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)")
    assert state.dealer == 0  # the dealer was 1; alternate gives 0 even though 0 won
    state = knock_state(episode="match", next_dealer="loser")
    play(state, "PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)")
    assert state.dealer == B


def test_h6_match_result():
    sheet = Scoresheet(closed_by=[A, B, A])
    assert sheet.columns_won() == [2, 1] and sheet.winner(HollywoodConfig()) == A
    sheet.score = [[305, 140, 260], [0, 330, 150]]
    no_bonus = HollywoodConfig(column_bonuses=False)
    assert sheet.scores(no_bonus) == [705, 480]
    assert sheet.winner(HollywoodConfig(match_winner_rule="total_points", column_bonuses=False)) == A
    assert sheet.scores(no_bonus)[A] - sheet.scores(no_bonus)[B] == 225


def test_match_ends_when_all_columns_close_through_the_env():
    sheet = sheet_after([(A, 90), (A, 90), (A, 90), (B, 5)])  # G1, G2 close at 180; G3 A:90 B:5
    assert sheet.closed_by == [A, A, -1] and sheet.score[B] == [0, 0, 5]
    state = knock_state(episode="match")
    state.match = sheet
    env = hollywood_gin_v0.env(episode="match", rich_info=True)
    env.reset(seed=0, options={"state": state.to_dict()})
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
        env.step(G.str_to_action(name))
    game = env.unwrapped.game
    assert game.match.closed_by == [A, A, A] and game.is_terminal()
    info = env.infos["player_0"]
    assert info["match_winner"] == A
    assert info["final_scores"] == game.match.scores(game.config)
    assert sum(info["final_scores"]) == sum(sum(col) for col in info["column_totals"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 150)), max_size=40), st.integers(1, 200))
def test_sheet_invariants(wins, target):
    sheet = Scoresheet()
    recorded = [[[] for _ in range(NUM_COLUMNS)] for _ in range(2)]
    for player, points in wins:
        closed_before = {c: [sheet.score[p][c] for p in range(2)] for c in range(NUM_COLUMNS) if not sheet.is_open(c)}
        open_before = [c for c in range(NUM_COLUMNS) if sheet.is_open(c)]
        entered_before = list(sheet.entered[player])
        sheet.record_win(player, points, target)
        for c, scores in closed_before.items():  # closed columns never change
            assert [sheet.score[p][c] for p in range(2)] == scores
        newly = [c for c in range(NUM_COLUMNS) if sheet.entered[player][c] and not entered_before[c]]
        assert len(newly) <= 1 and all(c in open_before for c in newly)
        for c in open_before:
            if sheet.entered[player][c]:
                recorded[player][c].append(points)
    for p in range(2):
        for c in range(NUM_COLUMNS):
            assert sheet.score[p][c] == sum(recorded[p][c])  # totals equal the recorded hands
            assert sheet.hands[p][c] == len(recorded[p][c])
    for c in range(NUM_COLUMNS):
        if sheet.closed_by[c] >= 0:
            assert sheet.score[sheet.closed_by[c]][c] >= target
        else:
            assert all(sheet.score[p][c] < target for p in range(2))
    assert Scoresheet.from_dict(sheet.to_dict()) == sheet


def test_bad_options_fail_by_name():
    for options, name in (({"continuous": True}, "continuous"), ({"match_winner_rule": "x"}, "match_winner_rule"),
                          ({"column_bonuses": 1}, "column_bonuses"), ({"boxes_count_toward_target": True}, "boxes_count"),
                          ({"colour": 1}, "colour")):
        with pytest.raises(ValueError, match=name):
            hollywood_gin_v0.env(**options)


def test_defaults_follow_the_spec():
    cfg = hollywood_gin_v0.raw_env().config
    assert (cfg.undercut_bonus, cfg.next_dealer, cfg.column_bonuses, cfg.match_winner_rule, cfg.target_score) == (
        10, "winner", True, "games_won", 100)


# ---------------------------------------------------------------------------------------
# The sheet in a seat's view, and states sampled from a view
# ---------------------------------------------------------------------------------------


def test_each_seat_sees_the_sheet_its_own_row_first():
    """H2's sheet (A closed G1; B has 30 in G2 and 18 in G3) from both seats."""
    state = knock_state(episode="match")
    state.match = sheet_after([(A, 40), (A, 30), (A, 20), (A, 15), (B, 12), (B, 18)])
    a, b = state.player_view(A), state.player_view(B)
    assert isinstance(a, HollywoodView) and a.rules == state.config
    assert a.column_scores == ((105, 65, 35), (0, 30, 18)) and b.column_scores == ((0, 30, 18), (105, 65, 35))
    assert a.columns_entered == ((True, True, True), (False, True, True)) == b.columns_entered[::-1]
    assert a.column_hands == ((4, 3, 2), (0, 2, 1)) == b.column_hands[::-1]
    assert a.column_winners == (0, None, None) and b.column_winners == (1, None, None)
    assert a.scores == (205, 48) and a.hands_won == (4, 2) and b.hands_won == (2, 4)
    assert Scoresheet.from_view(b) == state.match


@pytest.mark.parametrize("options", [dict(SMALL), {**SMALL, **EXPLICIT},
                                     {**SMALL, "match_winner_rule": "total_points"}])
def test_sample_from_view_keeps_the_sheet_and_plays_on(options):
    """States sampled from either seat's view, mid-match and at the match end: the same view,
    the same sheet and match score, every card once, and play goes on to the hand's end."""
    rng = random.Random(41)
    points = snapshots(options, 5, seed=9, every=0.3, per_game=4, require_sheet=True)
    for i in range(3):
        final = HollywoodState(HollywoodConfig(**options), 500 + i)
        while not final.is_terminal():
            final.apply(knocky(final, rng))
        points.append(final)
    assert any(any(w >= 0 for w in s.match.closed_by) for s in points)
    for state in points:
        for p in (A, B):
            view = state.player_view(p)
            sampled = HollywoodState.sample_from_view(view, rng)
            assert type(sampled) is HollywoodState and sampled.player_view(p) == view
            assert sampled.match == state.match and sampled.scores() == state.scores()
            assert sampled.is_terminal() == state.is_terminal() and sampled.truncated == state.truncated
            check_state(sampled)
            play_out(HOLLYWOOD, sampled, rng, f"seat {p} in {state.phase.name}")


# ---------------------------------------------------------------------------------------
# Bounds of any game: the returns and the length OpenSpiel's GameInfo declares
# ---------------------------------------------------------------------------------------

HOLLYWOOD_BOUND_SETS = {
    "hand": {},
    "match": {"episode": "match"},
    "match_no_bonuses_oklahoma": {"episode": "match", "target_score": 60, "column_bonuses": False,
                                  "variant": "oklahoma", "big_gin_bonus": 31},
    "match_explicit": {"episode": "match", "target_score": 50, **EXPLICIT, "undercut_on_tie": False,
                       "shutout_rule": "double_game_bonus", "match_winner_rule": "total_points"},
    "caps": {"episode": "match", "max_turns_per_hand": 6, "max_hands_per_match": 5, "knock_limit": 60,
             "stock_end_rule": "opponent_last_chance", "dead_stock_size": 26},
}


@pytest.mark.parametrize("name", HOLLYWOOD_BOUND_SETS)
def test_random_games_stay_within_the_declared_bounds(name):
    check_within_bounds(HollywoodState, HollywoodConfig(**HOLLYWOOD_BOUND_SETS[name]), range(8),
                        lambda state, rng, seed: knocky(state, rng), rng_seed=17)


@pytest.mark.parametrize("options, returns", [
    ({}, 61.5),  # gin's: a gin against 98 deadwood; the undercut bonus of 10 changes nothing
    ({"episode": "match"}, 3 * 1522.0),  # three columns, each settled like gin's match
    ({"episode": "match", "column_bonuses": False}, 3 * (99 + 123) / 2),
])
def test_the_declared_bounds_of_some_option_sets(options, returns):
    config = HollywoodConfig(**options)
    assert HollywoodState.utility_bounds(config) == (-returns, returns)
    assert HollywoodState.max_game_length(config) == G.GinState.max_game_length(config)


@pytest.mark.parametrize("column_bonuses, expected", [
    (True, (2 * (222 + 221 + 220) + 3 * 100 + (100 + 99 + 98) * 25) / 2),
    (False, (222 + 221 + 220) / 2),
])
def test_a_gin_closing_every_column_comes_within_one_percent_of_the_bound(column_bonuses, expected):
    """A with 99, 98 and 97 one-point wins in G1-G3, B with none, then A's gin against 98
    deadwood (123 points) closes all three columns, each a shutout."""
    config = HollywoodConfig(episode="match", column_bonuses=column_bonuses)
    state = HollywoodState(config, seed=0, deck=make_deck(GIN_KNOCKER, MOST_DEADWOOD, "4H"), dealer=1)
    state.match = Scoresheet(score=[[99, 98, 97], [0, 0, 0]], entered=[[True] * 3, [False] * 3],
                             hands=[[99, 98, 97], [0, 0, 0]], wins=[99, 0])
    state = HollywoodState.from_dict(state.to_dict())
    play(state, "TAKE_DISCARD", "KNOCK(5S)")
    assert state.is_terminal() and state.match.closed_by == [A, A, A]
    high = HollywoodState.utility_bounds(config)[1]
    assert state.returns() == [expected, -expected] and 0.99 * high <= expected <= high


def test_a_hollywood_hand_reaches_the_return_bound():
    config = HollywoodConfig()
    state = HollywoodState(config, seed=0, deck=make_deck(GIN_KNOCKER, MOST_DEADWOOD, "4H"), dealer=1)
    play(state, "TAKE_DISCARD", "KNOCK(5S)")
    assert state.is_terminal() and sorted(state.returns()) == list(HollywoodState.utility_bounds(config))
