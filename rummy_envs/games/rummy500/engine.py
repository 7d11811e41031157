"""Rummy 500 rules engine (2-8 players), pure Python over card ids and bitmasks.

``Rummy500State`` is the whole game: the deal (seeded, or the versioned daily deal), the
turn (draw from the stock, take the top discard, or take a deeper discard with every card
above it), table moves built from micro-actions (pick hand cards into a pending group,
declaring a joker's identity, then commit the group as a new meld or as a layoff onto a
chosen meld end, or cancel), the discard, the end of a hand (going out, the stock running
out, the turn cap), scoring (table points minus hand points, aces 15 or 1 at the bottom of
A-2-3) and, with ``episode="match"``, the game to ``target_score``.

Cards are ids (``rank + 13 * suit``, every joker 52); a hand is a multiset held as
``[once, twice, jokers]``: the bitmask of ids held at least once, the bitmask of ids held
twice (two decks) and the number of jokers. The table holds card *identities*: a joker on
the table stands for the identity it was declared as, so a meld is a bitmask of identities
plus the bitmask of those held by jokers.

The mask of the micro-actions is exact: every action offered can be followed by a legal
commit and the turn can always still be finished (no dead ends). Dealing is internal:
hand ``k`` is shuffled by ``random.Random`` seeded from ``(seed, k)``, or, in the daily
mode, by ``cards.hash_shuffle`` of the versioned daily key, so the seed (or the date and
salt) plus the action history replays a game exactly.
"""

from __future__ import annotations

import dataclasses
import datetime
import random
from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum
from itertools import combinations
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.errors import IllegalActionError, action_id
from rummy_envs.options import build, check_bool, check_choice, check_date, check_int, check_text
from rummy_envs.state_dicts import FORMAT_VERSION, Fields, card_count_error, field_error, read_header, read_options

GAME = "rummy500"
JOKER = C.JOKER
NUM_IDS = C.NUM_CARDS + 1  # card ids with the joker
ROW = M.ROW_MASK
MAX_PILE = 108  # two decks and four jokers
MAX_MELDS = MAX_PILE // 3
DETERMINIZATION_TRIES = 200


class Phase(IntEnum):
    """Decision points of a turn; GAME_OVER ends the episode (hand or match)."""

    DRAW = 0
    MELD = 1  # table micro-actions and the discard
    GAME_OVER = 2


# Action ids: named offsets of one Discrete space.
DRAW_STOCK = 0
END_HAND = 1  # decline the pile when the stock is empty
MELD_NEW = 2  # commit the pending group as a new meld
CANCEL = 3  # put the pending group back
TAKE_DISCARD = 4  # TAKE_DISCARD + position in the pile, 0 = bottom
PICK = TAKE_DISCARD + MAX_PILE  # PICK + card: a natural card into the pending group
PICK_JOKER = PICK + C.NUM_CARDS  # PICK_JOKER + identity: a joker declared as that card
LAY_OFF = PICK_JOKER + C.NUM_CARDS  # LAY_OFF + slot: onto a set, or a sequence's low end
LAY_OFF_HIGH = LAY_OFF + MAX_MELDS  # LAY_OFF_HIGH + slot: onto a sequence's high end
DISCARD = LAY_OFF_HIGH + MAX_MELDS  # DISCARD + card id (52: a joker)
NUM_ACTIONS = DISCARD + NUM_IDS
_SIMPLE_NAMES = {DRAW_STOCK: "DRAW_STOCK", END_HAND: "END_HAND", MELD_NEW: "MELD_NEW", CANCEL: "CANCEL"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()}
_CARD_ACTIONS = {"PICK": (PICK, C.NUM_CARDS), "PICK_JOKER": (PICK_JOKER, C.NUM_CARDS), "DISCARD": (DISCARD, NUM_IDS)}
_NUMBER_ACTIONS = {"TAKE_DISCARD": (TAKE_DISCARD, MAX_PILE), "LAY_OFF": (LAY_OFF, MAX_MELDS),
                   "LAY_OFF_HIGH": (LAY_OFF_HIGH, MAX_MELDS)}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``TAKE_DISCARD(2)``, ``PICK_JOKER(7H)``, ``LAY_OFF_HIGH(0)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    for name, (start, size) in (_NUMBER_ACTIONS | _CARD_ACTIONS).items():
        if start <= action < start + size:
            arg = action - start
            return f"{name}({C.format_card(arg) if name in _CARD_ACTIONS else arg})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    name = text.strip().upper().replace(" ", "")
    if name in _SIMPLE_IDS:
        return _SIMPLE_IDS[name]
    head, _, rest = name.partition("(")
    if not rest.endswith(")"):
        raise ValueError(f"cannot parse action {text!r}")
    arg = rest[:-1]
    if head in _CARD_ACTIONS:
        start, size = _CARD_ACTIONS[head]
        card = C.parse_card(arg)
        if card >= size:
            raise ValueError(f"cannot parse action {text!r}: {head} takes a card, not a joker")
        return start + card
    if head in _NUMBER_ACTIONS and arg.isdigit() and int(arg) < _NUMBER_ACTIONS[head][1]:
        return _NUMBER_ACTIONS[head][0] + int(arg)
    raise ValueError(f"cannot parse action {text!r}")


# ----------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class Rummy500Config(C.MultiDeckDeal):
    """Rules options of rummy_500.md, named as in the spec, plus the episode length and the
    daily deal's date. ``None`` for ``hand_size`` / ``num_decks`` means the spec's default
    for the number of players."""

    game: ClassVar[str] = GAME
    num_players: int = 2
    hand_size: int | None = None
    num_decks: int | None = None
    num_jokers: int = 0
    joker_value: int = 15
    top_discard_must_be_used: bool = False
    target_use_timing: str = "first_table_action"
    allow_rediscard_taken_card: bool = False
    must_discard_to_go_out: bool = False
    layoff_credit: str = "layer"
    stock_end_rule: str = "end_on_decline"
    max_turns_per_hand: int = 300
    out_bonus: int = 0
    episode: str = "hand"
    target_score: int = 500
    tie_break: str = "play_on"
    max_hands: int = 100
    deal_seed_mode: str = "random"
    daily_date: str | None = None
    daily_salt: str = ""

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, 2, 8)
        if self.num_decks is not None:
            check_int("num_decks", self.num_decks, 1, 2)
        check_int("num_jokers", self.num_jokers, 0, 2)
        if self.hand_size is not None:
            check_int("hand_size", self.hand_size, 1)
            if self.num_players * self.hand_size + 1 > self.deck_size:
                raise ValueError(f"option hand_size={self.hand_size!r} is invalid: {self.num_players} hands of "
                                 f"{self.hand_size} and the first discard need more than the {self.deck_size} cards")
        check_int("joker_value", self.joker_value, 0)
        check_choice("target_use_timing", self.target_use_timing, ("first_table_action", "anytime_before_discard"))
        check_choice("layoff_credit", self.layoff_credit, ("layer", "meld_owner"))
        check_choice("stock_end_rule", self.stock_end_rule, ("end_on_decline", "reshuffle_discards"))
        check_int("max_turns_per_hand", self.max_turns_per_hand, 1)
        check_int("out_bonus", self.out_bonus, 0)
        check_choice("episode", self.episode, ("hand", "match"))
        check_int("target_score", self.target_score, 1)
        check_choice("tie_break", self.tie_break, ("play_on", "share"))
        check_int("max_hands", self.max_hands, 1)
        check_choice("deal_seed_mode", self.deal_seed_mode, ("random", "daily"))
        if self.daily_date is not None:
            check_date("daily_date", self.daily_date)
        check_text("daily_salt", self.daily_salt, forbidden="|")
        for name in ("top_discard_must_be_used", "allow_rediscard_taken_card", "must_discard_to_go_out"):
            check_bool(name, getattr(self, name))
        if self.num_players * self.cards_per_hand + 1 > self.deck_size:
            raise ValueError(f"option num_decks={self.num_decks!r} is invalid: {self.num_players} hands of "
                             f"{self.cards_per_hand} need more than the {self.deck_size} cards")

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> Rummy500Config:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    @property
    def decks(self) -> int:
        """Decks in play: ``num_decks``, else one for 2-4 players and two for 5 or more."""
        return self.num_decks if self.num_decks is not None else (1 if self.num_players <= 4 else 2)

    @property
    def cards_per_hand(self) -> int:
        """Cards dealt to each player: ``hand_size``, else 13 with two players and 7 with more."""
        return self.hand_size if self.hand_size is not None else (13 if self.num_players == 2 else 7)

    @property
    def total_jokers(self) -> int:
        return self.num_jokers * self.decks


# ----------------------------------------------------------------------------------------
# Card values, multisets and melds

RANK_POINTS = (15, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
_ROW_POINTS = [sum(RANK_POINTS[r] for r in range(C.NUM_RANKS) if row >> r & 1) for row in range(1 << C.NUM_RANKS)]
_COLUMNS = tuple(sum(1 << (s * C.NUM_RANKS + r) for s in range(C.NUM_SUITS)) for r in range(C.NUM_RANKS))
_SET_SHAPES = tuple(tuple(M.MELDS[r * 5: r * 5 + 5]) for r in range(C.NUM_RANKS))  # 3-sets, then the 4-set
_NEW_SEQUENCES = tuple(entry for entry in M.SEQUENCE_INTERVALS if entry[:2] != (0, 12))  # a full suit: ace high
_NEW_SEQUENCE_ROWS: dict[int, tuple[tuple[int, int, int], ...]] = {}
_ACE_NEIGHBOURS = 1 << 1 | 1 << 12  # the two and the king


def _new_sequences_in(row: int) -> tuple[tuple[int, int, int], ...]:
    found = _NEW_SEQUENCE_ROWS.get(row)
    if found is None:
        found = _NEW_SEQUENCE_ROWS[row] = tuple(e for e in M.sequences_in_row(row) if e[:2] != (0, 12))
    return found


def mask_points(mask: int) -> int:
    """Hand value of the natural cards of a bitmask: aces 15, faces 10, others their rank."""
    return (_ROW_POINTS[mask & ROW] + _ROW_POINTS[mask >> 13 & ROW] + _ROW_POINTS[mask >> 26 & ROW]
            + _ROW_POINTS[mask >> 39 & ROW])


def multiset(cards: list[int]) -> list[int]:
    """``[once, twice, jokers]`` of card ids (at most two copies of a natural id)."""
    out = [0, 0, 0]
    for card in cards:
        _ms_add(out, card)
    return out


def multiset_cards(ms: list[int]) -> list[int]:
    """Sorted card ids of a multiset, copies repeated, jokers last."""
    return sorted(C.from_mask(ms[0]) + C.from_mask(ms[1])) + [JOKER] * ms[2]


def _ms_add(ms: list[int], card: int) -> None:
    if card == JOKER:
        ms[2] += 1
        return
    bit = 1 << card
    if ms[0] & bit:
        if ms[1] & bit:
            raise ValueError(f"more than two copies of {C.format_card(card)}")
        ms[1] |= bit
    else:
        ms[0] |= bit


def _ms_count(ms: list[int], card: int) -> int:
    return ms[2] if card == JOKER else (ms[0] >> card & 1) + (ms[1] >> card & 1)


def _ms_size(ms: list[int]) -> int:
    return ms[0].bit_count() + ms[1].bit_count() + ms[2]


class Meld:
    """A meld on the table: a set (``key`` = rank) or a sequence (``key`` = suit, positions
    ``lo``..``hi`` with the ace at 0 or 13). ``cards`` are identities, ``jokers`` those held
    by jokers, ``credit`` the seat credited with each identity, ``owner`` who melded it."""

    __slots__ = ("is_set", "key", "lo", "hi", "cards", "jokers", "credit", "owner")

    def __init__(self, is_set: bool, key: int, lo: int, hi: int, cards: int, jokers: int, credit: dict[int, int],
                 owner: int) -> None:
        self.is_set, self.key, self.lo, self.hi = is_set, key, lo, hi
        self.cards, self.jokers, self.credit, self.owner = cards, jokers, credit, owner

    def copy(self) -> Meld:
        return Meld(self.is_set, self.key, self.lo, self.hi, self.cards, self.jokers, dict(self.credit), self.owner)

    def ordered(self) -> list[int]:
        """Identities in table order: a set by suit, a sequence from its low end."""
        if self.is_set:
            return C.from_mask(self.cards)
        base = self.key * C.NUM_RANKS
        return [base + pos % C.NUM_RANKS for pos in range(self.lo, self.hi + 1)]

    def value(self, identity: int, joker_value: int) -> int:
        """Points of one card of this meld: a joker its value, an ace at a sequence's low end 1."""
        if self.jokers >> identity & 1:
            return joker_value
        rank = identity % C.NUM_RANKS
        return 1 if rank == 0 and not self.is_set and self.lo == 0 else RANK_POINTS[rank]


def classify(identities: int) -> tuple[bool, int, int, int] | None:
    """``(is_set, key, lo, hi)`` of a new meld of these identities, or None if none: a set
    of 3-4 distinct suits of one rank, or 3+ consecutive cards of one suit, the ace low or
    high (a full suit counts its ace high)."""
    size = identities.bit_count()
    if size < 3:
        return None
    low = (identities & -identities).bit_length() - 1
    rank, suit = low % C.NUM_RANKS, low // C.NUM_RANKS
    if size <= 4 and identities & _COLUMNS[rank] == identities:
        return True, rank, -1, -1
    row = identities >> (suit * C.NUM_RANKS)
    if row & ~ROW:
        return None
    for lo, hi, ranks in _new_sequences_in(row):
        if ranks == row:
            return False, suit, lo, hi
    return None


def classify_ordered(cards: list[int]) -> tuple[bool, int, int, int] | None:
    """Like ``classify`` for identities listed in table order, so a sequence's ace position
    is read from where it stands (first: low, last: high)."""
    found = classify(C.to_mask(cards)) if len(set(cards)) == len(cards) else None
    if found is None or found[0]:
        return found
    suit = found[1]
    positions = [c % C.NUM_RANKS for c in cards]
    if positions[-1] == 0:
        positions[-1] = C.NUM_RANKS
    if any(c // C.NUM_RANKS != suit for c in cards) or positions != list(range(positions[0], positions[0] + len(cards))):
        return None
    return False, suit, positions[0], positions[-1]


# ----------------------------------------------------------------------------------------
# Results and the view


@dataclass
class HandResult:
    """How a hand ended and what each seat scored: ``points = table - hand (+ out bonus)``."""

    kind: str  # "out", "stock_exhausted", "turn_cap"
    went_out: int = -1
    points: list[int] = field(default_factory=list)
    table_points: list[int] = field(default_factory=list)
    hand_points: list[int] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)  # every hand at the end, revealed
    melds: list[dict[str, Any]] = field(default_factory=list)  # the table: cards, jokers, credit, owner


@dataclass(frozen=True)
class MeldView:
    """One table meld as a player sees it; seats relative to the viewer (0 = me)."""

    is_set: bool
    cards: tuple[int, ...]  # identities in table order
    jokers: tuple[int, ...]  # the identities held by jokers
    credit: tuple[int, ...]  # seat credited with each card of ``cards``
    owner: int


@dataclass(frozen=True)
class Rummy500View:
    """Exactly what one player may see, seats relative (index 0 is this player)."""

    player: int
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None
    dealer: int
    hand: tuple[int, ...]
    pending: tuple[int, ...]  # natural cards in the pending group
    pending_jokers: tuple[int, ...]  # identities declared for jokers in it
    discard_pile: tuple[int, ...]  # bottom first
    stock_size: int
    hand_sizes: tuple[int, ...]
    known: tuple[tuple[int, ...], ...]  # cards each seat took from the pile and still holds
    melds: tuple[MeldView, ...]
    target: int | None  # the card that must go on the table before the discard
    banned: int | None  # the card that may not be discarded this turn
    turns: int
    scores: tuple[int, ...]  # match totals
    hand_number: int
    legal_actions: tuple[int, ...]


# ----------------------------------------------------------------------------------------
# The state


def deck_for_hand(config: Rummy500Config, seed: int, hand_index: int, daily_date: str | None) -> list[int]:
    """The shuffled deck of hand ``hand_index``: seeded, or the daily deal of ``daily_date``."""
    order = config.full_deck()
    if config.deal_seed_mode == "daily":
        return C.hash_shuffle(order, C.daily_key(GAME, daily_date or "", config.daily_salt, hand_index + 1))
    random.Random(f"{GAME}:{seed}:{hand_index}").shuffle(order)
    return order


def today_utc() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


class Rummy500State:
    """A game of Rummy 500 in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[Rummy500Config]] = Rummy500Config

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

    # -- dealing and turns -----------------------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        cfg = self.config
        order = deck if deck is not None else deck_for_hand(cfg, self.seed, self.hand_index, self.daily_date)
        n, size = self.n, cfg.cards_per_hand
        self.dealer = dealer
        self.hands = [[0, 0, 0] for _ in range(n)]
        for i in range(n * size):
            _ms_add(self.hands[(dealer + 1 + i) % n], order[i])
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

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == Phase.GAME_OVER

    def hand_cards(self, player: int) -> list[int]:
        """Sorted card ids of a hand, copies repeated, jokers (52) last."""
        return multiset_cards(self.hands[player])

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> list[int]:
        if self.phase == Phase.DRAW:
            return self._draw_actions()
        if self.phase == Phase.MELD:
            return self._meld_actions()
        return []

    def _draw_actions(self) -> list[int]:
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
            if self._take_ok(i, card, avail, jokers, size):
                out.append(TAKE_DISCARD + i)
        return sorted(out)

    def _take_ok(self, i: int, card: int, avail: int, jokers: int, size: int) -> bool:
        """May the player take the pile from position ``i`` (its card ``card``) up, leaving a
        hand of ``size`` cards holding ``avail`` and ``jokers``?"""
        cfg = self.config
        if i == len(self.pile) - 1 and not cfg.top_discard_must_be_used:
            if cfg.allow_rediscard_taken_card or size > _ms_count(self.hands[self.current_player], card) + 1:
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
        if (_COLUMNS[rank] & avail).bit_count() >= 3:
            return True
        row = avail >> (13 * suit) & ROW
        positions = row | (row & 1) << 13  # the ace also at position 13
        if (positions >> (rank - 1) & 0b101) if rank else (row & _ACE_NEIGHBOURS):
            return True
        return any(m.key == (rank if m.is_set else suit) for m in self.melds)

    def _meld_actions(self) -> list[int]:
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
            # No jokers and no turn rule in play: each shape has one covering, and a commit is
            # legal unless it empties a hand that must keep a card to discard.
            keep = self.sizes[p] if self.config.must_discard_to_go_out else self.sizes[p] + 1
            for identities, slot in shapes:
                if identities.bit_count() < keep:
                    if identities == pending:
                        out.append(MELD_NEW if slot < 0 else LAY_OFF + slot)
                    natural_picks |= identities
            natural_picks &= ~pending
            shapes = []
        for identities, slot in shapes:
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

    def _shapes(self, avail: int, free: int, pending: int, need: int) -> list[tuple[int, int]]:
        """Every commit the naturals ``avail`` (the pending identities included) and ``free``
        jokers could complete: ``(identities, slot)`` with slot -1 for a new meld, ``k`` for
        a set or the low end of sequence k, ``MAX_MELDS + k`` for its high end. Each holds
        ``pending`` and, if ``need`` >= 0, that identity; none re-uses an identity the table
        already holds as often as there are decks."""
        out: list[tuple[int, int]] = []
        blocked = self.table_full
        # New sets.
        if pending:
            low = (pending & -pending).bit_length() - 1
            ranks = [low % C.NUM_RANKS] if pending & _COLUMNS[low % C.NUM_RANKS] == pending else []
        elif need >= 0:
            ranks = [need % C.NUM_RANKS]
        elif free:
            ranks = range(C.NUM_RANKS)
        else:
            a, b, c, d = avail & ROW, avail >> 13 & ROW, avail >> 26 & ROW, avail >> 39 & ROW
            three = (a & b & (c | d)) | (c & d & (a | b))
            ranks = [r for r in range(C.NUM_RANKS) if three >> r & 1]
        for r in ranks:
            for shape in _SET_SHAPES[r]:
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
            for _lo, _hi, ranks_row in (_NEW_SEQUENCES if free else _new_sequences_in(row)):
                if (ranks_row & prow == prow and not ranks_row & brow and (not nrow or ranks_row & nrow)
                        and (not free or (ranks_row & ~row).bit_count() <= free)):
                    out.append((ranks_row << shift, -1))
        # Layoffs.
        for slot, meld in enumerate(self.melds):
            if meld.is_set:
                if meld.cards.bit_count() == 4:
                    continue
                column = _COLUMNS[meld.key] & ~meld.cards
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
        deep-take target rule, and the turn can still end afterwards (no dead ends)."""
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
        if left > _ms_count(self.hands[p], banned) - used:
            return True  # a card other than the banned one is left to discard
        if self.config.must_discard_to_go_out:
            return False
        return bool(self._after(identities, jokered, slot)._meld_actions())

    def _after(self, identities: int, jokered: int, slot: int) -> Rummy500State:
        """A copy with this commit placed (for looking ahead; the hand does not end)."""
        trial = self.clone()
        trial._place(identities, jokered, slot)
        trial.pending = trial.pending_jokers = 0
        trial._legal = None
        return trial

    # -- scores ----------------------------------------------------------------------------
    def scores(self) -> list[int]:
        """Each seat's score so far: the hand's points once it is over (hand mode), the
        running totals in match mode."""
        if self.config.episode == "match":
            return list(self.totals)
        return list(self.hand_results[-1].points) if self.is_terminal() and self.hand_results else [0] * self.n

    def standings(self) -> list[int]:
        """What ranks the seats for ``reward="win_loss"``: the scores (tied leaders share)."""
        return self.scores()

    def returns(self) -> list[float]:
        """Zero-sum points: each seat's score minus the mean of the scores."""
        scores = self.scores()
        mean = sum(scores) / self.n
        return [s - mean for s in scores]

    def table_points(self) -> list[int]:
        """Points of the table cards credited to each seat (aces by their place)."""
        out = [0] * self.n
        value = self.config.joker_value
        for meld in self.melds:
            for identity, seat in meld.credit.items():
                out[seat] += meld.value(identity, value)
        return out

    def hand_points(self, player: int) -> int:
        hand = self.hands[player]
        return mask_points(hand[0]) + mask_points(hand[1]) + hand[2] * self.config.joker_value

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        as_int = action if type(action) is int else action_id(action)
        if as_int not in self.legal_actions():
            raise IllegalActionError(
                action, action_to_str(as_int) if as_int is not None else repr(action),
                f"player {self.current_player}", self.phase.name, [action_to_str(a) for a in self.legal_actions()],
            )
        action = as_int
        self.history.append(action)
        self._legal = None
        p = self.current_player
        if action == DRAW_STOCK:
            _ms_add(self.hands[p], self.stock.pop())
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
            self.pending = self.pending_jokers = 0
            self.turns += 1  # counted like a turn, so that no hand can loop forever
            if self.turns >= self.config.max_turns_per_hand:
                self._end_hand("turn_cap")
        elif action == MELD_NEW or LAY_OFF <= action < DISCARD:
            self._place(self.pending, self.pending_jokers, -1 if action == MELD_NEW else action - LAY_OFF)
            self.pending = self.pending_jokers = 0
            if not self.sizes[p]:
                self._end_hand("out", p)
        else:
            self._discard(p, action - DISCARD)

    def _take(self, i: int) -> None:
        p = self.current_player
        taken = self.pile[i:]
        del self.pile[i:]
        for card in taken:
            _ms_add(self.hands[p], card)
            _ms_add(self.known[p], card)
        self.sizes[p] += len(taken)
        cfg = self.config
        if len(taken) > 1 or cfg.top_discard_must_be_used:
            self.target = taken[0]
        elif not cfg.allow_rediscard_taken_card:
            self.banned = taken[0]
        self.phase = Phase.MELD

    def _place(self, identities: int, jokered: int, slot: int) -> None:
        """Move the cards of a commit from the hand of the player to move to the table."""
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

    def _discard(self, p: int, card: int) -> None:
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

    def _end_hand(self, kind: str, went_out: int = -1) -> None:
        cfg = self.config
        table = self.table_points()
        in_hand = [self.hand_points(q) for q in range(self.n)]
        points = [table[q] - in_hand[q] + (cfg.out_bonus if q == went_out else 0) for q in range(self.n)]
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
        best = max(self.totals)
        leaders = [q for q in range(self.n) if self.totals[q] == best]
        if best >= cfg.target_score and (len(leaders) == 1 or cfg.tie_break == "share"):
            self.winners = leaders
        if self.winners or len(self.hand_results) >= cfg.max_hands:
            self.truncated = not self.winners
            self.phase, self.current_player = Phase.GAME_OVER, -1
            return
        self.hand_index += 1
        self._deal((self.dealer + 1) % self.n, None)

    # -- views -----------------------------------------------------------------------------
    def view(self, player: int) -> Rummy500View:
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
            legal_actions=tuple(self.legal_actions()) if mine else (),
        )

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> Rummy500State:
        """An independent copy (cheap: ints and short lists)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in ("history", "sizes", "pile", "stock", "hand_results", "totals", "winners"):
            setattr(new, name, list(getattr(self, name)))
        new.hands = [list(h) for h in self.hands]
        new.known = [list(k) for k in self.known]
        new.credited = [list(c) for c in self.credited]
        new.table_jokers = list(self.table_jokers)
        new.melds = [m.copy() for m in self.melds]
        return new

    def public_cards(self, player: int) -> list[int]:
        """Cards of ``player``'s hand everybody knows: taken from the pile (not played since)
        or in the pending group on the table's edge."""
        known = self.known[player]
        shown = [0, 0, 0]
        if player == self.current_player:
            shown = [self.pending & ~self.pending_jokers, 0, self.pending_jokers.bit_count()]
        return multiset_cards([known[0] | shown[0], known[1], max(known[2], shown[2])])

    def sample_determinization(self, player: int, rng: random.Random) -> Rummy500State:
        """A copy in which every card hidden from ``player`` (the other hands but their public
        cards, and the stock order) is redealt at random.

        An opponent in the middle of its turn was seen holding a pending group that can still
        be committed, or a deep-take target it can still place: redeals that break this are
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
        """The player to move has an action that keeps its turn going (cancelling aside)."""
        return any(a != CANCEL for a in self.legal_actions())

    # -- dicts and replay ------------------------------------------------------------------
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
    def from_dict(cls, data: Any) -> Rummy500State:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (docs/rummy500.md,
        "State dicts", lists the fields).

        Missing keys take the values of a fresh hand: a scenario may give just ``hands``,
        ``stock``, ``discard_pile``, ``melds``, ``phase``, ``current_player`` and ``dealer``.
        Every card of the game must be somewhere (hands, stock, pile, table).
        """
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
        state.first_dealer = fields.integer("first_dealer", dealer, 0, n - 1)
        state._read_fields(fields)
        state._check_rules()
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types, ranges, that every
        card of the game is in exactly one place and that each meld is one."""
        cfg, n = self.config, self.n
        written = f.has("hands")
        hands = f.card_rows("hands", n, jokers=True) if written else [self.hand_cards(q) for q in range(n)]
        stock = f.cards("stock", [] if written else self.stock[::-1], jokers=True)
        pile = f.cards("discard_pile", [] if written else self.pile, jokers=True)
        melds = [_read_meld(m, n) for m in f.records("melds", MELD_KEYS, [])]
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
        self.turns = f.integer("turns", 0, 0, cfg.max_turns_per_hand)
        self.reshuffles = f.integer("reshuffles", 0, 0)
        self.totals = f.integers("totals", [0] * n, n, meaning="a seat's match total")
        self.winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
        self.hand_results = [_read_result(r, cfg) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    def _lay_meld(self, index: int, cards: list[int], jokers: int, credit: list[int], owner: int) -> None:
        """Put meld ``index`` of a dict (read by ``_read_meld``) on the table: no identity on the
        table more often than there are decks; with ``layoff_credit="meld_owner"`` every card
        credited to the owner."""
        name = f"melds[{index}]"
        if self.config.layoff_credit == "meld_owner" and any(seat != owner for seat in credit):
            raise field_error(f"{name}.credit", "with layoff_credit='meld_owner' every card is credited to the owner")
        if C.to_mask(cards) & self.table_full:
            raise field_error(f"{name}.cards", "a card is on the table more often than there are decks")
        is_set, key, lo, hi = classify_ordered(cards)  # type: ignore[misc]  # _read_meld checked the shape
        meld = Meld(is_set, key, lo, hi, 0, 0, {}, owner)
        self.melds.append(meld)
        for card, seat in zip(cards, credit):
            self._record_on_table(meld, 1 << card, jokers & 1 << card, seat)

    # -- the consistency of a state read from a dict ----------------------------------------
    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: seats and
        phase, hands, the turn's pending group, target and banned card, the stock, the turn
        count, and the totals and winners against the target and the recorded hands."""
        cfg, phase, p = self.config, self.phase, self.current_player
        over = phase == Phase.GAME_OVER
        if (p < 0) != over:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {phase.name} "
                                                            "(-1 exactly when the game is over)")
        if not over and not all(self.sizes):
            raise field_error("hands", "a hand in play holds no card (emptying a hand ends it)")
        turn_fields = [name for name, value in (("pending", self.pending), ("target", self.target >= 0),
                                                ("banned", self.banned >= 0)) if value]
        if turn_fields and phase != Phase.MELD:
            raise field_error([*turn_fields, "phase"], "these belong to the turn of the player to move, in phase MELD")
        if self.pending:
            hand = self.hands[p]
            if (self.pending & ~self.pending_jokers) & ~hand[0] or self.pending_jokers.bit_count() > hand[2]:
                raise field_error(["pending", "pending_jokers"], "the pending group holds cards the player to move "
                                                                 "does not have")
        if self.target >= 0 and self.banned >= 0:
            raise field_error(["target", "banned"], "a take sets a target (deep take) or a banned card, not both")
        if self.target >= 0 and not _ms_count(self.hands[p], self.target):
            raise field_error("target", "the card taken that must go on the table is in the hand of the player to move")
        if self.banned >= 0 and cfg.allow_rediscard_taken_card:
            raise field_error("banned", "allow_rediscard_taken_card=True bans no discard")
        if phase == Phase.DRAW and not self.stock and not (cfg.stock_end_rule == "end_on_decline" and self.pile):
            raise field_error(["stock", "discard_pile"], "a turn begins only with a card to draw or, under "
                                                         "stock_end_rule='end_on_decline', a pile to take or decline")
        if self.turns >= cfg.max_turns_per_hand and not over:
            raise field_error("turns", f"the hand ends after max_turns_per_hand={cfg.max_turns_per_hand} turns")
        if self.reshuffles and cfg.stock_end_rule != "reshuffle_discards":
            raise field_error("reshuffles", "the pile is reshuffled only under stock_end_rule='reshuffle_discards'")
        self._check_match()
        if not over and not self.legal_actions():
            raise field_error("phase", f"player {p} has no legal action in phase {phase.name}")

    def _match_winners(self) -> list[int]:
        """The seats that have won the match by their totals (none while it goes on)."""
        best = max(self.totals)
        leaders = [q for q in range(self.n) if self.totals[q] == best]
        decided = best >= self.config.target_score and (len(leaders) == 1 or self.config.tie_break == "share")
        return leaders if decided else []

    def _check_match(self) -> None:
        """Winners, totals, the hand count and the truncation flag fit the target, the episode and
        the recorded hands."""
        cfg, over, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if len(set(self.winners)) != len(self.winners):
            raise field_error("winners", "a seat is listed twice")
        if self.truncated and not over:
            raise field_error("truncated", "only a finished game is truncated")
        if cfg.episode == "hand":
            if self.winners:
                raise field_error("winners", "a one-hand episode has no match winners")
            if over and results and self.truncated != (results[-1].kind == "turn_cap"):
                raise field_error("truncated", "a hand is truncated exactly when it ends at the turn cap")
            return
        decided = self._match_winners()  # mid-hand totals past the target are a scenario's (R6): the hand decides
        if over and self.winners != decided and (self.winners or not self.truncated):
            raise field_error("winners", f"expected {decided}: the leaders at or past target_score={cfg.target_score}")
        if over and self.truncated != (not self.winners):
            raise field_error("truncated", "a finished match is truncated exactly when nobody won it")
        if len(results) > self.hand_index + over:
            raise field_error(["hand_results", "hand_index"], f"{len(results)} hand results, more than the hands "
                              f"played by hand index {self.hand_index}{' of a finished match' if over else ''}")
        if over and self.truncated and len(results) < cfg.max_hands:
            raise field_error(["truncated", "hand_results"], "a match without a winner ends only after max_hands hands")


STATE_KEYS = ("format_version", "game", "options", "seed", "daily_date", "initial_deck", "first_dealer", "hand_index",
              "dealer", "phase", "current_player", "hands", "stock", "discard_pile", "melds", "known", "pending",
              "pending_jokers", "target", "banned", "turns", "reshuffles", "totals", "winners", "hand_results",
              "truncated", "history")
MELD_KEYS = ("cards", "jokers", "credit", "owner")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(HandResult))
HAND_KINDS = ("out", "stock_exhausted", "turn_cap")


def _read_meld(f: Fields, n: int) -> tuple[list[int], int, list[int], int]:
    """One ``melds`` entry: its identities (a set or a sequence in table order), the bitmask of
    those held by jokers, the seat credited with each card and the owner (each defaults to
    the other, else seat 0)."""
    cards = f.cards("cards")
    if classify_ordered(cards) is None:
        raise f.error("cards", f"{C.format(cards) or 'nothing'} is not a set or a sequence (in table order, from "
                               "its low end)")
    jokers = C.to_mask(f.cards("jokers", []))
    if jokers & ~C.to_mask(cards):
        raise f.error("jokers", "its jokers must stand for cards of the meld")
    owner = f.integer("owner", 0, 0, n - 1, "the seat that melded it")
    credit = f.integers("credit", [owner] * len(cards), len(cards), 0, n - 1, "a seat for each card")
    if not f.has("owner"):
        owner = credit[0]
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
        expected = [table[q] - in_hand[q] + (config.out_bonus if q == went_out else 0) for q in range(n)]
        if points != expected:
            raise f.error("points", f"expected {expected}: table points minus hand points, plus the out bonus")
    hands = f.card_rows("hands", n, jokers=True) if f.items("hands", []) else []
    if hands and in_hand:
        expected = [mask_points(multiset(h)[0]) + mask_points(multiset(h)[1]) + h.count(JOKER) * config.joker_value
                    for h in hands]
        if in_hand != expected:
            raise f.error("hand_points", f"expected {expected}, the points of the hands shown")
    melds, on_table = [], [0] * n
    for meld in f.records("melds", MELD_KEYS, []):
        cards, jokers, credit, owner = _read_meld(meld, n)
        melds.append({"cards": cards, "jokers": C.from_mask(jokers), "credit": credit, "owner": owner})
        placed = Meld(*classify_ordered(cards), C.to_mask(cards), jokers, {}, owner)  # type: ignore[misc]
        for card, seat in zip(cards, credit):
            on_table[seat] += placed.value(card, config.joker_value)
    if melds and table and table != on_table:
        raise f.error("table_points", f"expected {on_table}, the points of the melds shown by their credit")
    return HandResult(kind, went_out, points, table, in_hand, hands, melds)


def replay(config: Rummy500Config, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None, daily_date: str | None = None) -> Rummy500State:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck, first dealer and daily date the game was given, if any (``to_dict`` records them)."""
    state = Rummy500State(config, seed, deck, dealer, daily_date)
    for a in actions:
        state.apply(a)
    return state
