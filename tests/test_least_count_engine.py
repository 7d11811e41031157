"""The Least Count engine: its fast legal discards (``fast.fast_legal_discards``) against the
brute-force discard classifier of tests/least_count_oracle.py (every subset of random
hands, jokers and two decks included, and every turn start of random games) and against
the readable rule ``rules.legal_discards`` (in test_least_count_rules.py); properties over
random games (hypothesis): each turn discards at least one card and picks
exactly one, hands never grow, every round scored and totalled by the rules, zero-sum
returns, exact replays and determinizations that keep the player's view; states sampled
from a player's view (``sample_from_view``); clones, descriptions and the seeded deal.

Fast versions run in CI; the ``slow`` ones (``pytest -m slow``) check many more hands and games.
"""

from __future__ import annotations

import copy
import hashlib
import pickle
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import least_count_oracle as oracle
from rummy_envs import cards as C
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import DiscardRules, LeastCountConfig, LeastCountState, Phase
from rummy_envs.games.least_count.fast import fast_legal_discards
from test_least_count_env import check_state, patient
from test_least_count_rules import DECKS, declare_state

slow = pytest.mark.slow

# Rule families the discards depend on (sequence lengths, same suit, threes, two pairs).
DISCARD_RULES = {
    "default": DiscardRules(),
    "same_suit": DiscardRules(sequence_same_suit=True),
    "mainstream": DiscardRules(sequence_lengths=(3, 4, 5, 6, 7), sequence_same_suit=True, allow_three_of_a_kind=True),
    "permissive": DiscardRules(sequence_lengths=(3, 4), allow_three_of_a_kind=True, allow_two_different_pairs=True),
    "two_pairs": DiscardRules(allow_two_different_pairs=True),
}


def oracle_rules(rules: DiscardRules) -> dict:
    return {"lengths": rules.sequence_lengths, "same_suit": rules.sequence_same_suit,
            "triples": rules.allow_three_of_a_kind, "two_pairs": rules.allow_two_different_pairs}


def random_hand(deck: list[int], rng: random.Random) -> list[int]:
    """A sorted hand of 1-7 cards: uniform, or drawn from a window of neighbouring ranks in
    some suits (plus the jokers), so that pairs, fours, sequences and flushes are common."""
    size = rng.randint(1, L.MAX_HAND)
    if rng.random() < 0.3:
        return sorted(rng.sample(deck, size))
    low = rng.randrange(13)
    ranks = {(low + k) % 13 for k in range(rng.randint(1, 7))}
    suits = set(rng.sample(range(4), rng.choice((1, 1, 2, 4))))
    jokers = rng.random() < 0.3
    pool = [c for c in deck if (c == L.JOKER and jokers) or (c < L.JOKER and c % 13 in ranks and c // 13 in suits)]
    return sorted(rng.sample(pool, min(size, len(pool))))


def check_hands(rules: DiscardRules, deck: list[int], hands: int, seed: int) -> Counter:
    rng = random.Random(seed)
    seen: Counter = Counter()
    for _ in range(hands):
        hand = random_hand(deck, rng)
        got = set(fast_legal_discards(hand, rules))
        expected = oracle.legal_subsets(hand, **oracle_rules(rules))
        extra, missing = (sorted(C.format(L.subset_cards(hand, L.DISCARD - 1 + m)) for m in masks)
                          for masks in (got - expected, expected - got))
        assert got == expected, f"{C.format(hand)}: engine extra {extra}, missing {missing}"
        for mask in got:
            seen[mask.bit_count()] += 1
        seen["twins"] += len(set(hand)) < len(hand)
    return seen


@pytest.mark.parametrize("deck_name", list(DECKS))
@pytest.mark.parametrize("name", list(DISCARD_RULES))
def test_discards_equal_the_brute_force_classifier(name, deck_name):
    seen = check_hands(DISCARD_RULES[name], DECKS[deck_name], hands=150, seed=len(name) + len(deck_name))
    assert seen[2] and seen[3] and seen[5], seen
    if deck_name == "two_decks_jokers":
        assert seen["twins"] > 10


@slow
@pytest.mark.parametrize("deck_name", list(DECKS))
@pytest.mark.parametrize("name", list(DISCARD_RULES))
def test_discards_equal_the_brute_force_classifier_slow(name, deck_name):
    check_hands(DISCARD_RULES[name], DECKS[deck_name], hands=5000, seed=99 + len(name))


def cards_strategy(deck: list[int]) -> st.SearchStrategy[list[int]]:
    """Sorted hands of 1-7 cards of ``deck`` (its copies bound each id)."""
    return st.lists(st.integers(0, len(deck) - 1), min_size=1, max_size=L.MAX_HAND, unique=True).map(
        lambda picks: sorted(deck[i] for i in picks))


@settings(max_examples=150, deadline=None)
@given(hand=cards_strategy(DECKS["two_decks_jokers"]), name=st.sampled_from(list(DISCARD_RULES)))
def test_discards_property_against_the_classifier(hand, name):
    rules = DISCARD_RULES[name]
    legal = fast_legal_discards(hand, rules)
    assert set(legal) == oracle.legal_subsets(hand, **oracle_rules(rules))
    assert legal == sorted(set(legal)) and all(0 < m < 1 << len(hand) for m in legal)
    for mask in legal:  # one action per set of cards, and discard_action finds it
        cards = L.subset_cards(hand, L.DISCARD - 1 + mask)
        assert L.discard_action(hand, cards) == L.DISCARD - 1 + mask


# ---------------------------------------------------------------------------------------
# States sampled from a player's view


def random_points(options: dict, games: int, seed: int, per_game: int = 6) -> list[LeastCountState]:
    """Clones of up to ``per_game`` random points of each of ``games`` random games
    (``patient`` play), and the end of each."""
    rng = random.Random(seed)
    points = []
    for game in range(games):
        state = LeastCountState(LeastCountConfig(**options), seed + game)
        taken = 0
        while not state.is_terminal():
            if taken < per_game and rng.random() < 0.1:
                points.append(state.clone())
                taken += 1
            state.apply(patient(state, rng))
        points.append(state)
    return points


SAMPLED_OPTIONS = {
    "default": {},
    "match": {"num_players": 3, "episode": "match", "elimination_score": 30, "initial_open_card": False},
    "first_elimination": {"episode": "match", "match_end": "first_elimination", "elimination_score": 25},
    "jokers_cut_two_decks": {"num_players": 7, "num_printed_jokers": 2, "cut_joker": True, "hand_size": 7},
    "caps": {"num_players": 2, "episode": "match", "max_turns_per_round": 8, "max_rounds": 2},
}


@pytest.mark.parametrize("name", list(SAMPLED_OPTIONS))
def test_a_state_sampled_from_a_view_shows_the_same_view_and_plays_on(name):
    """At random points of random play, for every seat: the sampled state shows that seat
    the same view, holds every card of the game once, offers the same actions when that
    seat is to move (another mover's discards depend on its hidden hand) and plays on to
    the end."""
    rng = random.Random(7)
    for state in random_points(SAMPLED_OPTIONS[name], games=3, seed=len(name)):
        for p in range(state.n):
            view = state.player_view(p)
            sampled = LeastCountState.sample_from_view(view, rng)
            check_state(sampled)
            assert sampled.player_view(p) == view
            if p == state.current_player:
                assert sampled.legal_actions() == state.legal_actions()
            assert sampled.config == state.config and sampled.seed == 0 and sampled.history == []
            while not sampled.is_terminal():
                sampled.apply(rng.choice(sampled.legal_actions()))
                check_state(sampled)


def hidden_places(state: LeastCountState, observer: int) -> Counter:
    """(card, place) of every card hidden from ``observer``: the seat holding it, or -1 for the
    closed deck (copies counted)."""
    places: Counter = Counter((card, -1) for card in state.stock)
    for q in range(state.n):
        if q != observer:
            places.update((card, q) for card in state.hidden_cards(q))
    return places


@pytest.mark.parametrize("options, steps", [({"num_players": 3}, 9), ({"num_players": 4, "num_decks": 2}, 14)])
def test_sampling_from_a_view_deals_the_hidden_cards_as_determinizations_do(options, steps):
    """Over many samples, each hidden card lands in each hidden place (another hand or the
    closed deck) as often from ``sample_from_view`` as from ``sample_determinization``."""
    rng = random.Random(11)
    state = LeastCountState(LeastCountConfig(**options), seed=4)
    for _ in range(steps):
        state.apply(patient(state, rng))
    observer, samples = state.current_player, 2000
    assert any(state.known[q] for q in range(state.n) if q != observer)  # known cards stay put
    view = state.player_view(observer)
    from_view, redealt = Counter(), Counter()
    for _ in range(samples):
        from_view += hidden_places(LeastCountState.sample_from_view(view, rng), observer)
        redealt += hidden_places(state.sample_determinization(observer, rng), observer)
    assert set(from_view) == set(redealt)
    worst = max(abs(from_view[key] - redealt[key]) / samples for key in redealt)
    assert worst < 0.07, worst


# Game configurations of the turn-level checks.
GAME_OPTIONS = {
    "default": {},
    "mainstream": {"hand_size": 7, "sequence_same_suit": True, "allow_three_of_a_kind": True, "declare_max_count": 10},
    "jokers_two_decks": {"num_players": 8, "num_printed_jokers": 2, "cut_joker": True,
                         "allow_two_different_pairs": True},
    "match": {"episode": "match", "elimination_score": 40, "tie_declaration_valid": True, "num_players": 3},
}


def test_every_turn_start_of_random_games_against_the_classifier():
    checked = 0
    for name, options in GAME_OPTIONS.items():
        config = LeastCountConfig(**options)
        rules = DiscardRules.of(config)
        rng = random.Random(len(name))
        for seed in range(4):
            state = LeastCountState(config, seed)
            while not state.is_terminal():
                if state.phase == Phase.TURN_START:
                    hand = state.hands[state.current_player]
                    expected = [L.DISCARD - 1 + m for m in sorted(oracle.legal_subsets(hand, **oracle_rules(rules)))]
                    declare = [L.DECLARE] if state.may_declare(state.current_player) else []
                    assert state.legal_actions() == declare + expected
                    checked += 1
                state.apply(patient(state, rng))
    assert checked > 200


def play_game(config: LeastCountConfig, seed: int, rng: random.Random) -> LeastCountState:
    """A random game checking every turn: one discard of at least one card, one pick, hands
    never growing, each round's totals the sum of its points, nobody eliminated acting."""
    state = LeastCountState(config, seed)
    while not state.is_terminal():
        p, rounds = state.current_player, len(state.hand_results)
        before = len(state.hands[p])
        action = patient(state, rng)
        state.apply(action)
        check_state(state)
        if action == L.DECLARE:
            result = state.hand_results[-1]
            assert len(state.hand_results) == rounds + 1 and result.kind.endswith("declaration")
            assert all(x >= 0 for x in result.points) and result.totals == state.totals
            continue
        assert state.phase == Phase.PICK and state.current_player == p
        assert 1 <= len(state.pending) == before - len(state.hands[p])
        state.apply(patient(state, rng))
        check_state(state)
        if len(state.hand_results) == rounds:
            assert len(state.hands[p]) == before - len(state.open_set) + 1 <= before
        else:
            assert state.hand_results[-1].kind == "timeout" and state.hand_results[-1].truncated
    totals = [sum(r.points[q] for r in state.hand_results) for q in range(state.n)]
    if config.episode == "match":
        assert state.totals == totals
    assert abs(sum(state.returns())) < 1e-9
    return state


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), name=st.sampled_from(list(GAME_OPTIONS)), players=st.sampled_from([2, 5, 10]))
def test_random_games_keep_the_rules(seed, name, players):
    options = {"num_players": players, **GAME_OPTIONS[name]}
    config = LeastCountConfig(**options)
    state = play_game(config, seed, random.Random(seed))
    assert L.replay(config, seed, state.history).to_dict() == state.to_dict()
    if config.episode == "match" and not state.truncated:
        assert len(state.winners) == 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(0, 60), players=st.sampled_from([2, 4, 10]))
def test_determinizations_keep_the_view_and_redeal_only_hidden_cards(seed, steps, players):
    rng = random.Random(seed)
    state = LeastCountState(LeastCountConfig(num_players=players, num_printed_jokers=1), seed)
    for _ in range(steps):
        if state.is_terminal():
            return
        state.apply(patient(state, rng))
    observer = rng.randrange(players)
    det = state.sample_determinization(observer, rng)
    check_state(det)
    assert det.player_view(observer) == state.player_view(observer)
    for q in range(players):
        assert not Counter(state.known[q]) - Counter(det.hands[q])
    def hidden(s: LeastCountState) -> Counter:
        return sum((Counter(s.hidden_cards(q)) for q in range(players) if q != observer), Counter(s.stock))

    assert hidden(det) == hidden(state)


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_a_finished_games_determinization_keeps_the_hands_its_showdown_showed(episode):
    """At the end every hand is shown, so a determinization only reshuffles the closed deck,
    and it is a state its state dicts accept."""
    for seed in range(4):
        config = LeastCountConfig(num_players=3, episode=episode, elimination_score=30)
        state = play_game(config, seed, random.Random(seed))
        det = state.sample_determinization(seed % 3, random.Random(seed))
        assert det.hands == state.hands and Counter(det.stock) == Counter(state.stock)
        assert LeastCountState.from_dict(det.to_dict()).to_dict() == det.to_dict()


@slow
@pytest.mark.parametrize("name", list(GAME_OPTIONS))
def test_random_games_keep_the_rules_slow(name):
    rng = random.Random(1)
    for players in (2, 4, 7, 10):
        config = LeastCountConfig(**{"num_players": players, **GAME_OPTIONS[name]})
        for seed in range(150):
            play_game(config, seed, rng)


def test_copies_and_pickles_of_a_state_leave_the_discard_memo_behind():
    """The rules remember the legal discards of every hand shape met; a deep copy of a state
    shares them and a pickle carries only the options, so neither grows with the memo."""
    state = LeastCountState(LeastCountConfig(), seed=2)
    rng = random.Random(2)
    for _ in range(400):
        hand = sorted(rng.sample(range(52), 7))  # seven cards: two pairs and threes, which take the memo
        fast_legal_discards(hand, state.rules)
    assert len(state.rules.sets_by_shape) > 100
    assert copy.deepcopy(state).rules is state.rules
    restored = pickle.loads(pickle.dumps(state))
    assert restored.rules == state.rules and "sets_by_shape" not in vars(restored.rules)
    assert len(pickle.dumps(state)) < 4000
    assert restored.legal_actions() == state.legal_actions()


def reference_keyed_order(items: list, key: str) -> list:
    """``cards.keyed_order`` written out in plain Python: item i's word is bytes 8i..8i+7 of
    SHAKE-128 of the key, read little-endian; items go in order of (word, i)."""
    digest = hashlib.shake_128(key.encode()).digest(8 * len(items))
    words = [int.from_bytes(digest[8 * i:8 * i + 8], "little") for i in range(len(items))]
    return [items[i] for i in sorted(range(len(items)), key=lambda i: (words[i], i))]


def test_keyed_order_is_the_documented_sort_and_fixed_across_versions():
    rng = random.Random(3)
    for length in [0, 1, 2, 52, 53, 104, 108] + [rng.randrange(120) for _ in range(30)]:
        items = [rng.randrange(53) for _ in range(length)]
        key = f"k:{rng.randrange(1 << 40)}"
        assert C.keyed_order(items, key) == reference_keyed_order(items, key), length
        assert sorted(C.keyed_order(items, key)) == sorted(items)
    # A deal must never change under a seed: these are pinned.
    assert C.keyed_order(list(range(10)), "least_count:0:0") == reference_keyed_order(list(range(10)), "least_count:0:0")
    assert C.keyed_order(list(range(10)), "least_count:0:0") == [5, 4, 9, 7, 0, 8, 1, 6, 2, 3]


def test_keyed_order_puts_every_order_equally_often():
    """24,000 keys over the 24 orders of 4 items: each order about 1,000 times (a chi-square
    of 23 degrees of freedom; 60 is far beyond its 99.99% point, 57.7... at 1e-4)."""
    counts = Counter(tuple(C.keyed_order("abcd", f"u:{k}")) for k in range(24_000))
    assert len(counts) == 24
    chi2 = sum((c - 1000) ** 2 / 1000 for c in counts.values())
    assert chi2 < 60, chi2


def test_a_seed_deals_the_keyed_order_of_its_round():
    for players, seed in [(4, 0), (4, 17), (10, 5), (2, 99)]:
        config = LeastCountConfig(num_players=players)
        dealer = L.first_dealer(seed, players)
        deck = reference_keyed_order(config.full_deck(), f"least_count:{seed}:0")
        state = LeastCountState(config, seed)
        seats = [(dealer + k) % players for k in range(1, players + 1)]
        dealt = players * config.hand_size
        assert state.dealer == dealer
        assert state.hands == [sorted(deck[seats.index(q):dealt:players]) for q in range(players)]
        assert state.open_set == [deck[dealt]] and state.stock == deck[dealt + 1:][::-1]
    assert len({L.first_dealer(seed, 4) for seed in range(40)}) == 4
    # The deck does not depend on the dealer: a given dealer gets the seed's deck.
    assert LeastCountState(LeastCountConfig(), 7, dealer=2).stock == LeastCountState(LeastCountConfig(), 7).stock


def test_action_names():
    assert L.NUM_ACTIONS == 182 and (L.DECLARE, L.DISCARD, L.PICK_OPEN, L.PICK_CLOSED) == (0, 1, 128, 181)
    assert L.action_to_str(L.DISCARD - 1 + 0b1011) == "DISCARD(0,1,3)"
    assert L.str_to_action("discard(3, 1,0)") == L.DISCARD - 1 + 0b1011
    assert L.action_to_str(L.PICK_OPEN + 52) == "PICK_OPEN(JK)"
    assert L.str_to_action("PICK_OPEN(10h)") == L.PICK_OPEN + 35
    for bad in ("DISCARD(0,0)", "DISCARD(7)", "DISCARD(-1)", "DISCARD()", "PICK_OPEN(1Z)", "DECLARE()", "SHOW"):
        with pytest.raises(ValueError):
            L.str_to_action(bad)
    hand = C.parse("7C 7H 7H")
    assert L.discard_action(hand, "7H 7C") == L.DISCARD - 1 + 0b011
    with pytest.raises(ValueError, match="does not hold"):
        L.discard_action(hand, "7H 7H 7H")


def test_state_describes_discards_by_their_cards():
    state = LeastCountState(LeastCountConfig(), seed=1)
    hand = state.hands[state.current_player]
    assert state.describe(L.DISCARD) == f"DISCARD(0) = {C.format_card(hand[0])}"
    assert state.describe(L.PICK_CLOSED) == "PICK_CLOSED"


def test_a_round_result_has_no_cut_card_unless_given():
    """``RoundResult.cut_card`` is -1 (none) by default: 0 would be the ace of clubs."""
    result = L.RoundResult("timeout")
    assert result.cut_card == -1 and result.declarer == -1 and not result.truncated


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
    assert state.describe(L.DISCARD) == f"{L.action_to_str(L.DISCARD)} = {C.format(hand[:1])}"
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
