"""The rummy500_v0 environment: its contract spec (run by tests/test_env_contract.py for 2,
4 and 8 players) and what is particular to it: every observation segment decoded against
the player view, infos, rewards over hands and matches, the caps, the deal from a given
deck, cards known from the pile, state() and rendering.

The rules scenarios are in test_rummy500_rules.py, the brute-force mask and the scoring
properties in test_rummy500_engine.py.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from collections import Counter

import numpy as np
import pytest

from rummy_envs import cards as C
from rummy_envs import rummy500_v0
from rummy_envs.envs.base import rank_rewards
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Phase, Rummy500Config, Rummy500State
import env_contract as contract
from env_contract import GameSpec, Watcher
from test_rummy500_rules import scenario
from observations import counts, decode

RANK_VALUES = (15, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)

# Env configurations (rules + env options), run at every player count.
ENV_OPTION_SETS = {
    "default": {},
    "match": {"episode": "match", "target_score": 100},
    "jokers_anytime": {"num_jokers": 2, "target_use_timing": "anytime_before_discard", "top_discard_must_be_used": True},
    "must_discard_reshuffle": {"must_discard_to_go_out": True, "stock_end_rule": "reshuffle_discards",
                               "allow_rediscard_taken_card": True, "layoff_credit": "meld_owner"},
    "win_loss_share": {"reward": "win_loss", "episode": "match", "target_score": 60, "tie_break": "share"},
    "daily_bonus": {"deal_seed_mode": "daily", "daily_date": "2026-11-30", "daily_salt": "x", "out_bonus": 10,
                    "reward_scale": 10.0},
}
ENV_ONLY = {"reward", "reward_scale"}
RULE_SETS = {
    **{name: {k: v for k, v in options.items() if k not in ENV_ONLY} for name, options in ENV_OPTION_SETS.items()},
    "two_decks_jokers": {"num_decks": 2, "num_jokers": 1, "joker_value": 20},
    "caps": {"episode": "match", "max_turns_per_hand": 15, "max_hands": 3},
}


# ---------------------------------------------------------------------------------------
# Policy, invariants and hidden-card variants
# ---------------------------------------------------------------------------------------


def meldy(state: Rummy500State, rng: random.Random) -> int:
    """Random play that often melds, lays off and takes deep, so hands reach deep-take
    targets, full tables and going out (uniform play mostly cancels its groups)."""
    legal = state.legal_actions()
    if rng.random() < 0.35:
        return rng.choice(legal)
    commits = [a for a in legal if a == R.MELD_NEW or R.LAY_OFF <= a < R.DISCARD]
    if commits:
        return rng.choice(commits)
    picks = [a for a in legal if R.PICK <= a < R.LAY_OFF]
    if picks:
        return rng.choice(picks)
    takes = [a for a in legal if R.TAKE_DISCARD <= a < R.PICK]
    if takes and rng.random() < 0.5:
        return rng.choice(takes)
    return rng.choice(legal)


def table_cards(state: Rummy500State) -> list[int]:
    """The physical cards on the table: natural identities, and a joker for each jokered one."""
    out: list[int] = []
    for meld in state.melds:
        out += [R.JOKER if meld.jokers >> c & 1 else c for c in meld.ordered()]
    return out


def check_state(s: Rummy500State) -> None:
    """Every card in one place; hands, known cards, pending group and table consistent."""
    hands = [s.hand_cards(q) for q in range(s.n)]
    everything = Counter(s.stock) + Counter(s.pile) + Counter(table_cards(s))
    for hand in hands:
        everything.update(hand)
    assert everything == Counter(s.config.full_deck()), f"cards not conserved in phase {s.phase.name}"
    assert s.sizes == [len(h) for h in hands]
    for q in range(s.n):
        assert not Counter(R.multiset_cards(s.known[q])) - Counter(hands[q]), "known cards not in the hand"
    identities: Counter = Counter()
    credited = [Counter() for _ in range(s.n)]
    for meld in s.melds:
        shape = R.classify_ordered(meld.ordered())
        assert shape == (meld.is_set, meld.key, meld.lo, meld.hi), f"meld {C.format(meld.ordered())} is no meld"
        assert set(meld.credit) == set(meld.ordered()) and meld.jokers & ~meld.cards == 0
        identities.update(meld.ordered())
        for card, seat in meld.credit.items():
            credited[seat][card] += 1
    assert max(identities.values(), default=0) <= s.config.decks
    for q in range(s.n):
        assert R.multiset_cards([*s.credited[q], 0]) == sorted(credited[q].elements())
    if s.pending:
        hand = s.hands[s.current_player]
        assert s.phase == Phase.MELD and (s.pending & ~s.pending_jokers) & ~hand[0] == 0
        assert s.pending_jokers.bit_count() <= hand[2]
    if not s.is_terminal():
        assert s.legal_actions(), f"no legal action in {s.phase.name}: a dead end"


def hidden_variants(state: Rummy500State, p: int, rng: random.Random) -> list[tuple[str, dict]]:
    """State dicts that differ from ``state`` only in what player ``p`` cannot see: an unseen
    card of another hand swapped with a stock card, and the stock reordered."""
    if state.is_terminal():
        return []
    d = state.to_dict()
    out: list[tuple[str, dict]] = []
    others = [q for q in range(state.n) if q != p]
    q = rng.choice(others)
    hidden = Counter(d["hands"][q]) - Counter(C.format(state.public_cards(q)).split())
    swappable = [x for x in sorted(hidden) if any(y != x for y in d["stock"])]
    if swappable:
        v = contract.swap_with_stock(d, q, rng.choice(swappable), rng,
                                     lambda hand: C.format(R.multiset_cards(R.multiset(C.parse(hand)))).split())
        if q != state.current_player or can_go_on(v):
            out.append((f"swap a card of seat {q} with a stock card", v))
    return out + contract.shuffled_stock(d, rng)


def can_go_on(d: dict) -> bool:
    """Can the game be in this dict's state? A swap can leave the player to move unable to
    finish its turn (a deep take it can no longer place), which ``from_dict`` refuses, and
    which the other players know cannot be."""
    try:
        Rummy500State.from_dict(d)
    except ValueError:
        return False
    return True


def own_card_swap(d: dict, p: int) -> dict:
    v = copy.deepcopy(d)
    x = v["hands"][p][0]
    j = next(i for i, y in enumerate(v["stock"]) if y != x)
    v["hands"][p][0], v["stock"][j] = v["stock"][j], x
    v["hands"][p] = C.format(sorted(C.parse(v["hands"][p]))).split()
    return v


def replay_dict(d: dict) -> Rummy500State:
    return R.replay(Rummy500Config.from_kwargs(**d["options"]), d["seed"], d["history"], d["initial_deck"],
                    d["first_dealer"], d["daily_date"])


def step_bound(config: Rummy500Config) -> int:
    """More actions than a game can take: every turn or cancel counts toward the turn cap,
    and between two of them a player picks and commits at most every card once."""
    per_hand = (config.max_turns_per_hand + 1) * (2 * config.deck_size + 4)
    return per_hand * (config.max_hands if config.episode == "match" else 1)


def card_value(card: int, in_sequence_low: bool, joker: bool, joker_value: int) -> int:
    if joker:
        return joker_value
    return 1 if in_sequence_low else RANK_VALUES[card % 13]


class ScoreWatcher(Watcher):
    """Credit of every table card as it is placed, and each hand's score recomputed from
    its final table and hands (table points minus hand points, plus the out bonus)."""

    def __init__(self, config: Rummy500Config) -> None:
        self.config = config

    def before(self, state: Rummy500State) -> None:
        self.player = state.current_player
        self.credits = [(dict(m.credit), m.owner) for m in state.melds]
        self.hands = len(state.hand_results)

    def after(self, state: Rummy500State) -> None:
        if len(state.hand_results) != self.hands:
            check_hand_score(self.config, state.hand_results[-1])
            return
        assert len(state.melds) >= len(self.credits)
        for slot, meld in enumerate(state.melds):
            old, owner = self.credits[slot] if slot < len(self.credits) else ({}, self.player)
            assert meld.owner == owner
            for card, seat in meld.credit.items():
                if card in old:
                    assert seat == old[card], "a table card changed hands"
                elif slot >= len(self.credits) or self.config.layoff_credit == "layer":
                    assert seat == self.player, "a placed card is not credited to its placer"
                else:
                    assert seat == owner, "a laid-off card is not credited to the meld's owner"


def check_hand_score(config: Rummy500Config, result: R.HandResult) -> None:
    n = config.num_players
    table = [0] * n
    for meld in result.melds:
        cards = meld["cards"]
        is_sequence = len({c % 13 for c in cards}) > 1
        for i, (card, seat) in enumerate(zip(cards, meld["credit"])):
            table[seat] += card_value(card, is_sequence and i == 0 and card % 13 == 0, card in meld["jokers"],
                                      config.joker_value)
    in_hand = [sum(config.joker_value if c == R.JOKER else RANK_VALUES[c % 13] for c in hand) for hand in result.hands]
    assert result.table_points == table and result.hand_points == in_hand
    bonus = [config.out_bonus if q == result.went_out else 0 for q in range(n)]
    assert result.points == [t - h + b for t, h, b in zip(table, in_hand, bonus)]
    assert (result.kind == "out") == (result.went_out >= 0)
    if result.kind == "out":
        assert result.hands[result.went_out] == []


def check_coverage(name: str, finals: list[Rummy500State]) -> None:
    kinds = Counter(r.kind for s in finals for r in s.hand_results)
    if name == "caps":
        assert kinds["turn_cap"] > 0 and all(s.truncated for s in finals), kinds
    else:
        assert kinds["out"] > 0, kinds


MORE_PLAYERS_SETS = ("default", "match", "jokers_anytime", "must_discard_reshuffle", "caps")


def spec(players: int) -> GameSpec:
    """The contract spec at a player count: every option set with two players; with more,
    the sets that change the turn's rules (and fewer games, as larger tables take longer)."""
    fewer = {2: 1, 4: 2, 8: 4}[players]
    env_sets = {k: v for k, v in ENV_OPTION_SETS.items() if players == 2 or k in MORE_PLAYERS_SETS}
    rule_sets = {k: v for k, v in RULE_SETS.items() if players == 2 or k in MORE_PLAYERS_SETS}
    return GameSpec(
        id=f"rummy500-{players}p",
        module=rummy500_v0,
        state_class=Rummy500State,
        config_class=Rummy500Config,
        env_option_sets=env_sets,
        rule_sets=rule_sets,
        policy=meldy,
        check_state=check_state,
        hidden_variants=hidden_variants,
        own_card_swap=own_card_swap,
        replay=replay_dict,
        action_to_str=R.action_to_str,
        full_deck=lambda config: config.full_deck(),
        step_bound=step_bound,
        seeding_options={"episode": "match", "target_score": 100},
        persistent_options={"target_score": 250, "episode": "match", "num_jokers": 1, "layoff_credit": "meld_owner",
                            "reward_scale": 2.0},
        dead_step_options=({}, {"episode": "match", "target_score": 40}, {"max_turns_per_hand": 3}),
        bad_action_strings=("TAKE_DISCARD(108)", "PICK(JK)", "PICK_JOKER(JK)", "LAY_OFF(36)", "LAY_OFF_HIGH(x)",
                            "MELD_NEW(AS)"),
        base_options={"num_players": players},
        watcher=ScoreWatcher,
        special=lambda state: state.target >= 0,
        reveals=lambda state, action: action == R.DRAW_STOCK,
        check_coverage=check_coverage,
        engine_games={name: (120 if name == "default" else 24) // fewer for name in RULE_SETS},
        env_episodes={name: (12 if name == "default" else 4) // fewer or 1 for name in ENV_OPTION_SETS},
        continued_states=12 // fewer,
        illegal_episodes={2: 4, 4: 3, 8: 2}[players],
        leak_games={2: 4, 4: 3, 8: 3}[players],
        leak_sets=("default", "match", "jokers_anytime", "must_discard_reshuffle"),
        play_out_steps=60,
    )


SPECS = [spec(2), spec(4), spec(8)]


def make_env(**options):
    return rummy500_v0.env(**options)


# ---------------------------------------------------------------------------------------
# The observation, segment by segment
# ---------------------------------------------------------------------------------------


def check_observation(raw, agent: str) -> None:
    """Every segment of ``agent``'s observation says what its player view says."""
    g = raw.game
    view = raw.player_view(agent)
    seg = decode(raw, agent)
    n, size = g.n, g.config.deck_size
    assert counts(seg["hand"]) == sorted(view.hand)
    assert np.flatnonzero(seg["pending"]).tolist() == list(view.pending)
    assert np.flatnonzero(seg["pending_jokers"]).tolist() == list(view.pending_jokers)
    assert np.flatnonzero(seg["top_discard"]).tolist() == list(view.discard_pile[-1:])
    assert counts(seg["discard_pile"]) == sorted(view.discard_pile)
    pile = np.rint(seg["pile_order"] * R.NUM_IDS).astype(int)
    assert (pile[:len(view.discard_pile)] - 1).tolist() == list(view.discard_pile) and not pile[len(view.discard_pile):].any()
    for k in range(n):
        assert counts(seg["known"][k * R.NUM_IDS:(k + 1) * R.NUM_IDS]) == sorted(view.known[k])
        credited = sorted(c for m in view.melds for c, seat in zip(m.cards, m.credit) if seat == k)
        assert counts(seg["table_credit"][k * 52:(k + 1) * 52]) == credited
    assert counts(seg["table_jokers"]) == sorted(c for m in view.melds for c in m.jokers)
    slots = raw.meld_slots
    for slot in range(slots):
        cards = np.flatnonzero(seg["melds"][slot * 52:(slot + 1) * 52]).tolist()
        meld = view.melds[slot] if slot < len(view.melds) else None
        assert cards == (sorted(meld.cards) if meld else [])
        ace_high = bool(meld and not meld.is_set and meld.cards[-1] % 13 == 0)
        assert seg["meld_ace_high"][slot] == ace_high
    assert np.allclose(seg["hand_sizes"] * size, view.hand_sizes)
    assert seg["stock_size"][0] * size == pytest.approx(view.stock_size)
    assert np.flatnonzero(seg["phase"]).tolist() == [int(view.phase)]
    assert np.flatnonzero(seg["to_move"]).tolist() == ([] if view.to_move is None else [view.to_move])
    assert np.flatnonzero(seg["dealer"]).tolist() == [view.dealer]
    assert np.flatnonzero(seg["target"]).tolist() == ([] if view.target is None else [view.target])
    assert np.flatnonzero(seg["banned"]).tolist() == ([] if view.banned is None else [view.banned])
    target = raw.config.target_score
    totals = (seg["scores"] - seg["score_deficits"]) * target
    assert np.allclose(totals, view.scores, atol=1e-3)


@pytest.mark.parametrize("options", [{}, {"num_players": 4, "num_jokers": 2, "episode": "match", "target_score": 60},
                                     {"num_players": 8, "num_jokers": 1}])
def test_every_segment_decodes_to_the_view(options):
    env = make_env(**options)
    raw = env.unwrapped
    rng = random.Random(5)
    seen = Counter()
    for seed in range(3):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            _, _, term, trunc, _ = env.last()
            for other in rng.sample(raw.possible_agents, 2):
                check_observation(raw, other)
            seen["pending"] += bool(raw.game.pending)
            seen["melds"] += bool(raw.game.melds)
            seen["target"] += raw.game.target >= 0
            env.step(None if term or trunc else meldy(raw.game, rng))
    assert min(seen.values()) > 0, seen


def test_layout_sizes_by_player_count():
    sizes = {}
    for players in range(2, 9):
        raw = rummy500_v0.raw_env(num_players=players)
        layout = raw.observation_layout()
        assert raw.possible_agents == [f"player_{i}" for i in range(players)]
        assert layout["known"].size == players * 53 and layout["table_credit"].size == players * 52
        assert layout["melds"].size == 52 * (raw.config.deck_size // 3)
        sizes[players] = raw.observation_size
    assert sizes[2] == 1598 and sizes[5] > sizes[4]  # docs/rummy500.md#observation; five players use two decks
    assert rummy500_v0.raw_env().action_space("player_0").n == R.NUM_ACTIONS == 341


def test_negative_totals_are_observed_as_deficits():
    s = Rummy500State(Rummy500Config(episode="match"), seed=1)
    d = s.to_dict()
    d["totals"] = [-120, 40]
    env = make_env(episode="match")
    env.reset(options={"state": d})
    seg = decode(env.unwrapped, "player_1")
    assert seg["scores"].tolist() == pytest.approx([40 / 500, 0.0])
    assert seg["score_deficits"].tolist() == pytest.approx([0.0, 120 / 500])


# ---------------------------------------------------------------------------------------
# Rewards, infos and caps
# ---------------------------------------------------------------------------------------


def centred(values) -> list[float]:
    return [v - sum(values) / len(values) for v in values]


@pytest.mark.parametrize("options", [{}, {"num_players": 3, "out_bonus": 20, "reward_scale": 5.0},
                                     {"num_players": 4, "episode": "match", "target_score": 80}])
def test_points_rewards_per_hand_and_infos(options):
    env = make_env(rich_info=True, **options)
    raw = env.unwrapped
    agents = raw.possible_agents
    rng = random.Random(11)
    outs = 0
    for seed in range(4):
        env.reset(seed=seed)
        paid = [0.0] * len(agents)
        while not (any(raw.terminations.values()) or any(raw.truncations.values())):
            hands = len(raw.game.hand_results)
            env.step(meldy(raw.game, rng))
            rewards = [raw.rewards[a] for a in agents]
            paid = [x + r for x, r in zip(paid, rewards)]
            if len(raw.game.hand_results) == hands:
                assert rewards == [0.0] * len(agents)
                continue
            result = raw.game.hand_results[-1]
            outs += result.kind == "out"
            assert rewards == pytest.approx([r / raw.reward_scale for r in centred(result.points)])
            for q, a in enumerate(agents):
                info = raw.infos[a]["hand_result"]
                assert info["points"] == result.points and info["kind"] == result.kind and info["seat"] == q
                assert info["hand_number"] == len(raw.game.hand_results) and info["melds"] == result.melds
        assert paid == pytest.approx([r / raw.reward_scale for r in raw.game.returns()])
        final = raw.infos[agents[0]]
        assert final["final_scores"] == raw.game.scores() and final["truncated"] == raw.game.truncated
    assert outs > 0


def test_win_loss_ranks_and_shared_ties():
    assert rank_rewards([505, 505, 300]) == [0.5, 0.5, -1.0]
    state = Rummy500State(Rummy500Config(num_players=3, episode="match", tie_break="share"), seed=2)
    d = state.to_dict()
    d.update(phase="GAME_OVER", current_player=-1, totals=[505, 505, 300], winners=[0, 1], turns=300,
             hand_results=[{"kind": "turn_cap", "points": [505, 505, 300]}])  # a finished match shows its last hand
    env = make_env(num_players=3, episode="match", tie_break="share", reward="win_loss")
    env.reset(options={"state": d})
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        totals[agent] += env.last()[1]
        env.step(None)
    assert totals == {"player_0": 0.5, "player_1": 0.5, "player_2": -1.0}


def test_turn_cap_truncates_a_hand_episode_but_not_a_match():
    env = make_env(max_turns_per_hand=6)
    raw = env.unwrapped
    rng = random.Random(0)
    for seed in range(5):
        env.reset(seed=seed)
        while not (any(raw.terminations.values()) or any(raw.truncations.values())):
            env.step(meldy(raw.game, rng))
        if raw.game.hand_results[-1].kind == "turn_cap":
            assert all(raw.truncations.values()) and not any(raw.terminations.values())
            assert raw.infos["player_0"]["truncated"] is True
            assert sum(raw._cumulative_rewards.values()) == pytest.approx(0.0)
    env = make_env(max_turns_per_hand=6, episode="match", max_hands=4, target_score=10_000)
    raw = env.unwrapped
    env.reset(seed=1)
    while not (any(raw.terminations.values()) or any(raw.truncations.values())):
        env.step(meldy(raw.game, rng))
    assert len(raw.game.hand_results) == 4 and all(raw.truncations.values())
    assert any(r.kind == "turn_cap" for r in raw.game.hand_results[:-1])


def test_cancel_counts_toward_the_turn_cap():
    s = scenario(["7C 7D 7H 2S", "KH 3C"], max_turns_per_hand=5)
    for _ in range(5):
        s.apply(R.str_to_action("PICK(7C)"))
        s.apply(R.CANCEL)
    assert s.is_terminal() and s.hand_results[-1].kind == "turn_cap" and s.truncated and s.turns == 5


# ---------------------------------------------------------------------------------------
# The deal, known cards, state() and rendering
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 5])
def test_reset_with_a_deck_deals_one_card_at_a_time_from_the_dealers_left(players):
    config = Rummy500Config(num_players=players)
    order = config.full_deck()
    random.Random(players).shuffle(order)
    env = make_env(num_players=players)
    raw = env.unwrapped
    dealer = players - 1
    env.reset(options={"deck": [C.format_card(c) for c in order], "dealer": dealer})
    size, n = config.cards_per_hand, players
    for k in range(n):
        seat = (dealer + 1 + k) % n
        assert list(raw.player_view(f"player_{seat}").hand) == sorted(order[k:n * size:n])
    assert raw.game.pile == [order[n * size]] and raw.agent_selection == "player_0"
    env.step(R.DRAW_STOCK)
    assert order[n * size + 1] in raw.player_view("player_0").hand
    d = raw.game.to_dict()
    assert replay_dict(d).to_dict() == d


def test_cards_taken_from_the_pile_stay_known_until_played():
    config = Rummy500Config(num_players=3)
    held = {0: "9D 9H 2C 4S 6S KC JH", 1: "2D 3D 5C 7C 8C QH KH", 2: "3C AS 5H 6H 7H TS TD"}
    pile = "4C KD 9S 5D JC"
    rest = sorted((Counter(config.full_deck()) - Counter(C.parse(" ".join(held.values()) + " " + pile))).elements())
    state = Rummy500State.from_dict({"options": dataclasses.asdict(config), "hands": [held[q] for q in range(3)],
                                     "discard_pile": pile.split(), "stock": C.format(rest).split(), "phase": "DRAW",
                                     "current_player": 0, "dealer": 2})
    env = make_env(num_players=3)
    raw = env.unwrapped
    env.reset(options={"state": state.to_dict()})
    env.step(raw.str_to_action("TAKE_DISCARD(2)"))
    for agent, seat in (("player_1", 2), ("player_2", 1)):
        assert raw.player_view(agent).known[seat] == tuple(sorted(C.parse("5D 9S JC")))
    for name in ("PICK(9S)", "PICK(9D)", "PICK(9H)", "MELD_NEW", "DISCARD(5D)"):
        env.step(raw.str_to_action(name))
    assert raw.player_view("player_1").known[2] == (C.parse_card("JC"),)
    assert raw.player_view("player_0").known[0] == (C.parse_card("JC"),)


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


def test_render_shows_melds_credit_and_pending():
    env = make_env(render_mode="ansi", num_jokers=2, episode="match", target_score=60)
    raw = env.unwrapped
    rng = random.Random(3)
    env.reset(seed=3)
    seen = set()
    while not (any(raw.terminations.values()) or any(raw.truncations.values())) and len(seen) < 3:
        text = env.render()
        if raw.game.melds:
            meld = raw.game.melds[0]
            card = meld.ordered()[0]
            assert f"{C.format_card(card)}{'*' if meld.jokers >> card & 1 else ''}/{meld.credit[card]}" in text
            seen.add("meld")
        if raw.game.pending:
            assert "pending:" in text
            seen.add("pending")
        if raw.game.target >= 0:
            assert "must place:" in text
            seen.add("target")
        env.step(meldy(raw.game, rng))
    assert "meld" in seen and "match totals" in env.render()
