"""The least_count_v0 environment: its contract spec (run by tests/test_env_contract.py for 2,
4 and 10 players) and what is particular to it: eliminated players leaving ``agents`` the
PettingZoo way (a last reward, a dead step, never acting again), every match ending with
one winner, rewards over rounds and matches, every observation segment decoded against
the player view, infos, the caps, the deal from a given deck, state() and rendering.

Seeded games are also checked at every decision against a record of the public play kept
here action by action (``Public``: open set, dead pile, known cards, hand sizes, closed
deck, totals, eliminations, finished turns): the player views and observations, the masks
and round scores against the oracles of tests/least_count_oracle.py, and determinizations
keeping every publicly known card where it is.

The rules scenarios are in test_least_count_rules.py, the brute-force discard oracle and
the property tests in test_least_count_engine.py.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import env_contract as contract
from env_contract import GameSpec, StepChecks, Watcher
from least_count_oracle import legal_subsets, oracle_eliminated, oracle_round, oracle_value
from rummy_envs import cards as C
from rummy_envs import least_count_v0
from rummy_envs.envs.base import rank_rewards
from rummy_envs.envs.least_count import LeastCountEnv
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState, Phase
from observations import counts, decode

# Env configurations (rules + env options), run at every player count.
ENV_OPTION_SETS = {
    "default": {},
    "match": {"episode": "match"},
    "win_loss_match": {"reward": "win_loss", "episode": "match", "elimination_score": 40},
    "mainstream": {"hand_size": 7, "sequence_same_suit": True, "allow_three_of_a_kind": True, "declare_max_count": 10,
                   "false_declare_penalty": 40, "reward_scale": 10.0},
    "jokers_cut": {"num_printed_jokers": 2, "cut_joker": True, "allow_two_different_pairs": True,
                   "sequence_lengths": (3, 4, 5)},
    "first_elimination": {"reward": "win_loss", "episode": "match", "match_end": "first_elimination",
                          "elimination_score": 30},
}
ENV_ONLY = {"reward", "reward_scale"}
RULE_SETS = {
    **{name: {k: v for k, v in options.items() if k not in ENV_ONLY} for name, options in ENV_OPTION_SETS.items()},
    "match_options": {"episode": "match", "elimination_score": 25, "eliminate_on_equal": True,
                      "tie_declaration_valid": True, "initial_open_card": False, "declare_timing": "start_of_any_turn"},
    "two_decks": {"num_decks": 2, "num_printed_jokers": 1, "hand_size": 7, "cut_joker": True},
    "caps": {"episode": "match", "max_turns_per_round": 6, "max_rounds": 3},
}
MATCH_SETS = ("match", "win_loss_match", "first_elimination", "match_options", "caps")


# ---------------------------------------------------------------------------------------
# Policies, invariants and hidden-card variants
# ---------------------------------------------------------------------------------------


def uniform(state: LeastCountState, rng: random.Random) -> int:
    return rng.choice(state.legal_actions())


def patient(state: LeastCountState, rng: random.Random) -> int:
    """Random play that seldom declares and often picks from the open set, so rounds run long
    enough to empty the closed deck (reshuffles) and reach the turn cap."""
    legal = state.legal_actions()
    if legal[0] == L.DECLARE and len(legal) > 1 and rng.random() > 0.02:
        legal = legal[1:]
    if state.phase == Phase.PICK and len(legal) > 1 and rng.random() < 0.6:
        legal = legal[:-1] if legal[-1] == L.PICK_CLOSED else legal
    return rng.choice(legal)


def check_state(s: LeastCountState) -> None:
    """Every card in one place; hands, known cards, seats and piles consistent."""
    cfg = s.config
    everything = Counter(s.stock) + Counter(s.open_set) + Counter(s.pending) + Counter(s.dead)
    if s.cut_card >= 0:
        everything[s.cut_card] += 1
    for hand in s.hands:
        everything.update(hand)
    assert everything == Counter(cfg.full_deck()), f"cards not conserved in phase {s.phase.name}"
    assert (s.cut_card >= 0) == cfg.cut_joker
    for q in range(s.n):
        assert s.hands[q] == sorted(s.hands[q]) and len(s.hands[q]) <= cfg.hand_size
        assert not Counter(s.known[q]) - Counter(s.hands[q]), "known cards not in the hand"
        if s.out_round[q]:  # the hands of the last round stay on show once the match is over
            assert (s.is_terminal() or not s.hands[q]) and s.current_player != q and q not in s.winners
    if s.is_terminal():
        assert s.current_player == -1 and not s.legal_actions()
        return
    assert s.legal_actions(), f"no legal action in {s.phase.name}: a dead end"
    assert not s.out_round[s.current_player] and not s.out_round[s.dealer]
    sizes = [len(h) for q, h in enumerate(s.hands) if not s.out_round[q] and q != s.current_player]
    assert all(sizes), "a player in the round holds no card"
    assert (s.phase == Phase.PICK) == bool(s.pending)
    if s.phase == Phase.TURN_START:
        assert s.hands[s.current_player] and (L.DECLARE in s.legal_actions()) == s.may_declare(s.current_player)


def hidden_variants(state: LeastCountState, p: int, rng: random.Random) -> list[tuple[str, dict]]:
    """State dicts that differ from ``state`` only in what player ``p`` cannot see: an unseen
    card of another hand swapped with a stock card, and the stock reordered."""
    if state.is_terminal():
        return []
    d = state.to_dict()
    out: list[tuple[str, dict]] = []
    others = [q for q in range(state.n) if q != p and state.hidden_cards(q)]
    q = rng.choice(others) if others else -1
    hidden = state.hidden_cards(q) if others else []
    swappable = [x for x in sorted(set(hidden)) if any(y != C.format_card(x) for y in d["stock"])]
    if swappable:
        v = contract.swap_with_stock(d, q, C.format_card(rng.choice(swappable)), rng)
        out.append((f"swap a card of seat {q} with a stock card", v))
    return out + contract.shuffled_stock(d, rng)


def own_card_swap(d: dict, p: int) -> dict:
    v = copy.deepcopy(d)
    x = v["hands"][p][0]
    j = next(i for i, y in enumerate(v["stock"]) if y != x)
    v["hands"][p][0], v["stock"][j] = v["stock"][j], x
    v["hands"][p] = contract.sorted_hand(v["hands"][p])
    v["known"][p] = []
    return v


def replay_dict(d: dict) -> LeastCountState:
    return L.replay(LeastCountConfig.from_kwargs(**d["options"]), d["seed"], d["history"], d["initial_deck"],
                    d["first_dealer"])


def step_bound(config: LeastCountConfig) -> int:
    """More actions than a game can take: two per turn and a declaration per round."""
    per_round = 2 * config.max_turns_per_round + 1
    return per_round * (config.max_rounds if config.episode == "match" else 1)


class MatchWatcher(Watcher):
    """An eliminated seat never moves again and stays out; every round is scored by the rules;
    a match to the last player standing ends with exactly one winner (unless capped)."""

    def __init__(self, config: LeastCountConfig) -> None:
        self.config = config

    def before(self, state: LeastCountState) -> None:
        assert not state.out_round[state.current_player], "an eliminated player is asked to act"
        self.out = list(state.out_round)
        self.rounds = len(state.hand_results)

    def after(self, state: LeastCountState) -> None:
        assert all(now == before for now, before in zip(state.out_round, self.out) if before), "a seat came back"
        if len(state.hand_results) != self.rounds:
            check_round_score(self.config, state.hand_results[-1], self.out)

    def end(self, state: LeastCountState) -> None:
        cfg = self.config
        if cfg.episode == "match" and cfg.match_end == "last_player_standing" and not state.truncated:
            assert len(state.winners) == 1 and state.active_seats() == state.winners, state.winners
            assert state.standings()[state.winners[0]] == -1


def check_round_score(config: LeastCountConfig, result: L.RoundResult, out_before: list[int]) -> None:
    """The round's points recomputed from its hands by the rules (docs/least_count.md#showdown)."""
    players = [q for q in range(config.num_players) if not out_before[q]]
    assert result.players == players and (result.cut_card >= 0) == config.cut_joker
    wild = result.cut_card % 13 if 0 <= result.cut_card < L.JOKER else -1
    counts = [sum(0 if c == L.JOKER or c % 13 == wild else min(c % 13 + 1, 10) for c in hand) for hand in result.hands]
    assert result.counts == counts
    low = min(result.counts[q] for q in players)
    if result.kind == "timeout":
        assert result.points == [result.counts[q] - low if q in players else 0 for q in range(len(counts))]
        return
    d = result.counts[result.declarer]
    beaten = [q for q in players if q != result.declarer and (result.counts[q] <= d if not config.tie_declaration_valid
                                                              else result.counts[q] < d)]
    if result.kind == "valid_declaration":
        assert not beaten
        assert result.points == [result.counts[q] - d if q in players else 0 for q in range(len(counts))]
    else:
        assert beaten and result.kind == "false_declaration"
        expected = [0] * len(counts)
        expected[result.declarer] = config.false_declare_penalty + d - low
        assert result.points == expected


class EliminationChecks(StepChecks):
    """Through the env: an agent whose seat is out is terminated at once, selected only for
    its dead step, and gone from ``agents`` after it; nobody else is terminated early."""

    def before(self, env: Any) -> None:
        raw = env.unwrapped
        out = {raw.possible_agents[q] for q in raw._seats_out()}
        assert raw.agent_selection not in out, "an eliminated agent is asked to act"
        assert not out & set(raw.agents), "an eliminated agent is still in agents after its dead step"
        self.agents = list(raw.agents)

    def after(self, env: Any) -> None:
        raw = env.unwrapped
        if any(raw.truncations.values()) or all(raw.terminations.values()):
            return
        out = {raw.possible_agents[q] for q in raw._seats_out()}
        assert raw.agents == self.agents, "agents changed without a dead step"
        assert {a for a in raw.agents if raw.terminations[a]} == out & set(raw.agents)
        if out & set(raw.agents):
            assert raw.agent_selection in out, "a leaving agent's dead step comes first"


def check_coverage(name: str, finals: list[LeastCountState]) -> None:
    kinds = Counter(r.kind for s in finals for r in s.hand_results)
    if name == "caps":
        assert kinds["timeout"] > 0 and all(s.truncated for s in finals if len(s.active_seats()) > 1), kinds
        return
    if name == "mainstream":  # declaring needs a count of 10 at most: rounds run long
        assert sum(s.reshuffles for s in finals) > 0 and kinds["timeout"] > 0, kinds
        return
    assert kinds["false_declaration"] > 0, kinds
    if name == "default" and finals[0].n <= 4:  # the lowest of ten hands seldom declares at random
        assert kinds["valid_declaration"] > 0, kinds
    if name in MATCH_SETS:
        assert sum(len(r.eliminated) for s in finals for r in s.hand_results) > 0


def spec(players: int) -> GameSpec:
    """The contract spec at a player count (fewer games as the tables grow)."""
    fewer = {2: 1, 4: 2, 10: 6}[players]
    engine_games = {name: max(2, (60 if name == "default" else 16) // fewer) for name in RULE_SETS}
    for name in MATCH_SETS:
        engine_games[name] = max(2, 8 // fewer)
    return GameSpec(
        id=f"least_count-{players}p",
        module=least_count_v0,
        state_class=LeastCountState,
        config_class=LeastCountConfig,
        env_option_sets=ENV_OPTION_SETS,
        rule_sets=RULE_SETS,
        policy=uniform,
        check_state=check_state,
        hidden_variants=hidden_variants,
        own_card_swap=own_card_swap,
        replay=replay_dict,
        action_to_str=L.action_to_str,
        full_deck=lambda config: config.full_deck(),
        step_bound=step_bound,
        seeding_options={"episode": "match"},
        persistent_options={"hand_size": 4, "num_printed_jokers": 1, "cut_joker": True, "episode": "match",
                            "sequence_lengths": (3, 4), "reward_scale": 2.0},
        dead_step_options=({}, {"episode": "match", "match_end": "first_elimination", "elimination_score": 30},
                           {"max_turns_per_round": 3}),
        bad_action_strings=("DISCARD(7)", "DISCARD(0,0)", "DISCARD()", "PICK_OPEN(XX)", "DECLARE(1)",
                            "PICK_CLOSED(AS)"),
        base_options={"num_players": players},
        watcher=MatchWatcher,
        special=lambda state: state.phase == Phase.PICK and not state.stock,
        reveals=lambda state, action: action == L.PICK_CLOSED,
        check_coverage=check_coverage,
        engine_games=engine_games,
        env_episodes={name: (12 if name in ("default", "mainstream") else 3) // fewer or 1 for name in ENV_OPTION_SETS},
        continued_states=12 // fewer,
        illegal_episodes={2: 4, 4: 3, 10: 2}[players],
        leak_sets=("default", "mainstream", "jokers_cut", "two_decks"),
        dict_sets=("default", "match", "jokers_cut", "two_decks", "match_options"),
        play_out_steps=40,
        leak_games={2: 4, 4: 3, 10: 2}[players],
        hand_policies=(uniform, patient),
        env_checks=lambda env: EliminationChecks(),
    )


SPECS = [spec(2), spec(4), spec(10)]


def make_env(**options):
    return least_count_v0.env(**options)


def run_episode(env, rng: random.Random, policy=uniform, before=None, after=None) -> dict[str, float]:
    """Play one episode the AEC way; ``before`` and ``after`` see the raw env around every
    live step. Returns each agent's total reward from ``last()``."""
    raw = env.unwrapped
    totals = dict.fromkeys(raw.possible_agents, 0.0)
    for agent in env.agent_iter():
        _, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        if before:
            before(raw)
        env.step(policy(raw.game, rng))
        if after:
            after(raw)
    return totals


# ---------------------------------------------------------------------------------------
# Eliminations, winners and rewards through the env
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4, 10])
def test_matches_end_with_one_winner_and_the_eliminated_never_act_again(players):
    env = make_env(num_players=players, episode="match", elimination_score=60)
    raw = env.unwrapped
    rng = random.Random(players)
    left_early = 0
    for seed in range(12 // players + 1):
        env.reset(seed=seed)
        gone: list[str] = []
        for agent in env.agent_iter():
            assert agent not in gone, f"{agent} is selected after its dead step"
            _, _, term, trunc, info = env.last()
            if term and not raw.game.is_terminal():  # eliminated mid-match: its dead step
                assert raw.game.out_round[raw.agent_name_mapping[agent]] and info["eliminated"] is True
                env.step(None)
                assert agent not in env.agents and agent not in raw.terminations
                gone.append(agent)
                continue
            if term or trunc:
                env.step(None)
                continue
            assert not raw.game.out_round[raw.agent_name_mapping[agent]]
            env.step(uniform(raw.game, rng))
        game = raw.game
        assert len(game.winners) == 1 and not game.truncated and env.agents == []
        last_round = len(game.hand_results)
        assert sorted(gone) == sorted(raw.possible_agents[q] for q in range(players)
                                      if 0 < game.out_round[q] < last_round)
        assert all(game.out_round[q] for q in range(players) if q != game.winners[0])
        left_early += len(gone)
    assert left_early > 0 or players == 2


def test_win_loss_pays_the_finishing_order_and_each_step_sums_to_zero():
    env = make_env(num_players=4, episode="match", elimination_score=30, reward="win_loss", reward_scale=2.0)
    raw = env.unwrapped
    rng = random.Random(3)

    def zero_sum(raw_env):
        assert abs(sum(raw_env.rewards.values())) < 1e-9

    for seed in range(6):
        env.reset(seed=seed)
        totals = run_episode(env, rng, after=zero_sum)
        game = raw.game
        expected = [r / 2.0 for r in rank_rewards(game.standings())]
        assert [totals[a] for a in raw.possible_agents] == pytest.approx(expected)
        assert totals[raw.possible_agents[game.winners[0]]] == pytest.approx(0.5)
        first_out = min(game.out_round[q] for q in range(4) if q not in game.winners)
        worst = max(game.totals[q] for q in range(4) if game.out_round[q] == first_out)
        for q in range(4):
            if game.out_round[q] == first_out and game.totals[q] == worst:
                assert totals[raw.possible_agents[q]] == pytest.approx(min(expected))


def test_points_rewards_are_centred_on_the_players_of_each_round():
    env = make_env(num_players=4, episode="match", elimination_score=40, reward_scale=5.0, rich_info=True)
    raw = env.unwrapped
    rng = random.Random(8)
    env.reset(seed=2)
    checked = 0
    while raw.agents:
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            env.step(None)
            continue
        rounds = len(raw.game.hand_results)
        live = list(raw.agents)
        env.step(uniform(raw.game, rng))
        if len(raw.game.hand_results) == rounds:
            assert all(r == 0.0 for r in raw.rewards.values())
            continue
        result = raw.game.hand_results[-1]
        mean = sum(result.points[q] for q in result.players) / len(result.players)
        assert sorted(raw.rewards) == sorted(live) == sorted(raw.possible_agents[q] for q in result.players)
        for q in result.players:
            assert raw.rewards[raw.possible_agents[q]] == pytest.approx((mean - result.points[q]) / 5.0)
        for q, agent_name in enumerate(raw.possible_agents):
            if agent_name in raw.agents:
                info = raw.infos[agent_name]["hand_result"]
                assert info["points"] == result.points and info["seat"] == q and info["hand_number"] == rounds + 1
        checked += 1
    assert checked > 3 and len(raw.game.winners) == 1


def test_one_round_episode_ends_everyone_together_and_timeouts_truncate():
    env = make_env(max_turns_per_round=4, rich_info=True)
    raw = env.unwrapped
    env.reset(seed=1)
    while not any(raw.truncations.values()):
        env.step(raw.game.legal_actions()[-1])  # never declares
    assert all(raw.truncations.values()) and not any(raw.terminations.values())
    assert raw.infos["player_0"]["truncated"] is True and raw.infos["player_0"]["hand_result"]["kind"] == "timeout"
    assert env.agents == raw.possible_agents


# ---------------------------------------------------------------------------------------
# The observation, segment by segment
# ---------------------------------------------------------------------------------------


def check_observation(raw, agent: str) -> None:
    """Every segment of ``agent``'s observation says what its player view says."""
    view = raw.player_view(agent)
    seg = decode(raw, agent)
    cfg = raw.config
    n = cfg.num_players
    assert counts(seg["hand"]) == sorted(view.hand)
    slots = seg["hand_slots"].reshape(L.MAX_HAND, L.NUM_IDS)
    assert [int(np.flatnonzero(row)[0]) for row in slots[:len(view.hand)]] == list(view.hand)
    assert not slots[len(view.hand):].any()
    assert counts(seg["open_set"]) == sorted(view.open_set)
    assert counts(seg["pending_discard"]) == sorted(view.pending_discard)
    assert counts(seg["dead_pile"]) == sorted(view.dead_pile)
    assert np.flatnonzero(seg["cut_card"]).tolist() == ([] if view.cut_card is None else [view.cut_card])
    for k in range(n):
        assert counts(seg["known"][k * L.NUM_IDS:(k + 1) * L.NUM_IDS]) == sorted(view.known[k])
    sizes = seg["hand_sizes"].reshape(n, cfg.hand_size + 1)
    assert sizes.sum(axis=1).tolist() == [1.0] * n and sizes.argmax(axis=1).tolist() == list(view.hand_sizes)
    assert np.allclose(seg["totals"] * cfg.elimination_score, view.totals, atol=1e-3)
    assert seg["eliminated"].tolist() == [float(x) for x in view.eliminated]
    assert seg["turn_done"].tolist() == [float(x) for x in view.turn_done]
    assert seg["stock_size"][0] * cfg.deck_size == pytest.approx(view.stock_size)
    assert seg["turns"][0] * cfg.max_turns_per_round == pytest.approx(view.turns)
    assert np.flatnonzero(seg["phase"]).tolist() == [int(view.phase)]
    assert np.flatnonzero(seg["to_move"]).tolist() == ([] if view.to_move is None else [view.to_move])
    assert np.flatnonzero(seg["dealer"]).tolist() == [view.dealer]


@pytest.mark.parametrize("options, policy", [
    ({"episode": "match", "elimination_score": 40}, uniform),
    ({"num_players": 10, "num_printed_jokers": 2, "cut_joker": True, "hand_size": 7}, uniform),
    ({"num_players": 3, "num_decks": 2, "initial_open_card": False, "max_turns_per_round": 40}, patient),
])
def test_every_segment_decodes_to_the_view(options, policy):
    env = make_env(**options)
    rng = random.Random(5)
    seen = Counter()

    def look(raw_env):
        for other in rng.sample(raw_env.possible_agents, 2):
            check_observation(raw_env, other)
        g = raw_env.game
        seen["pending"] += bool(g.pending)
        seen["known"] += any(g.known)
        seen["dead"] += bool(g.dead)
        seen["copies"] += any(len(set(h)) < len(h) for h in g.hands) or g.config.decks == 1
        seen["out"] += any(g.out_round) or g.config.episode == "hand"
        seen["totals"] += any(g.totals) or g.config.episode == "hand"

    for seed in range(3):
        env.reset(seed=seed)
        run_episode(env, rng, policy=policy, before=look)
    assert min(seen.values()) > 0, seen


def test_copies_of_an_env_encode_their_own_states():
    """A deep copy or an unpickled env plays on by itself and observes its own state (the
    encoder's buffer is copied with it, not shared or left behind)."""
    import pickle
    env = least_count_v0.env(num_players=4)
    env.reset(seed=3)
    for _ in range(5):
        env.step(int(env.last()[0]["action_mask"].nonzero()[0][0]))
    for dup in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        fresh = least_count_v0.env(num_players=4)
        fresh.reset(options={"state": dup.unwrapped.game.to_dict()})
        dup.step(int(dup.last()[0]["action_mask"].nonzero()[0][-1]))
        fresh.step(int(fresh.last()[0]["action_mask"].nonzero()[0][-1]))
        for agent in env.unwrapped.possible_agents:
            assert np.array_equal(dup.unwrapped.observe(agent)["observation"],
                                  fresh.unwrapped.observe(agent)["observation"]), agent


def test_an_observation_updated_after_a_discard_equals_one_encoded_afresh(monkeypatch):
    """The encoder keeps each seat's last observation and updates it after the seat's own
    discard or game-ending declaration; every observation, of the mover and of other seats,
    equals the one a copy of the env encodes from nothing (one or two decks, jokers, matches
    with eliminations, the dead pile reshuffled)."""
    def afresh(raw, agent):
        twin = copy.deepcopy(raw)
        twin._encoded = [None] * len(raw.possible_agents)
        return twin.observe(agent)["observation"]

    paths: Counter = Counter()
    watched = [None]
    for name in ("_encode_all", "_encode_own_discard", "_encode_own_declaration"):
        def counted(self, *args, _name=name, _encode=getattr(LeastCountEnv, name)):
            paths[_name] += self is watched[0]
            return _encode(self, *args)
        monkeypatch.setattr(LeastCountEnv, name, counted)

    reshuffles = 0
    for options in ({"num_players": 4},
                    {"num_players": 7, "episode": "match", "num_printed_jokers": 2, "cut_joker": True,
                     "max_turns_per_round": 30, "elimination_score": 40, "hand_size": 7},
                    {"num_players": 2, "max_turns_per_round": 120}):  # with no declaring: the deck runs out
        env = least_count_v0.env(**options)
        raw = watched[0] = env.unwrapped
        rng = random.Random(5)
        paths.clear()
        for seed in range(6):
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                seen = [(agent, obs["observation"])]
                if rng.random() < 0.3:
                    other = rng.choice(raw.possible_agents)
                    seen.append((other, raw.observe(other)["observation"]))
                for who, vector in seen:
                    assert np.array_equal(vector, afresh(raw, who)), (seed, who)
                legal = obs["action_mask"].nonzero()[0]
                if options["num_players"] == 2 and len(legal) > 1:
                    legal = legal[legal != L.DECLARE]
                reshuffles = max(reshuffles, raw.game.reshuffles)
                env.step(None if term or trunc else int(rng.choice(legal)))
        declared = paths.pop("_encode_own_declaration", 0)
        assert min(paths.values()) >= 6 and len(paths) == 2, (options, paths)  # both ways, in every game
        assert declared >= 2 or options["num_players"] == 2, (options, declared)  # the 2-player games time out
    assert reshuffles > 0


def test_layout_sizes_by_player_count():
    sizes = {}
    for players in range(2, 11):
        raw = least_count_v0.raw_env(num_players=players)
        layout = raw.observation_layout()
        assert layout["known"].size == players * 53 and layout["hand_slots"].size == 7 * 53
        sizes[players] = raw.observation_size
    assert sizes[4] == 897 and sizes[10] - sizes[4] == 6 * (53 + 6 + 5)  # docs/least_count.md#observation
    assert least_count_v0.raw_env().action_space("player_0").n == L.NUM_ACTIONS == 182


def test_the_observation_hides_other_hands_but_shows_known_cards():
    state = LeastCountState(LeastCountConfig(num_players=3), seed=4)
    env = make_env(num_players=3)
    raw = env.unwrapped
    env.reset(options={"state": state.to_dict()})
    mover = raw.agent_selection
    env.step(L.DISCARD)
    open_card = raw.game.player_view(0).open_set[0]
    env.step(L.PICK_OPEN + open_card)
    seat = raw.agent_name_mapping[mover]
    for agent in raw.possible_agents:
        view = raw.player_view(agent)
        assert view.known[(seat - view.player) % 3] == (open_card,)
        assert counts(decode(raw, agent)["hand"]) == list(view.hand) == raw.game.hands[view.player]


# ---------------------------------------------------------------------------------------
# Seeded games checked against the public play, followed action by action
# ---------------------------------------------------------------------------------------


def oracle_legal(state: LeastCountState, public: Public) -> set[int]:
    """The legal actions of the player to move from the rules and the public record."""
    cfg, p = state.config, state.current_player
    hand = state.hands[p]
    if state.phase == Phase.TURN_START:
        count = sum(oracle_value(c, state.cut_card) for c in hand)
        may = public.turn_done[p] or cfg.declare_timing == "start_of_any_turn"
        may = may and (cfg.declare_max_count is None or count <= cfg.declare_max_count)
        subsets = legal_subsets(hand, lengths=cfg.sequence_lengths, same_suit=cfg.sequence_same_suit,
                                triples=cfg.allow_three_of_a_kind, two_pairs=cfg.allow_two_different_pairs)
        return ({L.DECLARE} if may else set()) | {L.DISCARD - 1 + s for s in subsets}
    out = {L.PICK_OPEN + c for c in public.open_set}
    return out | ({L.PICK_CLOSED} if public.stock or public.dead else set())


@dataclass
class Public:
    """What every player has seen of the round, and the match so far."""

    open_set: list[int]
    stock: int
    dead: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    known: list[list[int]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    turn_done: list[bool] = field(default_factory=list)
    turns: int = 0

    @classmethod
    def deal(cls, state: LeastCountState) -> Public:
        n = state.n
        return cls(open_set=list(state.open_set), stock=len(state.stock), known=[[] for _ in range(n)],
                   sizes=[len(h) for h in state.hands], turn_done=[False] * n)

    def play(self, state: LeastCountState, action: int) -> None:
        """Record ``action`` of the player to move (before it is applied)."""
        p = state.current_player
        if L.DISCARD <= action < L.PICK_OPEN:
            cards = L.subset_cards(state.hands[p], action)
            self.pending = cards
            for card in cards:
                if card in self.known[p]:
                    self.known[p].remove(card)
            self.sizes[p] -= len(cards)
            return
        if action == L.PICK_CLOSED:
            if not self.stock:
                self.stock, self.dead = len(self.dead), []
            self.stock -= 1
        elif action >= L.PICK_OPEN:
            card = action - L.PICK_OPEN
            self.open_set.remove(card)
            self.known[p].append(card)
        else:
            return
        self.sizes[p] += 1
        self.dead += self.open_set
        self.open_set, self.pending = sorted(self.pending), []
        self.turn_done[p] = True
        self.turns += 1


@dataclass
class Match:
    """The match score, kept from the rounds' points as the rules give them."""

    totals: list[int]
    out: list[bool]


def check_view(state: LeastCountState, public: Public, match: Match, player: int) -> None:
    """``player``'s view against the public record (seats relative, ``player`` first)."""
    view = state.player_view(player)
    n = state.n
    seats = [(player + k) % n for k in range(n)]
    assert sorted(view.open_set) == sorted(public.open_set)
    assert Counter(view.dead_pile) == Counter(public.dead)
    assert list(view.pending_discard) == public.pending
    assert view.stock_size == public.stock
    assert [Counter(k) for k in view.known] == [Counter(public.known[q]) for q in seats]
    assert list(view.hand_sizes) == [public.sizes[q] for q in seats]
    assert list(view.turn_done) == [public.turn_done[q] for q in seats]
    assert list(view.totals) == [match.totals[q] for q in seats]
    assert list(view.eliminated) == [match.out[q] for q in seats]
    assert view.turns == public.turns
    assert view.count == sum(oracle_value(c, state.cut_card) for c in state.hands[player])


def check_public_observation(env, state: LeastCountState, public: Public, match: Match, player: int) -> None:
    """The segments of ``player``'s observation that the record fixes."""
    seg = decode(env, f"player_{player}")
    n, ids = state.n, L.NUM_IDS
    seats = [(player + k) % n for k in range(n)]
    assert counts(seg["open_set"]) == sorted(public.open_set)
    assert counts(seg["dead_pile"]) == sorted(public.dead)
    assert counts(seg["pending_discard"]) == sorted(public.pending)
    for k, q in enumerate(seats):
        assert counts(seg["known"][k * ids : (k + 1) * ids]) == sorted(public.known[q])
        sizes = seg["hand_sizes"][k * (state.config.hand_size + 1) : (k + 1) * (state.config.hand_size + 1)]
        assert np.flatnonzero(sizes).tolist() == [public.sizes[q]]
    cfg = state.config
    assert seg["totals"] == pytest.approx([match.totals[q] / cfg.elimination_score for q in seats])
    assert seg["eliminated"].tolist() == [match.out[q] for q in seats]
    assert seg["turn_done"].tolist() == [public.turn_done[q] for q in seats]
    assert seg["stock_size"][0] == pytest.approx(public.stock / cfg.deck_size)
    assert seg["turns"][0] == pytest.approx(public.turns / cfg.max_turns_per_round)


def check_determinization(state: LeastCountState, rng: random.Random) -> None:
    """Each player's samples look the same to that player and keep every known card in its hand;
    only the hidden cards move among the hidden places."""
    for p in range(state.n):
        det = state.sample_determinization(p, rng)
        assert det.player_view(p) == state.player_view(p)
        assert det.hands[p] == state.hands[p] and det.open_set == state.open_set and det.dead == state.dead
        hidden, det_hidden = list(state.stock), list(det.stock)
        for q in range(state.n):
            assert len(det.hands[q]) == len(state.hands[q])
            assert not Counter(state.known[q]) - Counter(det.hands[q]), "a known card left its hand"
            if q != p:
                hidden += list((Counter(state.hands[q]) - Counter(state.known[q])).elements())
                det_hidden += list((Counter(det.hands[q]) - Counter(state.known[q])).elements())
        assert Counter(hidden) == Counter(det_hidden)


def declaring(state: LeastCountState, rng: random.Random) -> int:
    """Declares often at low counts (so rounds end in valid, false and tied declarations),
    discards the most it may, picks open cards half the time."""
    legal = state.legal_actions()
    if L.DECLARE in legal and (state.count(state.current_player) <= 12 or rng.random() < 0.05):
        return L.DECLARE
    if state.phase == Phase.TURN_START:
        discards = [a for a in legal if a != L.DECLARE]
        if rng.random() < 0.6:
            return max(discards, key=lambda a: (sum(L.subset_cards(state.hands[state.current_player], a)), a))
        return rng.choice(discards)
    opens = [a for a in legal if a != L.PICK_CLOSED]
    return rng.choice(opens) if opens and rng.random() < 0.5 else rng.choice(legal)


def play_checked(options: dict, seed: int, max_steps: int = 600) -> tuple[LeastCountState, Counter]:
    """A seeded game of the raw env's engine, its views and observations checked at every
    decision against the public record, its masks, scores and eliminations against the oracles."""
    env = least_count_v0.raw_env(**options)
    env.reset(seed=seed)
    state, rng = env.game, random.Random(seed)
    public = Public.deal(state)
    match = Match([0] * state.n, [False] * state.n)
    returns = [0.0] * state.n  # per round: the mean points of its players minus one's own
    seen: Counter = Counter()
    for _ in range(max_steps):
        for player in range(state.n):
            check_view(state, public, match, player)
        check_public_observation(env, state, public, match, state.current_player if state.current_player >= 0 else 0)
        if state.is_terminal():
            break
        assert set(state.legal_actions()) == oracle_legal(state, public)
        check_determinization(state, rng)
        action = declaring(state, rng)
        rounds = len(state.hand_results)
        players = [q for q in range(state.n) if not match.out[q]]
        declarer = state.current_player if action == L.DECLARE else -1
        public.play(state, action)
        state.apply(action)  # the engine directly: the env's dead steps for eliminated seats aside
        if len(state.hand_results) > rounds:
            result = state.hand_results[-1]
            assert result.kind != "timeout" or declarer < 0
            counts_now = {q: sum(oracle_value(c, result.cut_card) for c in result.hands[q]) for q in players}
            assert [result.counts[q] for q in players] == list(counts_now.values())
            assert result.points == oracle_round(state.config, declarer, players, counts_now)
            seen[result.kind] += 1
            mean = sum(result.points[q] for q in players) / len(players)
            for q in players:
                returns[q] += mean - result.points[q]
            match.totals = [t + x for t, x in zip(match.totals, result.points)]
            if state.config.episode == "match":
                out = oracle_eliminated(state.config, players, match.totals)
                assert sorted(result.eliminated) == out
                seen["eliminated"] += len(out)
                for q in out:
                    match.out[q] = True
            if not state.is_terminal():
                public = Public.deal(state)
    if state.is_terminal():
        assert state.returns() == pytest.approx(returns)
    return state, seen


GAMES = {
    "four": ({}, 4),
    "two_tie_valid_cap": ({"num_players": 2, "tie_declaration_valid": True, "max_turns_per_round": 9}, 4),
    "jokers_match": ({"num_players": 3, "num_printed_jokers": 2, "cut_joker": True, "episode": "match",
                      "elimination_score": 40, "declare_timing": "start_of_any_turn", "hand_size": 7,
                      "allow_three_of_a_kind": True, "allow_two_different_pairs": True}, 2),
    "two_decks_match": ({"num_players": 7, "episode": "match", "elimination_score": 30, "eliminate_on_equal": True,
                         "declare_max_count": 15, "sequence_same_suit": True, "false_declare_penalty": 35}, 1),
}


def test_views_observations_masks_and_scores_over_seeded_games():
    """Every decision of the seeded games of ``GAMES`` checked (``play_checked``); together
    they reach valid, false and timed-out rounds and eliminations."""
    seen: Counter = Counter()
    for name in GAMES:
        options, games = GAMES[name]
        for seed in range(games):
            seen += play_checked(options, seed)[1]
    assert min(seen[k] for k in ("valid_declaration", "false_declaration", "timeout", "eliminated")) > 0, seen


# ---------------------------------------------------------------------------------------
# The deal, state() and rendering
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 7])
def test_reset_with_a_deck_deals_one_card_at_a_time_from_the_dealers_left(players):
    config = LeastCountConfig(num_players=players)
    order = config.full_deck()
    random.Random(players).shuffle(order)
    env = make_env(num_players=players)
    raw = env.unwrapped
    dealer = players - 1
    env.reset(options={"deck": [C.format_card(c) for c in order], "dealer": dealer})
    n, size = players, config.hand_size
    for k in range(n):
        seat = (dealer + 1 + k) % n
        assert list(raw.player_view(f"player_{seat}").hand) == sorted(order[k:n * size:n])
    assert raw.game.open_set == [order[n * size]] and raw.agent_selection == "player_0"
    env.step(L.DISCARD)
    env.step(L.PICK_CLOSED)
    assert order[n * size + 1] in raw.game.hands[0]
    d = raw.game.to_dict()
    assert replay_dict(d).to_dict() == d


def test_state_vector_holds_every_hand_and_the_closed_deck():
    env = make_env(num_players=3)
    raw = env.unwrapped
    env.reset(seed=4)
    st = env.state()
    size = raw.config.deck_size
    assert st.shape == (raw.observation_size + 3 * 53 + size + 3,)
    hands = st[raw.observation_size:raw.observation_size + 3 * 53].reshape(3, 53)
    for q in range(3):
        assert counts(hands[q]) == raw.game.hands[q]
    stock = np.rint(st[raw.observation_size + 3 * 53:-3] * 53).astype(int)
    assert (stock[:len(raw.game.stock)] - 1).tolist() == raw.game.stock[::-1]
    assert st[-3:].tolist() == [float(q == raw.game.current_player) for q in range(3)]


def test_render_shows_hands_piles_eliminations_and_the_winner():
    env = make_env(render_mode="ansi", episode="match", elimination_score=30, cut_joker=True)
    rng = random.Random(3)
    env.reset(seed=3)
    text = env.render()
    assert "cut card" in text and "open set:" in text and "count" in text
    run_episode(env, rng)
    text = env.render()
    assert "out after round" in text and "winners: ['player_" in text and "last round:" in text
