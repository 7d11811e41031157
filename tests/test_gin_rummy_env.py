"""The gin_rummy_v0 environment: its contract spec (the checks every env shares run from
tests/test_env_contract.py: api_test and seed_test, invariants over random play, exact
masks, leaks, determinizations, illegal actions, seeding, dicts and replay, layout,
rendering, action names, dead steps) and what is particular to gin: hand sizes and the
showdown through play, the hand's scoring formula, rewards and infos per hand and match
(win_loss also on a reset from a finished state), the caps, the explicit showdown's leaks
and determinizations, the knock not revealing the defender's hand, the deal from a given
deck, gin's options, the optional observation segments, the state vector and gin's action
aliases; and, over seeded games of standard, Oklahoma, explicit-showdown, 50th-card and
match play, every observation segment (decoded) and the player view against a record of
the public play kept here action by action, and the legal actions against a rules oracle
written here from docs/gin_rummy.md#turn-phases.

Fast versions run in CI (about 200 engine games per configuration); the thousands-of-games
versions are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from gin_rummy_oracle import all_arrangements, can_lay_off, hand_value, oracle_deadwood, oracle_stakes
from observations import counts, decode
from rummy_envs import gin_rummy_v0
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import rank_rewards
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinConfig, GinState, Phase
from env_contract import GameSpec, Watcher, leak_check, observed, play_env, play_out, shuffled_stock, snapshots
from test_gin_rummy_rules import make_deck

slow = pytest.mark.slow
AGENTS = ["player_0", "player_1"]
SHOWDOWN = (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF)

# The option sets the contract runs the env under; each is an env configuration (rules + env options).
ENV_OPTION_SETS = {
    "default": {},
    "match": {"episode": "match"},
    "explicit": {"layoff_mode": "explicit", "knocker_arrangement": "explicit"},
    "oklahoma": {"variant": "oklahoma"},
    "last_chance_big_gin": {"stock_end_rule": "opponent_last_chance", "big_gin_bonus": 31},
    "win_loss": {"reward": "win_loss"},
    "oracle_obs": {"observe_opponent_hand": True},
}

# Engine rule sets: the rules parts of the option sets above, plus combinations that reach
# the rarer code paths (explicit showdown in a match, re-discards, other dealers, caps).
ENV_ONLY = {"reward", "observe_opponent_hand"}
RULE_SETS = {
    **{name: options for name, options in ENV_OPTION_SETS.items() if not ENV_ONLY & set(options)},
    "explicit_oklahoma_match": {"layoff_mode": "explicit", "knocker_arrangement": "explicit", "variant": "oklahoma",
                                "episode": "match", "big_gin_bonus": 31},
    "variety_match": {"episode": "match", "allow_rediscard_taken_card": True, "undercut_on_tie": False,
                      "next_dealer": "loser", "oklahoma_ace_gin_only": False, "target_score": 60,
                      "shutout_rule": "double_game_bonus", "boxes_count_toward_target": True,
                      "stock_end_rule": "opponent_last_chance", "dead_stock_size": 5, "undercut_bonus": 10},
    "caps": {"episode": "match", "max_turns_per_hand": 7, "max_hands_per_match": 4, "knock_limit": 3},
}
MATCH_SETS = {k for k, v in RULE_SETS.items() if v.get("episode") == "match"}


# ---------------------------------------------------------------------------------------
# Policies and checks shared by the tests
# ---------------------------------------------------------------------------------------


def uniform(state: GinState, rng: random.Random) -> int:
    return rng.choice(state.legal_actions())


def knocky(state: GinState, rng: random.Random) -> int:
    """Random play that usually knocks when it may and mostly discards greedily, so that
    hands end in knocks and showdowns (uniform play ends almost every hand dead)."""
    legal = state.legal_actions()
    if state.phase in (Phase.DISCARD, Phase.LAST_CHANCE):
        knocks = [a for a in legal if G.KNOCK <= a < G.MELD or a == G.BIG_GIN]
        if knocks and rng.random() < 0.9:
            return rng.choice(knocks)
        discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
        if discards and rng.random() < 0.7:
            hand = state.hands[state.current_player]
            return min(discards, key=lambda a: (M.min_deadwood(hand ^ (1 << (a - G.DISCARD))), rng.random()))
    return rng.choice(legal)


POLICIES = (uniform, knocky)


def step_bound(config: GinConfig) -> int:
    """More actions than any game can take: two per turn, the opening, the showdown."""
    per_hand = 2 * config.max_turns_per_hand + 40
    return per_hand * (config.max_hands_per_match if config.episode == "match" else 1)


def check_cards_conserved(s: GinState) -> None:
    parts = [s.hands[0], s.hands[1], C.to_mask(s.stock), C.to_mask(s.pile)]
    if s.knock_card >= 0:
        parts.append(1 << s.knock_card)
    count = sum(m.bit_count() for m in parts)
    union = 0
    for m in parts:
        union |= m
    assert len(s.stock) == len(set(s.stock)) and len(s.pile) == len(set(s.pile))
    assert count == 52 and union == C.FULL_DECK_MASK, f"cards not conserved in phase {s.phase.name}"


def check_hand_sizes(s: GinState) -> None:
    sizes = [h.bit_count() for h in s.hands]
    p = s.current_player
    if s.phase == Phase.DISCARD:
        assert sizes[p] == 11 and sizes[1 - p] == 10, sizes
    elif s.knocker >= 0 and (s.phase in SHOWDOWN or s.phase == Phase.GAME_OVER):
        assert sizes[s.knocker] == (11 if s.big_gin else 10) and sizes[1 - s.knocker] == 10, sizes
    else:
        assert sizes == [10, 10], (s.phase.name, sizes)


def check_showdown_consistent(s: GinState) -> None:
    """The declaring player's undeclared cards, declared melds and layoffs make up the hand."""
    if s.phase not in SHOWDOWN:
        return

    def union(ms):
        out = 0
        for m in ms:
            assert M.is_meld(m)
            assert out & m == 0
            out |= m
        return out

    if s.phase == Phase.KNOCKER_MELD:
        declared = union(s.knocker_melds)
        assert declared & s.remaining == 0
        assert declared | s.remaining == s.hands[s.knocker], "knocker's remaining + melds != knocker's hand"
    else:
        declared = union(s.defender_melds)
        laid = C.to_mask([c for c, _ in s.layoffs])
        assert declared & s.remaining == 0 and laid & (declared | s.remaining) == 0
        assert declared | s.remaining | laid == s.hands[s.defender], \
            "defender's remaining + melds + layoffs != defender's hand"
        assert union(s.knocker_melds) & ~s.hands[s.knocker] == 0, "knocker melds not in the knocker's hand"


def check_hand_result(config: GinConfig, result: G.HandResult, multiplier: int | None) -> None:
    """Exactly one player scores a won hand; nobody scores a dead one."""
    if result.kind in ("dead", "turn_cap"):
        assert result.winner == -1 and result.points == [0, 0]
        return
    assert result.kind in ("knock", "gin", "big_gin", "undercut")
    w = result.winner
    assert w in (0, 1) and result.points[1 - w] == 0
    k, d = result.deadwood[result.knocker], result.deadwood[1 - result.knocker]
    if result.kind in ("gin", "big_gin"):
        assert w == result.knocker and k == 0
    elif result.kind == "knock":
        assert w == result.knocker and (k < d or (k == d and not config.undercut_on_tie))
    else:
        assert w != result.knocker and k >= d
    if config.undercut_on_tie or result.kind != "knock":
        assert result.points[w] > 0
    else:
        assert result.points[w] >= 0
    if multiplier is not None:  # the hand's formula (docs/gin_rummy.md#scoring-a-hand), where the multiplier is known
        bonus = {"gin": config.gin_bonus, "big_gin": config.big_gin_bonus}.get(result.kind)
        expected = {"gin": (bonus or 0) + d, "big_gin": (bonus or 0) + d, "knock": d - k,
                    "undercut": k - d + config.undercut_bonus}[result.kind]
        assert result.points[w] == expected * multiplier, result


def make_env(**options):
    return gin_rummy_v0.env(**options)


class GinWatcher(Watcher):
    """Hand sizes and the showdown after every action; each hand's result by the scoring
    formula (with the multiplier it was played under); the episode's end."""

    def __init__(self, config: GinConfig) -> None:
        self.config = config

    def before(self, state: GinState) -> None:
        self.multiplier = state.multiplier
        self.hands = len(state.hand_results)

    def after(self, state: GinState) -> None:
        check_hand_sizes(state)
        check_showdown_consistent(state)
        if len(state.hand_results) != self.hands:
            check_hand_result(self.config, state.hand_results[-1], self.multiplier)

    def end(self, state: GinState) -> None:
        config = self.config
        if config.episode == "hand":
            assert len(state.hand_results) == 1
            assert state.truncated == (state.hand_results[0].kind == "turn_cap")
            assert state.scores() == state.hand_results[0].points
        else:
            assert 1 <= len(state.hand_results) <= config.max_hands_per_match
            assert state.truncated == (state.match.winner < 0)
            if not state.truncated:
                assert state.match.totals[state.match.winner] >= config.target_score


def check_state(s: GinState) -> None:
    check_cards_conserved(s)
    check_hand_sizes(s)
    check_showdown_consistent(s)


def check_coverage(name: str, finals: list[GinState]) -> None:
    kinds = Counter(r.kind for s in finals for r in s.hand_results)
    assert sum(kinds.values()) >= len(finals)
    if name != "caps":
        assert kinds["knock"] + kinds["gin"] > 0, kinds


def own_card_swap(d: dict, p: int) -> dict:
    v = copy.deepcopy(d)
    x, y = v["hands"][p][0], v["stock"][0]
    v["hands"][p] = [y] + v["hands"][p][1:]
    v["stock"][0] = x
    return v


def replay_dict(d: dict, state_class: type[GinState] = GinState) -> GinState:
    config = state_class.config_class.from_kwargs(**d["options"])
    return G.replay(config, d["seed"], d["history"], d["initial_deck"], d["first_dealer"], state_class)


def _role(state: GinState, p: int) -> str:
    if state.knocker < 0:
        return "to move" if state.current_player == p else "waiting"
    return "knocker" if state.knocker == p else "defender"


GIN = GameSpec(
    id="gin_rummy",
    module=gin_rummy_v0,
    state_class=GinState,
    config_class=GinConfig,
    env_option_sets=ENV_OPTION_SETS,
    rule_sets=RULE_SETS,
    policy=knocky,
    hand_policies=POLICIES,
    check_state=check_state,
    hidden_variants=lambda state, p, rng: hidden_variants(state, p, rng),
    own_card_swap=own_card_swap,
    replay=replay_dict,
    action_to_str=G.action_to_str,
    full_deck=lambda config: list(range(C.NUM_CARDS)),
    step_bound=lambda config: step_bound(config),
    seeding_options={"episode": "match", "target_score": 30},
    persistent_options={"knock_limit": 5, "episode": "match", "gin_bonus": 20, "reward_scale": 2.0},
    dead_step_options=({}, {"episode": "match", "target_score": 30}, {"max_turns_per_hand": 3}),
    bad_action_strings=("MELD(AS 5D 9H)", "LAYOFF(5H,3)"),
    watcher=GinWatcher,
    special=lambda state: state.phase in SHOWDOWN or state.phase == Phase.LAST_CHANCE,
    reveals=lambda state, action: action == G.DRAW_STOCK,
    check_coverage=check_coverage,
    engine_games={name: (40 if name in MATCH_SETS else 200) for name in RULE_SETS},
    env_episodes={"match": 4},
    leak_sets=("default", "match", "oklahoma", "last_chance_big_gin", "explicit", "explicit_oklahoma_match"),
    main_set="explicit",
    role=_role,
    leak_games=13,
    illegal_episodes=10,
)


# ---------------------------------------------------------------------------------------
# Rewards, infos and caps
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [
    {"reward_scale": 25.0},
    {"episode": "match", "reward": "win_loss", "target_score": 40},
    {"episode": "match", "target_score": 40, "reward_scale": 3},
    {"layoff_mode": "explicit", "knocker_arrangement": "explicit", "episode": "match", "target_score": 40},
])
def test_env_invariants_more_options(options):
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(3)
    for i in range(6):
        env.reset(seed=i)
        totals, game, _ = play_env(GIN, env, rng, knocky, exhaustive_prob=0.02)
        expected = ([r / raw.reward_scale for r in game.returns()] if raw.reward_mode == "points"
                    else [r / raw.reward_scale for r in rank_rewards(game.scores())])
        assert [totals[a] for a in AGENTS] == pytest.approx(expected)


def test_hand_mode_cumulative_rewards_equal_returns():
    """In hand mode all the reward comes at the last move: the cumulative rewards then are
    the engine's returns (points) for both agents, and infos carry the hand result."""
    env = make_env(rich_info=True)
    raw = env.unwrapped
    rng = random.Random(11)
    knocks = 0
    for i in range(40):
        env.reset(seed=900 + i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            env.step(knocky(raw.game, rng))
        returns = raw.game.returns()
        assert [raw._cumulative_rewards[a] for a in AGENTS] == pytest.approx(returns)
        result = raw.game.hand_results[-1]
        for p, a in enumerate(AGENTS):
            info = raw.infos[a]
            assert info["hand_result"]["kind"] == result.kind
            assert info["hand_result"]["points"] == result.points
            assert info["final_scores"] == raw.game.scores()
        knocks += result.kind != "dead"
    assert knocks > 10


def test_match_rewards_paid_per_hand():
    """Match mode pays r_i = s_i - mean(s) at every hand end, match bonuses at the end."""
    env = make_env(episode="match", target_score=50)
    raw = env.unwrapped
    rng = random.Random(5)
    env.reset(seed=3)
    paid = dict.fromkeys(AGENTS, 0.0)
    while raw.agents and not any(raw.terminations.values()) and not any(raw.truncations.values()):
        hands_before = len(raw.game.hand_results)
        totals_before = list(raw.game.match.totals)
        env.step(knocky(raw.game, rng))
        for a in AGENTS:
            paid[a] += raw.rewards[a]
        if len(raw.game.hand_results) != hands_before and not raw.game.is_terminal():
            d = [raw.game.match.totals[p] - totals_before[p] for p in range(2)]
            assert [raw.rewards[a] for a in AGENTS] == pytest.approx([d[0] - sum(d) / 2, d[1] - sum(d) / 2])
        elif len(raw.game.hand_results) == hands_before:
            assert all(raw.rewards[a] == 0 for a in AGENTS)
    assert [paid[a] for a in AGENTS] == pytest.approx(raw.game.returns())
    final = raw.game.scores()
    assert final == raw.game.match.final_scores(raw.game.config)


def test_turn_cap_truncates():
    env = make_env(max_turns_per_hand=4)
    raw = env.unwrapped
    rng = random.Random(0)
    truncated = 0
    for i in range(20):
        env.reset(seed=i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            env.step(uniform(raw.game, rng))
        if raw.game.hand_results[-1].kind == "turn_cap":
            truncated += 1
            assert all(raw.truncations.values()) and not any(raw.terminations.values())
            assert raw.infos["player_0"]["truncated"] is True
        else:
            assert all(raw.terminations.values()) and not any(raw.truncations.values())
    assert truncated > 0


def test_match_hand_cap_truncates():
    env = make_env(episode="match", max_hands_per_match=2, target_score=500)
    raw = env.unwrapped
    rng = random.Random(0)
    env.reset(seed=1)
    while not any(raw.terminations.values()) and not any(raw.truncations.values()):
        env.step(knocky(raw.game, rng))
    assert len(raw.game.hand_results) == 2
    assert all(raw.truncations.values()) and not any(raw.terminations.values())


# ---------------------------------------------------------------------------------------
# Hidden cards: the variants the contract's leak test uses, and gin's showdown
# ---------------------------------------------------------------------------------------


def hidden_variants(state: GinState, p: int, rng: random.Random) -> list[tuple[str, dict]]:
    """State dicts that differ from ``state`` only in what player ``p`` cannot see:
    an unseen card of the opponent swapped with a stock card, the stock reordered, and
    (when the opponent knocked) the face-down knock card swapped with a stock card, unless it
    was once discarded face up (no other zone could hold it, so it is known)."""
    d = state.to_dict()
    opp = 1 - p
    out: list[tuple[str, dict]] = []
    if state.phase == Phase.GAME_OVER:
        return out
    candidates = set(d["hands"][opp]) - set(d["known"][opp])
    if state.knocker == opp:
        candidates = set()  # a knocker's hand is face up for the defender from the knock on
    elif state.phase in (Phase.DEFENDER_MELD, Phase.LAYOFF):
        candidates &= set(d["remaining"])  # keep the defender's declared melds and layoffs consistent
    if candidates and d["stock"]:
        x = rng.choice(sorted(candidates))
        j = rng.randrange(len(d["stock"]))
        y = d["stock"][j]
        v = copy.deepcopy(d)
        v["hands"][opp] = sorted((set(v["hands"][opp]) - {x}) | {y}, key=C.parse_card)
        v["stock"][j] = x
        if x in v["remaining"]:
            v["remaining"] = sorted((set(v["remaining"]) - {x}) | {y}, key=C.parse_card)
        out.append(("swap opponent card with stock card", v))
    out += shuffled_stock(d, rng)  # one deck: its stock cards all differ
    once_face_up = d["knock_card"] in d["discarded"][0] + d["discarded"][1]  # then no stock can hold it
    if state.knocker == opp and d["knock_card"] is not None and d["stock"] and not once_face_up:
        v = copy.deepcopy(d)
        j = rng.randrange(len(d["stock"]))
        v["knock_card"], v["stock"][j] = v["stock"][j], v["knock_card"]
        out.append(("swap knock card with stock card", v))
    return out


def test_information_leak_explicit_showdown():
    """In KNOCKER_MELD, DEFENDER_MELD and LAYOFF the knocker must not see the defender's
    undeclared cards, also after its own showdown moves. (The knocker's hand is face up for
    the defender from the knock on, so only the stock order is hidden from the defender.)"""
    checked = leak_check(GIN, "explicit", games=40, special_only=True)
    for phase in ("DEFENDER_MELD", "LAYOFF"):
        assert checked[(phase, "knocker")] >= 10, checked
    assert checked[("KNOCKER_MELD", "knocker")] >= 10, checked
    assert checked[("after move", "MELD")] + checked[("after move", "DONE")] >= 10, checked


def _knock_reveal_check(games: int, per_state: int) -> int:
    rules = {"layoff_mode": "explicit"}
    env = make_env(**rules)
    raw = env.unwrapped
    rng = random.Random(19)
    checked = 0
    for i in range(games):
        s = GinState(GinConfig(**rules), 7000 + i)
        while not s.is_terminal():
            knocks = [a for a in s.legal_actions() if G.KNOCK <= a < G.MELD]
            if knocks:
                p = s.current_player
                knock = rng.choice(knocks)
                env.reset(options={"state": s.to_dict()})
                env.step(knock)
                assert raw.game.phase == Phase.DEFENDER_MELD
                seen = observed(env, AGENTS[p])
                # other defender hands p cannot tell apart: redealt by a determinization
                for _ in range(per_state):
                    other = s.sample_determinization(p, rng)
                    env.reset(options={"state": other.to_dict()})
                    env.step(knock)
                    obs, _, view = observed(env, AGENTS[p])
                    assert np.array_equal(obs, seen[0]), "the knocker's observation depends on the defender's hand"
                    assert view == seen[2], "the knocker's view depends on the defender's hand"
                    checked += 1
            s.apply(knocky(s, rng))
    return checked


def test_knock_does_not_reveal_defender_hand():
    """With explicit layoffs but the automatic knocker arrangement, the environment picks
    the knocker's melds against the defender's hand: what the knocker sees after knocking
    (until the hand is over) must not depend on the defender's hidden cards."""
    assert _knock_reveal_check(games=60, per_state=6) > 100


@slow
def test_knock_does_not_reveal_defender_hand_slow():
    _knock_reveal_check(games=1500, per_state=10)


def test_oracle_observation_shows_the_opponent_hand():
    """Positive control of the leak test: the oracle option does show the opponent's hand,
    so a swap of a hidden card changes that observation."""
    rng = random.Random(2)
    state = snapshots(GIN, {}, 3, seed=1)[5]
    oracle = make_env(observe_opponent_hand=True)
    oracle.reset(options={"state": state.to_dict()})
    seen = observed(oracle, "player_0")[0]
    variant = next(v for what, v in hidden_variants(state, 0, rng) if what.startswith("swap opponent"))
    oracle.reset(options={"state": variant})
    assert not np.array_equal(seen, observed(oracle, "player_0")[0])


def test_sample_determinization_consistent_in_explicit_showdown():
    """In the explicit showdown the declaring player's undeclared cards (``remaining``) and
    declared melds must still make up that player's hand, and play must go on. In
    KNOCKER_MELD the knocker's redealt hand must still be one that can knock (the knock is
    public), otherwise it has no legal action."""
    rng = random.Random(29)
    states = snapshots(GIN, RULE_SETS["explicit"], 40, seed=4, special_only=True)
    assert {s.phase for s in states} == set(SHOWDOWN)
    for state in states:
        check_showdown_consistent(state)  # the real state is consistent
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            assert det.player_view(p) == state.player_view(p)
            play_out(GIN, det, rng, f"observer {p}, knocker {state.knocker}, phase {state.phase.name}")


# ---------------------------------------------------------------------------------------
# The deal, options, observation and action names particular to gin
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("as_ids", [False, True])
@pytest.mark.parametrize("dealer", [0, 1])
def test_reset_with_deck_and_dealer(as_ids, dealer):
    order = list(range(52))
    random.Random(8 + dealer).shuffle(order)
    deck = order if as_ids else [C.format_card(c).lower() if i % 2 else C.format_card(c) for i, c in enumerate(order)]
    env = make_env()
    raw = env.unwrapped
    env.reset(seed=5, options={"deck": deck, "dealer": dealer})
    nd = 1 - dealer
    nd_agent, d_agent = AGENTS[nd], AGENTS[dealer]
    assert raw.player_view(d_agent).is_dealer and not raw.player_view(nd_agent).is_dealer
    assert set(raw.player_view(nd_agent).hand) == set(order[0:20:2])
    assert set(raw.player_view(d_agent).hand) == set(order[1:20:2])
    assert raw.player_view(nd_agent).top_discard == order[20]
    assert raw.player_view(nd_agent).stock_size == 31
    assert raw.agent_selection == nd_agent and raw.game.phase == Phase.OFFER_ND
    env.step(G.PASS)
    env.step(G.PASS)
    assert raw.agent_selection == nd_agent and raw.game.phase == Phase.FORCED_DRAW
    env.step(G.DRAW_STOCK)
    assert order[21] in raw.player_view(nd_agent).hand
    assert set(raw.player_view(nd_agent).hand) == set(order[0:20:2]) | {order[21]}
    # the state dict of a game dealt from a given deck replays it
    d = raw.game.to_dict()
    if "initial_deck" in d:
        again = G.replay(raw.game.config, d["seed"], d["history"], d["initial_deck"], d.get("first_dealer"))
        assert again.to_dict() == d
    # a second draw later takes card 22
    hand = raw.player_view(nd_agent).hand
    env.step(G.DISCARD + hand[0])
    env.step(G.DRAW_STOCK)
    assert order[22] in raw.player_view(d_agent).hand


@pytest.mark.parametrize("kwargs, name", [
    ({"knock_limit": -1}, "knock_limit"),
    ({"knock_limit": 2.5}, "knock_limit"),
    ({"variant": "x"}, "variant"),
    ({"observe_opponent_hand": "yes"}, "observe_opponent_hand"),
    ({"stock_end_rule": "x"}, "stock_end_rule"),
    ({"layoff_mode": "x"}, "layoff_mode"),
    ({"knocker_arrangement": "x"}, "knocker_arrangement"),
    ({"next_dealer": "x"}, "next_dealer"),
    ({"shutout_rule": "x"}, "shutout_rule"),
    ({"target_score": 0}, "target_score"),
    ({"big_gin_bonus": -3}, "big_gin_bonus"),
    ({"undercut_on_tie": 1}, "undercut_on_tie"),
    ({"max_turns_per_hand": 0}, "max_turns_per_hand"),
    ({"knock_limt": 10}, "knock_limt"),
    ({"num_players": 3}, "num_players"),
])
def test_bad_constructor_options(kwargs, name):
    with pytest.raises(ValueError) as info:
        gin_rummy_v0.env(**kwargs)
    assert name in str(info.value), str(info.value)
    with pytest.raises(ValueError):
        gin_rummy_v0.raw_env(**kwargs)


@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_optional_segments(name):
    raw = make_env(**ENV_OPTION_SETS[name]).unwrapped
    layout = raw.observation_layout()
    assert ("scores" in layout) == (raw.config.episode == "match")
    assert ("opponent_hand" in layout) == raw.observe_opponent_hand


def test_observation_within_box_small_target():
    """The observation must stay inside its declared Box whatever the options: with a small
    ``target_score`` the match totals / target exceed the ``scores`` segment's high."""
    env = make_env(episode="match", target_score=1)
    box = env.observation_space("player_0")["observation"]
    rng = random.Random(0)
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        assert box.contains(obs["observation"]), f"observation outside its Box (scores {obs['observation'][-4:]})"
        env.step(None if term or trunc else knocky(env.unwrapped.game, rng))


def test_state_vector_holds_both_hands():
    env = make_env()
    raw = env.unwrapped
    env.reset(seed=0)
    st = env.state()
    assert st.shape == (raw.observation_size + 3 * 52 + 2,)
    tail = st[raw.observation_size:]
    assert set(np.flatnonzero(tail[:52]).tolist()) == set(C.from_mask(raw.game.hands[0]))
    assert set(np.flatnonzero(tail[52:104]).tolist()) == set(C.from_mask(raw.game.hands[1]))


def test_action_name_aliases():
    raw = gin_rummy_v0.raw_env()
    assert raw.str_to_action("TAKE_UPCARD") == G.TAKE_DISCARD
    assert raw.str_to_action("discard(10h)") == G.DISCARD + C.parse_card("TH")


# ---------------------------------------------------------------------------------------
# Public play, followed action by action without the engine's bookkeeping
# ---------------------------------------------------------------------------------------

FULL_STOCK = 31


@dataclass
class Public:
    """What both players have seen of the hand so far, and the match score from the hands won."""

    upcard: int
    dealer: int
    pile: list[int]
    stock: int = FULL_STOCK
    discarded: list[set[int]] = field(default_factory=lambda: [set(), set()])
    known: list[set[int]] = field(default_factory=lambda: [set(), set()])
    passed: list[bool] = field(default_factory=lambda: [False, False])
    taken: int | None = None
    knocker: int = -1
    declared: list[list[int]] = field(default_factory=lambda: [[], []])  # melds declared, per seat
    laid: list[tuple[int, int]] = field(default_factory=list)  # (card, slot)

    @classmethod
    def deal(cls, state: GinState) -> Public:
        """The public part of a fresh deal (or of a state dict read at the start of a hand)."""
        return cls(upcard=state.upcard, dealer=state.dealer, pile=list(state.pile), stock=len(state.stock),
                   passed=list(state.passed))

    def play(self, state: GinState, action: int) -> None:
        """Record ``action`` of the player to move in ``state`` (before it is applied)."""
        p, phase = state.current_player, state.phase
        if phase in (Phase.OFFER_ND, Phase.OFFER_D) and action == G.PASS:
            self.passed[0 if phase == Phase.OFFER_ND else 1] = True
        elif action == G.TAKE_DISCARD:
            self._take(p)
        elif action == G.DRAW_STOCK:
            self.stock -= 1
            self.taken = None
        elif G.DISCARD <= action < G.KNOCK:
            card = action - G.DISCARD
            self.pile.append(card)
            self.discarded[p].add(card)
            self.known[p].discard(card)
            self.taken = None
        elif G.KNOCK <= action < G.MELD or action == G.BIG_GIN:
            if phase == Phase.LAST_CHANCE:
                self._take(p)
            if action != G.BIG_GIN:
                self.known[p].discard(action - G.KNOCK)
            self.knocker, self.taken = p, None
        elif G.MELD <= action < G.LAYOFF:
            self.declared[p].append(C.from_mask(M.MELDS[action - G.MELD]))
        elif G.LAYOFF <= action < G.NUM_ACTIONS:
            self.laid.append(divmod(action - G.LAYOFF, C.NUM_CARDS)[::-1])

    def _take(self, p: int) -> None:
        card = self.pile.pop()
        self.known[p].add(card)
        self.taken = card


def oracle_legal(state: GinState, public: Public) -> set[int]:
    """The legal actions of the player to move, from the rules, the hands and the public record."""
    cfg, p, phase = state.config, state.current_player, state.phase
    hand = C.from_mask(state.hands[p])
    limit, _ = oracle_stakes(cfg, public.upcard)
    if phase in (Phase.OFFER_ND, Phase.OFFER_D):
        return {G.TAKE_DISCARD, G.PASS}
    if phase == Phase.FORCED_DRAW:
        return {G.DRAW_STOCK}
    if phase == Phase.DRAW:
        return {G.DRAW_STOCK, G.TAKE_DISCARD}
    if phase in (Phase.DISCARD, Phase.LAST_CHANCE):
        banned = public.taken if phase == Phase.DISCARD else public.pile[-1]
        if phase == Phase.LAST_CHANCE:
            hand = hand + [banned]
            out = {G.PASS}
        else:
            out = {G.DISCARD + c for c in hand if c != banned or cfg.allow_rediscard_taken_card}
        for c in hand:
            if (c != banned or cfg.allow_rediscard_taken_card) and oracle_deadwood([x for x in hand if x != c]) <= limit:
                out.add(G.KNOCK + c)
        if cfg.big_gin_bonus is not None and oracle_deadwood(hand) == 0:
            out.add(G.BIG_GIN)
        return out
    declared = [c for meld in public.declared[p] for c in meld]
    remaining = [c for c in hand if c not in declared and c not in {card for card, _ in public.laid}]
    table_melds = {m for m in _melds_within(remaining)}
    if phase == Phase.KNOCKER_MELD:
        limit = 0 if state.big_gin else limit
        out = {G.MELD + M.MELD_INDEX[C.to_mask(m)] for m in table_melds
               if oracle_deadwood([c for c in remaining if c not in m]) <= limit}
        return out | ({G.DONE} if hand_value(remaining) <= limit else set())
    if phase == Phase.DEFENDER_MELD:
        return {G.DONE} | {G.MELD + M.MELD_INDEX[C.to_mask(m)] for m in table_melds}
    assert phase == Phase.LAYOFF
    extents = [C.from_mask(m) for m in state.knocker_melds]
    for card, slot in public.laid:
        extents[slot].append(card)
    return {G.DONE} | {G.LAYOFF + slot * C.NUM_CARDS + c for c in remaining for slot, extent in enumerate(extents)
                       if can_lay_off(c, extent)}


def _melds_within(cards: list[int]) -> list[tuple[int, ...]]:
    """The melds of the meld table (sets of 3-4, runs of 3-5) made of these cards."""
    out = []
    for arrangement in all_arrangements(cards):
        out += [tuple(sorted(m)) for m in arrangement if len(m) <= 5]
    return sorted(set(out))


# ---------------------------------------------------------------------------------------
# Observations and views against the public record
# ---------------------------------------------------------------------------------------


def card_set(values: np.ndarray) -> set[int]:
    """The cards of a 0/1 card segment."""
    assert set(np.unique(values)) <= {0.0, 1.0}
    return set(counts(values))


def check_observation(env, public: Public, player: int, totals: list[int], wins: list[int]) -> None:
    """Every segment of ``player``'s observation, and the view, against the public record."""
    game, agent, opp = env.game, f"player_{player}", 1 - player
    seg, view = decode(env, agent), env.player_view(agent)
    limit, multiplier = oracle_stakes(game.config, public.upcard)
    hand = set(C.from_mask(game.hands[player]))
    top = public.pile[-1] if public.pile else None
    assert card_set(seg["hand"]) == hand == set(view.hand)
    assert card_set(seg["top_discard"]) == ({top} if top is not None else set()) and view.top_discard == top
    assert card_set(seg["discard_pile"]) == set(public.pile) and list(view.discard_pile) == public.pile
    assert card_set(seg["my_discards"]) == public.discarded[player] == set(view.discarded[0])
    assert card_set(seg["opponent_discards"]) == public.discarded[opp] == set(view.discarded[1])
    assert card_set(seg["opponent_known"]) == public.known[opp] == set(view.opponent_known)
    assert seg["stock_size"][0] == pytest.approx(public.stock / FULL_STOCK) and view.stock_size == public.stock
    assert card_set(seg["phase"]) == {int(game.phase)} and view.phase == game.phase
    assert seg["knock_limit"][0] == pytest.approx(limit / 10) and view.knock_limit == limit
    assert seg["doubled"][0] == (multiplier == 2) and view.multiplier == multiplier
    is_dealer = public.dealer == player
    assert list(seg["opening"]) == [is_dealer, *public.passed]
    assert view.is_dealer == is_dealer and view.upcard_passed == tuple(public.passed)
    assert list(seg["knocker"]) == [public.knocker == player, public.knocker == opp]
    assert view.knocker == (None if public.knocker < 0 else 0 if public.knocker == player else 1)
    assert view.taken_card == (public.taken if game.current_player == player else None)
    slots = [card_set(seg["knocker_melds"][i * C.NUM_CARDS : (i + 1) * C.NUM_CARDS]) for i in range(3)]
    assert slots[len(view.knocker_melds):] == [set()] * (3 - len(view.knocker_melds))
    assert slots[: len(view.knocker_melds)] == [set(m) for m in view.knocker_melds]
    assert card_set(seg["knocker_deadwood"]) == set(view.knocker_deadwood)
    assert card_set(seg["my_melds"]) == {c for m in view.my_melds for c in m}
    if public.knocker < 0:
        assert not any(slots) and not view.knocker_deadwood and not view.my_melds
    if "scores" in seg:
        target = game.config.target_score
        expected = [totals[player] / target, totals[opp] / target, wins[player] / 10, wins[opp] / 10]
        assert seg["scores"] == pytest.approx(expected)
        assert view.scores == (totals[player], totals[opp]) and view.hands_won == (wins[player], wins[opp])


def check_showdown_view(game: GinState, public: Public, player: int) -> None:
    """What each side sees of a showdown in progress (docs/gin_rummy.md#showdown): the defender
    the knocker's layout with the layoffs, the knocker its own arrangement without them."""
    view = game.player_view(player)
    k = public.knocker
    layout = [set(m) for m in view.knocker_melds]
    declared = sorted(c for m in public.declared[k] for c in m)
    if game.phase == Phase.KNOCKER_MELD:  # both see the melds declared so far
        assert sorted(c for m in layout for c in m) == declared
        return
    laid = {card for card, _ in public.laid}
    shown = {c for m in layout for c in m}
    if player == k:
        assert shown == set(declared) and {c for m in view.my_melds for c in m} == set(declared)
        assert view.layoffs == ()
    else:
        assert shown == set(declared) | laid
        assert {c for m in view.my_melds for c in m} == {c for m in public.declared[player] for c in m}
        assert list(view.layoffs) == public.laid
    assert set(view.knocker_deadwood) == set(C.from_mask(game.hands[k])) - set(declared)


# ---------------------------------------------------------------------------------------
# Determinizations
# ---------------------------------------------------------------------------------------


def check_determinization(state: GinState, rng: random.Random) -> None:
    """For each player: the sample looks the same to that player (same view), keeps every card
    whose place it knows, and redeals only the hidden cards among their places."""
    for p in (0, 1):
        det = state.sample_determinization(p, rng)
        opp = 1 - p
        assert det.player_view(p) == state.player_view(p)
        assert det.hands[p] == state.hands[p] and det.pile == state.pile
        assert det.discarded == state.discarded and det.known == state.known
        assert det.known[opp] & det.hands[opp] == state.known[opp]
        if state.knocker == opp:
            assert det.hands[opp] == state.hands[opp]
        if state.knocker == p:
            assert det.knock_card == state.knock_card
        hidden = state.hands[opp] & ~state.known[opp] if state.knocker != opp else 0
        pool = hidden | C.to_mask(state.stock) | (1 << state.knock_card if state.knocker == opp and
                                                  state.knock_card >= 0 else 0)
        det_pool = (det.hands[opp] & ~state.known[opp] if state.knocker != opp else 0) | C.to_mask(det.stock)
        det_pool |= 1 << det.knock_card if state.knocker == opp and det.knock_card >= 0 else 0
        assert det_pool == pool and len(det.stock) == len(state.stock)
        assert det.hands[opp].bit_count() == state.hands[opp].bit_count()


# ---------------------------------------------------------------------------------------
# Seeded games, checked at every decision
# ---------------------------------------------------------------------------------------


def varied(state: GinState, rng: random.Random) -> int:
    """Play that takes, passes and knocks often enough to reach every kind of state."""
    legal = state.legal_actions()
    knocks = [a for a in legal if G.KNOCK <= a < G.MELD or a == G.BIG_GIN]
    if knocks and rng.random() < 0.6:
        return rng.choice(knocks)
    if state.phase in (Phase.OFFER_ND, Phase.OFFER_D, Phase.DRAW) and rng.random() < 0.45:
        return G.TAKE_DISCARD
    if state.phase == Phase.DISCARD:
        discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
        hand = state.hands[state.current_player]
        return min(discards, key=lambda a: (M.min_deadwood(hand ^ 1 << (a - G.DISCARD)), rng.random()))
    if state.phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF):
        melds = [a for a in legal if a != G.DONE]
        return rng.choice(melds) if melds and rng.random() < 0.8 else (G.DONE if G.DONE in legal else melds[0])
    return rng.choice(legal)


def play_checked(options: dict, seed: int, max_steps: int, start: dict | None = None, oracle_every: int = 1) -> GinState:
    """Play a seeded game through the raw env, checking at every decision the observations of
    both players, the legal actions (every ``oracle_every``-th decision) and a determinization."""
    env = gin_rummy_v0.raw_env(**options)
    env.reset(seed=seed, options={"state": start} if start else None)
    game, rng = env.game, random.Random(seed)
    public = Public.deal(game)
    totals, wins = list(game.match.totals), list(game.match.wins)
    for step in range(max_steps):
        for player in (0, 1):
            check_observation(env, public, player, totals, wins)
            if public.knocker >= 0 and not game.is_terminal():
                check_showdown_view(game, public, player)
        if game.is_terminal():
            break
        if step % oracle_every == 0:
            assert set(game.legal_actions()) == oracle_legal(game, public), (step, game.phase.name)
            check_determinization(game, rng)
        action = varied(game, rng)
        hands_before = len(game.hand_results)
        public.play(game, action)
        env.step(action)
        if len(game.hand_results) > hands_before:
            result = game.hand_results[-1]
            if result.winner >= 0:
                wins[result.winner] += 1
                box = game.config.box_bonus if game.config.boxes_count_toward_target else 0
                totals[result.winner] += result.points[result.winner] + box
            if not game.is_terminal():
                public = Public.deal(game)
    return game


GAMES = {
    "standard": ({}, 3),
    "oklahoma": ({"variant": "oklahoma", "oklahoma_ace_gin_only": False}, 3),
    "explicit": ({"knocker_arrangement": "explicit", "layoff_mode": "explicit", "big_gin_bonus": 31}, 3),
    "last_chance": ({"stock_end_rule": "opponent_last_chance", "dead_stock_size": 12, "big_gin_bonus": 31,
                     "allow_rediscard_taken_card": True}, 3),
    "match": ({"episode": "match", "target_score": 60, "variant": "oklahoma", "boxes_count_toward_target": True}, 2),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_observations_masks_and_determinizations_over_seeded_games(name):
    options, games = GAMES[name]
    for seed in range(games):
        play_checked(options, seed, max_steps=400 if options.get("episode") == "match" else 200, oracle_every=2)


def test_observations_in_a_match_started_from_given_scores():
    """The score segments show each side's own total (the totals differ), over a few hands."""
    state = GinState(GinConfig(episode="match", target_score=150), seed=4)
    data = state.to_dict()
    data["match"] = {"totals": [37, 92], "wins": [2, 5], "winner": -1}
    game = play_checked({"episode": "match", "target_score": 150}, 4, max_steps=150, start=data, oracle_every=5)
    assert len(game.hand_results) >= 1


# ---------------------------------------------------------------------------------------
# Rewards on a reset from a finished state
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_win_loss_paid_on_reset_from_a_finished_state(episode):
    state = GinState(GinConfig(episode=episode), seed=0,
                     deck=make_deck("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C"),
                     dealer=1)
    if episode == "match":
        data = state.to_dict()
        data["match"] = {"totals": [95, 0], "wins": [3, 0], "winner": -1}
        state = GinState.from_dict(data)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
        state.apply(G.str_to_action(name))
    assert state.is_terminal()
    env = gin_rummy_v0.env(reward="win_loss", episode=episode)
    env.reset(options={"state": state.to_dict()})
    paid = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated and not truncated
        paid[agent] = reward
        env.step(None)
    assert paid == {"player_0": 1.0, "player_1": -1.0}
