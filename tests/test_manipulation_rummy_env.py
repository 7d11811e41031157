"""The manipulation_rummy_v0 environment: its contract spec (run by tests/test_env_contract.py
for 2, 3 and 5 players, with the table legal after every COMMIT among the invariants) and
what is particular to it: every observation segment decoded against the player view, the
table rendered as a legal arrangement, rewards and infos over rounds and matches, the deal
from a given deck, determinizations that respect what was seen of the player to move, and
state().

The rules scenarios (M1-M6, jokers, every option) are in test_manipulation_rummy_rules.py.
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import numpy as np
import pytest

import env_contract as contract
from env_contract import GameSpec, Watcher
from rummy_envs import cards as C
from rummy_envs import manipulation_rummy_v0
from rummy_envs.games import manipulation_rummy as M
from rummy_envs.games.manipulation_rummy import ManipulationConfig, ManipulationState, Phase
from rummy_envs.games.manipulation_rummy import table_solver as TS
from test_manipulation_rummy_rules import A, B, assert_table_legal, is_meld, meldy, scenario
from observations import counts, decode

# Env configurations (rules + env options), run at every player count.
ENV_OPTION_SETS = {
    "default": {},
    "match": {"episode": "match", "target_score": 60},
    "start_knock_last_card": {"knock_timing": "start_of_turn", "knock_limit": 12, "stock_out_trigger": "last_card_drawn",
                              "stock_out_bonus": 10, "reward_scale": 10.0},
    "win_loss_play_on": {"reward": "win_loss", "episode": "match", "target_score": 40, "tie_break": "play_on",
                         "next_dealer": "winner"},
    "free_jokers": {"joker_identity_limit": "none", "num_jokers": 3, "max_draws": 2, "knock_limit": 9},
}
ENV_ONLY = {"reward", "reward_scale"}
RULE_SETS = {
    **{name: {k: v for k, v in options.items() if k not in ENV_ONLY} for name, options in ENV_OPTION_SETS.items()},
    # A high target so that the round cap ends matches (at 5 players one stock-out can pass 150).
    "caps_bonuses": {"episode": "match", "max_rounds": 2, "target_score": 400, "max_table_ops_per_turn": 6,
                     "out_bonus": 5, "not_knocker_bonus": 3, "game_bonus": 7, "round_win_bonus": 2, "next_dealer": "loser"},
    "one_deck_many_draws": {"num_decks": 1, "num_jokers": 0, "max_draws": 5, "knock_limit": 15},
}


# ---------------------------------------------------------------------------------------
# Policy, invariants and hidden-card variants
# ---------------------------------------------------------------------------------------


def check_state(s: ManipulationState) -> None:
    """Every card in one place; the committed table legal meld by meld (checked without the
    solver); the identity limit; the commit in progress and the phase consistent."""
    cfg = s.config
    everything = Counter(M.cards_of(s.naturals)) + Counter(s.stock)
    everything[M.JOKER] += sum(s.jokers_at) + s.free_jokers
    for q in range(s.n):
        everything.update(s.hand_cards(q))
    assert everything == Counter(cfg.full_deck()), f"cards not conserved in phase {s.phase.name}"
    assert s.sizes == [len(s.hand_cards(q)) for q in range(s.n)]
    assert all(0 <= j <= t for j, t in zip(s.jokers_at, s.table_counts()))
    assert max(s.naturals) <= cfg.decks
    committed = Counter(M.cards_of(list(map(sum, zip(s.start_naturals, s.start_jokers))) if s.in_commit
                                   else s.table_counts()))
    if cfg.identity_limit is not None:  # a commit may pass the limit on its way to a legal table
        assert max(committed.values(), default=0) <= cfg.identity_limit
    assert Counter(c for meld in s.arrangement for c in meld) == committed, "the arrangement is not the table"
    assert all(is_meld(meld) for meld in s.arrangement), "an illegal meld was committed"
    if s.is_terminal():
        assert s.current_player == -1 and not s.legal_actions() and not s.in_commit
        return
    assert s.legal_actions(), f"no legal action in {s.phase.name}: a dead end"
    p = s.current_player
    if s.phase == Phase.MELD:
        assert 1 <= s.draws < cfg.max_draws
        assert s.in_commit == (M.NO_MELD not in s.legal_actions()) == (M.ABORT in s.legal_actions())
    else:
        assert not s.in_commit and s.hand_value(p) <= cfg.knock_limit
    if s.in_commit:
        assert 1 <= s.ops < cfg.max_table_ops_per_turn
        assert [a + b for a, b in zip(s.start_naturals, s.placed)] == s.naturals
    else:
        assert not any(s.placed) and not s.free_jokers and not s.ops


def hidden_variants(state: ManipulationState, p: int, rng: random.Random) -> list[tuple[str, dict]]:
    """State dicts that differ from ``state`` only in what player ``p`` cannot see: a card of
    another hand swapped with a stock card, and the stock reordered. A hand whose value or
    cards ``p`` saw something of (a knock decision, a commit in progress, its value against
    ``knock_limit`` as its turn ended: ``limited_hands``) is left alone, and so are the cards
    known to be in a hand: the variant could not reach that position."""
    if state.is_terminal():
        return []
    d = state.to_dict()
    out: list[tuple[str, dict]] = []
    others = [q for q in range(state.n) if q != p and q not in state.limited_hands(p)]
    if others:
        q = rng.choice(others)
        known = set(state.held_known(q))
        swappable = [x for x in sorted(set(d["hands"][q]))
                     if any(y != x for y in d["stock"]) and C.parse_card(x) not in known]
        if swappable:
            v = contract.swap_with_stock(d, q, rng.choice(swappable), rng)
            out.append((f"swap a card of seat {q} with a stock card", v))
    return out + contract.shuffled_stock(d, rng)


def own_card_swap(d: dict, p: int) -> dict:
    """Seat ``p``'s first card swapped with a stock card of the same value (a knock decision
    stays one)."""
    v = copy.deepcopy(d)
    x = v["hands"][p][0]
    value = M.CARD_VALUES[C.parse_card(x)]
    j = next(i for i, y in enumerate(v["stock"]) if y != x and M.CARD_VALUES[C.parse_card(y)] == value)
    v["hands"][p][0], v["stock"][j] = v["stock"][j], x
    v["hands"][p] = contract.sorted_hand(v["hands"][p])
    return v


def replay_dict(d: dict) -> ManipulationState:
    return M.replay(ManipulationConfig.from_kwargs(**d["options"]), d["seed"], d["history"], d["initial_deck"],
                    d["first_dealer"])


def step_bound(config: ManipulationConfig) -> int:
    """More actions than a game can take: every turn draws a card, and a turn holds a knock
    decision, up to ``max_draws`` meld decisions of at most ``max_table_ops_per_turn``
    placements and a commit each, and a knock decision."""
    per_turn = 2 + config.max_draws * (config.max_table_ops_per_turn + 1)
    per_round = (config.deck_size + 1) * per_turn
    return per_round * (config.max_rounds if config.episode == "match" else 1)


def reveals(state: ManipulationState, action: int) -> bool:
    """Moves after which hidden cards can decide what happens: every move but a placement
    (draws, the next turn's automatic draw and knock decision), and the placement that
    reaches the op cap (its abort draws)."""
    return action < M.PLACE or state.ops + 1 >= state.config.max_table_ops_per_turn


class CommitWatcher(Watcher):
    """The table is legal after every COMMIT; every round is scored as
    docs/manipulation_rummy.md#scoring says; a match that ends pays the bonuses of
    docs/manipulation_rummy.md#match."""

    def __init__(self, config: ManipulationConfig) -> None:
        self.config = config

    def before(self, state: ManipulationState) -> None:
        self.rounds = len(state.hand_results)
        self.legal = list(state.legal_actions())

    def after(self, state: ManipulationState) -> None:
        if state.history[-1] == M.COMMIT:
            assert M.COMMIT in self.legal
            if len(state.hand_results) == self.rounds:
                assert_table_legal(state)
            else:  # the commit went out: the round's result shows the final table
                assert all(is_meld(meld) for meld in state.hand_results[-1].table)
        if len(state.hand_results) != self.rounds:
            check_round_score(self.config, state.hand_results[-1])

    def end(self, state: ManipulationState) -> None:
        cfg = self.config
        if cfg.episode == "match" and not state.truncated:
            totals, won = state.totals, state.rounds_won
            final = [t + (cfg.game_bonus if t >= cfg.target_score else 0) + cfg.round_win_bonus * w
                     for t, w in zip(totals, won)]
            assert state.final == final and state.scores() == final
            assert state.winners == [q for q in range(state.n) if final[q] == max(final)]
            assert max(totals) >= cfg.target_score
        if state.truncated:
            assert state.final is None and len(state.hand_results) == cfg.max_rounds


def check_round_score(config: ManipulationConfig, result: M.RoundResult) -> None:
    """A round's result recomputed from its revealed hands (docs/manipulation_rummy.md#scoring)."""
    values = [sum(25 if c == M.JOKER else min(c % 13 + 1, 10) for c in hand) for hand in result.hands]
    assert result.values == values
    low = min(values)
    lowest = [q for q, v in enumerate(values) if v == low]
    if result.kind == "out":
        assert values[result.ender] == 0 and result.winners == [result.ender]
        bonus = config.out_bonus
    elif result.kind == "knock":
        assert values[result.ender] <= config.knock_limit
        if lowest == [result.ender]:
            assert result.winners == [result.ender]
            bonus = 0
        else:
            assert result.winners == [q for q in lowest if q != result.ender]
            bonus = config.not_knocker_bonus
    else:
        assert result.kind == "stock_out" and result.ender == -1 and result.winners == lowest
        bonus = config.stock_out_bonus
    expected = [sum(values[q] - values[w] for q in range(len(values)) if q != w) + bonus if w in result.winners else 0
                for w in range(len(values))]
    assert result.points == expected


def check_coverage(name: str, finals: list[ManipulationState]) -> None:
    """The ways a round ends that each rule set is there to reach did happen."""
    kinds = Counter(r.kind for s in finals for r in s.hand_results)
    wanted = {"default": ("out", "knock"), "start_knock_last_card": ("knock",),
              "one_deck_many_draws": ("stock_out",)}.get(name, ())
    assert all(kinds[kind] for kind in wanted), (name, kinds)
    if name == "caps_bonuses":
        assert any(s.truncated for s in finals), kinds


def special(state: ManipulationState) -> bool:
    """Freed jokers waiting, or a commit that could now be made: always checked exhaustively."""
    return state.free_jokers > 0 or (state.phase == Phase.MELD and M.COMMIT in state.legal_actions())


def spec(players: int) -> GameSpec:
    """The contract spec at a player count: fewer games with two decks, whose larger tables
    take the solver longer."""
    fewer = {2: 1, 3: 3, 5: 4}[players]
    return GameSpec(
        id=f"manipulation_rummy-{players}p",
        module=manipulation_rummy_v0,
        state_class=ManipulationState,
        config_class=ManipulationConfig,
        env_option_sets=ENV_OPTION_SETS,
        rule_sets=RULE_SETS,
        policy=meldy,
        check_state=check_state,
        hidden_variants=hidden_variants,
        own_card_swap=own_card_swap,
        replay=replay_dict,
        action_to_str=M.action_to_str,
        full_deck=lambda config: config.full_deck(),
        step_bound=step_bound,
        seeding_options={"episode": "match", "target_score": 60},
        persistent_options={"target_score": 90, "episode": "match", "num_jokers": 3, "knock_limit": 8,
                            "reward_scale": 2.0},
        dead_step_options=({}, {"episode": "match", "target_score": 30}),
        bad_action_strings=("PLACE(JK)", "FREED_AS(JK)", "COMMIT(AS)", "REPLACE_FROM_HAND(1S)", "PLACE()",
                            "JOKER_AS"),
        base_options={"num_players": players},
        watcher=CommitWatcher,
        special=special,
        reveals=reveals,
        check_coverage=check_coverage,
        engine_games={name: (14 if name == "default" else 5) // fewer for name in RULE_SETS},
        env_episodes={name: (5 if name == "default" else 2) // fewer or 1 for name in ENV_OPTION_SETS},
        continued_states=8 // fewer,
        illegal_episodes={2: 3, 3: 2, 5: 2}[players],
        leak_sets=("default", "start_knock_last_card"),
        dict_sets=("default", "match", "free_jokers", "caps_bonuses"),
        play_out_steps=40,
        determinization_games=2,
        leak_games={2: 3, 3: 2, 5: 2}[players],
        slow_contract=players > 2,
    )


SPECS = [spec(2), spec(3), spec(5)]


def make_env(**options):
    return manipulation_rummy_v0.env(**options)


def run_episode(env, rng: random.Random, policy=meldy, before=None) -> dict[str, float]:
    """Play one episode the AEC way; ``before`` sees the raw env before every live step.
    Returns each agent's total reward from ``last()``."""
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
    return totals


# ---------------------------------------------------------------------------------------
# The observation, segment by segment
# ---------------------------------------------------------------------------------------


def check_observation(raw, agent: str) -> None:
    """Every segment of ``agent``'s observation says what its player view says."""
    view = raw.player_view(agent)
    seg = decode(raw, agent)
    cfg = raw.config
    size = cfg.deck_size
    assert counts(seg["hand"]) == sorted(view.hand)
    assert counts(seg["table"]) == list(view.table)
    assert counts(seg["table_jokers"]) == list(view.table_jokers)
    assert counts(seg["spare_naturals"]) == list(view.spare_naturals)
    assert counts(seg["placed"]) == list(view.placed)
    assert seg["freed_jokers"][0] == view.freed_jokers
    assert seg["draws"][0] * cfg.max_draws == pytest.approx(view.draws)
    assert seg["table_ops"][0] * cfg.max_table_ops_per_turn == pytest.approx(view.table_ops)
    assert np.allclose(seg["hand_sizes"] * size, view.hand_sizes)
    assert seg["stock_size"][0] * size == pytest.approx(view.stock_size)
    assert np.flatnonzero(seg["phase"]).tolist() == [int(view.phase)]
    assert np.flatnonzero(seg["to_move"]).tolist() == ([] if view.to_move is None else [view.to_move])
    assert np.flatnonzero(seg["dealer"]).tolist() == [view.dealer]
    assert np.allclose(seg["scores"] * cfg.target_score, view.scores, atol=1e-3)
    assert np.allclose(seg["rounds_won"] * cfg.max_rounds, view.rounds_won, atol=1e-3)
    known = seg["known"].reshape(cfg.num_players, M.NUM_IDS)
    assert [counts(row) for row in known] == [list(cards) for cards in view.known]
    sides = {(0, 0): None, (1, 0): "within", (0, 1): "above"}
    assert [sides[tuple(pair)] for pair in seg["limit_seen"].reshape(cfg.num_players, 2)] == list(view.limit_seen)


@pytest.mark.parametrize("options", [{}, {"num_players": 2, "episode": "match", "target_score": 40},
                                     {"num_players": 5, "num_decks": 1, "num_jokers": 4,
                                      "joker_identity_limit": "none", "knock_limit": 60}])
def test_every_segment_decodes_to_the_view(options):
    env = make_env(**options)
    rng = random.Random(5)
    seen = Counter()

    def look(raw_env):
        for other in rng.sample(raw_env.possible_agents, 2):
            check_observation(raw_env, other)
        g = raw_env.game
        seen["commit"] += g.in_commit
        seen["table jokers"] += sum(g.jokers_at) > 0 or g.config.total_jokers == 0
        seen["knock decision"] += g.phase != Phase.MELD
        seen["known cards"] += any(map(any, g.known))
        seen["limit seen"] += any(g.limit_seen)

    for seed in range(3):
        env.reset(seed=seed)
        run_episode(env, rng, before=look)
    assert min(seen.values()) > 0, seen


def test_the_observation_shows_the_commit_in_progress_to_everybody():
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    env = make_env()
    raw = env.unwrapped
    env.reset(options={"state": s.to_dict()})
    for text in ("REPLACE_FROM_HAND(8D)", "PLACE(5S)"):
        env.step(raw.str_to_action(text))
    for agent in raw.possible_agents:
        view = raw.player_view(agent)
        assert view.placed == tuple(C.parse("8D 5S")) and view.freed_jokers == 1 and view.table_ops == 2
        assert view.table_jokers == () and view.arrangement == (tuple(C.parse("7D 8D 9D")),)
        seg = decode(raw, agent)
        assert seg["freed_jokers"][0] == 1 and counts(seg["placed"]) == C.parse("8D 5S")
    assert raw.player_view("player_1").hand == tuple(C.parse("2C 3D"))


def test_layout_sizes_by_player_count():
    sizes = {players: manipulation_rummy_v0.raw_env(num_players=players).observation_size for players in range(2, 6)}
    assert sizes[3] == 53 + 52 * 3 + 53 + 3 + 1 + len(Phase) + 3 * 5 + 3 * (53 + 2)
    assert sizes[5] - sizes[3] == 2 * (5 + 53 + 2)
    assert manipulation_rummy_v0.raw_env().action_space("player_0").n == M.NUM_ACTIONS == 266


# ---------------------------------------------------------------------------------------
# Rewards, infos, the deal, state() and rendering
# ---------------------------------------------------------------------------------------


def test_points_rewards_are_the_round_points_centred():
    env = make_env(episode="match", target_score=50, reward_scale=5.0, num_decks=1)
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
        scores = raw.game.scores()
        env.step(meldy(raw.game, rng))
        if len(raw.game.hand_results) == rounds:
            assert all(r == 0.0 for r in raw.rewards.values())
            continue
        delta = [a - b for a, b in zip(raw.game.scores(), scores)]
        mean = sum(delta) / 3
        for q, name in enumerate(raw.possible_agents):
            assert raw.rewards[name] == pytest.approx((delta[q] - mean) / 5.0)
        checked += 1
    assert checked >= 2 and raw.game.final is not None


def test_reset_with_a_deck_deals_one_card_at_a_time_from_the_dealers_left():
    config = ManipulationConfig(num_players=4)
    order = config.full_deck()
    random.Random(4).shuffle(order)
    env = make_env(num_players=4)
    raw = env.unwrapped
    env.reset(options={"deck": [C.format_card(c) for c in order], "dealer": 3})
    for k in range(4):
        seat = (3 + 1 + k) % 4
        expected = sorted(order[k:40:4] + ([order[40]] if seat == 0 else []))
        assert list(raw.player_view(f"player_{seat}").hand) == expected
    assert raw.agent_selection == "player_0" and raw.game.draws == 1
    assert raw.game.stock[::-1] == order[41:]
    d = raw.game.to_dict()
    assert replay_dict(d).to_dict() == d


def test_state_vector_holds_every_hand_and_the_stock():
    env = make_env(num_players=3)
    raw = env.unwrapped
    env.reset(seed=4)
    st = env.state()
    size = raw.config.deck_size
    assert st.shape == (raw.observation_size + 3 * 53 + size + 3,)
    hands = st[raw.observation_size:raw.observation_size + 3 * 53].reshape(3, 53)
    for q in range(3):
        assert counts(hands[q]) == raw.game.hand_cards(q)
    stock = np.rint(st[raw.observation_size + 3 * 53:-3] * 53).astype(int)
    assert (stock[:len(raw.game.stock)] - 1).tolist() == raw.game.stock[::-1]
    assert st[-3:].tolist() == [float(q == raw.game.current_player) for q in range(3)]


def test_render_shows_the_table_as_a_legal_arrangement():
    s = scenario(["8D 5S 6S QC", "2C 3D", "4H 5H"], table="7D 9D 3C 4C 5C", jokers="8D")
    env = make_env(render_mode="ansi")
    raw = env.unwrapped
    env.reset(options={"state": s.to_dict()})
    text = env.render()
    assert "table: [3C 4C 5C] [7D JK(=8D) 9D]" in text and "phase MELD" in text
    env.step(raw.str_to_action("REPLACE_FROM_HAND(8D)"))
    text = env.render()
    assert "table at the start of the commit: [3C 4C 5C] [7D JK(=8D) 9D]" in text
    assert "table now: [3C 4C 5C] [7D 8D 9D]" in text and "freed jokers: 1" in text
    env.step(raw.str_to_action("PLACE(5S)"))
    assert "table now: 3C 4C 5C 7D 8D 9D 5S (not legal yet)" in env.render()
    for text_action in ("PLACE(6S)", "FREED_AS(7S)", "COMMIT"):
        env.step(raw.str_to_action(text_action))
    text = env.render()
    assert "[5S 6S JK(=7S)]" in text and "[7D 8D 9D]" in text


def test_infos_carry_the_round_result():
    env = make_env(rich_info=True, num_decks=1)
    raw = env.unwrapped
    rng = random.Random(1)
    env.reset(seed=1)
    finals = {}
    for agent in env.agent_iter():
        _, _, term, trunc, info = env.last()
        if term or trunc:
            finals[agent] = info
            env.step(None)
            continue
        assert "hand_result" not in info
        env.step(meldy(raw.game, rng))
    result = raw.game.hand_results[-1]
    for seat, agent in enumerate(raw.possible_agents):
        info = finals[agent]["hand_result"]
        assert info["kind"] == result.kind and info["hand_number"] == 1 and info["seat"] == seat
        assert info["points"] == result.points and info["table"] == result.table
        assert all(is_meld(meld) for meld in info["table"])


# ---------------------------------------------------------------------------------------
# Determinizations
# ---------------------------------------------------------------------------------------


def test_determinization_keeps_what_was_seen_of_the_player_to_move():
    rng = random.Random(3)
    # A knock decision: the redealt hand of the player to move stays within knock_limit.
    s = scenario(["AS 2C", "KS QS 9D", "4H 5H 8C"], phase="END_OF_TURN")
    redealt = 0
    for _ in range(20):
        det = s.sample_determinization(B, rng)
        assert det.hand_value(A) <= 5 and det.player_view(B) == s.player_view(B)
        redealt += det.hands[A] != s.hands[A]
    assert redealt > 5  # the hand is redealt, only within what was seen
    # A commit in progress: the redealt hand can still complete a legal commit.
    s = scenario(["5S 6S QC 8D 2H", "2C 3D", "4H 5H"], table="7D 9D", jokers="8D")
    s.apply(M.str_to_action("PLACE(5S)"))
    redealt = 0
    for _ in range(20):
        det = s.sample_determinization(B, rng)
        assert TS.commit_options(det.commit_problem()).feasible and det.player_view(B) == s.player_view(B)
        assert det.placed == s.placed and len(det.hand_cards(A)) == len(s.hand_cards(A))
        redealt += det.hands[A] != s.hands[A]
    assert redealt > 5
