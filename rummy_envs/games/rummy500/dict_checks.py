"""The checks that a state read from a state dict is one the rules can reach
(docs/rummy500.md#state-dicts). ``Rummy500DictChecks`` holds them as methods of
``Rummy500State``, which inherits them through ``Rummy500StateDict``; its ``from_dict`` reads
every field (state_dict.py), then runs ``_check_rules``. Each refusal is a ``field_error``
naming the fields that disagree. ``founders`` says who could have melded a meld, for the
meld reader.
"""

from __future__ import annotations

from rummy_envs import cards as C
from rummy_envs.games.rummy500.actions import PICK, PICK_JOKER, Phase
from rummy_envs.games.rummy500.melds import ms_count
from rummy_envs.games.rummy500.rules import Rummy500Rules
from rummy_envs.games.rummy500.scoring import match_winners
from rummy_envs.state_dicts import check_playable, field_error

FOUNDED = 3  # a new meld has at least three cards, all credited to the seat that melds it


def founders(credit: list[int], is_set: bool) -> list[int]:
    """The seats that could have melded a meld whose cards, in table order, are credited to
    ``credit``: a seat that melds is credited with every card of the new meld, at least three
    (in a sequence, three in a row: layoffs only extend its ends), and keeps that credit."""
    if is_set:
        return sorted({seat for seat in credit if credit.count(seat) >= FOUNDED})
    found: list[int] = []
    for i in range(len(credit) - FOUNDED + 1):
        run = credit[i:i + FOUNDED]
        if run.count(run[0]) == FOUNDED and run[0] not in found:
            found.append(run[0])
    return found


class Rummy500DictChecks(Rummy500Rules):
    """The rules a state read from a dict must satisfy, as methods of ``Rummy500State``."""

    def _check_rules(self) -> None:
        """ValueError naming the field unless the state is one the rules can reach: seats and
        phase, hands, the turn (``_check_turn``), the hand so far (``_check_hand_so_far``), the
        end of a finished game (``_check_last_hand``), the match (``_check_match``), and that
        the game can be played on (``check_playable``)."""
        cfg, phase, p = self.config, self.phase, self.current_player
        over = phase == Phase.GAME_OVER
        if (p < 0) != over:
            raise field_error(["current_player", "phase"], f"current_player {p} does not fit phase {phase.name} "
                                                            "(-1 exactly when the game is over)")
        if not over and not all(self.sizes):
            raise field_error("hands", "a hand in play holds no card (emptying a hand ends it)")
        if phase == Phase.DRAW and not self.stock and not (cfg.stock_end_rule == "end_on_decline" and self.pile):
            raise field_error(["stock", "discard_pile"], "a turn begins only with a card to draw or, under "
                                                         "stock_end_rule='end_on_decline', a pile to take or decline")
        if self.turns >= cfg.max_turns_per_hand and not over:
            raise field_error("turns", f"the hand ends after max_turns_per_hand={cfg.max_turns_per_hand} turns")
        if self.reshuffles and cfg.stock_end_rule != "reshuffle_discards":
            raise field_error("reshuffles", "the pile is reshuffled only under stock_end_rule='reshuffle_discards'")
        if self.reshuffles > self.turns:
            raise field_error(["reshuffles", "turns"], "the pile is reshuffled only as a turn begins after a discard, "
                                                       "so a hand has no more reshuffles than turns")
        if self.dealer != (self.first_dealer + self.hand_index) % self.n:
            raise field_error(["dealer", "first_dealer", "hand_index"], "the deal passes left after each hand: "
                                                                        "dealer = first_dealer + hand_index")
        self._check_turn()
        self._check_match()
        if over:
            self._check_last_hand()
        else:
            self._check_hand_so_far()
        check_playable(self)

    def _check_turn(self) -> None:
        """The fields of the turn in progress: the pending group, the target and the banned
        card belong to the mover's ``MELD`` phase and hand; a target or banned card was taken
        from the pile this turn, so it is known (a target with the cards above it while no
        commit has followed, under ``first_table_action``); the pending group is one that
        picks build, a part of some legal commit."""
        cfg, p = self.config, self.current_player
        turn_fields = [name for name, value in (("pending", self.pending), ("target", self.target >= 0),
                                                ("banned", self.banned >= 0)) if value]
        if turn_fields and self.phase != Phase.MELD:
            raise field_error([*turn_fields, "phase"], "these belong to the turn of the player to move, in phase MELD")
        if not turn_fields:
            return
        hand, known = self.hands[p], self.known[p]
        if (self.pending & ~self.pending_jokers) & ~hand[0] or self.pending_jokers.bit_count() > hand[2]:
            raise field_error(["pending", "pending_jokers"], "the pending group holds cards the player to move "
                                                             "does not have")
        if self.target >= 0 and self.banned >= 0:
            raise field_error(["target", "banned"], "a take sets a target (deep take) or a banned card, not both")
        if self.target >= 0:
            if not ms_count(hand, self.target):
                raise field_error("target", "the card taken that must go on the table is in the hand of the player "
                                            "to move")
            taken = 1 if cfg.top_discard_must_be_used or cfg.target_use_timing != "first_table_action" else 2
            if not ms_count(known, self.target) or known[0].bit_count() + known[1].bit_count() + known[2] < taken:
                raise field_error(["target", f"known[{p}]"], "the target was taken from the pile this turn, so it is "
                                  "known" + (", with the cards above it until it is placed" if taken > 1 else ""))
        if self.banned >= 0:
            if cfg.allow_rediscard_taken_card or cfg.top_discard_must_be_used:
                raise field_error("banned", "only a top card taken alone is banned from the discard: neither "
                                            "allow_rediscard_taken_card nor top_discard_must_be_used bans one")
            if ms_count(hand, self.banned) and not ms_count(known, self.banned):
                raise field_error(["banned", f"known[{p}]"], "the banned card was taken from the pile this turn, so "
                                                             "it is known while in the hand")
        if self.pending:
            self._check_pending_built()

    def _check_pending_built(self) -> None:
        """The pending group is what picks from an empty group build: each pick in turn legal
        (a pick is offered only when some legal commit can follow it)."""
        trial = self.clone()
        trial.pending = trial.pending_jokers = 0
        trial._legal = None
        for card in C.from_mask(self.pending):
            action = (PICK_JOKER if self.pending_jokers >> card & 1 else PICK) + card
            if action not in trial.legal_actions():
                raise field_error(["pending", "pending_jokers"], "no legal commit holds this group, so no picks "
                                                                 "build it")
            trial.apply(action)

    def _check_hand_so_far(self) -> None:
        """The turns of the hand in progress fit the seat to move: play begins left of the
        dealer, so at least as many turns have passed as seats from there to the mover; a
        seat that has not had a turn this hand has taken nothing from the pile."""
        n, p = self.n, self.current_player
        behind = (p - self.dealer - 1) % n  # completed turns, modulo n
        if self.turns < behind:
            raise field_error(["turns", "current_player", "dealer"], f"player {p} moves {behind} turns after the "
                              f"dealer's left, so at least {behind} turns were played, not {self.turns}")
        if self.turns >= behind + n:
            return  # every seat may have had a turn
        moved = {(self.dealer + 1 + k) % n for k in range(behind)} | ({p} if self.phase == Phase.MELD else set())
        for q in range(n):
            if q not in moved and any(self.known[q]):
                raise field_error([f"known[{q}]", "turns"], f"seat {q} has not had a turn this hand ({self.turns} "
                                                            "turns), so it has taken nothing from the pile")

    def _check_last_hand(self) -> None:
        """A finished game shows the end of its last hand: its result (hands and table, if
        given) is the state's, only the seat that went out has an empty hand, an exhausted
        stock is empty and a turn cap is reached."""
        cfg, results = self.config, self.hand_results
        if not results:
            raise field_error(["hand_results", "phase"], "a finished game holds the result of the hand that ended it")
        last, name = results[-1], f"hand_results[{len(results) - 1}]"
        if last.hands and [sorted(h) for h in last.hands] != [self.hand_cards(q) for q in range(self.n)]:
            raise field_error([f"{name}.hands", "hands"], "the last hand's result shows the hands of the finished game")
        table = [{"cards": m.ordered(), "jokers": C.from_mask(m.jokers), "credit": [m.credit[c] for c in m.ordered()],
                  "owner": m.owner} for m in self.melds]
        if last.melds and last.melds != table:
            raise field_error([f"{name}.melds", "melds"], "the last hand's result shows the table of the finished game")
        empty = [q for q in range(self.n) if not self.sizes[q]]
        if empty != ([last.went_out] if last.kind == "out" else []):
            raise field_error(["hands", f"{name}.kind"], f"empty hands {empty}: a hand ends with one empty hand, that "
                                                         "of the seat that went out, or none")
        if last.kind == "stock_exhausted" and (self.stock or cfg.stock_end_rule == "reshuffle_discards"
                                               and len(self.pile) > 1):
            raise field_error(["stock", f"{name}.kind"], "the stock is exhausted only when empty (and, under "
                                                         "reshuffle_discards, with no pile to rebuild it from)")
        if (last.kind == "turn_cap") != (self.turns == cfg.max_turns_per_hand) and last.kind != "out":
            raise field_error(["turns", f"{name}.kind"], f"a hand ends at the turn cap exactly when it reaches "
                                                         f"max_turns_per_hand={cfg.max_turns_per_hand} turns")

    def _check_match(self) -> None:
        """The episode's summaries agree with what they summarise: a one-hand episode has no
        totals nor winners, hand index 0 and its result once over; a match has at most one
        result per hand played (the hand index counts them), a hand in play only before
        ``max_hands`` results, winners only once it is over, exactly the leaders its totals
        decide, no recorded hand after which the totals would have ended it, and truncation
        exactly at ``max_hands`` without a winner. (A match may start from given totals and
        hand number, so the totals and hands before its first recorded hand are free.)"""
        cfg, over, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if len(set(self.winners)) != len(self.winners):
            raise field_error("winners", "a seat is listed twice")
        if self.truncated and not over:
            raise field_error("truncated", "only a finished game is truncated")
        if cfg.episode == "hand":
            if self.winners:
                raise field_error("winners", "a one-hand episode has no match winners")
            if any(self.totals):
                raise field_error("totals", "a one-hand episode keeps no match totals (its score is its hand result)")
            if self.hand_index or len(results) != over:
                raise field_error(["hand_results", "hand_index"], f"a one-hand episode plays hand index 0 only, with "
                                  f"{'one result once it is over' if over else 'no result before it is over'}")
            if over and self.truncated != (results[-1].kind == "turn_cap"):
                raise field_error("truncated", "a hand is truncated exactly when it ends at the turn cap")
            return
        if len(results) > self.hand_index + over:
            raise field_error(["hand_results", "hand_index"], f"{len(results)} hand results, but hand index "
                              f"{self.hand_index} {'ended the match' if over else 'is in play'}: at most one result "
                              "per hand played")
        if len(results) > cfg.max_hands or (not over and len(results) == cfg.max_hands):
            raise field_error(["hand_results", "phase"], f"a match ends after max_hands={cfg.max_hands} hands")
        decided = match_winners(self.totals, cfg)
        if not over and self.winners:
            raise field_error("winners", "nobody has won a match still in play (winners are named when it ends)")
        if over and self.winners != decided:
            raise field_error("winners", f"expected {decided}: the leaders at or past target_score={cfg.target_score}")
        if over and self.truncated != (not decided):
            raise field_error("truncated", "a finished match is truncated exactly when nobody won it")
        if over and self.truncated and len(results) < cfg.max_hands:
            raise field_error(["truncated", "hand_results"], "a match without a winner ends only after max_hands hands")
        totals = list(self.totals)
        for k in range(len(results) - 1, -1, -1):
            if (k < len(results) - 1 or not over) and match_winners(totals, cfg):
                raise field_error(["totals", f"hand_results[{k}].points"], f"the totals after hand {k + 1}, {totals}, "
                                  "would have ended the match then")
            totals = [t - x for t, x in zip(totals, results[k].points)]
