"""Manipulation Rummy (Carousel) rules engine (2-5 players), pure Python over card counts.

``ManipulationState`` is the whole game: the deal, the turn (up to ``max_draws`` draws, a
meld decision after each but the last), the meld commit (a sequence of placements ending in
``COMMIT`` or ``ABORT``), the knock (at the end of a turn, or at its start), the out, knock
and stock-out endings, round scoring with its bonuses and, with ``episode="match"``, the
match to ``target_score`` with the game and round bonuses.

The table may be rearranged freely, so its legality depends only on the multiset of card
identities on it: the natural cards, plus every joker at its declared identity. The engine
holds the table as two lists of 52 counts, ``naturals`` and ``jokers_at`` (jokers are all
card id 52 and interchangeable, so a joker is known by its identity alone), and asks the
exact solver ``rummy_envs.games.manipulation_rummy.table_solver`` which placements keep a legal ``COMMIT``
reachable; the view, rendering and results show the table as one legal arrangement of it
(``table_solver.arrange``).

A commit's placements and their effect on the solver's problem:
- ``PLACE(c)``: the hand's natural ``c`` goes on the table;
- ``JOKER_AS(c)``: a hand joker goes on the table declared as ``c``;
- ``REPLACE_FROM_HAND(c)``: the hand's natural ``c`` takes the place of a table joker
  declared as ``c``; that joker becomes *freed*;
- ``REPLACE_FROM_TABLE(c)``: a natural ``c`` already on the table (there when the commit
  began or placed in it, and not yet used to replace a joker) takes the place of a joker
  declared as ``c``, which becomes freed;
- ``FREED_AS(c)``: a freed joker goes back on the table declared as ``c``.
``COMMIT`` needs a legal table, no freed joker waiting and a card moved from the hand.
``ABORT`` puts everything back and counts as ``NO_MELD`` (the next draw follows); so does
the placement that reaches ``max_table_ops_per_turn``.

Hands are lists of 53 counts (index 52: jokers). Dealing is internal: round ``k`` is
shuffled by ``random.Random`` seeded from ``(seed, k)``, so the seed plus the action
history replays a game exactly.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from enum import IntEnum
from operator import add
from typing import Any, ClassVar

from rummy_envs import cards as C
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.errors import IllegalActionError, action_id
from rummy_envs.options import build, check_choice, check_int
from rummy_envs.state_dicts import FORMAT_VERSION, Fields, card_count_error, field_error, read_header, read_options

GAME = "manipulation_rummy"
JOKER = C.JOKER
NUM_CARDS = C.NUM_CARDS
NUM_IDS = NUM_CARDS + 1  # card ids with the joker
HAND_SIZE = 10
JOKER_VALUE = 25
CARD_VALUES: tuple[int, ...] = C.GIN_VALUES + (JOKER_VALUE,)  # A = 1, 2-10 face value, J/Q/K = 10, joker 25
DETERMINIZATION_TRIES = 200
_BEGIN, _DRAW, _END_OF_TURN, _FINISH, _STOP = range(5)  # automatic steps of a turn (``_run``)


class Phase(IntEnum):
    """Decision points of a turn (the draws are automatic); GAME_OVER ends the episode."""

    TURN_START = 0  # knock_timing="start_of_turn": KNOCK, or DRAW to play the turn
    MELD = 1  # after a draw: the commit's placements, COMMIT, ABORT, or NO_MELD
    END_OF_TURN = 2  # knock_timing="end_of_turn": KNOCK or END_TURN
    GAME_OVER = 3


# Action ids: named offsets of one Discrete space.
COMMIT = 0
ABORT = 1
NO_MELD = 2
KNOCK = 3
END_TURN = 4
DRAW = 5  # at TURN_START: do not knock, draw
PLACE = 6  # PLACE + c: the hand's natural c onto the table
JOKER_AS = PLACE + NUM_CARDS  # JOKER_AS + c: a hand joker onto the table declared as c
REPLACE_FROM_HAND = JOKER_AS + NUM_CARDS  # + c: the hand's natural c replaces a table joker at c
REPLACE_FROM_TABLE = REPLACE_FROM_HAND + NUM_CARDS  # + c: a table natural c replaces a table joker at c
FREED_AS = REPLACE_FROM_TABLE + NUM_CARDS  # + c: a freed joker onto the table declared as c
NUM_ACTIONS = FREED_AS + NUM_CARDS
_SIMPLE_NAMES = {COMMIT: "COMMIT", ABORT: "ABORT", NO_MELD: "NO_MELD", KNOCK: "KNOCK", END_TURN: "END_TURN",
                 DRAW: "DRAW"}
_SIMPLE_IDS = {name: a for a, name in _SIMPLE_NAMES.items()}
_CARD_ACTIONS = {"PLACE": PLACE, "JOKER_AS": JOKER_AS, "REPLACE_FROM_HAND": REPLACE_FROM_HAND,
                 "REPLACE_FROM_TABLE": REPLACE_FROM_TABLE, "FREED_AS": FREED_AS}


def action_to_str(action: int) -> str:
    """Readable name of an action id, e.g. ``COMMIT``, ``PLACE(7H)``, ``FREED_AS(4S)``."""
    if action in _SIMPLE_NAMES:
        return _SIMPLE_NAMES[action]
    for name, start in _CARD_ACTIONS.items():
        if start <= action < start + NUM_CARDS:
            return f"{name}({C.format_card(action - start)})"
    return f"<out of range {action}>"


def str_to_action(text: str) -> int:
    """Inverse of ``action_to_str``; ValueError on anything else."""
    name = text.strip().upper().replace(" ", "")
    if name in _SIMPLE_IDS:
        return _SIMPLE_IDS[name]
    head, _, rest = name.partition("(")
    if head not in _CARD_ACTIONS or not rest.endswith(")"):
        raise ValueError(f"cannot parse action {text!r}")
    card = C.parse_card(rest[:-1])
    if card == JOKER:
        raise ValueError(f"cannot parse action {text!r}: {head} takes a card identity, not a joker")
    return _CARD_ACTIONS[head] + card


# ----------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class ManipulationConfig(C.MultiDeckDeal):
    """Rules options of manipulation_rummy.md, named as in the spec, plus the episode length.
    ``None`` for ``num_decks`` / ``num_jokers`` means the spec's default for the number of
    players: one deck and one joker for two players, two decks and two jokers for 3-5."""

    game: ClassVar[str] = GAME
    num_players: int = 3
    num_decks: int | None = None
    num_jokers: int | None = None
    knock_timing: str = "end_of_turn"
    knock_limit: int = 5
    max_draws: int = 3
    stock_out_trigger: str = "required_draw"
    stock_out_bonus: int = 0
    joker_identity_limit: str = "num_decks"
    out_bonus: int = 25
    not_knocker_bonus: int = 10
    game_bonus: int = 100
    target_score: int = 150
    round_win_bonus: int = 25
    next_dealer: str = "left"
    tie_break: str = "share"
    max_rounds: int = 100
    max_table_ops_per_turn: int = 64
    episode: str = "hand"

    def __post_init__(self) -> None:
        check_int("num_players", self.num_players, 2, 5)
        if self.num_decks is not None:
            check_int("num_decks", self.num_decks, 1, 2)
        if self.num_jokers is not None:
            check_int("num_jokers", self.num_jokers, 0, 4)
        check_choice("knock_timing", self.knock_timing, ("end_of_turn", "start_of_turn"))
        check_int("knock_limit", self.knock_limit, 0)
        check_int("max_draws", self.max_draws, 1)
        check_choice("stock_out_trigger", self.stock_out_trigger, ("required_draw", "last_card_drawn"))
        check_choice("joker_identity_limit", self.joker_identity_limit, ("num_decks", "none"))
        for name in ("stock_out_bonus", "out_bonus", "not_knocker_bonus", "game_bonus", "round_win_bonus"):
            check_int(name, getattr(self, name), 0)
        check_int("target_score", self.target_score, 1)
        check_choice("next_dealer", self.next_dealer, ("left", "winner", "loser"))
        check_choice("tie_break", self.tie_break, ("share", "play_on"))
        check_int("max_rounds", self.max_rounds, 1)
        check_int("max_table_ops_per_turn", self.max_table_ops_per_turn, 1)
        check_choice("episode", self.episode, ("hand", "match"))

    @classmethod
    def from_kwargs(cls, **kwargs: Any) -> ManipulationConfig:
        """Build from keyword options; unknown names raise ValueError naming them."""
        return build(cls, kwargs, cls.game)

    @property
    def decks(self) -> int:
        """Decks in play: ``num_decks``, else one for two players and two for 3-5."""
        return self.num_decks if self.num_decks is not None else (1 if self.num_players == 2 else 2)

    @property
    def total_jokers(self) -> int:
        """Jokers in play: ``num_jokers``, else one per deck."""
        return self.num_jokers if self.num_jokers is not None else self.decks

    @property
    def identity_limit(self) -> int | None:
        """Most cards one identity may have on the table (the solver's ``max_copies``)."""
        return self.decks if self.joker_identity_limit == "num_decks" else None


# ----------------------------------------------------------------------------------------
# Results and the view


@dataclass
class RoundResult:
    """How a round ended and what each seat scored (winners only; everyone else 0)."""

    kind: str  # "out", "knock", "stock_out"
    ender: int = -1  # the seat that went out or knocked, -1 for a stock-out
    values: list[int] = field(default_factory=list)  # each hand's value at the end
    winners: list[int] = field(default_factory=list)
    points: list[int] = field(default_factory=list)  # each seat's points for the round
    hands: list[list[int]] = field(default_factory=list)  # every hand at the end, revealed
    table: list[list[int]] = field(default_factory=list)  # the final table as a legal arrangement (identities)
    table_jokers: list[int] = field(default_factory=list)  # identities held by jokers on it
    totals: list[int] = field(default_factory=list)  # match totals after the round, before match bonuses


@dataclass(frozen=True)
class ManipulationView:
    """Exactly what one player may see, seats relative (index 0 is this player)."""

    player: int
    num_players: int
    phase: Phase
    is_my_turn: bool
    to_move: int | None
    dealer: int
    hand: tuple[int, ...]  # sorted ids, copies repeated, jokers (52) last
    hand_value: int
    table: tuple[int, ...]  # identities on the table now (naturals and declared jokers), sorted
    table_jokers: tuple[int, ...]  # identities held by jokers on the table now
    arrangement: tuple[tuple[int, ...], ...]  # the table as last committed, as legal groups and sequences
    placed: tuple[int, ...]  # cards the player to move has put on the table from its hand in this commit
    spare_naturals: tuple[int, ...]  # table naturals that may still replace a joker in this commit
    freed_jokers: int  # freed jokers waiting to be placed
    draws: int  # draws of the player to move this turn
    table_ops: int  # placements in the commit in progress
    hand_sizes: tuple[int, ...]
    stock_size: int
    scores: tuple[int, ...]  # match totals (final totals once a match is over)
    rounds_won: tuple[int, ...]
    round_number: int
    legal_actions: tuple[int, ...]


# ----------------------------------------------------------------------------------------
# Small helpers over count lists


def counts_of(cards: list[int], size: int = NUM_IDS) -> list[int]:
    """Counts per id of a list of card ids."""
    out = [0] * size
    for card in cards:
        out[card] += 1
    return out


def cards_of(counts: list[int] | tuple[int, ...]) -> list[int]:
    """Sorted card ids of a count list, copies repeated (jokers last in a 53-entry list)."""
    return [card for card, k in enumerate(counts) if k for _ in range(k)]


def hand_value(hand: list[int]) -> int:
    """Value of a hand of 53 counts: A = 1, 2-10 face value, J/Q/K = 10, joker 25."""
    return sum(k * v for k, v in zip(hand, CARD_VALUES) if k)


# ----------------------------------------------------------------------------------------
# The state


def round_deck(config: ManipulationConfig, seed: int, round_index: int) -> list[int]:
    """The shuffled deck of round ``round_index``."""
    order = config.full_deck()
    random.Random(f"{GAME}:{seed}:{round_index}").shuffle(order)
    return order


class ManipulationState:
    """A game of Manipulation Rummy in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[ManipulationConfig]] = ManipulationConfig

    def __init__(self, config: ManipulationConfig | None = None, seed: int = 0, deck: list[int] | None = None,
                 dealer: int | None = None):
        self.config = cfg = config or self.config_class()
        self.n = cfg.num_players
        self.seed = int(seed)
        self.max_copies = cfg.identity_limit
        self.history: list[int] = []
        self.round_index = 0
        self.hand_results: list[RoundResult] = []
        self.totals = [0] * self.n
        self.rounds_won = [0] * self.n
        self.final: list[int] | None = None  # final totals with the match bonuses, once a match ends
        self.winners: list[int] = []
        self.truncated = False
        if dealer is None:
            dealer = random.Random(f"{GAME}-dealer:{self.seed}").randrange(self.n)
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < self.n:
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, cfg.full_deck())
        self.first_dealer = dealer
        self._deal(dealer, self.initial_deck)
        self._run(_BEGIN)

    # -- dealing and turns -----------------------------------------------------------------
    def _deal(self, dealer: int, deck: list[int] | None) -> None:
        order = deck if deck is not None else round_deck(self.config, self.seed, self.round_index)
        n = self.n
        self.dealer = dealer
        self.hands = [[0] * NUM_IDS for _ in range(n)]
        for i in range(n * HAND_SIZE):
            self.hands[(dealer + 1 + i) % n][order[i]] += 1
        self.sizes = [HAND_SIZE] * n
        self.stock = order[:n * HAND_SIZE - 1:-1]  # reversed: pop() draws the next card
        self.naturals = [0] * NUM_CARDS  # natural cards on the table, per id
        self.jokers_at = [0] * NUM_CARDS  # jokers on the table, per declared identity
        self.arrangement: tuple[tuple[int, ...], ...] = ()  # the committed table, arranged
        self._clear_commit()
        self.current_player = (dealer + 1) % n
        self.draws = 0
        self._legal: list[int] | None = None

    def _clear_commit(self) -> None:
        self.start_naturals: list[int] | None = None  # the table when the commit began (None: no commit)
        self.start_jokers: list[int] | None = None
        self.placed = [0] * NUM_IDS  # cards moved from the hand to the table in this commit
        self.spare: list[int] = []  # naturals that may still replace a joker (in a commit)
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
                self.draws += 1
                if self.draws < cfg.max_draws:
                    self.phase = Phase.MELD
                    return
                step = _END_OF_TURN  # no meld after the last draw
            elif step == _END_OF_TURN:
                if not self.sizes[p]:
                    step = self._end_round("out", p)
                elif cfg.knock_timing == "end_of_turn" and hand_value(self.hands[p]) <= cfg.knock_limit:
                    self.phase = Phase.END_OF_TURN
                    return
                else:
                    step = _FINISH
            else:  # _FINISH
                if cfg.stock_out_trigger == "last_card_drawn" and not self.stock:
                    step = self._end_round("stock_out")
                else:
                    self.current_player = (p + 1) % self.n
                    step = _BEGIN

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == Phase.GAME_OVER

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

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> list[int]:
        if self.phase == Phase.MELD:
            return self._meld_actions()
        if self.phase == Phase.TURN_START:
            return [KNOCK, DRAW]
        if self.phase == Phase.END_OF_TURN:
            return [KNOCK, END_TURN]
        return []

    def _meld_actions(self) -> list[int]:
        options = TS.commit_options(self.commit_problem())
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

    # -- scores ----------------------------------------------------------------------------
    def scores(self) -> list[int]:
        """Each seat's score so far: the round's points once it is over (hand mode); in match
        mode the running totals, and the final totals with the match bonuses at the end."""
        if self.config.episode == "match":
            return list(self.final if self.final is not None else self.totals)
        return list(self.hand_results[-1].points) if self.is_terminal() and self.hand_results else [0] * self.n

    def standings(self) -> list[int]:
        """What ranks the seats for ``reward="win_loss"``: the scores (tied leaders share)."""
        return self.scores()

    def returns(self) -> list[float]:
        """Zero-sum points: each seat's score minus the mean of the scores."""
        scores = self.scores()
        mean = sum(scores) / self.n
        return [s - mean for s in scores]

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        legal = self.legal_actions()
        as_int = action_id(action)
        if as_int not in legal:
            name = action_to_str(as_int) if as_int is not None else repr(action)
            raise IllegalActionError(action, name, f"player {self.current_player}", self.phase.name,
                                     [action_to_str(a) for a in legal])
        action = as_int
        self.history.append(action)
        self._legal = None
        if action >= PLACE:
            self._place(action)
        elif action == COMMIT:
            self._commit()
        elif action == ABORT:
            self._abort()
        elif action in (NO_MELD, DRAW):
            self._run(_DRAW)
        elif action == KNOCK:
            self._run(self._end_round("knock", self.current_player))
        else:  # END_TURN
            self._run(_FINISH)

    def _place(self, action: int) -> None:
        """One placement of the commit (see the module docstring for its effect)."""
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
        self._clear_commit()
        self.arrangement = tuple(tuple(meld) for meld in TS.arrange(self.table_counts(), self.max_copies))
        self._run(_END_OF_TURN)

    def _abort(self) -> None:
        """Put the table and the hand back as they were before the commit, then draw (NO_MELD)."""
        p = self.current_player
        hand = self.hands[p]
        for card, k in enumerate(self.placed):
            if k:
                hand[card] += k
                self.sizes[p] += k
        self.naturals, self.jokers_at = self.start_naturals, self.start_jokers  # type: ignore[assignment]
        self._clear_commit()
        self._run(_DRAW)

    def _end_round(self, kind: str, ender: int = -1) -> int:
        """Score the round (§7 of the spec), then deal the next round (the step to run next
        is its first turn) or end the episode (``_STOP``)."""
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
        if max(self.totals) >= cfg.target_score:
            final = [t + (cfg.game_bonus if t >= cfg.target_score else 0) + cfg.round_win_bonus * w
                     for t, w in zip(self.totals, self.rounds_won)]
            best = max(final)
            leaders = [q for q in range(n) if final[q] == best]
            if len(leaders) == 1 or cfg.tie_break == "share":
                self.final, self.winners = final, leaders
                return self._finish(truncated=False)
        if self.round_index + 1 >= cfg.max_rounds:
            return self._finish(truncated=True)
        self.round_index += 1
        self._deal(self._next_dealer(values, winners), None)
        return _BEGIN

    def _next_dealer(self, values: list[int], winners: list[int]) -> int:
        """``next_dealer``: the seat left of the dealer, or the round's winner (the highest
        hand value for ``loser``), ties going to the first seat clockwise from the dealer's left."""
        rule = self.config.next_dealer
        order = [(self.dealer + k) % self.n for k in range(1, self.n + 1)]
        if rule == "left":
            return order[0]
        if rule == "winner":
            return next(q for q in order if q in winners)
        worst = max(values)
        return next(q for q in order if values[q] == worst)

    def _finish(self, truncated: bool) -> int:
        self.truncated = truncated
        self.phase, self.current_player = Phase.GAME_OVER, -1
        return _STOP

    # -- views -----------------------------------------------------------------------------
    def view(self, player: int) -> ManipulationView:
        """What ``player`` may see now (see ``ManipulationView``)."""
        n = self.n
        seats = [(player + k) % n for k in range(n)]
        mine = self.current_player == player
        scores = self.final if self.final is not None else self.totals
        return ManipulationView(
            player=player,
            num_players=n,
            phase=self.phase,
            is_my_turn=mine,
            to_move=None if self.current_player < 0 else (self.current_player - player) % n,
            dealer=(self.dealer - player) % n,
            hand=tuple(self.hand_cards(player)),
            hand_value=self.hand_value(player),
            table=tuple(cards_of(self.table_counts())),
            table_jokers=tuple(cards_of(self.jokers_at)),
            arrangement=self.arrangement,
            placed=tuple(cards_of(self.placed)),
            spare_naturals=tuple(cards_of(self.spare if self.in_commit else self.naturals)),
            freed_jokers=self.free_jokers,
            draws=self.draws,
            table_ops=self.ops,
            hand_sizes=tuple(self.sizes[q] for q in seats),
            stock_size=len(self.stock),
            scores=tuple(scores[q] for q in seats),
            rounds_won=tuple(self.rounds_won[q] for q in seats),
            round_number=self.round_index + 1,
            legal_actions=tuple(self.legal_actions()) if mine else (),
        )

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> ManipulationState:
        """An independent copy (cheap: ints and short lists)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in ("history", "hand_results", "totals", "rounds_won", "winners", "sizes", "stock", "naturals",
                     "jokers_at", "placed", "spare"):
            setattr(new, name, list(getattr(self, name)))
        new.hands = [list(h) for h in self.hands]
        if self.in_commit:
            new.start_naturals, new.start_jokers = list(self.start_naturals), list(self.start_jokers)
        return new

    def mover_hand_is_limited(self, player: int) -> bool:
        """Does what ``player`` sees of another player to move limit that player's hidden
        hand? A knock decision shows a hand value within ``knock_limit``; a commit in
        progress shows that the hand can still complete a legal COMMIT."""
        return self.current_player not in (player, -1) and (self.phase != Phase.MELD or self.in_commit)

    def _mover_consistent(self) -> bool:
        """The hand of the player to move fits what ``mover_hand_is_limited`` says was seen."""
        if self.phase == Phase.MELD:
            return TS.commit_options(self.commit_problem()).feasible
        return self.hand_value(self.current_player) <= self.config.knock_limit

    def sample_determinization(self, player: int, rng: random.Random) -> ManipulationState:
        """A copy in which every card hidden from ``player`` (the other hands and the stock
        order) is redealt at random. A redeal that contradicts what was seen of the player to
        move (``mover_hand_is_limited``) is drawn again, up to ``DETERMINIZATION_TRIES`` times;
        then that player keeps its hand."""
        others = [q for q in range(self.n) if q != player]
        if self.mover_hand_is_limited(player):
            for _ in range(DETERMINIZATION_TRIES):
                new = self._redeal(others, rng)
                if new._mover_consistent():
                    return new
            others.remove(self.current_player)
        return self._redeal(others, rng)

    def _redeal(self, seats: list[int], rng: random.Random) -> ManipulationState:
        """A copy whose ``seats`` get random hands of their sizes from their cards and the stock."""
        pool = list(self.stock)
        for q in seats:
            pool += self.hand_cards(q)
        rng.shuffle(pool)
        new = self.clone()
        for q in seats:
            k = self.sizes[q]
            new.hands[q] = counts_of(pool[:k])
            pool = pool[k:]
        new.stock = pool
        new._legal = None
        return new

    # -- dicts and replay ------------------------------------------------------------------
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
    def from_dict(cls, data: Any) -> ManipulationState:
        """Rebuild a state from ``to_dict`` output or a hand-written scenario; a dict the rules
        could not reach is refused with a ValueError naming the field (docs/manipulation_rummy.md,
        "Search API", lists the fields).

        Missing keys take the values of a fresh round: a scenario may give just ``hands``,
        ``stock`` (top first), ``table_naturals``, ``table_jokers`` (the identities of the
        jokers on the table), ``phase``, ``current_player``, ``draws`` and ``dealer``. Every
        card of the game must be in exactly one place, and the table must be legal (in a
        commit, the table as the commit began).
        """
        fields = Fields(data, STATE_KEYS)
        read_header(fields, GAME)
        config = read_options(fields, cls.config_class)
        n = config.num_players
        dealer = fields.integer("dealer", 0, 0, n - 1, "the dealer's seat")
        deck = fields.optional_cards("initial_deck", None, jokers=True)
        if deck is not None and (problem := card_count_error(deck, config.full_deck())):
            raise fields.error("initial_deck", problem)
        state = cls(config, fields.integer("seed", 0), deck, dealer)
        state.first_dealer = fields.integer("first_dealer", dealer, 0, n - 1)
        state.round_index = fields.integer("round_index", 0, 0, config.max_rounds - 1)
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
        self.sizes = [len(h) for h in hands]
        self.stock = stock[::-1]
        self.naturals, self.jokers_at = counts_of(naturals, NUM_CARDS), counts_of(jokers, NUM_CARDS)
        self.phase = Phase[f.choice("phase", [p.name for p in Phase], self.phase.name)]
        over = self.phase == Phase.GAME_OVER
        self.current_player = f.integer("current_player", -1 if over else self.current_player, -1, n - 1,
                                        "the seat to move, -1 once the game is over")
        self.draws = f.integer("draws", self.draws, 0, cfg.max_draws, "draws of the player to move this turn")
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
        progress, a legal table, and the match's totals, winners and results."""
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
        arranged = TS.arrange(counts, self.max_copies)
        if arranged is None:
            raise field_error(names, "the table is not legal: its cards form no groups and sequences")
        self.arrangement = tuple(tuple(meld) for meld in arranged)
        self._check_match()

    def _check_turn(self) -> None:
        """The phase fits the options, the draws and the hand of the player to move; hands in
        play hold cards; a commit in progress fits the table and the hand."""
        cfg, p, phase = self.config, self.current_player, self.phase
        value = self.hand_value(p)
        if phase == Phase.TURN_START and (cfg.knock_timing != "start_of_turn" or self.draws
                                          or value > cfg.knock_limit):
            raise field_error(["phase", "draws", "hands"], "TURN_START is a knock decision: knock_timing="
                                                           "'start_of_turn', no draw yet, a hand within knock_limit")
        if phase == Phase.MELD and not 1 <= self.draws < cfg.max_draws:
            raise field_error(["phase", "draws"], f"a meld decision follows draw 1..{cfg.max_draws - 1} "
                                                  f"(max_draws - 1), got {self.draws}")
        if phase == Phase.END_OF_TURN and (cfg.knock_timing != "end_of_turn" or value > cfg.knock_limit
                                           or not self.sizes[p]):
            raise field_error(["phase", "hands"], "END_OF_TURN is a knock decision: knock_timing='end_of_turn' "
                                                  "and a non-empty hand within knock_limit")
        for q in range(self.n):
            if not self.sizes[q] and not (q == p and self.in_commit):
                raise field_error(f"hands[{q}]", "a hand in play holds no card (emptying a hand ends the round)")
        if not self.in_commit:
            return
        if phase != Phase.MELD:
            raise field_error(["commit", "phase"], "a commit is in progress only in phase MELD")
        if list(map(add, self.start_naturals, self.placed[:NUM_CARDS])) != self.naturals:
            raise field_error(["commit.start_naturals", "commit.placed", "table_naturals"],
                              "the table's naturals must be those at the start plus the naturals placed")
        if sum(self.start_jokers) + self.placed[JOKER] != sum(self.jokers_at) + self.free_jokers:
            raise field_error(["commit.start_jokers", "commit.placed", "commit.free_jokers", "table_jokers"],
                              "the jokers at the start plus those placed must be on the table or freed")
        if any(s > k + q for s, k, q in zip(self.spare, self.start_naturals, self.placed)):
            raise field_error("commit.spare_naturals",
                              "only naturals on the table at the start or placed in this commit can free a joker")

    def _check_match(self) -> None:
        """Totals, rounds won, final totals, winners and the truncation flag fit the episode
        and the recorded results."""
        cfg, over, results = self.config, self.phase == Phase.GAME_OVER, self.hand_results
        if self.truncated and not over:
            raise field_error("truncated", "only a finished game is truncated")
        if len(set(self.winners)) != len(self.winners):
            raise field_error("winners", "a seat is listed twice")
        if self.final is not None and not (cfg.episode == "match" and over and not self.truncated):
            raise field_error("final", "final totals exist only once a match is won")
        if cfg.episode == "hand" and len(results) > 1:
            raise field_error("hand_results", "a one-round episode has at most one result")
        unrecorded = self.round_index + over - len(results)  # a scenario may leave earlier rounds out
        if unrecorded < 0:
            raise field_error(["hand_results", "round_index"], f"{len(results)} round results, more than the rounds "
                              f"played by round index {self.round_index}{' of a finished game' if over else ''}")
        points = [r.points for r in results]
        won = [[int(q in r.winners) for q in range(self.n)] if r.winners else [] for r in results]
        for name, rows, values in (("totals", points, self.totals), ("rounds_won", won, self.rounds_won)):
            recorded = [sum(row[q] for row in rows if row) for q in range(self.n)]
            exact = not unrecorded and all(rows)
            if (values != recorded) if exact else any(v < r for v, r in zip(values, recorded)):
                raise field_error(name, f"expected {recorded}{'' if exact else ' or more'}: what the recorded "
                                        f"hand_results give, with {unrecorded} earlier rounds not recorded")
        before = None if unrecorded else [0] * self.n
        for i, r in enumerate(results):
            if r.totals and r.points and before and r.totals != list(map(add, before, r.points)):
                raise field_error(f"hand_results[{i}].totals", "expected the totals before the round plus its points")
            before = r.totals
        extra_wins = sum(self.rounds_won) - sum(map(sum, won))
        if all(won) and not unrecorded <= extra_wins <= self.n * unrecorded:
            raise field_error(["rounds_won", "round_index"], f"every round has 1 to {self.n} winners: {unrecorded} "
                                                             f"rounds not in hand_results cannot account for "
                                                             f"{extra_wins} more wins")
        if results and results[-1].totals and results[-1].totals != self.totals:
            raise field_error("totals", f"expected {results[-1].totals}, the totals after the last recorded round")


STATE_KEYS = ("format_version", "game", "options", "seed", "initial_deck", "first_dealer", "round_index", "dealer",
              "phase", "current_player", "draws", "hands", "stock", "table_naturals", "table_jokers", "commit",
              "totals", "rounds_won", "final", "winners", "hand_results", "truncated", "history")
COMMIT_KEYS = ("start_naturals", "start_jokers", "placed", "spare_naturals", "free_jokers", "ops")
RESULT_KEYS = tuple(f.name for f in dataclasses.fields(RoundResult))
ROUND_KINDS = ("out", "knock", "stock_out")


def round_winners(kind: str, ender: int, values: list[int]) -> list[int]:
    """The winners of a round (spec §7): the one who went out; the knocker if alone lowest,
    else the other lowest hands; at a stock-out every lowest hand."""
    low = min(values)
    lowest = [q for q, v in enumerate(values) if v == low]
    if kind == "out":
        return [ender]
    if kind == "knock":
        return [ender] if lowest == [ender] else [q for q in lowest if q != ender]
    return lowest


def round_points(config: ManipulationConfig, kind: str, ender: int, values: list[int]) -> list[int]:
    """Each seat's points for a round: every winner the sum of the differences to the other
    hands plus its bonus (out, the not-knocker bonus, the stock-out bonus), others 0."""
    winners = round_winners(kind, ender, values)
    if kind == "out":
        bonus = config.out_bonus
    elif kind == "knock":
        bonus = 0 if winners == [ender] else config.not_knocker_bonus
    else:
        bonus = config.stock_out_bonus
    total, n = sum(values), len(values)
    return [total - n * values[q] + bonus if q in winners else 0 for q in range(n)]


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
    if values:
        if winners and winners != round_winners(kind, ender, values):
            raise f.error("winners", f"expected {round_winners(kind, ender, values)} for these values")
        if points and points != round_points(config, kind, ender, values):
            raise f.error("points", f"expected {round_points(config, kind, ender, values)} for these values")
    hands = f.card_rows("hands", n, jokers=True) if f.items("hands", []) else []
    table = f.card_lists("table", [])
    jokers = f.cards("table_jokers", [])
    totals = f.integers("totals", [], low=0, meaning="a seat's match total")
    return RoundResult(kind, ender, values, winners, points, hands, table, jokers, totals)


def replay(config: ManipulationConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None) -> ManipulationState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck and first dealer the game was given, if any (``to_dict`` records them)."""
    state = ManipulationState(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
