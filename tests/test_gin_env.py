"""The gin_rummy_v0 environment and the engine under it, tested as DESIGN.md asks of every
game: PettingZoo's api_test and seed_test, invariants over random play (cards conserved,
the mask is exactly the set of actions the engine accepts, rewards sum to zero, episodes
end, returns match), information leaks (observation, mask and player view do not change
when cards hidden from the player change; determinizations keep the player's view),
illegal-action atomicity, seeding and reset options, option validation, state dicts and
replay, the observation layout, rendering, action names and the dead-step convention.

Fast versions run in CI (about 200 engine games per configuration); the thousands-of-games
versions are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter

import numpy as np
import pytest

import rummy_envs
from rummy_envs import IllegalActionError, gin_rummy_v0
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import rank_rewards
from rummy_envs.games import gin as G
from rummy_envs.games.gin import GinConfig, GinState, Phase
from env_contract import pettingzoo_checks

slow = pytest.mark.slow
AGENTS = ["player_0", "player_1"]
SHOWDOWN = (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF)

# The option sets the brief names; each is an env configuration (rules + env options).
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
    if multiplier is not None:  # the hand's formula (§7), where the multiplier is known
        bonus = {"gin": config.gin_bonus, "big_gin": config.big_gin_bonus}.get(result.kind)
        expected = {"gin": (bonus or 0) + d, "big_gin": (bonus or 0) + d, "knock": d - k,
                    "undercut": k - d + config.undercut_bonus}[result.kind]
        assert result.points[w] == expected * multiplier, result


def assert_mask_exact(state: GinState, mask: np.ndarray) -> None:
    """Try every action id on a clone: apply succeeds iff the mask has a 1."""
    before = state.to_dict()
    for a in range(G.NUM_ACTIONS):
        trial = state.clone()
        try:
            trial.apply(a)
            accepted = True
        except IllegalActionError:
            accepted = False
        assert accepted == bool(mask[a]), \
            f"action {a} {G.action_to_str(a)}: engine accepts={accepted}, mask={mask[a]} in {state.phase.name}"
    assert state.to_dict() == before, "clone() is not independent of the original"


def play_engine(config: GinConfig, seed: int, policy, rng: random.Random, on_state=None) -> GinState:
    """One game of the engine with per-action invariant checks."""
    s = GinState(config, seed)
    bound = step_bound(config)
    steps = 0
    hands_seen = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        assert legal and legal == sorted(set(legal)) and all(0 <= a < G.NUM_ACTIONS for a in legal)
        if on_state is not None:
            on_state(s)
        multiplier = s.multiplier
        s.apply(policy(s, rng))
        steps += 1
        assert steps <= bound, "game did not terminate"
        check_cards_conserved(s)
        check_hand_sizes(s)
        check_showdown_consistent(s)
        if len(s.hand_results) != hands_seen:
            hands_seen = len(s.hand_results)
            check_hand_result(config, s.hand_results[-1], multiplier)
    assert s.legal_actions() == [] and s.current_player == -1
    returns = s.returns()
    assert len(returns) == 2 and abs(sum(returns)) < 1e-9
    if config.episode == "hand":
        assert len(s.hand_results) == 1
        assert s.truncated == (s.hand_results[0].kind == "turn_cap")
        assert s.scores() == s.hand_results[0].points
    else:
        assert 1 <= len(s.hand_results) <= config.max_hands_per_match
        assert s.truncated == (s.match.winner < 0)
        if not s.truncated:
            assert s.match.totals[s.match.winner] >= config.target_score
    return s


def play_env(env, rng: random.Random, policy, exhaustive_prob: float = 0.0) -> tuple[dict, GinState, int]:
    """One episode through the wrapped env, the AEC way (agent_iter, last, step), checking
    masks, rewards, observations and cards at every step. Returns each agent's total of
    the rewards it was given by last(), the final engine state and the number of moves."""
    raw = env.unwrapped
    box = env.observation_space("player_0")["observation"]
    totals = dict.fromkeys(AGENTS, 0.0)
    bound = step_bound(raw.game.config)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        assert box.contains(obs["observation"]), "observation outside its Box"
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (G.NUM_ACTIONS,)
        if term or trunc:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        g = raw.game
        check_cards_conserved(g)
        assert agent == AGENTS[g.current_player]
        mask = obs["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == set(g.legal_actions())
        other = AGENTS[1 - g.current_player]
        assert not env.observe(other)["action_mask"].any(), "the waiting agent has a legal action"
        assert raw.player_view(agent).legal_actions == tuple(g.legal_actions())
        assert raw.player_view(other).legal_actions == ()
        if g.phase in SHOWDOWN or g.phase == Phase.LAST_CHANCE or rng.random() < exhaustive_prob:
            assert_mask_exact(g, mask)
        env.step(policy(g, rng))
        steps += 1
        assert steps <= bound, "episode did not terminate"
        assert abs(sum(raw.rewards.values())) < 1e-9, f"rewards do not sum to zero: {raw.rewards}"
    assert env.agents == []
    return totals, raw.game, steps


def snapshots(rule_options: dict, games: int, seed: int, every: float = 0.15, showdown_only: bool = False,
              per_game: int = 12) -> list[GinState]:
    """Clones of states from knocky and uniform games: each state is kept with probability
    ``every`` (showdown and last-chance states always), at most ``per_game`` per game.
    Matches are long, so there ``every`` is divided by 30 to spread the picks over hands."""
    rng = random.Random(seed)
    config = GinConfig(**rule_options)
    if config.episode == "match":
        every /= 30
    out: list[GinState] = []
    for i in range(games):
        s = GinState(config, seed * 1000 + i)
        policy = knocky if i % 3 or config.episode == "match" else uniform
        kept = 0
        while not s.is_terminal():
            special = s.phase in SHOWDOWN or s.phase == Phase.LAST_CHANCE
            if kept < per_game and (special or (not showdown_only and rng.random() < every)):
                out.append(s.clone())
                kept += 1
            s.apply(policy(s, rng))
    return out


def make_env(**options):
    return gin_rummy_v0.env(**options)


# ---------------------------------------------------------------------------------------
# 1. PettingZoo api_test and seed_test
# ---------------------------------------------------------------------------------------


test_api_test, test_seed_test = pettingzoo_checks(make_env, ENV_OPTION_SETS)


def test_metadata_and_registry():
    assert rummy_envs.ENVS["gin_rummy"] is gin_rummy_v0
    meta = gin_rummy_v0.raw_env.metadata
    assert meta["name"] == "gin_rummy_v0" and meta["render_modes"] == ["human", "ansi"]
    assert meta["is_parallelizable"] is False
    env = make_env()
    assert env.possible_agents == AGENTS
    assert env.action_space("player_0").n == G.NUM_ACTIONS
    assert issubclass(IllegalActionError, ValueError)


# ---------------------------------------------------------------------------------------
# 2. Invariants over random play
# ---------------------------------------------------------------------------------------


def _engine_invariants(name: str, games: int) -> None:
    config = GinConfig(**RULE_SETS[name])
    rng = random.Random(hash(name) % 1000)
    kinds: dict[str, int] = {}
    for i in range(games):
        policy = POLICIES[i % 2] if config.episode == "hand" else knocky
        s = play_engine(config, seed=10_000 + i, policy=policy, rng=rng)
        for r in s.hand_results:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
    assert sum(kinds.values()) >= games
    if name != "caps":
        assert kinds.get("knock", 0) + kinds.get("gin", 0) > 0, kinds


FAST_GAMES = {name: (40 if name in MATCH_SETS else 200) for name in RULE_SETS}


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_engine_invariants(name):
    _engine_invariants(name, FAST_GAMES[name])


@slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_engine_invariants_slow(name):
    _engine_invariants(name, 3000 if name not in MATCH_SETS else 600)


def _env_invariants(name: str, episodes: int, exhaustive_prob: float) -> None:
    options = ENV_OPTION_SETS[name]
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(7)
    for i in range(episodes):
        env.reset(seed=500 + i)
        policy = knocky if (i % 2 or raw.config.episode == "match") else uniform
        totals, game, _ = play_env(env, rng, policy, exhaustive_prob)
        assert abs(sum(totals.values())) < 1e-9
        scores = game.scores()
        if raw.reward_mode == "points":
            expected = [r / raw.reward_scale for r in game.returns()]
        else:
            expected = rank_rewards(scores)
        for p, a in enumerate(AGENTS):
            assert totals[a] == pytest.approx(expected[p]), (name, totals, expected, scores)


ENV_FAST_EPISODES = {"match": 4}


@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_env_invariants(name):
    _env_invariants(name, ENV_FAST_EPISODES.get(name, 40), exhaustive_prob=0.03)


@slow
@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_env_invariants_slow(name):
    _env_invariants(name, 100 if name == "match" else 1000, exhaustive_prob=0.03)


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
        totals, game, _ = play_env(env, rng, knocky, exhaustive_prob=0.02)
        expected = ([r / raw.reward_scale for r in game.returns()] if raw.reward_mode == "points"
                    else [r / raw.reward_scale for r in rank_rewards(game.scores())])
        assert [totals[a] for a in AGENTS] == pytest.approx(expected)


def test_hand_mode_cumulative_rewards_equal_returns():
    """In hand mode all the reward comes at the last move: the cumulative rewards then are
    the engine's returns (points) for both agents, and infos carry the hand result."""
    env = make_env()
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
# 3. Information leaks
# ---------------------------------------------------------------------------------------


def hidden_variants(state: GinState, p: int, rng: random.Random) -> list[tuple[str, dict]]:
    """State dicts that differ from ``state`` only in what player ``p`` cannot see:
    an unseen card of the opponent swapped with a stock card, the stock reordered, and
    (when the opponent knocked) the face-down knock card swapped with a stock card."""
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
    if len(d["stock"]) >= 2:
        v = copy.deepcopy(d)
        while v["stock"] == d["stock"]:
            rng.shuffle(v["stock"])
        out.append(("shuffle stock", v))
    if state.knocker == opp and d["knock_card"] is not None and d["stock"]:
        v = copy.deepcopy(d)
        j = rng.randrange(len(d["stock"]))
        v["knock_card"], v["stock"][j] = v["stock"][j], v["knock_card"]
        out.append(("swap knock card with stock card", v))
    return out


def _observed(env, agent: str):
    o = env.observe(agent)
    return o["observation"].copy(), o["action_mask"].copy(), env.unwrapped.player_view(agent)


def _role(state: GinState, p: int) -> str:
    if state.knocker < 0:
        return "to move" if state.current_player == p else "waiting"
    return "knocker" if state.knocker == p else "defender"


def _leak_check(name: str, games: int, showdown_only: bool = False, ahead: int = 2) -> Counter:
    """Compare player p's observation, mask and view between each state and its hidden
    variants, then again after p plays the same move in both (up to ``ahead`` moves that
    neither draw from the stock nor end the hand, since those reveal cards)."""
    rules = RULE_SETS[name]
    env = make_env(**rules)
    raw = env.unwrapped
    rng = random.Random(17)
    checked: Counter = Counter()
    for state in snapshots(rules, games, seed=len(name), every=0.1, showdown_only=showdown_only):
        for p in (0, 1):
            agent = AGENTS[p]
            env.reset(options={"state": state.to_dict()})
            original = _observed(env, agent)
            moves = []
            if state.current_player == p:
                moves = [a for a in state.legal_actions() if a != G.DRAW_STOCK]
                moves = rng.sample(moves, min(ahead, len(moves)))
            for what, variant in hidden_variants(state, p, rng):
                env.reset(options={"state": variant})
                assert raw.game.to_dict() != state.to_dict()
                obs, mask, view = _observed(env, agent)
                where = f"{what}, observer {agent} ({_role(state, p)}), phase {state.phase.name}"
                assert np.array_equal(obs, original[0]), f"observation changed: {where}"
                assert np.array_equal(mask, original[1]), f"action mask changed: {where}"
                assert view == original[2], f"player_view changed: {where}"
                checked[(state.phase.name, _role(state, p))] += 1
                for a in moves:
                    after = []
                    for d in (state.to_dict(), variant):
                        env.reset(options={"state": d})
                        env.step(a)
                        after.append(_observed(env, agent) if not raw.game.hand_results else None)
                    if after[0] is None or after[1] is None:
                        continue  # the hand ended: the showdown is public
                    where_a = f"{where}, after {G.action_to_str(a)}"
                    assert np.array_equal(after[0][0], after[1][0]), f"observation changed: {where_a}"
                    assert np.array_equal(after[0][1], after[1][1]), f"action mask changed: {where_a}"
                    assert after[0][2] == after[1][2], f"player_view changed: {where_a}"
                    checked[("after move", G.action_to_str(a).split("(")[0])] += 1
    return checked


@pytest.mark.parametrize("name", ["default", "match", "oklahoma", "last_chance_big_gin", "explicit"])
def test_information_leak(name):
    assert sum(_leak_check(name, games=12).values()) > 50


def test_information_leak_explicit_showdown():
    """In KNOCKER_MELD, DEFENDER_MELD and LAYOFF the knocker must not see the defender's
    undeclared cards, also after its own showdown moves. (The knocker's hand is face up for
    the defender from the knock on, so only the stock order is hidden from the defender.)"""
    checked = _leak_check("explicit", games=40, showdown_only=True)
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
                seen = _observed(env, AGENTS[p])
                # other defender hands p cannot tell apart: redealt by a determinization
                for _ in range(per_state):
                    other = s.sample_determinization(p, rng)
                    env.reset(options={"state": other.to_dict()})
                    env.step(knock)
                    obs, _, view = _observed(env, AGENTS[p])
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


@slow
@pytest.mark.parametrize("name", ["default", "match", "oklahoma", "last_chance_big_gin", "explicit",
                                  "explicit_oklahoma_match"])
def test_information_leak_slow(name):
    _leak_check(name, games=300)


def test_leak_check_has_teeth():
    """Positive control: changing the observer's own hand does change its observation,
    and the oracle option shows the opponent's hand."""
    rng = random.Random(2)
    state = snapshots({}, 3, seed=1)[5]
    d = state.to_dict()
    p = 0
    x, y = d["hands"][p][0], d["stock"][0]
    v = copy.deepcopy(d)
    v["hands"][p] = [y] + v["hands"][p][1:]
    v["stock"][0] = x
    env = make_env()
    env.reset(options={"state": d})
    before = _observed(env, "player_0")
    env.reset(options={"state": v})
    after = _observed(env, "player_0")
    assert not np.array_equal(before[0], after[0]) and before[2] != after[2]
    oracle = make_env(observe_opponent_hand=True)
    oracle.reset(options={"state": d})
    seen = _observed(oracle, "player_0")[0]
    variant = next(v for what, v in hidden_variants(state, 0, rng) if what.startswith("swap opponent"))
    oracle.reset(options={"state": variant})
    assert not np.array_equal(seen, _observed(oracle, "player_0")[0])


def _determinization_check(name: str, games: int) -> None:
    rng = random.Random(23)
    changed = 0
    for state in snapshots(RULE_SETS[name], games, seed=3, every=0.1):
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            check_cards_conserved(det)
            assert det.view(p) == state.view(p), f"p-view changed by determinization in {state.phase.name}"
            assert det.hands[p] == state.hands[p]
            assert len(det.stock) == len(state.stock) and det.pile == state.pile
            changed += det.to_dict() != state.to_dict()
            assert state.to_dict() == state.clone().to_dict()
    assert changed > 0


@pytest.mark.parametrize("name", ["default", "match", "oklahoma", "last_chance_big_gin", "explicit"])
def test_sample_determinization_keeps_view_and_cards(name):
    _determinization_check(name, games=15)


def _play_out_determinization(det: GinState, rng: random.Random, where: str) -> None:
    """A determinization is a state the game could be in: consistent, and play goes on
    from it to the end of the hand (a non-terminal state always has a legal action)."""
    check_cards_conserved(det)
    check_showdown_consistent(det)
    hands = len(det.hand_results)
    while not det.is_terminal() and len(det.hand_results) == hands:
        assert det.legal_actions(), f"determinization has no legal action in {det.phase.name} ({where})"
        det.apply(rng.choice(det.legal_actions()))
        check_cards_conserved(det)
        check_hand_sizes(det)
        check_showdown_consistent(det)


def _determinizations_play_on(name: str, games: int) -> None:
    rng = random.Random(27)
    states = snapshots(RULE_SETS[name], games, seed=9, every=0.1, per_game=8)
    for state in states:
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            assert det.view(p) == state.view(p)
            _play_out_determinization(det, rng, f"observer {p}, phase {state.phase.name}")


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_sample_determinization_plays_on(name):
    _determinizations_play_on(name, 8)


@slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_sample_determinization_plays_on_slow(name):
    _determinizations_play_on(name, 200)


def test_sample_determinization_consistent_in_explicit_showdown():
    """In the explicit showdown the declaring player's undeclared cards (``remaining``) and
    declared melds must still make up that player's hand, and play must go on. In
    KNOCKER_MELD the knocker's redealt hand must still be one that can knock (the knock is
    public), otherwise it has no legal action."""
    rng = random.Random(29)
    states = snapshots(RULE_SETS["explicit"], 40, seed=4, showdown_only=True)
    assert {s.phase for s in states} == set(SHOWDOWN)
    for state in states:
        check_showdown_consistent(state)  # the real state is consistent
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            assert det.view(p) == state.view(p)
            _play_out_determinization(det, rng, f"observer {p}, knocker {state.knocker}, phase {state.phase.name}")


# ---------------------------------------------------------------------------------------
# 4. Illegal actions
# ---------------------------------------------------------------------------------------


def _snapshot(env) -> dict:
    raw = env.unwrapped
    return {
        "obs": {a: tuple(x.copy() for x in env.observe(a).values()) for a in AGENTS},
        "views": {a: raw.player_view(a) for a in AGENTS},
        "rewards": dict(raw.rewards),
        "cumulative": dict(raw._cumulative_rewards),
        "terminations": dict(raw.terminations),
        "truncations": dict(raw.truncations),
        "infos": copy.deepcopy(raw.infos),
        "agents": list(raw.agents),
        "selection": raw.agent_selection,
        "game": raw.game.to_dict(),
    }


def _same(a: dict, b: dict) -> bool:
    for agent in AGENTS:
        for x, y in zip(a["obs"][agent], b["obs"][agent]):
            if not np.array_equal(x, y):
                return False
    return all(a[k] == b[k] for k in a if k != "obs")


@pytest.mark.parametrize("name", ["default", "match", "explicit", "last_chance_big_gin"])
def test_illegal_action_atomic(name):
    env = make_env(**ENV_OPTION_SETS.get(name, RULE_SETS.get(name)))
    raw = env.unwrapped
    rng = random.Random(31)
    tried = 0
    for i in range(10):
        env.reset(seed=70 + i)
        for _ in range(150):  # matches are long: their first 150 moves
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
            g = raw.game
            if rng.random() < 0.2 or g.phase in SHOWDOWN:
                agent = raw.agent_selection
                mask = env.observe(agent)["action_mask"]
                illegal = [int(a) for a in np.flatnonzero(mask == 0)]
                candidates = [rng.choice(illegal), np.int64(rng.choice(illegal)), None, "DISCARD(AS)", -1,
                              G.NUM_ACTIONS, 2.0, True]
                for action in candidates:
                    before = _snapshot(env)
                    with pytest.raises(IllegalActionError) as info:
                        env.step(action)
                    message = str(info.value)
                    assert isinstance(info.value, ValueError)
                    assert agent in message and g.phase.name in message, message
                    assert (str(action) in message) or (repr(action) in message), message
                    assert _same(before, _snapshot(env)), f"illegal action {action!r} changed the env"
                    tried += 1
            env.step(knocky(g, rng))
    assert tried > 100


def test_engine_illegal_action_atomic():
    rng = random.Random(37)
    for state in snapshots(RULE_SETS["explicit"], 10, seed=5, every=0.2):
        before = state.to_dict()
        legal = set(state.legal_actions())
        for a in rng.sample([a for a in range(G.NUM_ACTIONS) if a not in legal], 5) + [-1, G.NUM_ACTIONS]:
            with pytest.raises(IllegalActionError):
                state.apply(a)
            assert state.to_dict() == before and state.legal_actions() == sorted(legal)


def test_illegal_action_terminate():
    env = make_env(illegal_action="terminate")
    raw = env.unwrapped
    rng = random.Random(41)
    for i, bad in enumerate([None, -1, G.NUM_ACTIONS, "x", 3]):
        env.reset(seed=i)
        for _ in range(rng.randrange(0, 12)):
            env.step(knocky(raw.game, rng))
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            continue
        offender = raw.agent_selection
        if bad == 3:
            assert 3 not in raw.game.legal_actions()
        env.step(bad)
        assert all(raw.terminations.values())
        other = AGENTS[1 - AGENTS.index(offender)]
        assert raw._cumulative_rewards[offender] == -1.0 and raw._cumulative_rewards[other] == 1.0
        assert raw.rewards[offender] == -1.0 and raw.rewards[other] == 1.0
        totals = dict.fromkeys(AGENTS, 0.0)
        for agent in env.agent_iter():
            _, r, term, trunc, _ = env.last()
            assert term or trunc
            totals[agent] += r
            env.step(None)
        assert totals == {offender: -1.0, other: 1.0}
        assert env.agents == []


# ---------------------------------------------------------------------------------------
# 5. Seeding, reset options and option validation
# ---------------------------------------------------------------------------------------


def _trajectory(env, seed, action_seed: int, steps: int = 200):
    raw = env.unwrapped
    env.reset(seed=seed)
    rng = random.Random(action_seed)
    out = [raw.game.to_dict()]
    for _ in range(steps):
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            break
        obs = env.observe(raw.agent_selection)
        out.append((raw.agent_selection, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        env.step(knocky(raw.game, rng))
    out.append(raw.game.to_dict())
    out.append(dict(raw.rewards))
    return out


def test_same_seed_same_game():
    env = make_env(episode="match", target_score=30)
    first = _trajectory(env, 123, action_seed=1)
    env.reset()  # something in between
    env.step(raw_first_action(env))
    second = _trajectory(env, 123, action_seed=1)
    assert first == second
    other = make_env(episode="match", target_score=30)
    assert _trajectory(other, 123, action_seed=1) == first


def raw_first_action(env) -> int:
    return env.unwrapped.game.legal_actions()[0]


def test_unseeded_reset_continues_deterministically():
    e1, e2 = make_env(), make_env()
    e1.reset(seed=99)
    e2.reset(seed=99)
    deals1, deals2 = [e1.unwrapped.game.to_dict()], [e2.unwrapped.game.to_dict()]
    for _ in range(3):
        e1.reset()
        e2.reset()
        deals1.append(e1.unwrapped.game.to_dict())
        deals2.append(e2.unwrapped.game.to_dict())
    assert deals1 == deals2
    hands = [tuple(map(tuple, d["hands"])) for d in deals1]
    assert len(set(hands)) == len(hands), "unseeded resets repeat the deal"


def test_different_seeds_different_deals():
    env = make_env()
    deals = set()
    for seed in range(30):
        env.reset(seed=seed)
        deals.add(tuple(map(tuple, env.unwrapped.game.to_dict()["hands"])))
    assert len(deals) == 30


def test_reset_never_drops_constructor_options():
    env = make_env(knock_limit=5, episode="match", gin_bonus=20, reward_scale=2.0)
    raw = env.unwrapped
    layout = raw.observation_layout()
    size = raw.observation_size
    deck = [C.format_card(c) for c in range(52)]
    resets = [dict(seed=1), dict(), dict(seed=2), dict(options={"deck": deck}), dict(options={"dealer": 1}),
              dict(options={"deck": deck, "dealer": 0}), dict()]
    for kwargs in resets:
        env.reset(**kwargs)
        assert raw.game.config.knock_limit == 5 and raw.game.config.gin_bonus == 20
        assert raw.game.config.episode == "match" and raw.reward_scale == 2.0
        assert raw.player_view("player_0").knock_limit == 5
        assert raw.observation_layout() == layout and raw.observation_size == size
        assert env.observe("player_0")["observation"].shape == (size,)
        assert env.observation_space("player_0")["observation"].shape == (size,)
    # a hand-written state without options takes the env's options
    state = GinState(GinConfig(), seed=4).to_dict()
    del state["options"]
    env.reset(options={"state": state})
    assert raw.game.config.knock_limit == 5 and raw.game.config.episode == "match"
    env.reset()
    assert raw.game.config.knock_limit == 5 and raw.game.config.gin_bonus == 20


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


def test_reset_dealer_option_alone():
    env = make_env()
    for dealer in (0, 1, 0):
        env.reset(options={"dealer": dealer})
        assert env.unwrapped.game.dealer == dealer
        assert env.unwrapped.player_view(AGENTS[dealer]).is_dealer
        assert env.agent_selection == AGENTS[1 - dealer]


def _good_deck() -> list[str]:
    return [C.format_card(c) for c in range(52)]


@pytest.mark.parametrize("deck, needle", [
    (_good_deck()[:51] + ["AC"], "AC"),  # duplicate
    (_good_deck()[:51], "51"),  # too short
    (_good_deck() + ["AC"], "53"),  # too long
    (_good_deck()[:51] + ["JK"], "JK"),  # a joker
    (_good_deck()[:51] + ["ZZ"], "ZZ"),  # a bad string
    (list(range(51)) + [52], "JK"),  # the joker id
    (list(range(51)) + [99], "99"),  # an id out of range
])
def test_bad_deck_rejected(deck, needle):
    env = make_env()
    with pytest.raises(ValueError) as info:
        env.reset(seed=1, options={"deck": deck})
    message = str(info.value)
    assert needle in message, message
    assert "deck" in message or "card" in message, message


@pytest.mark.parametrize("dealer", [2, -1, "0"])
def test_bad_dealer_rejected(dealer):
    with pytest.raises(ValueError, match="dealer"):
        make_env().reset(options={"dealer": dealer})


@pytest.mark.parametrize("kwargs, name", [
    ({"knock_limit": -1}, "knock_limit"),
    ({"knock_limit": 2.5}, "knock_limit"),
    ({"variant": "x"}, "variant"),
    ({"reward": "x"}, "reward"),
    ({"reward_scale": 0}, "reward_scale"),
    ({"reward_scale": -1.0}, "reward_scale"),
    ({"illegal_action": "ignore"}, "illegal_action"),
    ({"render_mode": "rgb_array"}, "render_mode"),
    ({"observe_opponent_hand": "yes"}, "observe_opponent_hand"),
    ({"episode": "tournament"}, "episode"),
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


# ---------------------------------------------------------------------------------------
# 6. State dicts and replay
# ---------------------------------------------------------------------------------------


def _dict_and_replay(name: str, games: int) -> None:
    config = GinConfig(**RULE_SETS[name])
    rng = random.Random(43)
    checked = 0
    for i in range(games):
        policy = knocky if i % 2 or config.episode == "match" else uniform
        deck = dealer = None
        if i % 4 == 3:
            deck = list(range(52))
            rng.shuffle(deck)
            dealer = i % 2
        s = GinState(config, 300 + i, deck, dealer)
        while True:
            if rng.random() < 0.08 or s.phase in SHOWDOWN or s.is_terminal():
                d = s.to_dict()
                text = json.dumps(d)
                assert json.loads(text) == d
                rebuilt = GinState.from_dict(json.loads(text))
                assert rebuilt.to_dict() == d
                assert rebuilt.legal_actions() == s.legal_actions()
                assert all(rebuilt.view(p) == s.view(p) for p in (0, 1))
                assert rebuilt.returns() == s.returns() and rebuilt.is_terminal() == s.is_terminal()
                # the rebuilt state plays on exactly like the original
                a, b = s.clone(), rebuilt
                r1, r2 = random.Random(i), random.Random(i)
                for _ in range(30):
                    if a.is_terminal():
                        break
                    a.apply(policy(a, r1))
                    b.apply(policy(b, r2))
                assert a.to_dict() == b.to_dict()
                checked += 1
            if s.is_terminal():
                break
            s.apply(policy(s, rng))
        assert G.replay(config, 300 + i, s.history, deck, dealer).to_dict() == s.to_dict()
        d = s.to_dict()
        if deck is None:
            assert G.replay(config, d["seed"], d["history"]).to_dict() == d
        if "initial_deck" in d:  # the dict alone replays the game, given deck included
            assert G.replay(config, d["seed"], d["history"], d["initial_deck"], d.get("first_dealer")).to_dict() == d
    assert checked > games


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_state_dict_round_trip_and_replay(name):
    _dict_and_replay(name, 6 if name in MATCH_SETS else 30)


@slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_state_dict_round_trip_and_replay_slow(name):
    _dict_and_replay(name, 100 if name in MATCH_SETS else 500)


def test_reset_from_state_dict_continues_the_game():
    env = make_env(layoff_mode="explicit", knocker_arrangement="explicit")
    raw = env.unwrapped
    rng = random.Random(47)
    for state in snapshots(RULE_SETS["explicit"], 5, seed=6, every=0.2)[:40]:
        env.reset(options={"state": state.to_dict()})
        assert raw.game.to_dict() == state.to_dict()
        assert raw.agent_selection == AGENTS[state.current_player]
        mask = env.observe(raw.agent_selection)["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == set(state.legal_actions())
        totals, game, _ = play_env(env, rng, knocky)
        assert abs(sum(totals.values())) < 1e-9


def test_state_option_cannot_be_combined():
    env = make_env()
    env.reset(seed=1)
    d = env.unwrapped.game.to_dict()
    with pytest.raises(ValueError, match="state"):
        env.reset(options={"state": d, "dealer": 0})


def test_bad_state_dict_rejected():
    d = GinState(GinConfig(), seed=1).to_dict()
    d["stock"] = d["stock"][1:]  # a card vanishes
    with pytest.raises(ValueError):
        GinState.from_dict(d)
    with pytest.raises(ValueError):
        make_env().reset(options={"state": d})


# ---------------------------------------------------------------------------------------
# 7. Observation layout, state(), rendering, action names
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_observation_layout(name):
    env = make_env(**ENV_OPTION_SETS[name])
    raw = env.unwrapped
    layout = raw.observation_layout()
    segments = list(layout.values())
    assert [s.name for s in segments] == list(layout) and len(set(layout)) == len(layout)
    offset = 0
    for seg in sorted(segments, key=lambda s: s.offset):
        assert seg.offset == offset and seg.size > 0, seg
        offset += seg.size
    box = env.observation_space("player_0")["observation"]
    assert offset == box.shape[0] == raw.observation_size
    assert box.dtype == np.float32 and np.all(box.low == 0)
    for seg in segments:
        assert np.all(box.high[seg.offset:seg.offset + seg.size] == seg.high)
    assert ("scores" in layout) == (raw.config.episode == "match")
    assert ("opponent_hand" in layout) == raw.observe_opponent_hand
    # a few segments decode to what the view says
    env.reset(seed=3)
    for a in AGENTS:
        obs = env.observe(a)["observation"]
        view = raw.player_view(a)
        hand = layout["hand"]
        assert set(np.flatnonzero(obs[hand.offset:hand.offset + hand.size]).tolist()) == set(view.hand)
        phase = layout["phase"]
        assert np.flatnonzero(obs[phase.offset:phase.offset + phase.size]).tolist() == [int(view.phase)]
        top = layout["top_discard"]
        assert np.flatnonzero(obs[top.offset:top.offset + top.size]).tolist() == [view.top_discard]


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


def test_state_vector():
    env = make_env()
    raw = env.unwrapped
    rng = random.Random(53)
    lengths = set()
    for i in range(5):
        env.reset(seed=i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            st = env.state()
            assert isinstance(st, np.ndarray) and st.dtype == np.float32 and st.ndim == 1
            lengths.add(st.shape[0])
            env.step(knocky(raw.game, rng))
        lengths.add(env.state().shape[0])
    assert lengths == {raw.observation_size + 3 * 52 + 2}
    # full information: both hands are in it
    env.reset(seed=0)
    st = env.state()
    tail = st[raw.observation_size:]
    assert set(np.flatnonzero(tail[:52]).tolist()) == set(C.from_mask(raw.game.hands[0]))
    assert set(np.flatnonzero(tail[52:104]).tolist()) == set(C.from_mask(raw.game.hands[1]))


def test_render_ansi():
    env = make_env(render_mode="ansi", episode="match")
    raw = env.unwrapped
    rng = random.Random(59)
    env.reset(seed=2)
    for _ in range(30):
        text = env.render()
        assert isinstance(text, str) and text.strip()
        assert raw.game.phase.name in text
        env.step(knocky(raw.game, rng))


def test_render_human(capsys):
    env = make_env(render_mode="human")
    env.reset(seed=2)
    capsys.readouterr()
    assert env.render() is None
    out = capsys.readouterr().out
    assert out.strip() and env.unwrapped.game.phase.name in out
    assert any(sym in out for sym in "♣♦♥♠")
    env.step(env.unwrapped.game.legal_actions()[0])  # human mode prints after each step
    assert capsys.readouterr().out.strip()


def test_render_none():
    env = make_env()
    env.reset(seed=0)
    assert env.render() is None


def test_action_names_round_trip():
    raw = gin_rummy_v0.raw_env()
    names = set()
    for a in range(G.NUM_ACTIONS):
        text = raw.action_to_str(a)
        assert raw.str_to_action(text) == a, text
        assert raw.str_to_action(text.lower()) == a, text
        names.add(text)
    assert len(names) == G.NUM_ACTIONS
    assert raw.str_to_action("TAKE_UPCARD") == G.TAKE_DISCARD
    assert raw.str_to_action("discard(10h)") == G.DISCARD + C.parse_card("TH")
    for bad in ("", "FLY", "DISCARD(ZZ)", "MELD(AS 5D 9H)", "LAYOFF(5H,3)", "DISCARD(AS"):
        with pytest.raises(ValueError):
            raw.str_to_action(bad)


# ---------------------------------------------------------------------------------------
# 8. Dead steps
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [{}, {"episode": "match", "target_score": 30}, {"max_turns_per_hand": 3}])
def test_dead_steps_empty_agents(options):
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(61)
    for i in range(3):
        env.reset(seed=i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            env.step(knocky(raw.game, rng))
        assert env.agents == AGENTS
        with pytest.raises(ValueError):
            env.step(0)  # a dead agent may only step None
        seen = []
        while env.agents:
            agent = env.agent_selection
            assert raw.terminations[agent] or raw.truncations[agent]
            seen.append(agent)
            env.step(None)
        assert sorted(seen) == AGENTS and env.agents == []


def test_reset_from_a_finished_state_dict_only_dead_steps():
    rng = random.Random(3)
    state = GinState(GinConfig(), seed=5)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    env = make_env()
    env.reset(options={"state": state.to_dict()})
    steps = 0
    for _agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        assert term or trunc
        env.step(None)
        steps += 1
    assert steps == 2 and env.agents == []
