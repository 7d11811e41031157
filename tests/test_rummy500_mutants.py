"""Tests that fail when the Rummy 500 rules break (issue 13; docs/mutation.md has the score).

Each check compares the engine with something independent of it:
- the player views (and through tests/test_rummy500_env.py's decoder, every observation
  segment) against a record of the public play kept here action by action: the spread pile,
  the cards each seat took and still holds, hand sizes, the stock, the table melds with
  who is credited for each card, the pending group, the deep-take target and the banned
  card, the totals; over seeded 2-, 4- and 5-player games, with jokers and in matches;
- the legal actions against the brute-force oracle of tests/rummy500_oracle.py;
- each hand's points against the scoring rules (table credit with the ace rule, cards left
  in hand, the out bonus), and the match end against tables worked out by hand;
- determinizations keeping every publicly known card where it is.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import pytest

import rummy500_oracle as oracle
from rummy_envs import cards as C
from rummy_envs import rummy500_v0
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Rummy500State
from test_rummy500_env import check_observation as check_observation_against_view
from test_rummy500_env import meldy
from test_rummy500_rules import exhausted, play, scenario

JOKER = R.JOKER


# ---------------------------------------------------------------------------------------
# The scoring rules, written again from rummy_500.md §1, §6 and §8


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
        elif action == R.CANCEL:
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
    view = state.view(player)
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
    """Each seat's hand points from the recorded table and the revealed hands (§6)."""
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
        assert det.view(p) == state.view(p)
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


def play_checked(options: dict, seed: int, max_steps: int, oracle_every: int) -> Counter:
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


GAMES = {
    "two": ({}, 3),
    "two_rules": ({"top_discard_must_be_used": True, "layoff_credit": "meld_owner", "out_bonus": 15,
                   "target_use_timing": "anytime_before_discard", "num_jokers": 1}, 2),
    "four_jokers_match": ({"num_players": 4, "num_jokers": 2, "episode": "match", "target_score": 60,
                           "allow_rediscard_taken_card": True, "stock_end_rule": "reshuffle_discards"}, 1),
    "five_two_decks": ({"num_players": 5, "must_discard_to_go_out": True, "joker_value": 20, "num_jokers": 1}, 1),
    "capped_match": ({"episode": "match", "max_turns_per_hand": 12, "max_hands": 3}, 1),
}


def test_views_observations_masks_and_scores_over_seeded_games():
    """Every decision of the seeded games of ``GAMES`` checked (``play_checked``); together
    they reach deep takes, layoffs, hands gone out and hands capped."""
    seen: Counter = Counter()
    for options, games in GAMES.values():
        for seed in range(games):
            seen += play_checked(options, seed, max_steps=700, oracle_every=6)
    assert min(seen[k] for k in ("deep take", "layoff", "out", "turn_cap")) > 0, seen


# ---------------------------------------------------------------------------------------
# The match end: tables worked out by hand (A scores 28 and B 15 in the hand ending here)


@pytest.mark.parametrize("before, options, totals, winners, over", [
    ([472, 0], {}, [500, 15], [0], True),  # exactly the target
    ([471, 0], {}, [499, 15], [], False),
    ([472, 490], {}, [500, 505], [1], True),  # both past it: the higher total wins
    ([477, 490], {}, [505, 505], [], False),  # tied leaders: play on
    ([477, 490], {"tie_break": "share"}, [505, 505], [0, 1], True),
    ([-100, 470], {}, [-72, 485], [], False),  # negative totals are fine
    ([472, 0], {"target_score": 520}, [500, 15], [], False),
    ([30, 0], {"target_score": 58}, [58, 15], [0], True),
])
def test_match_end_table(before, options, totals, winners, over):
    melds = [{"cards": ["TC", "TD", "TH"], "credit": [0] * 3}, {"cards": ["5S", "6S", "7S"], "credit": [1] * 3}]
    state = exhausted(["2C", "3H"], melds=melds, episode="match", **options)
    d = state.to_dict()
    d["totals"] = before
    state = Rummy500State.from_dict(d)
    play(state, "END_HAND")
    assert state.hand_results[-1].points == [28, 15]
    assert state.totals == totals and state.winners == winners and state.is_terminal() == over
    assert state.scores() == totals and not state.truncated


def test_match_hand_cap_truncates_and_ranks_by_total():
    melds = [{"cards": ["TC", "TD", "TH"], "credit": [0] * 3}]
    state = exhausted(["2C", "3H"], melds=melds, episode="match", max_hands=1)
    play(state, "END_HAND")
    assert state.is_terminal() and state.truncated and state.winners == []
    assert state.scores() == [28, -3] and state.standings() == [28, -3]


# ---------------------------------------------------------------------------------------
# Jokers leaving a hand


@pytest.mark.parametrize("leaves_by", ["DISCARD(JK)", "PICK_JOKER(5S)"])
def test_a_joker_taken_from_the_pile_is_known_until_it_leaves(leaves_by):
    """P takes the joker on top of the pile: everybody knows P holds it, until it is discarded
    (re-discards allowed) or declared into a meld."""
    state = scenario(["5C 5D 5H 9S", "KH AD 3C"], pile="4C JK", phase="DRAW", num_jokers=2,
                     allow_rediscard_taken_card=True)
    play(state, f"TAKE_DISCARD({len(state.pile) - 1})")
    assert state.view(1).known[1] == (JOKER,) and state.view(0).known[0] == (JOKER,)
    if leaves_by == "DISCARD(JK)":
        play(state, "DISCARD(JK)")
        assert state.pile[-1] == JOKER and state.current_player == 1
    else:
        play(state, "PICK(5C)", "PICK(5D)", leaves_by, "MELD_NEW")
        assert state.melds[-1].jokers == 1 << C.parse_card("5S")
    assert state.view(1).known[1] == () and JOKER not in state.hand_cards(0)


def test_a_full_suit_melded_at_once_counts_its_ace_high():
    """docs/rummy500.md: a full suit as a new meld (A to K) counts its ace high (15)."""
    spades = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS"
    state = scenario([f"{spades} 4H", "KH AD 3C"])
    play(state, *[f"PICK({c})" for c in spades.split()], "MELD_NEW")
    assert state.table_points()[0] == 15 + sum(range(2, 11)) + 3 * 10
    assert state.view(1).melds[0].cards[-1] == C.parse_card("AS")  # laid out as 2S .. KS AS


def test_two_decks_both_copies_of_the_banned_card_cannot_end_a_turn():
    """Two decks: P holds a 7H and takes the other 7H from the top of the pile. Melding
    5C 6C 7C would leave only the two banned 7H, so no group with them is offered; discarding
    a club ends the turn."""
    hands = ["7H 5C 6C 7C", "2C 3C", "4D 5D", "6S 8S", "9C TC"]
    state = scenario(hands, pile="KD 7H", phase="DRAW", num_players=5)
    assert state.config.decks == 2
    play(state, f"TAKE_DISCARD({len(state.pile) - 1})")
    legal = set(state.legal_actions())
    assert legal == oracle.legal_actions(state.to_dict())
    assert R.str_to_action("PICK(5C)") not in legal and R.str_to_action("DISCARD(5C)") in legal
    assert R.str_to_action("DISCARD(7H)") not in legal


def test_a_deep_take_of_the_ace_of_clubs_into_a_set():
    """The target may be card 0: AC deep in the pile, AD AH in hand, is taken for a set."""
    state = scenario(["AD AH 9S", "KH 2D 3C"], pile="AC KD 5H", phase="DRAW")
    assert R.TAKE_DISCARD in state.legal_actions()
    assert set(state.legal_actions()) == oracle.legal_actions(state.to_dict())


def test_a_finished_hand_has_nobody_to_move_and_reads_back():
    state = exhausted(["2C", "3H"])
    play(state, "END_HAND")
    assert state.is_terminal() and state.current_player == -1
    assert Rummy500State.from_dict(state.to_dict()).to_dict() == state.to_dict()
