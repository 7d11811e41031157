"""Brute-force Gin Rummy oracle, written for clarity rather than speed.

It is deliberately independent of the library's meld code: it imports only
``rummy_envs.cards`` (card ids and parsing). Rules are those of docs/gin_rummy.md
(#cards-and-melds, #showdown, #scoring-a-hand and #oklahoma):

* card id = suit * 13 + rank, rank 0..12 = A..K, suits C, D, H, S;
* deadwood values A = 1, 2-10 face value, J/Q/K = 10;
* a set is 3 or 4 cards of one rank; a run is 3 or more cards of one suit with
  consecutive ranks, ace low only (A-2-3 is a run, Q-K-A is not);
* a layoff is a 4th card on a 3-card set or a card extending a run at either end, and
  layoffs chain;
* a showdown scores gin (bonus plus the defender's deadwood), a knock below the defender
  (the difference) or an undercut (the difference plus the bonus), times the Oklahoma
  multiplier; an Oklahoma upcard sets the knock limit by its rank.

Every function enumerates everything: all melds of the hand (every run length, every
3-subset of a 4-card set), then every collection of pairwise disjoint melds.
"""

from __future__ import annotations

from collections import deque
from itertools import combinations
from typing import Any

from rummy_envs.cards import parse

NUM_RANKS = 13
NUM_SUITS = 4


def card_rank(card: int) -> int:
    return card % NUM_RANKS


def card_suit(card: int) -> int:
    return card // NUM_RANKS


def card_value(card: int) -> int:
    """A = 1, 2..10 face value, J/Q/K = 10."""
    return min(card_rank(card) + 1, 10)


def hand_value(cards) -> int:
    return sum(card_value(c) for c in cards)


def _as_ids(cards) -> list[int]:
    ids = parse(cards) if isinstance(cards, str) else [int(c) for c in cards]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate cards in {ids}")
    for c in ids:
        if not 0 <= c < 52:
            raise ValueError(f"card id {c} is not a standard card")
    return ids


# ---------------------------------------------------------------------------------------
# Melds
# ---------------------------------------------------------------------------------------


def is_set(meld) -> bool:
    meld = list(meld)
    return len(meld) in (3, 4) and len(set(meld)) == len(meld) and len({card_rank(c) for c in meld}) == 1


def is_run(meld) -> bool:
    meld = list(meld)
    if len(meld) < 3 or len(set(meld)) != len(meld):
        return False
    if len({card_suit(c) for c in meld}) != 1:
        return False
    ranks = sorted(card_rank(c) for c in meld)
    return all(b == a + 1 for a, b in zip(ranks, ranks[1:]))


def is_meld(meld) -> bool:
    return is_set(meld) or is_run(meld)


def all_melds(cards) -> list[frozenset[int]]:
    """Every valid meld made only of cards in the hand (no duplicates)."""
    hand = set(_as_ids(cards))
    melds: set[frozenset[int]] = set()
    # Sets: every subset of size 3 or 4 of the cards of one rank.
    for r in range(NUM_RANKS):
        same_rank = sorted(c for c in hand if card_rank(c) == r)
        for size in (3, 4):
            for combo in combinations(same_rank, size):
                melds.add(frozenset(combo))
    # Runs: every window [lo, hi] of length >= 3 of one suit fully held.
    for s in range(NUM_SUITS):
        for lo in range(NUM_RANKS):
            for hi in range(lo + 2, NUM_RANKS):
                run = frozenset(s * NUM_RANKS + r for r in range(lo, hi + 1))
                if run <= hand:
                    melds.add(run)
    for m in melds:
        assert is_meld(m), m
    return sorted(melds, key=lambda m: sorted(m))


def all_arrangements(cards) -> list[list[frozenset[int]]]:
    """Every collection of pairwise disjoint melds of the hand (including the empty one)."""
    melds = all_melds(cards)
    out: list[list[frozenset[int]]] = []

    def extend(start: int, chosen: list[frozenset[int]], used: frozenset[int]) -> None:
        out.append(list(chosen))
        for i in range(start, len(melds)):
            if not (melds[i] & used):
                chosen.append(melds[i])
                extend(i + 1, chosen, used | melds[i])
                chosen.pop()

    extend(0, [], frozenset())
    return out


def oracle_deadwood(cards) -> int:
    """Smallest deadwood over every arrangement of the hand (any hand size)."""
    ids = _as_ids(cards)
    total = hand_value(ids)
    best = total
    for arrangement in all_arrangements(ids):
        melded = sum(hand_value(m) for m in arrangement)
        best = min(best, total - melded)
    return best


def oracle_knock_discards(cards11, knock_limit: int) -> list[int]:
    """Sorted cards c of an 11-card hand such that deadwood(hand - c) <= knock_limit."""
    ids = _as_ids(cards11)
    return sorted(c for c in ids if oracle_deadwood([x for x in ids if x != c]) <= knock_limit)


# ---------------------------------------------------------------------------------------
# Layoffs
# ---------------------------------------------------------------------------------------


def can_lay_off(card: int, meld_cards) -> bool:
    """Can ``card`` be laid off on the (current) meld: a 4th card on a 3-card set, or a
    card extending a run at either end."""
    meld_cards = set(meld_cards)
    if card in meld_cards:
        return False
    if is_set(meld_cards):
        return len(meld_cards) == 3 and card_rank(card) == card_rank(next(iter(meld_cards)))
    if is_run(meld_cards):
        suit = card_suit(next(iter(meld_cards)))
        ranks = [card_rank(c) for c in meld_cards]
        return card_suit(card) == suit and card_rank(card) in (min(ranks) - 1, max(ranks) + 1)
    raise ValueError(f"not a meld: {sorted(meld_cards)}")


def best_layoff_deadwood(remaining, knocker_melds) -> int:
    """Smallest value of ``remaining`` cards left after laying off any of them, in any
    order, onto the knocker's melds (BFS over states = tuple of current meld contents)."""
    remaining = list(remaining)
    start = tuple(frozenset(m) for m in knocker_melds)
    on_table = set().union(*start)
    seen = {start}
    queue = deque([start])
    best = hand_value(remaining)
    while queue:
        state = queue.popleft()
        laid = set().union(*state) - on_table
        best = min(best, hand_value([c for c in remaining if c not in laid]))
        for card in remaining:
            if card in laid:
                continue
            for i, meld in enumerate(state):
                if can_lay_off(card, meld):
                    new_state = state[:i] + (meld | {card},) + state[i + 1 :]
                    if new_state not in seen:
                        seen.add(new_state)
                        queue.append(new_state)
    return best


def oracle_defender_deadwood(defender, knocker_melds) -> int:
    """Defender's minimum deadwood over every choice of own disjoint melds plus layoffs
    (chained, any order) of the remaining cards onto the knocker's melds."""
    ids = _as_ids(defender)
    k_melds = [_as_ids(m) for m in knocker_melds]
    for m in k_melds:
        if not is_meld(m):
            raise ValueError(f"knocker meld {m} is not a meld")
        if set(m) & set(ids):
            raise ValueError("knocker and defender share cards")
    best = hand_value(ids)
    for arrangement in all_arrangements(ids):
        melded = set().union(*arrangement) if arrangement else set()
        remaining = [c for c in ids if c not in melded]
        best = min(best, best_layoff_deadwood(remaining, k_melds))
    return best


# ---------------------------------------------------------------------------------------
# Stakes and scores (``config`` is a GinConfig; only its option values are read)
# ---------------------------------------------------------------------------------------

SPADES = 3


def oracle_stakes(config: Any, upcard: int) -> tuple[int, int]:
    """(knock limit, multiplier) of a hand with this upcard."""
    if config.variant != "oklahoma":
        return config.knock_limit, 1
    rank = card_rank(upcard)
    if rank == 0:
        limit = 0 if config.oklahoma_ace_gin_only else 1
    else:
        limit = 10 if rank >= 9 else rank + 1
    doubled = config.oklahoma_spade_double and card_suit(upcard) == SPADES
    return limit, 2 if doubled else 1


def oracle_score(config: Any, k: int, d: int, big_gin: bool, multiplier: int) -> tuple[bool, int]:
    """(the knocker wins, points) of a showdown with deadwoods k and d."""
    if k == 0:
        return True, ((config.big_gin_bonus if big_gin else config.gin_bonus) + d) * multiplier
    if k < d or (k == d and not config.undercut_on_tie):
        return True, (d - k) * multiplier
    return False, (k - d + config.undercut_bonus) * multiplier


def oracle_best_knock(config: Any, knocker: list[int], defender: list[int], limit: int, big_gin: bool,
                      multiplier: int) -> int:
    """The knocker's best net result (points won, minus points lost) over every arrangement of
    its hand within the limit, each met by the defender's best reply."""
    best = None
    for arrangement in all_arrangements(knocker):
        k = hand_value(knocker) - sum(hand_value(m) for m in arrangement)
        if k > limit:
            continue
        d = oracle_defender_deadwood(defender, arrangement) if k else oracle_deadwood(defender)
        wins, points = oracle_score(config, k, d, big_gin, multiplier)
        net = points if wins else -points
        best = net if best is None else max(best, net)
    assert best is not None, "a legal knock has an arrangement within the limit"
    return best
