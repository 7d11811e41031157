"""Writing and reading the state dict of a gin game (docs/gin_rummy.md#state-dicts): ``to_dict``,
and ``from_dict``, which reads every field with its type and range and then refuses any
state the rules could not reach, naming the field.

``GinStateDict`` is a mixin of ``GinState`` (state.py): it reads the fields into a fresh
deal, then checks them against the rules of rules.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.gin_rummy.actions import HAND_SIZE, MAX_KNOCKER_MELDS, NUM_ACTIONS, NUM_PLAYERS, Phase
from rummy_envs.games.gin_rummy.match import StandardMatch
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.rules import GinRules
from rummy_envs.games.gin_rummy.scoring import HAND_KINDS, HandResult, hand_stakes
from rummy_envs.state_dicts import (FORMAT_VERSION, Fields, card_count_error, check_integer, check_playable,
                                    field_error, parse_card, read_header, read_options)

_OFFERS = (Phase.OFFER_ND, Phase.OFFER_D, Phase.FORCED_DRAW)
_SHOWDOWN = (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF)
STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "hand_index", "dealer",
              "phase", "current_player", "hands", "stock", "discard_pile", "upcard", "knock_limit", "multiplier",
              "taken_card", "known", "discarded", "turns", "passed", "knocker", "knock_card", "big_gin",
              "knocker_melds", "meld_extents", "remaining", "defender_melds", "layoffs", "match", "hand_results",
              "truncated", "history")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(HandResult))
StateT = TypeVar("StateT", bound="GinStateDict")


class GinStateDict(GinRules):
    """``to_dict`` and ``from_dict`` with the checks of a dict read back."""

    config_class: ClassVar[type[GinConfig]]
    match_class: ClassVar[type[StandardMatch]]
    history: list[int]
    initial_deck: list[int] | None
    first_dealer: int

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
    def from_dict(cls: type[StateT], data: Any) -> StateT:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field
        (docs/gin_rummy.md#state-dicts lists the fields).

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
        self.match = self.match_class.from_dict(f.data.get("match", {}))
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
        limit, multiplier = hand_stakes(cfg, self.upcard)
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
            return self.hands[1 - self.knocker] & ~M.union(self.defender_melds) & ~laid
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
        if self.hand_index == 0 and self.first_dealer != self.dealer:
            raise field_error(["first_dealer", "dealer"], "the first hand is dealt by the first dealer")
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
        check_playable(self)

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
        stock = C.to_mask(self.stock)
        for q in range(NUM_PLAYERS):
            if self.known[q] & ~self.hands[q]:
                raise field_error(f"known[{q}]", f"cards not in seat {q}'s hand: "
                                                 f"{C.format(C.from_mask(self.known[q] & ~self.hands[q]))}")
            if self.discarded[q] & stock:
                raise field_error(f"discarded[{q}]", "a discarded card goes to the pile and never back to the stock: "
                                                     f"{C.format(C.from_mask(self.discarded[q] & stock))}")
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
            if over and not results:
                raise field_error(["phase", "hand_results"], "a finished hand ends with its result in hand_results")
            if over and results[-1].knocker != self.knocker:
                raise field_error(["hand_results", "knocker"], "the finished hand's result has another knocker")
            if over and self.truncated != (results[-1].kind == "turn_cap"):
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
        recorded = self.match_class()
        for result in results:
            recorded.record(cfg, result)
        if not self.match.holds(recorded):
            raise field_error("match", f"less than the recorded hand_results give: {recorded.to_dict()}")
        if over and not self.match.is_over() and len(results) < cfg.max_hands_per_match:
            raise field_error(["phase", "hand_results"], "a match ends when it is won or after max_hands_per_match "
                                                         "hands")


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
