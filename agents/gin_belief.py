"""A belief about the other gin hand, read from how it has played this hand: the worlds the
search agents deal in the gin games.

Worlds dealt from the view alone hold a uniformly random other hand, far from a knock and
blind to what its play showed (docs/tournaments.md#the-search-agents). ``GinBelief`` keeps a
particle filter over that hand instead, updated at each of the seat's decisions from what the
view shows the other seat did since the last one:

- it let the upcard or my discard pass: likely, it did not improve its hand much;
- it took a card from the pile: likely, it did;
- it drew from the stock: an unseen card joined its hand (its discard, if the particle did
  not hold it: sequential importance sampling with the prior stock draw as proposal);
- it discarded a card: likely, one whose loss leaves little deadwood;
- it discarded without knocking though the particle could have knocked: unlikely.

Each particle is a full other hand, weighted by how likely that play was from it under a
soft model of a sensible player (``Likelihoods``). When a particle cannot have played a
discard (the card is not in it and came from no stock draw), the card is swapped in for one
of its loose cards, the weight scaled by the odds that a random hand held it. Particles are
resampled when their effective number falls under half. A world of the search is the view's
state with the other hand of one particle, drawn by weight, and the stock shuffled.

The belief reads only views (the agent's own, at its decisions): nothing hidden. If it
misses the start of a hand (an agent created mid-hand), it says so (``ready`` is False) and
the search deals worlds from the view as before.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from agents.gin_rummy import best_discard_deadwood
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinState, GinView, Phase

HAND_SIZE = 10
GUESSING_PHASES = frozenset((Phase.OFFER_ND, Phase.OFFER_D, Phase.FORCED_DRAW, Phase.DRAW, Phase.DISCARD,
                             Phase.LAST_CHANCE))
"""The phases in which the other hand is hidden and the belief is kept up."""


@dataclass(frozen=True)
class Likelihoods:
    """The soft model of the other seat's play the belief weighs particles by.

    ``discard_sharpness``: a discard leaving ``k`` more deadwood than another is
    ``exp(-sharpness * k)`` times as likely. ``take_threshold`` and ``take_sharpness``: the
    odds of taking a card rise logistically with the deadwood it saves (after the best
    discard), even at ``take_threshold`` points. ``no_knock``: the odds that a hand able to
    knock discards instead."""

    discard_sharpness: float = 2.0
    take_threshold: float = 3.0
    take_sharpness: float = 0.8
    no_knock: float = 0.15


LIKELIHOODS = Likelihoods()


@dataclass
class _Seen:
    """What the belief had read of the other seat at the last view."""

    known: frozenset[int]
    discarded: frozenset[int]
    hand_size: int
    passed_upcard: bool


class GinBelief:
    """A particle filter over the other hand of a two-seat gin game (the module docstring)."""

    def __init__(self, rng: random.Random, particles: int = 256, model: Likelihoods = LIKELIHOODS) -> None:
        self.rng = rng
        self.size = particles
        self.model = model
        self.reset()

    def reset(self) -> None:
        """Forget the hand being followed."""
        self.ready = False
        self._hand_key: tuple[int, int] | None = None
        self.hands: list[int] = []
        self.log_weights: list[float] = []
        self._weights: list[float] = []  # exp of the log weights less their largest, for drawing
        self._seen: _Seen | None = None
        self._my_discard: int | None = None

    # -- following the hand -------------------------------------------------------------
    def observe(self, view: GinView) -> None:
        """Read what the other seat did since the last view of this seat (call at every
        decision of the seat, before choosing)."""
        key = (view.hand_index, len(view.hand_results))
        if key != self._hand_key:
            self._start(view, key)
        if not self.ready:
            return
        if view.phase not in GUESSING_PHASES:
            self.ready = False  # the showdown shows what matters; nothing left to guess
            return
        self._read_turn(view)

    def note_my_move(self, view: GinView, action: int) -> None:
        """Remember the card the seat discards, which the other seat then takes or lets pass."""
        if self.ready and view.phase == Phase.DISCARD and G.DISCARD <= action < G.KNOCK:
            self._my_discard = action - G.DISCARD

    def _start(self, view: GinView, key: tuple[int, int]) -> None:
        self.reset()
        self._hand_key = key
        if view.phase not in GUESSING_PHASES or view.discarded[0] or len(view.hand) != HAND_SIZE:
            return  # joined after the seat's own first turn: its history is lost
        pool = C.from_mask(C.FULL_DECK_MASK & ~C.to_mask(view.hand) & ~(1 << view.upcard))
        self.hands = [C.to_mask(self.rng.sample(pool, HAND_SIZE)) for _ in range(self.size)]
        self.log_weights = [0.0] * self.size
        self._weights = [1.0] * self.size
        self._seen = _Seen(frozenset(), frozenset(), HAND_SIZE, False)
        self.ready = True

    def _read_turn(self, view: GinView) -> None:
        seen = self._seen
        assert seen is not None
        known = frozenset(view.opponent_known)
        discarded = frozenset(view.discarded[1])
        taken = sorted(known - seen.known)
        thrown = sorted(discarded - seen.discarded)
        drawn = view.opponent_hand_size - seen.hand_size - len(taken) + len(thrown)
        passed_upcard = view.upcard_passed[0 if view.is_dealer else 1]
        declined = []
        if passed_upcard and not seen.passed_upcard:
            declined.append(view.upcard)
        if drawn > 0 and self._my_discard is not None and self._my_discard not in taken:
            declined.append(self._my_discard)
        known_mask = C.to_mask(known)
        visible = C.to_mask(view.hand) | C.to_mask(view.discard_pile) | known_mask
        if declined or taken or drawn or thrown:
            self._update(visible, known_mask, declined, taken, drawn, thrown, view.knock_limit)
        self._drop_seen(visible, known_mask)
        self._seen = _Seen(known, discarded, view.opponent_hand_size, passed_upcard)
        self._my_discard = None

    def _update(self, visible: int, known: int, declined: list[int], taken: list[int], drawn: int,
                thrown: list[int], knock_limit: int) -> None:
        """One turn of the other seat, applied to every particle."""
        model, rng = self.model, self.rng
        unseen = C.FULL_DECK_MASK & ~visible
        for i, hand in enumerate(self.hands):
            log_w = 0.0
            for card in declined:
                log_w += math.log(1.0 - self._take_odds(hand, card))
            for card in taken:
                log_w += math.log(self._take_odds(hand, card))
                hand |= 1 << card
            for _ in range(drawn):
                pool = unseen & ~hand
                missing = [card for card in thrown if not hand >> card & 1]
                if missing:  # the discard came from the stock: the prior's odds of that draw
                    log_w -= math.log(pool.bit_count())
                    hand |= 1 << missing[0]
                else:
                    hand |= 1 << _random_card(pool, rng)
            keep = C.to_mask(taken)
            for card in thrown:
                if not hand >> card & 1:  # it cannot have thrown this: swap it in for a loose card
                    loose = C.from_mask(hand & ~known & ~keep)
                    pool = (unseen | 1 << card) & ~hand
                    log_w += math.log(len(loose) / pool.bit_count())
                    hand ^= 1 << rng.choice(loose) | 1 << card
                log_w += self._discard_log_odds(hand, card, keep)
                hand ^= 1 << card
                if M.min_deadwood(hand) <= knock_limit:
                    log_w += math.log(model.no_knock)
            self.hands[i] = hand
            self.log_weights[i] += log_w
        self._resample_if_degenerate()

    def _drop_seen(self, visible: int, known: int) -> None:
        """Cards the seat has seen elsewhere since (its stock draws) cannot be in the other
        hand: each is swapped for an unseen card."""
        unseen = C.FULL_DECK_MASK & ~visible
        for i, hand in enumerate(self.hands):
            clash = hand & visible & ~known
            while clash:
                low = clash & -clash
                clash ^= low
                hand ^= low | 1 << _random_card(unseen & ~hand, self.rng)
            self.hands[i] = hand

    def _take_odds(self, hand: int, card: int) -> float:
        model = self.model
        saved = M.min_deadwood(hand) - best_discard_deadwood(hand | 1 << card, keep=1 << card)
        odds = 1.0 / (1.0 + math.exp(-model.take_sharpness * (saved - model.take_threshold)))
        return min(0.98, max(0.02, odds))

    def _discard_log_odds(self, hand: int, card: int, keep: int) -> float:
        sharpness = self.model.discard_sharpness
        choices = C.from_mask(hand & ~keep)
        left = {c: M.min_deadwood(hand ^ 1 << c) for c in choices}
        least = min(left.values())
        total = sum(math.exp(-sharpness * (d - least)) for d in left.values())
        return -sharpness * (left[card] - least) - math.log(total)

    def _resample_if_degenerate(self) -> None:
        top = max(self.log_weights)
        weights = self._weights = [math.exp(w - top) for w in self.log_weights]
        total = sum(weights)
        effective = total * total / sum(w * w for w in weights)
        if effective < self.size / 2:
            self.hands = self.rng.choices(self.hands, weights=weights, k=self.size)
            self.log_weights = [0.0] * self.size
            self._weights = [1.0] * self.size

    # -- dealing worlds -------------------------------------------------------------------
    def world(self, template: GinState, player: int) -> GinState:
        """``template`` (a world dealt from the view) with the other hand of a particle drawn
        by weight and the rest of the hidden cards shuffled into the stock."""
        other = 1 - player
        hand = self.rng.choices(self.hands, weights=self._weights)[0]
        world = template.clone()
        hidden = template.hands[other] | C.to_mask(template.stock)
        assert hand & ~hidden == 0 and hand.bit_count() == template.hands[other].bit_count()
        stock = C.from_mask(hidden & ~hand)
        self.rng.shuffle(stock)
        world.hands[other] = hand
        world.stock = stock
        world._legal = None
        return world


def _random_card(mask: int, rng: random.Random) -> int:
    return rng.choice(C.from_mask(mask))
