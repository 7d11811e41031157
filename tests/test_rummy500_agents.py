"""The Rummy 500 agents on exact hands: engine states written as dicts (``scenario`` of
test_rummy500_rules) loaded into the env, the agent playing from what the env shows it.
The contract every agent meets (legal moves, blind to hidden cards, reproducible) is in
test_agents.py; the strength figures are in docs/tournaments.md."""

from __future__ import annotations

import pytest

from agents import make_agent
from agents.rummy500 import Rummy500HeuristicAgent, Rummy500NoviceAgent
from rummy_envs import cards as C
from rummy_envs import rummy500_v0
from test_rummy500_rules import P, Q, scenario

BOTH = ["novice", "heuristic"]


def deal(hand: str, pile: str = "", melds: list[dict] | None = None, phase: str = "MELD", opponent: int = 7,
         **options):
    """A two-player scenario with P to move holding ``hand``; the opponent holds ``opponent``
    of the cards left (every fifth first, so seven hold no meld), which the agents cannot see
    anyway; the rest is the stock."""
    used = set(C.parse(f"{hand} {pile}")) | {c for m in melds or [] for c in C.parse(m["cards"])}
    free = [c for c in range(52) if c not in used]
    held = (free[::5] + [c for i, c in enumerate(free) if i % 5])[:opponent]
    return scenario([hand, C.format(held)], pile, melds, phase=phase, **options)


def load(state, known: list[str] | None = None, **options):
    """An env at this engine state (``known``: each seat's cards known from the pile, taken
    in the round of turns played before, so every seat has had one)."""
    data = state.to_dict()
    if known is not None:
        data["known"] = [k.split() for k in known]
        data["turns"] = state.turns + state.n
    env = rummy500_v0.raw_env(**options)
    env.reset(options={"state": data})
    return env


def decide(agent, env) -> str:
    """The agent's next action, as a string, without playing it."""
    name = env.agent_selection
    obs = env.observe(name)
    action = agent.act(obs["observation"], obs["action_mask"], env.player_view(name))
    assert obs["action_mask"][action] == 1
    return env.action_to_str(action)


def turn(agent, env) -> list[str]:
    """Let the agent play until its turn (or the hand) ends; its actions as strings."""
    seat = env.game.current_player
    actions = []
    while not env.game.is_terminal() and env.game.current_player == seat:
        actions.append(decide(agent, env))
        env.step(env.str_to_action(actions[-1]))
    return actions


def table(env) -> list[str]:
    return [C.format(m.ordered()) for m in env.game.melds]


@pytest.mark.parametrize("name", BOTH)
def test_melds_a_set_it_holds(name):
    env = load(deal("7C 7D 7H 2S 9D KH 4C"))
    actions = turn(make_agent(name, "rummy500"), env)
    assert actions[:4] == ["PICK(7C)", "PICK(7D)", "PICK(7H)", "MELD_NEW"]
    assert table(env) == ["7C 7D 7H"] and env.game.table_points() == [21, 0]


def test_novice_throws_the_highest_card():
    assert turn(Rummy500NoviceAgent(), load(deal("2S 9D KH 4C 7S")))[-1] == "DISCARD(KH)"


def test_novice_takes_the_top_discard_only_when_it_melds():
    hand = "9D 9H 2H 5S 7S JC QD"
    melds = load(deal(hand, "4C KD 9S", phase="DRAW"))
    assert decide(Rummy500NoviceAgent(), melds) == "TAKE_DISCARD(2)"
    # 9S is deeper now: the take is legal (it melds) but the novice never takes below the top.
    deep = load(deal(hand, "4C 9S KD", phase="DRAW"))
    assert "TAKE_DISCARD(1)" in {deep.action_to_str(a) for a in deep.player_view("player_0").legal_actions}
    assert decide(Rummy500NoviceAgent(), deep) == "DRAW_STOCK"


def test_novice_lays_off_the_discard_it_takes():
    env = load(deal("3D 6C 8H 4C", "3H KD 9S", phase="DRAW",
                        melds=[{"cards": "TS JS QS", "owner": Q}]))
    actions = turn(Rummy500NoviceAgent(), env)
    assert actions[:3] == ["TAKE_DISCARD(2)", "PICK(9S)", "LAY_OFF(0)"]


def test_heuristic_takes_a_deep_discard_that_melds_a_high_run():
    """QH, two below the top, makes J-Q-K-A of hearts (45 points); 5S and 3C come with it."""
    state = deal("JH KH AH 2S 6D 8C TD", "4C 2D QH 5S 3C", phase="DRAW")
    assert decide(Rummy500NoviceAgent(), load(state)) == "DRAW_STOCK"
    env = load(state)
    actions = turn(Rummy500HeuristicAgent(), env)
    assert actions[0] == "TAKE_DISCARD(2)" and actions[5] == "MELD_NEW"
    assert sorted(actions[1:5]) == ["PICK(AH)", "PICK(JH)", "PICK(KH)", "PICK(QH)"]
    assert table(env) == ["JH QH KH AH"] and env.game.table_points() == [45, 0]


def test_heuristic_declines_a_deep_take_that_only_buries_points():
    """Late in the hand (six cards in the stock) 2C at the bottom of the pile makes a set of
    twos (6 points) but brings 54 points of loose cards that would be caught in the hand.
    Early (29 cards in the stock) the same cards have time to meld: the take pays."""
    hand, pile = "2D 2H 4S 6S 3D 5C 7C 9H TS 8H", "2C KD QS JC AS KC"
    late = load(deal(hand, pile, phase="DRAW", opponent=30))
    assert late.player_view("player_0").stock_size == 6
    assert "TAKE_DISCARD(0)" in {late.action_to_str(a) for a in late.player_view("player_0").legal_actions}
    assert decide(Rummy500HeuristicAgent(), late) == "DRAW_STOCK"
    early = load(deal(hand, pile, phase="DRAW"))
    assert early.player_view("player_0").stock_size == 29
    assert decide(Rummy500HeuristicAgent(), early) == "TAKE_DISCARD(0)"


@pytest.mark.parametrize("name", BOTH)
def test_lays_off_rather_than_discards_a_card_that_fits_the_table(name):
    env = load(deal("4H 9C 2S", melds=[{"cards": "5H 6H 7H", "owner": Q}]))
    actions = turn(make_agent(name, "rummy500"), env)
    assert actions[:2] == ["PICK(4H)", "LAY_OFF(0)"] and len(actions) == 3


def test_heuristic_does_not_feed_the_next_player_its_known_pair():
    """The next player took AC and AD from the pile: the novice throws AS, the highest card."""
    state = scenario(["AS KD 7C 4H 9S", "AC AD 5C 6S 8D 9D JC"])
    known = ["", "AC AD"]
    assert turn(Rummy500NoviceAgent(), load(state, known))[-1] == "DISCARD(AS)"
    assert turn(Rummy500HeuristicAgent(), load(state, known))[-1] != "DISCARD(AS)"


def test_heuristic_does_not_discard_what_the_next_player_lays_off_with_a_known_card():
    """9-T-J of hearts is on the table and the next player holds QH: KH would join them (and
    only so: AH is in the pile, so Q-K-A cannot make a new meld)."""
    state = scenario(["KH 8D 3C 2S 5D", "QH 5C 6S 8C 9D JC"], "AH", melds=[{"cards": "9H TH JH", "owner": P}])
    known = ["", "QH"]
    assert turn(Rummy500NoviceAgent(), load(state, known))[-1] == "DISCARD(KH)"
    assert turn(Rummy500HeuristicAgent(), load(state, known))[-1] != "DISCARD(KH)"


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("hand", ["5D 6D 7D KS", "4D 5D 6D QC QH QS"])
def test_goes_out_when_it_can(name, hand):
    env = load(deal(hand))
    turn(make_agent(name, "rummy500"), env)
    result = env.game.hand_results[-1]
    assert result.kind == "out" and result.went_out == P


@pytest.mark.parametrize("name", BOTH)
def test_keeps_a_card_when_it_must_discard_to_go_out(name):
    """With ``must_discard_to_go_out`` (read from the view's rules) the agent never plans the
    meld that would empty its hand: it discards instead, and goes out by keeping a card to
    discard after its meld."""
    agent = make_agent(name, "rummy500")
    env = load(deal("4D 5D 6D", must_discard_to_go_out=True), must_discard_to_go_out=True)
    actions = turn(agent, env)
    assert len(actions) == 1 and actions[0].startswith("DISCARD")
    env = load(deal("4D 5D 6D KS", must_discard_to_go_out=True), must_discard_to_go_out=True)
    assert turn(agent, env) == ["PICK(4D)", "PICK(5D)", "PICK(6D)", "MELD_NEW", "DISCARD(KS)"]
    assert env.game.hand_results[-1].went_out == P


@pytest.mark.parametrize("name", BOTH)
def test_a_joker_completes_a_pair(name):
    env = load(deal("JK 9D 9H 2C 4S", num_jokers=1), num_jokers=1)
    actions = turn(make_agent(name, "rummy500"), env)
    assert actions[:4] == ["PICK(9D)", "PICK(9H)", "PICK_JOKER(9S)", "MELD_NEW"]
    assert table(env) == ["9D 9H 9S"] and env.game.melds[0].jokers == 1 << C.parse_card("9S")


@pytest.mark.parametrize("name", BOTH)
def test_places_a_deep_take_target_first(name):
    """After the deep take of 9S it must go on the table first (9S-9D-9H, 27 points), before
    the run J-Q-K-A of hearts (45 points) that a plan would otherwise place first."""
    env = load(deal("9D 9H JH QH KH AH 7S", "4C KD 9S 5H JC", phase="DRAW"))
    env.step(env.str_to_action("TAKE_DISCARD(2)"))
    actions = turn(make_agent(name, "rummy500"), env)
    assert sorted(actions[:3]) == ["PICK(9D)", "PICK(9H)", "PICK(9S)"] and actions[3] == "MELD_NEW"
    assert table(env) == ["9D 9H 9S", "JH QH KH AH"]


@pytest.mark.parametrize("joker_value, discard", [(0, "DISCARD(JK)"), (15, "DISCARD(2D)"), (30, "DISCARD(2D)")])
def test_heuristic_reads_the_joker_value_from_the_rules(joker_value, discard):
    """A joker that cannot be melded is worth keeping as much as it is worth: the next player
    holds 7D 7H and QS JS (known from the pile), so 7C and KS would feed it and 2D is the
    cheap discard while a joker counts; with ``joker_value=0`` the joker costs nothing to
    throw and is the discard."""
    state = scenario(["JK 7C KS 2D", "7D 7H QS JS 4C 9D TC"], num_jokers=1, joker_value=joker_value)
    env = load(state, ["", "7D 7H QS JS"], num_jokers=1, joker_value=joker_value)
    assert turn(Rummy500HeuristicAgent(), env) == [discard]
