"""Rummy 500's state dicts (docs/rummy500.md#state-dicts): writing the whole state as a plain
JSON-able dict, and reading one back, every field checked as it is read (each meld and its
owner, each hand result), then that the state is one the rules can reach (dict_checks.py).
``Rummy500StateDict`` holds these as methods of ``Rummy500State``, which inherits them;
``dict_from_view`` writes the dict of a state a seat's view describes, for
``Rummy500State.sample_from_view``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar, TypeVar

from rummy_envs import cards as C
from rummy_envs.games.rummy500.actions import JOKER, MAX_MELDS, MAX_PILE, NUM_ACTIONS, Phase
from rummy_envs.games.rummy500.dict_checks import Rummy500DictChecks, founders
from rummy_envs.games.rummy500.melds import Meld, classify_ordered, ms_count, multiset, multiset_cards
from rummy_envs.games.rummy500.options import GAME, Rummy500Config
from rummy_envs.games.rummy500.scoring import HandResult, hand_scores, multiset_points
from rummy_envs.games.rummy500.view import Rummy500View
from rummy_envs.options import check_date
from rummy_envs.state_dicts import FORMAT_VERSION, Fields, card_count_error, field_error, read_header, read_options


STATE_KEYS = ("format_version", "game", "options", "seed", "daily_date", "initial_deck", "first_dealer", "hand_index",
              "dealer", "phase", "current_player", "hands", "stock", "discard_pile", "melds", "known", "pending",
              "pending_jokers", "target", "banned", "turns", "reshuffles", "totals", "winners", "hand_results",
              "truncated", "history")
MELD_KEYS = ("cards", "jokers", "credit", "owner")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(HandResult))
HAND_KINDS = ("out", "stock_exhausted", "turn_cap")
_State = TypeVar("_State", bound="Rummy500StateDict")


class Rummy500StateDict(Rummy500DictChecks):
    """Writing and reading the state dict, as methods of ``Rummy500State``."""

    config_class: ClassVar[type[Rummy500Config]] = Rummy500Config

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able description of the whole state (cards as strings)."""
        fmt = C.format_card
        cards = lambda ids: [fmt(c) for c in ids]  # noqa: E731
        return {
            "format_version": FORMAT_VERSION,
            "game": GAME,
            "options": dataclasses.asdict(self.config),
            "seed": self.seed,
            "daily_date": self.daily_date,
            "initial_deck": None if self.initial_deck is None else cards(self.initial_deck),
            "first_dealer": self.first_dealer,
            "hand_index": self.hand_index,
            "dealer": self.dealer,
            "phase": self.phase.name,
            "current_player": self.current_player,
            "hands": [cards(self.hand_cards(q)) for q in range(self.n)],
            "stock": cards(reversed(self.stock)),
            "discard_pile": cards(self.pile),
            "melds": [{"cards": cards(m.ordered()), "jokers": cards(C.from_mask(m.jokers)),
                       "credit": [m.credit[c] for c in m.ordered()], "owner": m.owner} for m in self.melds],
            "known": [cards(multiset_cards(k)) for k in self.known],
            "pending": cards(C.from_mask(self.pending & ~self.pending_jokers)),
            "pending_jokers": cards(C.from_mask(self.pending_jokers)),
            "target": fmt(self.target) if self.target >= 0 else None,
            "banned": fmt(self.banned) if self.banned >= 0 else None,
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "totals": list(self.totals),
            "winners": list(self.winners),
            "hand_results": [dataclasses.asdict(r) for r in self.hand_results],
            "truncated": self.truncated,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls: type[_State], data: Any) -> _State:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field
        (docs/rummy500.md#state-dicts lists the fields).

        Missing keys take the values of a fresh hand: a scenario may give just ``hands``,
        ``stock``, ``discard_pile``, ``melds``, ``phase``, ``current_player`` and ``dealer``.
        Every card of the game must be somewhere (hands, stock, pile, table).
        """
        state = cls._read_dict(data)
        state._check_rules()
        return state

    @classmethod
    def _read_dict(cls: type[_State], data: Any) -> _State:
        """The state of a dict, every field read and checked but not yet the rules
        (``_check_rules``), which ``from_dict`` adds."""
        fields = Fields(data, STATE_KEYS)
        read_header(fields, GAME)
        config = read_options(fields, cls.config_class)
        n = config.num_players
        daily_date = fields.optional_text("daily_date", None)
        if daily_date is not None:
            if config.deal_seed_mode != "daily":
                raise fields.error("daily_date", "only the daily deal (deal_seed_mode='daily') has a date")
            try:
                check_date("daily_date", daily_date)
            except ValueError as err:
                raise fields.error("daily_date", str(err)) from None
        dealer = fields.integer("dealer", 0, 0, n - 1, "the dealer's seat")
        hand_index = fields.integer("hand_index", 0, 0)
        deck = fields.optional_cards("initial_deck", None, jokers=True)
        if deck is not None and (problem := card_count_error(deck, config.full_deck())):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer, daily_date)
        if hand_index:
            state.hand_index = hand_index
            state._deal(dealer, None)
        state.first_dealer = fields.integer("first_dealer", (dealer - hand_index) % n, 0, n - 1)
        state._read_fields(fields)
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types, ranges, that every
        card of the game is in exactly one place and that each meld is one."""
        cfg, n = self.config, self.n
        written = f.has("hands")
        hands = f.card_rows("hands", n, jokers=True) if written else [self.hand_cards(q) for q in range(n)]
        stock = f.cards("stock", [] if written else self.stock[::-1], jokers=True)
        pile = f.cards("discard_pile", [] if written else self.pile, jokers=True)
        melds = [_read_meld(m, cfg) for m in f.records("melds", MELD_KEYS, [])]
        placed = [card for hand in hands for card in hand] + stock + pile
        for cards, jokers, _credit, _owner in melds:
            placed += [JOKER if jokers >> c & 1 else c for c in cards]
        if problem := card_count_error(placed, cfg.full_deck()):
            raise field_error(["hands", "stock", "discard_pile", "melds"], problem)
        if len(melds) > MAX_MELDS or len(pile) > MAX_PILE:
            raise field_error(["melds", "discard_pile"], f"at most {MAX_MELDS} melds and {MAX_PILE} discards fit the "
                                                         "action space")
        self.hands = [multiset(h) for h in hands]
        self.sizes = [len(h) for h in hands]
        self.stock, self.pile = stock[::-1], pile
        self.melds, self.table_once, self.table_twice, self.table_jokers = [], 0, 0, [0, 0]
        self.credited = [[0, 0] for _ in range(n)]
        for i, (cards, jokers, credit, owner) in enumerate(melds):
            self._lay_meld(i, cards, jokers, credit, owner)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, n - 1,
                                        "the seat to move, -1 once the game is over")
        known = f.card_rows("known", n, [[] for _ in range(n)], jokers=True)
        for q, cards in enumerate(known):
            if Counter(cards) - Counter(hands[q]):
                raise f.error(f"known[{q}]", f"cards not in seat {q}'s hand: "
                                             f"{C.format(sorted((Counter(cards) - Counter(hands[q])).elements()))}")
        self.known = [multiset(k) for k in known]
        pending = f.cards("pending", [])
        pending_jokers = f.cards("pending_jokers", [])
        if len(set(pending + pending_jokers)) != len(pending + pending_jokers):
            raise field_error(["pending", "pending_jokers"], "a card of the pending group appears twice")
        self.pending_jokers = C.to_mask(pending_jokers)
        self.pending = C.to_mask(pending) | self.pending_jokers
        self.target = f.optional_card("target", None, jokers=True)
        self.banned = f.optional_card("banned", None, jokers=True)
        behind = 0 if over else (self.current_player - self.dealer - 1) % n  # turns from the dealer's left to the mover
        self.turns = f.integer("turns", behind, 0, cfg.max_turns_per_hand)
        self.reshuffles = f.integer("reshuffles", 0, 0)
        self.totals = f.integers("totals", [0] * n, n, meaning="a seat's match total")
        self.winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
        self.hand_results = [_read_result(r, cfg) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    def _lay_meld(self, index: int, cards: list[int], jokers: int, credit: list[int], owner: int) -> None:
        """Put meld ``index`` of a dict (read by ``_read_meld``) on the table: no identity on the
        table more often than there are decks."""
        if C.to_mask(cards) & self.table_full:
            raise field_error(f"melds[{index}].cards", "a card is on the table more often than there are decks")
        is_set, key, lo, hi = classify_ordered(cards)  # type: ignore[misc]  # _read_meld checked the shape
        meld = Meld(is_set, key, lo, hi, 0, 0, {}, owner)
        self.melds.append(meld)
        for card, seat in zip(cards, credit):
            self._record_on_table(meld, 1 << card, jokers & 1 << card, seat)


def _read_meld(f: Fields, config: Rummy500Config) -> tuple[list[int], int, list[int], int]:
    """One ``melds`` entry: its identities (a set or a sequence in table order), the bitmask of
    those held by jokers, the seat credited with each card and the owner. The owner is one of
    the ``founders`` (credited with the three or more cards it melded); with
    ``layoff_credit="meld_owner"`` it is credited with every card. Left out, the credit is
    the owner's for every card, and the owner the first founder (seat 0 if neither is given)."""
    cards = f.cards("cards")
    shape = classify_ordered(cards)
    if shape is None:
        raise f.error("cards", f"{C.format(cards) or 'nothing'} is not a set or a sequence (in table order, from "
                               "its low end)")
    jokers = C.to_mask(f.cards("jokers", []))
    if jokers & ~C.to_mask(cards):
        raise f.error("jokers", "its jokers must stand for cards of the meld")
    n = config.num_players
    owner = f.integer("owner", 0, 0, n - 1, "the seat that melded it")
    credit = f.integers("credit", [owner] * len(cards), len(cards), 0, n - 1, "a seat for each card")
    possible = founders(credit, shape[0])
    if not possible:
        raise f.error("credit", "no seat is credited with the cards of a new meld (three of a set, three in a row "
                                "of a sequence), so nobody melded it")
    if not f.has("owner"):
        owner = possible[0]
    if owner not in possible:
        raise f.error(["owner", "credit"], f"seat {owner} melded it, so it is credited with the cards of that new "
                                           f"meld (three of a set, three in a row of a sequence); only seat(s) "
                                           f"{possible} could have")
    if config.layoff_credit == "meld_owner" and any(seat != owner for seat in credit):
        raise f.error("credit", "with layoff_credit='meld_owner' every card is credited to the owner")
    return cards, jokers, credit, owner


def _seat_values(f: Fields, key: str, n: int) -> list[int]:
    """A list of one int per seat, or an empty list (a hand-written result may leave it out)."""
    values = f.integers(key, [])
    if values and len(values) != n:
        raise f.error(key, f"expected {n} entries (one per seat) or none, got {len(values)}")
    return values


def _read_result(f: Fields, config: Rummy500Config) -> HandResult:
    """One ``hand_results`` entry (``dataclasses.asdict`` of a ``HandResult``, cards as ids)."""
    n = config.num_players
    kind = f.choice("kind", HAND_KINDS)
    went_out = f.integer("went_out", -1, -1, n - 1)
    if (kind == "out") != (went_out >= 0):
        raise f.error(["kind", "went_out"], "a hand ends 'out' exactly when a seat went out")
    points = f.integers("points", length=n, meaning="a seat's points for the hand")
    table, in_hand = (_seat_values(f, key, n) for key in ("table_points", "hand_points"))
    if table and in_hand:
        expected = hand_scores(table, in_hand, went_out, config.out_bonus)
        if points != expected:
            raise f.error("points", f"expected {expected}: table points minus hand points, plus the out bonus")
    hands = f.card_rows("hands", n, jokers=True) if f.items("hands", []) else []
    if went_out >= 0 and (hands and hands[went_out] or in_hand and in_hand[went_out]):
        raise f.error(["hands", "hand_points"], f"seat {went_out} went out, so its hand is empty")
    if hands and in_hand:
        expected = [multiset_points(multiset(h), config.joker_value) for h in hands]
        if in_hand != expected:
            raise f.error("hand_points", f"expected {expected}, the points of the hands shown")
    melds, on_table = [], [0] * n
    for meld in f.records("melds", MELD_KEYS, []):
        cards, jokers, credit, owner = _read_meld(meld, config)
        melds.append({"cards": cards, "jokers": C.from_mask(jokers), "credit": credit, "owner": owner})
        placed = Meld(*classify_ordered(cards), C.to_mask(cards), jokers, {}, owner)  # type: ignore[misc]
        for card, seat in zip(cards, credit):
            on_table[seat] += placed.value(card, config.joker_value)
    if melds and table and table != on_table:
        raise f.error("table_points", f"expected {on_table}, the points of the melds shown by their credit")
    return HandResult(kind, went_out, points, table, in_hand, hands, melds)


def dict_from_view(view: Rummy500View, hands: list[list[int]], stock: list[int]) -> dict[str, Any]:
    """The state dict of the position ``view`` shows, given every seat's hand (absolute seats)
    and the stock (the next card drawn first). What no view holds takes a neutral value: the
    seed 0, no initial deck and an empty history; the first dealer follows from the dealer,
    as the deal passes left after each hand."""
    n, me = view.num_players, view.player
    seat = lambda rel: (rel + me) % n  # noqa: E731 - the absolute seat of a seat relative to the viewer
    by_seat = lambda values: [values[(q - me) % n] for q in range(n)]  # noqa: E731 - relative order to absolute
    dealer, hand_index = seat(view.dealer), view.hand_number - 1
    return {
        "format_version": FORMAT_VERSION,
        "game": GAME,
        "options": dataclasses.asdict(view.rules),
        "seed": 0,
        "daily_date": view.daily_date,
        "initial_deck": None,
        "first_dealer": (dealer - hand_index) % n,
        "hand_index": hand_index,
        "dealer": dealer,
        "phase": view.phase.name,
        "current_player": -1 if view.to_move is None else seat(view.to_move),
        "hands": hands,
        "stock": stock,
        "discard_pile": list(view.discard_pile),
        "melds": [{"cards": list(m.cards), "jokers": list(m.jokers), "credit": [seat(q) for q in m.credit],
                   "owner": seat(m.owner)} for m in view.melds],
        "known": [list(cards) for cards in by_seat(view.known)],
        "pending": list(view.pending),
        "pending_jokers": list(view.pending_jokers),
        "target": view.target,
        "banned": view.banned,
        "turns": view.turns,
        "reshuffles": view.reshuffles,
        "totals": by_seat(view.scores),
        "winners": [seat(q) for q in view.winners],
        "hand_results": [dataclasses.asdict(r) for r in view.hand_results],
        "truncated": view.truncated,
        "history": [],
    }
