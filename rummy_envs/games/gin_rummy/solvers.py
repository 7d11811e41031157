"""The exact searches of gin, over card bitmasks (the meld tables are ``rummy_envs.melds``):
a hand's deadwood and best arrangement, the discards that allow a knock, the defender's best
reply to a knock (``layoff_mode="auto_optimal"``) and the knocker's best arrangement against
it (``knocker_arrangement="auto_best"``), docs/gin_rummy.md#showdown.

The public ones (``deadwood``, ``best_arrangement``, ``knock_discards``, ``best_layoffs``)
take card ids or a card string; agents use them too.
"""

from __future__ import annotations

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.gin_rummy.actions import HAND_SIZE
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.scoring import showdown_points


def _mask_of(cards: C.CardsLike | int) -> int:
    if isinstance(cards, int):
        return cards
    ids = C.parse(cards)
    if any(c >= C.NUM_CARDS for c in ids):
        raise ValueError("the gin games use no jokers")
    mask = C.to_mask(ids)
    if mask.bit_count() != len(ids):
        raise ValueError(f"duplicate cards in {C.format(ids)}")
    return mask


def _sort_key(melds: list[int]) -> list[list[int]]:
    return sorted(C.from_mask(m) for m in melds)


def deadwood(cards: C.CardsLike) -> int:
    """Minimum deadwood of a hand of any size (exact search over arrangements)."""
    return M.min_deadwood(_mask_of(cards))


def _best_melds(mask: int) -> list[int]:
    best_value = M.max_cover(mask)
    options = [M.merge_runs(chosen) for covered, chosen in M.arrangements(mask) if M.gin_mask_value(covered) == best_value]
    return min(options, key=_sort_key)


def best_arrangement(cards: C.CardsLike) -> tuple[list[list[int]], int]:
    """An arrangement of least deadwood: ``(melds, deadwood)``, runs merged, ties broken by
    the lexicographically smallest list of sorted melds."""
    mask = _mask_of(cards)
    melds = _best_melds(mask)
    return [C.from_mask(m) for m in melds], M.min_deadwood(mask)


def knock_discards(cards: C.CardsLike, knock_limit: int = 10) -> list[int]:
    """Sorted cards of an 11-card hand whose discard leaves deadwood <= ``knock_limit``."""
    mask = _mask_of(cards)
    if mask.bit_count() != HAND_SIZE + 1:
        raise ValueError(f"knock_discards needs 11 cards, got {mask.bit_count()}")
    return knock_cards(mask, knock_limit)


def knock_cards(mask: int, limit: int) -> list[int]:
    """The cards of the hand ``mask`` whose discard leaves deadwood <= ``limit``
    (docs/gin_rummy.md#knocking): deadwood is the hand's value less its best melded value."""
    total = M.gin_mask_value(mask)
    if total - M.max_cover(mask) - 10 > limit:  # even the best discard cannot get there
        return []
    out = []
    for c in C.from_mask(mask):
        rest = mask ^ (1 << c)
        if total - C.GIN_VALUES[c] - M.max_cover(rest) <= limit:
            out.append(c)
    return out


def best_defence(defender: int, knocker_melds: list[int], allow_layoffs: bool) -> tuple[int, list[int], list[tuple[int, int]]]:
    """The defender's least deadwood: own melds, then (unless gin) chained layoffs onto the
    knocker's melds. Returns ``(deadwood, own melds, [(card, knocker meld slot), ...])``; ties:
    the lexicographically smallest own melds."""
    best: tuple[int, list[list[int]], list[int], list[tuple[int, int]]] | None = None
    for covered, chosen in M.arrangements(defender):
        rest = defender & ~covered
        laid, order = M.layoff_closure(rest, knocker_melds) if allow_layoffs else (0, [])
        value = M.gin_mask_value(rest & ~laid)
        merged = M.merge_runs(chosen)
        key = _sort_key(merged)
        if best is None or (value, key) < (best[0], best[1]):
            best = (value, key, merged, order)
    assert best is not None
    return best[0], best[2], best[3]


def best_layoffs(defender_cards: C.CardsLike, knocker_melds: list[C.CardsLike]) -> tuple[int, list[list[int]], list[tuple[int, int]]]:
    """The defender's optimal reply to a knock: ``(deadwood, own melds, layoffs)`` where
    layoffs are ``(card, index into knocker_melds)`` in the order laid."""
    melds = [_mask_of(m) for m in knocker_melds]
    value, own, order = best_defence(_mask_of(defender_cards), melds, allow_layoffs=True)
    return value, [C.from_mask(m) for m in own], order


def best_knocker_melds(config: GinConfig, hand: int, defender: int, limit: int, big_gin: bool,
                       multiplier: int) -> list[int]:
    """``auto_best``: the knocker's arrangement (runs merged) within ``limit`` with the best
    net result after the defender's best reply; ties: lower knocker deadwood, then the
    lexicographically smallest arrangement."""
    best: tuple[int, int, list[list[int]]] | None = None
    choice: list[int] = []
    seen: set[tuple[int, ...]] = set()
    for covered, chosen in M.arrangements(hand):
        k = M.gin_mask_value(hand & ~covered)
        if k > limit:
            continue
        merged = M.merge_runs(chosen)
        if tuple(merged) in seen:
            continue
        seen.add(tuple(merged))
        d, _, _ = best_defence(defender, merged, allow_layoffs=k > 0)
        knocker_wins, points = showdown_points(config, k, d, big_gin, multiplier)
        net = points if knocker_wins else -points
        key = (-net, k, _sort_key(merged))
        if best is None or key < best:
            best, choice = key, merged
    return choice
