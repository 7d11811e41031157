"""A whole state from one seat's view: the cards the seat cannot see dealt at random into
the other hands and the stock (docs/manipulation_rummy.md#sampling).

``ManipulationState.sample_from_view`` deals with ``deal_hidden`` and reads the result
with the checks of ``from_dict``; like ``sample_determinization`` it keeps what the view
shows of the hands: the cards known in them, a knock decision of the player to move (its
hand is worth at most ``knock_limit``), each hand's value against ``knock_limit`` as its
turn ended, and a commit in progress (its hand can still complete a legal COMMIT, checked
by the state)."""

from __future__ import annotations

import dataclasses
import random
from math import comb
from typing import Any

from rummy_envs.games.base import unseen_pool
from rummy_envs.games.manipulation_rummy.actions import Phase
from rummy_envs.games.manipulation_rummy.counts import CARD_VALUES, JOKER, still_known
from rummy_envs.games.manipulation_rummy.view import ManipulationView

DETERMINIZATION_TRIES = 200
"""Redeals tried for one sample that must agree with what was seen of the player to move."""


def absolute_seat(view: ManipulationView, relative: int) -> int:
    return (view.player + relative) % view.num_players


def hidden_cards(view: ManipulationView) -> list[int]:
    """The cards the viewer cannot place (``base.unseen_pool``): in the other hands or the
    stock. It sees its hand, the table (its jokers as jokers) and the freed jokers."""
    naturals = table_naturals(view)
    seen = list(view.hand) + naturals + [JOKER] * (len(view.table_jokers) + view.freed_jokers)
    return unseen_pool(view.rules.full_deck(), seen)


def table_naturals(view: ManipulationView) -> list[int]:
    """The natural cards on the table: its identities less those jokers hold."""
    naturals = list(view.table)
    for card in view.table_jokers:
        naturals.remove(card)
    return naturals


def value_draw(pool: list[int], size: int, rng: random.Random, most: int | None = None, least: int = 0) -> list[int]:
    """``size`` cards of ``pool`` (copies are separate cards) drawn at random among the
    draws worth at least ``least`` and at most ``most`` (None: no bound) in all, each such
    draw equally likely: by rejection, then, if that keeps failing, by counting the draws
    (``_counted_draw``)."""
    for _ in range(DETERMINIZATION_TRIES):
        hand = rng.sample(pool, size)
        value = sum(CARD_VALUES[card] for card in hand)
        if least <= value and (most is None or value <= most):
            return hand
    return _counted_draw(pool, size, rng, most, least)


def _counted_draw(pool: list[int], size: int, rng: random.Random, most: int | None, least: int) -> list[int]:
    """``value_draw`` exactly: choose how many cards of each value to draw, weighted by the
    number of draws that choice leaves, then which cards of each value."""
    by_value: dict[int, list[int]] = {}
    for card in pool:
        if most is None or CARD_VALUES[card] <= most:
            by_value.setdefault(CARD_VALUES[card], []).append(card)
    values = sorted(by_value)
    known: dict[tuple[int, int, int], int] = {}

    def draws(i: int, cards: int, spent: int) -> int:
        """The draws of ``cards`` more cards from the values ``values[i:]`` that bring a
        hand worth ``spent`` so far within the bounds."""
        if not cards:
            return int(spent >= least)
        if i == len(values):
            return 0
        key = (i, cards, spent if most is not None else min(spent, least))
        if key not in known:
            known[key] = sum(weight for _, weight in choices(i, cards, spent))
        return known[key]

    def choices(i: int, cards: int, spent: int) -> list[tuple[int, int]]:
        """(cards of value ``values[i]`` drawn, the draws that leaves) for each count."""
        value, available = values[i], len(by_value[values[i]])
        top = min(available, cards) if most is None else min(available, cards, (most - spent) // value)
        return [(k, comb(available, k) * draws(i + 1, cards - k, spent + k * value)) for k in range(top + 1)]

    if not draws(0, size, 0):
        raise ValueError(f"no {size} of the unseen cards are worth {least} to {most}: the view is inconsistent")
    hand: list[int] = []
    cards, spent = size, 0
    for i, value in enumerate(values):
        options = choices(i, cards, spent)
        pick = rng.randrange(sum(weight for _, weight in options))
        for k, weight in options:
            if pick < weight:
                break
            pick -= weight
        hand += rng.sample(by_value[value], k)
        cards, spent = cards - k, spent + k * value
    return hand


def held_known(view: ManipulationView, seat: int) -> list[int]:
    """The cards every seat knows ``seat`` (absolute) holds now: its known cards, less those
    it has placed in the commit in progress."""
    moving = view.to_move is not None and absolute_seat(view, view.to_move) == seat
    return still_known(view.known[(seat - view.player) % view.num_players], view.placed if moving else ())


def hand_bounds(view: ManipulationView) -> dict[int, tuple[int | None, int]]:
    """``(most, least)`` values the view allows each other hand (absolute seats) that it
    limits: within ``knock_limit`` for the player to move at a knock decision and for a hand
    seen within it as its turn ended; above it for a hand seen above it."""
    n, limit = view.num_players, view.rules.knock_limit
    mover = -1 if view.to_move is None else absolute_seat(view, view.to_move)
    bounds: dict[int, tuple[int | None, int]] = {}
    for q in range(n):
        if q == view.player:
            continue
        seen = view.limit_seen[(q - view.player) % n]
        if (q == mover and view.phase in (Phase.TURN_START, Phase.END_OF_TURN)) or seen == "within":
            bounds[q] = (limit, 0)
        elif seen == "above":
            bounds[q] = (None, limit + 1)
    return bounds


def _fits(hand: list[int], bound: tuple[int | None, int]) -> bool:
    most, least = bound
    value = sum(CARD_VALUES[card] for card in hand)
    return value >= least and (most is None or value <= most)


def deal_hidden(view: ManipulationView, rng: random.Random) -> tuple[list[list[int]], list[int]]:
    """Every seat's hand (the viewer's as it is, the others of their sizes) and the stock
    (top first), the hidden cards dealt at random around the cards each hand is known to
    hold (``held_known``), each hand the view limits (``hand_bounds``) within its bounds:
    whole deals are drawn until every bound holds, up to ``DETERMINIZATION_TRIES`` times
    (each consistent deal equally likely, as ``sample_determinization`` redeals), then each
    limited hand is drawn in turn among those within its bounds (``value_draw``)."""
    pool = hidden_cards(view)
    n = view.num_players
    sizes = [view.hand_sizes[(q - view.player) % n] for q in range(n)]
    kept: list[list[int]] = [[] for _ in range(n)]
    for q in range(n):
        if q != view.player:
            kept[q] = held_known(view, q)
            for card in kept[q]:
                pool.remove(card)
    bounds = hand_bounds(view)
    others = [q for q in range(n) if q != view.player]

    def deal(cards: list[int], ready: dict[int, list[int]]) -> tuple[list[list[int]], list[int]]:
        hands = [list(view.hand) if q == view.player else ready.get(q, []) for q in range(n)]
        for q in others:
            if q not in ready:
                k = sizes[q] - len(kept[q])
                hands[q], cards = kept[q] + cards[:k], cards[k:]
        return hands, cards

    for _ in range(DETERMINIZATION_TRIES if bounds else 1):
        rng.shuffle(pool)
        hands, stock = deal(pool, {})
        if all(_fits(hands[q], bound) for q, bound in bounds.items()):
            return hands, stock
    ready: dict[int, list[int]] = {}
    for q, (most, least) in bounds.items():
        base = sum(CARD_VALUES[card] for card in kept[q])
        drawn = value_draw(pool, sizes[q] - len(kept[q]), rng, None if most is None else most - base,
                           max(0, least - base))
        for card in drawn:
            pool.remove(card)
        ready[q] = kept[q] + drawn
    rng.shuffle(pool)
    return deal(pool, ready)


def view_state_dict(view: ManipulationView, hands: list[list[int]], stock: list[int]) -> dict[str, Any]:
    """The state dict of the view with these hands and stock (top first). What no seat
    knows takes neutral values: seed 0, no initial deck, the first dealer ``from_dict``'s
    default, no history, no recorded round results (the totals and rounds won are kept),
    and a finished game not truncated and without final totals (its scores are the
    totals); a finished hand's winners are the seats its rounds won show, a finished
    match has none."""
    n, p = view.num_players, view.player
    rounds_won = [view.rounds_won[(q - p) % n] for q in range(n)]
    finished_hand = view.phase == Phase.GAME_OVER and view.rules.episode == "hand"
    naturals = table_naturals(view)
    commit = None
    if view.table_ops:  # a commit in progress: the table it began with is the one arranged
        start_naturals = list(naturals)
        for card in view.placed:
            if card != JOKER:
                start_naturals.remove(card)
        start_jokers = [card for meld in view.arrangement for card in meld]
        for card in start_naturals:
            start_jokers.remove(card)
        commit = {"start_naturals": start_naturals, "start_jokers": start_jokers, "placed": list(view.placed),
                  "spare_naturals": list(view.spare_naturals), "free_jokers": view.freed_jokers,
                  "ops": view.table_ops}
    return {
        "options": dataclasses.asdict(view.rules),
        "round_index": view.round_number - 1,
        "dealer": absolute_seat(view, view.dealer),
        "phase": view.phase.name,
        "current_player": -1 if view.to_move is None else absolute_seat(view, view.to_move),
        "draws": view.draws,
        "hands": hands,
        "known": [list(view.known[(q - p) % n]) for q in range(n)],
        "limit_seen": [view.limit_seen[(q - p) % n] for q in range(n)],
        "stock": stock,
        "table_naturals": naturals,
        "table_jokers": list(view.table_jokers),
        "commit": commit,
        "totals": [view.scores[(q - p) % n] for q in range(n)],
        "rounds_won": rounds_won,
        "winners": [q for q in range(n) if rounds_won[q]] if finished_hand else [],
    }
