"""Tests that fail when the Least Count rules break (issue 13; docs/mutation.md has the score).

Each check compares the engine with something independent of it:
- the legal actions, the round scores and the eliminations against rules written here from
  least_count.md (declaring, the discard patterns through tests/least_count_oracle.py, the
  picks, valid, false and tied declarations, the timeout, the elimination threshold);
- the player views and observations against a record of the public play kept here action
  by action (open set, dead pile, known cards, hand sizes, closed deck, totals,
  eliminations, finished turns), over seeded rounds and matches with jokers and two decks;
- the match end and the standings against tables worked out by hand;
- determinizations keeping every publicly known card where it is.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from least_count_oracle import legal_subsets
from rummy_envs import least_count_v0
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import LeastCountConfig, LeastCountState, Phase

JOKER = 52


# ---------------------------------------------------------------------------------------
# The rules, written again from least_count.md


def oracle_value(card: int, cut_card: int) -> int:
    """A = 1, 2-10 face value, J/Q/K = 10; printed jokers and the cut card's rank 0 (§1)."""
    if card == JOKER:
        return 0
    if cut_card >= 0 and cut_card != JOKER and card % 13 == cut_card % 13:
        return 0
    return min(card % 13 + 1, 10)


def oracle_round(config: LeastCountConfig, declarer: int, players: list[int], counts: dict[int, int]) -> list[int]:
    """Each seat's points of a round (§5 timeout, §6): zero for seats not dealt in."""
    points = [0] * config.num_players
    low = min(counts.values())
    if declarer < 0:
        for q in players:
            points[q] = counts[q] - low
        return points
    d = counts[declarer]
    beaten = [q for q in players if q != declarer and counts[q] < d]
    tied = [q for q in players if q != declarer and counts[q] == d]
    if not beaten and (not tied or config.tie_declaration_valid):
        for q in players:
            points[q] = counts[q] - d
    else:
        points[declarer] = config.false_declare_penalty + d - low
    return points


def oracle_eliminated(config: LeastCountConfig, players: list[int], totals: list[int]) -> list[int]:
    """Seats out after a round (§7): past the threshold (or at it under eliminate_on_equal),
    all but the lowest totals when that would be everybody."""
    limit = config.elimination_score
    over = [q for q in players if totals[q] > limit or (config.eliminate_on_equal and totals[q] == limit)]
    if len(over) == len(players):
        low = min(totals[q] for q in players)
        over = [q for q in over if totals[q] > low]
    return over


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


# ---------------------------------------------------------------------------------------
# Public play, followed action by action


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
    view = state.view(player)
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


def check_observation(env, state: LeastCountState, public: Public, match: Match, player: int) -> None:
    """The segments of ``player``'s observation that the record fixes."""
    obs = env.observe(f"player_{player}")["observation"]
    seg = {s.name: obs[s.offset : s.offset + s.size] for s in env.observation_layout().values()}
    n, ids = state.n, L.NUM_IDS
    seats = [(player + k) % n for k in range(n)]
    as_counts = lambda cards: np.bincount(np.array(cards, int), minlength=ids)  # noqa: E731
    assert np.array_equal(seg["open_set"], as_counts(public.open_set))
    assert np.array_equal(seg["dead_pile"], as_counts(public.dead))
    assert np.array_equal(seg["pending_discard"], as_counts(public.pending))
    for k, q in enumerate(seats):
        assert np.array_equal(seg["known"][k * ids : (k + 1) * ids], as_counts(public.known[q]))
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
        assert det.view(p) == state.view(p)
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
        check_observation(env, state, public, match, state.current_player if state.current_player >= 0 else 0)
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
            counts = {q: sum(oracle_value(c, result.cut_card) for c in result.hands[q]) for q in players}
            assert [result.counts[q] for q in players] == list(counts.values())
            assert result.points == oracle_round(state.config, declarer, players, counts)
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
# Round scores and eliminations: tables worked out by hand


@pytest.mark.parametrize("declarer, counts, options, kind, points", [
    (0, [3, 9, 4, 20], {}, "valid_declaration", [0, 6, 1, 17]),  # everyone pays the difference
    (0, [4, 9, 4, 20], {}, "false_declaration", [20, 0, 0, 0]),  # a tie is false: 20 + (d - min)
    (0, [4, 9, 4, 20], {"tie_declaration_valid": True}, "valid_declaration", [0, 5, 0, 16]),
    (2, [3, 9, 5, 20], {}, "false_declaration", [0, 0, 22, 0]),  # beaten: 20 + (5 - 3)
    (2, [3, 9, 5, 20], {"false_declare_penalty": 40}, "false_declaration", [0, 0, 42, 0]),
    (-1, [3, 9, 5, 20], {}, "timeout", [0, 6, 2, 17]),  # count - min
    (-1, [7, 7, 7, 7], {}, "timeout", [0, 0, 0, 0]),
])
def test_round_scores(declarer, counts, options, kind, points):
    cfg = LeastCountConfig(**options)
    assert L.score_round(cfg, declarer, [0, 1, 2, 3], counts) == (kind, points)
    assert oracle_round(cfg, declarer, [0, 1, 2, 3], dict(enumerate(counts))) == points


def test_round_scores_skip_seats_not_dealt_in():
    """Seat 1 is out of the match: its zero count is not the minimum, and it scores nothing."""
    cfg = LeastCountConfig()
    assert L.score_round(cfg, 0, [0, 2, 3], [6, 0, 9, 4])[1] == [22, 0, 0, 0]
    assert L.score_round(cfg, -1, [0, 2, 3], [6, 0, 9, 4])[1] == [2, 0, 5, 0]


def declare_state(hands: list[str], totals: list[int], **options) -> LeastCountState:
    """A match at seat 0's turn start, every seat having played a turn, with given totals."""
    n = len(hands)
    cfg = LeastCountConfig(num_players=n, episode="match", **options)
    state = LeastCountState(cfg, seed=1)
    held = [c for h in hands for c in L.C.parse(h)]
    rest = [c for c in cfg.full_deck() if c not in held]
    data = state.to_dict()
    data.update({"hands": [h.split() for h in hands], "open_set": [L.C.format_card(rest[0])],
                 "stock": L.C.format(rest[1:]).split(), "dead_pile": [], "phase": "TURN_START",
                 "current_player": 0, "turn_done": [True] * n, "totals": totals, "turns": n, "known": [[]] * n,
                 "pending_discard": []})
    return LeastCountState.from_dict(data)


@pytest.mark.parametrize("totals, options, eliminated, over, winners", [
    ([90, 95, 80], {}, [1], False, []),  # 95 + 7 is past 100
    ([90, 93, 80], {}, [], False, []),  # 93 + 7 = 100 is not past 100
    ([90, 93, 80], {"eliminate_on_equal": True}, [1], False, []),
    ([90, 95, 100], {}, [1, 2], True, [0]),  # the last player standing wins
    ([101, 95, 100], {}, [1, 2], True, [0]),  # everyone past 100: the lowest total stays
    ([90, 95, 80], {"match_end": "first_elimination"}, [1], True, [2]),  # the lowest total wins
])
def test_eliminations_and_match_end(totals, options, eliminated, over, winners):
    """Seat 0 (AC 2C, count 3) declares against 10 and 12: valid, 7 and 9 points."""
    state = declare_state(["AC 2C", "4D 6D", "5H 7H"], totals, **options)
    state.apply(L.DECLARE)
    result = state.hand_results[-1]
    assert result.kind == "valid_declaration" and result.points == [0, 7, 9]
    assert sorted(result.eliminated) == eliminated
    assert state.is_terminal() == over
    assert state.winners == winners


def test_standings_rank_by_elimination_round_then_total():
    """Later eliminations rank higher; in one round, the lower total; seats still in first."""
    state = declare_state(["AC 2C", "4D 6D", "5H 7H", "9S 9C"], [10, 95, 98, 20])
    state.apply(L.DECLARE)  # seats 1 (105) and 2 (107) go out together; 3 (35) and 0 play on
    assert sorted(state.hand_results[-1].eliminated) == [1, 2]
    assert state.standings() == [-1, -3, -4, -2]
    assert state.view(0).eliminated == (False, True, True, False)


# ---------------------------------------------------------------------------------------
# Fixed legal-action scenarios


def test_declare_needs_a_finished_turn_and_the_threshold():
    state = declare_state(["AC 2C", "4D 6D", "5H 7H"], [0, 0, 0], declare_max_count=3)
    assert L.DECLARE in state.legal_actions()
    state = declare_state(["AC 3C", "4D 6D", "5H 7H"], [0, 0, 0], declare_max_count=3)
    assert L.DECLARE not in state.legal_actions()  # count 4 > 3
    fresh = LeastCountState(LeastCountConfig(), seed=3)
    assert L.DECLARE not in fresh.legal_actions()
    anytime = LeastCountState(LeastCountConfig(declare_timing="start_of_any_turn"), seed=3)
    assert L.DECLARE in anytime.legal_actions()


def test_pick_from_the_open_set_after_a_discard():
    state = declare_state(["AC 2C 3D", "4D 6D 8S", "5H 7H 9H"], [0, 0, 0])
    state.apply(L.discard_action(state.hands[0], "AC 2C 3D"))  # a mixed-suit sequence
    open_card = state.open_set[0]
    assert set(state.legal_actions()) == {L.PICK_OPEN + open_card, L.PICK_CLOSED}
    state.apply(L.PICK_OPEN + open_card)
    assert state.hands[0] == [open_card] and state.known[0] == [open_card]
    assert state.open_set == L.C.parse("AC 2C 3D") and state.dead == []
    state.apply(L.discard_action(state.hands[1], "8S"))
    state.apply(L.PICK_CLOSED)
    assert state.dead == L.C.parse("AC 2C 3D") and state.open_set == L.C.parse("8S")


def test_a_round_result_has_no_cut_card_unless_given():
    """``RoundResult.cut_card`` is -1 (none) by default: 0 would be the ace of clubs."""
    result = L.RoundResult("timeout")
    assert result.cut_card == -1 and result.declarer == -1 and not result.truncated


def test_default_discard_patterns_are_the_spec_s():
    """least_count.md L1 with the default options: sequences of exactly 3 or 5, any suits;
    ``DiscardRules()`` (for ``legal_discards`` called directly) has the same defaults."""
    rules = L.DiscardRules.of(LeastCountConfig())
    assert L.DiscardRules() == rules
    for cards, legal in (("6C 7D 8H 9S TC", True), ("5C 6D 7H 8S", False), ("2C 3D 4H", True)):
        hand = sorted(L.C.parse(cards))
        full = (1 << len(hand)) - 1
        assert (full in L.legal_discards(hand, rules)) == legal, cards


def test_a_clone_plays_on_without_touching_the_original():
    state = declare_state(["AC 2C 3D", "4D 6D 8S", "5H 7H 9H"], [0, 0, 0])
    state.apply(L.discard_action(state.hands[0], "AC 2C 3D"))
    before = state.to_dict()
    clone = state.clone()
    clone.apply(L.PICK_OPEN + clone.open_set[0])
    assert state.to_dict() == before and state.known == [[], [], []]


@pytest.mark.parametrize("dealer", range(4))
def test_describe_names_the_cards_of_a_discard_for_every_seat(dealer):
    """``describe`` adds the cards a discard takes from the mover's hand, seat 0 included."""
    state = LeastCountState(LeastCountConfig(num_players=4), seed=8, dealer=dealer)
    hand = state.hands[state.current_player]
    assert state.current_player == (dealer + 1) % 4
    assert state.describe(L.DISCARD) == f"{L.action_to_str(L.DISCARD)} = {L.C.format(hand[:1])}"
    assert state.describe(L.PICK_CLOSED) == L.action_to_str(L.PICK_CLOSED)


def test_a_hand_episode_after_recorded_rounds_scores_its_own_round():
    """A one-round episode read from a dict that records earlier rounds (a match's third
    round played as a hand) scores and returns the round it plays, the last recorded."""
    rng = random.Random(0)
    match = LeastCountState(LeastCountConfig(num_players=3, episode="match"), seed=1)
    while len(match.hand_results) < 2:
        match.apply(rng.choice(match.legal_actions()))
    data = match.to_dict()
    data["options"]["episode"] = "hand"
    state = LeastCountState.from_dict(data)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    first, last = state.hand_results[0].points, state.hand_results[-1].points
    assert len(state.hand_results) == 3 and first != last
    assert state.scores() == [-x for x in last]
    mean = sum(last) / 3
    assert state.returns() == [mean - x for x in last]
