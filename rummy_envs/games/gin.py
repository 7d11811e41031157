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
from rummy_envs.errors import IllegalActionError
from rummy_envs.options import build, check_bool, check_choice, check_int

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

    def match_from_dict(self, data: dict[str, Any]) -> StandardMatch:
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
    def from_dict(cls, data: dict[str, Any]) -> StandardMatch:
        return cls(list(data.get("totals", [0, 0])), list(data.get("wins", [0, 0])), data.get("winner", -1))

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
        if action not in self.legal_actions():
            raise IllegalActionError(
                action, action_to_str(action) if isinstance(action, int) else repr(action),
                f"player {self.current_player}", self.phase.name, [action_to_str(a) for a in self.legal_actions()],
            )
        action = int(action)
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
    def from_dict(cls, data: dict[str, Any]) -> GinState:
        """Rebuild a state from ``to_dict`` output (or a hand-written scenario).

        Missing keys take the values of a fresh hand: a scenario may give just ``hands``,
        ``stock``, ``discard_pile``, ``phase``, ``current_player`` and ``dealer`` (and, in
        Oklahoma, the ``upcard`` that sets the knock limit).
        """
        game = data.get("game", cls.config_class.game)
        if game != cls.config_class.game:
            raise ValueError(f"state dict of game {game!r} given to {cls.__name__} ({cls.config_class.game!r})")
        config = cls.config_class.from_kwargs(**data.get("options", {}))
        state = cls(config, seed=data.get("seed", 0), dealer=data.get("dealer", 0))
        card = C.parse_card
        masks = lambda key: [C.to_mask(C.parse(cs)) for cs in data[key]]  # noqa: E731
        state.hand_index = data.get("hand_index", 0)
        if data.get("initial_deck") is not None:
            state.initial_deck = C.check_deck(data["initial_deck"], range(C.NUM_CARDS))
        state.first_dealer = data.get("first_dealer", state.dealer)
        if "hands" in data:
            state.hands = masks("hands")
            state.stock = [card(c) for c in reversed(data.get("stock", []))]
            state.pile = [card(c) for c in data.get("discard_pile", [])]
        if "upcard" in data:
            state.upcard = card(data["upcard"])
        elif "hands" in data:
            if config.variant == "oklahoma" and "knock_limit" not in data:
                raise ValueError("an Oklahoma scenario needs its 'upcard' (or 'knock_limit' and 'multiplier')")
            state.upcard = state.pile[0] if state.pile else state.upcard
        state.knock_limit, state.multiplier = state._stakes(state.upcard)
        state.phase = Phase[data.get("phase", state.phase.name)]
        state.current_player = data.get("current_player", state.current_player)
        for key in ("knock_limit", "multiplier", "turns", "knocker", "big_gin", "truncated"):
            if key in data:
                setattr(state, key, data[key])
        state.passed = list(data.get("passed", state.passed))
        state.taken_card = card(data["taken_card"]) if data.get("taken_card") else -1
        state.knock_card = card(data["knock_card"]) if data.get("knock_card") else -1
        for key in ("known", "discarded", "knocker_melds", "meld_extents", "defender_melds"):
            if key in data:
                setattr(state, key, masks(key))
        state.remaining = C.to_mask(C.parse(data.get("remaining", [])))
        state.layoffs = [(card(c), int(s)) for c, s in data.get("layoffs", [])]
        state.match = config.match_from_dict(data.get("match", {}))
        state.hand_results = [HandResult(**r) for r in data.get("hand_results", [])]
        state.history = list(data.get("history", []))
        state._check_conservation()
        return state

    def _check_conservation(self) -> None:
        every = self.hands[0], self.hands[1], C.to_mask(self.stock), C.to_mask(self.pile)
        total = sum(m.bit_count() for m in every) + (self.knock_card >= 0)
        union = every[0] | every[1] | every[2] | every[3] | ((1 << self.knock_card) if self.knock_card >= 0 else 0)
        if total != C.NUM_CARDS or union != C.FULL_DECK_MASK:
            raise ValueError("state does not hold each of the 52 cards exactly once (hands, stock, discard pile, knock card)")


def replay(config: GinConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None, state_class: type[GinState] = GinState) -> GinState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); the
    deck and first dealer are those given to the game, when they were given."""
    state = state_class(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
