"""The gin solvers (deadwood, arrangements, knock discards, layoffs) agree with the
brute-force oracle in ``tests/gin_rummy_oracle.py`` and with the worked examples G1-G4
(docs/gin_rummy.md#worked-examples); the engine's ``auto_best`` knocks are the oracle's
best over every arrangement of the knocker's hand, each met by the defender's best reply.

Fast versions run in CI; the ``slow`` versions (``pytest -m slow``) try thousands of hands.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.cards import format as format_cards
from rummy_envs.cards import parse
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import best_arrangement, best_layoffs, deadwood, knock_discards

from gin_rummy_oracle import (
    can_lay_off,
    hand_value,
    is_meld,
    oracle_best_knock,
    oracle_deadwood,
    oracle_defender_deadwood,
    oracle_knock_discards,
    oracle_stakes,
)
from test_gin_rummy_rules import make_deck

KNOCK_LIMITS = (0, 1, 7, 10)
SLOW_EXAMPLES = 3000

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST_FEW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(
    max_examples=SLOW_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# The slow tests run only when asked for with ``-m slow`` (or any -m expression naming
# "slow"); a plain ``pytest`` run skips them even if no marker filter is configured.
slow = pytest.mark.slow
only_if_asked = pytest.mark.skipif(
    "'slow' not in (config.getoption('markexpr') or '')", reason="slow: run with pytest -m slow"
)


def P(text: str) -> list[int]:
    return parse(text)


def show(cards) -> str:
    return format_cards(list(cards))


# ---------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------


def random_hand(min_size: int, max_size: int | None = None, exclude=()):
    """Distinct cards drawn uniformly (rarely holds melds)."""
    max_size = min_size if max_size is None else max_size
    pool = [c for c in range(52) if c not in set(exclude)]
    return st.lists(st.sampled_from(pool), unique=True, min_size=min_size, max_size=max_size)


@st.composite
def random_meld(draw, max_run: int) -> list[int]:
    """One run (3..max_run cards of a suit) or one set (3 or 4 cards of a rank)."""
    if draw(st.booleans()):
        suit = draw(st.integers(0, 3))
        length = draw(st.integers(3, max_run))
        start = draw(st.integers(0, 13 - length))
        return [suit * 13 + r for r in range(start, start + length)]
    rank = draw(st.integers(0, 12))
    size = draw(st.integers(3, 4))
    return [s * 13 + rank for s in draw(st.permutations(range(4)))[:size]]


@st.composite
def meld_pieces(draw, max_melds: int = 4, exclude=()):
    """Cards of a few random runs (length 3..7) and sets (3 or 4 cards), possibly
    overlapping each other (so the solver must choose), in draw order."""
    excluded = set(exclude)
    cards: list[int] = []
    for _ in range(draw(st.integers(1, max_melds))):
        piece = draw(random_meld(max_run=7))
        cards.extend(c for c in piece if c not in excluded and c not in cards)
    return cards


@st.composite
def meld_rich_hand(draw, min_size: int, max_size: int | None = None, exclude=()):
    """A hand built from a few random melds, then padded with random cards or trimmed."""
    max_size = min_size if max_size is None else max_size
    size = draw(st.integers(min_size, max_size))
    pool = draw(meld_pieces(exclude=exclude))
    if len(pool) > size:
        removed = draw(st.sets(st.sampled_from(pool), min_size=len(pool) - size, max_size=len(pool) - size))
        pool = [c for c in pool if c not in removed]
    elif len(pool) < size:
        rest = [c for c in range(52) if c not in set(pool) and c not in set(exclude)]
        pool = pool + draw(st.lists(st.sampled_from(rest), unique=True, min_size=size - len(pool), max_size=size - len(pool)))
    assert len(pool) == size and len(set(pool)) == size
    return pool


def any_hand(min_size: int, max_size: int | None = None):
    return st.one_of(random_hand(min_size, max_size), meld_rich_hand(min_size, max_size))


@st.composite
def layoff_case_from_hands(draw, meld_rich: bool):
    """Knocker: 10 distinct cards, melds = library best_arrangement (skipped if none).
    Defender: 10 other cards."""
    knocker = draw(meld_rich_hand(10) if meld_rich else random_hand(10))
    melds, _ = best_arrangement(knocker)
    assume(melds)
    defender = draw(meld_rich_hand(10, exclude=knocker) if meld_rich else random_hand(10, exclude=knocker))
    return defender, [list(m) for m in melds]


@st.composite
def layoff_case_adjacent(draw):
    """Knocker melds drawn directly (disjoint runs and sets, at most 10 cards); the
    defender holds cards next to the knocker's runs (chains), 4th cards of its sets,
    melds of its own that compete with those layoffs, and random padding."""
    used: set[int] = set()
    knocker_melds: list[list[int]] = []
    for _ in range(draw(st.integers(1, 3))):
        meld = draw(random_meld(max_run=5))
        if used & set(meld) or len(used) + len(meld) > 10:
            continue
        used |= set(meld)
        knocker_melds.append(meld)
    assume(knocker_melds)

    candidates: list[int] = []
    for meld in knocker_melds:
        ranks = sorted(c % 13 for c in meld)
        if len({c % 13 for c in meld}) == 1:  # set: the missing suits
            candidates.extend(s * 13 + ranks[0] for s in range(4))
        else:  # run: up to 3 cards beyond each end
            suit = meld[0] // 13
            for r in list(range(ranks[0] - 3, ranks[0])) + list(range(ranks[-1] + 1, ranks[-1] + 4)):
                if 0 <= r < 13:
                    candidates.append(suit * 13 + r)
    candidates = [c for c in dict.fromkeys(candidates) if c not in used]
    chosen = draw(st.lists(st.sampled_from(candidates), unique=True, max_size=min(len(candidates), 8))) if candidates else []
    # Own melds (may reuse chosen cards' neighbours, competing with the layoffs).
    own = [c for c in draw(meld_pieces(max_melds=2, exclude=used)) if c not in chosen]
    own = own[: draw(st.integers(0, max(0, 10 - len(chosen))))]
    defender = chosen + own
    rest = [c for c in range(52) if c not in used and c not in set(defender)]
    defender += draw(st.lists(st.sampled_from(rest), unique=True, min_size=10 - len(defender), max_size=10 - len(defender)))
    assert len(defender) == 10 and len(set(defender)) == 10 and not used & set(defender)
    return defender, knocker_melds


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def check_deadwood(hand: list[int]) -> None:
    expected = oracle_deadwood(hand)
    assert deadwood(hand) == expected, f"deadwood({show(hand)})"
    assert deadwood(show(hand)) == expected, f"deadwood({show(hand)!r}) as a string"


def check_melds_valid(hand: list[int], melds) -> set[int]:
    """Each meld a set or run (any length), melds disjoint, all cards from the hand."""
    melded: set[int] = set()
    for meld in melds:
        meld = list(meld)
        assert is_meld(meld), f"{show(meld)} is not a meld (hand {show(hand)})"
        assert set(meld) <= set(hand), f"{show(meld)} is not in hand {show(hand)}"
        assert not melded & set(meld), f"{show(meld)} overlaps another meld (hand {show(hand)})"
        melded |= set(meld)
    return melded


def check_arrangement(hand: list[int]) -> None:
    melds, dw = best_arrangement(hand)
    melded = check_melds_valid(hand, melds)
    assert dw == hand_value(hand) - hand_value(melded), f"best_arrangement({show(hand)}) miscounts"
    assert dw == oracle_deadwood(hand), f"best_arrangement({show(hand)}) is not optimal"


def check_knock_discards(hand: list[int]) -> None:
    assert len(hand) == 11
    for limit in KNOCK_LIMITS:
        got = knock_discards(hand, knock_limit=limit)
        assert list(got) == oracle_knock_discards(hand, limit), f"knock_discards({show(hand)}, {limit})"
    assert list(knock_discards(hand)) == oracle_knock_discards(hand, 10), "default knock limit is 10"


def check_layoffs(defender: list[int], knocker_melds: list[list[int]]) -> None:
    expected = oracle_defender_deadwood(defender, knocker_melds)
    dw, own_melds, layoffs = best_layoffs(defender, knocker_melds)
    ctx = f"best_layoffs({show(defender)}, {[show(m) for m in knocker_melds]})"
    assert dw == expected, f"{ctx}: deadwood {dw}, oracle {expected}"
    melded = check_melds_valid(defender, own_melds)
    table = [set(m) for m in knocker_melds]
    laid: list[int] = []
    for card, index in layoffs:
        assert 0 <= index < len(table), f"{ctx}: bad meld index {index}"
        assert card in defender and card not in melded and card not in laid, f"{ctx}: cannot lay off {show([card])}"
        assert can_lay_off(card, table[index]), f"{ctx}: {show([card])} does not fit {show(sorted(table[index]))}"
        table[index].add(card)
        laid.append(card)
    remaining = [c for c in defender if c not in melded and c not in laid]
    assert sorted(remaining + laid + sorted(melded)) == sorted(defender)
    assert hand_value(remaining) == dw, f"{ctx}: remaining {show(remaining)} is not worth {dw}"


# ---------------------------------------------------------------------------------------
# Worked examples (docs/gin_rummy.md#worked-examples) and edge cases
# ---------------------------------------------------------------------------------------

G3_DEFENDER = "5H 6H 9H TC TH TD AD AC 2C 7S"
G3_KNOCKER_MELDS = ["2H 3H 4H", "9S 9C 9D", "JD QD KD"]
G4_DEFENDER = "4S KH KS KD 6D 6H 6S 2D 3D AH"
G4_KNOCKER_MELDS = ["AS 2S 3S", "4C 5C 6C", "8H 8D 8C"]


@pytest.mark.parametrize(
    "hand, expected",
    [
        ("AC 2C 3C 4D 5D 6D 7H 8H 9H TS", 10),  # G1
        ("7S 7H 7D 8D 9D KC QC 2S 3H 4C", 43),  # G2
        ("QC KC AC", 21),  # G2: Q-K-A is not a run
        ("KC AC 2C", 13),  # K-A-2 is not a run
        ("AC 2C 3C", 0),  # ace low
        ("2H 3H 4H 9S 9C 9D JD QD KD AS", 1),  # G3 knocker
        ("AS 2S 3S 4C 5C 6C 8H 8D 8C 7D", 7),  # G4 knocker
        ("6C 7C 8C QH QD 2H 3D 8S 9H KH", 52),  # G5 defender
        ("AC 2C 3C 4C 5C 6C 7C 8C 9C TC", 0),  # one run of 10
        ("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", 0),  # a whole suit
        ("7C 7D 7H 7S 8C 9C", 0),  # [7D 7H 7S] + [7C 8C 9C]: a 3-subset of the 4-set
        ("7C 7D 7H 7S 8C", 8),  # the 4-set beats the 3-set + nothing
        ("", 0),
        ("KS", 10),
    ],
)
def test_fixed_deadwood(hand, expected):
    assert oracle_deadwood(P(hand)) == expected
    assert deadwood(P(hand)) == expected
    assert deadwood(hand) == expected
    check_arrangement(P(hand))


def test_empty_hand():
    assert deadwood([]) == 0
    melds, dw = best_arrangement([])
    assert list(melds) == [] and dw == 0
    assert oracle_deadwood([]) == 0


def test_g1_melds():
    melds, dw = best_arrangement(P("AC 2C 3C 4D 5D 6D 7H 8H 9H TS"))
    assert dw == 10
    assert sorted(sorted(m) for m in melds) == sorted(sorted(P(m)) for m in ["AC 2C 3C", "4D 5D 6D", "7H 8H 9H"])


def test_g2_uses_the_run():
    melds, dw = best_arrangement(P("7S 7H 7D 8D 9D KC QC 2S 3H 4C"))
    assert dw == 43
    assert [sorted(m) for m in melds] == [sorted(P("7D 8D 9D"))]


def test_long_run_is_one_valid_meld_or_pieces():
    hand = P("3H 4H 5H 6H 7H 8H 9H")
    melds, dw = best_arrangement(hand)
    assert dw == 0
    check_melds_valid(hand, melds)


def test_g1_knock_discards():
    hand = P("AC 2C 3C 4D 5D 6D 7H 8H 9H TS KD")
    assert oracle_knock_discards(hand, 10) == sorted(P("TS KD"))
    assert list(knock_discards(hand, knock_limit=10)) == sorted(P("TS KD"))
    assert list(knock_discards(hand, knock_limit=9)) == []
    assert oracle_knock_discards(hand, 9) == []
    check_knock_discards(hand)


def test_g3_chained_layoffs():
    defender = P(G3_DEFENDER)
    knocker_melds = [P(m) for m in G3_KNOCKER_MELDS]
    assert oracle_defender_deadwood(defender, knocker_melds) == 11
    dw, own, layoffs = best_layoffs(defender, knocker_melds)
    assert dw == 11
    assert [sorted(m) for m in own] == [sorted(P("TC TH TD"))]
    laid = [c for c, _ in layoffs]
    assert sorted(laid) == sorted(P("5H 6H 9H"))
    assert laid.index(P("5H")[0]) < laid.index(P("6H")[0])  # 6H only fits after 5H
    assert dict(layoffs) == {P("5H")[0]: 0, P("6H")[0]: 0, P("9H")[0]: 1}
    check_layoffs(defender, knocker_melds)
    # Without layoffs the defender has 31.
    assert oracle_deadwood(defender) == 31
    assert best_layoffs(defender, [])[0] == 31


def test_g4_undercut_layoff():
    defender = P(G4_DEFENDER)
    knocker_melds = [P(m) for m in G4_KNOCKER_MELDS]
    assert oracle_defender_deadwood(defender, knocker_melds) == 6
    dw, own, layoffs = best_layoffs(defender, knocker_melds)
    assert dw == 6
    assert sorted(sorted(m) for m in own) == sorted(sorted(P(m)) for m in ["KH KS KD", "6D 6H 6S"])
    assert list(layoffs) == [(P("4S")[0], 0)]
    check_layoffs(defender, knocker_melds)


def test_layoff_on_four_card_set_is_impossible():
    knocker_melds = [P("9S 9C 9D 9H")]
    defender = P("2C 3D 4H 5S 7C 8D TH JS QC KD")
    assert oracle_defender_deadwood(defender, knocker_melds) == hand_value(defender)
    check_layoffs(defender, knocker_melds)


def test_no_layoff_past_ace_or_king():
    # KH cannot extend A-2-3 of hearts (ace low only), nor AS extend Q-K of spades.
    knocker_melds = [P("AH 2H 3H"), P("JS QS KS")]
    defender = P("KH AS")
    assert oracle_defender_deadwood(defender, knocker_melds) == 11
    check_layoffs(defender, knocker_melds)


def test_layoff_both_ends_chain():
    knocker_melds = [P("5D 6D 7D")]
    defender = P("2D 3D 4D 8D 9D TD")
    # Either own melds (2-3-4, 8-9-T) or chained layoffs at both ends: 0 either way.
    assert oracle_defender_deadwood(defender, knocker_melds) == 0
    check_layoffs(defender, knocker_melds)
    defender = P("3D 4D 8D 9D KC")
    assert oracle_defender_deadwood(defender, knocker_melds) == 10
    check_layoffs(defender, knocker_melds)


# ---------------------------------------------------------------------------------------
# Properties against the oracle
# ---------------------------------------------------------------------------------------


@FAST
@given(random_hand(0, 13))
def test_deadwood_random_hands(hand):
    check_deadwood(hand)


@FAST
@given(meld_rich_hand(0, 13))
def test_deadwood_meld_rich_hands(hand):
    check_deadwood(hand)


@FAST
@given(any_hand(0, 13))
def test_best_arrangement(hand):
    check_arrangement(hand)


@FAST_FEW
@given(any_hand(11))
def test_knock_discards(hand):
    check_knock_discards(hand)


@FAST_FEW
@given(layoff_case_from_hands(meld_rich=False))
def test_best_layoffs_random_hands(case):
    check_layoffs(*case)


@FAST_FEW
@given(layoff_case_from_hands(meld_rich=True))
def test_best_layoffs_meld_rich_hands(case):
    check_layoffs(*case)


@FAST
@given(layoff_case_adjacent())
def test_best_layoffs_adjacent_cards(case):
    check_layoffs(*case)


# Slow versions: run with ``pytest -m slow``.


@slow
@only_if_asked
@SLOW
@given(random_hand(0, 13))
def test_deadwood_random_hands_slow(hand):
    check_deadwood(hand)


@slow
@only_if_asked
@SLOW
@given(meld_rich_hand(0, 13))
def test_deadwood_meld_rich_hands_slow(hand):
    check_deadwood(hand)


@slow
@only_if_asked
@SLOW
@given(any_hand(0, 13))
def test_best_arrangement_slow(hand):
    check_arrangement(hand)


@slow
@only_if_asked
@SLOW
@given(any_hand(11))
def test_knock_discards_slow(hand):
    check_knock_discards(hand)


@slow
@only_if_asked
@SLOW
@given(layoff_case_from_hands(meld_rich=False))
def test_best_layoffs_random_hands_slow(case):
    check_layoffs(*case)


@slow
@only_if_asked
@SLOW
@given(layoff_case_from_hands(meld_rich=True))
def test_best_layoffs_meld_rich_hands_slow(case):
    check_layoffs(*case)


@slow
@only_if_asked
@SLOW
@given(layoff_case_adjacent())
def test_best_layoffs_adjacent_cards_slow(case):
    check_layoffs(*case)


# ---------------------------------------------------------------------------------------
# The knocker's and defender's choices against the brute-force oracle
# ---------------------------------------------------------------------------------------


def knock_states(options: dict, games: int, seed: int) -> list[G.GinState]:
    """States just before a knock: the first DISCARD of each seeded game where one is legal."""
    found = []
    for game_seed in range(seed, seed + games):
        state, rng = G.GinState(G.GinConfig(**options), seed=game_seed), random.Random(game_seed)
        for _ in range(200):  # more moves than a hand has: a broken engine must not loop forever
            if state.is_terminal():
                break
            if any(G.KNOCK <= a < G.MELD for a in state.legal_actions()):
                found.append(state.clone())
                break
            legal = state.legal_actions()
            if state.phase == G.Phase.DISCARD:  # the discard keeping the least deadwood
                hand = state.hands[state.current_player]
                discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
                legal = [min(discards, key=lambda a: M.min_deadwood(hand ^ 1 << (a - G.DISCARD)))]
            state.apply(rng.choice(legal))
    return found


@pytest.mark.parametrize("options", [{}, {"variant": "oklahoma", "undercut_on_tie": False, "undercut_bonus": 10}],
                         ids=["standard", "oklahoma"])
def test_auto_best_knocks_match_the_oracle(options):
    """Every knock of the first knockable turn of seeded games: the knocker's net result is the
    oracle's best over every arrangement, and the defender's deadwood its best reply."""
    checked = 0
    for state in knock_states(options, games=14, seed=100):
        p = state.current_player
        for action in [a for a in state.legal_actions() if G.KNOCK <= a < G.MELD][:3]:
            after = state.clone()
            after.apply(action)
            result = after.hand_results[-1]
            knocker = C.from_mask(state.hands[p] & ~(1 << (action - G.KNOCK)))
            defender = C.from_mask(state.hands[1 - p])
            limit, multiplier = oracle_stakes(state.config, state.upcard)
            net = result.points[p] - result.points[1 - p]
            assert net == oracle_best_knock(state.config, knocker, defender, limit, False, multiplier)
            melds = result.knocker_melds
            assert all(is_meld(m) for m in melds)
            k = hand_value(knocker) - sum(hand_value(m) for m in melds)
            assert result.deadwood[p] == k <= limit
            expected_d = oracle_defender_deadwood(defender, melds) if k else oracle_deadwood(defender)
            assert result.deadwood[1 - p] == expected_d
            checked += 1
    assert checked >= 15


@pytest.mark.parametrize("knocker, defender, upcard, stock_top, expected", [
    # G3: melding the hearts lets 5H 6H go off (10 points); keeping them back scores 12
    ("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C", [12, 0]),
    # G4: an undercut either way; the arrangement losing least (by 1 + 25) is the one kept
    ("AS 2S 3S 4C 5C 6C 8H 8D 8C 7D", "4S KH KS KD 6D 6H 6S 2D 3D AH", "7S", "QC", [0, 26]),
    # G5: gin refuses layoffs
    ("AC 2C 3C 4C 5H 5S 5D 9S TS JS", "6C 7C 8C QH QD 2H 3D 8S 9H KH", "KC", "KD", [77, 0]),
    # late knocks against a low defender, where some arrangements win and some are undercut:
    # the knocker takes the best net result, not the most points changing hands
    ("AC 2C 3C 4C 9D 3H 9H AS 3S 9S", "5C AD 5D AH 4H 5H 2S 4S 5S 6S", "QD", "KD", [1, 0]),  # not 25 lost
    ("AC 2C 3C 4C 9C 9D 3H 9H 3S 9S", "5C AD 5D AH 4H 5H 2S 4S 5S 6S", "QD", "KD", [2, 0]),  # not 1, 27 lost
    ("AC 2C 3C 4C 9C 9D 4H 9H AS 9S", "5C AD 2D 5D AH 5H 2S 4S 5S 6S", "QD", "KD", [1, 0]),  # not 25 or 28 lost
    ("AC 2C 3C 4C 9C 9D 7H 9H AS 9S", "5C AD 2D 5D AH 5H 2S 4S 5S 6S", "QD", "KD", [0, 27]),  # undercut either way
])
def test_auto_best_fixed_knocks(knocker, defender, upcard, stock_top, expected):
    state = G.GinState(G.GinConfig(), seed=0, deck=make_deck(knocker, defender, upcard, stock_top), dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK", f"KNOCK({stock_top})"):
        state.apply(G.str_to_action(name))
    assert state.hand_results[-1].points == expected
    limit, _ = oracle_stakes(state.config, state.upcard)
    net = expected[0] - expected[1]
    assert net == oracle_best_knock(state.config, C.parse(knocker), C.parse(defender), limit, False, 1)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(M.MELDS), max_size=5), st.sets(st.integers(0, C.NUM_CARDS - 1), max_size=8))
def test_compiled_max_cover_is_the_plain_search(melds, extra):
    """``max_cover`` (compiled) gives the plain search's value on hands built from melds
    (overlapping ones included) and loose cards, up to the whole deck."""
    mask = C.to_mask(extra)
    for meld in melds:
        mask |= meld
    M.max_cover.cache_clear()
    assert M.max_cover(mask) == M.max_cover_by_search(mask)
