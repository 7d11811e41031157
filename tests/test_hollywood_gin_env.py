"""The hollywood_gin_v0 environment and the Hollywood engine under it, in both episode
modes: its contract spec (the checks every env shares run from tests/test_env_contract.py,
here with the sheet checked at every step of every game and episode) and what is
particular to Hollywood: the scoresheet over whole matches against an independent
reference sheet (entry rule, closed columns frozen, match end, dead hands, the winner
deals), the rewards of closed columns, the observation's sheet segments, infos, leaks and
illegal actions deep in matches, state dicts holding a sheet, reset from a mid-match
state and the rendered sheet.

The card-level rules are the gin engine's and are tested in test_gin_rummy_env.py; the sheet's
scenarios H1-H6 are in test_hollywood_gin_rules.py. Fast versions run in CI; the thousands-of-games
versions are marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pytest

import env_contract as contract
from observations import decode
from rummy_envs import hollywood_gin_v0
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import Phase
from rummy_envs.games.hollywood_gin import NUM_COLUMNS, HollywoodConfig, HollywoodState, Scoresheet
from env_contract import GameSpec, StepChecks, Watcher
from test_gin_rummy_env import (
    AGENTS,
    SHOWDOWN,
    check_hand_result,
    check_state,
    hidden_variants,
    knocky,
    own_card_swap,
    replay_dict,
    step_bound,
    uniform,
)

COLS = range(NUM_COLUMNS)
ENV_KEYS = {"render_mode", "reward", "reward_scale", "illegal_action", "rich_info", "observe_opponent_hand"}

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
    "match_small": {**SMALL, "rich_info": True},  # the contract checks the fixed part of rich infos too
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
    """The env with the rich infos (the hand result and the sheet), which these tests check."""
    return hollywood_gin_v0.env(**{"rich_info": True, **options})


def rules_of(options: dict) -> dict:
    return {k: v for k, v in options.items() if k not in ENV_KEYS}


def centred(values) -> list[float]:
    mean = sum(values) / len(values)
    return [v - mean for v in values]


# ---------------------------------------------------------------------------------------
# An independent reference sheet, fed from the hand results
# ---------------------------------------------------------------------------------------


class RefSheet:
    """The sheet of docs/hollywood_gin.md#the-scoresheet, recomputed from won hands alone."""

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
# The sheet checked through every game (engine) and every episode (env)
# ---------------------------------------------------------------------------------------


class SheetWatcher(Watcher):
    """After every hand: the sheet against the reference sheet, the dealer and the match
    end; at the end: scores, returns and winner from the reference sheet."""

    def __init__(self, config: HollywoodConfig) -> None:
        self.config = config
        self.ref = RefSheet(config.target_score)

    def before(self, state: HollywoodState) -> None:
        self.snapshot = Before(state)

    def after(self, state: HollywoodState) -> None:
        if len(state.hand_results) != self.snapshot.hands:
            check_hand_end(self.config, state, self.ref, self.snapshot)

    def end(self, s: HollywoodState) -> None:
        config, ref = self.config, self.ref
        if config.episode == "hand":
            assert len(s.hand_results) == 1 and s.scores() == s.hand_results[0].points
            assert s.match.to_dict() == Scoresheet().to_dict()
            return
        assert s.scores() == ref.totals(config) == s.match.scores(config)
        assert s.returns() == centred(ref.totals(config))
        assert s.match.is_over() == ref.over() == (not s.truncated)
        assert s.match.winner(config) == ref.winner(config)
        again = RefSheet(config.target_score)  # the sheet is exactly the won hands replayed in order
        for r in s.hand_results:
            if r.winner >= 0:
                again.win(r.winner, r.points[r.winner])
        again.assert_matches(s.match, "replaying the hand results")


def sheet_segments(env, agent: str) -> dict[str, np.ndarray]:
    """The sheet segments of ``agent``'s observation, by name."""
    return {name: values for name, values in decode(env.unwrapped, agent).items() if name.startswith("sheet_")}


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
    """The rich infos of a hand's end (the hand result, the sheet); envs without ``rich_info``
    have only the fixed structure, which the contract checks."""
    raw = env.unwrapped
    if not raw.rich_info:
        return
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


class SheetChecks(StepChecks):
    """Every step of an episode (which may start from a state dict with a sheet): the sheet
    against the reference sheet after each hand, the infos, the exact rewards of each step,
    and the sheet segments of the observation (at each hand end and with probability
    ``obs_prob``)."""

    def __init__(self, env, obs_prob: float = 0.1) -> None:
        raw = env.unwrapped
        self.cfg = cfg = raw.config
        self.match = cfg.episode == "match"
        self.ref = RefSheet(cfg.target_score, raw.game.match.to_dict())
        self.start_returns = centred(self.ref.totals(cfg)) if self.match else [0.0, 0.0]
        self.obs_prob = obs_prob
        self.rng = random.Random(1)
        check_sheet_obs(env)

    def before(self, env) -> None:
        self.snapshot = Before(env.unwrapped.game)
        self.settled_before = self.ref.totals(self.cfg)

    def after(self, env) -> None:
        raw, cfg, ref = env.unwrapped, self.cfg, self.ref
        g = raw.game
        rewards = [raw.rewards[a] for a in AGENTS]
        ended = len(g.hand_results) != self.snapshot.hands
        if ended:
            check_hand_end(cfg, g, ref, self.snapshot)
            check_infos(env, ref)
        if raw.reward_mode == "points":
            if not ended:
                expected = [0.0, 0.0]
            elif self.match:
                expected = centred([n - o for n, o in zip(ref.totals(cfg), self.settled_before)])
            else:
                expected = centred(g.hand_results[-1].points)
        else:
            expected = [0.0, 0.0]
            if g.is_terminal():
                scores = g.scores()
                w = ref.winner(cfg) if self.match else (0 if scores[0] > scores[1] else 1 if scores[1] > scores[0] else -1)
                if w >= 0:
                    expected[w], expected[1 - w] = 1.0, -1.0
        assert rewards == pytest.approx([e / raw.reward_scale for e in expected]), (rewards, expected)
        if g.is_terminal() and self.match and cfg.match_winner_rule == "games_won" and not g.truncated:
            assert g.match.winner(cfg) >= 0 and max(g.match.columns_won()) >= 2
        if ended or self.rng.random() < self.obs_prob:
            check_sheet_obs(env)


def play_env(env, rng: random.Random, policy=knocky, exhaustive_prob: float = 0.0, obs_prob: float = 0.1):
    """One episode through the wrapped env with the contract's checks and the sheet's.
    Returns each agent's total of the rewards given by last(), the returns at the start
    (points) and the final state."""
    checks = SheetChecks(env, obs_prob)
    totals, game, _ = contract.play_env(HOLLYWOOD, env, rng, policy, exhaustive_prob, checks)
    return totals, checks.start_returns, game


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


def check_coverage(name: str, finals: list[HollywoodState]) -> None:
    kinds = Counter(r.kind for s in finals for r in s.hand_results)
    assert kinds["knock"] + kinds["gin"] + kinds["undercut"] > 0, kinds
    if finals[0].config.episode == "match":
        assert kinds["dead"] + kinds["turn_cap"] > 0, kinds  # hands without a winner were checked
        if name == "caps":
            assert any(s.truncated for s in finals)
        else:
            assert sum(s.match.is_over() for s in finals) > 0.9 * len(finals)


HOLLYWOOD = GameSpec(
    id="hollywood_gin",
    module=hollywood_gin_v0,
    state_class=HollywoodState,
    config_class=HollywoodConfig,
    env_option_sets=ENV_OPTION_SETS,
    rule_sets=RULE_SETS,
    policy=knocky,
    hand_policies=(uniform, knocky, knocky, knocky),
    check_state=check_state,
    hidden_variants=hidden_variants,
    own_card_swap=own_card_swap,
    replay=lambda d: replay_dict(d, HollywoodState),
    action_to_str=G.action_to_str,
    full_deck=lambda config: list(range(52)),
    step_bound=step_bound,
    seeding_options=dict(SMALL),
    persistent_options={**SMALL, "column_bonuses": False, "match_winner_rule": "total_points", "reward_scale": 2.0},
    dead_step_options=({}, dict(SMALL)),
    bad_action_strings=("MELD(AS 5D 9H)", "LAYOFF(5H,3)"),
    watcher=SheetWatcher,
    env_checks=SheetChecks,
    special=lambda state: state.phase in SHOWDOWN or state.phase == Phase.LAST_CHANCE,
    reveals=lambda state, action: action == G.DRAW_STOCK,
    snapshot_filter=lambda rules, state: rules.get("episode") != "match" or sum(state.match.wins) > 0,
    check_coverage=check_coverage,
    # hand sets: 150 hands; match sets: 25 matches of ~5 hands (10 of ~13 to the target of 100, 10 of ~7 in "variety")
    engine_games={name: (10 if name in ("match", "variety") else 25 if name in MATCH_SETS else 150) for name in RULE_SETS},
    env_episodes={name: {"match": 2, "caps_win_loss": 3}.get(name, 3 if options.get("episode") == "match" else 15)
                  for name, options in ENV_OPTION_SETS.items()},
    leak_sets=("hand", "hand_explicit", "match_small", "match_explicit"),
    dict_sets=("hand", "hand_explicit", "match_small", "match_explicit", "no_bonuses", "variety"),
    main_set="hand_explicit",
    leak_games=10,
    illegal_episodes=6,
)


def test_sheet_layout():
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


# ---------------------------------------------------------------------------------------
# The sheet's rewards, infos and caps
# ---------------------------------------------------------------------------------------


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
# The sheet in the observation
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
# Determinizations and illegal actions deep in matches
# ---------------------------------------------------------------------------------------


def test_determinization_keeps_the_sheet():
    rng = random.Random(23)
    states = snapshots(SMALL, 6, seed=2, require_sheet=True)
    for state in states:
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            assert isinstance(det, HollywoodState) and det.match == state.match
            assert det.player_view(p) == state.player_view(p)
            det.match.record_win(p, 5, 30)  # the copy's sheet is its own
            assert det.match != state.match


@pytest.mark.parametrize("name", ["match_small", "match_explicit", "win_loss"])
def test_illegal_actions_deep_in_matches(name):
    """Illegal actions change nothing also with a sheet, and right after a hand ended
    mid-match (the contract tries them from fresh deals)."""
    options = ENV_OPTION_SETS[name]
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(31)
    states = snapshots(options, 6, seed=8, require_sheet=True, showdown=False, every=0.3)
    tried = after_hand = 0
    for state in states[:5]:
        env.reset(options={"state": state.to_dict()})
        hands = len(raw.game.hand_results)
        for _ in range(60):
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
            g = raw.game
            fresh_hand = len(g.hand_results) != hands
            if fresh_hand or rng.random() < 0.15 or (g.phase in SHOWDOWN and rng.random() < 0.5):
                tried += contract.try_illegal(HOLLYWOOD, env, rng)
                after_hand += fresh_hand
            hands = len(g.hand_results)
            env.step(knocky(g, rng))
    assert tried > 40 and after_hand > 0


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
# State dicts holding a sheet, reset from a state
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [dict(SMALL), {**SMALL, **EXPLICIT, "column_bonuses": False}])
def test_state_dicts_keep_the_sheet(options):
    """Mid-match dicts round-trip the Hollywood state itself: its game name, its options and
    a Scoresheet equal to the original (the contract checks the rest of the round trip)."""
    config = HollywoodConfig(**options)
    states = snapshots(options, 4, seed=2, require_sheet=True, every=0.3)
    assert len(states) > 4
    for state in states:
        d = state.to_dict()
        assert d["game"] == "hollywood_gin" and d["options"]["column_bonuses"] == config.column_bonuses
        rebuilt = HollywoodState.from_dict(d)
        assert type(rebuilt) is HollywoodState and isinstance(rebuilt.match, Scoresheet)
        assert rebuilt.config == config and rebuilt.match == state.match and sum(rebuilt.match.wins) > 0


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
    """docs/hollywood_gin.md#episodes-and-rewards: in hand mode the sheet is observed (empty unless the episode starts
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
