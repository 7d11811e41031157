"""The rules of a Manipulation Rummy turn, as the state plays them: the deal, the automatic
steps (draws, turn ends), what is legal in each phase, what each action does, and how a
round ends (docs/manipulation_rummy.md#turn, docs/manipulation_rummy.md#commit and
docs/manipulation_rummy.md#round-end).

``ManipulationRules`` is a mixin of ``ManipulationState`` (``state.py``), which holds the
data and dispatches ``apply`` to the methods here. Placements change the table at once;
the table solver (``table_solver``) says which placements keep a legal COMMIT reachable,
by the rule ``commit.commit_is_legal`` states.
"""

from __future__ import annotations

from operator import add

from rummy_envs import cards as C
from rummy_envs.games.base import seeded_deck
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.games.manipulation_rummy.actions import (
    ABORT,
    COMMIT,
    DRAW,
    END_TURN,
    FREED_AS,
    JOKER_AS,
    KNOCK,
    NO_MELD,
    PLACE,
    REPLACE_FROM_HAND,
    REPLACE_FROM_TABLE,
    Phase,
)
from rummy_envs.games.manipulation_rummy.counts import HAND_SIZE, JOKER, NUM_CARDS, NUM_IDS, cards_of, hand_value
from rummy_envs.games.manipulation_rummy.options import GAME, ManipulationConfig
from rummy_envs.games.manipulation_rummy.scoring import (RoundResult, match_final_totals, match_winners, round_points,
                                                          round_winners)

_BEGIN, _DRAW, _END_OF_TURN, _FINISH, _STOP = range(5)  # automatic steps of a turn (``_run``)


def round_deck(config: ManipulationConfig, seed: int, round_index: int) -> list[int]:
    """The shuffled deck of round ``round_index`` (docs/manipulation_rummy.md#the-deal)."""
    return seeded_deck(config.full_deck(), f"{GAME}:{seed}:{round_index}")


def next_dealer(rule: str, dealer: int, values: list[int], winners: list[int]) -> int:
    """The dealer of the next round by ``next_dealer`` (``rule``): the seat left of the
    dealer, or the round's winner (the highest hand value for ``loser``), ties going to the
    first seat clockwise from the dealer's left (``values``: the round's hand values)."""
    n = len(values)
    order = [(dealer + k) % n for k in range(1, n + 1)]
    if rule == "left":
        return order[0]
    if rule == "winner":
        return next(q for q in order if q in winners)
    worst = max(values)
    return next(q for q in order if values[q] == worst)


class ManipulationRules:
    """The turn's rules over the state's fields (set by ``ManipulationState`` and ``_deal``).

    The table is two lists of 52 counts, ``naturals`` and ``jokers_at`` (jokers by declared
    identity); hands are lists of 53 counts (index 52: jokers). A commit in progress keeps
    the table as it began (``start_naturals``, ``start_jokers``; None outside a commit),
    the cards placed from the hand, the naturals that may still free a joker (``spare``),
    the freed jokers waiting and the placements so far (``ops``).
    """

    config: ManipulationConfig
    n: int
    seed: int
    max_copies: int | None
    phase: Phase
    current_player: int
    dealer: int
    draws: int
    round_index: int
    hands: list[list[int]]
    sizes: list[int]
    stock: list[int]  # reversed: pop() draws the next card
    naturals: list[int]
    jokers_at: list[int]
    arrangement: tuple[tuple[int, ...], ...]
    start_naturals: list[int] | None
    start_jokers: list[int] | None
    placed: list[int]
    spare: list[int]
    free_jokers: int
    ops: int
    totals: list[int]
    rounds_won: list[int]
    final: list[int] | None
    winners: list[int]
    hand_results: list[RoundResult]
    truncated: bool
    _legal: list[int] | None
    solver_workspace: TS.Workspace | None = None
    """The table solver's work arrays for this game's masks (an env sets its own, so that
    its solves resume each other); None: the shared ones. Speed only: the masks are the
    same with any."""

    # -- dealing and turns -----------------------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        order = deck if deck is not None else round_deck(self.config, self.seed, self.round_index)
        n = self.n
        self.dealer = dealer
        self.hands = [[0] * NUM_IDS for _ in range(n)]
        for i in range(n * HAND_SIZE):
            self.hands[(dealer + 1 + i) % n][order[i]] += 1
        self.sizes = [HAND_SIZE] * n
        self.known = [[0] * NUM_IDS for _ in range(n)]  # copies every seat saw in a hand (``_abort``)
        self.limit_seen: list[str | None] = [None] * n  # each hand against knock_limit as its turn ended
        self.stock = order[:n * HAND_SIZE - 1:-1]  # reversed: pop() draws the next card
        self.naturals = [0] * NUM_CARDS  # natural cards on the table, per id
        self.jokers_at = [0] * NUM_CARDS  # jokers on the table, per declared identity
        self.arrangement = ()  # the committed table, arranged
        self._clear_commit()
        self.current_player = (dealer + 1) % n
        self.draws = 0
        self._legal = None

    def _clear_commit(self) -> None:
        self.start_naturals = None  # the table when the commit began (None: no commit)
        self.start_jokers: list[int] | None = None
        self.placed = [0] * NUM_IDS  # cards moved from the hand to the table in this commit
        self.spare = []  # naturals that may still replace a joker (in a commit)
        self.free_jokers = 0
        self.ops = 0

    def _run(self, step: int) -> None:
        """Play the automatic steps from ``step`` on (draws, turn ends, new rounds) until a
        player must decide or the episode is over. A loop, not recursion: with
        ``max_draws=1`` and no knock in reach whole rounds pass without a decision."""
        cfg = self.config
        while step != _STOP:
            p = self.current_player
            if step == _BEGIN:
                self.draws = 0
                if cfg.knock_timing == "start_of_turn" and hand_value(self.hands[p]) <= cfg.knock_limit:
                    self.phase = Phase.TURN_START
                    return
                step = _DRAW
            elif step == _DRAW:
                if not self.stock:
                    step = self._end_round("stock_out")
                    continue
                self.hands[p][self.stock.pop()] += 1
                self.sizes[p] += 1
                self.limit_seen[p] = None
                self.draws += 1
                if self.draws < cfg.max_draws:
                    self.phase = Phase.MELD
                    return
                step = _END_OF_TURN  # no meld after the last draw
            elif step == _END_OF_TURN:
                within = hand_value(self.hands[p]) <= cfg.knock_limit
                if not self.sizes[p]:
                    step = self._end_round("out", p)
                    continue
                if cfg.knock_timing == "end_of_turn":  # everybody sees whether KNOCK is offered
                    self.limit_seen[p] = "within" if within else "above"
                if cfg.knock_timing == "end_of_turn" and within:
                    self.phase = Phase.END_OF_TURN
                    return
                step = _FINISH
            else:  # _FINISH
                if cfg.stock_out_trigger == "last_card_drawn" and not self.stock:
                    step = self._end_round("stock_out")
                else:
                    self.current_player = (p + 1) % self.n
                    step = _BEGIN

    # -- queries the rules ask ---------------------------------------------------------------
    @property
    def in_commit(self) -> bool:
        """A commit is in progress (at least one placement since the last decision)."""
        return self.start_naturals is not None

    def hand_cards(self, player: int) -> list[int]:
        """Sorted card ids of a hand, copies repeated, jokers (52) last."""
        return cards_of(self.hands[player])

    def hand_value(self, player: int) -> int:
        return hand_value(self.hands[player])

    def table_counts(self) -> list[int]:
        """Identity counts on the table: naturals plus the jokers at their identities."""
        return list(map(add, self.naturals, self.jokers_at))

    def commit_problem(self) -> TS.CommitProblem:
        """The solver's view of the commit of the player to move, as it stands."""
        hand = self.hands[self.current_player]
        in_commit = self.in_commit
        return TS.CommitProblem(
            table=tuple(map(add, self.naturals, self.jokers_at)),
            jokers_at=tuple(self.jokers_at),
            spare_naturals=tuple(self.spare if in_commit else self.naturals),
            hand=tuple(hand[:NUM_CARDS]),
            hand_jokers=hand[JOKER],
            free_jokers=self.free_jokers,
            need_hand_card=not any(self.placed),
            max_copies=self.max_copies,
        )

    # -- what is legal in each phase ---------------------------------------------------------
    def _compute_legal(self) -> list[int]:
        """The legal actions of the player to move: a meld decision's (``_meld_actions``), a
        knock decision's two, none once the game is over."""
        if self.phase == Phase.MELD:
            return self._meld_actions()
        if self.phase == Phase.TURN_START:
            return [KNOCK, DRAW]
        if self.phase == Phase.END_OF_TURN:
            return [KNOCK, END_TURN]
        return []

    def _meld_actions(self) -> list[int]:
        """After a draw: ``NO_MELD`` before the first placement, then ``ABORT``, and
        ``COMMIT`` when ``commit.commit_is_legal``; every placement after which a legal
        COMMIT stays reachable (the solver's exact masks)."""
        options = TS.commit_options(self.commit_problem(), self.solver_workspace)
        if self.in_commit:
            out = [COMMIT, ABORT] if options.commit else [ABORT]
        else:
            out = [NO_MELD]
        for start, mask in ((PLACE, options.place), (JOKER_AS, options.joker_as),
                            (REPLACE_FROM_HAND, options.replace_from_hand),
                            (REPLACE_FROM_TABLE, options.replace_from_table), (FREED_AS, options.freed_as)):
            if mask:
                out += [start + c for c in C.from_mask(mask)]
        return out

    # -- what each action does ---------------------------------------------------------------
    def _place(self, action: int) -> None:
        """One placement of the commit (docs/manipulation_rummy.md#commit):
        - ``PLACE(c)``: the hand's natural ``c`` goes on the table;
        - ``JOKER_AS(c)``: a hand joker goes on the table declared as ``c``;
        - ``REPLACE_FROM_HAND(c)``: the hand's natural ``c`` takes the place of a table joker
          declared as ``c``; that joker becomes *freed*;
        - ``REPLACE_FROM_TABLE(c)``: a natural ``c`` already on the table (there when the
          commit began or placed in it, and not yet used to replace a joker) takes the place
          of a joker declared as ``c``, which becomes freed;
        - ``FREED_AS(c)``: a freed joker goes back on the table declared as ``c``.
        The placement that reaches ``max_table_ops_per_turn`` forces the abort."""
        p = self.current_player
        hand = self.hands[p]
        if not self.in_commit:
            self.start_naturals, self.start_jokers = list(self.naturals), list(self.jokers_at)
            self.spare = list(self.naturals)
        kind, c = (action - PLACE) // NUM_CARDS, (action - PLACE) % NUM_CARDS
        if kind == 0 or kind == 2:  # PLACE, REPLACE_FROM_HAND: a natural from the hand
            hand[c] -= 1
            self.placed[c] += 1
            self.sizes[p] -= 1
            self.naturals[c] += 1
            if kind == 2:  # it takes a joker's place at once: not spare
                self.jokers_at[c] -= 1
                self.free_jokers += 1
            else:  # on the table now, it may free a joker later in the commit
                self.spare[c] += 1
        elif kind == 1:  # JOKER_AS
            hand[JOKER] -= 1
            self.placed[JOKER] += 1
            self.sizes[p] -= 1
            self.jokers_at[c] += 1
        elif kind == 3:  # REPLACE_FROM_TABLE
            self.jokers_at[c] -= 1
            self.spare[c] -= 1
            self.free_jokers += 1
        else:  # FREED_AS
            self.free_jokers -= 1
            self.jokers_at[c] += 1
        self.ops += 1
        if self.ops >= self.config.max_table_ops_per_turn:
            self._abort()  # the cap forces the abort, which counts as NO_MELD

    def _commit(self) -> None:
        """End the commit (legal: ``_meld_actions`` offered it) and the turn."""
        known = self.known[self.current_player]
        for card, k in enumerate(self.placed):  # the copies known to stay are fewer by those laid down
            known[card] = max(0, known[card] - k)
        self._clear_commit()
        self.arrangement = tuple(tuple(meld) for meld in TS.arrange(self.table_counts(), self.max_copies))
        self._run(_END_OF_TURN)

    def _abort(self) -> None:
        """Put the table and the hand back as they were before the commit, then draw (NO_MELD).
        Every seat saw the cards placed: the hand is known to hold at least those copies."""
        p = self.current_player
        hand, known = self.hands[p], self.known[p]
        for card, k in enumerate(self.placed):
            if k:
                hand[card] += k
                self.sizes[p] += k
                known[card] = max(known[card], k)
        self.naturals, self.jokers_at = self.start_naturals, self.start_jokers  # type: ignore[assignment]
        self._clear_commit()
        self._run(_DRAW)

    def _end_round(self, kind: str, ender: int = -1) -> int:
        """Score the round (docs/manipulation_rummy.md#scoring), then deal the next round
        (the step to run next is its first turn) or end the episode (``_STOP``)."""
        cfg = self.config
        n = self.n
        values = [hand_value(h) for h in self.hands]
        winners = round_winners(kind, ender, values)
        points = round_points(cfg, kind, ender, values)
        for w in winners:
            self.rounds_won[w] += 1
        self.totals = [t + x for t, x in zip(self.totals, points)]
        self.hand_results.append(RoundResult(kind, ender, values, winners, points,
                                             [self.hand_cards(q) for q in range(n)],
                                             [list(m) for m in self.arrangement], cards_of(self.jokers_at),
                                             list(self.totals)))
        self._legal = None
        if cfg.episode == "hand":
            self.winners = winners
            return self._finish(truncated=False)
        leaders = match_winners(cfg, self.totals, self.rounds_won)
        if leaders:
            self.final, self.winners = match_final_totals(cfg, self.totals, self.rounds_won), leaders
            return self._finish(truncated=False)
        if self.round_index + 1 >= cfg.max_rounds:
            return self._finish(truncated=True)
        self.round_index += 1
        self._deal(next_dealer(cfg.next_dealer, self.dealer, values, winners), None)
        return _BEGIN

    def _finish(self, truncated: bool) -> int:
        """The episode is over (``truncated``: by the round cap)."""
        self.truncated = truncated
        self.phase, self.current_player = Phase.GAME_OVER, -1
        return _STOP

