"""A game of Least Count in progress: ``LeastCountState`` (the deal, the turn, the showdown and
the rounds of a match), the per-seat ``LeastCountView``, and ``replay``.

The turn (docs/least_count.md#turn): at ``TURN_START`` the player to move may declare
(``may_declare``) or discard a legal set (``fast_legal_discards``, the fast path of
``rules.legal_discards``); the discard waits in ``pending`` while the same player picks one
card of the open set or the top of the closed deck (``PICK``); then the old open set dies,
the discard opens, and the next seat still in the match moves. A declaration, or the turn
cap, ends the round in the showdown (``_showdown``: ``scoring.score_round``, then
``scoring.match_after_round`` in a match).

Dealing is internal: round ``k``'s deck is ``rules.deal_order(config, seed, k)``, so the
seed plus the action history replays a game exactly.
"""

from __future__ import annotations

import random
from bisect import insort
from dataclasses import dataclass
from itertools import compress
from typing import ClassVar

from rummy_envs import cards as C
from rummy_envs.errors import action_id
from rummy_envs.games.base import copy_with_lists, illegal_action, unseen_pool
from rummy_envs.games.least_count.fast import fast_legal_discards
from rummy_envs.games.least_count.rules import (
    DECLARE,
    DISCARD,
    GAME,
    MAX_HAND,
    PICK_CLOSED,
    PICK_OPEN,
    LeastCountConfig,
    Phase,
    action_to_str,
    card_values,
    deal_order,
    first_dealer,
    str_to_action,
    subset_cards,
)
from rummy_envs.games.least_count.scoring import RoundResult, match_after_round, score_round
from rummy_envs.games.least_count.state_dict import LeastCountStateDict

_TURN_START, _PICK, _GAME_OVER = Phase  # plain names: an enum member looked up on its class costs more
_PICK_OPEN_ACTION = tuple(range(PICK_OPEN, PICK_CLOSED))  # by card id
# _SEATS_FROM[n][dealer]: the n seats clockwise from the dealer's left, the dealer last.
_SEATS_FROM = [[tuple((dealer + k) % n for k in range(1, n + 1)) for dealer in range(n)] for n in range(11)]
_ALL_POSITIONS = (1 << MAX_HAND) - 1
_POSITION_FLAGS = tuple(tuple(bool(mask >> i & 1) for i in range(MAX_HAND)) for mask in range(1 << MAX_HAND))


@dataclass(frozen=True)
class LeastCountView:
    """Exactly what one player may see, seats relative (index 0 is this player): its own
    hand and count, the public piles (open set, pending discard, dead pile, the closed
    deck's size, the cut card), per seat the hand sizes, the cards known from open sets,
    match totals, eliminations and finished turns, the round and turn counters, the match
    outcome once over, the rules options and, on its turn, the legal actions."""

    player: int
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None
    dealer: int
    hand: tuple[int, ...]  # sorted: DISCARD positions index it
    count: int  # my hand's count
    open_set: tuple[int, ...]  # the previous player's discard, which may be picked from
    pending_discard: tuple[int, ...]  # what the player to move has just discarded (PICK phase)
    dead_pile: tuple[int, ...]  # in the order the cards died
    stock_size: int  # cards in the closed deck
    cut_card: int | None
    hand_sizes: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]  # cards each seat picked from an open set and still holds
    totals: tuple[int, ...]
    eliminated: tuple[bool, ...]
    out_round: tuple[int, ...]  # the round after which each seat was eliminated, 0 while it plays
    turn_done: tuple[bool, ...]  # seats that finished a turn this round (may declare)
    turns: int
    round_number: int
    winners: tuple[int, ...]  # the match winners once it is over
    truncated: bool  # the episode was ended by a cap
    rules: LeastCountConfig  # the rules options, which every player knows
    legal_actions: tuple[int, ...]


def _remove_cards(held: list[int], cards: list[int]) -> None:
    """Remove from ``held`` one copy of each of ``cards`` it has (the rest are ignored)."""
    for card in cards:
        if card in held:
            held.remove(card)


class LeastCountState(LeastCountStateDict):
    """A game of Least Count in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[LeastCountConfig]] = LeastCountConfig

    def __init__(self, config: LeastCountConfig | None = None, seed: int = 0, deck: list[int] | None = None,
                 dealer: int | None = None):
        self.config = cfg = config or self.config_class()
        self.n = cfg.num_players
        self.seed = int(seed)
        self.rules = cfg.discard_rules
        self.history: list[int] = []
        self.round_index = 0
        self.hand_results: list[RoundResult] = []
        self.totals = [0] * self.n
        self.out_round = [0] * self.n  # the round after which each seat was eliminated; 0 = active
        self.winners: list[int] = []
        self.truncated = False
        if dealer is None:
            dealer = first_dealer(self.seed, self.n)
        elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < self.n:
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, cfg.full_deck())
        self.first_dealer = dealer
        self._deal(dealer, self.initial_deck)

    # -- dealing and turns (docs/least_count.md#deal) ------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        """Deal the round ``round_index`` from ``deck`` (the first card dealt first), or from the
        seed's ``deal_order`` when it is None."""
        cfg = self.config
        order = deal_order(cfg, self.seed, self.round_index) if deck is None else deck
        n, out_round = self.n, self.out_round
        seats = [q for q in _SEATS_FROM[n][dealer] if not out_round[q]]  # dealt from the dealer's left
        self.dealer = dealer
        self.hands: list[list[int]] = [[] for _ in range(n)]
        dealt = len(seats) * cfg.hand_size
        for k, q in enumerate(seats):  # one card at a time around the table
            self.hands[q] = sorted(order[k:dealt:len(seats)])
        turned = dealt  # the next card turned up: the cut card, then the open card
        self.cut_card = -1
        if cfg.cut_joker:
            self.cut_card, turned = order[turned], turned + 1
        self.open_set: list[int] = []
        if cfg.initial_open_card:
            self.open_set, turned = [order[turned]], turned + 1
        self.stock = order[turned:][::-1]  # pop() draws the top card
        self.dead: list[int] = []
        self.pending: list[int] = []  # the mover's discard until it picks
        self.known: list[list[int]] = [[] for _ in range(self.n)]
        self.turn_done = [False] * self.n
        self.turns = 0
        self.reshuffles = 0
        self.values = card_values(None if self.cut_card < 0 else self.cut_card)
        self._begin_turn(seats[0])

    def _begin_turn(self, player: int) -> None:
        self.current_player = player
        self.phase = _TURN_START
        self._legal: list[int] | None = None

    def next_active(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` still in the match."""
        n, out_round = self.n, self.out_round
        q = (seat + 1) % n
        while out_round[q]:
            if q == seat:
                raise ValueError("no seat is still in the match")
            q = (q + 1) % n
        return q

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == _GAME_OVER

    def active_seats(self) -> list[int]:
        """Seats still in the match, in seat order."""
        return [q for q in range(self.n) if not self.out_round[q]]

    def count(self, player: int) -> int:
        """The value of a hand: A = 1, 2-10 face value, J/Q/K = 10, jokers 0."""
        return sum(map(self.values.__getitem__, self.hands[player]))

    def may_declare(self, player: int) -> bool:
        """Whether ``player`` may declare at the start of its turn (docs/least_count.md#declaring):
        not in its first turn of the round (unless ``declare_timing="start_of_any_turn"``),
        and with a count of at most ``declare_max_count`` when that is set."""
        cfg = self.config
        if not self.turn_done[player] and cfg.declare_timing == "start_of_turn":
            return False
        return cfg.declare_max_count is None or self.count(player) <= cfg.declare_max_count

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> list[int]:
        """What each phase offers: at ``TURN_START`` DECLARE when allowed and every legal
        discard; at ``PICK`` each card of the open set (once per id) and the closed deck while
        it or the dead pile has a card."""
        p = self.current_player
        if self.phase == _TURN_START:
            discards = fast_legal_discards(self.hands[p], self.rules)  # DISCARD - 1 + subset is the subset
            return [DECLARE, *discards] if self.may_declare(p) else discards
        if self.phase == _PICK:
            opens = self.open_set  # sorted; with copies an id may be there twice
            out = list(map(_PICK_OPEN_ACTION.__getitem__, opens if len(opens) < 2 else sorted(set(opens))))
            if self.stock or self.dead:
                out.append(PICK_CLOSED)
            return out
        return []

    def action_to_str(self, action: int) -> str:
        """``rules.action_to_str``: the readable name of an action id."""
        return action_to_str(action)

    def str_to_action(self, text: str) -> int:
        """``rules.str_to_action``: the action id of a name (ValueError otherwise)."""
        return str_to_action(text)

    def describe(self, action: int) -> str:
        """``action_to_str`` plus the cards a discard takes from the hand of the player to move."""
        name = action_to_str(action)
        if DISCARD <= action < PICK_OPEN and self.current_player >= 0:
            return f"{name} = {C.format(subset_cards(self.hands[self.current_player], action)) or '-'}"
        return name

    # -- scores ----------------------------------------------------------------------------
    def scores(self) -> list[int]:
        """Larger is better: minus the round's points once it is over (hand mode), minus the
        match totals in match mode."""
        if self.config.episode == "match":
            return [-t for t in self.totals]
        if self.is_terminal() and self.hand_results:
            return [-x for x in self.hand_results[-1].points]
        return [0] * self.n

    def standings(self) -> list[int]:
        """What ranks the seats for ``reward="win_loss"``, larger is better. One round: the
        scores, seats out of the match (a match's round played as one episode) below the
        round's players. A match to the last player standing: minus each seat's finishing
        place (1 = best), seats still in ahead of eliminated ones, later eliminations ahead
        of earlier, then lower totals first, equal seats sharing a place. To the first
        elimination: the scores (minus the totals)."""
        cfg = self.config
        if cfg.episode == "match" and cfg.match_end == "last_player_standing":
            keys = [(not self.out_round[q], self.out_round[q], -self.totals[q]) for q in range(self.n)]
            return [-1 - sum(other > key for other in keys) for key in keys]
        scores = self.scores()
        if cfg.episode == "hand" and any(self.out_round):  # last, as they stay to the end
            below = min(scores) - 1
            return [below if out else score for score, out in zip(scores, self.out_round)]
        return scores

    def returns(self) -> list[float]:
        """Zero-sum points: per round, each seat dealt in gets the mean points of that round's
        players minus its own (what ``reward="points"`` pays), summed over the episode."""
        out = [0.0] * self.n
        rounds = self.hand_results if self.config.episode == "match" else self.hand_results[-1:]
        if self.config.episode == "hand" and not self.is_terminal():
            rounds = []
        for result in rounds:
            if not result.players:  # a hand-written record of an earlier round, without seats or points
                continue
            mean = sum(result.points[q] for q in result.players) / len(result.players)
            for q in result.players:
                out[q] += mean - result.points[q]
        return out

    # -- bounds of any game (OpenSpiel's GameInfo) -----------------------------------------
    @classmethod
    def utility_bounds(cls, config: LeastCountConfig) -> tuple[float, float]:
        """The least and the greatest value any seat's ``returns()`` can take at any point of a
        game under ``config`` dealt from the start (truncated games included; a state dict may
        give a match any totals and record any earlier rounds, which no bound can know).

        A hand never grows (each turn discards at least one card and picks one), so a count
        lies in ``[L, 10 h]``: h the ``hand_size``, L = 0 with printed jokers or a cut card,
        else 1 (a hand keeps a card). A round pays each seat dealt in at most
        ``S = 10 h - L`` (valid declaration or timeout: a count minus a lower one) or, the
        false declarer alone, ``F' = false_declare_penalty + D - L`` (D the highest count that
        may declare: 10 h, or less with ``declare_max_count``). With m seats dealt in a seat
        gets ``mean - points``: at most ``(m-1) S / m`` (it pays 0, the others S) or ``F' / m``
        (another declared falsely), at least ``-(m-1) P / m``, ``P = max(S, F')``.

        One round (m = n, returns 0 until it ends): ``[-(n-1) P / n, max((n-1) S, F') / n]``.

        A match: every round some seat dealt in pays 0 (the valid declarer, a lowest count at
        the timeout, any other seat at a false declaration), so no round puts every seat past
        the threshold and a seat dealt in holds at most E (``elimination_score``, less one with
        ``eliminate_on_equal``): a total is at most ``T = min(E + P, max_rounds P)``. Seat q's
        return is ``sum_r (sum_{j != q} p_jr - (m_r - 1) p_qr) / m_r``. It is at least
        ``-(n-1)/n T`` (m_r <= n), and at most ``T (1/2 + 1/3 + ... + 1/n)``: rank the other
        seats by their last round, and the k-th last to leave shares every round it scores in
        with q and the k-1 seats after it, m_r >= k + 1.
        """
        n, limit = config.num_players, config.elimination_score - config.eliminate_on_equal
        low = 0 if config.num_printed_jokers or config.cut_joker else 1
        high = max(C.GIN_VALUES) * config.hand_size
        declared = high if config.declare_max_count is None else min(high, config.declare_max_count)
        spread, false_points = high - low, config.false_declare_penalty + max(declared - low, 0)
        points = max(spread, false_points)
        if config.episode == "hand":
            return -(n - 1) * points / n, max((n - 1) * spread, false_points) / n
        total = min(limit + points, config.max_rounds * points)
        return -(n - 1) * total / n, total * sum(1 / m for m in range(2, n + 1))

    @classmethod
    def max_game_length(cls, config: LeastCountConfig) -> int:
        """An upper bound on the number of actions ``apply`` accepts in one game (episode) under
        ``config``, every cap included.

        A turn is a discard and a pick, and the round times out after ``max_turns_per_round``
        T turns (a single card is always a legal discard, and a pick is always offered, so no
        turn stalls); a declaration ends it at the start of a turn after at most T - 1 of them.
        A round is therefore at most 2T actions (reached at the timeout), and a match plays at
        most ``max_rounds`` rounds (all of them timeouts that eliminate nobody, possibly).
        """
        rounds = config.max_rounds if config.episode == "match" else 1
        return 2 * config.max_turns_per_round * rounds

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was.
        DECLARE: the showdown. A DISCARD: its cards leave the hand (and its known cards) to
        wait in ``pending``, and the same player picks. A pick: the card joins the hand (known
        to all if it came from the open set), and the turn ends."""
        as_int = action if type(action) is int else action_id(action)
        if as_int not in (self._legal or self.legal_actions()):
            raise illegal_action(self, action)
        action = as_int
        self.history.append(action)
        self._legal = None
        p = self.current_player
        if action == DECLARE:
            self._showdown(p)
        elif action < PICK_OPEN:
            hand = self.hands[p]
            subset = action - DISCARD + 1
            self.pending = list(compress(hand, _POSITION_FLAGS[subset]))
            self.hands[p] = list(compress(hand, _POSITION_FLAGS[~subset & _ALL_POSITIONS]))
            if self.known[p]:
                _remove_cards(self.known[p], self.pending)
            self.phase = _PICK
        elif action == PICK_CLOSED:
            if not self.stock:
                self._reshuffle()
            insort(self.hands[p], self.stock.pop())
            self._end_turn(p)
        else:
            card = action - PICK_OPEN
            self.open_set.remove(card)
            insort(self.hands[p], card)
            insort(self.known[p], card)
            self._end_turn(p)

    def _reshuffle(self) -> None:
        """The dead pile, shuffled from the seed, becomes the closed deck."""
        cards = C.keyed_order(self.dead, f"{GAME}-reshuffle:{self.seed}:{self.round_index}:{self.reshuffles}")
        self.reshuffles += 1
        self.dead = []
        self.stock = cards[::-1]

    def _end_turn(self, p: int) -> None:
        """The old open set dies, the mover's discard opens, and the next player moves (or the
        round times out)."""
        self.dead += self.open_set
        self.open_set, self.pending = self.pending, []  # a discard is sorted, as the hand it left
        self.turn_done[p] = True
        self.turns += 1
        if self.turns >= self.config.max_turns_per_round:
            self._showdown(-1)
            return
        self._begin_turn(self.next_active(p))

    def _showdown(self, declarer: int) -> None:
        """Score the round (a declaration by ``declarer``, or the timeout when it is -1); in a
        match, eliminate and deal the next round or end the match; else end the episode."""
        cfg = self.config
        players = self.active_seats()
        counts = [0 if out else self.count(q) for q, out in enumerate(self.out_round)]
        kind, points = score_round(cfg, declarer, players, counts)
        self.totals = [t + x for t, x in zip(self.totals, points)]
        rounds_played = self.round_index + 1  # also right when a state dict leaves earlier results out
        match = None if cfg.episode == "hand" else match_after_round(cfg, players, self.totals, rounds_played)
        eliminated = match.eliminated if match else []
        for q in eliminated:
            self.out_round[q] = rounds_played
        self.hand_results.append(RoundResult(kind, declarer, players, counts, points,
                                             [list(h) for h in self.hands], list(self.totals), eliminated,
                                             kind == "timeout", self.cut_card))
        self._legal = None
        if match is None:
            self._finish(truncated=kind == "timeout", winners=[])
        elif match.over:
            self._finish(truncated=match.truncated, winners=match.winners)
        else:
            self.round_index += 1
            self._deal(self.next_active(self.dealer), None)

    def _finish(self, truncated: bool, winners: list[int]) -> None:
        self.truncated = truncated
        self.winners = winners
        self.phase, self.current_player = _GAME_OVER, -1

    # -- views -----------------------------------------------------------------------------
    def player_view(self, player: int) -> LeastCountView:
        """What ``player`` may see now (see ``LeastCountView``)."""
        n = self.n
        seats = [(player + k) % n for k in range(n)]
        mine = self.current_player == player
        return LeastCountView(
            player=player,
            num_players=n,
            phase=self.phase,
            is_my_turn=mine,
            to_move=None if self.current_player < 0 else (self.current_player - player) % n,
            dealer=(self.dealer - player) % n,
            hand=tuple(self.hands[player]),
            count=self.count(player),
            open_set=tuple(self.open_set),
            pending_discard=tuple(self.pending),
            dead_pile=tuple(self.dead),
            stock_size=len(self.stock),
            cut_card=None if self.cut_card < 0 else self.cut_card,
            hand_sizes=tuple(len(self.hands[q]) for q in seats),
            known=tuple(tuple(self.known[q]) for q in seats),
            totals=tuple(self.totals[q] for q in seats),
            eliminated=tuple(bool(self.out_round[q]) for q in seats),
            out_round=tuple(self.out_round[q] for q in seats),
            turn_done=tuple(self.turn_done[q] for q in seats),
            turns=self.turns,
            round_number=self.round_index + 1,
            winners=tuple((q - player) % n for q in self.winners),
            truncated=self.truncated,
            rules=self.config,
            legal_actions=tuple(self.legal_actions()) if mine else (),
        )

    # -- search API (docs/least_count.md#search-api) -----------------------------------------
    def clone(self) -> LeastCountState:
        """An independent copy (cheap: ints and short lists)."""
        new = copy_with_lists(self, ("history", "totals", "out_round", "winners", "hand_results", "open_set",
                                     "stock", "dead", "pending", "turn_done"))
        new.hands = [list(h) for h in self.hands]
        new.known = [list(k) for k in self.known]
        return new

    def hidden_cards(self, player: int) -> list[int]:
        """The cards of ``player``'s hand nobody else knows (those not picked from an open set)."""
        rest = list(self.hands[player])
        _remove_cards(rest, self.known[player])
        return rest

    def sample_determinization(self, player: int, rng: random.Random) -> LeastCountState:
        """A copy in which every card hidden from ``player`` (the other hands but their known
        cards, and the closed deck's order) is redealt at random. Once the game is over the
        last showdown has shown every hand, so only the closed deck is shuffled."""
        shown = self.is_terminal() and bool(self.hand_results) and bool(self.hand_results[-1].hands)
        others = [] if shown else [q for q in range(self.n) if q != player and self.hands[q]]
        pool = list(self.stock)
        for q in others:
            pool += self.hidden_cards(q)
        rng.shuffle(pool)
        new = self.clone()
        for q in others:
            k = len(self.hands[q]) - len(self.known[q])
            new.hands[q] = sorted(self.known[q] + pool[:k])
            pool = pool[k:]
        new.stock = pool
        new._legal = None
        return new

    @classmethod
    def sample_from_view(cls, view: LeastCountView, rng: random.Random) -> LeastCountState:
        """A full state consistent with ``view`` (docs/least_count.md#sampling): the cards the
        seat cannot place (``base.unseen_pool``) shuffled, then dealt to each other hand
        beside its known cards up to its size, in seat order, the rest making the closed
        deck: the zones and sizes ``sample_determinization`` redeals, drawn alike.

        What no seat can know, or what only keys the seeded shuffles, takes neutral values:
        the seed 0, no initial deck, this round's dealer as the first dealer, an empty
        history, no recorded round results (``hand_results``) and no reshuffles yet."""
        n, me = view.num_players, view.player
        relative = [(q - me) % n for q in range(n)]  # by absolute seat: its index in the view
        seen = [*view.hand, *view.open_set, *view.pending_discard, *view.dead_pile]
        seen += [card for known in view.known[1:] for card in known]
        if view.cut_card is not None:
            seen.append(view.cut_card)
        pool = unseen_pool(view.rules.deck_order, seen)
        rng.shuffle(pool)
        hands = [list(view.hand) if q == me else list(view.known[relative[q]]) for q in range(n)]
        for q in range(n):
            if q != me:
                dealt = view.hand_sizes[relative[q]] - len(view.known[relative[q]])
                hands[q] += pool[:dealt]
                pool = pool[dealt:]
        return cls.from_dict({
            "options": view.rules.as_options(),
            "round_index": view.round_number - 1,
            "dealer": (view.dealer + me) % n,
            "phase": view.phase.name,
            "current_player": -1 if view.to_move is None else (view.to_move + me) % n,
            "hands": hands,
            "stock": pool,
            "open_set": list(view.open_set),
            "pending_discard": list(view.pending_discard),
            "dead_pile": list(view.dead_pile),
            "cut_card": view.cut_card,
            "known": [list(view.known[relative[q]]) for q in range(n)],
            "turn_done": [view.turn_done[relative[q]] for q in range(n)],
            "turns": view.turns,
            "totals": [view.totals[relative[q]] for q in range(n)],
            "out_round": [view.out_round[relative[q]] for q in range(n)],
            "winners": sorted((k + me) % n for k in view.winners),
            "truncated": view.truncated,
        })


def replay(config: LeastCountConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None) -> LeastCountState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck and first dealer the game was given, if any (``to_dict`` records them)."""
    state = LeastCountState(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
