"""The rules of gin: the worked examples G1-G6 (docs/gin_rummy.md#worked-examples) played
through the env or the engine, and the rules the examples do not reach, against tables and
the rules oracle of tests/gin_rummy_oracle.py: every Oklahoma upcard and its doubling, the
re-discard ban on knocks, the 50th card under a pile of many cards, big gin on 11 cards, the
match score's edge cases (exact target, 0-point wins, shutouts under every option, boxes
toward the target), the knock card and the turn cap; and the bounds of returns and game
length the engine declares (OpenSpiel's GameInfo), over random games and reached by
constructed ones."""

from __future__ import annotations


import pytest

from gin_rummy_oracle import oracle_stakes
from rummy_envs import IllegalActionError, gin_rummy_v0
from rummy_envs import cards as C
from rummy_envs.games import gin_rummy as G
from env_contract import check_within_bounds

ND, D = "player_0", "player_1"  # dealer=1 in every deck below, so player_0 is the non-dealer


def make_deck(nd: str, d: str, upcard: str, stock_top: str = "") -> list[int]:
    """A full deck dealing ``nd`` to the non-dealer, ``d`` to the dealer, then the upcard,
    then ``stock_top`` as the first stock cards; the rest of the stock in id order."""
    nd_cards, d_cards = C.parse(nd), C.parse(d)
    order = [c for pair in zip(nd_cards, d_cards) for c in pair] + C.parse(upcard) + C.parse(stock_top)
    return order + [c for c in range(C.NUM_CARDS) if c not in order]


def start(nd: str, d: str, upcard: str, stock_top: str = "", **options):
    env = gin_rummy_v0.env(**options)
    env.reset(seed=0, options={"deck": make_deck(nd, d, upcard, stock_top), "dealer": 1})
    return env


def act(env, text: str) -> None:
    env.step(env.unwrapped.str_to_action(text))


def legal_names(env) -> set[str]:
    mask = env.observe(env.agent_selection)["action_mask"]
    return {G.action_to_str(a) for a in mask.nonzero()[0]}


def pass_both_and_draw(env) -> None:
    act(env, "PASS")
    act(env, "PASS")
    act(env, "DRAW_STOCK")


G1_HAND = "AC 2C 3C 4D 5D 6D 7H 8H 9H TS"
FILLER = "2S 3D 5C 7C 8C JC QH KH KS QS"


# -- G1 --------------------------------------------------------------------------------------
def test_g1_deadwood_and_knock_limit():
    assert G.deadwood(G1_HAND) == 10
    env = start(G1_HAND, FILLER, "KC", stock_top="KD")
    pass_both_and_draw(env)
    assert "KNOCK(KD)" in legal_names(env)


@pytest.mark.parametrize("upcard", ["9C", "AD"])
def test_g1_oklahoma_limit_blocks_the_knock(upcard):
    env = start(G1_HAND, FILLER, upcard, stock_top="KD", variant="oklahoma")
    assert env.unwrapped.game.knock_limit == (9 if upcard == "9C" else 0)
    pass_both_and_draw(env)
    assert not any(name.startswith("KNOCK") for name in legal_names(env))
    with pytest.raises(IllegalActionError, match="KNOCK"):
        act(env, "KNOCK(KD)")


def test_oklahoma_ace_upcard_limit_one_when_not_gin_only():
    env = start(G1_HAND, FILLER, "AD", variant="oklahoma", oklahoma_ace_gin_only=False)
    assert env.unwrapped.game.knock_limit == 1


# -- G2 --------------------------------------------------------------------------------------
def test_g2_overlapping_cards():
    assert G.deadwood("7S 7H 7D 8D 9D KC QC 2S 3H 4C") == 43
    assert G.deadwood("QC KC AC") == 21
    melds, dead = G.best_arrangement("7S 7H 7D 8D 9D KC QC 2S 3H 4C")
    assert dead == 43 and melds == [C.parse("7D 8D 9D")]


# -- G3 --------------------------------------------------------------------------------------
G3_KNOCKER = "2H 3H 4H 9S 9C 9D JD QD KD AS"
G3_DEFENDER = "5H 6H 9H TC TH TD AD AC 2C 7S"


def declare_g3_knocker_melds(env) -> None:
    for meld in ("2H 3H 4H", "9S 9C 9D", "JD QD KD"):
        act(env, f"MELD({meld})")
    act(env, "DONE")


def test_g3_knock_with_chained_layoffs():
    env = start(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C", knocker_arrangement="explicit", rich_info=True)
    pass_both_and_draw(env)
    act(env, "KNOCK(8C)")
    assert env.unwrapped.game.phase == G.Phase.KNOCKER_MELD and env.agent_selection == ND
    declare_g3_knocker_melds(env)
    result = env.unwrapped.game.hand_results[-1]
    assert result.kind == "knock" and result.winner == 0
    assert result.points == [10, 0]
    assert result.deadwood == [1, 11]
    assert sorted(C.format(m) for m in result.knocker_melds) == ["2H 3H 4H", "9C 9D 9S", "JD QD KD"]
    assert {C.format_card(card) for card, _ in result.layoffs} == {"5H", "6H", "9H"}
    assert env.rewards[ND] == 5.0 and env.rewards[D] == -5.0
    assert env.infos[ND]["hand_result"]["points"] == [10, 0]
    assert all(env.terminations.values())


def test_g3_auto_best_keeps_the_hearts_unmelded():
    """auto_best looks ahead: leaving 2H 3H 4H as deadwood (K = 10) blocks 5H 6H, so the
    defender keeps 22 and the knocker scores 12 instead of 10."""
    env = start(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C")
    pass_both_and_draw(env)
    act(env, "KNOCK(8C)")
    result = env.unwrapped.game.hand_results[-1]
    assert result.points == [12, 0] and result.deadwood == [10, 22]
    assert sorted(C.format(m) for m in result.knocker_melds) == ["9C 9D 9S", "JD QD KD"]


def test_g3_explicit_layoffs_through_actions():
    env = start(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C", layoff_mode="explicit", knocker_arrangement="explicit")
    pass_both_and_draw(env)
    act(env, "KNOCK(8C)")
    declare_g3_knocker_melds(env)
    game = env.unwrapped.game
    assert game.phase == G.Phase.DEFENDER_MELD and env.agent_selection == D
    slots = {C.format(C.from_mask(m)): i for i, m in enumerate(game.knocker_melds)}
    hearts, nines = slots["2H 3H 4H"], slots["9C 9D 9S"]
    act(env, "MELD(TC TH TD)")
    act(env, "DONE")
    assert game.phase == G.Phase.LAYOFF
    assert f"LAYOFF(6H,{hearts})" not in legal_names(env)  # 6H only after 5H
    act(env, f"LAYOFF(5H,{hearts})")
    act(env, f"LAYOFF(6H,{hearts})")
    act(env, f"LAYOFF(9H,{nines})")
    act(env, "DONE")
    assert game.hand_results[-1].points == [10, 0]
    assert game.hand_results[-1].deadwood == [1, 11]


def test_g3_moving_td_to_the_diamond_run_is_worse():
    dead, own, layoffs = G.best_layoffs(G3_DEFENDER, ["2H 3H 4H", "9S 9C 9D", "JD QD KD"])
    assert dead == 11 and own == [C.parse("TC TD TH")]
    assert C.parse("TD")[0] not in [card for card, _ in layoffs]


# -- G4 --------------------------------------------------------------------------------------
G4_KNOCKER = "AS 2S 3S 4C 5C 6C 8H 8D 8C 7D"
G4_DEFENDER = "4S KH KS KD 6D 6H 6S 2D 3D AH"


@pytest.mark.parametrize("bonus, expected", [(25, 26), (10, 11)])
def test_g4_undercut(bonus, expected):
    env = start(G4_KNOCKER, G4_DEFENDER, "9S", stock_top="QC", undercut_bonus=bonus)
    pass_both_and_draw(env)
    act(env, "KNOCK(QC)")
    result = env.unwrapped.game.hand_results[-1]
    assert result.kind == "undercut" and result.winner == 1
    assert result.points == [0, expected]
    assert result.deadwood == [7, 6]
    assert [C.format_card(c) for c, _ in result.layoffs] == ["4S"]


@pytest.mark.parametrize("on_tie, winner, points", [(True, 1, [0, 25]), (False, 0, [0, 0])])
def test_g4_equal_counts(on_tie, winner, points):
    env = start(G4_KNOCKER, "4S KH KS KD 6D 6H 6S 2D 3D 2H", "9S", stock_top="QC", undercut_on_tie=on_tie)
    pass_both_and_draw(env)
    act(env, "KNOCK(QC)")
    result = env.unwrapped.game.hand_results[-1]
    assert result.deadwood == [7, 7]
    assert result.winner == winner and result.points == points


# -- G5 --------------------------------------------------------------------------------------
G5_KNOCKER = "AC 2C 3C 4C 5H 5S 5D 9S TS JS"
G5_DEFENDER = "6C 7C 8C QH QD 2H 3D 8S 9H KH"


def test_g5_gin_blocks_layoffs():
    env = start(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="KC")
    pass_both_and_draw(env)
    act(env, "KNOCK(KC)")
    result = env.unwrapped.game.hand_results[-1]
    assert result.kind == "gin"
    assert result.points == [77, 0]
    assert result.deadwood == [0, 52]
    assert result.layoffs == []


def test_g5_explicit_defender_gets_no_layoff_phase():
    env = start(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="KC", layoff_mode="explicit")
    pass_both_and_draw(env)
    act(env, "KNOCK(KC)")
    act(env, "MELD(6C 7C 8C)")
    act(env, "DONE")
    assert env.unwrapped.game.hand_results[-1].points == [77, 0]


def test_big_gin_scores_the_big_gin_bonus():
    env = start(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="KS", big_gin_bonus=31)
    pass_both_and_draw(env)  # KS does not join 9S TS JS
    assert "BIG_GIN" not in legal_names(env)
    env = start(G5_KNOCKER, G5_DEFENDER, "9D", stock_top="QS", big_gin_bonus=31)
    pass_both_and_draw(env)
    assert "BIG_GIN" in legal_names(env)
    act(env, "BIG_GIN")
    result = env.unwrapped.game.hand_results[-1]
    assert result.kind == "big_gin" and result.points == [31 + 52, 0]


# -- G6 --------------------------------------------------------------------------------------
def test_g6a_opening_offer():
    env = start(G1_HAND, FILLER, "7S")
    assert legal_names(env) == {"TAKE_DISCARD", "PASS"} and env.agent_selection == ND
    act(env, "PASS")
    assert legal_names(env) == {"TAKE_DISCARD", "PASS"} and env.agent_selection == D
    act(env, "PASS")
    assert legal_names(env) == {"DRAW_STOCK"} and env.agent_selection == ND


def test_g6a_taken_upcard_cannot_be_rediscarded():
    env = start(G1_HAND, FILLER, "7S")
    act(env, "TAKE_UPCARD")
    assert "DISCARD(7S)" not in legal_names(env)
    before = env.unwrapped.game.to_dict()
    with pytest.raises(IllegalActionError, match=r"DISCARD\(7S\).*player_0.*DISCARD"):
        act(env, "DISCARD(7S)")
    assert env.unwrapped.game.to_dict() == before
    allowed = start(G1_HAND, FILLER, "7S", allow_rediscard_taken_card=True)
    act(allowed, "TAKE_UPCARD")
    assert "DISCARD(7S)" in legal_names(allowed)


def _draw_leaving_two(**options) -> G.GinState:
    """Both pass the upcard with 3 cards in the stock; the non-dealer draws, leaving 2."""
    deck = make_deck(G3_KNOCKER, G3_DEFENDER, "8S", stock_top="8C")
    state = G.GinState(G.GinConfig(**options), seed=0, deck=deck, dealer=1)
    state.apply(G.PASS)
    state.apply(G.PASS)
    while len(state.stock) > 3:  # move the bottom of the stock under the pile
        state.pile.insert(0, state.stock.pop(0))
    state.apply(G.DRAW_STOCK)
    assert len(state.stock) == 2
    return state


def test_g6b_dead_hand_after_the_discard_leaving_two():
    state = _draw_leaving_two(episode="match")
    dealer = state.dealer
    state.apply(G.str_to_action("DISCARD(8C)"))
    result = state.hand_results[-1]
    assert result.kind == "dead" and result.points == [0, 0] and result.winner == -1
    assert state.match.totals == [0, 0] and state.match.wins == [0, 0]
    assert state.dealer == dealer and state.hand_index == 1


def test_g6b_knock_instead_is_scored():
    state = _draw_leaving_two()
    state.apply(G.str_to_action("KNOCK(8C)"))
    assert state.hand_results[-1].kind == "knock" and state.hand_results[-1].points == [12, 0]  # as G3 auto_best


def test_g6b_fifty_card_rule_gives_the_opponent_a_last_chance():
    state = _draw_leaving_two(stock_end_rule="opponent_last_chance")
    state.apply(G.str_to_action("DISCARD(8C)"))
    assert state.phase == G.Phase.LAST_CHANCE and state.current_player == 1
    assert state.legal_actions() == [G.PASS]  # 8C gives the dealer no knock
    state.apply(G.PASS)
    assert state.hand_results[-1].kind == "dead"


def test_fifty_card_rule_take_and_knock_in_one_action():
    knocker = "2H 3H 4H 9S 9C 9D JD QD KD 5S"  # with AS: knock 5S, deadwood 1
    state = G.GinState(G.GinConfig(stock_end_rule="opponent_last_chance"), seed=0,
                       deck=make_deck(G3_DEFENDER, knocker, "8S", stock_top="AS"), dealer=1)
    state.apply(G.PASS)
    state.apply(G.PASS)
    while len(state.stock) > 3:
        state.pile.insert(0, state.stock.pop(0))
    state.apply(G.DRAW_STOCK)  # the non-dealer draws AS and throws it: the dealer's 50th card
    state.apply(G.str_to_action("DISCARD(AS)"))
    assert state.phase == G.Phase.LAST_CHANCE
    # taking AS is only allowed together with a knock; AS itself may not be the knock card
    assert state.legal_actions() == sorted([G.PASS, G.str_to_action("KNOCK(5S)")])
    state.apply(G.str_to_action("KNOCK(5S)"))
    result = state.hand_results[-1]
    assert result.knocker == 1 and result.winner == 1 and result.points == [0, 12]  # as G3: hearts kept back
    assert C.parse("AS")[0] in result.hands[1]


def test_g6c_match_end_bonuses():
    cfg = G.GinConfig(episode="match")
    match = G.StandardMatch([95, 40], [4, 2])
    match.record(cfg, G.HandResult("knock", winner=0, points=[12, 0]))
    assert match.totals == [107, 40] and match.winner == 0
    assert match.final_scores(cfg) == [332, 90]
    shutout = G.StandardMatch([95, 0], [4, 0])
    shutout.record(cfg, G.HandResult("knock", winner=0, points=[12, 0]))
    assert shutout.final_scores(cfg) == [439, 0]
    double_game = G.GinConfig(episode="match", shutout_rule="double_game_bonus")
    assert shutout.final_scores(double_game) == [107 + 200 + 125, 0]
    assert shutout.final_scores(G.GinConfig(episode="match", shutout_rule="none")) == [107 + 100 + 125, 0]


OKLAHOMA_EXPLICIT = {"variant": "oklahoma", "layoff_mode": "explicit"}


@pytest.mark.parametrize(("options", "most"), [({}, 123), (OKLAHOMA_EXPLICIT, 250),
                                               ({**OKLAHOMA_EXPLICIT, "boxes_count_toward_target": True}, 275)])
def test_a_match_won_by_the_largest_hand_past_the_target_is_a_match_the_rules_reach(options, most):
    """The winner's total may reach the target less one plus the most one won hand adds: a
    gin on 98 of meldless deadwood (123), Oklahoma's spade double of an explicit-layoff gin on
    ten 10s (2 x (100 + 25) = 250), and 275 when the box counts toward the target; a point
    more is refused."""
    cfg = G.GinConfig(episode="match", **options)
    box = cfg.box_bonus if cfg.boxes_count_toward_target else 0
    match = G.StandardMatch([cfg.target_score - 1, 0], [1, 0])
    match.record(cfg, G.HandResult("gin", winner=0, points=[most - box, 0]))
    assert match.totals[0] == cfg.target_score - 1 + most and match.winner == 0
    assert match.problem(cfg) == ""
    match.totals[0] += 1
    assert "past what one hand" in match.problem(cfg)


def test_g6c_match_end_through_the_env():
    knocker = "2H 3H 4H 9S 9C 9D JD QD KD AS"
    defender = "TC TH TD JC JH JS 2C 3S 4D 4S"  # 13 deadwood, nothing to lay off
    state = G.GinState(G.GinConfig(episode="match"), seed=0, deck=make_deck(knocker, defender, "8S", "8C"), dealer=1)
    data = state.to_dict()
    data["match"] = {"totals": [95, 40], "wins": [4, 2], "winner": -1}
    env = gin_rummy_v0.env(episode="match", rich_info=True)
    env.reset(seed=0, options={"state": data})
    pass_both_and_draw(env)
    act(env, "KNOCK(8C)")
    game = env.unwrapped.game
    assert game.is_terminal() and game.scores() == [332, 90]
    # hand +12 and bonuses (+225 vs +50) in one step, centred: (237 - 50) / 2
    assert env.rewards[ND] == 93.5 and env.rewards[D] == -93.5
    assert env.infos[ND]["final_scores"] == [332, 90]


def test_g6d_oklahoma_spade_doubles():
    knocker = "2H 3H 4H 9S 9C 9D JD QD KD AS"
    defender = "TC TH TD JC JH JS 2C 3S 4D AC"  # 10 deadwood
    env = start(knocker, defender, "7S", stock_top="8C", variant="oklahoma")
    assert env.unwrapped.game.knock_limit == 7
    pass_both_and_draw(env)
    act(env, "KNOCK(8C)")
    assert env.unwrapped.game.hand_results[-1].points == [18, 0]


def test_next_dealer_rules():
    for rule, expected in (("alternate", 0), ("winner", 0), ("loser", 1)):
        state = G.GinState(G.GinConfig(episode="match", next_dealer=rule), seed=0,
                           deck=make_deck(G3_KNOCKER, G3_DEFENDER, "8S", "8C"), dealer=1)
        for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
            state.apply(G.str_to_action(name))
        assert state.hand_index == 1 and state.dealer == expected, rule


# ---------------------------------------------------------------------------------------
# Oklahoma: every upcard rank, doubled scores (docs/gin_rummy.md#oklahoma)


@pytest.mark.parametrize("ace_gin_only", [True, False])
@pytest.mark.parametrize("spade_double", [True, False])
def test_oklahoma_every_upcard_sets_limit_and_multiplier(ace_gin_only, spade_double):
    cfg = G.GinConfig(variant="oklahoma", oklahoma_ace_gin_only=ace_gin_only, oklahoma_spade_double=spade_double)
    for upcard in range(C.NUM_CARDS):
        deck = [c for c in range(C.NUM_CARDS) if c != upcard]
        deck.insert(20, upcard)
        state = G.GinState(cfg, seed=0, deck=deck, dealer=0)
        assert (state.knock_limit, state.multiplier) == oracle_stakes(cfg, upcard), C.format_card(upcard)
        expected_limit = {0: 0 if ace_gin_only else 1, 9: 10, 10: 10, 11: 10, 12: 10}.get(upcard % 13, upcard % 13 + 1)
        assert state.knock_limit == expected_limit


@pytest.mark.parametrize("knocker, defender, upcard, spade_double, expected", [
    (G4_KNOCKER, G4_DEFENDER, "7S", True, [0, 52]),  # undercut 1 + 25, doubled
    (G4_KNOCKER, G4_DEFENDER, "7S", False, [0, 26]),
    (G4_KNOCKER, G4_DEFENDER, "7C", True, [0, 26]),
    (G5_KNOCKER, G5_DEFENDER, "KS", True, [154, 0]),  # gin 25 + 52, doubled
    (G5_KNOCKER, G5_DEFENDER, "AS", True, [154, 0]),  # an ace upcard: gin only, still doubled
])
def test_oklahoma_spade_upcard_doubles_every_score(knocker, defender, upcard, spade_double, expected):
    state = G.GinState(G.GinConfig(variant="oklahoma", oklahoma_spade_double=spade_double), seed=0,
                       deck=make_deck(knocker, defender, upcard, "QC"), dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(QC)"):
        state.apply(G.str_to_action(name))
    assert state.hand_results[-1].points == expected


@pytest.mark.parametrize("upcard, knockable", [("5D", False), ("7C", True), ("JH", True), ("AC", False)])
def test_oklahoma_upcard_limit_decides_the_knock(upcard, knockable):
    """G4's knocker has 7 after discarding QC: legal from a 7 upcard up, not at 5 or an ace."""
    state = G.GinState(G.GinConfig(variant="oklahoma"), seed=0, deck=make_deck(G4_KNOCKER, G4_DEFENDER, upcard, "QC"),
                       dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    assert (G.str_to_action("KNOCK(QC)") in state.legal_actions()) == knockable


# ---------------------------------------------------------------------------------------
# Fixed legal-action scenarios: the re-discard ban on knocks, the 50th card, big gin


def test_knock_with_the_card_just_taken_is_illegal():
    """The non-dealer takes the upcard KD that completes nothing: discarding or knocking with
    it is banned that turn, every other knock stays legal."""
    hand = "AC 2C 3C 4D 5D 6D 7H 8H 9H TS"
    state = G.GinState(G.GinConfig(), seed=0, deck=make_deck(hand, "2S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    state.apply(G.TAKE_DISCARD)
    legal = state.legal_actions()
    kd = C.parse_card("KD")
    assert G.DISCARD + kd not in legal and G.KNOCK + kd not in legal
    assert G.KNOCK + C.parse_card("TS") in legal
    allowed = G.GinState(G.GinConfig(allow_rediscard_taken_card=True), seed=0,
                         deck=make_deck(hand, "2S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    allowed.apply(G.TAKE_DISCARD)
    assert G.KNOCK + kd in allowed.legal_actions()


def last_chance_state(hand: str, pile: str, **options) -> G.GinState:
    """A LAST_CHANCE decision of seat 1 with ``hand`` and a discard pile of several cards
    (its top last), the stock down to two cards."""
    others = [c for c in range(C.NUM_CARDS) if c not in C.parse(hand) + C.parse(pile)]
    data = {"hands": [C.format(others[:10]).split(), hand.split()], "discard_pile": pile.split(),
            "stock": C.format(others[10:12]).split(), "phase": "LAST_CHANCE", "current_player": 1, "dealer": 1,
            "upcard": pile.split()[0], "turns": 10, "options": {"stock_end_rule": "opponent_last_chance", **options}}
    data["knock_card"] = None
    rest = others[12:]
    data["discard_pile"] = C.format(rest).split() + pile.split()  # every card in one place
    data["upcard"] = C.format_card(rest[0])
    return G.GinState.from_dict(data)


def test_fifty_card_chance_takes_the_top_of_a_long_pile():
    """The 50th card is the top of the pile, not its bottom: with 9S on top the 10-card hand
    knocks (deadwood 1 after AS), with any card under it only."""
    state = last_chance_state("2H 3H 4H 9C 9D JD QD KD AS 5S", "7C 9S")
    legal = state.legal_actions()
    assert G.str_to_action("KNOCK(5S)") in legal
    assert G.str_to_action("KNOCK(9S)") not in legal  # the 50th card itself is not the knock card
    assert G.BIG_GIN not in legal
    state.apply(G.str_to_action("KNOCK(5S)"))
    assert C.parse_card("9S") in state.hand_results[-1].hands[1]


def test_fifty_card_big_gin_is_judged_on_eleven_cards():
    """Big gin at the 50th card needs all 11 cards (hand + top) melded: not offered to a
    10-card gin hand whose 11th card is loose, offered when the top card completes a hand."""
    loose = last_chance_state("2H 3H 4H 5H 9C 9D 9H JD QD KD", "TD 7C", big_gin_bonus=31)
    assert G.BIG_GIN not in loose.legal_actions()
    # with 7C, knocking 2H or 5H leaves 7; 7C itself may not be the knock card
    assert loose.legal_actions() == sorted([G.PASS, G.str_to_action("KNOCK(2H)"), G.str_to_action("KNOCK(5H)")])
    completes = last_chance_state("2H 3H 4H 5H 9C 9D 9H 9S JD QD", "7C KD", big_gin_bonus=31)
    assert G.BIG_GIN in completes.legal_actions()
    completes.apply(G.BIG_GIN)
    result = completes.hand_results[-1]
    assert result.kind == "big_gin" and result.winner == 1 and C.parse_card("KD") in result.hands[1]


# ---------------------------------------------------------------------------------------
# Match scoring edge tables


def match_after(results: list[tuple[int, int]], **options) -> tuple[G.StandardMatch, G.GinConfig]:
    """A match score after hands won, each ``(winner, points)``."""
    cfg = G.GinConfig(episode="match", **options)
    match = G.StandardMatch()
    for winner, points in results:
        hand_points = [0, 0]
        hand_points[winner] = points
        match.record(cfg, G.HandResult("knock", winner=winner, points=hand_points, knocker=winner))
    return match, cfg


@pytest.mark.parametrize("results, options, winner, final", [
    # exactly the target ends the match
    ([(0, 60), (0, 40)], {}, 0, [2 * 100 + 100 + 50, 0]),
    ([(0, 60), (0, 39)], {}, -1, [99, 0]),
    # a 0-point win is a hand won: no shutout
    ([(1, 0), (0, 100)], {}, 0, [100 + 100 + 25, 0 + 25]),
    ([(1, 0), (0, 100)], {"shutout_rule": "double_game_bonus"}, 0, [100 + 100 + 25, 25]),
    # shutouts under every rule
    ([(0, 70), (0, 30)], {}, 0, [2 * 100 + 100 + 50, 0]),
    ([(0, 70), (0, 30)], {"shutout_rule": "double_game_bonus"}, 0, [100 + 200 + 50, 0]),
    ([(0, 70), (0, 30)], {"shutout_rule": "none"}, 0, [100 + 100 + 50, 0]),
    # boxes toward the target: credited at once, not again at the end, not doubled by a shutout
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True}, 0, [2 * 75 + 50 + 100, 0]),
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True, "shutout_rule": "none"}, 0, [125 + 100, 0]),
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True, "shutout_rule": "double_game_bonus"}, 0,
     [125 + 200, 0]),
    ([(1, 10), (0, 70), (0, 5)], {"boxes_count_toward_target": True}, 0, [125 + 100, 35]),
    ([(0, 40), (0, 9)], {"boxes_count_toward_target": True}, -1, [99, 0]),
    # other bonuses
    ([(1, 30), (0, 120)], {"game_bonus": 7, "box_bonus": 3}, 0, [120 + 7 + 3, 30 + 3]),
    ([(1, 30), (1, 80)], {"target_score": 110}, 1, [0, 2 * 110 + 100 + 50]),
])
def test_match_scoring_table(results, options, winner, final):
    match, cfg = match_after(results, **options)
    assert match.winner == winner and match.is_over() == (winner >= 0)
    assert match.final_scores(cfg) == final
    assert match.scores(cfg) == final and match.standings(cfg) == final


def test_match_winner_through_the_engine_at_exactly_the_target():
    """A G3 knock worth 12 brings 88 to exactly 100: the match ends with the bonuses."""
    state = G.GinState(G.GinConfig(episode="match"), seed=0,
                       deck=make_deck("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C"),
                       dealer=1)
    data = state.to_dict()
    data["match"] = {"totals": [88, 0], "wins": [3, 0], "winner": -1}
    state = G.GinState.from_dict(data)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
        state.apply(G.str_to_action(name))
    assert state.is_terminal() and state.match.winner == 0
    assert state.scores() == [2 * 100 + 100 + 4 * 25, 0]


# ---------------------------------------------------------------------------------------
# The knock card


@pytest.mark.parametrize("options", [{}, {"knocker_arrangement": "explicit", "layoff_mode": "explicit"}])
def test_knocking_a_card_taken_earlier_forgets_it(options):
    """The non-dealer takes the upcard KD (known to the dealer), and two turns later knocks
    with it: face down, it is no longer a known card of that hand."""
    state = G.GinState(G.GinConfig(**options), seed=0, dealer=1,
                       deck=make_deck("AC 2C 3C 4D 5D 6D 7H 8H 9H TS", "2S 3D 5C 7C 8C JC QH KH KS QS", "KD", "JD 9S"))
    for name in ("TAKE_DISCARD", "DISCARD(TS)", "DRAW_STOCK", "DISCARD(JD)", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    assert state.known[0] == 1 << C.parse_card("KD") and state.player_view(1).opponent_known == (C.parse_card("KD"),)
    state.apply(G.str_to_action("KNOCK(KD)"))
    assert state.knock_card == C.parse_card("KD")
    assert state.known[0] == 0 and state.player_view(1).opponent_known == ()


def test_a_knock_with_the_ace_of_clubs_reads_back():
    """Card 0 as the knock card: the state dict keeps it (a falsy id is still a card)."""
    state = G.GinState(G.GinConfig(), seed=0, dealer=1,
                       deck=make_deck("2C 3C 4C 4D 5D 6D 7H 8H 9H TS", "2S 3D 5C 7C 8C JC QH KH KS QS", "KD", "AC"))
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(AC)"):
        state.apply(G.str_to_action(name))
    data = state.to_dict()
    assert data["knock_card"] == "AC"
    assert G.GinState.from_dict(data).to_dict() == data


@pytest.mark.parametrize("action", ["DISCARD(AC)", "DISCARD(KS)", "KNOCK(KS)"])
def test_the_first_and_last_card_ids_are_played(action):
    """AC and KS (ids 0 and 51) at the edges of the DISCARD and KNOCK action ranges."""
    state = G.GinState(G.GinConfig(), seed=0, dealer=1,
                       deck=make_deck("AC 2D 3D 4D 5H 6H 7H 8C 8D 8S", "2S 3S 5C 7C 9C JC QH KH TS QS", "KD", "KS"))
    for name in ("PASS", "PASS", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    card = C.parse_card(action[-3:-1])
    state.apply(G.str_to_action(action))
    assert not state.hands[0] >> card & 1
    if action.startswith("DISCARD"):
        assert state.pile[-1] == card and state.phase == G.Phase.DRAW and state.current_player == 1
    else:
        assert state.knock_card == card and state.hand_results[-1].knocker == 0


@pytest.mark.parametrize("cap", [1, 3])
def test_the_turn_cap_counts_each_plain_discard_once(cap):
    """The hand ends after max_turns_per_hand turns, a turn being one plain discard
    (docs/gin_rummy.md#how-a-hand-ends): not before the cap-th discard, at it."""
    state = G.GinState(G.GinConfig(max_turns_per_hand=cap), seed=5)
    state.apply(G.PASS)
    state.apply(G.PASS)
    for turn in range(1, cap + 1):
        assert not state.is_terminal() and state.turns == turn - 1
        state.apply(G.DRAW_STOCK)
        state.apply(next(a for a in state.legal_actions() if G.DISCARD <= a < G.KNOCK))
    assert state.is_terminal() and state.turns == cap and state.hand_results[-1].kind == "turn_cap"
    assert state.truncated


# ---------------------------------------------------------------------------------------
# Bounds of any game: the returns and the length OpenSpiel's GameInfo declares

BOUND_RULE_SETS = {
    "default": {},
    "oklahoma_big_gin": {"variant": "oklahoma", "big_gin_bonus": 31},
    "explicit_last_chance": {"knocker_arrangement": "explicit", "layoff_mode": "explicit", "knock_limit": 30,
                             "stock_end_rule": "opponent_last_chance", "allow_rediscard_taken_card": True},
    "match": {"episode": "match"},
    "match_oklahoma_explicit": {"episode": "match", "target_score": 60, "variant": "oklahoma", "big_gin_bonus": 31,
                                "knocker_arrangement": "explicit", "layoff_mode": "explicit",
                                "boxes_count_toward_target": True, "shutout_rule": "double_game_bonus"},
    "match_zero_point_wins": {"episode": "match", "target_score": 40, "undercut_on_tie": False, "gin_bonus": 0,
                              "undercut_bonus": 0, "shutout_rule": "none", "next_dealer": "loser"},
    "caps_explicit": {"episode": "match", "max_turns_per_hand": 6, "max_hands_per_match": 4, "knock_limit": 60,
                      "knocker_arrangement": "explicit", "layoff_mode": "explicit", "dead_stock_size": 26,
                      "stock_end_rule": "opponent_last_chance"},
}


@pytest.mark.parametrize("name", BOUND_RULE_SETS)
def test_random_games_stay_within_the_declared_bounds(name):
    from test_gin_rummy_env import knocky  # that module imports this one

    check_within_bounds(G.GinState, G.GinConfig(**BOUND_RULE_SETS[name]), range(8),
                        lambda state, rng, seed: knocky(state, rng), rng_seed=17)


@pytest.mark.parametrize("options, returns, length", [
    ({}, 61.5, 403),  # gin 25 against 98 deadwood, halved; 2 x 200 turns + 3
    ({"layoff_mode": "explicit", "knocker_arrangement": "explicit", "variant": "oklahoma"}, 125.0, 419),
    ({"knock_limit": 99}, 62.0, 403),  # an undercut of a 99 knock by 25
    ({"episode": "match"}, 1522.0, 200 * 403),  # 2 x (99 + 123) + 100 + 100 boxes of 25, halved
    ({"episode": "match", "undercut_on_tie": False}, 2772.0, 200 * 403),  # 0-point wins: 200 boxes
    ({"episode": "match", "boxes_count_toward_target": True, "shutout_rule": "none"}, 173.5, 200 * 403),
])
def test_the_declared_bounds_of_some_option_sets(options, returns, length):
    config = G.GinConfig(**options)
    assert G.GinState.utility_bounds(config) == (-returns, returns)
    assert G.GinState.max_game_length(config) == length


GIN_KNOCKER = "AC 2C 3C AD 2D 3D AH 2H 3H 5S"  # takes the 4H upcard, knocks 5S: gin
MOST_DEADWOOD = "TC QC TD QD JH KH JS KS 9C 9D"  # 98, no meld: the most ten cards keep
TEN_FACE_CARDS = "KC KD KH KS QC QD QH QS JC JD"  # 100 if the defender melds nothing


@pytest.mark.parametrize("options, knocker, defender, upcard, moves", [
    ({}, GIN_KNOCKER, MOST_DEADWOOD, "4H", ["TAKE_DISCARD", "KNOCK(5S)"]),
    ({"variant": "oklahoma"}, "AC 2C 3C AD 2D 3D AS 2S 3S 5H", MOST_DEADWOOD, "4S", ["TAKE_DISCARD", "KNOCK(5H)"]),
    ({"big_gin_bonus": 31}, "AC 2C 3C AD 2D 3D AH 2H 3H 5H", MOST_DEADWOOD, "4H", ["TAKE_DISCARD", "BIG_GIN"]),
    ({"layoff_mode": "explicit"}, GIN_KNOCKER, TEN_FACE_CARDS, "4H", ["TAKE_DISCARD", "KNOCK(5S)", "DONE"]),
    ({"knock_limit": 99, "knocker_arrangement": "explicit"}, "KC KD KH QC QD QH JC JD JH 2S",
     "AD 2D 3D 4D 5D AH 2H 3H 4H 5H", "9C", ["TAKE_DISCARD", "KNOCK(2S)", "DONE"]),  # K = 99, undercut
])
def test_a_constructed_hand_reaches_the_return_bound(options, knocker, defender, upcard, moves):
    config = G.GinConfig(**options)
    state = G.GinState(config, seed=0, deck=make_deck(knocker, defender, upcard), dealer=1)
    for name in moves:
        state.apply(G.str_to_action(name))
    assert state.is_terminal()
    assert sorted(state.returns()) == list(G.GinState.utility_bounds(config))


@pytest.mark.parametrize("options, wins", [({}, 99), ({"undercut_on_tie": False}, 199)])
def test_a_shutout_match_reaches_the_return_bound(options, wins):
    """``wins`` hands won for 99 points (one point each, or 0 for the ties of
    ``undercut_on_tie=False``), then a gin against 98 deadwood, the last of 200 hands at most:
    2 x 222 + 100 + a box of 25 per hand won."""
    config = G.GinConfig(episode="match", **options)
    state = G.GinState(config, seed=0, deck=make_deck(GIN_KNOCKER, MOST_DEADWOOD, "4H"), dealer=1)
    data = state.to_dict()
    data["match"] = {"totals": [99, 0], "wins": [wins, 0], "winner": -1}
    state = G.GinState.from_dict(data)
    state.apply(G.TAKE_DISCARD)
    state.apply(G.str_to_action("KNOCK(5S)"))
    assert state.is_terminal() and state.scores() == [2 * 222 + 100 + 25 * (wins + 1), 0]
    assert sorted(state.returns()) == list(G.GinState.utility_bounds(config))


def test_a_constructed_hand_takes_the_longest_game():
    """One turn allowed: both pass, the non-dealer draws and discards AS onto the dead stock,
    the dealer takes it and knocks, declares three melds, and the defender lays off all ten
    cards: 2 + 2 x 1 + 1 + 4 + 12 actions."""
    config = G.GinConfig(max_turns_per_hand=1, dead_stock_size=30, stock_end_rule="opponent_last_chance",
                         knocker_arrangement="explicit", layoff_mode="explicit")
    deck = make_deck("5C 6C 7C 8C 9C 5D 6D 7D 8D AS", "2C 3C 4C 2D 3D 4D 2H 3H 4H QH", "KH", stock_top="9D")
    state = G.GinState(config, seed=0, deck=deck, dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK", "DISCARD(AS)", "KNOCK(QH)", "MELD(2C 3C 4C)", "MELD(2D 3D 4D)",
                 "MELD(2H 3H 4H)", "DONE", "DONE"):
        state.apply(G.str_to_action(name))
    slots = {C.format(C.from_mask(m)): i for i, m in enumerate(state.knocker_melds)}
    for suit in "CD":
        for rank in "56789":
            state.apply(G.str_to_action(f"LAYOFF({rank}{suit},{slots[f'2{suit} 3{suit} 4{suit}']})"))
    state.apply(G.DONE)
    assert state.is_terminal() and state.hand_results[-1].deadwood == [0, 1]
    assert len(state.history) == G.GinState.max_game_length(config) == 21
