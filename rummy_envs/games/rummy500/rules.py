"""The rules of Rummy 500 as the engine plays them: the deal, what is legal in each phase of
a turn and what each action does, and the end of a hand.

``Rummy500Rules`` holds them as methods of ``Rummy500State`` (state.py), which inherits them
and owns the data they read and write; ``Rummy500State.apply`` dispatches each action here.
The rules by subject (docs/rummy500.md#where-the-rules-live has the full map):

- the deal and the start of a turn: ``deck_for_hand``, ``_deal``, ``_begin_turn``,
  ``_reshuffle`` (docs/rummy500.md#the-deal, docs/rummy500.md#hand-end);
- the ``DRAW`` phase: ``_draw_actions``; taking from the pile, the top card or deeper (the
  deep discard take), is ``_may_take_discard``, and ``_take`` does it
  (docs/rummy500.md#deep-discard-take);
- the ``MELD`` phase: ``_meld_actions`` (docs/rummy500.md#table-actions), built on the meld
  search ``_shapes`` (every commit the hand could complete: new sets, new sequences,
  layoffs), ``_coverings`` (which of its identities jokers hold) and ``_commit_ok`` (the
  deep-take target and no dead ends, docs/rummy500.md#no-dead-ends); ``_place`` commits a
  group and ``_discard`` ends the turn;
- the end of a hand, its score and the match: ``_end_hand`` (docs/rummy500.md#scoring,
  docs/rummy500.md#match-mode).

The mask is exact: every action offered can be followed by a legal commit and the turn can
always still be finished (no dead ends).
"""

from __future__ import annotations

import datetime
import random
from itertools import combinations

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.rummy500.actions import (CANCEL, DISCARD, DRAW_STOCK, END_HAND, JOKER, LAY_OFF, MAX_MELDS,
                                               MELD_NEW, PICK, PICK_JOKER, TAKE_DISCARD, Phase)
from rummy_envs.games.rummy500.melds import (ACE_NEIGHBOURS, COLUMNS, NEW_SEQUENCES, ROW, SET_SHAPES, Meld, classify,
                                             ms_add, ms_count, new_sequences_in)
from rummy_envs.games.rummy500.options import GAME, Rummy500Config
from rummy_envs.games.rummy500.scoring import HandResult, Rummy500Scoring, hand_scores

def deck_for_hand(config: Rummy500Config, seed: int, hand_index: int, daily_date: str | None) -> list[int]:
    """The shuffled deck of hand ``hand_index``: seeded, or the daily deal of ``daily_date``."""
    order = config.full_deck()
    if config.deal_seed_mode == "daily":
        return C.hash_shuffle(order, C.daily_key(GAME, daily_date or "", config.daily_salt, hand_index + 1))
    random.Random(f"{GAME}:{seed}:{hand_index}").shuffle(order)
    return order


def today_utc() -> str:
    """Today's date in UTC, ``YYYY-MM-DD``: the daily deal's date when none is given."""
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


class Rummy500Rules(Rummy500Scoring):
    """The rules as methods of ``Rummy500State``, which owns the data (see its docstring) and
    ``clone``, with which the look-ahead checks try a take or a commit on a copy."""

    # -- the deal and the start of a turn ---------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Deal a hand (``deck``, else this hand's shuffle): one card at a time from the
        dealer's left, then the first discard; the rest is the stock
        (docs/rummy500.md#the-deal)."""
        cfg = self.config
        order = deck if deck is not None else deck_for_hand(cfg, self.seed, self.hand_index, self.daily_date)
        n, size = self.n, cfg.cards_per_hand
        self.dealer = dealer
        self.hands = [[0, 0, 0] for _ in range(n)]
        for i in range(n * size):
            ms_add(self.hands[(dealer + 1 + i) % n], order[i])
        self.sizes = [size] * n
        self.pile = [order[n * size]]
        self.stock = order[:n * size:-1]  # reversed: pop() draws the next card
        self.known = [[0, 0, 0] for _ in range(n)]
        self.melds: list[Meld] = []
        self.table_once = 0  # identities on the table at least once
        self.table_twice = 0  # identities on the table twice (two decks)
        self.credited = [[0, 0] for _ in range(n)]  # identities credited to each seat, once / twice
        self.table_jokers = [0, 0]  # identities held by jokers on the table, once / twice
        self.turns = 0  # completed turns and cancelled groups of this hand, for max_turns_per_hand
        self.reshuffles = 0
        self._begin_turn((dealer + 1) % n)

    def _begin_turn(self, player: int) -> None:
        """``player``'s turn begins with a draw; an empty stock is rebuilt from the pile
        (``reshuffle_discards``) or ends the hand when nothing can be taken
        (docs/rummy500.md#hand-end)."""
        self.current_player = player
        self.phase = Phase.DRAW
        self.pending = 0  # identities picked into the pending group
        self.pending_jokers = 0  # those of them held by jokers
        self.target = -1  # the card that must go on the table this turn
        self.banned = -1  # the card id that may not be discarded this turn
        self._legal: list[int] | None = None
        if self.stock:
            return
        if self.config.stock_end_rule == "reshuffle_discards" and len(self.pile) >= 2:
            self._reshuffle()
        elif self.config.stock_end_rule == "reshuffle_discards" or not self.pile:
            self._end_hand("stock_exhausted")

    def _reshuffle(self) -> None:
        """The pile but its top card becomes the stock, shuffled from the seed (or the day)."""
        cfg = self.config
        cards = self.pile[:-1]
        self.pile = self.pile[-1:]
        if self.daily_date is not None:
            label = f"{self.hand_index + 1}-reshuffle-{self.reshuffles + 1}"
            cards = C.hash_shuffle(cards, C.daily_key(GAME, self.daily_date, cfg.daily_salt, label))
        else:
            random.Random(f"{GAME}-reshuffle:{self.seed}:{self.hand_index}:{self.reshuffles}").shuffle(cards)
        self.reshuffles += 1
        self.stock = cards[::-1]

    @property
    def table_full(self) -> int:
        """Identities already on the table as often as there are decks."""
        return self.table_twice if self.config.decks == 2 else self.table_once

    # -- the legal actions of each phase ----------------------------------------------------
    def _compute_legal(self) -> list[int]:
        """The legal actions of the phase (``Rummy500State.legal_actions`` caches them)."""
        if self.phase == Phase.DRAW:
            return self._draw_actions()
        if self.phase == Phase.MELD:
            return self._meld_actions()
        return []

    def _draw_actions(self) -> list[int]:
        """``DRAW``: the stock if it has cards, ``END_HAND`` when it is empty
        (``end_on_decline``), and each pile position that may be taken, walking down the
        pile with the hand the take would give (``_may_take_discard``)."""
        out = [DRAW_STOCK] if self.stock else []
        if not self.stock and self.config.stock_end_rule == "end_on_decline":
            out.append(END_HAND)
        p = self.current_player
        hand = self.hands[p]
        avail, jokers, size = hand[0], hand[2], self.sizes[p]
        for i in range(len(self.pile) - 1, -1, -1):
            card = self.pile[i]
            if card == JOKER:
                jokers += 1
            else:
                avail |= 1 << card
            size += 1
            if self._may_take_discard(i, card, avail, jokers, size):
                out.append(TAKE_DISCARD + i)
        return sorted(out)

    def _may_take_discard(self, i: int, card: int, avail: int, jokers: int, size: int) -> bool:
        """The deep discard take (docs/rummy500.md#deep-discard-take): may the player to move
        take the pile from position ``i`` up (``TAKE_DISCARD(i)``)? ``card`` is the card at
        ``i``; after the take the hand has ``size`` cards, the naturals ``avail`` and
        ``jokers`` jokers.

        - The top card alone (unless ``top_discard_must_be_used``) is allowed, with no
          obligation to use it, so long as the turn can still end: as it may not be discarded
          this turn (unless ``allow_rediscard_taken_card``), another card must be left to
          discard or a table action must follow, which fails only with two decks, for a hand
          of nothing but the other copy of that card.
        - A deeper card, or the top card under ``top_discard_must_be_used``, becomes the
          turn's *target*: the take is allowed only if the target can go on the table in one
          commit (a new meld or a layoff) from the hand after the take, the turn then still
          able to end (``_placeable``).

        Once taken (``_take``) every card taken is known to everybody and the target is
        recorded; ``_commit_ok`` then refuses a first commit without it (or, with
        ``target_use_timing="anytime_before_discard"``, any commit after which it no longer
        fits), and ``_meld_actions`` offers no discard while it is due.
        """
        cfg = self.config
        if i == len(self.pile) - 1 and not cfg.top_discard_must_be_used:
            if cfg.allow_rediscard_taken_card or size > ms_count(self.hands[self.current_player], card) + 1:
                return True  # another card can be discarded
            trial = self.clone()
            trial._take(i)
            return bool(trial._meld_actions())
        return self._placeable(card, avail, jokers, size)

    def _placeable(self, target: int, avail: int, jokers: int, size: int) -> bool:
        """Can ``target`` go on the table in one commit from a hand of ``size`` cards holding
        the naturals ``avail`` and ``jokers``, the turn then still able to end?"""
        if not jokers and not self._may_fit(target, avail):
            return False
        keep_one = self.config.must_discard_to_go_out
        need = target if target != JOKER else -1
        for identities, _slot in self._shapes(avail, jokers, 0, need):
            if not keep_one or size > identities.bit_count():
                return True  # a natural target covers its identity; a joker target fills any
        return False

    def _may_fit(self, card: int, avail: int) -> bool:
        """A quick necessary condition for placing the natural ``card`` without jokers: two
        more of its rank, a card of its suit next to it (a sequence holds a neighbour of each
        of its cards), or a table meld of its rank or suit."""
        rank, suit = card % C.NUM_RANKS, card // C.NUM_RANKS
        if (COLUMNS[rank] & avail).bit_count() >= 3:
            return True
        row = avail >> (13 * suit) & ROW
        positions = row | (row & 1) << 13  # the ace also at position 13
        if (positions >> (rank - 1) & 0b101) if rank else (row & ACE_NEIGHBOURS):
            return True
        return any(m.key == (rank if m.is_set else suit) for m in self.melds)

    def _meld_actions(self) -> list[int]:
        """``MELD``: the picks that some legal commit can follow, the commits of the pending
        group, ``CANCEL`` while a group is pending, and otherwise the discards (none while a
        target is due, not the banned card) (docs/rummy500.md#table-actions)."""
        p = self.current_player
        hand = self.hands[p]
        pending, pending_jokers = self.pending, self.pending_jokers
        free = hand[2] - pending_jokers.bit_count()
        target = self.target
        first_action = self.config.target_use_timing == "first_table_action"
        need = target if 0 <= target < JOKER and first_action else -1
        natural_picks = joker_picks = 0
        out: list[int] = []
        shapes = self._shapes(hand[0] | pending, free, pending, need)
        if not free and not pending_jokers and target < 0 and self.banned < 0:
            # The fast path of the loop below, when no joker and no turn rule is in play: each
            # shape has one covering, and a commit is legal unless it empties a hand that must
            # keep a card to discard (tests/test_rummy500_engine.py checks the two agree).
            keep = self.sizes[p] if self.config.must_discard_to_go_out else self.sizes[p] + 1
            for identities, slot in shapes:
                if identities.bit_count() < keep:
                    if identities == pending:
                        out.append(MELD_NEW if slot < 0 else LAY_OFF + slot)
                    natural_picks |= identities
            natural_picks &= ~pending
            shapes = []
        for identities, slot in shapes:  # every way to hold each shape that _commit_ok accepts
            rest = identities & ~pending
            for jokered in self._coverings(identities, hand[0], free):
                if not self._commit_ok(identities, jokered, slot):
                    continue
                if not rest:
                    out.append(MELD_NEW if slot < 0 else LAY_OFF + slot)  # LAY_OFF_HIGH = LAY_OFF + MAX_MELDS
                natural_picks |= rest & ~jokered
                joker_picks |= rest & jokered
        out += [PICK + c for c in C.from_mask(natural_picks)]
        out += [PICK_JOKER + c for c in C.from_mask(joker_picks)]
        if pending:
            out.append(CANCEL)
        elif target < 0:
            banned = self.banned
            discards = hand[0] & ~(1 << banned) if banned >= 0 else hand[0]
            out += [DISCARD + c for c in C.from_mask(discards)]
            if hand[2] and banned != JOKER:
                out.append(DISCARD + JOKER)
        return sorted(out)

    # -- the meld search -------------------------------------------------------------------
    def _shapes(self, avail: int, free: int, pending: int, need: int) -> list[tuple[int, int]]:
        """Every commit the naturals ``avail`` (the pending identities included) and ``free``
        jokers could complete: ``(identities, slot)`` with slot -1 for a new meld, ``k`` for
        a set or the low end of sequence k, ``MAX_MELDS + k`` for its high end. Each holds
        ``pending`` and, if ``need`` >= 0, that identity; none re-uses an identity the table
        already holds as often as there are decks (docs/rummy500.md#cards-and-melds,
        docs/rummy500.md#jokers)."""
        out: list[tuple[int, int]] = []
        blocked = self.table_full
        # New sets.
        if pending:
            low = (pending & -pending).bit_length() - 1
            ranks = [low % C.NUM_RANKS] if pending & COLUMNS[low % C.NUM_RANKS] == pending else []
        elif need >= 0:
            ranks = [need % C.NUM_RANKS]
        elif free:
            ranks = range(C.NUM_RANKS)
        else:
            a, b, c, d = avail & ROW, avail >> 13 & ROW, avail >> 26 & ROW, avail >> 39 & ROW
            three = (a & b & (c | d)) | (c & d & (a | b))
            ranks = [r for r in range(C.NUM_RANKS) if three >> r & 1]
        for r in ranks:
            for shape in SET_SHAPES[r]:
                if (shape & pending == pending and not shape & blocked and (need < 0 or shape >> need & 1)
                        and (shape & ~avail).bit_count() <= free):
                    out.append((shape, -1))
        # New sequences.
        if pending:
            suit = ((pending & -pending).bit_length() - 1) // C.NUM_RANKS
            suits = [suit] if not pending & ~(ROW << (13 * suit)) else []
        elif need >= 0:
            suits = [need // C.NUM_RANKS]
        else:
            suits = range(C.NUM_SUITS)
        for s in suits:
            shift = 13 * s
            if need >= 0 and need // C.NUM_RANKS != s:
                continue
            row = avail >> shift & ROW
            prow, brow = pending >> shift & ROW, blocked >> shift & ROW
            nrow = 1 << (need - shift) if need >= 0 else 0
            for _lo, _hi, ranks_row in (NEW_SEQUENCES if free else new_sequences_in(row)):
                if (ranks_row & prow == prow and not ranks_row & brow and (not nrow or ranks_row & nrow)
                        and (not free or (ranks_row & ~row).bit_count() <= free)):
                    out.append((ranks_row << shift, -1))
        # Layoffs.
        for slot, meld in enumerate(self.melds):
            if meld.is_set:
                if meld.cards.bit_count() == 4:
                    continue
                column = COLUMNS[meld.key] & ~meld.cards
                if pending & ~column or (need >= 0 and not column >> need & 1):
                    continue
                for s in range(C.NUM_SUITS):  # a 3-set takes its missing suit
                    bit = column & (ROW << (13 * s))
                    if bit and not bit & blocked and (bit & avail or free) and bit & pending == pending:
                        out.append((bit, slot))
                continue
            shift = 13 * meld.key
            if pending & ~(ROW << shift) or (need >= 0 and need // C.NUM_RANKS != meld.key):
                continue
            for high, positions in ((False, range(meld.lo - 1, -1, -1)), (True, range(meld.hi + 1, M.NUM_POSITIONS))):
                if (meld.lo == 0) if high else (meld.hi == M.NUM_POSITIONS - 1):
                    positions = positions[:-1]  # an ace at the other end: never both aces
                group = holes = 0
                for pos in positions:
                    bit = 1 << (shift + pos % C.NUM_RANKS)
                    if bit & blocked:
                        break
                    group |= bit
                    if not bit & avail:
                        holes += 1
                        if holes > free:
                            break
                    if group & pending == pending and (need < 0 or group >> need & 1):
                        out.append((group, slot + MAX_MELDS if high else slot))
        return out

    def _coverings(self, identities: int, naturals: int, free: int) -> list[int]:
        """The ways to hold ``identities`` with the pending group's cards, the hand's
        ``naturals`` and up to ``free`` more jokers: each is the bitmask of jokered identities."""
        pending = self.pending
        holes = identities & ~pending & ~naturals
        base = self.pending_jokers | holes
        spare = free - holes.bit_count()
        optional = identities & ~pending & naturals
        if spare <= 0 or not optional:
            return [base]
        ids = C.from_mask(optional)
        out = [base]
        for k in range(1, min(spare, len(ids)) + 1):
            out += [base | C.to_mask(chosen) for chosen in combinations(ids, k)]
        return out

    def _commit_ok(self, identities: int, jokered: int, slot: int) -> bool:
        """Is committing ``identities`` (``jokered`` held by jokers) onto ``slot`` legal: the
        deep-take target rule (docs/rummy500.md#deep-discard-take), and the turn can still end
        afterwards (docs/rummy500.md#no-dead-ends)."""
        target = self.target
        if target >= 0:
            placed = jokered != 0 if target == JOKER else bool((identities & ~jokered) >> target & 1)
            if not placed:
                if self.config.target_use_timing == "first_table_action":
                    return False
                after = self._after(identities, jokered, slot)
                return after._placeable(target, after.hands[after.current_player][0],
                                        after.hands[after.current_player][2], after.sizes[after.current_player])
        p = self.current_player
        left = self.sizes[p] - identities.bit_count()
        if left == 0:
            return not self.config.must_discard_to_go_out
        banned = self.banned
        if banned < 0:
            return True
        used = jokered.bit_count() if banned == JOKER else (identities & ~jokered) >> banned & 1
        if left > ms_count(self.hands[p], banned) - used:
            return True  # a card other than the banned one is left to discard
        if self.config.must_discard_to_go_out:
            return False
        return bool(self._after(identities, jokered, slot)._meld_actions())

    def _after(self, identities: int, jokered: int, slot: int) -> Rummy500Rules:
        """A copy with this commit placed (for looking ahead; the hand does not end)."""
        trial = self.clone()
        trial._place(identities, jokered, slot)
        trial.pending = trial.pending_jokers = 0
        trial._legal = None
        return trial

    # -- what the actions do ----------------------------------------------------------------
    def _take(self, i: int) -> None:
        """``TAKE_DISCARD(i)``: the pile from ``i`` up joins the hand, known to everybody; a
        deep take (or a must-use top card) sets the target, the top card alone the banned
        card (docs/rummy500.md#deep-discard-take)."""
        p = self.current_player
        taken = self.pile[i:]
        del self.pile[i:]
        for card in taken:
            ms_add(self.hands[p], card)
            ms_add(self.known[p], card)
        self.sizes[p] += len(taken)
        cfg = self.config
        if len(taken) > 1 or cfg.top_discard_must_be_used:
            self.target = taken[0]
        elif not cfg.allow_rediscard_taken_card:
            self.banned = taken[0]
        self.phase = Phase.MELD

    def _place(self, identities: int, jokered: int, slot: int) -> None:
        """Move the cards of a commit from the hand of the player to move to the table: a new
        meld, or a layoff credited to the player (or, with ``layoff_credit="meld_owner"``,
        to the meld's owner) (docs/rummy500.md#cards-and-melds)."""
        p = self.current_player
        hand = self.hands[p]
        naturals = identities & ~jokered
        second = naturals & hand[1]
        hand[1] ^= second
        hand[0] ^= naturals & ~second
        hand[2] -= jokered.bit_count()
        self.sizes[p] -= identities.bit_count()
        known = self.known[p]
        known[0] &= hand[0]
        known[1] &= hand[1]
        known[2] = min(known[2], hand[2])
        if self.target >= 0 and (jokered if self.target == JOKER else naturals >> self.target & 1):
            self.target = -1
        if slot < 0:
            is_set, key, lo, hi = classify(identities)  # type: ignore[misc]
            meld = Meld(is_set, key, lo, hi, 0, 0, {}, p)
            self.melds.append(meld)
            seat = p
        else:
            meld = self.melds[slot % MAX_MELDS]
            seat = p if self.config.layoff_credit == "layer" else meld.owner
            if not meld.is_set:
                if slot >= MAX_MELDS:
                    meld.hi += identities.bit_count()
                else:
                    meld.lo -= identities.bit_count()
        self._record_on_table(meld, identities, jokered, seat)

    def _record_on_table(self, meld: Meld, identities: int, jokered: int, seat: int) -> None:
        """Add cards to a meld and to the table's counts, credited to ``seat``."""
        for identity in C.from_mask(identities):
            meld.credit[identity] = seat
        meld.cards |= identities
        meld.jokers |= jokered
        self.table_twice |= identities & self.table_once
        self.table_once |= identities
        credited = self.credited[seat]
        credited[1] |= identities & credited[0]
        credited[0] |= identities
        self.table_jokers[1] |= jokered & self.table_jokers[0]
        self.table_jokers[0] |= jokered

    def _show_cancelled_group(self, p: int) -> None:
        """``CANCEL`` puts the pending group back in the hand, but everybody saw it: each of
        its identities (and its jokers) is known to be held, at least once, until played
        (docs/rummy500.md#the-deal)."""
        known = self.known[p]
        known[0] |= self.pending & ~self.pending_jokers
        known[2] = max(known[2], self.pending_jokers.bit_count())

    def _discard(self, p: int, card: int) -> None:
        """``DISCARD(card)`` ends the turn: the hand ends if it is empty (out) or at the turn
        cap, else the next player's turn begins (docs/rummy500.md#going-out)."""
        hand = self.hands[p]
        if card == JOKER:
            hand[2] -= 1
            self.known[p][2] = min(self.known[p][2], hand[2])
        else:
            bit = 1 << card
            if hand[1] & bit:
                hand[1] ^= bit
                self.known[p][1] &= ~bit
            else:
                hand[0] ^= bit
                self.known[p][0] &= ~bit
        self.sizes[p] -= 1
        self.pile.append(card)
        self.turns += 1
        if not self.sizes[p]:
            self._end_hand("out", p)
        elif self.turns >= self.config.max_turns_per_hand:
            self._end_hand("turn_cap")
        else:
            self._begin_turn((p + 1) % self.n)

    # -- the end of a hand ------------------------------------------------------------------
    def _end_hand(self, kind: str, went_out: int = -1) -> None:
        """The hand ends (``kind``: "out", "stock_exhausted" or "turn_cap"): it is scored and
        recorded; then the episode ends, or the match deals the next hand unless it is won
        or at ``max_hands`` (docs/rummy500.md#scoring, docs/rummy500.md#match-mode)."""
        cfg = self.config
        table = self.table_points()
        in_hand = [self.hand_points(q) for q in range(self.n)]
        points = hand_scores(table, in_hand, went_out, cfg.out_bonus)
        melds = [{"cards": m.ordered(), "jokers": C.from_mask(m.jokers), "credit": [m.credit[c] for c in m.ordered()],
                  "owner": m.owner} for m in self.melds]
        self.hand_results.append(HandResult(kind, went_out, points, table, in_hand,
                                            [self.hand_cards(q) for q in range(self.n)], melds))
        self.pending = self.pending_jokers = 0
        self.target = self.banned = -1
        self._legal = None
        if cfg.episode == "hand":
            self.truncated = kind == "turn_cap"
            self.phase, self.current_player = Phase.GAME_OVER, -1
            return
        self.totals = [t + x for t, x in zip(self.totals, points)]
        if decided := self._match_winners():
            self.winners = decided
        if self.winners or len(self.hand_results) >= cfg.max_hands:
            self.truncated = not self.winners
            self.phase, self.current_player = Phase.GAME_OVER, -1
            return
        self.hand_index += 1
        self._deal((self.dealer + 1) % self.n, None)

