"""Writing and reading the state dict of Manipulation Rummy (docs/manipulation_rummy.md#state-dicts):
``to_dict``, and ``from_dict``, which refuses with a ValueError naming the field any dict
the rules could not reach."""

from __future__ import annotations

import dataclasses
from collections import Counter
from operator import add
from typing import Any, ClassVar, TypeVar

from rummy_envs import cards as C
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.games.manipulation_rummy.actions import NUM_ACTIONS, Phase
from rummy_envs.games.manipulation_rummy.commit import is_meld
from rummy_envs.games.manipulation_rummy.counts import JOKER, NUM_CARDS, cards_of, counts_of, hand_value
from rummy_envs.games.manipulation_rummy.match_checks import check_match
from rummy_envs.games.manipulation_rummy.options import GAME, ManipulationConfig
from rummy_envs.games.manipulation_rummy.rules import ManipulationRules
from rummy_envs.games.manipulation_rummy.scoring import ROUND_KINDS, RoundResult, round_points, round_winners
from rummy_envs.state_dicts import (FORMAT_VERSION, Fields, card_count_error, check_playable, field_error, read_header,
                                    read_options)

STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "round_index", "dealer",
              "phase", "current_player", "draws", "hands", "known", "limit_seen", "stock", "table_naturals", "table_jokers", "commit",
              "totals", "rounds_won", "final", "winners", "hand_results", "truncated", "history")
LIMIT_SEEN = (None, "within", "above")  # a hand against knock_limit as its turn ended (``limit_seen``)
COMMIT_KEYS = ("start_naturals", "start_jokers", "placed", "spare_naturals", "free_jokers", "ops")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(RoundResult))

_StateT = TypeVar("_StateT", bound="ManipulationStateDict")


class ManipulationStateDict(ManipulationRules):
    """The state dict of ``ManipulationState`` (which inherits this): ``to_dict``, and
    ``from_dict`` with its checks of every field and of what the rules can reach."""

    config_class: ClassVar[type[ManipulationConfig]] = ManipulationConfig
    seed: int
    history: list[int]
    initial_deck: list[int] | None
    first_dealer: int

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able description of the whole state (cards as strings)."""
        fmt = C.format_card
        cards = lambda ids: [fmt(c) for c in ids]  # noqa: E731
        commit = None
        if self.in_commit:
            commit = {"start_naturals": cards(cards_of(self.start_naturals)),
                      "start_jokers": cards(cards_of(self.start_jokers)),
                      "placed": cards(cards_of(self.placed)),
                      "spare_naturals": cards(cards_of(self.spare)),
                      "free_jokers": self.free_jokers,
                      "ops": self.ops}
        return {
            "format_version": FORMAT_VERSION,
            "game": GAME,
            "options": dataclasses.asdict(self.config),
            "seed": self.seed,
            "initial_deck": None if self.initial_deck is None else cards(self.initial_deck),
            "first_dealer": self.first_dealer,
            "round_index": self.round_index,
            "dealer": self.dealer,
            "phase": self.phase.name,
            "current_player": self.current_player,
            "draws": self.draws,
            "hands": [cards(self.hand_cards(q)) for q in range(self.n)],
            "known": [cards(cards_of(k)) for k in self.known],
            "limit_seen": list(self.limit_seen),
            "stock": cards(reversed(self.stock)),
            "table_naturals": cards(cards_of(self.naturals)),
            "table_jokers": cards(cards_of(self.jokers_at)),
            "commit": commit,
            "totals": list(self.totals),
            "rounds_won": list(self.rounds_won),
            "final": None if self.final is None else list(self.final),
            "winners": list(self.winners),
            "hand_results": [dataclasses.asdict(r) for r in self.hand_results],
            "truncated": self.truncated,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls: type[_StateT], data: Any) -> _StateT:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (the fields:
        docs/manipulation_rummy.md#state-dicts).

        Missing keys take the values of a fresh round: a scenario may give just ``hands``,
        ``stock`` (top first), ``table_naturals``, ``table_jokers`` (the identities of the
        jokers on the table), ``phase``, ``current_player``, ``draws`` and ``dealer``. Every
        card of the game must be in exactly one place, and the table must be legal (in a
        commit, the table as the commit began).
        """
        state = cls._read_dict(data)
        if state.in_commit:
            state._check_commit_can_end()
        check_playable(state)
        return state

    @classmethod
    def _read_dict(cls: type[_StateT], data: Any) -> _StateT:
        """``from_dict`` but for what the hidden hand of the player to move decides: that its
        commit in progress can end with COMMIT (``sample_from_view`` redeals that hand until
        it can), and the search that the turn can be played on."""
        fields = Fields(data, STATE_KEYS)
        read_header(fields, GAME)
        config = read_options(fields, cls.config_class)
        n = config.num_players
        dealer = fields.integer("dealer", 0, 0, n - 1, "the dealer's seat")
        deck = fields.optional_cards("initial_deck", None, jokers=True)
        if deck is not None and (problem := card_count_error(deck, config.full_deck())):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer)  # type: ignore[call-arg]
        state.round_index = fields.integer("round_index", 0, 0, config.max_rounds - 1)
        left = (dealer - state.round_index) % n  # the first dealer when the deal passes left
        state.first_dealer = fields.integer("first_dealer", left if config.next_dealer == "left" else dealer, 0, n - 1)
        state._read_fields(fields)
        state._check_rules()
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types and ranges and that
        every card of the game is in exactly one place."""
        cfg, n = self.config, self.n
        written = f.has("hands")
        hands = f.card_rows("hands", n, jokers=True) if written else [self.hand_cards(q) for q in range(n)]
        stock = f.cards("stock", [] if written else self.stock[::-1], jokers=True)
        naturals = f.cards("table_naturals", [] if written else cards_of(self.naturals))
        jokers = f.cards("table_jokers", [] if written else cards_of(self.jokers_at))
        self._clear_commit()
        if f.has("commit") and f.data["commit"] is not None:
            c = Fields(f.data["commit"], COMMIT_KEYS, f.name("commit"))
            self.start_naturals = counts_of(c.cards("start_naturals"), NUM_CARDS)
            self.start_jokers = counts_of(c.cards("start_jokers"), NUM_CARDS)
            self.placed = counts_of(c.cards("placed", jokers=True))
            self.spare = counts_of(c.cards("spare_naturals"), NUM_CARDS)
            self.free_jokers = c.integer("free_jokers", 0, 0, cfg.total_jokers, "freed jokers waiting")
            self.ops = c.integer("ops", 1, 1, cfg.max_table_ops_per_turn - 1, "placements so far")
        everything = [card for hand in hands for card in hand] + stock + naturals
        everything += [JOKER] * (len(jokers) + self.free_jokers)
        if problem := card_count_error(everything, cfg.full_deck()):
            raise field_error(["hands", "stock", "table_naturals", "table_jokers", "commit.free_jokers"], problem)
        self.hands = [counts_of(h) for h in hands]
        self.known = [counts_of(k) for k in f.card_rows("known", n, [[]] * n, jokers=True)]
        self.sizes = [len(h) for h in hands]
        self.stock = stock[::-1]
        self.naturals, self.jokers_at = counts_of(naturals, NUM_CARDS), counts_of(jokers, NUM_CARDS)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, n - 1,
                                        "the seat to move, -1 once the game is over")
        self.draws = f.integer("draws", self.draws, 0, cfg.max_draws, "draws of the player to move this turn")
        deciding = self.phase == Phase.END_OF_TURN  # left out: the knock decision shows its hand within the limit
        self.limit_seen = f.items("limit_seen", [("within" if deciding and q == self.current_player else None)
                                                 for q in range(n)], length=n)
        for q, seen in enumerate(self.limit_seen):
            if seen not in LIMIT_SEEN:
                raise f.error("limit_seen", f"entry {q}: expected null, 'within' or 'above', got {seen!r}")
        self.totals = f.integers("totals", [0] * n, n, 0, meaning="a seat's match total")
        self.rounds_won = f.integers("rounds_won", [0] * n, n, 0, meaning="rounds a seat has won")
        self.final = None if f.data.get("final") is None else f.integers("final", length=n, low=0)
        self.winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
        self.hand_results = [_read_result(r, cfg) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: the
        identity limit, the phase against the seat, draws and hand, the hands, the commit in
        progress, a legal table, and the match's summaries (``match_checks``)."""
        p, phase = self.current_player, self.phase
        over = phase == Phase.GAME_OVER
        committed = (self.start_naturals, self.start_jokers) if self.in_commit else (self.naturals, self.jokers_at)
        names = ["commit.start_naturals", "commit.start_jokers"] if self.in_commit else ["table_naturals",
                                                                                         "table_jokers"]
        counts = list(map(add, *committed))
        if self.max_copies is not None:  # a commit in progress may pass the limit on its way to a legal table
            over_limit = [c for c, k in enumerate(counts) if k > self.max_copies]
            if over_limit:
                raise field_error(names, f"{C.format(over_limit)} on the table more often than "
                                         f"joker_identity_limit allows ({self.max_copies})")
        if (p < 0) != over:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {phase.name} "
                                                            "(-1 exactly when the game is over)")
        if not over:
            self._check_turn()
        elif self.in_commit:
            raise field_error("commit", "a finished game has no commit in progress")
        self._check_limits_seen()
        for q in range(self.n):
            before = map(add, self.hands[q], self.placed) if q == p and self.in_commit else self.hands[q]
            if any(k > h for k, h in zip(self.known[q], before)):
                raise field_error(f"known[{q}]", "the cards known in a hand are in it (for the player in a commit, "
                                                 "in its hand as the commit began)")
        arranged = TS.arrange(counts, self.max_copies)
        if arranged is None:
            raise field_error(names, "the table is not legal: its cards form no groups and sequences")
        self.arrangement = tuple(tuple(meld) for meld in arranged)
        check_match(self)

    def _check_limits_seen(self) -> None:
        """Each hand seen against ``knock_limit`` as its turn ended is still on that side of
        it; only the end-of-turn knock shows it, and the player to move in a meld decision
        has drawn since its last turn ended."""
        limit = self.config.knock_limit
        for q, seen in enumerate(self.limit_seen):
            if seen is None:
                continue
            if self.config.knock_timing != "end_of_turn":
                raise field_error(["limit_seen", "options"], "only the end-of-turn knock shows a hand against "
                                                             "knock_limit as a turn ends (knock_timing='end_of_turn')")
            if (seen == "within") != (self.hand_value(q) <= limit):
                raise field_error(["limit_seen", f"hands[{q}]"], f"hand {q} was seen {seen} knock_limit as its turn "
                                                                 "ended and has not changed since")
            if q == self.current_player and self.phase == Phase.MELD:
                raise field_error(["limit_seen", "phase"], "the player to move in a meld decision has drawn since "
                                                           "its last turn ended")

    def _check_turn(self) -> None:
        """The phase fits the options, the draws, the hand of the player to move and the
        stock; hands in play hold cards; a commit in progress fits the table and the hand."""
        cfg, p, phase = self.config, self.current_player, self.phase
        value = self.hand_value(p)
        if phase == Phase.TURN_START and (cfg.knock_timing != "start_of_turn" or self.draws
                                          or value > cfg.knock_limit):
            raise field_error(["phase", "draws", "hands"], "TURN_START is a knock decision: knock_timing="
                                                           "'start_of_turn', no draw yet, a hand within knock_limit")
        if phase == Phase.TURN_START and not self.stock and cfg.stock_out_trigger == "last_card_drawn":
            raise field_error(["stock", "phase"], "with stock_out_trigger='last_card_drawn' the round ends as the "
                                                  "turn that drew the last card ends: no turn starts on an empty stock")
        if phase == Phase.MELD and not 1 <= self.draws < cfg.max_draws:
            raise field_error(["phase", "draws"], f"a meld decision follows draw 1..{cfg.max_draws - 1} "
                                                  f"(max_draws - 1), got {self.draws}")
        if phase == Phase.MELD and self.sizes[p] + sum(self.placed) <= self.draws:
            raise field_error(["draws", f"hands[{p}]"], f"a hand of {self.sizes[p] + sum(self.placed)} cards before "
                                                        f"this commit cannot hold {self.draws} cards drawn this turn "
                                                        "and one from before it")
        if phase == Phase.END_OF_TURN and (cfg.knock_timing != "end_of_turn" or value > cfg.knock_limit
                                           or not self.sizes[p]):
            raise field_error(["phase", "hands"], "END_OF_TURN is a knock decision: knock_timing='end_of_turn' "
                                                  "and a non-empty hand within knock_limit")
        if phase == Phase.END_OF_TURN and not self.draws:
            raise field_error(["phase", "draws"], "END_OF_TURN follows a draw of this turn")
        if phase == Phase.END_OF_TURN and self.draws == cfg.max_draws and self.sizes[p] <= self.draws:
            raise field_error(["draws", f"hands[{p}]"], f"no meld follows the last draw (max_draws): a hand of "
                                                        f"{self.sizes[p]} cards cannot hold the {self.draws} cards "
                                                        "drawn this turn and one from before it")
        for q in range(self.n):
            if not self.sizes[q] and not (q == p and self.in_commit):
                raise field_error(f"hands[{q}]", "a hand in play holds no card (emptying a hand ends the round)")
        if self.in_commit:
            self._check_commit()

    def _check_commit(self) -> None:
        """The commit in progress is one some placements made (docs/manipulation_rummy.md#commit):
        the table is the one it began with plus what was placed, each joker left its
        identity only when a natural of it freed it, and ``ops`` counts the placements."""
        start_naturals, start_jokers, placed, spare = self.start_naturals, self.start_jokers, self.placed, self.spare
        if self.phase != Phase.MELD:
            raise field_error(["commit", "phase"], "a commit is in progress only in phase MELD")
        if list(map(add, start_naturals, placed[:NUM_CARDS])) != self.naturals:
            raise field_error(["commit.start_naturals", "commit.placed", "table_naturals"],
                              "the table's naturals must be those at the start plus the naturals placed")
        if sum(start_jokers) + placed[JOKER] != sum(self.jokers_at) + self.free_jokers:
            raise field_error(["commit.start_jokers", "commit.placed", "commit.free_jokers", "table_jokers"],
                              "the jokers at the start plus those placed must be on the table or freed")
        # a natural c on the table at the start or placed, and no longer spare, freed a joker at c
        freed = [k + q - s for k, q, s in zip(start_naturals, placed, spare)]
        if min(freed) < 0:
            raise field_error("commit.spare_naturals",
                              "only naturals on the table at the start or placed in this commit can free a joker")
        if any(j + f < k for j, f, k in zip(self.jokers_at, freed, start_jokers)):
            raise field_error(["commit.start_jokers", "table_jokers"], "a joker leaves its identity only when a "
                                                                       "natural of that identity frees it")
        if self.free_jokers > sum(freed):
            raise field_error("commit.free_jokers", f"{self.free_jokers} freed jokers waiting, but naturals "
                                                    f"freed {sum(freed)}")
        if any(freed) and not placed[JOKER] and not any(f and k for f, k in zip(freed, start_jokers)):
            raise field_error(["commit.spare_naturals", "commit.start_jokers"],
                              "the first joker freed was on the table or came from the hand")
        # each natural placed went down alone (PLACE) or freeing a joker (REPLACE_FROM_HAND, one op
        # less than PLACE then REPLACE_FROM_TABLE); each freed joker not waiting went back (FREED_AS)
        most = sum(placed) + 2 * sum(freed) - self.free_jokers
        fewest = most - sum(map(min, placed[:NUM_CARDS], freed))
        if not fewest <= self.ops <= most:
            raise field_error("commit.ops", f"expected {fewest}..{most} placements for these cards, got {self.ops}")

    def _check_commit_can_end(self) -> None:
        """Some placements still lead to a legal COMMIT: the mask offers no other placement."""
        if not TS.commit_options(self.commit_problem()).feasible:
            raise field_error(["commit", f"hands[{self.current_player}]"],
                              "no legal COMMIT can follow (every placement offered keeps one reachable)")


def _read_result(f: Fields, config: ManipulationConfig) -> RoundResult:
    """One ``hand_results`` entry (``dataclasses.asdict`` of a ``RoundResult``, cards as ids)."""
    n = config.num_players
    kind = f.choice("kind", ROUND_KINDS)
    ender = f.integer("ender", -1, -1, n - 1, "the seat that went out or knocked")
    if (kind == "stock_out") != (ender < 0):
        raise f.error(["kind", "ender"], "a round ends by a seat (out, knock) exactly when it has an ender")
    values = f.integers("values", [], low=0, meaning="a hand value")
    winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
    points = f.integers("points", [], low=0, meaning="a seat's points")
    for key, got in (("values", values), ("points", points)):
        if got and len(got) != n:
            raise f.error(key, f"expected {n} entries (one per seat) or none, got {len(got)}")
    hands = f.card_rows("hands", n, jokers=True) if f.items("hands", []) else []
    if values:
        if hands and values != [hand_value(counts_of(h)) for h in hands]:
            raise f.error(["values", "hands"], f"expected {[hand_value(counts_of(h)) for h in hands]}, the values "
                                               "of the hands")
        if [q for q, v in enumerate(values) if not v] != ([ender] if kind == "out" else []):
            raise f.error(["values", "kind"], "exactly the seat that went out ends a round with an empty hand "
                                              "(worth 0)")
        if kind == "knock" and values[ender] > config.knock_limit:
            raise f.error(["values", "ender"], "a knocker's hand is worth at most knock_limit")
    if winners and (values or kind == "out") and winners != round_winners(kind, ender, values or [0] * n):
        raise f.error("winners", f"expected {round_winners(kind, ender, values or [0] * n)} for this ending and "
                                 "these values (the seat that went out, whatever the values)")
    if values and points and points != round_points(config, kind, ender, values):
        raise f.error("points", f"expected {round_points(config, kind, ender, values)} for these values")
    table = f.card_lists("table", [])
    jokers = f.cards("table_jokers", [])
    identities = Counter(card for meld in table for card in meld)
    limit = config.identity_limit
    if not all(map(is_meld, table)) or (limit is not None and max(identities.values(), default=0) > limit):
        raise f.error("table", "the table a round ends with is legal melds, within joker_identity_limit")
    if Counter(jokers) - identities:
        raise f.error(["table_jokers", "table"], "the jokers hold identities of cards on the table")
    revealed = Counter(card for hand in hands for card in hand) + identities - Counter(jokers)
    revealed[JOKER] += len(jokers)
    if revealed - Counter(config.full_deck()):
        raise f.error(["hands", "table", "table_jokers"], "the hands and table a round ends with hold each card of "
                                                          "the deck at most once")
    totals = f.integers("totals", [], low=0, meaning="a seat's match total")
    return RoundResult(kind, ender, values, winners, points, hands, table, jokers, totals)

