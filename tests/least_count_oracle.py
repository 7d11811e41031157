"""Independent oracles of Least Count's rules (docs/least_count.md#rules), written again from
the rules with no code of the engine but card parsing:

- ``legal_subsets``: the legal discards of a hand by brute force. It classifies every
  non-empty subset of a hand's positions from scratch (ranks, suits, consecutive positions
  with the ace at 0 or 13), then keeps one subset per multiset of cards, the one taking the
  first copies of an id (the engine's action for it).
- ``oracle_value``, ``oracle_round``, ``oracle_eliminated``: card values, a round's points
  and the seats a round eliminates.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

JOKER = 52


def is_legal_discard(cards: list[int], lengths: tuple[int, ...] = (3, 5), same_suit: bool = False,
                     triples: bool = False, two_pairs: bool = False) -> bool:
    """Whether ``cards`` (ids, copies repeated) may be discarded together."""
    size = len(cards)
    if size == 1:
        return True
    ranks = ["joker" if c == JOKER else c % 13 for c in cards]
    if len(set(ranks)) == 1 and (size in (2, 4) or (size == 3 and triples)):
        return True
    if two_pairs and size == 4 and len(set(ranks)) == 2 and all(ranks.count(r) == 2 for r in ranks):
        return True
    if JOKER in cards or len(set(cards)) != size:
        return False
    suits = {c // 13 for c in cards}
    if size == 5 and len(suits) == 1:
        return True
    if size not in lengths or (same_suit and len(suits) != 1):
        return False
    return is_run_of_ranks([c % 13 for c in cards])


def is_run_of_ranks(ranks: list[int]) -> bool:
    """Distinct ranks forming consecutive positions, the ace low (0) or high (13), never both."""
    for low_ace in (True, False):
        positions = sorted(r if (r or low_ace) else 13 for r in ranks)
        if len(set(positions)) == len(positions) and positions[-1] - positions[0] == len(positions) - 1:
            return True
    return False


def legal_subsets(hand: list[int], **rules: object) -> set[int]:
    """Subset bitmasks of the sorted ``hand`` the engine should offer: every legal discard,
    one subset per multiset of cards (the first copies of an id)."""
    out: dict[tuple[int, ...], int] = {}
    positions = range(len(hand))
    for size in range(1, len(hand) + 1):
        for chosen in combinations(positions, size):
            cards = [hand[i] for i in chosen]
            if not is_legal_discard(cards, **rules):
                continue
            key = tuple(sorted(cards))
            mask = sum(1 << i for i in chosen)
            out[key] = min(out.get(key, mask), mask, key=first_copies_order)
    return set(out.values())


def first_copies_order(mask: int) -> list[int]:
    """Orders subsets taking the same cards: the one using the earliest positions first."""
    return [i for i in range(8) if mask >> i & 1]


def oracle_value(card: int, cut_card: int) -> int:
    """A = 1, 2-10 face value, J/Q/K = 10; printed jokers and the cut card's rank 0
    (docs/least_count.md#cards-and-counts)."""
    if card == JOKER:
        return 0
    if cut_card >= 0 and cut_card != JOKER and card % 13 == cut_card % 13:
        return 0
    return min(card % 13 + 1, 10)


def oracle_round(config: Any, declarer: int, players: list[int], counts: dict[int, int]) -> list[int]:
    """Each seat's points of a round (docs/least_count.md#showdown; ``declarer`` -1: the
    timeout): zero for seats not dealt in."""
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


def oracle_eliminated(config: Any, players: list[int], totals: list[int]) -> list[int]:
    """Seats out after a round (docs/least_count.md#elimination): past the threshold (or at
    it under eliminate_on_equal), all but the lowest totals when that would be everybody."""
    limit = config.elimination_score
    over = [q for q in players if totals[q] > limit or (config.eliminate_on_equal and totals[q] == limit)]
    if len(over) == len(players):
        low = min(totals[q] for q in players)
        over = [q for q in over if totals[q] > low]
    return over
