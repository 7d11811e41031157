"""``Rummy500State``: a game of Rummy 500 in progress, the engine contract of
``rummy_envs.games.base`` (``GameState``). It holds the data; the rules it plays are the
methods it inherits from ``Rummy500Rules`` (rules.py), its dict reading and writing those of
``Rummy500StateDict`` (state_dict.py). Here: the data, ``apply`` (the dispatch of each
action to its rule), copies, the player views, and the states sampled for search
(docs/rummy500.md#search-api).
"""

from __future__ import annotations

import random
from typing import ClassVar

from rummy_envs import cards as C
from rummy_envs.errors import action_id
from rummy_envs.games.base import copy_with_lists, illegal_action, unseen_pool
from rummy_envs.games.rummy500.actions import (CANCEL, DISCARD, DRAW_STOCK, END_HAND, JOKER, LAY_OFF, MELD_NEW, PICK,
                                               PICK_JOKER, TAKE_DISCARD, Phase, action_to_str, str_to_action)
from rummy_envs.games.rummy500.melds import RANK_POINTS, ms_add, ms_count, multiset, multiset_cards
from rummy_envs.games.rummy500.options import GAME, Rummy500Config
from rummy_envs.games.rummy500.rules import today_utc
from rummy_envs.games.rummy500.scoring import HandResult
from rummy_envs.games.rummy500.state_dict import Rummy500StateDict, dict_from_view
from rummy_envs.games.rummy500.view import MeldView, Rummy500View
from rummy_envs.options import check_date

DETERMINIZATION_TRIES = 200  # redeals tried before an opponent mid-turn keeps its cards
VIEW_SAMPLE_TRIES = 100 * DETERMINIZATION_TRIES  # deals of a view's unseen cards tried before giving up


def public_hand(known: list[int], pending: int, pending_jokers: int) -> list[int]:
    """The cards of a hand everybody knows, sorted: those taken from the pile and not played
    since (the multiset ``known``), and the pending group on the table's edge (its natural
    cards ``pending``, a bitmask, and ``pending_jokers`` jokers)."""
    return multiset_cards([known[0] | pending, known[1], max(known[2], pending_jokers)])


class Rummy500State(Rummy500StateDict):
    """A game of Rummy 500 in progress: pure rules, mutated only by ``apply``.

    The data: ``config``, ``n`` (players), ``seed``, ``daily_date``, ``initial_deck`` and
    ``first_dealer`` (how the game began), ``hand_index`` and ``dealer``; per seat ``hands``
    and ``known`` (multisets ``[once, twice, jokers]``: the hand, and its cards everybody saw:
    taken from the pile, or shown in a cancelled group), ``sizes`` and ``credited`` (table
    identities credited, once / twice); ``stock`` (the next card drawn last), ``pile``
    (bottom first) and ``melds`` (``Meld``), with ``table_once`` / ``table_twice`` /
    ``table_jokers`` (identities on the table, and those held by jokers); the turn:
    ``phase``, ``current_player``, ``pending`` and ``pending_jokers`` (the group being built),
    ``target`` and ``banned`` (-1: none), ``turns``, ``reshuffles``; the episode:
    ``totals``, ``winners``, ``hand_results``, ``truncated`` and ``history``.
    """

    UNDO_ACTIONS: ClassVar[frozenset[int]] = frozenset({CANCEL})  # puts the pending group back (check_playable)

    def __init__(self, config: Rummy500Config | None = None, seed: int = 0, deck: list[int] | None = None,
                 dealer: int | None = None, daily_date: str | None = None):
        self.config = cfg = config or self.config_class()
        self.n = cfg.num_players
        self.seed = int(seed)
        self.daily_date: str | None = None
        if cfg.deal_seed_mode == "daily":
            self.daily_date = daily_date or cfg.daily_date or today_utc()
            check_date("daily_date", self.daily_date)
        self.history: list[int] = []
        self.hand_index = 0
        self.hand_results: list[HandResult] = []
        self.totals = [0] * self.n
        self.winners: list[int] = []
        self.truncated = False
        if dealer is None:
            if self.daily_date is not None:
                words = C.hash_words(C.daily_key(GAME, self.daily_date, cfg.daily_salt, "dealer"))
                dealer = C.hash_below(words, self.n)
            else:
                dealer = random.Random(f"{GAME}-dealer:{self.seed}").randrange(self.n)
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < self.n:
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, cfg.full_deck())
        self.first_dealer = dealer
        self._deal(dealer, self.initial_deck)

    # -- queries ---------------------------------------------------------------------------
    def hand_cards(self, player: int) -> list[int]:
        """Sorted card ids of a hand, copies repeated, jokers (52) last."""
        return multiset_cards(self.hands[player])

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def action_to_str(self, action: int) -> str:
        """The readable name of an action id (``actions.action_to_str``)."""
        return action_to_str(action)

    def str_to_action(self, text: str) -> int:
        """The action id of a name as ``action_to_str`` writes it (ValueError otherwise)."""
        return str_to_action(text)

    # -- bounds of any game (OpenSpiel's GameInfo) -----------------------------------------
    @classmethod
    def utility_bounds(cls, config: Rummy500Config) -> tuple[float, float]:
        """The least and the greatest value any seat's ``returns()`` can take at any point of a
        game under ``config`` dealt from the start (truncated games included; a state dict may
        give a match any totals, which no bound can know).

        A hand scores seat q ``x_q = t_q - h_q`` (table minus hand points, plus ``out_bonus`` b
        for the one seat that went out). Every card is in one place, worth on the table at most
        its value in a hand (a low ace 1, not 15), so all the t_q and h_q add up to at most V,
        the value of every card of the game. Seat i's centred points
        ``r_i = (n-1)/n x_i - 1/n sum_{j != i} x_j`` are then at most
        ``(n-1)/n (t_i + b) + 1/n sum_{j != i} h_j <= (n-1)/n (V + b)`` (i melded all that the
        others do not hold, and went out) and at least
        ``-(n-1)/n h_i - 1/n (sum_{j != i} t_j + b) >= -((n-1) V + b) / n`` (i holds all that
        is not on the others' table, and another went out). Two players reach both; with more,
        the card each other seat still holds leaves a little slack. Returns are 0 until a
        one-hand episode ends; a match's are the sum of its hands' (centring is linear), over
        at most ``max_hands`` hands.
        """
        n, bonus = config.num_players, config.out_bonus
        value = 4 * sum(RANK_POINTS) * config.decks + config.total_jokers * config.joker_value
        hands = config.max_hands if config.episode == "match" else 1
        return -hands * ((n - 1) * value + bonus) / n, hands * (n - 1) * (value + bonus) / n

    @classmethod
    def max_game_length(cls, config: Rummy500Config) -> int:
        """An upper bound on the number of actions ``apply`` accepts in one game (episode) under
        ``config``, every cap included.

        In a hand ``turns`` counts the discards d and the cancels c, and the hand ends when it
        reaches ``max_turns_per_hand`` T: d + c <= T. Each turn opens with one draw
        (``DRAW_STOCK``, ``TAKE_DISCARD`` or ``END_HAND``): at most d + 1. A pending group
        always lies inside one set, sequence or layoff, so a cancelled group took at most 13
        picks (a full suit); a committed group of k picks puts k cards on the table, which they
        never leave, so the picks and commits of committed groups are at most 2N, N the cards
        of the game. A hand therefore takes at most (d + 1) + d + 14c + 2N <= 14T + 1 + 2N
        actions (worst: T cancels of 13-card groups), and a match ``max_hands`` hands.
        """
        per_hand = (C.NUM_RANKS + 1) * config.max_turns_per_hand + 1 + 2 * config.deck_size
        return (config.max_hands if config.episode == "match" else 1) * per_hand

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        as_int = action if type(action) is int else action_id(action)
        if as_int not in self.legal_actions():
            raise illegal_action(self, action)
        action = as_int
        self.history.append(action)
        self._legal = None
        p = self.current_player
        if action == DRAW_STOCK:
            ms_add(self.hands[p], self.stock.pop())
            self.sizes[p] += 1
            self.phase = Phase.MELD
        elif action == END_HAND:
            self._end_hand("stock_exhausted")
        elif TAKE_DISCARD <= action < PICK:
            self._take(action - TAKE_DISCARD)
        elif PICK <= action < PICK_JOKER:
            self.pending |= 1 << (action - PICK)
        elif PICK_JOKER <= action < LAY_OFF:
            self.pending |= 1 << (action - PICK_JOKER)
            self.pending_jokers |= 1 << (action - PICK_JOKER)
        elif action == CANCEL:
            self._show_cancelled_group(p)
            self.pending = self.pending_jokers = 0
            self.turns += 1  # counted like a turn, so that no hand can loop forever (docs/rummy500.md#hand-end)
            if self.turns >= self.config.max_turns_per_hand:
                self._end_hand("turn_cap")
        elif action == MELD_NEW or LAY_OFF <= action < DISCARD:
            self._place(self.pending, self.pending_jokers, -1 if action == MELD_NEW else action - LAY_OFF)
            self.pending = self.pending_jokers = 0
            if not self.sizes[p]:
                self._end_hand("out", p)
        else:
            self._discard(p, action - DISCARD)

    # -- views -----------------------------------------------------------------------------
    def player_view(self, player: int) -> Rummy500View:
        """What ``player`` may see now (see ``Rummy500View``)."""
        n = self.n
        seats = [(player + k) % n for k in range(n)]
        rel = lambda seat: (seat - player) % n  # noqa: E731
        mine = self.current_player == player
        pending = self.pending & ~self.pending_jokers
        return Rummy500View(
            player=player,
            num_players=n,
            phase=self.phase,
            is_my_turn=mine,
            to_move=None if self.current_player < 0 else rel(self.current_player),
            dealer=rel(self.dealer),
            hand=tuple(self.hand_cards(player)),
            pending=tuple(C.from_mask(pending)),
            pending_jokers=tuple(C.from_mask(self.pending_jokers)),
            discard_pile=tuple(self.pile),
            stock_size=len(self.stock),
            hand_sizes=tuple(self.sizes[q] for q in seats),
            known=tuple(tuple(multiset_cards(self.known[q])) for q in seats),
            melds=tuple(MeldView(m.is_set, tuple(m.ordered()), tuple(C.from_mask(m.jokers)),
                                 tuple(rel(m.credit[c]) for c in m.ordered()), rel(m.owner)) for m in self.melds),
            target=None if self.target < 0 else self.target,
            banned=None if self.banned < 0 else self.banned,
            turns=self.turns,
            scores=tuple(self.totals[q] for q in seats),
            hand_number=self.hand_index + 1,
            reshuffles=self.reshuffles,
            hand_results=tuple(self.hand_results),
            winners=tuple(rel(q) for q in self.winners),
            truncated=self.truncated,
            daily_date=self.daily_date,
            rules=self.config,
            legal_actions=tuple(self.legal_actions()) if mine else (),
        )

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> Rummy500State:
        """An independent copy (cheap: ints and short lists)."""
        new = copy_with_lists(self, ("history", "sizes", "pile", "stock", "hand_results", "totals", "winners"))
        new.hands = [list(h) for h in self.hands]
        new.known = [list(k) for k in self.known]
        new.credited = [list(c) for c in self.credited]
        new.table_jokers = list(self.table_jokers)
        new.melds = [m.copy() for m in self.melds]
        return new

    def public_cards(self, player: int) -> list[int]:
        """Cards of ``player``'s hand everybody knows (``public_hand``): taken from the pile
        (not played since) or in the pending group on the table's edge; once the game is over,
        all of it, as the last hand's result shows every hand."""
        if self.is_terminal() and self.hand_results and self.hand_results[-1].hands:
            return self.hand_cards(player)
        if player == self.current_player:
            return public_hand(self.known[player], self.pending & ~self.pending_jokers, self.pending_jokers.bit_count())
        return public_hand(self.known[player], 0, 0)

    def sample_determinization(self, player: int, rng: random.Random) -> Rummy500State:
        """A copy in which every card hidden from ``player`` (the other hands but their public
        cards, and the stock order) is redealt at random (docs/rummy500.md#sampling).

        An opponent in the middle of its turn was seen holding a pending group that can still
        be committed, or a deep-take target it can still place, and no longer showing a banned
        card it played holds no other copy (``_turn_can_go_on``): redeals that break this are
        drawn again (up to ``DETERMINIZATION_TRIES`` times, then that opponent keeps its cards).
        """
        pool = list(self.stock)
        public: dict[int, list[int]] = {}
        for q in range(self.n):
            if q == player:
                continue
            public[q] = self.public_cards(q)
            rest = self.hand_cards(q)
            for card in public[q]:
                rest.remove(card)
            pool += rest
        mover = self.current_player
        constrained = mover != player and self.phase == Phase.MELD
        for _ in range(DETERMINIZATION_TRIES):
            new = self._redeal(public, pool, rng)
            if not constrained or new._turn_can_go_on():
                return new
        new = self._redeal({q: cards for q, cards in public.items() if q != mover}, None, rng)
        return new

    @classmethod
    def sample_from_view(cls, view: Rummy500View, rng: random.Random) -> Rummy500State:
        """A full state consistent with ``view`` (docs/rummy500.md#sampling): every card the
        seat cannot place (``base.unseen_pool``: not in its hand, the pile, the table or
        another seat's public cards, which are all of its hand once the game is over and the
        last result shows every hand) dealt at random into the other hands' hidden parts and
        the stock, as ``sample_determinization`` redeals them, under the same condition: an
        opponent in the middle of its turn can go on with it (redrawn up to
        ``VIEW_SAMPLE_TRIES`` times, then ValueError; the true deal is one such, so only a
        view no game reaches gets there).

        The state is written as a dict from the view (``dict_from_view``) and read by
        ``from_dict``'s checks. What no view holds takes a neutral value: the seed 0, no
        initial deck and an empty history (the actions are public, but the view leaves them
        out to stay cheap), so what the seed decides later (a reshuffle's order, the next
        hand's deal) differs from the game's.
        """
        n, me = view.num_players, view.player
        mover = None if view.to_move is None else (view.to_move + me) % n
        public: dict[int, list[int]] = {}
        revealed = view.hand_results[-1].hands if view.phase == Phase.GAME_OVER and view.hand_results else []
        for q in range(n):
            if q != me:
                shown = (C.to_mask(view.pending), len(view.pending_jokers)) if q == mover else (0, 0)
                public[q] = (sorted(revealed[q]) if revealed else
                             public_hand(multiset(list(view.known[(q - me) % n])), *shown))
        seen = list(view.hand) + list(view.discard_pile) + [card for cards in public.values() for card in cards]
        for meld in view.melds:
            seen += [JOKER if card in meld.jokers else card for card in meld.cards]
        pool = unseen_pool(view.rules.full_deck(), seen)
        hands, dealt = [], 0
        for q in range(n):
            hidden = view.hand_sizes[(q - me) % n] - len(public[q]) if q != me else 0
            hands.append(list(view.hand) if q == me else public[q] + pool[dealt:dealt + hidden])
            dealt += hidden
        if len(pool) - dealt != view.stock_size:
            raise ValueError(f"the view's hands, stock, pile and table do not hold the game's "
                             f"{view.rules.deck_size} cards")
        template = cls._read_dict(dict_from_view(view, hands, pool[dealt:]))
        constrained = mover is not None and mover != me and view.phase == Phase.MELD
        for _ in range(VIEW_SAMPLE_TRIES):
            state = template._redeal(public, pool, rng)
            if not constrained or state._turn_can_go_on():
                state._check_rules()
                return state
        raise ValueError(f"no deal of the unseen cards lets player {mover} finish its turn: the view is "
                         "not one a game reaches")

    def _redeal(self, public: dict[int, list[int]], pool: list[int] | None, rng: random.Random) -> Rummy500State:
        """A copy whose seats in ``public`` get their public cards plus random ones from the
        pool (the stock and those seats' hidden cards when ``pool`` is None), the rest the stock."""
        new = self.clone()
        if pool is None:
            pool = list(self.stock)
            for q, shown in public.items():
                rest = self.hand_cards(q)
                for card in shown:
                    rest.remove(card)
                pool += rest
        pool = list(pool)
        rng.shuffle(pool)
        for q, shown in public.items():
            k = self.sizes[q] - len(shown)
            new.hands[q] = multiset(shown + pool[:k])
            pool = pool[k:]
        new.stock = pool
        new._legal = None
        return new

    def _turn_can_go_on(self) -> bool:
        """The player to move has an action that keeps its turn going (cancelling aside), and
        holds no hidden copy of its banned card: that card was taken this turn, and a card
        taken stays known while the hand holds a copy (so a banned card played already left
        no copy behind)."""
        p, banned = self.current_player, self.banned
        if banned >= 0 and ms_count(self.hands[p], banned) and not ms_count(self.known[p], banned):
            return False
        return any(a != CANCEL for a in self.legal_actions())


def replay(config: Rummy500Config, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None, daily_date: str | None = None) -> Rummy500State:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck, first dealer and daily date the game was given, if any (``to_dict`` records them)."""
    state = Rummy500State(config, seed, deck, dealer, daily_date)
    for a in actions:
        state.apply(a)
    return state
