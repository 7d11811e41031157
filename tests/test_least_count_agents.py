"""The Least Count agents on exact hands: engine states written as dicts (``scenario`` of
test_least_count_rules, plus the cards each seat is known to hold) loaded into the env, the
agent playing from what the env shows it. The contract every agent meets (legal moves,
blind to hidden cards, reproducible) is in test_agents.py; the strength figures are in
docs/baselines.md."""

from __future__ import annotations

import random

import pytest

from agents import make_agent
from agents.least_count import LeastCountHeuristicAgent, LeastCountNoviceAgent, Reading, Shape, context
from rummy_envs import cards as C
from rummy_envs import least_count_v0
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count.fast import fast_legal_discards
from test_least_count_rules import scenario

BOTH = ["novice", "heuristic"]


def load(state: L.LeastCountState, known: list[str] | None = None):
    """An env at this engine state (``known``: the cards each seat picked from an open set)."""
    data = state.to_dict()
    if known is not None:
        data["known"] = [k.split() for k in known]
    env = least_count_v0.raw_env(**data["options"])
    env.reset(options={"state": data})
    return env


def picking(hand: str, shed: str, open_set: str, **options) -> L.LeastCountState:
    """Seat 0 of four holding ``hand`` has just discarded ``shed`` and must pick from
    ``open_set`` or the closed deck (the other seats hold an ace each), under ``options``."""
    state = scenario([hand, "AC", "AD", "AH"], open_set=open_set, **options)
    state.apply(L.discard_action(state.hands[0], shed))
    return state


def decide(agent, env) -> str:
    """The agent's next action, as a string with the cards of a discard, without playing it."""
    name = env.agent_selection
    obs = env.observe(name)
    action = agent.act(obs["observation"], obs["action_mask"], env.player_view(name))
    assert obs["action_mask"][action] == 1
    return env.game.describe(action)


def turn(agent, env) -> list[str]:
    """Let the agent play its turn (declare, or discard and pick); its actions as strings."""
    seat = env.game.current_player
    actions = []
    while not env.game.is_terminal() and env.game.current_player == seat:
        actions.append(decide(agent, env))
        env.step(env.str_to_action(actions[-1].split(" = ")[0]))
    return actions


# -- the set search -----------------------------------------------------------------------
RULES = [L.DiscardRules(), L.DiscardRules((3, 4, 5), True, True, True), L.DiscardRules((4,), False, True, False),
         L.DiscardRules((3, 5, 6, 7), True, False, True)]


@pytest.mark.parametrize("rules", RULES)
def test_shape_finds_the_most_points_one_legal_discard_sheds(rules):
    """Against the engine's legal discards (its fast path) on random hands of one or two
    decks with jokers and cut cards; ``set_with`` against the legal discards holding the
    added card."""
    rng = random.Random(hash(rules) % 1000)
    deck = C.deck(2, 4)
    for _ in range(1500):
        hand = sorted(rng.sample(deck, rng.randint(1, L.MAX_HAND - 1)))
        cut = rng.choice([None, rng.choice(deck)])
        ctx = context(rules, cut)
        shape = Shape(hand, ctx)
        sheds = [L.subset_cards(hand, L.DISCARD - 1 + m) for m in fast_legal_discards(hand, rules)]
        assert shape.best == max(sum(ctx.values[c] for c in s) for s in sheds)
        card = rng.choice([c for c in deck if hand.count(c) < deck.count(c)])
        bigger = sorted(hand + [card])
        sets = [L.subset_cards(bigger, L.DISCARD - 1 + m) for m in fast_legal_discards(bigger, rules)]
        assert shape.set_with(card) == max((sum(ctx.values[c] for c in s) for s in sets if len(s) > 1 and card in s),
                                           default=-1)
        assert shape.best_with(card) == Shape(bigger, ctx).best


def test_the_view_carries_the_rules():
    env = least_count_v0.raw_env(num_players=3, tie_declaration_valid=True, false_declare_penalty=40)
    env.reset(seed=1)
    assert env.player_view("player_1").rules == env.config


# -- the novice ---------------------------------------------------------------------------
def test_novice_sheds_the_highest_point_set():
    env = load(scenario(["KS KH 2C 3D 9H", "AC", "AD", "AH"], open_set="4S", turn_done=False))
    assert decide(LeastCountNoviceAgent(), env) == "DISCARD(3,4) = KH KS"


@pytest.mark.parametrize(("hand", "options", "declares"), [
    ("2C 3D 5H", {}, True),  # 10: the mainstream limit
    ("2C 4D 5H", {}, False),  # 11
    ("9C KD", {"declare_max_count": 25}, True),  # the game's own limit: the first legal chance
    ("9C KD AH 6S", {"declare_max_count": 25}, False),  # 26: DECLARE is not offered
])
def test_novice_declares_at_the_first_chance_with_a_low_count(hand, options, declares):
    env = load(scenario([hand, "QC QD", "KC KH", "JD JH"], open_set="TS", **options))
    assert (decide(LeastCountNoviceAgent(), env) == "DECLARE") == declares


def test_novice_picks_an_open_card_only_when_it_forms_a_set():
    pairs = load(picking("2C 5D 9H JS KD", "KD", open_set="7C 8C 9C"))
    assert decide(LeastCountNoviceAgent(), pairs) == "PICK_OPEN(9C)"
    loose = load(picking("2C 5D 9H JS KD", "KD", open_set="AS"))
    assert decide(LeastCountNoviceAgent(), loose) == "PICK_CLOSED"


@pytest.mark.parametrize(("options", "forms"), [
    ({}, True),  # 5C 6C 7D: a sequence of any suits
    ({"sequence_same_suit": True}, False),  # no longer a sequence: the closed deck
    ({"sequence_lengths": (4,)}, False),  # a sequence must be of four
])
def test_novice_reads_the_discard_options_from_the_view(options, forms):
    """The same hand and open card: 7D forms a set with 5C 6C only as the game's options say,
    which the agent reads from ``view.rules``."""
    env = load(picking("5C 6C 9H KD 2S", "KD", open_set="7D", **options))
    assert env.player_view("player_0").rules == env.config
    assert decide(LeastCountNoviceAgent(), env) == ("PICK_OPEN(7D)" if forms else "PICK_CLOSED")


# -- both ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("hand", ["3C 4D 5H 6S 7C", "2S 5S 8S JS KS"])
def test_sheds_a_whole_hand_that_is_one_set(name, hand):
    env = load(scenario([hand, "AC", "AD", "AH"], open_set="QH", turn_done=False))
    assert decide(make_agent(name, "least_count"), env) == f"DISCARD(0,1,2,3,4) = {C.format(sorted(C.parse(hand)))}"


# -- the heuristic ------------------------------------------------------------------------
def test_heuristic_picks_a_low_open_card_that_forms_no_set():
    state = picking("2C 5D 9H JS KD", "KD", open_set="AS")
    assert decide(LeastCountNoviceAgent(), load(state)) == "PICK_CLOSED"
    assert decide(LeastCountHeuristicAgent(), load(state)) == "PICK_OPEN(AS)"


def test_heuristic_keeps_four_of_a_suit_for_the_open_card_that_makes_a_flush():
    """KS on the open set makes 2-5-8-J-K of spades, 36 points to shed next turn: the
    heuristic throws 4D to keep the spades; the novice throws JS, its highest card."""
    state = scenario(["2S 5S 8S JS 4D", "3C 9C", "4H 7H", "8C 9D"], open_set="KS", turn_done=False)
    assert turn(LeastCountNoviceAgent(), load(state)) == ["DISCARD(4) = JS", "PICK_CLOSED"]
    assert turn(LeastCountHeuristicAgent(), load(state)) == ["DISCARD(0) = 4D", "PICK_OPEN(KS)"]


def test_heuristic_does_not_declare_against_a_known_lower_hand():
    """The second seat holds only cards it picked from open sets (AD AH AS, a count of 3): a
    declaration with 4 is false for sure, though three unknown cards would almost surely
    count more. The novice declares anyway."""
    state = scenario(["2C 2D", "AD AH AS", "KC QD JH TS 9S", "KH QH JD TC 9C"], open_set="8S")
    known = ["", "AD AH AS", "", ""]
    assert decide(LeastCountNoviceAgent(), load(state, known)) == "DECLARE"
    assert decide(LeastCountHeuristicAgent(), load(state, known)) != "DECLARE"
    assert decide(LeastCountHeuristicAgent(), load(state)) == "DECLARE"


@pytest.mark.parametrize("tie_valid", [False, True])
def test_heuristic_declares_a_tie_only_when_ties_are_valid(tie_valid):
    """A count of 5 against a seat known to hold 2C 3D (5) and two full hands."""
    state = scenario(["AC 4D", "2C 3D", "KC QD JH TS 9S", "KH QH JD TC 9C"], open_set="8S",
                     tie_declaration_valid=tie_valid)
    action = decide(LeastCountHeuristicAgent(), load(state, ["", "2C 3D", "", ""]))
    assert (action == "DECLARE") == tie_valid


def test_heuristic_declares_when_surely_lowest_and_waits_when_not():
    low = scenario(["AC 2D", "5C 9D KS", "6H 7H QS", "8C TD JS"], open_set="KD")
    assert decide(LeastCountHeuristicAgent(), load(low)) == "DECLARE"
    high = scenario(["8C 9D", "AC 2D", "3H AH", "2H AS"], open_set="KD")
    assert decide(LeastCountHeuristicAgent(), load(high)) != "DECLARE"


def test_a_false_declaration_that_would_eliminate_it_costs_more_in_a_match():
    hands = ["4C 5D", "9C QD KS 6H", "KH JD", "TC 8D 7S 3S"]
    values = []
    for totals in ([0, 0, 0, 0], [95, 0, 0, 0]):
        env = load(scenario(hands, open_set="KD", totals=totals, episode="match"))
        agent = LeastCountHeuristicAgent()
        reading = Reading(env.player_view("player_0"), agent)
        agent.observe(reading.view, reading)
        p_valid = agent.declare_odds(reading)[0]
        values.append(agent.declare_value(reading)[0])
    assert 0 < p_valid < 1 and values[0] > values[1]
    assert values[0] - values[1] == pytest.approx((1 - p_valid) * agent.elimination_cost)


def test_heuristic_tracks_each_opponents_discard_and_pick():
    """From the deal: seat 1 sheds 7C 7D and draws, seat 2 sheds TC and picks 7C from that
    pair, seat 3 sheds 4C 5H 6S and draws. At its next turn the heuristic has each discard
    (the first two cut out of the dead pile), and knows who picked what."""
    hands = {0: "2C 5D 9H JS KS", 1: "7C 7D 3H 4S 8D", 2: "AC 6H QD QS TC", 3: "4C 5H 6S JD 2D"}
    parsed = {seat: C.parse(cards) for seat, cards in hands.items()}
    dealt = [parsed[seat][i] for i in range(5) for seat in range(4)]
    rest = [c for c in range(C.NUM_CARDS) if c not in dealt and c != C.parse_card("KH")]
    state = L.LeastCountState(L.LeastCountConfig(), seed=0, deck=dealt + [C.parse_card("KH")] + rest, dealer=3)
    agent = LeastCountHeuristicAgent()
    for _ in range(2):
        state.apply(agent.act(None, None, state.player_view(0)))
    for seat, shed, pick in ((1, "7C 7D", "PICK_CLOSED"), (2, "TC", "PICK_OPEN(7C)"), (3, "4C 5H 6S", "PICK_CLOSED")):
        state.apply(L.discard_action(state.hands[seat], shed))
        state.apply(L.str_to_action(pick))
    view = state.player_view(0)
    assert C.format(view.dead_pile).endswith("7D TC")
    agent.act(None, None, view)
    seen = {seat: (C.format(t.discard), t.picked and C.format_card(t.picked)) for seat, t in agent.last_turns.items()}
    assert seen == {1: ("7C 7D", None), 2: ("TC", "7C"), 3: ("4C 5H 6S", None)}
