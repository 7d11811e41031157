"""The rules of a gin hand, as a newcomer reads them: the deal, what is legal in each phase
and what each action does, up to the end of the hand and the next deal of a match
(docs/gin_rummy.md#the-rules-in-brief).

``GinRules`` is written over the fields of the state, listed below with their meaning;
``GinState`` (state.py) inherits it and dispatches each action to the method here that
plays it. The other rules live beside it: the options (options.py), the action ids
(actions.py), the hand's scoring (scoring.py), the showdown's searches (solvers.py) and the
match score (match.py).
"""

from __future__ import annotations

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.base import seeded_deck
from rummy_envs.games.gin_rummy.actions import (BIG_GIN, DISCARD, DONE, DRAW_STOCK, HAND_SIZE, KNOCK, LAYOFF, MELD,
                                                PASS, TAKE_DISCARD, Phase)
from rummy_envs.games.gin_rummy.match import StandardMatch
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.scoring import HandResult, hand_stakes, showdown_points
from rummy_envs.games.gin_rummy.solvers import best_defence, best_knocker_melds, knock_cards


def deck_for_hand(seed: int, hand_index: int) -> list[int]:
    """The shuffled deck of hand ``hand_index`` of the game seeded ``seed``
    (docs/gin_rummy.md#seeding)."""
    return seeded_deck(range(C.NUM_CARDS), f"gin:{seed}:{hand_index}")


class GinRules:
    """What is legal in each phase and what each action does, over the state's fields."""

    config: GinConfig
    seed: int
    hand_index: int  # the hand of the match in play, from 0
    dealer: int
    phase: Phase
    current_player: int  # -1 once the game is over
    hands: list[int]  # each seat's cards, a bitmask
    stock: list[int]  # face down; pop() draws the next card
    pile: list[int]  # the discard pile, its top last
    upcard: int
    knock_limit: int  # this hand's, set by the options or (Oklahoma) the upcard
    multiplier: int  # 2 when an Oklahoma spade upcard doubles the hand
    taken_card: int  # the card the mover just took from the pile, -1 if none
    known: list[int]  # each seat's cards taken from the pile and not discarded since
    discarded: list[int]  # each seat's discards this hand
    turns: int  # plain discards this hand
    passed: list[bool]  # [non-dealer passed, dealer passed] the upcard
    knocker: int  # -1 before a knock
    knock_card: int  # the knocker's face-down discard, -1 for none (big gin)
    big_gin: bool
    knocker_melds: list[int]  # declared, runs merged once laid out
    meld_extents: list[int]  # the knocker's melds with the cards laid off on them
    remaining: int  # the declaring player's cards not declared yet
    defender_melds: list[int]
    layoffs: list[tuple[int, int]]  # (card, knocker meld slot) in the order laid
    match: StandardMatch
    hand_results: list[HandResult]
    truncated: bool  # ended by a cap rather than by the rules
    _legal: list[int] | None  # legal_actions() of this position, once computed

    # -- the deal (docs/gin_rummy.md#the-deal) ------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Ten cards each, one at a time from the non-dealer, then the upcard; the rest is the
        stock. The non-dealer is offered the upcard first."""
        order = deck if deck is not None else deck_for_hand(self.seed, self.hand_index)
        nd = 1 - dealer
        self.dealer = dealer
        self.hands = [0, 0]
        for i in range(2 * HAND_SIZE):
            self.hands[nd if i % 2 == 0 else dealer] |= 1 << order[i]
        self.upcard = order[2 * HAND_SIZE]
        self.pile = [self.upcard]
        self.stock = order[:2 * HAND_SIZE:-1]  # reversed: pop() draws the next card
        self.phase = Phase.OFFER_ND
        self.current_player = nd
        self.taken_card = -1
        self.known = [0, 0]
        self.discarded = [0, 0]
        self.turns = 0
        self.passed = [False, False]
        self.knock_limit, self.multiplier = hand_stakes(self.config, self.upcard)
        self.knocker = -1
        self.knock_card = -1
        self.big_gin = False
        self.knocker_melds = []
        self.meld_extents = []
        self.remaining = 0
        self.defender_melds = []
        self.layoffs = []
        self._legal = None

    # -- what is legal (docs/gin_rummy.md#turn-phases) ----------------------------------------
    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _discardable(self, hand: int) -> int:
        """The re-discard ban: the card just taken from the pile may not leave the hand this turn."""
        if self.taken_card >= 0 and not self.config.allow_rediscard_taken_card:
            return hand & ~(1 << self.taken_card)
        return hand

    def _compute_legal(self) -> list[int]:
        phase = self.phase
        p = self.current_player
        if phase == Phase.DISCARD:
            hand = self.hands[p]
            allowed = self._discardable(hand)
            out = [DISCARD + c for c in C.from_mask(allowed)]
            out += [KNOCK + c for c in knock_cards(hand, self.knock_limit) if allowed >> c & 1]
            if self.config.big_gin_bonus is not None and M.min_deadwood(hand) == 0:
                out.append(BIG_GIN)
            return sorted(out)
        if phase == Phase.DRAW:
            return [DRAW_STOCK, TAKE_DISCARD]
        if phase in (Phase.OFFER_ND, Phase.OFFER_D):
            return [TAKE_DISCARD, PASS]
        if phase == Phase.FORCED_DRAW:
            return [DRAW_STOCK]
        if phase == Phase.LAST_CHANCE:
            return sorted([PASS] + self._knocks_after_taking(p))
        if phase == Phase.KNOCKER_MELD:
            limit = 0 if self.big_gin else self.knock_limit
            out = [MELD + M.MELD_INDEX[m] for m in M.melds_in(self.remaining) if M.min_deadwood(self.remaining ^ m) <= limit]
            if M.gin_mask_value(self.remaining) <= limit:
                out.append(DONE)
            return sorted(out)
        if phase == Phase.DEFENDER_MELD:
            return sorted([DONE] + [MELD + M.MELD_INDEX[m] for m in M.melds_in(self.remaining)])
        if phase == Phase.LAYOFF:
            out = [DONE]
            for slot, extent in enumerate(self.meld_extents):
                fit = M.layoff_cards(extent) & self.remaining
                out += [LAYOFF + slot * C.NUM_CARDS + c for c in C.from_mask(fit)]
            return sorted(out)
        return []

    def _knocks_after_taking(self, p: int) -> list[int]:
        """The 50th-card chance: KNOCK(c) / BIG_GIN here take the top discard first, as one
        action, so taking it without knocking is never a state of the game."""
        top = self.pile[-1]
        hand = self.hands[p] | 1 << top
        allowed = hand if self.config.allow_rediscard_taken_card else hand & ~(1 << top)
        out = [KNOCK + c for c in knock_cards(hand, self.knock_limit) if allowed >> c & 1]
        if self.config.big_gin_bonus is not None and M.min_deadwood(hand) == 0:
            out.append(BIG_GIN)
        return out

    # -- what each action does ----------------------------------------------------------------
    def _pass_upcard(self, phase: Phase) -> None:
        """PASS in an offer phase: the dealer is offered the upcard next, then the non-dealer
        must draw from the stock."""
        self.passed[phase] = True
        if phase == Phase.OFFER_ND:
            self.phase, self.current_player = Phase.OFFER_D, self.dealer
        else:
            self.phase, self.current_player = Phase.FORCED_DRAW, 1 - self.dealer

    def _draw_stock(self, p: int) -> None:
        self.hands[p] |= 1 << self.stock.pop()
        self.taken_card = -1
        self.phase = Phase.DISCARD

    def _take_discard(self, p: int) -> None:
        """Take the top of the pile (the upcard in an offer phase): the opponent saw it."""
        card = self.pile.pop()
        self.hands[p] |= 1 << card
        self.known[p] |= 1 << card
        self.taken_card = card
        self.phase = Phase.DISCARD

    def _discard(self, p: int, card: int) -> None:
        """A plain discard ends the turn; the hand ends once the stock is down to
        ``dead_stock_size`` (dead, or the 50th-card chance) or at the turn cap
        (docs/gin_rummy.md#how-a-hand-ends)."""
        bit = 1 << card
        self.hands[p] ^= bit
        self.known[p] &= ~bit
        self.discarded[p] |= bit
        self.pile.append(card)
        self.taken_card = -1
        self.turns += 1
        if len(self.stock) <= self.config.dead_stock_size:
            if self.config.stock_end_rule == "opponent_last_chance":
                self.phase, self.current_player = Phase.LAST_CHANCE, 1 - p
            else:
                self._end_hand(HandResult("dead"))
        elif self.turns >= self.config.max_turns_per_hand:
            self._end_hand(HandResult("turn_cap"))
        else:
            self.phase, self.current_player = Phase.DRAW, 1 - p

    def _pass_last_chance(self) -> None:
        """PASS on the 50th card: the hand is dead."""
        self._end_hand(HandResult("dead"))

    def _knock(self, p: int, card: int) -> None:
        """Knock with ``card`` face down (-1: big gin, nothing discarded), then the showdown:
        the knocker declares its melds, or the engine lays out the best ones
        (docs/gin_rummy.md#showdown)."""
        self.knocker = p
        if card >= 0:
            self.hands[p] ^= 1 << card
            self.known[p] &= ~(1 << card)
            self.knock_card = card
        else:
            self.big_gin = True
        self.taken_card = -1
        if self.config.knocker_arrangement == "explicit":
            self.phase, self.remaining = Phase.KNOCKER_MELD, self.hands[p]
        else:
            self._lay_out_knocker(self._auto_knocker_melds())

    def _auto_knocker_melds(self) -> list[int]:
        """``auto_best``: the knocker's arrangement chosen against the defender's real hand."""
        return best_knocker_melds(self.config, self.hands[self.knocker], self.hands[1 - self.knocker],
                                  0 if self.big_gin else self.knock_limit, self.big_gin, self.multiplier)

    def _lay_out_knocker(self, melds: list[int]) -> None:
        """The knocker's melds go face up (touching runs merged); the defender declares its
        melds and layoffs, or the engine plays its best reply and the hand is scored."""
        self.knocker_melds = M.merge_runs(melds)
        self.meld_extents = list(self.knocker_melds)
        defender = 1 - self.knocker
        self.remaining = self.hands[defender]
        if self.config.layoff_mode == "explicit":
            self.phase, self.current_player = Phase.DEFENDER_MELD, defender
        else:
            gin = self._knocker_deadwood() == 0
            _, own, order = best_defence(self.remaining, self.knocker_melds, allow_layoffs=not gin)
            self.defender_melds = own
            for card, slot in order:
                self.meld_extents[slot] |= 1 << card
            self.layoffs = order
            self._settle()

    def _declare_meld(self, phase: Phase, meld: int) -> None:
        self.remaining ^= meld
        (self.knocker_melds if phase == Phase.KNOCKER_MELD else self.defender_melds).append(meld)

    def _lay_off(self, slot: int, card: int) -> None:
        self.remaining ^= 1 << card
        self.meld_extents[slot] |= 1 << card
        self.layoffs.append((card, slot))

    def _done(self, phase: Phase) -> None:
        """DONE ends the knocker's melds, the defender's melds (gin allows no layoffs) or the
        layoffs."""
        if phase == Phase.KNOCKER_MELD:
            self._lay_out_knocker(self.knocker_melds)
        elif phase == Phase.DEFENDER_MELD and self._knocker_deadwood() > 0:
            self.phase = Phase.LAYOFF
        else:
            self._settle()

    def _knocker_deadwood(self) -> int:
        return M.gin_mask_value(self.hands[self.knocker] & ~M.union(self.knocker_melds))

    def _settle(self) -> None:
        """Score the showdown (docs/gin_rummy.md#scoring-a-hand) and end the hand."""
        knocker, defender = self.knocker, 1 - self.knocker
        laid = C.to_mask(card for card, _ in self.layoffs)
        k = self._knocker_deadwood()
        d = M.gin_mask_value(self.hands[defender] & ~M.union(self.defender_melds) & ~laid)
        knocker_wins, points = showdown_points(self.config, k, d, self.big_gin, self.multiplier)
        winner = knocker if knocker_wins else defender
        result = HandResult(
            kind=("big_gin" if self.big_gin else "gin") if k == 0 else ("knock" if knocker_wins else "undercut"),
            winner=winner,
            knocker=knocker,
        )
        result.points[winner] = points
        result.deadwood[knocker], result.deadwood[defender] = k, d
        result.knocker_melds = [C.from_mask(m) for m in self.knocker_melds]
        result.defender_melds = [C.from_mask(m) for m in self.defender_melds]
        result.layoffs = [[c, s] for c, s in self.layoffs]
        self._end_hand(result)

    def _end_hand(self, result: HandResult) -> None:
        """Record the hand; end the episode (one hand, or the match won or at its hand cap) or
        deal the next hand of the match (docs/gin_rummy.md#match-mode)."""
        if result.knocker >= 0:  # a showdown is public; a dead hand stays hidden
            result.hands = [C.from_mask(h) for h in self.hands]
        self.hand_results.append(result)
        self._legal = None
        cfg = self.config
        if cfg.episode == "hand":
            self.truncated = result.kind == "turn_cap"
            self.phase, self.current_player = Phase.GAME_OVER, -1
            return
        self.match.record(cfg, result)
        if self.match.is_over() or len(self.hand_results) >= cfg.max_hands_per_match:
            self.truncated = not self.match.is_over()
            self.phase, self.current_player = Phase.GAME_OVER, -1
            return
        self.hand_index += 1
        self._deal(self._next_dealer(result), None)

    def _next_dealer(self, result: HandResult) -> int:
        """``next_dealer`` after a won hand; the same dealer after a dead or capped one."""
        if result.winner < 0:
            return self.dealer
        if self.config.next_dealer == "winner":
            return result.winner
        if self.config.next_dealer == "loser":
            return 1 - result.winner
        return 1 - self.dealer
