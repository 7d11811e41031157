"""The Rummy 500 engine against independent checks: the brute-force oracle of
tests/rummy500_oracle.py (the exact mask of the micro-actions and of the deep takes, on random
mid-hand states of every rule family); properties over random games (hypothesis): every
table card credited to whoever the rules say, every card conserved, every hand scored as
table points minus hand points, the turn never stuck, and the meld phase's fast path equal
to the general rule; a record of the public play kept here action by action, against every
player view, observation segment, mask and hand score of seeded games; the states
sampled for search (determinizations and ``sample_from_view``) against what each seat saw;
and state dicts of positions the rules cannot reach, each refused naming its field.

Fast versions run in CI; the ``slow`` ones (``pytest -m slow``) check thousands of states.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import env_contract as contract
import rummy500_oracle as oracle
from rummy_envs import cards as C
from rummy_envs import rummy500_v0
from rummy_envs.games import rummy500 as R
from rummy_envs.games.base import GameConfig, GameState, PlayerView
from rummy_envs.games.rummy500 import Phase, Rummy500Config, Rummy500State
from rummy_envs.games.rummy500.melds import multiset_cards
from test_rummy500_env import ScoreWatcher, check_hand_score, check_state, meldy
from test_rummy500_env import check_observation as check_observation_against_view
from test_rummy500_rules import exhausted, meld, play, scenario

JOKER = R.JOKER

slow = pytest.mark.slow

# Rule families the mask depends on; each is played with 2, 4 and 8 players below.
MASK_RULES = {
    "default": {},
    "jokers": {"num_jokers": 2},
    "anytime_top_must_use": {"num_jokers": 1, "target_use_timing": "anytime_before_discard",
                             "top_discard_must_be_used": True},
    "must_discard": {"must_discard_to_go_out": True, "num_jokers": 1},
    "rediscard_two_decks": {"allow_rediscard_taken_card": True, "num_decks": 2},
    "small_hands_two_decks": {"hand_size": 3, "num_decks": 2, "stock_end_rule": "reshuffle_discards"},
}
PLAYERS = (2, 4, 8)


def random_points(rules: dict, players: int, games: int, seed: int, every: float,
                  keep: Callable[[Rummy500State], bool] = lambda state: True,
                  ends: bool = False) -> list[Rummy500State]:
    """Clones of states at random points (a share ``every``) of games of the meldy policy that
    ``keep`` accepts, and with ``ends`` each game's final state."""
    config = Rummy500Config(num_players=players, **rules)
    rng = random.Random(seed)
    out = []
    for i in range(games):
        s = Rummy500State(config, seed * 1000 + i)
        while not s.is_terminal():
            if rng.random() < every and keep(s):
                out.append(s.clone())
            s.apply(meldy(s, rng))
        if ends:
            out.append(s)
    return out


def oracle_states(rules: dict, players: int, games: int, seed: int, every: float) -> list[Rummy500State]:
    """Clones of states the oracle can check, from games of the meldy policy."""
    return random_points(rules, players, games, seed, every, keep=lambda state: oracle.affordable(state.to_dict()))


def check_against_oracle(rules: dict, players: int, games: int, every: float) -> Counter:
    seen: Counter = Counter()
    for state in oracle_states(rules, players, games, seed=players + len(rules), every=every):
        d = state.to_dict()
        expected = oracle.legal_actions(d)
        got = set(state.legal_actions())
        assert got == expected, (f"{d['phase']}: engine extra {[R.action_to_str(a) for a in got - expected]}, "
                                 f"missing {[R.action_to_str(a) for a in expected - got]}; hand {d['hands'][d['current_player']]}, "
                                 f"pile {d['discard_pile']}, melds {[m['cards'] for m in d['melds']]}, "
                                 f"pending {d['pending']} {d['pending_jokers']}, target {d['target']}, banned {d['banned']}")
        seen[d["phase"]] += 1
        seen["deep take offered"] += any(R.TAKE_DISCARD <= a < R.TAKE_DISCARD + len(state.pile) - 1 for a in got)
        seen["deep take refused"] += state.phase == Phase.DRAW and len(state.pile) > 2 and not any(
            R.TAKE_DISCARD <= a < R.TAKE_DISCARD + len(state.pile) - 1 for a in got)
        seen["pending group"] += bool(state.pending)
        seen["target due"] += state.target >= 0
        seen["joker picks"] += any(R.PICK_JOKER <= a < R.LAY_OFF for a in got)
    return seen


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("name", list(MASK_RULES))
def test_mask_equals_the_brute_force_oracle(name, players):
    seen = check_against_oracle(MASK_RULES[name], players, games=24 // players, every=0.3)
    assert seen["DRAW"] > 5 and seen["MELD"] > 20 and seen["pending group"] > 5, seen


def test_the_oracle_states_cover_the_hard_cases():
    """Across the families the sample holds deep takes offered and refused, targets due and
    joker declarations, so the oracle comparison above decides them."""
    total: Counter = Counter()
    for name in ("default", "jokers", "anytime_top_must_use"):
        total += check_against_oracle(MASK_RULES[name], 2, games=6, every=0.3)
    for key in ("deep take offered", "deep take refused", "target due", "joker picks"):
        assert total[key] >= 3, total


@slow
@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("name", list(MASK_RULES))
def test_mask_equals_the_brute_force_oracle_slow(name, players):
    check_against_oracle(MASK_RULES[name], players, games=200 // players, every=0.5)


def test_oracle_has_teeth():
    """Positive control: the oracle disagrees with a wrong mask (an extra discard while a
    deep-take target is due)."""
    states = [s for s in oracle_states({}, 2, games=10, seed=3, every=1.0) if s.target >= 0]
    assert states
    d = states[0].to_dict()
    assert not any(R.DISCARD <= a for a in oracle.legal_actions(d))
    d["target"] = None
    assert any(R.DISCARD <= a for a in oracle.legal_actions(d))


# ---------------------------------------------------------------------------------------
# Properties over random games
# ---------------------------------------------------------------------------------------

OPTIONS = st.fixed_dictionaries({
    "num_players": st.integers(2, 8),
    "num_jokers": st.integers(0, 2),
    "joker_value": st.sampled_from([0, 15, 25]),
    "top_discard_must_be_used": st.booleans(),
    "target_use_timing": st.sampled_from(["first_table_action", "anytime_before_discard"]),
    "allow_rediscard_taken_card": st.booleans(),
    "must_discard_to_go_out": st.booleans(),
    "layoff_credit": st.sampled_from(["layer", "meld_owner"]),
    "stock_end_rule": st.sampled_from(["end_on_decline", "reshuffle_discards"]),
    "out_bonus": st.sampled_from([0, 10]),
})
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_checked(options: dict, seed: int) -> Rummy500State:
    """A hand under random meldy play, with the credit, conservation and score checks of
    every action (``ScoreWatcher``, ``check_state``)."""
    config = Rummy500Config(**options)
    s = Rummy500State(config, seed)
    watcher = ScoreWatcher(config)
    rng = random.Random(seed)
    while not s.is_terminal():
        watcher.before(s)
        s.apply(meldy(s, rng))
        check_state(s)
        watcher.after(s)
    return s


@FAST
@given(OPTIONS, st.integers(0, 10**6))
def test_credit_conservation_and_scores(options, seed):
    s = play_checked(options, seed)
    result = s.hand_results[-1]
    check_hand_score(s.config, result)
    assert sum(map(len, result.hands)) + sum(len(m["cards"]) for m in result.melds) + len(s.pile) + len(s.stock) \
        == s.config.deck_size


@slow
@SLOW
@given(OPTIONS, st.integers(0, 10**6))
def test_credit_conservation_and_scores_slow(options, seed):
    play_checked(options, seed)


def test_watcher_has_teeth():
    """Positive control: a hand result with a wrong credit or score fails the checks."""
    s = play_checked({}, 4)
    result = s.hand_results[-1]
    assert result.melds
    wrong = R.HandResult(**{**result.__dict__, "points": [p + 1 for p in result.points]})
    with pytest.raises(AssertionError):
        check_hand_score(s.config, wrong)
    moved = [dict(m, credit=[1 - c for c in m["credit"]]) for m in result.melds]
    with pytest.raises(AssertionError):
        check_hand_score(s.config, R.HandResult(**{**result.__dict__, "melds": moved}))


# ---------------------------------------------------------------------------------------
# The meld phase's fast path against the general rule
# ---------------------------------------------------------------------------------------


def fast_path_agrees(state: Rummy500State) -> bool:
    """Where ``_meld_actions`` takes its fast path (no joker in the hand, no target, no banned
    card), the same state sent down the general loop (coverings and commit checks) by a
    banned card the hand does not hold, which changes no rule, has the same mask. Returns
    whether the state was one to check."""
    hand = state.hands[state.current_player]
    if state.phase != Phase.MELD or hand[2] or state.target >= 0 or state.banned >= 0:
        return False
    general = state.clone()
    general.banned = next(card for card in range(R.JOKER) if not (hand[0] | hand[1]) >> card & 1)
    general._legal = None
    assert general.legal_actions() == state.legal_actions(), R.action_to_str(general.banned)
    return True


@FAST
@given(OPTIONS, st.integers(0, 10**6))
def test_the_meld_phase_fast_path_equals_the_general_rule(options, seed):
    config = Rummy500Config(**options)
    state, rng = Rummy500State(config, seed), random.Random(seed)
    while not state.is_terminal():
        fast_path_agrees(state)
        state.apply(meldy(state, rng))


def test_the_fast_path_check_has_teeth():
    """The check reaches states (the default rules take the fast path at most table decisions),
    and a banned card the hand holds does change the mask: the check would see a difference."""
    state, rng = Rummy500State(Rummy500Config(), 5), random.Random(5)
    checked = changed = 0
    while not state.is_terminal():
        if fast_path_agrees(state):
            checked += 1
            held = state.clone()
            held.banned, held._legal = state.hand_cards(state.current_player)[0], None
            changed += held.legal_actions() != state.legal_actions()
        state.apply(meldy(state, rng))
    assert checked > 20 and changed > 0, (checked, changed)


# ---------------------------------------------------------------------------------------
# The scoring rules, written again from docs/rummy500.md#scoring (card values:
# docs/rummy500.md#cards-and-melds, docs/rummy500.md#jokers)


def natural_value(card: int) -> int:
    """A card's value in the hand or in a set: 2-10 face value, J/Q/K 10, A 15."""
    rank = card % 13
    return 15 if rank == 0 else 10 if rank >= 9 else rank + 1


@dataclass
class TableMeld:
    """A meld as recorded here: its identities, those held by jokers, each one's credited seat."""

    owner: int
    cards: Counter = field(default_factory=Counter)
    jokers: Counter = field(default_factory=Counter)
    credit: list[tuple[int, int]] = field(default_factory=list)  # (identity, seat) in the order placed
    ace_low: bool = False  # a sequence whose ace went on below its 2

    def is_set(self) -> bool:
        return len({c % 13 for c in self.cards}) == 1

    def value(self, identity: int, joker: bool, joker_value: int) -> int:
        """A joker counts its value; an ace at the low end of a sequence counts 1."""
        if joker:
            return joker_value
        if identity % 13 == 0 and not self.is_set() and self.ace_low:
            return 1
        return natural_value(identity)


# ---------------------------------------------------------------------------------------
# Public play, followed action by action


@dataclass
class Public:
    """What every player has seen of the hand, and the match totals from the hands' points."""

    pile: list[int]
    stock: int
    sizes: list[int]
    known: list[Counter]
    melds: list[TableMeld] = field(default_factory=list)
    pending: set[int] = field(default_factory=set)
    pending_jokers: set[int] = field(default_factory=set)
    target: int | None = None
    banned: int | None = None
    turns: int = 0

    @classmethod
    def deal(cls, state: Rummy500State) -> Public:
        return cls(pile=list(state.pile), stock=len(state.stock), sizes=[len(state.hand_cards(q)) for q in range(state.n)],
                   known=[Counter() for _ in range(state.n)])

    def play(self, state: Rummy500State, action: int) -> None:
        """Record ``action`` of the player to move (before it is applied)."""
        cfg, p = state.config, state.current_player
        if action == R.DRAW_STOCK:
            self.stock -= 1
            self.sizes[p] += 1
        elif R.TAKE_DISCARD <= action < R.PICK:
            i = action - R.TAKE_DISCARD
            taken, self.pile = self.pile[i:], self.pile[:i]
            self.known[p].update(taken)
            self.sizes[p] += len(taken)
            if len(taken) > 1 or cfg.top_discard_must_be_used:
                self.target = taken[0]
            elif not cfg.allow_rediscard_taken_card:
                self.banned = taken[0]
        elif R.PICK <= action < R.PICK_JOKER:
            self.pending.add(action - R.PICK)
        elif R.PICK_JOKER <= action < R.LAY_OFF:
            self.pending_jokers.add(action - R.PICK_JOKER)
        elif action == R.CANCEL:  # back in the hand, but seen: each card known to be held at least once
            self.known[p] |= Counter(self.pending) + Counter({JOKER: len(self.pending_jokers)})
            self.pending, self.pending_jokers = set(), set()
            self.turns += 1
        elif action == R.MELD_NEW or R.LAY_OFF <= action < R.DISCARD:
            slot = -1 if action == R.MELD_NEW else (action - R.LAY_OFF) % R.MAX_MELDS
            self._commit(state, p, slot, high=action >= R.LAY_OFF_HIGH)
        elif R.DISCARD <= action:
            card = action - R.DISCARD
            self.pile.append(card)
            self.sizes[p] -= 1
            self._forget(state, p, Counter([card]))
            self.turns += 1
            self.target = self.banned = None

    def _commit(self, state: Rummy500State, p: int, slot: int, high: bool) -> None:
        """The pending group goes on the table: a new meld, or onto the meld of ``slot`` (at its
        high end or its low end)."""
        group = sorted(self.pending | self.pending_jokers)
        meld = TableMeld(owner=p) if slot < 0 else self.melds[slot]
        if slot < 0:
            self.melds.append(meld)
        seat = p if slot < 0 or state.config.layoff_credit == "layer" else meld.owner
        for identity in group:
            meld.cards[identity] += 1
            if identity in self.pending_jokers:
                meld.jokers[identity] += 1
            meld.credit.append((identity, seat))
        aces = [c for c in group if c % 13 == 0]
        if aces and not meld.is_set():  # an ace joins a sequence: A-2-3 low, Q-K-A high
            meld.ace_low = aces[0] + 1 in group if slot < 0 else not high
        played = Counter(c for c in group if c not in self.pending_jokers) + Counter({JOKER: len(self.pending_jokers)})
        self.sizes[p] -= len(group)
        self._forget(state, p, played)
        if self.target is not None and self.target in played and (self.target == JOKER or self.target in self.pending):
            self.target = None
        self.pending, self.pending_jokers = set(), set()

    def _forget(self, state: Rummy500State, p: int, played: Counter) -> None:
        """Known cards stay known while a copy of them is still held."""
        held = Counter(state.hand_cards(p)) - played
        self.known[p] = Counter({c: min(k, held[c]) for c, k in self.known[p].items() if min(k, held[c])})


def check_view(state: Rummy500State, public: Public, totals: list[int], player: int) -> None:
    """``player``'s view against the public record (seats relative, ``player`` first)."""
    view = state.player_view(player)
    n = state.n
    seats = [(player + k) % n for k in range(n)]
    rel = lambda seat: (seat - player) % n  # noqa: E731
    assert list(view.discard_pile) == public.pile and view.stock_size == public.stock
    assert list(view.hand_sizes) == [public.sizes[q] for q in seats]
    assert [Counter(k) for k in view.known] == [public.known[q] for q in seats]
    assert len(view.melds) == len(public.melds)
    for seen, meld in zip(view.melds, public.melds):
        assert Counter(seen.cards) == meld.cards and Counter(seen.jokers) == meld.jokers
        assert seen.owner == rel(meld.owner) and seen.is_set == meld.is_set()
        assert Counter(zip(seen.cards, seen.credit)) == Counter((c, rel(q)) for c, q in meld.credit)
    assert set(view.pending) == public.pending and set(view.pending_jokers) == public.pending_jokers
    assert view.target == public.target and view.banned == public.banned
    assert view.turns == public.turns
    assert list(view.scores) == [totals[q] for q in seats]


def expected_points(state: Rummy500State, public: Public, result: R.HandResult) -> list[int]:
    """Each seat's hand points from the recorded table and the revealed hands
    (docs/rummy500.md#scoring)."""
    cfg = state.config
    points = [0] * state.n
    for meld in public.melds:
        jokers = Counter(meld.jokers)
        for identity, seat in meld.credit:
            joker = jokers[identity] > 0
            if joker:
                jokers[identity] -= 1
            points[seat] += meld.value(identity, joker, cfg.joker_value)
    for q, hand in enumerate(result.hands):
        points[q] -= sum(cfg.joker_value if c == JOKER else natural_value(c) for c in hand)
    if result.went_out >= 0:
        points[result.went_out] += cfg.out_bonus
    return points


def check_determinization(state: Rummy500State, rng: random.Random) -> None:
    """Each player's sample looks the same to that player and keeps every card whose place it
    knows; only hidden cards move among the hidden places."""
    for p in range(state.n):
        det = state.sample_determinization(p, rng)
        assert det.player_view(p) == state.player_view(p)
        assert det.hands[p] == state.hands[p] and det.pile == state.pile
        hidden, det_hidden = Counter(state.stock), Counter(det.stock)
        for q in range(state.n):
            assert det.sizes[q] == state.sizes[q]
            public = Counter(state.public_cards(q))
            assert not public - Counter(det.hand_cards(q)), f"seat {q}'s public cards left its hand"
            if q != p:
                hidden += Counter(state.hand_cards(q)) - public
                det_hidden += Counter(det.hand_cards(q)) - public
        assert hidden == det_hidden


def play_against_the_record(options: dict, seed: int, max_steps: int, oracle_every: int) -> Counter:
    """A seeded game of the raw env's engine, every decision checked against the record."""
    env = rummy500_v0.raw_env(**options)
    env.reset(seed=seed)
    state, rng = env.game, random.Random(seed)
    public = Public.deal(state)
    totals = [0] * state.n
    seen: Counter = Counter()
    for step in range(max_steps):
        for player in range(state.n):
            check_view(state, public, totals, player)
        check_observation_against_view(env, f"player_{max(state.current_player, 0)}")
        if state.is_terminal():
            break
        if step % oracle_every == 0:
            d = state.to_dict()
            if oracle.affordable(d):
                assert set(state.legal_actions()) == oracle.legal_actions(d), step
            check_determinization(state, rng)
        action = meldy(state, rng)
        seen["deep take"] += R.TAKE_DISCARD <= action < R.TAKE_DISCARD + len(state.pile) - 1
        seen["layoff"] += R.LAY_OFF <= action < R.DISCARD
        hands = len(state.hand_results)
        public.play(state, action)
        state.apply(action)
        if len(state.hand_results) > hands:
            result = state.hand_results[-1]
            assert result.points == expected_points(state, public, result)
            seen[result.kind] += 1
            if state.config.episode == "match":
                totals = [t + x for t, x in zip(totals, result.points)]
            if not state.is_terminal():
                public = Public.deal(state)
    return seen


RECORDED_GAMES = {
    "two": ({}, 3),
    "two_rules": ({"top_discard_must_be_used": True, "layoff_credit": "meld_owner", "out_bonus": 15,
                   "target_use_timing": "anytime_before_discard", "num_jokers": 1}, 2),
    "four_jokers_match": ({"num_players": 4, "num_jokers": 2, "episode": "match", "target_score": 60,
                           "allow_rediscard_taken_card": True, "stock_end_rule": "reshuffle_discards"}, 1),
    "five_two_decks": ({"num_players": 5, "must_discard_to_go_out": True, "joker_value": 20, "num_jokers": 1}, 1),
    "capped_match": ({"episode": "match", "max_turns_per_hand": 12, "max_hands": 3}, 1),
}


def test_views_observations_masks_and_scores_over_seeded_games():
    """Every decision of the seeded games of ``RECORDED_GAMES`` checked
    (``play_against_the_record``); together
    they reach deep takes, layoffs, hands gone out and hands capped."""
    seen: Counter = Counter()
    for options, games in RECORDED_GAMES.values():
        for seed in range(games):
            seen += play_against_the_record(options, seed, max_steps=700, oracle_every=6)
    assert min(seen[k] for k in ("deep take", "layoff", "out", "turn_cap")) > 0, seen


# ---------------------------------------------------------------------------------------
# States sampled from a view (``sample_from_view``)
# ---------------------------------------------------------------------------------------

def test_the_engine_meets_the_contract_of_games_base():
    """The state, its view and its config are the contract's; the view carries the rules and
    hashes (a finished hand's result, which holds lists, is left out of the hash); every
    action's name reads back as that action."""
    state = Rummy500State(Rummy500Config(num_jokers=1, episode="match", max_turns_per_hand=4), 3)
    while not state.hand_results:
        state.apply(state.legal_actions()[0])
    view = state.player_view(1)
    assert isinstance(state, GameState) and isinstance(view, PlayerView) and isinstance(state.config, GameConfig)
    assert view.rules is state.config and view.hand_results == tuple(state.hand_results) and hash(view)
    assert all(state.str_to_action(state.action_to_str(a)) == a for a in range(R.NUM_ACTIONS))


SAMPLE_RULES = {**MASK_RULES, "daily_match": {"num_jokers": 1, "episode": "match", "target_score": 60, "max_hands": 3,
                                              "max_turns_per_hand": 40, "stock_end_rule": "reshuffle_discards",
                                              "deal_seed_mode": "daily", "daily_date": "2026-11-30"}}


def check_sample_from_view(state: Rummy500State, rng: random.Random) -> None:
    """For every seat, a state sampled from its view: the seat sees it exactly as its view,
    every card is in one place, every seat's public cards stay, the stock keeps its size, the
    scores are the same, the seat to move has the same legal actions when it is the viewer,
    and random play goes on from it to the end."""
    for p in range(state.n):
        view = state.player_view(p)
        sample = Rummy500State.sample_from_view(view, rng)
        assert sample.player_view(p) == view, f"seat {p}'s view changed in {state.phase.name}"
        check_state(sample)
        assert [sample.public_cards(q) for q in range(state.n)] == [state.public_cards(q) for q in range(state.n)]
        assert len(sample.stock) == len(state.stock) and sample.returns() == state.returns()
        if state.current_player == p:
            assert sample.legal_actions() == state.legal_actions()
        while not sample.is_terminal():
            sample.apply(rng.choice(sample.legal_actions()))


@pytest.mark.parametrize("players", (2, 4))
@pytest.mark.parametrize("name", list(SAMPLE_RULES))
def test_a_state_sampled_from_a_view_is_one_the_seat_could_be_in(name, players):
    rng = random.Random(17)
    states = random_points(SAMPLE_RULES[name], players, games=6 // players, seed=players, every=0.05, ends=True)
    for state in states:
        check_sample_from_view(state, rng)
    assert any(s.phase == Phase.MELD and s.current_player > 0 for s in states)


def hidden_zones(state: Rummy500State, player: int) -> Counter:
    """Where the cards hidden from ``player`` are: ``(card, seat)`` for another hand's cards
    that are not public, ``(card, "stock")`` for the stock's."""
    zones = Counter((card, "stock") for card in state.stock)
    for q in range(state.n):
        if q != player:
            hidden = Counter(state.hand_cards(q)) - Counter(state.public_cards(q))
            zones.update((card, q) for card in hidden.elements())
    return zones


def mid_turn(rules: dict, players: int, seed: int, target: bool) -> Rummy500State:
    """The first state of seeded meldy play where the player to move has a deep-take target
    to place (or a pending group): whoever else looks, a redeal must leave it able to go on."""
    return random_points(rules, players, games=20, seed=seed, every=1.0,
                         keep=lambda s: s.phase == Phase.MELD and (s.target >= 0 if target else s.pending != 0))[0]


ZONE_STATES = {
    "three_players": lambda: random_points({"num_jokers": 1}, 3, games=1, seed=2, every=1.0)[40],
    "deep_take_target": lambda: mid_turn({}, 2, seed=4, target=True),
    "pending_group": lambda: mid_turn({}, 2, seed=4, target=False),
    "pending_group_jokers": lambda: mid_turn({"num_jokers": 2}, 3, seed=6, target=False),
}


def test_a_sampled_mover_holds_no_hidden_copy_of_the_banned_card_it_played():
    """Two decks: the mover took QS alone from the pile (so may not discard it) and melded it.
    A card taken stays known while the hand holds a copy, so the mover holds no other QS:
    no state sampled for the other seat (from its view or by a redeal) gives it one."""
    state = scenario(["QH QD 2C 9D 4C", "KH 3S"], "QS", phase="DRAW", num_decks=2)
    play(state, "TAKE_DISCARD(0)")
    meld(state, "QS QH QD")
    queen = C.parse_card("QS")
    assert state.banned == queen and queen in state.stock and queen not in state.hand_cards(0)
    rng = random.Random(2)
    for _ in range(200):
        for sample in (Rummy500State.sample_from_view(state.player_view(1), rng), state.sample_determinization(1, rng)):
            assert queen not in sample.hand_cards(0)


def test_once_the_game_is_over_every_hand_is_public():
    """The last hand's result shows every hand, so a sample for a seat after the end keeps
    them all (only the stock's order is redrawn), and reads back from its dict."""
    state = Rummy500State.from_dict(reached({}, ended_by("out")))
    seat, rng = state.hand_results[-1].went_out, random.Random(4)  # the other hand is not empty
    for _ in range(20):
        for sample in (Rummy500State.sample_from_view(state.player_view(seat), rng),
                       state.sample_determinization(seat, rng)):
            assert sample.hands == state.hands and sorted(sample.stock) == sorted(state.stock)
            Rummy500State.from_dict(sample.to_dict())


@pytest.mark.parametrize("name", list(ZONE_STATES))
def test_sampled_hidden_cards_land_where_determinizations_put_them(name):
    """Over many samples each hidden card lands in each hidden zone (another hand, the stock)
    as often from the view as by ``sample_determinization``, including the condition that an
    opponent mid-turn can go on (which makes the cards that complete its group likelier in
    its hand)."""
    state = ZONE_STATES[name]()
    player = (state.current_player + 1) % state.n
    rng, samples = random.Random(3), 1000
    from_view, redealt = Counter(), Counter()
    for _ in range(samples):
        from_view += hidden_zones(Rummy500State.sample_from_view(state.player_view(player), rng), player)
        redealt += hidden_zones(state.sample_determinization(player, rng), player)
    assert sum(from_view.values()) == sum(redealt.values())
    for zone in set(from_view) | set(redealt):
        a, b = from_view[zone] / samples, redealt[zone] / samples
        spread = (2 * max(a, b) * (1 - min(a, b)) / samples) ** 0.5
        assert abs(a - b) <= 4.5 * spread + 0.01, (zone, a, b)


# ---------------------------------------------------------------------------------------
# State dicts the rules cannot reach (docs/rummy500.md#state-dicts): summaries that disagree
# with what they summarise, turn fields no turn leads to, owners who melded nothing
# ---------------------------------------------------------------------------------------

MATCH = {"episode": "match", "target_score": 100}


def reached(rules: dict, keep: Callable[[Rummy500State], bool], players: int = 2) -> dict:
    """The dict of the first state of seeded meldy games that ``keep`` accepts."""
    config = Rummy500Config(num_players=players, **rules)
    rng = random.Random(0)
    for seed in range(100):
        state = Rummy500State(config, seed)
        while not keep(state) and not state.is_terminal():
            state.apply(meldy(state, rng))
        if keep(state):
            return state.to_dict()
    raise AssertionError("no game reaches such a state")


def refused(d: dict, *names: str) -> None:
    """``from_dict`` refuses ``d`` naming (at least) these fields, and leaves it as it was."""
    before = copy.deepcopy(d)
    with pytest.raises(ValueError) as info:
        Rummy500State.from_dict(d)
    assert set(names) <= set(contract.named_fields(str(info.value))), str(info.value)
    assert d == before


def in_meld(state: Rummy500State) -> bool:
    return state.phase == Phase.MELD


def later_hand(state: Rummy500State) -> bool:
    return bool(state.hand_results) and not state.is_terminal()


def ended_by(kind: str) -> Callable[[Rummy500State], bool]:
    """A finished hand of this kind that leaves a stock."""
    return lambda state: state.is_terminal() and state.hand_results[-1].kind == kind and bool(state.stock)


def fresh(players: int = 2) -> dict:
    return Rummy500State(Rummy500Config(num_players=players), 1).to_dict()


def with_options(d: dict, **options) -> dict:
    return {**d, "options": {**d["options"], **options}}


def per_seat(d: dict, key: str, seat: int, value) -> dict:
    """``d`` with seat ``seat``'s entry of the per-seat list ``key`` replaced."""
    return {**d, key: [value if q == seat else v for q, v in enumerate(d[key])]}


def with_melds(*melds: dict) -> dict:
    """A two-player scenario's dict (P to move, in ``MELD``) with these melds on the table."""
    d = scenario(["7C 7D 7H 2S", "KH"], melds=[{"cards": m["cards"]} for m in melds]).to_dict()
    return {**d, "melds": [dict(m) for m in melds]}


def with_last_result(d: dict, change: Callable[[dict], None]) -> dict:
    """``d`` with its last hand result changed in place by ``change`` (on a copy)."""
    result = copy.deepcopy(d["hand_results"][-1])
    change(result)
    return {**d, "hand_results": [*d["hand_results"][:-1], result]}


# -- the match's summaries: winners, totals, the hand count, truncation ------------------
def winners_mid_match() -> dict:
    return {**reached(MATCH, in_meld), "winners": [1], "totals": [101, 102]}


def totals_that_won_a_hand_ago() -> dict:
    d = reached(MATCH, later_hand)
    return {**d, "totals": [d["totals"][0] + 1000, d["totals"][1]]}


def a_hand_in_play_after_max_hands() -> dict:
    d = reached(MATCH, later_hand)
    return with_options(d, max_hands=d["hand_index"])


def a_won_match_called_truncated() -> dict:
    d = reached(MATCH, lambda state: bool(state.winners))
    return with_options({**d, "winners": [], "truncated": True}, max_hands=d["hand_index"] + 1)


def a_later_hand_in_a_one_hand_episode() -> dict:
    d = fresh()
    return {**d, "hand_index": 1, "first_dealer": 1 - d["dealer"]}


# -- a finished game against its last result --------------------------------------------
def hands_that_are_not_the_results() -> dict:
    """A finished hand with a card of a hand (not a known one) swapped with the stock's first."""
    d = reached({}, ended_by("out"))
    q, card = next((q, c) for q, hand in enumerate(d["hands"]) for c in hand if c not in d["known"][q])
    d = per_seat(d, "hands", q, [d["stock"][0] if c == card else c for c in d["hands"][q]])
    return {**d, "stock": [card, *d["stock"][1:]]}


def an_exhausted_stock_with_cards() -> dict:
    state = exhausted(["5C 5D 2S", "KH AD 3C"])
    play(state, "END_HAND")
    d = state.to_dict()
    return {**d, "stock": d["discard_pile"][:1], "discard_pile": d["discard_pile"][1:]}


def a_seat_gone_out_shown_holding_a_card() -> dict:
    def show_a_card(result: dict) -> None:
        result["hands"][result["went_out"]] = [0]
        del result["hand_points"]  # a hand-written result may leave it out

    return with_last_result(reached({}, ended_by("out")), show_a_card)


# -- meld owners --------------------------------------------------------------------------
def a_result_meld_of_another_owner() -> dict:
    def other_owner(result: dict) -> None:
        result["melds"][0]["owner"] = 1 - result["melds"][0]["owner"]

    return with_last_result(reached({}, lambda s: s.is_terminal() and bool(s.hand_results[-1].melds)), other_owner)


# -- the turn in progress and the turns before it ----------------------------------------
def a_target_nobody_saw_taken() -> dict:
    d = reached({}, lambda state: state.target >= 0)
    return per_seat(d, "known", d["current_player"], [])


def known_cards_of_a_seat_yet_to_move() -> dict:
    d = fresh()
    return per_seat(d, "known", d["dealer"], d["hands"][d["dealer"]][:1])


def the_dealer_to_move_at_turn_zero() -> dict:
    d = fresh(players=3)
    return {**d, "current_player": d["dealer"]}


UNREACHABLE = {
    "winners_mid_match": (winners_mid_match, "winners"),
    "totals_that_won_a_hand_ago": (totals_that_won_a_hand_ago, "totals"),
    "a_hand_in_play_after_max_hands": (a_hand_in_play_after_max_hands, "hand_results"),
    "a_won_match_called_truncated": (a_won_match_called_truncated, "winners"),
    "totals_in_a_one_hand_episode": (lambda: {**reached({}, in_meld), "totals": [5, -5]}, "totals"),
    "a_later_hand_in_a_one_hand_episode": (a_later_hand_in_a_one_hand_episode, "hand_index"),
    "a_result_before_the_hand_ends": (
        lambda: {**reached({}, in_meld), "hand_results": [{"kind": "stock_exhausted", "points": [0, 0]}]},
        "hand_results"),
    "a_finished_hand_without_its_result": (lambda: {**reached({}, ended_by("out")), "hand_results": []},
                                           "hand_results"),
    "a_dealer_the_deal_did_not_pass_to": (lambda: {**fresh(), "first_dealer": 1 - fresh()["dealer"]}, "dealer"),
    "hands_that_are_not_the_results": (hands_that_are_not_the_results, "hand_results[0].hands"),
    "an_exhausted_stock_with_cards": (an_exhausted_stock_with_cards, "stock"),
    "a_turn_cap_not_reached": (lambda: {**reached({"max_turns_per_hand": 6}, Rummy500State.is_terminal), "turns": 5},
                               "turns"),
    "a_seat_gone_out_shown_holding_a_card": (a_seat_gone_out_shown_holding_a_card, "hand_results[0].hands"),
    "an_owner_credited_with_none_of_its_cards": (
        lambda: with_melds({"cards": "5S 6S 7S", "credit": [0, 0, 0], "owner": 1}), "melds[0].owner"),
    "an_owner_credited_with_a_layoff_only": (
        lambda: with_melds({"cards": "5S 6S 7S 8S", "credit": [1, 0, 0, 0], "owner": 1}), "melds[0].owner"),
    "a_sequence_nobody_founded": (lambda: with_melds({"cards": "5S 6S 7S 8S", "credit": [0, 0, 1, 1]}),
                                  "melds[0].credit"),
    "a_set_nobody_founded": (lambda: with_melds({"cards": "9C 9D 9H 9S", "credit": [0, 1, 1, 0]}), "melds[0].credit"),
    "a_result_meld_of_another_owner": (a_result_meld_of_another_owner, "hand_results[0].melds[0].owner"),
    "a_banned_card_where_the_top_card_is_a_target": (
        lambda: with_options(reached({}, lambda state: state.banned >= 0), top_discard_must_be_used=True), "banned"),
    "a_target_nobody_saw_taken": (a_target_nobody_saw_taken, "target"),
    "a_pending_group_no_commit_holds": (
        lambda: {**scenario(["2C 9D KH 5S 7S", "3H"]).to_dict(), "pending": ["2C", "9D"]}, "pending"),
    "known_cards_of_a_seat_yet_to_move": (known_cards_of_a_seat_yet_to_move, f"known[{fresh()['dealer']}]"),
    "the_dealer_to_move_at_turn_zero": (the_dealer_to_move_at_turn_zero, "turns"),
}


@pytest.mark.parametrize("name", list(UNREACHABLE))
def test_from_dict_refuses_what_the_rules_cannot_reach(name):
    make, field_name = UNREACHABLE[name]
    refused(make(), field_name)


def test_winners_mid_match_are_refused_where_they_used_to_end_the_match():
    """Winners mid-hand used to be read, and ended the match after the hand in a state whose
    own dict was then refused. The match played on from the true dict ends in a dict that
    reads back."""
    d = reached({"episode": "match"}, in_meld)
    refused({**d, "winners": [1], "totals": [101, 102]}, "winners")
    state, rng = Rummy500State.from_dict({**d, "totals": [101, 102]}), random.Random(1)
    while not state.is_terminal():
        state.apply(meldy(state, rng))
    assert Rummy500State.from_dict(state.to_dict()).to_dict() == state.to_dict()


def test_a_meld_owner_defaults_to_a_seat_that_could_have_melded_it():
    """Without ``owner`` a meld belongs to the first seat credited with a new meld's cards
    (three in a row here), not to the first card's credit, a layoff; without ``credit`` every
    card is the owner's."""
    state = Rummy500State.from_dict(with_melds({"cards": "5S 6S 7S 8S", "credit": [1, 0, 0, 0]}))
    assert state.melds[0].owner == 0
    state = Rummy500State.from_dict(with_melds({"cards": "5S 6S 7S", "owner": 1}))
    assert state.melds[0].owner == 1 and set(state.melds[0].credit.values()) == {1}


def test_turns_left_out_count_the_seats_before_the_mover():
    """A scenario without ``turns`` has played the turns from the dealer's left to the seat to
    move: with two players and the dealer to move, one."""
    assert scenario(["7C 7D 7H 2S", "KH"], current=1, dealer=1).turns == 1
    assert scenario(["7C 7D 7H 2S", "KH"], current=0, dealer=1).turns == 0


def test_a_group_shown_and_put_back_stays_known_to_every_sample():
    """Seed 0, two players: seat 1 picks 9C 9D 9H, shows them pending, puts them back with
    CANCEL and discards. Everybody saw them, so they are known (in the state and the other
    seat's view), and every state sampled for seat 0, from its view or by a redeal, leaves
    them in seat 1's hand (before, most samples dealt them away)."""
    state = Rummy500State(Rummy500Config(), seed=0)
    shown = C.parse("9C 9D 9H")
    mover = state.current_player
    play(state, "DRAW_STOCK", *(f"PICK({C.format_card(c)})" for c in shown), "CANCEL")
    assert set(shown) <= set(multiset_cards(state.known[mover]))
    discard = next(a for a in state.legal_actions() if state.action_to_str(a).startswith("DISCARD")
                   and C.parse_card(state.action_to_str(a)[8:-1]) not in shown)
    state.apply(discard)
    viewer, rng = 1 - mover, random.Random(0)
    assert set(shown) <= set(state.player_view(viewer).known[1])
    for _ in range(100):
        for sample in (Rummy500State.sample_from_view(state.player_view(viewer), rng),
                       state.sample_determinization(viewer, rng)):
            assert set(shown) <= set(sample.hand_cards(mover))
