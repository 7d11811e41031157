"""Exact-hand scenarios for the gin rule-based agents: the novice's documented rules and the
heuristic's reasons (melds, gin, feeding the opponent, knocking, draws, the showdown)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agents import gin_rummy as gin_agents
from agents import make_agent
from agents.gin_rummy import GinHeuristicAgent, GinNoviceAgent
from rummy_envs import cards as C
from rummy_envs import gin_rummy_v0
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinState, GinView, Phase


def scenario(mine: str, theirs: str, pile: str, phase: str = "DRAW", stock_size: int | None = None,
             **fields: object) -> dict:
    """A state dict where player 0 (``mine``, the non-dealer) is to move; every card not in a
    hand or the pile is stock, except that with ``stock_size`` the surplus goes to the bottom
    of the pile (as if discarded long ago)."""
    used = C.to_mask(C.parse(mine)) | C.to_mask(C.parse(theirs)) | C.to_mask(C.parse(pile))
    rest = [C.format_card(c) for c in range(C.NUM_CARDS) if not used >> c & 1]
    cut = len(rest) - (stock_size if stock_size is not None else len(rest))
    return {"hands": [mine.split(), theirs.split()], "discard_pile": rest[:cut] + pile.split(),
            "stock": rest[cut:], "phase": phase, "current_player": 0, "dealer": 1,
            "passed": [True, True], **fields}


def view(data: dict, **options: object) -> GinView:
    """Player 0's view of the scenario under these rules options."""
    return GinState.from_dict({**data, "options": options}).player_view(0)


def decide(agent_name: str, data: dict, **options: object) -> str:
    """The agent's action on player 0's view, as text."""
    agent = make_agent(agent_name, "gin_rummy", seed=0)
    agent.reset()
    return G.action_to_str(agent.act(None, None, view(data, **options)))


# A hand of 10 with two melds and four loose cards (deadwood 4+9+10+10 = 33).
LOOSE = "AC 2C 3C 5D 6D 7D 4H 9S JH KS"
OPPONENT = "2D 3D 8C 8H TC TD QC QD 5S 6S"


# -- the novice's documented rules -------------------------------------------------------
def test_novice_takes_only_a_discard_that_melds():
    assert decide("novice", scenario(LOOSE, OPPONENT, "4D")) == "TAKE_DISCARD"  # 4D-5D-6D-7D
    assert decide("novice", scenario(LOOSE, OPPONENT, "AH")) == "DRAW_STOCK"  # low, but no meld


def test_novice_discards_the_least_deadwood_highest_on_ties():
    hand = LOOSE + " 8S"  # 8S and 9S do not meld; JH and KS tie at 10: the higher id goes
    assert decide("novice", scenario(hand, OPPONENT, "2S", phase="DISCARD")) == "DISCARD(KS)"


def test_novice_knocks_as_soon_as_it_may_even_late():
    hand = "AC 2C 3C 5D 6D 7D 4H 5H 6H 9S TS"  # knock with 9 deadwood, discarding TS
    data = scenario(hand, OPPONENT, "2S", phase="DISCARD", stock_size=4)
    assert decide("novice", data) == "KNOCK(TS)"


# -- the heuristic -----------------------------------------------------------------------
def test_heuristic_takes_a_discard_that_completes_a_meld():
    assert decide("heuristic", scenario(LOOSE, OPPONENT, "4D")) == "TAKE_DISCARD"


def test_heuristic_passes_a_useless_upcard():
    # QS would only pair with KS: drawing from the stock is worth more.
    data = scenario(LOOSE, OPPONENT, "QH", phase="OFFER_ND", passed=[False, False])
    assert decide("heuristic", data) == "PASS"


def test_heuristic_takes_a_low_card_for_a_high_loose_one():
    # Swapping KS for the ace drops 9 deadwood, more than a stock card is expected to.
    assert decide("heuristic", scenario(LOOSE, OPPONENT, "AS")) == "TAKE_DISCARD"


def test_heuristic_goes_gin_when_it_can():
    gin = "AC 2C 3C 5D 6D 7D 4H 5H 6H 7H KS"
    assert decide("heuristic", scenario(gin, OPPONENT, "2S", phase="DISCARD")) == "KNOCK(KS)"
    eleven = "AC 2C 3C 4C 5D 6D 7D 4H 5H 6H 7H"  # every card melds: big gin where enabled
    assert decide("heuristic", scenario(eleven, OPPONENT, "2S", phase="DISCARD"), big_gin_bonus=31) == "BIG_GIN"


def test_heuristic_knocks_early_and_holds_a_high_knock_late():
    hand = "AC 2C 3C 5D 6D 7D 4H 5H 6H 9S TS"  # knocking leaves 9 deadwood
    assert decide("heuristic", scenario(hand, OPPONENT, "2S", phase="DISCARD")) == "KNOCK(TS)"
    late = scenario(hand, OPPONENT, "2S", phase="DISCARD", stock_size=6)
    assert decide("heuristic", late).startswith("DISCARD")
    low = "AC 2C 3C 5D 6D 7D 4H 5H 6H 2S TS"  # 2 deadwood: knock even late
    assert decide("heuristic", scenario(low, OPPONENT, "3S", phase="DISCARD", stock_size=6)) == "KNOCK(TS)"


def test_heuristic_reads_the_end_of_the_stock_off_the_rules():
    """A knock is late when few draws are left before the stock is down to the rules'
    ``dead_stock_size`` (view.rules): with 14 stock cards it knocks with 9 deadwood, unless 8
    of them are dead."""
    hand = "AC 2C 3C 5D 6D 7D 4H 5H 6H 9S TS"  # knocking leaves 9 deadwood
    data = scenario(hand, OPPONENT, "2S", phase="DISCARD", stock_size=14)
    assert decide("heuristic", data) == "KNOCK(TS)"
    assert decide("heuristic", data, dead_stock_size=8).startswith("DISCARD")


def test_heuristic_keeps_a_pair_with_live_outs():
    # KS, KH and QD all count 10: the novice throws the highest card (KS), the heuristic the
    # lone queen, keeping two draws (KC, KD) that would make a set.
    hand = "AC 2C 3C 5D 6D 7D KS KH QD 4H 2S"
    data = scenario(hand, OPPONENT.replace("QD", "9C"), "3S", phase="DISCARD")
    assert decide("heuristic", data) == "DISCARD(QD)"
    assert decide("novice", data) == "DISCARD(KS)"


def test_heuristic_holds_out_for_gin_against_a_weak_opponent():
    # The opponent picked up KC although KD, KH and QC are gone: it cannot meld it, so it
    # is not building melds and the heuristic plays for gin instead of knocking with 9.
    hand = "AC 2C 3C 5D 6D 7D 4H 5H 6H 9S TS"
    theirs = "KC 2D 3D 8C 8H TC TD JD 5S 6S"
    assert decide("heuristic", scenario(hand, theirs, "KD KH QC 2S", phase="DISCARD")) == "KNOCK(TS)"
    weak = scenario(hand, theirs, "KD KH QC 2S", phase="DISCARD", known=[[], ["KC"]])
    assert decide("heuristic", weak).startswith("DISCARD")


def test_heuristic_does_not_feed_the_opponents_known_cards():
    # The opponent picked up JC and JD: JS would give it a set, KH (also 10) is safe.
    hand = "AC 2C 3C 5D 6D 7D 4H 8S JS KH 2H"
    theirs = "JC JD 2D 3D 8C TC QC 5S 6S 9H"
    data = scenario(hand, theirs, "3S", phase="DISCARD", known=[[], ["JC", "JD"]])
    assert decide("heuristic", data) == "DISCARD(KH)"
    assert decide("novice", data) == "DISCARD(JS)"  # the novice only counts deadwood


def test_heuristic_reads_the_opponents_discards():
    # QH and QS are alike for me (the other queens and kings are gone). The opponent threw
    # 9H, so it holds no TH-JH pair (9H would have melded with it): QH is the safer discard;
    # without that reading the tie goes to QS.
    hand = "AC 2C 3C 4D 5D 6D QH QS 8C 9D 2H"
    theirs = "2D 3D 8H TC TD JC 5S 6S 7S AH"
    data = scenario(hand, theirs, "2S QC QD KH KS 9H", phase="DISCARD",
                    discarded=[["KH", "KS"], ["QC", "QD", "9H"]])
    assert decide("heuristic", data) == "DISCARD(QH)"


def test_heuristic_last_chance_only_for_a_low_knock():
    gin = "AC 2C 3C 5D 6D 7D 4H 5H 6H KS"  # the 7H on the pile makes gin, KS goes
    data = scenario(gin, OPPONENT, "7H", phase="LAST_CHANCE", stock_size=2)
    assert decide("heuristic", data, stock_end_rule="opponent_last_chance") == "KNOCK(KS)"
    high = "AC 2C 3C 5D 6D 7D 4H 5H 9S KS"  # 7H leaves 9 deadwood: pass
    data = scenario(high, OPPONENT, "6H", phase="LAST_CHANCE", stock_size=2)
    assert decide("heuristic", data, stock_end_rule="opponent_last_chance") == "PASS"


def test_heuristic_declares_explicit_melds():
    env = gin_rummy_v0.env(knocker_arrangement="explicit")
    env.reset(options={"state": scenario("AC 2C 3C 5D 6D 7D 4H 5H 6H 7H KS", OPPONENT, "2S", phase="DISCARD")})
    agent = GinHeuristicAgent()
    while env.unwrapped.game.phase != Phase.GAME_OVER:
        name = env.agent_selection
        obs = env.observe(name)
        env.step(agent.act(obs["observation"], obs["action_mask"], env.unwrapped.player_view(name)))
    result = env.unwrapped.game.hand_results[-1]
    assert result.kind == "gin" and result.knocker == 0


@pytest.mark.parametrize("agent_class", [GinNoviceAgent, GinHeuristicAgent])
def test_agents_are_registered_for_both_gin_games(agent_class):
    for game in ("gin_rummy", "hollywood_gin"):
        assert isinstance(make_agent(agent_class.name, game, seed=1), agent_class)


@settings(max_examples=300, deadline=None)
@example(set(C.parse("3C 8C 8D 8H 9H TH 2S 6S")), set(), 0)  # the best discard is not the first high card tried
@given(st.sets(st.integers(0, C.NUM_CARDS - 1), min_size=1, max_size=12), st.sets(st.integers(0, C.NUM_CARDS - 1)),
       st.integers(0, C.NUM_CARDS - 1))
def test_the_heuristics_hand_helpers_are_their_brute_force(cards, kept, card):
    """``best_discard_deadwood`` is the least deadwood over every discard outside ``keep``
    (its early stop and order change nothing), and ``can_meld`` says whether some meld holds
    the card and otherwise only cards of the hand."""
    from rummy_envs import melds as M

    hand, keep = C.to_mask(cards), C.to_mask(kept)
    droppable = [c for c in cards if c not in kept]
    expected = min((M.min_deadwood(hand ^ 1 << c) for c in droppable), default=1 << 30)
    assert gin_agents.best_discard_deadwood(hand, keep) == expected
    others = ~(1 << card)
    assert gin_agents.can_meld(hand, card) == any(meld >> card & 1 and meld & others & ~hand == 0
                                                  for meld in M.MELDS)
