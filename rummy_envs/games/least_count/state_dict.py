"""Writing and reading Least Count's state dict (docs/least_count.md#state-dicts): the
mixin ``LeastCountStateDict`` gives ``LeastCountState`` its ``to_dict`` and ``from_dict``,
which refuses, naming the field, any dict the rules could not reach."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar, TypeVar

from rummy_envs import cards as C
from rummy_envs.games.least_count.rules import (
    DECLARE,
    DISCARD,
    GAME,
    JOKER,
    NUM_ACTIONS,
    PICK_OPEN,
    LeastCountConfig,
    Phase,
    action_to_str,
    card_values,
    is_legal_discard,
)
from rummy_envs.games.least_count.scoring import RoundResult, is_past_elimination, match_after_round, score_round
from rummy_envs.state_dicts import (FORMAT_VERSION, Fields, card_count_error, check_playable, field_error, read_header,
                                    read_options)

STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "round_index", "dealer",
              "phase", "current_player", "hands", "stock", "open_set", "pending_discard", "dead_pile", "cut_card",
              "known", "turn_done", "turns", "reshuffles", "totals", "out_round", "winners", "hand_results",
              "truncated", "history")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(RoundResult))
ROUND_KINDS = ("valid_declaration", "false_declaration", "timeout")
StateT = TypeVar("StateT", bound="LeastCountStateDict")


class LeastCountStateDict:
    """``to_dict`` and ``from_dict`` of ``LeastCountState``, which inherits them, and the
    checks that a dict read is a state the rules can reach."""

    config_class: ClassVar[type[LeastCountConfig]]

    def to_dict(self) -> dict[str, Any]:
        """A plain JSON-able description of the whole state (cards as strings)."""
        fmt = C.format_card
        cards = lambda ids: [fmt(c) for c in ids]  # noqa: E731
        return {
            "format_version": FORMAT_VERSION,
            "game": GAME,
            "options": self.config.as_options(),
            "seed": self.seed,
            "initial_deck": None if self.initial_deck is None else cards(self.initial_deck),
            "first_dealer": self.first_dealer,
            "round_index": self.round_index,
            "dealer": self.dealer,
            "phase": self.phase.name,
            "current_player": self.current_player,
            "hands": [cards(h) for h in self.hands],
            "stock": cards(reversed(self.stock)),
            "open_set": cards(self.open_set),
            "pending_discard": cards(self.pending),
            "dead_pile": cards(self.dead),
            "cut_card": fmt(self.cut_card) if self.cut_card >= 0 else None,
            "known": [cards(k) for k in self.known],
            "turn_done": list(self.turn_done),
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "totals": list(self.totals),
            "out_round": list(self.out_round),
            "winners": list(self.winners),
            "hand_results": [r.as_dict() for r in self.hand_results],
            "truncated": self.truncated,
            "history": list(self.history),
        }

    @classmethod
    def from_dict(cls: type[StateT], data: Any) -> StateT:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (the fields:
        docs/least_count.md#state-dicts).

        Missing keys take the values of a fresh round: a scenario may give just ``hands``,
        ``stock``, ``open_set``, ``dead_pile``, ``phase``, ``current_player``, ``dealer`` and
        ``turn_done``. Every card of the game must be in exactly one place.
        """
        fields = Fields(data, STATE_KEYS)
        read_header(fields, GAME)
        config = read_options(fields, cls.config_class)
        n = config.num_players
        dealer = fields.integer("dealer", 0, 0, n - 1, "the dealer's seat")
        round_index = fields.integer("round_index", 0, 0, config.max_rounds - 1, "the round in play, from 0")
        deck = fields.optional_cards("initial_deck", None, jokers=True)
        if deck is not None and (problem := card_count_error(deck, config.full_deck())):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer)
        state.out_round = fields.integers("out_round", state.out_round, n, 0, config.max_rounds,
                                          "the round after which the seat was eliminated, 0 while it plays")
        if round_index:
            state.round_index = round_index
            if len(state.active_seats()) > 1 and not state.out_round[dealer]:
                state._deal(dealer, None)
        state.first_dealer = fields.integer("first_dealer", dealer, 0, n - 1)
        state._read_fields(fields)
        state._check_rules()
        check_playable(state)
        return state

    def _read_fields(self, f: Fields) -> None:
        """Set every field of the dict over this fresh deal, checking types, ranges and that
        every card of the game is in exactly one place."""
        cfg, n = self.config, self.n
        written = f.has("hands")
        hands = f.card_rows("hands", n, jokers=True) if written else [list(h) for h in self.hands]
        stock = f.cards("stock", [] if written else self.stock[::-1], jokers=True)
        open_set = f.cards("open_set", [] if written else self.open_set, jokers=True)
        pending = f.cards("pending_discard", [], jokers=True)
        dead = f.cards("dead_pile", [] if written else self.dead, jokers=True)
        cut = f.optional_card("cut_card", None if written else (self.cut_card if self.cut_card >= 0 else None),
                              jokers=True)
        placed = [card for hand in hands for card in hand] + stock + open_set + pending + dead
        placed += [cut] if cut >= 0 else []
        if problem := card_count_error(placed, cfg.full_deck()):
            raise field_error(["hands", "stock", "open_set", "pending_discard", "dead_pile", "cut_card"], problem)
        if (cut >= 0) != cfg.cut_joker:
            raise f.error("cut_card", "a cut card is given exactly when the option cut_joker is true")
        self.hands = [sorted(h) for h in hands]
        self.stock, self.open_set, self.pending, self.dead = stock[::-1], sorted(open_set), sorted(pending), dead
        self.cut_card = cut
        self.values = card_values(None if cut < 0 else cut)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, n - 1,
                                        "the seat to move, -1 once the game is over")
        self.known = [sorted(k) for k in f.card_rows("known", n, [[] for _ in range(n)], jokers=True)]
        self.turn_done = f.booleans("turn_done", self.turn_done, n)
        self.turns = f.integer("turns", 0, 0, cfg.max_turns_per_round)
        self.reshuffles = f.integer("reshuffles", 0, 0)
        most = cfg.max_rounds * (cfg.false_declare_penalty + max(C.GIN_VALUES) * cfg.hand_size)  # per round at most
        self.totals = f.integers("totals", self.totals, n, 0, most, "a seat's penalty points, no more than "
                                                                  "max_rounds rounds can score")
        self.winners = f.integers("winners", [], low=0, high=n - 1, meaning="a seat")
        self.hand_results = [_read_result(r, cfg) for r in f.records("hand_results", RESULT_KEYS, [])]
        self.truncated = f.boolean("truncated", False)
        self.history = f.integers("history", [], low=0, high=NUM_ACTIONS - 1, meaning="an action id")
        self._legal = None

    # -- the consistency of a state read from a dict ----------------------------------------
    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: seats,
        phase and eliminations, hand sizes, the pending discard and the open set, known
        cards, the turn count, the history, and the totals, winners and truncation against
        the recorded rounds."""
        cfg, n, p = self.config, self.n, self.current_player
        terminal = self.phase == Phase.GAME_OVER
        if (p < 0) != terminal:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {self.phase.name} "
                                                            "(-1 exactly when the game is over)")
        self._check_eliminations()
        if not terminal and self.out_round[p]:
            raise field_error(["current_player", "out_round"], f"current_player {p} is eliminated")
        if not terminal and self.out_round[self.dealer]:
            raise field_error(["dealer", "out_round"], f"dealer {self.dealer} is eliminated")
        if (self.phase == Phase.PICK) != bool(self.pending):
            raise field_error(["pending_discard", "phase"], "a pending discard is given exactly in the PICK phase")
        for name, cards in (("pending_discard", self.pending), ("open_set", self.open_set)):
            if cards and (len(cards) > cfg.hand_size or not is_legal_discard(cards, self.rules)):
                raise field_error(name, f"{C.format(cards)} is not a set the rules let a player discard")
        if self.turns and not self.open_set:
            raise field_error(["open_set", "turns"], "after a turn the open set is that turn's discard, never empty")
        if self.pending and not (self.open_set or self.stock or self.dead):
            raise field_error(["open_set", "stock", "dead_pile"], "the player to move must pick but there is no card "
                                                                  "to pick")
        for q in range(n):
            size = len(self.hands[q]) + (len(self.pending) if q == p else 0)
            if self.hands[q] and not self._dealt_in(q):
                raise field_error(f"hands[{q}]", f"seat {q} is eliminated but holds cards")
            if size > cfg.hand_size:
                raise field_error(f"hands[{q}]", f"seat {q} holds {size} cards, more than hand_size={cfg.hand_size}")
            mover_picking = q == p and self.phase == Phase.PICK
            if self._dealt_in(q) and not self.hands[q] and not mover_picking:
                raise field_error(f"hands[{q}]", f"seat {q} is in the round but holds no card")
            if Counter(self.known[q]) - Counter(self.hands[q]):
                raise field_error(f"known[{q}]", f"known cards of seat {q} are not all in its hand")
        if self.turns >= cfg.max_turns_per_round and not terminal:
            raise field_error("turns", f"the round ends after max_turns_per_round={cfg.max_turns_per_round} turns")
        self._check_history()
        self._check_match()

    def _dealt_in(self, seat: int) -> bool:
        """Whether ``seat`` was dealt into the round in play (or the last round, once over)."""
        out = self.out_round[seat]
        return not out or (self.phase == Phase.GAME_OVER and out == self.round_index + 1)

    def _check_eliminations(self) -> None:
        """Each elimination is past the threshold and in a round played, and none would already
        have ended the match (docs/least_count.md#elimination): a round needs two seats still
        in, and under ``first_elimination`` the first elimination ends the match."""
        cfg, terminal = self.config, self.phase == Phase.GAME_OVER
        rounds_over = self.round_index + terminal
        for q, out in enumerate(self.out_round):
            if out > rounds_over:
                raise field_error("out_round", f"seat {q} is eliminated after round {out}, but round "
                                               f"{self.round_index + 1} is {'the last' if terminal else 'in play'}")
            if out > self.round_index and cfg.episode == "hand":
                raise field_error("out_round", f"seat {q} is eliminated after round {out}, the round of this "
                                               "one-round episode, which eliminates nobody")
            if out and not is_past_elimination(cfg, self.totals[q]):
                raise field_error(["out_round", "totals"], f"seat {q} is eliminated with {self.totals[q]} points, not "
                                                           f"past elimination_score={cfg.elimination_score}")
            if out and out <= self.round_index and cfg.match_end == "first_elimination":
                raise field_error(["out_round", "round_index"], f"seat {q} was eliminated after round {out}, which "
                                  "ended the match (match_end='first_elimination')")
        still_in = len(self.active_seats())
        if not still_in or (still_in < 2 and (not terminal or cfg.episode == "hand")):
            raise field_error(["out_round", "phase"], f"{still_in} seat(s) still in the match: it is over")

    def _check_history(self) -> None:
        """The history (the whole game, or its end when a dict read mid-game was played on)
        goes as turns do: its discards take positions of a hand of ``hand_size`` and its
        picks cards of the game; a pick follows each discard and only a discard; it ends in a
        discard exactly in the PICK phase, and ends the game with a pick exactly at the
        timeout; each round it ends (counting, before any declaration, from the turn count now)
        was played and recorded; its picks since its last declaration count this round's turns."""
        cfg, history, terminal = self.config, self.history, self.phase == Phase.GAME_OVER
        cap, largest = cfg.max_turns_per_round, DISCARD + (1 << cfg.hand_size) - 2
        for i, a in enumerate(history):
            if largest < a < PICK_OPEN or (a == PICK_OPEN + JOKER and not cfg.total_jokers):
                raise field_error(f"history[{i}]", f"{action_to_str(a)} is never legal with these options")
        picks = [a >= PICK_OPEN for a in history]
        discards = [DISCARD <= a < PICK_OPEN for a in history]
        for i in range(1, len(history)):
            if discards[i - 1] != picks[i]:
                raise field_error(f"history[{i}]", "a discard is followed by a pick, and a pick follows a discard")
        if history and discards[-1] != (self.phase == Phase.PICK):
            raise field_error(["history", "phase"], "the phase is PICK exactly when the last action is a discard")
        if history and terminal and picks[-1] != (self.turns == cap):
            raise field_error(["history", "turns", "phase"], "a game ends after a pick exactly when the round times "
                                                             f"out, at max_turns_per_round={cap} turns")
        ends, since = 0, 0  # rounds the history ends (at least), picks since its last declaration
        for a, pick in zip(history, picks):
            since += pick
            if a == DECLARE:
                ends, since = ends + 1 + since // cap, 0
        if DECLARE not in history:  # the turns the round it starts in had before it, from the turns now
            since += (self.turns - since) % cap
        ends += since // cap
        if ends > min(self.round_index + terminal, len(self.hand_results)):
            raise field_error(["history", "turns", "round_index", "hand_results"],
                              f"the history ends {ends} rounds at {self.turns} turns now, more than the "
                              f"{self.round_index + terminal} played or the {len(self.hand_results)} recorded")
        if DECLARE in history and not (terminal and history[-1] == DECLARE):
            expected = cap if terminal else since % cap
            if self.turns != expected or (terminal and since % cap):
                raise field_error(["turns", "history"], f"expected {expected} turns: the picks of this round since "
                                                        "the history's last declaration")

    def _check_match(self) -> None:
        """Winners, totals, the round count and the truncation flag fit the episode, the match
        end and the recorded rounds, and a finished game's last round could end as it did.
        ``hand_results`` are the last rounds played (a scenario may leave earlier ones out),
        so each has a known round number."""
        cfg, terminal, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if len(set(self.winners)) != len(self.winners) or any(self.out_round[q] for q in self.winners):
            raise field_error("winners", "expected distinct seats that are still in the match")
        if (self.winners or self.truncated) and not terminal:
            raise field_error(["winners", "truncated"], "only a finished game has winners or is truncated")
        timed_out = self.turns == cfg.max_turns_per_round
        if cfg.episode == "hand":
            if self.winners:
                raise field_error("winners", "a one-round episode has no match winners")
            if terminal and self.truncated != timed_out:
                raise field_error(["truncated", "turns"], "a round is truncated exactly when it times out")
        elif terminal:
            self._check_match_end()
        unrecorded = self.round_index + terminal - len(results)
        if unrecorded < 0:
            raise field_error(["hand_results", "round_index"], f"{len(results)} round results, more than the rounds "
                              f"played by round index {self.round_index}{' of a finished game' if terminal else ''}")
        if results and results[-1].totals and results[-1].totals != self.totals:
            raise field_error("totals", f"expected {results[-1].totals}, the totals after the last recorded round")
        for i, result in enumerate(results):
            self._check_result(i, result, unrecorded + i + 1, terminal and i == len(results) - 1)
            after = results[i + 1] if i + 1 < len(results) else None
            if after and result.totals and after.totals and after.points and \
                    after.totals != [t + x for t, x in zip(result.totals, after.points)]:
                raise field_error(f"hand_results[{i + 1}].totals", "expected the totals after the round before "
                                                                   "plus this round's points")
        declarer = results[-1].declarer if results and results[-1].players else -1
        if terminal and cfg.declare_timing == "start_of_turn" and not (
                any(self.turn_done) and (declarer < 0 or self.turn_done[declarer])):
            raise field_error(["phase", "turn_done"], "a round ends at the timeout or by a declaration of a seat that "
                                                      "has finished a turn in it (declare_timing='start_of_turn')")
        if terminal and results:
            last = results[-1]
            if (last.kind == "timeout") != timed_out:
                raise field_error(["turns", f"hand_results[{len(results) - 1}].kind"],
                                  f"the last round {'timed out' if last.kind == 'timeout' else 'was declared'}, so "
                                  f"{'' if last.kind == 'timeout' else 'fewer than '}max_turns_per_round turns "
                                  "were played")
            if last.hands and ([sorted(h) for h in last.hands] != self.hands
                               or last.cut_card not in (-1, self.cut_card)):
                raise field_error(["hands", "cut_card", f"hand_results[{len(results) - 1}].hands"],
                                  "a finished game shows the hands and the cut card of its last round")

    def _check_match_end(self) -> None:
        """A finished match ended as ``match_after_round`` ends one: its last round eliminated
        the seats that ended it, or it reached ``max_rounds`` (truncated) with the match still
        open."""
        cfg, active = self.config, self.active_seats()
        if self.truncated == bool(self.winners):
            raise field_error(["winners", "truncated"], "a finished match has winners exactly when it is not "
                                                        "truncated")
        ended_by_elimination = (len(active) == 1 if cfg.match_end == "last_player_standing"
                                else self.round_index + 1 in self.out_round)
        if self.truncated:
            if ended_by_elimination or self.round_index + 1 != cfg.max_rounds:
                raise field_error(["truncated", "round_index", "out_round"], f"a match is cut only after "
                                  f"max_rounds={cfg.max_rounds} rounds, when no elimination ended it ({cfg.match_end})")
            return
        if not ended_by_elimination or self.round_index + 1 not in self.out_round:
            raise field_error(["phase", "out_round"], f"a match ends when its last round's eliminations end it "
                                                      f"({cfg.match_end})")
        best = min(self.totals)
        expected = active if cfg.match_end == "last_player_standing" else [q for q in range(self.n)
                                                                           if self.totals[q] == best]
        if self.winners != expected:
            raise field_error("winners", f"expected {expected} ({cfg.match_end})")

    def _check_result(self, i: int, result: RoundResult, number: int, final: bool) -> None:
        """A recorded round (round ``number``, the game's final round when ``final``) dealt in
        the seats still in then and eliminated those ``out_round`` says; in a match, these are
        the eliminations its totals make, and only the final round ends the match."""
        if not result.players:  # a hand-written record of the kind alone
            return
        cfg, out_round = self.config, self.out_round
        players = [q for q in range(self.n) if not out_round[q] or out_round[q] >= number]
        eliminated = [q for q in range(self.n) if out_round[q] == number]
        if result.players != players or sorted(result.eliminated) != eliminated:
            raise field_error([f"hand_results[{i}].players", f"hand_results[{i}].eliminated", "out_round"],
                              f"round {number} dealt in {players} and eliminated {eliminated}, by out_round")
        if cfg.episode == "match" and result.totals:
            match = match_after_round(cfg, players, result.totals, number)
            if sorted(match.eliminated) != eliminated or match.over != final:
                raise field_error([f"hand_results[{i}].totals", f"hand_results[{i}].eliminated"],
                                  f"totals {result.totals} after round {number} eliminate {sorted(match.eliminated)}"
                                  f" and {'end' if match.over else 'do not end'} the match")


def _read_result(f: Fields, config: LeastCountConfig) -> RoundResult:
    """One ``hand_results`` entry (``RoundResult.as_dict()``, cards as ids): its fields may be
    left out in a hand-written record, but those given must agree (counts with the hands and
    the cut card, points with the counts by the rules of the declaration)."""
    n = config.num_players
    kind = f.choice("kind", ROUND_KINDS)
    declarer = f.integer("declarer", -1, -1, n - 1, "the seat that declared, -1 on a timeout")
    players = f.integers("players", [], low=0, high=n - 1, meaning="a seat dealt in")
    counts, points, totals = (f.integers(key, [], low=0) for key in ("counts", "points", "totals"))
    for key, values in (("counts", counts), ("points", points), ("totals", totals)):
        if values and len(values) != n:
            raise f.error(key, f"expected {n} entries (one per seat) or none, got {len(values)}")
    if bool(players) != bool(points) or len(set(players)) != len(players):
        raise f.error(["players", "points"], "a round records the distinct seats dealt in and every seat's points "
                                             "together (or neither, in a hand-written record)")
    if (kind == "timeout") == (declarer >= 0) and (players or kind == "timeout"):
        raise f.error(["kind", "declarer"], "a round ends by a declaration of a seat dealt in, or by the timeout")
    result = RoundResult(
        kind=kind, declarer=declarer, players=players, counts=counts, points=points,
        hands=f.card_rows("hands", n, jokers=True) if f.items("hands", []) else [], totals=totals,
        eliminated=f.integers("eliminated", [], low=0, high=n - 1, meaning="a seat"),
        truncated=f.boolean("truncated", kind == "timeout"),
        cut_card=f.integer("cut_card", -1, -1, JOKER, "the cut card's id, -1 if none"),
    )
    if result.truncated != (kind == "timeout"):
        raise f.error(["truncated", "kind"], "a round is truncated exactly when it times out")
    if f.has("cut_card") and (result.cut_card >= 0) != config.cut_joker:
        raise f.error("cut_card", "a round has a cut card exactly when the option cut_joker is true")
    if not players:
        return result
    if declarer >= 0 and declarer not in players or any(q not in players for q in result.eliminated):
        raise f.error(["declarer", "eliminated"], "the declarer and the seats eliminated were dealt in")
    if any(points[q] or (counts and counts[q]) or (result.hands and result.hands[q])
           for q in range(n) if q not in players):
        raise f.error(["points", "counts", "hands"], "a seat not dealt in scores nothing and shows no hand")
    if result.hands and not all(0 < len(result.hands[q]) <= config.hand_size for q in players):
        raise f.error("hands", f"each seat dealt in shows 1 to hand_size={config.hand_size} cards")
    if result.hands and counts:
        values = card_values(None if result.cut_card < 0 else result.cut_card)
        expected = [sum(values[c] for c in result.hands[q]) if q in players else 0 for q in range(n)]
        if counts != expected:
            raise f.error("counts", f"expected {expected}, the values of the hands shown")
    if counts:
        scored, expected = score_round(config, declarer, players, counts)
        if scored != kind:
            raise f.error(["kind", "counts"], f"these counts make the round a {scored.replace('_', ' ')}")
        if points != expected:
            raise f.error("points", f"expected {expected}, by the rules of a {kind.replace('_', ' ')}")
    return result

