"""The hollywood_gin_v0 environment and the Hollywood engine under it, in both episode
modes, tested as DESIGN.md asks of every game: PettingZoo's api_test and seed_test,
invariants over random play (cards conserved, mask equals the engine's legal actions,
rewards sum to zero and add up to the engine's returns, episodes end), the scoresheet
over whole matches against an independent reference sheet (entry rule, closed columns
frozen, match end, dead hands, the winner deals), the observation's sheet segments,
infos, information leaks, illegal-action atomicity, state dicts, replay, reset from a
state dict and rendering.

The card-level rules are the gin engine's and are tested in test_gin_env.py; the sheet's
scenarios H1-H6 are in test_hollywood.py. Fast versions run in CI; the thousands-of-games
versions are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest

import rummy_envs
from rummy_envs import IllegalActionError, hollywood_gin_v0
from rummy_envs.games import gin as G
from rummy_envs.games.gin import Phase
from rummy_envs.games.hollywood import NUM_COLUMNS, HollywoodConfig, HollywoodState, Scoresheet
from test_gin_env import (
    AGENTS,
    SHOWDOWN,
    _observed,
    _same,
    _snapshot,
    assert_mask_exact,
    check_cards_conserved,
    check_hand_result,
    check_hand_sizes,
    check_showdown_consistent,
    hidden_variants,
    knocky,
    step_bound,
    uniform,
)
from env_contract import pettingzoo_checks

slow = pytest.mark.slow
COLS = range(NUM_COLUMNS)
ENV_KEYS = {"render_mode", "reward", "reward_scale", "illegal_action", "observe_opponent_hand"}

# Matches to the default target of 100 take ~13 hands of knocky play; most sets use a
# small target so that a match (every column closed) takes ~5 hands.
SMALL = {"episode": "match", "target_score": 30}
EXPLICIT = {"layoff_mode": "explicit", "knocker_arrangement": "explicit"}

# Env configurations (rules + env options).
ENV_OPTION_SETS = {
    "hand": {},
    "hand_explicit": dict(EXPLICIT),
    "hand_win_loss": {"reward": "win_loss"},
    "match": {"episode": "match"},
    "match_small": dict(SMALL),
    "total_points": {**SMALL, "match_winner_rule": "total_points"},
    "no_bonuses": {**SMALL, "column_bonuses": False},
    "match_explicit": {**SMALL, **EXPLICIT},
    "win_loss": {**SMALL, "reward": "win_loss"},
    "win_loss_total_points": {**SMALL, "reward": "win_loss", "match_winner_rule": "total_points"},
    "scaled": {**SMALL, "reward_scale": 7.0},
    "caps_win_loss": {"episode": "match", "max_hands_per_match": 3, "reward": "win_loss"},
}

# Engine rule sets: the rules parts of the env sets plus rarer combinations.
RULE_SETS = {
    "hand": {},
    "hand_explicit": dict(EXPLICIT),
    "match": {"episode": "match"},
    "match_small": dict(SMALL),
    "total_points": {**SMALL, "match_winner_rule": "total_points"},
    "no_bonuses": {**SMALL, "column_bonuses": False},
    "match_explicit": {**SMALL, **EXPLICIT},
    "variety": {"episode": "match", "target_score": 40, "next_dealer": "alternate", "variant": "oklahoma",
                "shutout_rule": "double_game_bonus", "stock_end_rule": "opponent_last_chance",
                "undercut_bonus": 25, "big_gin_bonus": 31},
    "loser_deals": {**SMALL, "next_dealer": "loser", "shutout_rule": "none", "box_bonus": 7, "game_bonus": 40},
    "caps": {"episode": "match", "max_hands_per_match": 4, "max_turns_per_hand": 25},
}
MATCH_SETS = {k for k, v in RULE_SETS.items() if v.get("episode") == "match"}


def make_env(**options):
    return hollywood_gin_v0.env(**options)


def rules_of(options: dict) -> dict:
    return {k: v for k, v in options.items() if k not in ENV_KEYS}


def centred(values) -> list[float]:
    mean = sum(values) / len(values)
    return [v - mean for v in values]


# ---------------------------------------------------------------------------------------
# An independent reference sheet, fed from the hand results
# ---------------------------------------------------------------------------------------


class RefSheet:
    """The sheet of hollywood_gin.md §2-§4, recomputed from won hands alone."""

    def __init__(self, target: int, start: dict | None = None) -> None:
        self.target = target
        start = start or Scoresheet().to_dict()
        self.score = [list(r) for r in start["score"]]
        self.entered = [list(r) for r in start["entered"]]
        self.hands = [list(r) for r in start["hands"]]
        self.closed_by = list(start["closed_by"])
        self.wins = list(start["wins"])

    def win(self, w: int, points: int) -> None:
        open_before = [c for c in COLS if self.closed_by[c] == -1]
        fresh = [c for c in open_before if not self.entered[w][c]]
        if fresh:
            self.entered[w][fresh[0]] = True  # one new column per won hand, the lowest
        self.wins[w] += 1
        for c in open_before:
            if self.entered[w][c]:
                self.score[w][c] += points
                self.hands[w][c] += 1
                if self.score[w][c] >= self.target:
                    self.closed_by[c] = w

    def settle(self, c: int, cfg: HollywoodConfig) -> list[int]:
        raw = [self.score[0][c], self.score[1][c]]
        w = self.closed_by[c]
        if w < 0 or not cfg.column_bonuses:
            return raw
        shut = raw[1 - w] == 0
        out = list(raw)
        if shut and cfg.shutout_rule == "double_points":
            out[w] = 2 * raw[w]
        out[w] += cfg.game_bonus * (2 if shut and cfg.shutout_rule == "double_game_bonus" else 1)
        return [out[p] + cfg.box_bonus * self.hands[p][c] for p in (0, 1)]

    def column_totals(self, cfg: HollywoodConfig) -> list[list[int]]:
        return [self.settle(c, cfg) for c in COLS]

    def totals(self, cfg: HollywoodConfig) -> list[int]:
        cols = self.column_totals(cfg)
        return [sum(col[p] for col in cols) for p in (0, 1)]

    def over(self) -> bool:
        return all(w >= 0 for w in self.closed_by)

    def winner(self, cfg: HollywoodConfig) -> int:
        if cfg.match_winner_rule == "games_won":
            a, b = self.closed_by.count(0), self.closed_by.count(1)
        else:
            a, b = self.totals(cfg)
        return 0 if a > b else 1 if b > a else -1

    def assert_matches(self, sheet: Scoresheet, where: str = "") -> None:
        assert sheet.score == self.score, f"column scores differ from the hands recorded {where}"
        assert sheet.entered == self.entered, f"entered columns differ {where}"
        assert sheet.hands == self.hands, f"hands per column differ {where}"
        assert sheet.closed_by == self.closed_by, f"closed columns differ {where}"
        assert sheet.wins == self.wins, f"wins differ {where}"
        for c in COLS:
            w = sheet.closed_by[c]
            if w >= 0:
                assert sheet.score[w][c] >= self.target
            else:
                assert all(sheet.score[p][c] < self.target for p in (0, 1))


class Before:
    """What a hand end is compared with: the moment before the move."""

    def __init__(self, g: HollywoodState) -> None:
        self.sheet = g.match.to_dict()
        self.dealer = g.dealer
        self.hands = len(g.hand_results)
        self.hand_index = g.hand_index
        self.multiplier = g.multiplier


def check_hand_end(cfg: HollywoodConfig, g: HollywoodState, ref: RefSheet, before: Before) -> None:
    """The sheet, the dealer and the match end after a hand ended (``ref`` is updated)."""
    r = g.hand_results[-1]
    assert len(g.hand_results) == before.hands + 1
    check_hand_result(cfg, r, before.multiplier)
    over = g.is_terminal()
    if cfg.episode == "hand":
        assert over and g.match.to_dict() == before.sheet, "hand mode changed the sheet"
        assert g.truncated == (r.kind == "turn_cap")
        return
    if r.winner < 0:
        assert g.match.to_dict() == before.sheet, f"a {r.kind} hand changed the sheet"
    else:
        ref.win(r.winner, r.points[r.winner])
    ref.assert_matches(g.match, f"after hand {len(g.hand_results)}")
    for c, w in enumerate(before.sheet["closed_by"]):  # closed columns never change
        if w >= 0:
            assert g.match.closed_by[c] == w
            for key in ("score", "hands", "entered"):
                assert [row[c] for row in getattr(g.match, key)] == [row[c] for row in before.sheet[key]], key
    all_closed = all(w >= 0 for w in g.match.closed_by)
    assert over == (all_closed or len(g.hand_results) >= cfg.max_hands_per_match)
    assert g.truncated == (over and not all_closed)
    if not over:
        if r.winner < 0:
            dealer = before.dealer
        else:
            dealer = {"winner": r.winner, "loser": 1 - r.winner, "alternate": 1 - before.dealer}[cfg.next_dealer]
        assert g.dealer == dealer, f"dealer {g.dealer} after a {r.kind} hand won by {r.winner} (was {before.dealer})"
        assert g.hand_index == before.hand_index + 1
        assert g.phase == Phase.OFFER_ND and g.current_player == 1 - g.dealer
        assert [h.bit_count() for h in g.hands] == [10, 10] and len(g.stock) == 31


# ---------------------------------------------------------------------------------------
# Engine driver and env driver
# ---------------------------------------------------------------------------------------


def play_engine(config: HollywoodConfig, seed: int, policy, rng: random.Random) -> HollywoodState:
    s = HollywoodState(config, seed)
    ref = RefSheet(config.target_score)
    bound = step_bound(config)
    steps = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        assert legal and legal == sorted(set(legal)) and all(0 <= a < G.NUM_ACTIONS for a in legal)
        before = Before(s)
        s.apply(policy(s, rng))
        steps += 1
        assert steps <= bound, "game did not terminate"
        check_cards_conserved(s)
        check_hand_sizes(s)
        check_showdown_consistent(s)
        if len(s.hand_results) != before.hands:
            check_hand_end(config, s, ref, before)
    assert s.legal_actions() == [] and s.current_player == -1
    returns = s.returns()
    assert abs(sum(returns)) < 1e-9
    if config.episode == "hand":
        assert len(s.hand_results) == 1 and s.scores() == s.hand_results[0].points
        assert s.match.to_dict() == Scoresheet().to_dict()
    else:
        assert s.scores() == ref.totals(config) == s.match.scores(config)
        assert returns == centred(ref.totals(config))
        assert s.match.is_over() == ref.over() == (not s.truncated)
        assert s.match.winner(config) == ref.winner(config)
        # the sheet is exactly the won hands replayed in order on an empty sheet
        again = RefSheet(config.target_score)
        for r in s.hand_results:
            if r.winner >= 0:
                again.win(r.winner, r.points[r.winner])
        again.assert_matches(s.match, "replaying the hand results")
    return s


def sheet_segments(env, agent: str) -> dict[str, np.ndarray]:
    raw = env.unwrapped
    obs = env.observe(agent)["observation"]
    return {name: obs[seg.offset:seg.offset + seg.size] for name, seg in raw.layout.items() if name.startswith("sheet_")}


def check_sheet_obs(env) -> None:
    """The sheet segments decode to the engine's sheet, mine first, for both players."""
    raw = env.unwrapped
    sheet, target = raw.game.match, raw.config.target_score
    for p, agent in enumerate(AGENTS):
        seg = sheet_segments(env, agent)
        seats = (p, 1 - p)
        scores = seg["sheet_scores"].astype(np.float64) * target
        hands = seg["sheet_hands_won"].astype(np.float64) * 10
        for k, q in enumerate(seats):
            assert np.allclose(scores[3 * k:3 * k + 3], sheet.score[q], atol=1e-3), (agent, scores, sheet.score)
            assert seg["sheet_entered"][3 * k:3 * k + 3].tolist() == [float(e) for e in sheet.entered[q]]
            assert seg["sheet_column_won"][3 * k:3 * k + 3].tolist() == [float(w == q) for w in sheet.closed_by]
            assert np.allclose(hands[3 * k:3 * k + 3], sheet.hands[q], atol=1e-4)
        assert seg["sheet_closed"].tolist() == [float(w >= 0) for w in sheet.closed_by]


def check_infos(env, ref: RefSheet) -> None:
    raw = env.unwrapped
    g, cfg = raw.game, raw.config
    r = g.hand_results[-1]
    over = g.is_terminal()
    column_totals = ref.column_totals(cfg) if cfg.episode == "match" else [g.match.settle(c, cfg) for c in COLS]
    for p, a in enumerate(AGENTS):
        info = raw.infos[a]
        hr = info["hand_result"]
        assert hr["kind"] == r.kind and hr["points"] == r.points and hr["winner"] == r.winner
        assert hr["hand_number"] == len(g.hand_results) and hr["seat"] == p
        assert info["sheet"] == g.match.to_dict()
        assert info["column_totals"] == column_totals
        if cfg.episode == "match":
            if not over:
                assert info["match_winner"] is None
            elif ref.over():
                assert info["match_winner"] == ref.winner(cfg)
            else:  # truncated: the docs do not say whether a capped match names a winner
                assert info["match_winner"] in (None, ref.winner(cfg))
        if over:
            assert info["truncated"] == g.truncated
            if cfg.episode == "match":
                assert info["final_scores"] == [sum(col[q] for col in column_totals) for q in (0, 1)]
                assert info["final_scores"] == g.scores()
            else:
                assert info["final_scores"] == r.points
        else:
            assert "final_scores" not in info


def play_env(env, rng: random.Random, policy=knocky, exhaustive_prob: float = 0.0, obs_prob: float = 0.1,
             showdown_exhaustive_prob: float = 0.3):
    """One episode through the wrapped env (agent_iter, last, step) with the checks of every
    step; the env may start from a state dict with a sheet. Returns each agent's total of
    the rewards given by last(), the returns at the start (points) and the final state."""
    raw = env.unwrapped
    cfg = raw.config
    g = raw.game
    match = cfg.episode == "match"
    ref = RefSheet(cfg.target_score, g.match.to_dict())
    start_returns = centred(ref.totals(cfg)) if match else [0.0, 0.0]
    box = env.observation_space("player_0")["observation"]
    totals = dict.fromkeys(AGENTS, 0.0)
    bound = step_bound(cfg)
    steps = 0
    check_sheet_obs(env)
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        assert box.contains(obs["observation"]), "observation outside its Box"
        if term or trunc:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        check_cards_conserved(g)
        assert agent == AGENTS[g.current_player]
        mask = obs["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == set(g.legal_actions())
        assert not env.observe(AGENTS[1 - g.current_player])["action_mask"].any()
        if rng.random() < (showdown_exhaustive_prob if g.phase in SHOWDOWN else exhaustive_prob):
            assert_mask_exact(g, mask)  # every action id tried on a clone
        before = Before(g)
        settled_before = ref.totals(cfg)
        env.step(policy(g, rng))
        steps += 1
        assert steps <= bound, "episode did not terminate"
        rewards = [raw.rewards[a] for a in AGENTS]
        assert abs(sum(rewards)) < 1e-9, f"rewards do not sum to zero: {rewards}"
        ended = len(g.hand_results) != before.hands
        if ended:
            check_hand_end(cfg, g, ref, before)
            check_infos(env, ref)
        if raw.reward_mode == "points":
            if not ended:
                expected = [0.0, 0.0]
            elif match:
                expected = centred([n - o for n, o in zip(ref.totals(cfg), settled_before)])
            else:
                expected = centred(g.hand_results[-1].points)
        elif not g.is_terminal():
            expected = [0.0, 0.0]
        else:
            expected = [0.0, 0.0]
            w = ref.winner(cfg) if match else (0 if g.scores()[0] > g.scores()[1] else 1 if g.scores()[1] > g.scores()[0] else -1)
            if w >= 0:
                expected[w], expected[1 - w] = 1.0, -1.0
        assert rewards == pytest.approx([e / raw.reward_scale for e in expected]), (rewards, expected)
        if ended or rng.random() < obs_prob:
            check_sheet_obs(env)
    assert env.agents == []
    return totals, start_returns, g


def snapshots(rules: dict, games: int, seed: int, every: float = 0.1, per_game: int = 10,
              require_sheet: bool = False, showdown: bool = True) -> list[HollywoodState]:
    """Clones of states of knocky games (showdown states always kept, others with
    probability ``every``, divided by 20 in match mode to spread the picks over hands);
    ``require_sheet`` keeps only states whose sheet has a won hand."""
    rng = random.Random(seed)
    config = HollywoodConfig(**rules_of(rules))
    if config.episode == "match":
        every /= 20
    out: list[HollywoodState] = []
    for i in range(games):
        s = HollywoodState(config, seed * 1000 + i)
        kept = 0
        while not s.is_terminal():
            special = showdown and (s.phase in SHOWDOWN or s.phase == Phase.LAST_CHANCE)
            if kept < per_game and (special or rng.random() < every) and (not require_sheet or sum(s.match.wins)):
                out.append(s.clone())
                kept += 1
            s.apply(knocky(s, rng))
    return out


# ---------------------------------------------------------------------------------------
# 1. PettingZoo api_test and seed_test
# ---------------------------------------------------------------------------------------


test_api_test, test_seed_test = pettingzoo_checks(make_env, ENV_OPTION_SETS)


def test_metadata_registry_and_layout():
    assert rummy_envs.ENVS["hollywood_gin"] is hollywood_gin_v0
    meta = hollywood_gin_v0.raw_env.metadata
    assert meta["name"] == "hollywood_gin_v0" and meta["is_parallelizable"] is False
    expected = {"sheet_scores": (590, 6), "sheet_entered": (596, 6), "sheet_closed": (602, 3),
                "sheet_column_won": (605, 6), "sheet_hands_won": (611, 6)}  # docs/hollywood_gin.md
    for options, size in (({}, 617), ({"episode": "match"}, 617), ({"observe_opponent_hand": True}, 669),
                          ({"episode": "match", "observe_opponent_hand": True}, 669)):
        env = make_env(**options)
        raw = env.unwrapped
        layout = raw.observation_layout()
        assert {k: (s.offset, s.size) for k, s in layout.items() if k.startswith("sheet_")} == expected
        assert "scores" not in layout  # gin's match segment is replaced by the sheet
        assert raw.observation_size == size == env.observation_space("player_0")["observation"].shape[0]
        assert env.possible_agents == AGENTS and env.action_space("player_0").n == G.NUM_ACTIONS


# ---------------------------------------------------------------------------------------
# 2. Invariants over random play
# ---------------------------------------------------------------------------------------


def _engine_invariants(name: str, games: int) -> None:
    config = HollywoodConfig(**RULE_SETS[name])
    rng = random.Random(len(name))
    kinds: dict[str, int] = {}
    closed = truncated = 0
    for i in range(games):
        policy = knocky if config.episode == "match" or i % 4 else uniform
        s = play_engine(config, seed=20_000 + i, policy=policy, rng=rng)
        for r in s.hand_results:
            kinds[r.kind] = kinds.get(r.kind, 0) + 1
        closed += s.match.is_over()
        truncated += s.truncated
    assert kinds.get("knock", 0) + kinds.get("gin", 0) + kinds.get("undercut", 0) > 0, kinds
    if config.episode == "match":
        assert kinds.get("dead", 0) + kinds.get("turn_cap", 0) > 0, kinds  # hands without a winner were checked
        if name == "caps":
            assert truncated > 0
        else:
            assert closed > 0.9 * games, (closed, games)


# Hand sets: 150 hands; match sets: 25 matches of ~5 hands each (10 matches of ~13 hands
# to the default target of 100, 10 of ~7 in "variety").
FAST_GAMES = {name: (10 if name in ("match", "variety") else 25 if name in MATCH_SETS else 150) for name in RULE_SETS}


@pytest.mark.parametrize("name", list(RULE_SETS))
def test_engine_invariants(name):
    _engine_invariants(name, FAST_GAMES[name])


@slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_engine_invariants_slow(name):
    _engine_invariants(name, 600 if name in MATCH_SETS else 3000)


def _env_invariants(name: str, episodes: int, exhaustive_prob: float = 0.02) -> None:
    options = ENV_OPTION_SETS[name]
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(7)
    for i in range(episodes):
        env.reset(seed=500 + i)
        policy = knocky if raw.config.episode == "match" or i % 3 else uniform
        totals, start, game = play_env(env, rng, policy, exhaustive_prob)
        assert start == [0.0, 0.0]
        assert abs(sum(totals.values())) < 1e-9
        if raw.reward_mode == "points":
            expected = [r / raw.reward_scale for r in game.returns()]
        else:
            w = game.match.winner(raw.config) if raw.config.episode == "match" else (
                0 if game.scores()[0] > game.scores()[1] else 1 if game.scores()[1] > game.scores()[0] else -1)
            expected = [0.0, 0.0] if w < 0 else [1.0 if p == w else -1.0 for p in (0, 1)]
            if raw.config.match_winner_rule == "games_won" and raw.config.episode == "match" and not game.truncated:
                assert w >= 0 and max(game.match.columns_won()) >= 2
        assert [totals[a] for a in AGENTS] == pytest.approx(expected), (name, totals, expected)


ENV_FAST_EPISODES = {"match": 2, "caps_win_loss": 3}


@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_env_invariants(name):
    episodes = ENV_FAST_EPISODES.get(name, 3 if ENV_OPTION_SETS[name].get("episode") == "match" else 15)
    _env_invariants(name, episodes)


@slow
@pytest.mark.parametrize("name", list(ENV_OPTION_SETS))
def test_env_invariants_slow(name):
    _env_invariants(name, 100 if ENV_OPTION_SETS[name].get("episode") == "match" else 1000)


def test_match_reward_pays_columns_and_bonuses_when_they_close():
    """A hand that closes a column pays its points in every open column it enters plus the
    column's settlement (game bonus, boxes, shutout) at once; the match's rewards add up
    to the settled net points."""
    env = make_env(episode="match", target_score=30)
    raw = env.unwrapped
    rng = random.Random(13)
    closes = 0
    for seed in range(6):
        env.reset(seed=seed)
        paid = [0.0, 0.0]
        while not (any(raw.terminations.values()) or any(raw.truncations.values())):
            closed_before = list(raw.game.match.closed_by)
            env.step(knocky(raw.game, rng))
            paid = [x + raw.rewards[a] for x, a in zip(paid, AGENTS)]
            newly = [c for c in COLS if closed_before[c] < 0 <= raw.game.match.closed_by[c]]
            if newly:
                closes += 1
                r = raw.game.hand_results[-1]
                w = r.winner
                sheet = raw.game.match
                bonus = sum(raw.config.game_bonus + raw.config.box_bonus * sum(sheet.hands[p][c] for p in (0, 1))
                            + (sheet.score[w][c] if sheet.score[1 - w][c] == 0 else 0) for c in newly)
                in_open = sum(1 for c in COLS if closed_before[c] < 0 and sheet.entered[w][c])
                # the box bonuses of the loser go to the loser: net for the winner
                loser_boxes = sum(raw.config.box_bonus * sheet.hands[1 - w][c] for c in newly)
                net = r.points[w] * in_open + bonus - 2 * loser_boxes
                assert raw.rewards[AGENTS[w]] - raw.rewards[AGENTS[1 - w]] == pytest.approx(net)
        assert paid == pytest.approx(raw.game.returns())
        assert paid == pytest.approx(centred(raw.game.match.scores(raw.config)))
    assert closes >= 10


def test_hand_mode_keeps_the_sheet_and_pays_the_hand():
    env = make_env()
    raw = env.unwrapped
    rng = random.Random(11)
    won = 0
    for i in range(30):
        env.reset(seed=900 + i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            env.step(knocky(raw.game, rng))
        result = raw.game.hand_results[-1]
        assert [raw._cumulative_rewards[a] for a in AGENTS] == pytest.approx(centred(result.points))
        assert raw.game.match.to_dict() == Scoresheet().to_dict()
        for a in AGENTS:
            assert raw.infos[a]["final_scores"] == result.points and raw.infos[a]["match_winner"] is None
            assert raw.infos[a]["column_totals"] == [[0, 0]] * 3
        won += result.winner >= 0
    assert won > 10


def test_match_hand_cap_truncates_and_settles_only_closed_columns():
    env = make_env(episode="match", max_hands_per_match=3, target_score=60)
    raw = env.unwrapped
    rng = random.Random(17)
    seen_partial = 0
    for seed in range(12):
        env.reset(seed=seed)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            env.step(knocky(raw.game, rng))
        g = raw.game
        assert len(g.hand_results) == 3 or g.match.is_over()
        if not g.match.is_over():
            assert all(raw.truncations.values()) and not any(raw.terminations.values())
            assert raw.infos["player_0"]["truncated"] is True
            cols = raw.infos["player_0"]["column_totals"]
            for c in COLS:
                if g.match.closed_by[c] < 0:
                    assert cols[c] == [g.match.score[0][c], g.match.score[1][c]]  # open: raw
            seen_partial += any(w >= 0 for w in g.match.closed_by)
    assert seen_partial > 0


# ---------------------------------------------------------------------------------------
# 3. The sheet in the observation
# ---------------------------------------------------------------------------------------


def test_sheet_segments_of_a_known_sheet():
    """H2's sheet (A=player_0: 105, 65, 35 with G1 closed; B=player_1: 0, 30, 18), seen
    from both seats."""
    sheet = Scoresheet()
    for p, s in [(0, 40), (0, 30), (0, 20), (0, 15), (1, 12), (1, 18)]:
        sheet.record_win(p, s, 100)
    state = HollywoodState(HollywoodConfig(episode="match"), seed=3)
    state.match = sheet
    for options in ({"episode": "match"}, {"episode": "match", "observe_opponent_hand": True}):
        env = make_env(**options)
        env.reset(options={"state": state.to_dict()})
        a, b = sheet_segments(env, "player_0"), sheet_segments(env, "player_1")
        assert a["sheet_scores"].tolist() == pytest.approx([1.05, 0.65, 0.35, 0, 0.30, 0.18])
        assert b["sheet_scores"].tolist() == pytest.approx([0, 0.30, 0.18, 1.05, 0.65, 0.35])
        assert a["sheet_entered"].tolist() == [1, 1, 1, 0, 1, 1]
        assert b["sheet_entered"].tolist() == [0, 1, 1, 1, 1, 1]
        assert a["sheet_closed"].tolist() == b["sheet_closed"].tolist() == [1, 0, 0]
        assert a["sheet_column_won"].tolist() == [1, 0, 0, 0, 0, 0]
        assert b["sheet_column_won"].tolist() == [0, 0, 0, 1, 0, 0]
        assert a["sheet_hands_won"].tolist() == pytest.approx([0.4, 0.3, 0.2, 0, 0.2, 0.1])
        assert b["sheet_hands_won"].tolist() == pytest.approx([0, 0.2, 0.1, 0.4, 0.3, 0.2])
        check_sheet_obs(env)
        assert env.unwrapped.player_view("player_1").scores == (48, 205)


@pytest.mark.parametrize("options", [{**SMALL}, {**SMALL, **EXPLICIT}])
def test_sheet_segments_over_play(options):
    """Every step of a few matches: both players' sheet segments decode to the engine's."""
    env = make_env(**options)
    rng = random.Random(19)
    for seed in range(2):
        env.reset(seed=seed)
        play_env(env, rng, obs_prob=1.0)


# ---------------------------------------------------------------------------------------
# 4. Information leaks and illegal actions
# ---------------------------------------------------------------------------------------


def _leak_check(options: dict, games: int, seed: int, require_sheet: bool, ahead: int = 2) -> int:
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(seed)
    checked = 0
    states = snapshots(options, games, seed, every=0.15, require_sheet=require_sheet)
    if require_sheet:
        assert states and all(sum(s.match.wins) > 0 for s in states)
    for state in states:
        d = state.to_dict()
        for p in (0, 1):
            agent = AGENTS[p]
            env.reset(options={"state": d})
            original = _observed(env, agent)
            moves = []
            if state.current_player == p:
                moves = [a for a in state.legal_actions() if a != G.DRAW_STOCK]
                moves = rng.sample(moves, min(ahead, len(moves)))
            for what, variant in hidden_variants(state, p, rng):
                env.reset(options={"state": variant})
                assert raw.game.to_dict() != d
                obs, mask, view = _observed(env, agent)
                where = f"{what}, observer {agent}, phase {state.phase.name}, hand {state.hand_index + 1}"
                assert np.array_equal(obs, original[0]), f"observation changed: {where}"
                assert np.array_equal(mask, original[1]), f"action mask changed: {where}"
                assert view == original[2], f"player_view changed: {where}"
                checked += 1
                for a in moves:
                    after = []
                    for start in (d, variant):
                        env.reset(options={"state": start})
                        env.step(a)
                        ended = len(raw.game.hand_results) != len(state.hand_results)
                        after.append(None if ended else _observed(env, agent))
                    if after[0] is None or after[1] is None:
                        continue  # the hand ended: the showdown is public
                    where_a = f"{where}, after {G.action_to_str(a)}"
                    assert np.array_equal(after[0][0], after[1][0]), f"observation changed: {where_a}"
                    assert np.array_equal(after[0][1], after[1][1]), f"action mask changed: {where_a}"
                    assert after[0][2] == after[1][2], f"player_view changed: {where_a}"
                    checked += 1
    return checked


@pytest.mark.parametrize("name, options, require_sheet", [
    ("hand", {}, False),
    ("hand_explicit", EXPLICIT, False),
    ("match", SMALL, True),
    ("match_explicit", {**SMALL, **EXPLICIT}, True),
])
def test_information_leak(name, options, require_sheet):
    assert _leak_check(options, games=8, seed=len(name), require_sheet=require_sheet) > 40


@slow
@pytest.mark.parametrize("options, require_sheet", [({}, False), (EXPLICIT, False), (SMALL, True),
                                                    ({**SMALL, **EXPLICIT}, True)])
def test_information_leak_slow(options, require_sheet):
    _leak_check(options, games=200, seed=5, require_sheet=require_sheet)


def test_determinization_keeps_the_sheet():
    rng = random.Random(23)
    states = snapshots(SMALL, 6, seed=2, require_sheet=True)
    for state in states:
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            assert isinstance(det, HollywoodState) and det.match == state.match
            assert det.view(p) == state.view(p)
            det.match.record_win(p, 5, 30)  # the copy's sheet is its own
            assert det.match != state.match


def _try_illegal(env, rng: random.Random) -> int:
    raw = env.unwrapped
    g = raw.game
    agent = raw.agent_selection
    mask = env.observe(agent)["action_mask"]
    illegal = [int(a) for a in np.flatnonzero(mask == 0)]
    tried = 0
    for action in [rng.choice(illegal), np.int64(rng.choice(illegal)), None, "DISCARD(AS)", -1, G.NUM_ACTIONS,
                   2.0, True]:
        before = _snapshot(env)
        with pytest.raises(IllegalActionError) as info:
            env.step(action)
        message = str(info.value)
        assert isinstance(info.value, ValueError)
        assert agent in message and g.phase.name in message, message
        assert str(action) in message or repr(action) in message, message
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < G.NUM_ACTIONS:
            assert G.action_to_str(int(action)) in message, message
        assert _same(before, _snapshot(env)), f"illegal action {action!r} changed the env"
        tried += 1
    return tried


@pytest.mark.parametrize("name", ["hand", "hand_explicit", "match_small", "match_explicit", "win_loss"])
def test_illegal_action_atomic(name):
    options = ENV_OPTION_SETS[name]
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(31)
    starts = [dict(seed=70 + i) for i in range(3)]
    if raw.config.episode == "match":  # also deep in matches, with a sheet
        states = snapshots(options, 6, seed=8, require_sheet=True, showdown=False, every=0.3)
        starts += [dict(options={"state": s.to_dict()}) for s in states[:5]]
    tried = after_hand = 0
    for kwargs in starts:
        env.reset(**kwargs)
        hands = len(raw.game.hand_results)
        for _ in range(60):
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
            g = raw.game
            fresh_hand = len(g.hand_results) != hands  # just after a hand ended mid-match
            if fresh_hand or rng.random() < 0.15 or (g.phase in SHOWDOWN and rng.random() < 0.5):
                tried += _try_illegal(env, rng)
                after_hand += fresh_hand
            hands = len(g.hand_results)
            env.step(knocky(g, rng))
    assert tried > 60
    if raw.config.episode == "match":
        assert after_hand > 0


def test_illegal_action_terminate_mid_match():
    env = make_env(episode="match", target_score=30, illegal_action="terminate", reward_scale=2.0)
    raw = env.unwrapped
    state = snapshots(SMALL, 3, seed=4, require_sheet=True, showdown=False)[0]
    env.reset(options={"state": state.to_dict()})
    offender = raw.agent_selection
    sheet = raw.game.match.to_dict()
    env.step(-1)
    assert all(raw.terminations.values())
    assert raw.game.match.to_dict() == sheet
    totals = dict.fromkeys(AGENTS, 0.0)
    for agent in env.agent_iter():
        totals[agent] += env.last()[1]
        env.step(None)
    other = AGENTS[1 - AGENTS.index(offender)]
    assert totals == {offender: -0.5, other: 0.5}


# ---------------------------------------------------------------------------------------
# 5. State dicts, replay, reset from a state
# ---------------------------------------------------------------------------------------


def _dict_and_replay(name: str, games: int) -> None:
    config = HollywoodConfig(**RULE_SETS[name])
    rng = random.Random(43)
    with_sheet = 0
    for i in range(games):
        deck = dealer = None
        if i % 3 == 2:
            deck = list(range(52))
            rng.shuffle(deck)
            dealer = i % 2
        s = HollywoodState(config, 300 + i, deck, dealer)
        while True:
            if rng.random() < 0.03 or s.phase in SHOWDOWN or s.is_terminal():
                d = s.to_dict()
                assert d["game"] == "hollywood_gin" and d["options"]["column_bonuses"] == config.column_bonuses
                text = json.dumps(d)
                assert json.loads(text) == d
                rebuilt = HollywoodState.from_dict(json.loads(text))
                assert type(rebuilt) is HollywoodState and isinstance(rebuilt.match, Scoresheet)
                assert rebuilt.config == config
                assert rebuilt.to_dict() == d and rebuilt.match == s.match
                assert rebuilt.legal_actions() == s.legal_actions()
                assert all(rebuilt.view(p) == s.view(p) for p in (0, 1))
                assert rebuilt.scores() == s.scores() and rebuilt.returns() == s.returns()
                assert rebuilt.standings() == s.standings() and rebuilt.is_terminal() == s.is_terminal()
                a, b = s.clone(), rebuilt
                r1, r2 = random.Random(i), random.Random(i)
                for _ in range(40):  # the rebuilt state plays on exactly like the original
                    if a.is_terminal():
                        break
                    a.apply(knocky(a, r1))
                    b.apply(knocky(b, r2))
                assert a.to_dict() == b.to_dict() and a.match == b.match
                with_sheet += sum(s.match.wins) > 0
            if s.is_terminal():
                break
            s.apply(knocky(s, rng))
        again = G.replay(config, 300 + i, s.history, deck, dealer, state_class=HollywoodState)
        assert type(again) is HollywoodState and again.to_dict() == s.to_dict()
        d = s.to_dict()
        again = G.replay(HollywoodConfig.from_kwargs(**d["options"]), d["seed"], d["history"], d["initial_deck"],
                         d["first_dealer"], state_class=HollywoodState)
        assert again.to_dict() == d
    if config.episode == "match":
        assert with_sheet > games


@pytest.mark.parametrize("name", ["hand", "hand_explicit", "match_small", "match_explicit", "no_bonuses", "variety"])
def test_state_dict_round_trip_and_replay(name):
    _dict_and_replay(name, 4 if name in MATCH_SETS else 15)


@slow
@pytest.mark.parametrize("name", list(RULE_SETS))
def test_state_dict_round_trip_and_replay_slow(name):
    _dict_and_replay(name, 100 if name in MATCH_SETS else 500)


@pytest.mark.parametrize("options", [dict(SMALL), {**SMALL, "reward_scale": 3.0}, {**SMALL, **EXPLICIT},
                                     {**SMALL, "reward": "win_loss", "match_winner_rule": "total_points"}])
def test_reset_from_state_dict_continues_the_match(options):
    """A mid-match dict (some columns possibly closed) continues with its sheet: closed
    columns stay frozen, the match ends when the rest close, and the rewards of the rest
    of the match add up to the change of the returns."""
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(47)
    states = snapshots(options, 10, seed=6, require_sheet=True, showdown=False, per_game=2)
    assert any(any(w >= 0 for w in s.match.closed_by) for s in states)
    for state in states[:12]:
        d = state.to_dict()
        env.reset(options={"state": d})
        assert raw.game.to_dict() == d and isinstance(raw.game, HollywoodState)
        assert raw.game.match.to_dict() == d["match"] and sum(d["match"]["wins"]) > 0
        assert raw.agent_selection == AGENTS[state.current_player]
        check_sheet_obs(env)
        totals, start, game = play_env(env, rng)
        assert game.is_terminal() and len(game.hand_results) >= len(state.hand_results)
        for c, w in enumerate(d["match"]["closed_by"]):
            if w >= 0:
                assert game.match.closed_by[c] == w
                assert [game.match.score[p][c] for p in (0, 1)] == [d["match"]["score"][p][c] for p in (0, 1)]
        if raw.reward_mode == "points":
            expected = [(e - s) / raw.reward_scale for e, s in zip(game.returns(), start)]
            assert [totals[a] for a in AGENTS] == pytest.approx(expected)


def test_reset_state_with_other_options_rejected():
    d = snapshots(SMALL, 2, seed=1, require_sheet=True, showdown=False)[0].to_dict()
    for options, name in (({"episode": "match", "target_score": 40}, "target_score"),
                          ({**SMALL, "column_bonuses": False}, "column_bonuses"),
                          ({**SMALL, "match_winner_rule": "total_points"}, "match_winner_rule"),
                          ({"target_score": 30}, "episode")):
        with pytest.raises(ValueError, match=name):
            make_env(**options).reset(options={"state": d})
    gin = G.GinState(G.GinConfig(episode="match", target_score=30), seed=1).to_dict()
    with pytest.raises(ValueError, match="undercut_bonus|next_dealer"):
        make_env(**SMALL).reset(options={"state": gin})


def test_state_dict_without_options_or_sheet_takes_the_env_ones():
    env = make_env(**SMALL, column_bonuses=False)
    raw = env.unwrapped
    d = HollywoodState(HollywoodConfig(), seed=4).to_dict()
    del d["options"], d["match"]
    env.reset(options={"state": d})
    assert raw.game.config == raw.config and raw.game.match == Scoresheet()
    assert raw.game.config.column_bonuses is False and raw.game.config.target_score == 30


def test_hand_mode_observes_a_given_sheet():
    """hollywood_gin.md: in hand mode the sheet is observed (empty unless the episode starts
    from a state dict that has one) and a hand does not change it."""
    state = snapshots(SMALL, 2, seed=3, require_sheet=True, showdown=False)[0]
    d = state.to_dict()
    d["options"] = dict(d["options"], episode="hand")
    d["hand_results"] = []
    env = make_env(target_score=30)
    raw = env.unwrapped
    env.reset(options={"state": d})
    check_sheet_obs(env)
    assert raw.game.match.to_dict() == d["match"]
    totals, _, game = play_env(env, random.Random(5))
    assert game.match.to_dict() == d["match"]
    assert [totals[a] for a in AGENTS] == pytest.approx(centred(game.hand_results[-1].points))


def test_hand_mode_from_a_match_dict_pays_only_this_hand():
    """A mid-match dict switched to ``episode="hand"`` (the way to observe a sheet in hand
    mode) still lists the match's earlier hands: the hand played must pay its own points,
    r_i = s_i - mean(s), and the rewards must add up to ``returns()``. (Regression: hand
    mode's ``scores()`` used to return the previous hand's points while the current hand
    was in play, so the env's reward baseline at reset was that hand's points.)"""
    states = snapshots(SMALL, 3, seed=3, require_sheet=True, showdown=False)
    state = next(s for s in states if s.hand_results and s.hand_results[-1].winner >= 0)
    d = state.to_dict()
    d["options"] = dict(d["options"], episode="hand")
    env = make_env(target_score=30)
    raw = env.unwrapped
    env.reset(options={"state": d})
    rng = random.Random(5)
    paid = [0.0, 0.0]
    while not any(raw.terminations.values()) and not any(raw.truncations.values()):
        env.step(knocky(raw.game, rng))
        paid = [x + raw.rewards[a] for x, a in zip(paid, AGENTS)]
    assert paid == pytest.approx(centred(raw.game.hand_results[-1].points))
    assert paid == pytest.approx(raw.game.returns())


# ---------------------------------------------------------------------------------------
# 6. Rendering
# ---------------------------------------------------------------------------------------

SHEET_ROW = re.compile(r"^\s*player_(\d) +(\d+)(\*?) +(\d+)(\*?) +(\d+)(\*?)\s*$")


def check_rendered_sheet(text: str, sheet: Scoresheet) -> None:
    lines = text.splitlines()
    header = [ln for ln in lines if "sheet" in ln]
    assert header and all(f"G{c}" in header[0] for c in (1, 2, 3)), text
    rows = {}
    for ln in lines:
        m = SHEET_ROW.match(ln)
        if m:
            rows[int(m.group(1))] = m.groups()[1:]
    assert set(rows) == {0, 1}, text
    for p, cells in rows.items():
        assert [int(cells[2 * c]) for c in COLS] == sheet.score[p], text
        assert [cells[2 * c + 1] == "*" for c in COLS] == sheet.entered[p], text
    closed = [ln for ln in lines if ln.strip().startswith("closed by:")]
    assert closed, text
    for c, w in enumerate(sheet.closed_by):
        assert f"G{c + 1}:{'-' if w < 0 else f'player_{w}'}" in closed[0], text


@pytest.mark.parametrize("options", [{}, dict(SMALL)])
def test_render_ansi_shows_the_sheet(options):
    env = make_env(render_mode="ansi", **options)
    raw = env.unwrapped
    rng = random.Random(59)
    env.reset(seed=2)
    closed_seen = False
    while not (any(raw.terminations.values()) or any(raw.truncations.values())):
        text = env.render()
        assert isinstance(text, str) and raw.game.phase.name in text
        check_rendered_sheet(text, raw.game.match)
        closed_seen |= any(w >= 0 for w in raw.game.match.closed_by)
        env.step(knocky(raw.game, rng))
    check_rendered_sheet(env.render(), raw.game.match)
    if raw.config.episode == "match":
        assert closed_seen and raw.game.match.is_over()


def test_render_human_shows_the_sheet(capsys):
    env = make_env(render_mode="human", episode="match")
    env.reset(seed=1)
    capsys.readouterr()
    assert env.render() is None
    out = capsys.readouterr().out
    assert "G1" in out and "G2" in out and "G3" in out and "closed by" in out
    state = HollywoodState(HollywoodConfig(episode="match"), seed=3)
    state.match.record_win(1, 120, 100)
    env.reset(options={"state": state.to_dict()})
    capsys.readouterr()
    env.render()
    assert "G1:player_1" in capsys.readouterr().out


def test_dead_steps_after_a_match():
    env = make_env(**SMALL)
    raw = env.unwrapped
    rng = random.Random(61)
    env.reset(seed=3)
    while not any(raw.terminations.values()) and not any(raw.truncations.values()):
        env.step(knocky(raw.game, rng))
    assert env.agents == AGENTS
    with pytest.raises(ValueError):
        env.step(0)
    seen = []
    while env.agents:
        seen.append(env.agent_selection)
        env.step(None)
    assert sorted(seen) == AGENTS
