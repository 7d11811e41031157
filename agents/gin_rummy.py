"""Rule-based agents for the gin games (gin_rummy, hollywood_gin).

``GinNoviceAgent`` is the greedy baseline; ``GinHeuristicAgent`` adds a one-draw lookahead
and a model of the opponent's hand to avoid feeding it. Both agents read only
``player_view()`` (a ``GinView``, with the rules options in ``view.rules``) and the engine's
public helpers, so they never see a hidden card. They share the showdown play: with
``knocker_arrangement="explicit"`` or ``layoff_mode="explicit"`` they declare the
arrangement of least deadwood (for the defender: counting the layoffs it allows) and lay
off everything that fits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinView, Phase

GIN_GAMES = ("gin_rummy", "hollywood_gin")


def remaining_mask(view: GinView) -> int:
    """My cards not yet declared in a meld or laid off in the showdown."""
    laid = C.to_mask(card for card, _ in view.layoffs) if view.knocker == 1 else 0
    return C.to_mask(view.hand) & ~M.union([C.to_mask(m) for m in view.my_melds]) & ~laid


def showdown_action(view: GinView) -> int:
    """The next explicit showdown action: melds of least deadwood, then every layoff."""
    remaining = remaining_mask(view)
    extents = [C.to_mask(m) for m in view.knocker_melds]
    legal = set(view.legal_actions)
    if view.phase == Phase.LAYOFF:
        _, order = M.layoff_closure(remaining, extents)
        for card, slot in order:
            action = G.LAYOFF + slot * C.NUM_CARDS + card
            if action in legal:
                return action
        return G.DONE
    defending = view.phase == Phase.DEFENDER_MELD
    allow_layoffs = defending and bool(view.knocker_deadwood)
    best: tuple[int, tuple[int, ...]] | None = None
    for covered, chosen in M.arrangements(remaining):
        rest = remaining & ~covered
        if allow_layoffs:
            rest &= ~M.layoff_closure(rest, extents)[0]
        key = (M.gin_mask_value(rest), chosen)
        if best is None or key < best:
            best = key
    assert best is not None
    for meld in best[1]:
        action = G.MELD + M.MELD_INDEX[meld]
        if action in legal:
            return action
    return G.DONE


def _discard_choices(view: GinView) -> list[int]:
    """Cards I may discard now (the taken card excluded where the rules forbid it)."""
    return sorted({a - G.DISCARD for a in view.legal_actions if G.DISCARD <= a < G.KNOCK})


def _knock_choices(view: GinView) -> list[int]:
    return [a for a in view.legal_actions if G.KNOCK <= a < G.MELD or a == G.BIG_GIN]


def _lowest_knock(view: GinView) -> int:
    """The knock (or big gin) that leaves the least deadwood; ties: the highest card shed."""
    hand = C.to_mask(view.hand)
    if view.phase == Phase.LAST_CHANCE and view.top_discard is not None:
        hand |= 1 << view.top_discard

    def key(action: int) -> tuple[int, int]:
        if action == G.BIG_GIN:
            return (-1, 0)
        card = action - G.KNOCK
        return (M.min_deadwood(hand ^ (1 << card)), -C.GIN_VALUES[card])

    return min(_knock_choices(view), key=key)


def melds_with(hand: int, card: int) -> bool:
    """True when ``card`` ends up in a meld of a least-deadwood arrangement of hand + card."""
    with_card = hand | 1 << card
    return M.min_deadwood(with_card) < M.min_deadwood(hand) + C.GIN_VALUES[card]


class _GinAgent(ABC):
    """The phase dispatch both gin agents share: the showdown is played by
    ``showdown_action``, the forced draw is forced, and a subclass decides the 50th card
    (``_last_chance``), whether to take the top discard (``_takes_top``) and what to
    discard or knock (``_discard_or_knock``)."""

    name: str

    def __init__(self, game: str = "gin_rummy", seed: int | None = None) -> None:
        self.game = game

    def reset(self) -> None:
        """Nothing to forget: every move is read off the current view."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: GinView) -> int:
        phase = view.phase
        if phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF):
            return showdown_action(view)
        if phase == Phase.FORCED_DRAW:
            return G.DRAW_STOCK
        if phase == Phase.LAST_CHANCE:
            return self._last_chance(view)
        if phase in (Phase.OFFER_ND, Phase.OFFER_D, Phase.DRAW):
            if self._takes_top(view):
                return G.TAKE_DISCARD
            return G.DRAW_STOCK if phase == Phase.DRAW else G.PASS
        return self._discard_or_knock(view)

    @abstractmethod
    def _last_chance(self, view: GinView) -> int:
        """PASS, or the knock (or big gin) that takes the 50th card."""

    @abstractmethod
    def _takes_top(self, view: GinView) -> bool:
        """Whether to take the upcard or the top discard."""

    @abstractmethod
    def _discard_or_knock(self, view: GinView) -> int:
        """A DISCARD, KNOCK or BIG_GIN action of an 11-card hand."""


class GinNoviceAgent(_GinAgent):
    """The obvious greedy player, the level of RLCard's and OpenSpiel's bundled gin bots:
    knock or gin as soon as allowed, otherwise discard the card that leaves the least
    deadwood (the highest on ties), and take the discard only when it melds."""

    name = "novice"

    def _last_chance(self, view: GinView) -> int:
        return _lowest_knock(view) if _knock_choices(view) else G.PASS

    def _takes_top(self, view: GinView) -> bool:
        return melds_with(C.to_mask(view.hand), view.top_discard)

    def _discard_or_knock(self, view: GinView) -> int:
        if _knock_choices(view):
            return _lowest_knock(view)
        hand = C.to_mask(view.hand)
        card = min(_discard_choices(view), key=lambda c: (M.min_deadwood(hand ^ (1 << c)), -C.GIN_VALUES[c], -c))
        return G.DISCARD + card


# ----------------------------------------------------------------------------------------
# The heuristic player

# For each card, the other two cards of every 3-card meld holding it: a card can join a meld
# in a hand exactly when one of these pairs is in the hand (longer melds contain a 3-card one).
_MELD_PARTNERS: tuple[tuple[int, ...], ...] = tuple(
    tuple(m ^ 1 << card for m in M.MELDS if m.bit_count() == 3 and m >> card & 1) for card in range(C.NUM_CARDS)
)
_RELATED: tuple[int, ...] = tuple(M.union(pairs) for pairs in _MELD_PARTNERS)
"""_RELATED[c]: the cards sharing a 3-card meld with c (its rank mates, suit neighbours within 2)."""


def _pair_completions() -> dict[int, int]:
    """For each pair of cards in a 3-card meld, the cards that complete it (one or two)."""
    completions: dict[int, int] = {}
    for card, pairs in enumerate(_MELD_PARTNERS):
        for pair in pairs:
            completions[pair] = completions.get(pair, 0) | 1 << card
    return completions


_COMPLETIONS = _pair_completions()
"""_COMPLETIONS[pair]: the cards that make a 3-card meld with the two cards of ``pair``."""
_VALUE_CLASSES: tuple[tuple[int, int], ...] = tuple(
    (value, C.to_mask(card for card in range(C.NUM_CARDS) if C.GIN_VALUES[card] == value)) for value in range(10, 0, -1))
"""(deadwood value, the cards worth it), the highest value first."""
_NO_DEADWOOD = 1 << 30


def can_meld(hand: int, card: int) -> bool:
    """True when ``card`` forms a meld with two cards of ``hand``."""
    for pair in _MELD_PARTNERS[card]:
        if pair & hand == pair:
            return True
    return False


def best_discard_deadwood(hand: int, keep: int = 0) -> int:
    """Least deadwood left by discarding one card of ``hand`` outside ``keep``.

    Dropping card x lowers the deadwood by at most its value, so trying the highest cards
    first (by value, then card) lets the search stop after a few ``min_deadwood`` calls."""
    base = M.min_deadwood(hand)
    best = _NO_DEADWOOD
    droppable = hand & ~keep
    for value, cards in _VALUE_CLASSES:
        if base - value >= best:
            break
        part = droppable & cards
        while part:
            low = part & -part
            part ^= low
            best = min(best, M.min_deadwood(hand ^ low))
            if base - value >= best:
                break
    return best


class _Reading:
    """What the heuristic reads off one view: the hand's stakes (the knock limit, the worth of
    gin), the odds that each unseen card is the next stock card, and the odds that the
    opponent holds each card (and pairs of them).

    The opponent model: it holds its pick-ups and cards near them; it keeps melds and throws
    its highest loose card first, so an unseen card above its last discard is in its hand
    mostly as part of a meld (with the other cards of that meld); and it holds no pair that
    would have melded with a card it threw or let pass."""

    def __init__(self, view: GinView, agent: GinHeuristicAgent) -> None:
        self.agent = agent
        self.limit = view.knock_limit
        self.gin_worth = view.rules.gin_bonus + agent.gin_margin
        self.hand = C.to_mask(view.hand)
        self.opponent_known = C.to_mask(view.opponent_known)
        unseen = C.FULL_DECK_MASK & ~self.hand & ~C.to_mask(view.discard_pile) & ~self.opponent_known
        unseen_cards = C.from_mask(unseen)
        self.unwanted = _unwanted(view)
        last_thrown = _last_opponent_discard(view)
        ceiling = C.GIN_VALUES[last_thrown] if last_thrown is not None else 10
        self.high = C.to_mask(card for card in unseen_cards if C.GIN_VALUES[card] > ceiling)
        hidden = view.opponent_hand_size - len(view.opponent_known)
        weight = len(unseen_cards) - self.high.bit_count() * (1.0 - agent.high_card_factor)
        base = hidden / weight if weight else 0.0
        near_pickups = M.union([_RELATED[c] for c in view.opponent_known])
        self.held = [0.0] * C.NUM_CARDS
        for card in view.opponent_known:
            self.held[card] = 1.0
        for card in unseen_cards:
            odds = base * (agent.high_card_factor if self.high >> card & 1 else 1.0)
            odds *= agent.pickup_boost if near_pickups >> card & 1 else 1.0
            self.held[card] = min(1.0, odds)
        # The next stock card is an unseen card the opponent does not hold: "live" outs.
        live = [(card, 1.0 - self.held[card]) for card in unseen_cards]
        total = sum(weight for _, weight in live)
        self.stock_odds = [(card, weight / total) for card, weight in live] if total else []
        self.odds_by_value = [0.0] * 11  # by deadwood value 1..10 (index 0 unused)
        for card, odds in self.stock_odds:
            self.odds_by_value[C.GIN_VALUES[card]] += odds
        self.melders = [(card, odds) for card, odds in self.stock_odds if can_meld(self.hand, card)]

    def danger(self, card: int) -> float:
        """Chance that the opponent holds two cards that meld with ``card``."""
        agent, held = self.agent, self.held
        miss = 1.0
        for pair in _MELD_PARTNERS[card]:
            low = pair & -pair
            odds = held[low.bit_length() - 1] * held[(pair ^ low).bit_length() - 1]
            if odds < 1.0:
                high = (pair & self.high).bit_count()
                if high == 1 and not pair & self.opponent_known:
                    odds *= agent.mixed_pair_factor
                elif high == 2:
                    odds *= agent.high_pair_factor
                if _COMPLETIONS[pair] & self.unwanted:
                    odds *= agent.pair_excluded
            miss *= 1.0 - odds
        return 1.0 - miss


def _unwanted(view: GinView) -> int:
    """Cards the opponent showed it did not need: its discards, my discards it let pass
    (mine in the pile under the top card) and the upcard if it passed that."""
    pile = view.discard_pile
    passed = C.to_mask(pile[:-1]) & C.to_mask(view.discarded[0])
    opponent_is_non_dealer = view.is_dealer
    if pile and view.upcard_passed[0 if opponent_is_non_dealer else 1]:
        passed |= 1 << pile[0]
    return passed | C.to_mask(view.discarded[1])


def _plays_weakly(view: GinView) -> bool:
    """True when the opponent shows it is not building melds: it picked up a card that can
    no longer meld (each meld it could join needs a card in my hand or the pile), let pass
    one of my discards that melds with cards it had picked up, or took half my discards."""
    gone = C.to_mask(view.hand) | C.to_mask(view.discard_pile)
    if any(all(pair & gone for pair in _MELD_PARTNERS[card]) for card in view.opponent_known):
        return True
    known = C.to_mask(view.opponent_known)
    passed = C.to_mask(view.discard_pile[:-1]) & C.to_mask(view.discarded[0])
    if any(can_meld(known, card) for card in C.from_mask(passed)):
        return True
    taken = len(set(view.discarded[0]) - set(view.discard_pile))  # my discards it picked up
    return taken >= 2 and 2 * taken >= len(view.discarded[0])


def _last_opponent_discard(view: GinView) -> int | None:
    """The opponent's most recent discard still in the pile, if any."""
    thrown = set(view.discarded[1])
    for card in reversed(view.discard_pile):
        if card in thrown:
            return card
    return None


class GinHeuristicAgent(_GinAgent):
    """A stronger rule-based player: it weighs the next draw, reads the opponent's hand from
    its pick-ups, discards and passes, and avoids feeding it.

    Discard: the card whose removal leaves the best 10-card hand, scored as its deadwood plus
    ``horizon`` times the expected gain of the next stock draw (exact deadwood after the best
    discard, bonuses for reaching a knock or gin, each unseen card weighted by the odds that
    the opponent does not hold it) plus ``danger_weight`` times the chance that the card
    melds in the opponent's hand (see ``_Reading``). Draw: the top discard when the hand
    after taking it is worth more than the expected stock draw. Knock: gin always; a knock
    while many draws are left (the stock above the rules' ``dead_stock_size``), late only
    with little deadwood, and only gin against an opponent that shows it is not building
    melds; the 50th card only for a low knock. The knock limit, the gin bonus and the end of
    the stock are read off the view's rules.
    Deterministic (no randomness; ``seed`` is accepted for the registry) and without memory:
    each move reads the view.
    """

    name = "heuristic"

    horizon = 2.0  # how many future draws the outs of a kept hand are worth
    knock_bonus = 20.0  # worth of reaching a knockable hand, in deadwood points (about a knock's win)
    gin_margin = 5.0  # a gin hand is worth the rules' gin_bonus plus this (no layoffs against it)
    danger_weight = 12.0  # cost of handing the opponent a meld, in deadwood points
    take_margin = 0.5  # the discard must beat the expected stock draw by this much
    high_card_factor = 0.3  # odds the opponent holds an unseen card above its last discard
    mixed_pair_factor = 0.2  # odds of it holding a low and a high card of one meld together
    high_pair_factor = 2.0  # odds of two high cards of one meld together (they come in melds)
    pair_excluded = 0.2  # odds left for a pair that would have melded a card it threw or passed
    pickup_boost = 2.0  # odds the opponent holds a card near one it picked up
    discard_window = 10  # score only discards leaving at most this much more than the fewest deadwood
    weak_opponent_gin_draws = 4  # against a weak opponent, only gin while this many draws are left
    late_draws = 8  # with this many draws left or fewer, knock only with little deadwood
    late_knock_max = 5  # most deadwood for a late knock
    last_chance_knock_max = 4  # most deadwood for a knock on the 50th card

    def _takes_top(self, view: GinView) -> bool:
        assert view.top_discard is not None
        return self._takes(view.top_discard, _Reading(view, self))

    def _value(self, deadwood: int, reading: _Reading) -> float:
        """A hand's worth as deadwood, less the bonuses for being able to knock or go gin."""
        return deadwood - self.knock_bonus * (deadwood <= reading.limit) - reading.gin_worth * (deadwood == 0)

    def _outlook(self, hand: int, reading: _Reading) -> float:
        """Expected ``_value`` of a 10-card hand after one stock draw and its best discard.

        A card that melds with nothing stays deadwood: it is thrown back or swapped for the
        worst card, so those cards are summed by value; the few that meld are tried one by one."""
        now = M.min_deadwood(hand)
        if not reading.stock_odds:
            return self._value(now, reading)
        nine_best = best_discard_deadwood(hand)
        unmelded = [self._value(min(now, value + nine_best), reading) for value in range(11)]
        total = sum(odds * unmelded[value] for value, odds in enumerate(reading.odds_by_value))
        for card, odds in reading.melders:
            if can_meld(hand, card):
                melded = self._value(best_discard_deadwood(hand | 1 << card), reading)
                total += odds * (melded - unmelded[C.GIN_VALUES[card]])
        return total

    def _takes(self, top: int, reading: _Reading) -> bool:
        """Take the top discard when the hand after taking it (and the best discard other than
        it) is worth more than the expected stock draw."""
        taken = best_discard_deadwood(reading.hand | 1 << top, keep=1 << top)
        return self._value(taken, reading) + self.take_margin < self._outlook(reading.hand, reading)

    def _discard_score(self, card: int, reading: _Reading) -> float:
        """Lower is better: deadwood left, less the expected gain of the draws to come, plus
        the risk of feeding the opponent."""
        rest = reading.hand ^ 1 << card
        now = M.min_deadwood(rest)
        gain = self._outlook(rest, reading) - now
        return now + self.horizon * gain + self.danger_weight * reading.danger(card)

    def _should_knock(self, deadwood: int, view: GinView) -> bool:
        """Gin always. Otherwise knock early, or late only with little deadwood (undercuts);
        against an opponent that shows it is not building melds, hold out for gin while the
        stock lasts."""
        if deadwood == 0:
            return True
        draws_left = view.stock_size - view.rules.dead_stock_size
        if draws_left >= self.weak_opponent_gin_draws and _plays_weakly(view):
            return False
        return draws_left > self.late_draws or deadwood <= self.late_knock_max

    def _discard_or_knock(self, view: GinView) -> int:
        """Big gin, gin or a knock worth making; otherwise the best-scored discard."""
        reading = _Reading(view, self)
        if G.BIG_GIN in view.legal_actions:
            return G.BIG_GIN
        if _knock_choices(view):
            knock = _lowest_knock(view)
            if self._should_knock(M.min_deadwood(reading.hand ^ 1 << (knock - G.KNOCK)), view):
                return knock
        left = {c: M.min_deadwood(reading.hand ^ 1 << c) for c in _discard_choices(view)}
        fewest = min(left.values())
        choices = [c for c, deadwood in left.items() if deadwood <= fewest + self.discard_window]
        card = min(choices, key=lambda c: (self._discard_score(c, reading), -C.GIN_VALUES[c], -c))
        return G.DISCARD + card

    def _last_chance(self, view: GinView) -> int:
        """Take the 50th card only to go gin or to knock with little deadwood."""
        if not _knock_choices(view):
            return G.PASS
        knock = _lowest_knock(view)
        if knock == G.BIG_GIN:
            return knock
        assert view.top_discard is not None
        hand = C.to_mask(view.hand) | 1 << view.top_discard
        deadwood = M.min_deadwood(hand ^ 1 << (knock - G.KNOCK))
        return knock if deadwood <= self.last_chance_knock_max else G.PASS
