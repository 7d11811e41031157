"""Gin Rummy rules engine (standard and Oklahoma), pure Python over card bitmasks.

``GinState`` is the whole game: the deal, the turn state machine of the spec (offer,
forced draw, draw, discard, the 50th-card chance), the showdown (knocker's melds,
defender's melds and layoffs, computed optimally or played as actions), hand scoring and,
with ``episode="match"``, the match to the target with its bonuses. It has the search API
researchers expect (``clone``, ``legal_actions``, ``apply``, ``returns``,
``sample_determinization``) and converts to and from a JSON-able dict.

Dealing is internal: hand ``k`` of a match is dealt from a deck shuffled by
``random.Random`` seeded from ``(seed, k)``, so ``seed`` plus the action history replays a
game exactly.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.errors import IllegalActionError, action_id
from rummy_envs.options import build, check_bool, check_choice, check_int
from rummy_envs.state_dicts import (FORMAT_VERSION, Fields, card_count_error, check_integer, field_error, parse_card,
                                    read_header, read_options)

NUM_PLAYERS = 2
HAND_SIZE = 10
MAX_KNOCKER_MELDS = 3  # 10 or 11 cards never hold 4 disjoint melds


class Phase(IntEnum):
    """Decision points of a gin hand; GAME_OVER ends the episode (hand or match)."""

    OFFER_ND = 0
    OFFER_D = 1
    FORCED_DRAW = 2
    DRAW = 3
    DISCARD = 4
    LAST_CHANCE = 5
    KNOCKER_MELD = 6
    DEFENDER_MELD = 7
    LAYOFF = 8
    GAME_OVER = 9


# Action ids: named offsets of one Discrete space.
DRAW_STOCK = 0
TAKE_DISCARD = 1  # also takes the upcard in the offer phases and the 50th card
PASS = 2
DONE = 3  # ends a meld declaration or the layoffs
BIG_GIN = 4
DISCARD = 5  # DISCARD + card
KNOCK = DISCARD + C.NUM_CARDS  # KNOCK + card
MELD = KNOCK + C.NUM_CARDS  # MELD + meld index (rummy_envs.melds.MELDS)
LAYOFF = MELD + M.NUM_MELDS  # LAYOFF + slot * 52 + card, slot = knocker meld 0..2
NUM_ACTIONS = LAYOFF + MAX_KNOCKER_MELDS * C.NUM_CARDS
_SIMPLE_NAMES = {DRAW_STOCK: "DRAW_STOCK", TAKE_DISCARD: "TAKE_DISCARD", PASS: "PASS", DONE: "DONE", BIG_GIN: "BIG_GIN"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()} | {"TAKE_UPCARD": TAKE_DISCARD}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``DISCARD(TH)``, ``MELD(7S 7H 7D)``, ``LAYOFF(5H,1)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    if DISCARD <= action < KNOCK:
        return f"DISCARD({C.format_card(action - DISCARD)})"
    if KNOCK <= action < MELD:
        return f"KNOCK({C.format_card(action - KNOCK)})"
    if MELD <= action < LAYOFF:
        return f"MELD({C.format(M.MELD_CARDS[action - MELD])})"
    if LAYOFF <= action < NUM_ACTIONS:
        slot, card = divmod(action - LAYOFF, C.NUM_CARDS)
        return f"LAYOFF({C.format_card(card)},{slot})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    name = text.strip().upper().replace(" ", "")
    if name in _SIMPLE_IDS:
        return _SIMPLE_IDS[name]
    head, _, rest = name.partition("(")
    if not rest.endswith(")"):
        raise ValueError(f"cannot parse action {text!r}")
    args = rest[:-1]
    if head in ("DISCARD", "KNOCK"):
        return (DISCARD if head == "DISCARD" else KNOCK) + C.parse_card(args)
    if head == "MELD":
        spaced = text[text.index("(") + 1 : text.rindex(")")]
        mask = C.to_mask(C.parse(spaced))
        if mask not in M.MELD_INDEX:
            raise ValueError(f"{spaced!r} is not a meld of the meld table (sets, runs of 3-5)")
        return MELD + M.MELD_INDEX[mask]
    if head == "LAYOFF":
        card, _, slot = args.partition(",")
        if slot not in ("0", "1", "2"):
            raise ValueError(f"cannot parse action {text!r}: slot must be 0, 1 or 2")
        return LAYOFF + int(slot) * C.NUM_CARDS + C.parse_card(card)
    raise ValueError(f"cannot parse action {text!r}")


@dataclass(frozen=True)
class GinConfig:
    """Rules options of gin_rummy.md, named as in the spec, plus the episode length."""

    game: ClassVar[str] = "gin_rummy"
    variant: str = "standard"
    knock_limit: int = 10
    gin_bonus: int = 25
    big_gin_bonus: int | None = None
    undercut_bonus: int = 25
    undercut_on_tie: bool = True
    allow_rediscard_taken_card: bool = False
    dead_stock_size: int = 2
    stock_end_rule: str = "dead"
    max_turns_per_hand: int = 200
    knocker_arrangement: str = "auto_best"
    layoff_mode: str = "auto_optimal"
    next_dealer: str = "alternate"
    episode: str = "hand"
    target_score: int = 100
    game_bonus: int = 100
    box_bonus: int = 25
    boxes_count_toward_target: bool = False
    shutout_rule: str = "double_points"
    max_hands_per_match: int = 200
    oklahoma_ace_gin_only: bool = True
    oklahoma_spade_double: bool = True

    def __post_init__(self) -> None:
        check_choice("variant", self.variant, ("standard", "oklahoma"))
        check_int("knock_limit", self.knock_limit, 0, 99)
        check_int("gin_bonus", self.gin_bonus, 0)
        if self.big_gin_bonus is not None:
            check_int("big_gin_bonus", self.big_gin_bonus, 0)
        check_int("undercut_bonus", self.undercut_bonus, 0)
        check_int("dead_stock_size", self.dead_stock_size, 0, 30)
        check_choice("stock_end_rule", self.stock_end_rule, ("dead", "opponent_last_chance"))
        check_int("max_turns_per_hand", self.max_turns_per_hand, 1)
        check_choice("knocker_arrangement", self.knocker_arrangement, ("auto_best", "explicit"))
        check_choice("layoff_mode", self.layoff_mode, ("auto_optimal", "explicit"))
        check_choice("next_dealer", self.next_dealer, ("alternate", "winner", "loser"))
        check_choice("episode", self.episode, ("hand", "match"))
        check_int("target_score", self.target_score, 1)
        check_int("game_bonus", self.game_bonus, 0)
        check_int("box_bonus", self.box_bonus, 0)
        check_choice("shutout_rule", self.shutout_rule, ("double_points", "double_game_bonus", "none"))
        check_int("max_hands_per_match", self.max_hands_per_match, 1)
        for name in ("undercut_on_tie", "allow_rediscard_taken_card", "boxes_count_toward_target",
                     "oklahoma_ace_gin_only", "oklahoma_spade_double"):
            check_bool(name, getattr(self, name))

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> GinConfig:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    def new_match(self) -> StandardMatch:
        """The empty match score of this scoring (overridden by Hollywood's scoresheet)."""
        return StandardMatch()

    def match_from_dict(self, data: Any) -> StandardMatch:
        """The match score of a state dict's ``match`` field (ValueError naming a bad entry)."""
        return StandardMatch.from_dict(data)


# ----------------------------------------------------------------------------------------
# Public solvers (also used by agents); each takes card ids or a card string.


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
    return _knock_cards(mask, knock_limit)


def _knock_cards(mask: int, limit: int) -> list[int]:
    total = M.gin_mask_value(mask)
    if total - M.max_cover(mask) - 10 > limit:  # even the best discard cannot get there
        return []
    out = []
    for c in C.from_mask(mask):
        rest = mask ^ (1 << c)
        if total - C.GIN_VALUES[c] - M.max_cover(rest) <= limit:
            out.append(c)
    return out


def _defence(defender: int, knocker_melds: list[int], allow_layoffs: bool) -> tuple[int, list[int], list[tuple[int, int]]]:
    """Defender's least deadwood: own melds, then (unless gin) chained layoffs."""
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
    value, own, order = _defence(_mask_of(defender_cards), melds, allow_layoffs=True)
    return value, [C.from_mask(m) for m in own], order


# ----------------------------------------------------------------------------------------
# Results and match scoring


@dataclass
class HandResult:
    """How a hand ended; ``points[p]`` is what each player scored in it."""

    kind: str  # "gin", "big_gin", "knock", "undercut", "dead", "turn_cap"
    winner: int = -1
    points: list[int] = field(default_factory=lambda: [0, 0])
    knocker: int = -1
    deadwood: list[int] = field(default_factory=lambda: [0, 0])
    knocker_melds: list[list[int]] = field(default_factory=list)
    defender_melds: list[list[int]] = field(default_factory=list)
    layoffs: list[list[int]] = field(default_factory=list)
    hands: list[list[int]] = field(default_factory=list)  # both hands at the end, revealed


MATCH_KEYS = ("totals", "wins", "winner")


@dataclass
class StandardMatch:
    """Running totals of a gin match to ``target_score`` and the end-of-game bonuses."""

    totals: list[int] = field(default_factory=lambda: [0, 0])
    wins: list[int] = field(default_factory=lambda: [0, 0])
    winner: int = -1

    def record(self, config: GinConfig, result: HandResult) -> None:
        """Add a won hand's points (and the box at once under boxes_count_toward_target)."""
        if result.winner < 0:
            return
        w = result.winner
        self.totals[w] += result.points[w]
        self.wins[w] += 1
        if config.boxes_count_toward_target:
            self.totals[w] += config.box_bonus
        if self.totals[w] >= config.target_score:
            self.winner = w

    def is_over(self) -> bool:
        return self.winner >= 0

    def scores(self, config: GinConfig) -> list[int]:
        """The match score now: the totals, settled with the bonuses once somebody has won."""
        return self.final_scores(config)

    def standings(self, config: GinConfig) -> list[int]:
        """What ranks the players at the end (larger is better): the settled scores."""
        return self.final_scores(config)

    def clone(self) -> StandardMatch:
        return StandardMatch(list(self.totals), list(self.wins), self.winner)

    def to_dict(self) -> dict[str, Any]:
        return {"totals": list(self.totals), "wins": list(self.wins), "winner": self.winner}

    @classmethod
    def from_dict(cls, data: Any, path: str = "match") -> StandardMatch:
        """Read ``to_dict`` output; ValueError naming the field of a wrong type or range."""
        fields = Fields(data, MATCH_KEYS, path)
        return cls(fields.integers("totals", [0, 0], NUM_PLAYERS, 0), fields.integers("wins", [0, 0], NUM_PLAYERS, 0),
                   fields.integer("winner", -1, -1, 1, "the seat that won the match, -1 while nobody has"))

    def problem(self, config: GinConfig) -> str:
        """What in this score contradicts the rules of ``config`` ("" if nothing)."""
        target = config.target_score
        if self.winner < 0 and max(self.totals) >= target:
            return f"a total reached target_score={target} but 'winner' is -1"
        if self.winner >= 0 and (self.totals[self.winner] < target or self.totals[1 - self.winner] >= target):
            return f"winner {self.winner} must be the one player whose total reached target_score={target}"
        if any(self.totals[p] and not self.wins[p] for p in range(NUM_PLAYERS)):
            return "a player who won no hand has points"
        return ""

    def holds(self, recorded: StandardMatch) -> bool:
        """Does this score include ``recorded`` (the score of some of its hands): at least as many
        hands won and points by each player?"""
        return all(self.wins[p] >= recorded.wins[p] and self.totals[p] >= recorded.totals[p]
                   for p in range(NUM_PLAYERS))

    def final_scores(self, config: GinConfig) -> list[int]:
        """Totals with game, box and shutout bonuses (just the totals if nobody has won)."""
        if self.winner < 0:
            return list(self.totals)
        w, loser = self.winner, 1 - self.winner
        shutout = self.wins[loser] == 0
        final = list(self.totals)
        if shutout and config.shutout_rule == "double_points":
            boxes_in_total = config.box_bonus * self.wins[w] if config.boxes_count_toward_target else 0
            final[w] += self.totals[w] - boxes_in_total  # the hand points count twice
        final[w] += config.game_bonus * (2 if shutout and config.shutout_rule == "double_game_bonus" else 1)
        if not config.boxes_count_toward_target:
            for p in range(NUM_PLAYERS):
                final[p] += config.box_bonus * self.wins[p]
        return final


@dataclass(frozen=True)
class GinView:
    """Exactly what one player may see: for rule-based agents, humans and the observation.

    Seats are relative: index 0 of a pair is this player, 1 the opponent."""

    player: int
    phase: Phase
    is_my_turn: bool
    hand: tuple[int, ...]
    top_discard: int | None
    discard_pile: tuple[int, ...]
    discarded: tuple[tuple[int, ...], tuple[int, ...]]
    opponent_known: tuple[int, ...]
    opponent_hand_size: int
    stock_size: int
    is_dealer: bool
    upcard_passed: tuple[bool, bool]  # (non-dealer passed, dealer passed)
    knock_limit: int
    multiplier: int
    taken_card: int | None
    knocker: int | None  # 0 me, 1 the opponent
    knocker_melds: tuple[tuple[int, ...], ...]
    knocker_deadwood: tuple[int, ...]
    my_melds: tuple[tuple[int, ...], ...]
    layoffs: tuple[tuple[int, int], ...]
    scores: tuple[int, int]
    hands_won: tuple[int, int]
    legal_actions: tuple[int, ...]


# ----------------------------------------------------------------------------------------
# The state


def deck_for_hand(seed: int, hand_index: int) -> list[int]:
    """The shuffled deck of hand ``hand_index`` of the game seeded ``seed``."""
    order = list(range(C.NUM_CARDS))
    random.Random(f"gin:{seed}:{hand_index}").shuffle(order)
    return order


class GinState:
    """A game of Gin Rummy in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[GinConfig]] = GinConfig

    def __init__(self, config: GinConfig | None = None, seed: int = 0, deck: list[int] | None = None, dealer: int | None = None):
        self.config = config or self.config_class()
        self.seed = int(seed)
        self.history: list[int] = []
        self.match = self.config.new_match()
        self.hand_index = 0
        self.hand_results: list[HandResult] = []
        self.truncated = False
        first_dealer = random.Random(f"gin-dealer:{self.seed}").randrange(NUM_PLAYERS) if dealer is None else dealer
        if first_dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, range(C.NUM_CARDS))
        self.first_dealer = first_dealer
        self._deal(first_dealer, self.initial_deck)

    # -- dealing ---------------------------------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
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
        self.passed = [False, False]  # [non-dealer passed, dealer passed] the upcard
        self.knock_limit, self.multiplier = self._stakes(self.upcard)
        self.knocker = -1
        self.knock_card = -1
        self.big_gin = False
        self.knocker_melds: list[int] = []  # declared, runs merged after DONE
        self.meld_extents: list[int] = []  # knocker melds with the cards laid off on them
        self.remaining = 0  # the cards of the player declaring that are not melded yet
        self.defender_melds: list[int] = []
        self.layoffs: list[tuple[int, int]] = []
        self._legal: list[int] | None = None

    def _stakes(self, upcard: int) -> tuple[int, int]:
        """(knock limit, score multiplier) of a hand: Oklahoma reads them off the upcard."""
        cfg = self.config
        if cfg.variant != "oklahoma":
            return cfg.knock_limit, 1
        rank = upcard % C.NUM_RANKS
        limit = (0 if cfg.oklahoma_ace_gin_only else 1) if rank == 0 else min(rank + 1, 10)
        return limit, 2 if cfg.oklahoma_spade_double and upcard // C.NUM_RANKS == 3 else 1

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == Phase.GAME_OVER

    @property
    def stock_size(self) -> int:
        return len(self.stock)

    @property
    def defender(self) -> int:
        return 1 - self.knocker

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _discardable(self, hand: int) -> int:
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
            out += [KNOCK + c for c in _knock_cards(hand, self.knock_limit) if allowed >> c & 1]
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
        out = [KNOCK + c for c in _knock_cards(hand, self.knock_limit) if allowed >> c & 1]
        if self.config.big_gin_bonus is not None and M.min_deadwood(hand) == 0:
            out.append(BIG_GIN)
        return out

    def scores(self) -> list[int]:
        """Each player's game score so far: the hand's points in hand mode; the running
        totals in match mode, settled with the bonuses once the match ends."""
        if self.config.episode == "match":
            return self.match.scores(self.config)
        return list(self.hand_results[-1].points) if self.is_terminal() and self.hand_results else [0, 0]

    def standings(self) -> list[int]:
        """What ranks the players at the end of the episode (larger is better), for
        ``reward="win_loss"``: the scores, or the match's own rule (Hollywood columns)."""
        return self.match.standings(self.config) if self.config.episode == "match" else self.scores()

    def returns(self) -> list[float]:
        """Zero-sum points: each player's score minus the mean of the scores."""
        scores = self.scores()
        mean = sum(scores) / NUM_PLAYERS
        return [s - mean for s in scores]

    def view(self, player: int) -> GinView:
        """What ``player`` may see now (see ``GinView``)."""
        opp = 1 - player
        fmt = C.from_mask
        over = self.phase == Phase.GAME_OVER
        is_knocker, is_defender = self.knocker == player, self.knocker == opp
        # Once knocked, the knocker's hand is face up for the defender (melds declared so far
        # and the rest); the defender's layoffs are the defender's own until the hand is over.
        # auto_best picks the knocker's melds knowing the defender's hand, so the knocker
        # sees that choice only at the end.
        knocker_sees = is_knocker and (over or self.config.knocker_arrangement == "explicit")
        if is_defender or is_knocker and over:
            shown = self.knocker_melds if self.phase == Phase.KNOCKER_MELD else self.meld_extents
        elif knocker_sees:
            shown = self.knocker_melds
        else:
            shown = []
        dead = self.hands[self.knocker] & ~M.union(self.knocker_melds) if is_defender or knocker_sees else 0
        mine = self.knocker_melds if knocker_sees else self.defender_melds if is_defender else []
        rel = lambda pair: (pair[player], pair[opp])  # noqa: E731
        return GinView(
            player=player,
            phase=self.phase,
            is_my_turn=self.current_player == player,
            hand=tuple(fmt(self.hands[player])),
            top_discard=self.pile[-1] if self.pile else None,
            discard_pile=tuple(self.pile),
            discarded=(tuple(fmt(self.discarded[player])), tuple(fmt(self.discarded[opp]))),
            opponent_known=tuple(fmt(self.known[opp])),
            opponent_hand_size=self.hands[opp].bit_count(),
            stock_size=len(self.stock),
            is_dealer=self.dealer == player,
            upcard_passed=(self.passed[0], self.passed[1]),
            knock_limit=self.knock_limit,
            multiplier=self.multiplier,
            taken_card=self.taken_card if self.taken_card >= 0 and self.current_player == player else None,
            knocker=None if self.knocker < 0 else (0 if self.knocker == player else 1),
            knocker_melds=tuple(tuple(fmt(m)) for m in shown),
            knocker_deadwood=tuple(fmt(dead)),
            my_melds=tuple(tuple(fmt(m)) for m in mine),
            layoffs=tuple(self.layoffs) if is_defender or over else (),
            scores=rel(self.match.totals),
            hands_won=rel(self.match.wins),
            legal_actions=tuple(self.legal_actions()) if self.current_player == player else (),
        )

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
        phase = self.phase
        if phase in (Phase.OFFER_ND, Phase.OFFER_D):
            if action == TAKE_DISCARD:
                self._take_discard(p)
            else:
                self.passed[phase] = True
                if phase == Phase.OFFER_ND:
                    self.phase, self.current_player = Phase.OFFER_D, self.dealer
                else:
                    self.phase, self.current_player = Phase.FORCED_DRAW, 1 - self.dealer
        elif action == DRAW_STOCK:
            self.hands[p] |= 1 << self.stock.pop()
            self.taken_card = -1
            self.phase = Phase.DISCARD
        elif action == TAKE_DISCARD:
            self._take_discard(p)
        elif action == PASS:  # only left in LAST_CHANCE: the hand is dead
            self._end_hand(HandResult("dead"))
        elif DISCARD <= action < KNOCK:
            self._discard(p, action - DISCARD)
        elif KNOCK <= action < MELD or action == BIG_GIN:
            if phase == Phase.LAST_CHANCE:
                self._take_discard(p)
            self._knock(p, action - KNOCK if action != BIG_GIN else -1)
        elif MELD <= action < LAYOFF:
            meld = M.MELDS[action - MELD]
            self.remaining ^= meld
            (self.knocker_melds if phase == Phase.KNOCKER_MELD else self.defender_melds).append(meld)
        elif LAYOFF <= action < NUM_ACTIONS:
            slot, card = divmod(action - LAYOFF, C.NUM_CARDS)
            self.remaining ^= 1 << card
            self.meld_extents[slot] |= 1 << card
            self.layoffs.append((card, slot))
        elif action == DONE:
            self._done(phase)

    def _take_discard(self, p: int) -> None:
        card = self.pile.pop()
        self.hands[p] |= 1 << card
        self.known[p] |= 1 << card
        self.taken_card = card
        self.phase = Phase.DISCARD

    def _discard(self, p: int, card: int) -> None:
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

    def _knock(self, p: int, card: int) -> None:
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
        """The knocker's arrangement with the best net result after the defender's best reply;
        ties: lower knocker deadwood, then the lexicographically smallest arrangement."""
        hand, defender = self.hands[self.knocker], self.hands[self.defender]
        limit = 0 if self.big_gin else self.knock_limit
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
            d, _, _ = _defence(defender, merged, allow_layoffs=k > 0)
            winner, points = self._score(k, d)
            net = points if winner == self.knocker else -points
            key = (-net, k, _sort_key(merged))
            if best is None or key < best:
                best, choice = key, merged
        return choice

    def _lay_out_knocker(self, melds: list[int]) -> None:
        self.knocker_melds = M.merge_runs(melds)
        self.meld_extents = list(self.knocker_melds)
        self.remaining = self.hands[self.defender]
        if self.config.layoff_mode == "explicit":
            self.phase, self.current_player = Phase.DEFENDER_MELD, self.defender
        else:
            gin = self._knocker_deadwood() == 0
            _, own, order = _defence(self.remaining, self.knocker_melds, allow_layoffs=not gin)
            self.defender_melds = own
            for card, slot in order:
                self.meld_extents[slot] |= 1 << card
            self.layoffs = order
            self._settle()

    def _done(self, phase: Phase) -> None:
        if phase == Phase.KNOCKER_MELD:
            self._lay_out_knocker(self.knocker_melds)
        elif phase == Phase.DEFENDER_MELD and self._knocker_deadwood() > 0:
            self.phase = Phase.LAYOFF
        else:
            self._settle()

    def _knocker_deadwood(self) -> int:
        return M.gin_mask_value(self.hands[self.knocker] & ~M.union(self.knocker_melds))

    def _score(self, k: int, d: int) -> tuple[int, int]:
        """(winner, points) of a knock with knocker deadwood k and defender deadwood d."""
        cfg = self.config
        if k == 0:
            bonus = cfg.big_gin_bonus if self.big_gin else cfg.gin_bonus
            return self.knocker, (bonus + d) * self.multiplier
        if k < d or (k == d and not cfg.undercut_on_tie):
            return self.knocker, (d - k) * self.multiplier
        return self.defender, (k - d + cfg.undercut_bonus) * self.multiplier

    def _settle(self) -> None:
        laid = C.to_mask(card for card, _ in self.layoffs)
        k = self._knocker_deadwood()
        d = M.gin_mask_value(self.hands[self.defender] & ~M.union(self.defender_melds) & ~laid)
        winner, points = self._score(k, d)
        result = HandResult(
            kind=("big_gin" if self.big_gin else "gin") if k == 0 else ("knock" if winner == self.knocker else "undercut"),
            winner=winner,
            knocker=self.knocker,
        )
        result.points[winner] = points
        result.deadwood[self.knocker], result.deadwood[self.defender] = k, d
        result.knocker_melds = [C.from_mask(m) for m in self.knocker_melds]
        result.defender_melds = [C.from_mask(m) for m in self.defender_melds]
        result.layoffs = [[c, s] for c, s in self.layoffs]
        self._end_hand(result)

    def _end_hand(self, result: HandResult) -> None:
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
        if result.winner < 0:
            dealer = self.dealer
        elif cfg.next_dealer == "winner":
            dealer = result.winner
        elif cfg.next_dealer == "loser":
            dealer = 1 - result.winner
        else:
            dealer = 1 - self.dealer
        self.hand_index += 1
        self._deal(dealer, None)

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> GinState:
        """An independent copy (cheap: ints, short lists)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in ("history", "hands", "pile", "stock", "known", "discarded", "passed",
                     "knocker_melds", "meld_extents", "defender_melds", "layoffs", "hand_results"):
            setattr(new, name, list(getattr(self, name)))
        new.match = self.match.clone()
        return new

    def visible_cards(self, player: int) -> int:
        """Bitmask of every card whose place ``player`` knows: own hand, the discard pile,
        opponent cards taken from the pile, and a knocker's hand once laid out."""
        opp = 1 - player
        seen = self.hands[player] | self.known[opp] | C.to_mask(self.pile)
        if self.knocker == opp:
            seen |= self.hands[opp]  # a knocker's hand is face up from the knock on
        if self.knocker == player and self.knock_card >= 0:
            seen |= 1 << self.knock_card
        return seen

    def sample_determinization(self, player: int, rng: random.Random) -> GinState:
        """A copy in which every card hidden from ``player`` (the unknown part of the other
        hand, the stock order, a face-down knock card) is redealt at random."""
        new = self.clone()
        opp = 1 - player
        hidden_opp = self.hands[opp] & ~self.visible_cards(player)
        pool = C.from_mask(hidden_opp) + list(self.stock)
        if self.knock_card >= 0 and self.knocker == opp:
            pool.append(self.knock_card)
        rng.shuffle(pool)
        n = hidden_opp.bit_count()
        new.hands[opp] = (self.hands[opp] & ~hidden_opp) | C.to_mask(pool[:n])
        rest = pool[n:]
        if self.knock_card >= 0 and self.knocker == opp:
            new.knock_card = rest.pop()
        new.stock = rest
        if self.knocker == player and self.phase in (Phase.DEFENDER_MELD, Phase.LAYOFF):
            new.remaining = new.hands[opp]  # the defence so far is hidden: redealt as if none yet
            if self.config.knocker_arrangement == "auto_best":  # chosen against the real defender
                new.knocker_melds = M.merge_runs(new._auto_knocker_melds())
            new.defender_melds, new.layoffs, new.meld_extents = [], [], list(new.knocker_melds)
        new._legal = None
        return new

    # -- dicts and replay ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able description of the whole state (cards as strings)."""
        fmt = C.format_card
        return {
            "format_version": FORMAT_VERSION,
            "game": self.config.game,
            "options": dataclasses.asdict(self.config),
            "seed": self.seed,
            "initial_deck": None if self.initial_deck is None else [fmt(c) for c in self.initial_deck],
            "first_dealer": self.first_dealer,
            "hand_index": self.hand_index,
            "dealer": self.dealer,
            "phase": self.phase.name,
            "current_player": self.current_player,
            "hands": [[fmt(c) for c in C.from_mask(h)] for h in self.hands],
            "stock": [fmt(c) for c in reversed(self.stock)],
            "discard_pile": [fmt(c) for c in self.pile],
            "upcard": fmt(self.upcard),
            "knock_limit": self.knock_limit,
            "multiplier": self.multiplier,
            "taken_card": fmt(self.taken_card) if self.taken_card >= 0 else None,
            "known": [[fmt(c) for c in C.from_mask(k)] for k in self.known],
            "discarded": [[fmt(c) for c in C.from_mask(d)] for d in self.discarded],
            "turns": self.turns,
            "passed": list(self.passed),
            "knocker": self.knocker,
            "knock_card": fmt(self.knock_card) if self.knock_card >= 0 else None,
            "big_gin": self.big_gin,
            "knocker_melds": [[fmt(c) for c in C.from_mask(m)] for m in self.knocker_melds],
            "meld_extents": [[fmt(c) for c in C.from_mask(m)] for m in self.meld_extents],
            "remaining": [fmt(c) for c in C.from_mask(self.remaining)],
            "defender_melds": [[fmt(c) for c in C.from_mask(m)] for m in self.defender_melds],
            "layoffs": [[fmt(c), s] for c, s in self.layoffs],
            "match": self.match.to_dict(),
            "hand_results": [dataclasses.asdict(r) for r in self.hand_results],
            "truncated": self.truncated,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls, data: Any) -> GinState:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (docs/gin_rummy.md,
        "State dicts", lists the fields).

        Missing keys take the values of a fresh deal: a scenario may give just ``hands``,
        ``stock``, ``discard_pile``, ``phase``, ``current_player`` and ``dealer`` (and, in
        Oklahoma, the ``upcard`` that sets the knock limit).
        """
        fields = Fields(data, STATE_KEYS)
        read_header(fields, cls.config_class.game)
        config = read_options(fields, cls.config_class)
        dealer = fields.integer("dealer", 0, 0, 1, "the dealer's seat")
        hand_index = fields.integer("hand_index", 0, 0)
        deck = fields.optional_cards("initial_deck", None)
        if deck is not None and (problem := card_count_error(deck, range(C.NUM_CARDS))):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer)
        if hand_index:
            state.hand_index = hand_index
            state._deal(dealer, None)
        state.first_dealer = fields.integer("first_dealer", dealer, 0, 1)
        state._read_fields(fields)
        state._check_rules()
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types, ranges and that
        each of the 52 cards is in exactly one place."""
        cfg = self.config
        written = f.has("hands")
        hands = f.card_rows("hands", NUM_PLAYERS) if written else [C.from_mask(h) for h in self.hands]
        stock = f.cards("stock", [] if written else self.stock[::-1])
        pile = f.cards("discard_pile", [] if written else self.pile)
        self.knock_card = f.optional_card("knock_card", None)
        placed = [*hands[0], *hands[1], *stock, *pile] + ([self.knock_card] if self.knock_card >= 0 else [])
        if problem := card_count_error(placed, range(C.NUM_CARDS)):
            raise field_error(["hands", "stock", "discard_pile", "knock_card"], problem)
        self.hands, self.stock, self.pile = [C.to_mask(h) for h in hands], stock[::-1], pile
        self._read_stakes(f, written)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, 1,
                                        "the seat to move, -1 once the game is over")
        self.passed = f.booleans("passed", self.passed, NUM_PLAYERS)
        self.taken_card = f.optional_card("taken_card", None)
        self.known, self.discarded = ([_distinct(f"{key}[{p}]", row)
                                       for p, row in enumerate(f.card_rows(key, NUM_PLAYERS, [[], []]))]
                                      for key in ("known", "discarded"))
        self.turns = f.integer("turns", 0, 0, cfg.max_turns_per_hand)
        self.knocker = f.integer("knocker", -1, -1, 1, "the seat that knocked, -1 before a knock")
        self.big_gin = f.boolean("big_gin", False)
        self.knocker_melds = [C.to_mask(m) for m in f.card_lists("knocker_melds", [])]
        self.defender_melds = [C.to_mask(m) for m in f.card_lists("defender_melds", [])]
        self.layoffs = [(card, slot) for card, slot in _read_layoffs(f, "layoffs")]
        extents = list(self.knocker_melds)
        for card, slot in self.layoffs:
            if slot < len(extents):
                extents[slot] |= 1 << card
        self.meld_extents = [C.to_mask(m) for m in f.card_lists("meld_extents", [C.from_mask(m) for m in extents])]
        self.remaining = _distinct("remaining", f.cards("remaining", C.from_mask(self._undeclared())))
        self.match = cfg.match_from_dict(f.data.get("match", {}))
        self.hand_results = [_read_result(r) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    def _read_stakes(self, f: Fields, written: bool) -> None:
        """The upcard and the knock limit and multiplier it sets (Oklahoma), which must agree."""
        cfg = self.config
        self.upcard = f.card("upcard", self.pile[0] if written and self.pile else self.upcard)
        if cfg.variant == "oklahoma" and written and not f.has("upcard"):
            raise f.error("upcard", "an Oklahoma scenario needs its upcard, which sets the knock limit and the "
                                    "multiplier")
        limit, multiplier = self._stakes(self.upcard)
        source = f"the upcard {C.format_card(self.upcard)} sets" if cfg.variant == "oklahoma" else "the options set"
        self.knock_limit = f.integer("knock_limit", limit)
        if self.knock_limit != limit:
            raise f.error("knock_limit", f"expected {limit}, what {source}, got {self.knock_limit}")
        self.multiplier = f.integer("multiplier", multiplier)
        if self.multiplier != multiplier:
            raise f.error("multiplier", f"expected {multiplier}, what {source}, got {self.multiplier}")

    def _undeclared(self) -> int:
        """The declaring player's cards not declared yet, in a showdown (else none)."""
        if self.phase == Phase.KNOCKER_MELD and self.knocker >= 0:
            return self.hands[self.knocker] & ~M.union(self.knocker_melds)
        if self.phase in (Phase.DEFENDER_MELD, Phase.LAYOFF) and self.knocker >= 0:
            laid = C.to_mask(card for card, _ in self.layoffs)
            return self.hands[self.defender] & ~M.union(self.defender_melds) & ~laid
        return 0

    # -- the consistency of a state read from a dict ----------------------------------------
    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: seats and
        phase, hand sizes, the opening offer, the taken card, the knock and showdown fields
        together, the stock and pile, and the match score against the recorded hands."""
        phase, p = self.phase, self.current_player
        over = phase == Phase.GAME_OVER
        if (p < 0) != over:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {phase.name} "
                                                            "(-1 exactly when the game is over)")
        if phase in _OFFERS and p != (self.dealer if phase == Phase.OFFER_D else 1 - self.dealer):
            raise field_error(["current_player", "dealer"], f"in {phase.name} the "
                              f"{'dealer' if phase == Phase.OFFER_D else 'non-dealer'} moves")
        self._check_knock_fields()
        sizes = [h.bit_count() for h in self.hands]
        expected = [HAND_SIZE, HAND_SIZE]
        if phase == Phase.DISCARD:
            expected[p] += 1
        elif self.knocker >= 0 and self.big_gin:
            expected[self.knocker] += 1
        if sizes != expected:
            raise field_error("hands", f"hands of {sizes[0]} and {sizes[1]} cards in phase {phase.name}; expected "
                                       f"{expected[0]} and {expected[1]}")
        self._check_turn_fields()
        if self.knocker >= 0:
            self._check_showdown()
        self._check_match()
        if not over and not self.legal_actions():
            raise field_error("phase", f"player {p} has no legal action in phase {phase.name}")

    def _check_knock_fields(self) -> None:
        """The knock fields are all empty before a knock and fit the knock after it."""
        phase = self.phase
        if self.knocker < 0:
            if phase in _SHOWDOWN:
                raise field_error(["knocker", "phase"], f"phase {phase.name} needs the seat that knocked")
            fields = {"knock_card": self.knock_card >= 0, "big_gin": self.big_gin, "knocker_melds": self.knocker_melds,
                      "meld_extents": self.meld_extents, "defender_melds": self.defender_melds,
                      "layoffs": self.layoffs, "remaining": self.remaining}
            given = [name for name, value in fields.items() if value]
            if given:
                raise field_error(given, "a showdown field is given but nobody knocked ('knocker' is -1)")
            return
        if phase not in _SHOWDOWN and phase != Phase.GAME_OVER:
            raise field_error(["knocker", "phase"], f"a knock is recorded but phase {phase.name} comes before one")
        if self.big_gin == (self.knock_card >= 0):
            raise field_error(["knock_card", "big_gin"], "a knock puts one card face down; big gin (big_gin=true) "
                                                         "puts none")
        if self.big_gin and self.config.big_gin_bonus is None:
            raise field_error("big_gin", "big gin is not played: the option big_gin_bonus is None")

    def _check_turn_fields(self) -> None:
        """The opening offer, the taken card, the known cards, the stock, the pile and the turn
        count fit the phase."""
        cfg, phase, p = self.config, self.phase, self.current_player
        if self.passed == [False, True]:
            raise field_error("passed", "the dealer is offered the upcard only after the non-dealer passed it")
        if phase in _OFFERS:
            expected = [phase != Phase.OFFER_ND, phase == Phase.FORCED_DRAW]
            if self.passed != expected:
                raise field_error("passed", f"expected {expected} in phase {phase.name}")
            if self.pile != [self.upcard] or self.turns:
                raise field_error(["discard_pile", "upcard", "turns"], f"in phase {phase.name} the pile is just the "
                                                                       "upcard and no turn is over")
        if phase in (*_OFFERS, Phase.DRAW, Phase.LAST_CHANCE) and not self.pile:
            raise field_error("discard_pile", f"phase {phase.name} offers the top discard, but the pile is empty")
        stock, dead = len(self.stock), cfg.dead_stock_size
        if phase in (*_OFFERS, Phase.DRAW) and stock <= dead:
            raise field_error("stock", f"{stock} stock cards in phase {phase.name}: the hand ends once the stock is "
                                       f"down to dead_stock_size={dead}")
        if phase == Phase.DISCARD and stock < dead:
            raise field_error("stock", f"{stock} stock cards in phase DISCARD: fewer than dead_stock_size={dead}")
        if phase == Phase.LAST_CHANCE and (stock > dead or cfg.stock_end_rule != "opponent_last_chance"):
            raise field_error(["phase", "stock"], "LAST_CHANCE comes only with stock_end_rule='opponent_last_chance' "
                                                  f"once the stock is down to dead_stock_size={dead}")
        if self.taken_card >= 0 and (phase != Phase.DISCARD or not self.hands[p] >> self.taken_card & 1):
            raise field_error("taken_card", "the card just taken from the pile is only given in phase DISCARD, and "
                                            "it is in the hand of the player to move")
        for q in range(NUM_PLAYERS):
            if self.known[q] & ~self.hands[q]:
                raise field_error(f"known[{q}]", f"cards not in seat {q}'s hand: "
                                                 f"{C.format(C.from_mask(self.known[q] & ~self.hands[q]))}")
        if self.turns >= cfg.max_turns_per_hand and phase != Phase.GAME_OVER:
            raise field_error("turns", f"the hand ends after max_turns_per_hand={cfg.max_turns_per_hand} turns")

    def _check_showdown(self) -> None:
        """The knocker's melds, the defender's melds and layoffs, the extents and the cards
        still to declare make up the hands, as the showdown phase has them."""
        cfg, phase, k = self.config, self.phase, self.knocker
        d = 1 - k
        if phase in _SHOWDOWN and self.current_player != (k if phase == Phase.KNOCKER_MELD else d):
            raise field_error(["current_player", "knocker"], f"in {phase.name} the "
                              f"{'knocker' if phase == Phase.KNOCKER_MELD else 'defender'} moves")
        if phase == Phase.KNOCKER_MELD:
            if cfg.knocker_arrangement != "explicit":
                raise field_error("phase", "KNOCKER_MELD is played only with knocker_arrangement='explicit'")
            _check_melds("knocker_melds", self.knocker_melds, self.hands[k], table_only=True)
            if self.defender_melds or self.layoffs or self.meld_extents:
                raise field_error(["defender_melds", "layoffs", "meld_extents"], "these come after KNOCKER_MELD")
            if self.remaining != self._undeclared():
                raise field_error("remaining", "expected the knocker's cards not declared yet: "
                                               f"{C.format(C.from_mask(self._undeclared()))}")
            return
        if phase in (Phase.DEFENDER_MELD, Phase.LAYOFF) and cfg.layoff_mode != "explicit":
            raise field_error("phase", f"{phase.name} is played only with layoff_mode='explicit'")
        _check_melds("knocker_melds", self.knocker_melds, self.hands[k])
        if sorted(M.merge_runs(self.knocker_melds)) != sorted(self.knocker_melds):
            raise field_error("knocker_melds", "runs of one suit that touch are laid out as one run")
        limit = 0 if self.big_gin else self.knock_limit
        deadwood = self._knocker_deadwood()
        if deadwood > limit:
            raise field_error("knocker_melds", f"the knocker's deadwood {deadwood} is above the knock limit {limit}")
        if phase == Phase.LAYOFF and not deadwood:
            raise field_error("phase", "gin blocks layoffs: LAYOFF follows only a knock with deadwood")
        if phase == Phase.DEFENDER_MELD and self.layoffs:
            raise field_error("layoffs", "layoffs come after DEFENDER_MELD")
        _check_melds("defender_melds", self.defender_melds, self.hands[d])
        declared, laid = M.union(self.defender_melds), 0
        extents = list(self.knocker_melds)
        for i, (card, slot) in enumerate(self.layoffs):
            bit = 1 << card
            if slot >= len(extents) or not self.hands[d] & bit or (declared | laid) & bit:
                raise field_error(f"layoffs[{i}]", "expected a card of the defender's hand, in none of its melds and "
                                                   "laid off once, onto one of the knocker's melds")
            laid |= bit
            extents[slot] |= bit
        if not all(M.is_meld(e) for e in extents):
            raise field_error("layoffs", "a card laid off does not extend its meld")
        if self.meld_extents != extents:
            raise field_error("meld_extents", "expected the knocker's melds with the cards laid off on them: "
                                              + "; ".join(C.format(C.from_mask(e)) for e in extents))
        if phase == Phase.GAME_OVER:
            if self.remaining & ~self.hands[d]:
                raise field_error("remaining", "cards that are not in the defender's hand")
        elif self.remaining != self._undeclared():
            raise field_error("remaining", "expected the defender's cards not melded or laid off yet: "
                                           f"{C.format(C.from_mask(self._undeclared()))}")

    def _check_match(self) -> None:
        """The match score fits the target and, in a match, the recorded hands; the truncation
        flag fits how the game ended."""
        cfg, over, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if problem := self.match.problem(cfg):
            raise field_error("match", problem)
        if self.truncated and not over:
            raise field_error("truncated", "only a finished game is truncated")
        if cfg.episode == "hand":
            if over and results and self.truncated != (results[-1].kind == "turn_cap"):
                raise field_error("truncated", "a hand is truncated exactly when it ends at the turn cap")
            return
        if self.match.is_over() and not over:
            raise field_error(["match", "phase"], "the match is won, so the game is over")
        if over and self.truncated == self.match.is_over():
            raise field_error("truncated", "a finished match is truncated exactly when nobody won it")
        if len(results) > self.hand_index + over:
            raise field_error(["hand_results", "hand_index"], f"{len(results)} hand results, more than the hands "
                              f"played by hand index {self.hand_index}{' of a finished match' if over else ''}")
        # A scenario may start a match from given scores, so the recorded hands bound the score
        # from below: the hands each player won and the points they brought.
        recorded = cfg.new_match()
        for result in results:
            recorded.record(cfg, result)
        if not self.match.holds(recorded):
            raise field_error("match", f"less than the recorded hand_results give: {recorded.to_dict()}")
        if over and not self.match.is_over() and len(results) < cfg.max_hands_per_match:
            raise field_error(["phase", "hand_results"], "a match ends when it is won or after max_hands_per_match "
                                                         "hands")


_OFFERS = (Phase.OFFER_ND, Phase.OFFER_D, Phase.FORCED_DRAW)
_SHOWDOWN = (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF)
HAND_KINDS = ("gin", "big_gin", "knock", "undercut", "dead", "turn_cap")
STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "hand_index", "dealer",
              "phase", "current_player", "hands", "stock", "discard_pile", "upcard", "knock_limit", "multiplier",
              "taken_card", "known", "discarded", "turns", "passed", "knocker", "knock_card", "big_gin",
              "knocker_melds", "meld_extents", "remaining", "defender_melds", "layoffs", "match", "hand_results",
              "truncated", "history")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(HandResult))


def _distinct(name: str, cards: list[int]) -> int:
    """The bitmask of a list of distinct cards; ValueError naming the field on a repeat."""
    mask = C.to_mask(cards)
    if mask.bit_count() != len(cards):
        raise field_error(name, f"a card appears twice in {C.format(cards)}")
    return mask


def _check_melds(name: str, melds: list[int], hand: int, table_only: bool = False) -> None:
    """Each meld a set or a run (``table_only``: of the meld table, as declared one by one),
    disjoint from the others and inside ``hand``."""
    seen = 0
    for i, meld in enumerate(melds):
        if not (meld in M.MELD_INDEX if table_only else M.is_meld(meld)):
            raise field_error(f"{name}[{i}]", f"{C.format(C.from_mask(meld)) or 'nothing'} is not a meld (a set of "
                                              f"3-4 or a run of {'3-5' if table_only else '3 or more'} of one suit)")
        if meld & seen or meld & ~hand:
            raise field_error(f"{name}[{i}]", "a card of this meld is in another meld or not in the player's hand")
        seen |= meld


def _read_layoffs(f: Fields, key: str) -> list[list[int]]:
    """A list of ``[card, slot]`` pairs, slot 0..2 (a knocker meld)."""
    out = []
    for i, pair in enumerate(f.items(key, [])):
        name = f"{f.name(key)}[{i}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise field_error(name, f"expected a pair [card, knocker meld index], got {pair!r}")
        card = parse_card(pair[0], False, lambda m, name=name: field_error(f"{name}[0]", m))
        slot = check_integer(pair[1], 0, MAX_KNOCKER_MELDS - 1, lambda m, name=name: field_error(f"{name}[1]", m),
                             "the index of a knocker meld")
        out.append([card, slot])
    return out


def _read_result(f: Fields) -> HandResult:
    """One ``hand_results`` entry (``dataclasses.asdict`` of a ``HandResult``, cards as ids)."""
    kind = f.choice("kind", HAND_KINDS)
    result = HandResult(
        kind=kind,
        winner=f.integer("winner", -1, -1, 1),
        points=f.integers("points", [0, 0], NUM_PLAYERS, 0),
        knocker=f.integer("knocker", -1, -1, 1),
        deadwood=f.integers("deadwood", [0, 0], NUM_PLAYERS, 0),
        knocker_melds=f.card_lists("knocker_melds", []),
        defender_melds=f.card_lists("defender_melds", []),
        layoffs=_read_layoffs(f, "layoffs"),
        hands=f.card_rows("hands", NUM_PLAYERS) if f.items("hands", []) else [],
    )
    no_winner = kind in ("dead", "turn_cap")
    if no_winner != (result.winner < 0) or (result.winner >= 0 and result.points[1 - result.winner]):
        raise f.error(["kind", "winner", "points"], "a dead or capped hand has no winner; otherwise only the winner "
                                                    "scores")
    if no_winner != (result.knocker < 0):
        raise f.error(["kind", "knocker"], "a hand is knocked exactly when it is not dead or capped")
    return result


def replay(config: GinConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None, state_class: type[GinState] = GinState) -> GinState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); the
    deck and first dealer are those given to the game, when they were given."""
    state = state_class(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
