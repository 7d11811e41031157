"""The state of a game of Manipulation Rummy: ``ManipulationState`` holds the data, plays
actions (``apply`` dispatches to the rules in ``rules.py``), and offers the search API:
views, clones, determinizations and states sampled from a view.
"""

from __future__ import annotations

import random
from typing import ClassVar

from rummy_envs import cards as C
from rummy_envs.errors import action_id
from rummy_envs.games.manipulation_rummy import table_solver as TS
from rummy_envs.games.base import centred, copy_with_lists, illegal_action
from rummy_envs.games.manipulation_rummy.actions import (
    ABORT,
    COMMIT,
    DRAW,
    KNOCK,
    NO_MELD,
    PLACE,
    Phase,
    action_to_str,
    str_to_action,
)
from rummy_envs.games.manipulation_rummy.counts import (
    CARD_VALUES,
    HAND_SIZE,
    JOKER_VALUE,
    NUM_CARDS,
    cards_of,
    counts_of,
    still_known,
)
from rummy_envs.games.manipulation_rummy.options import GAME, ManipulationConfig
from rummy_envs.games.manipulation_rummy.rules import _BEGIN, _DRAW, _FINISH
from rummy_envs.games.manipulation_rummy.sampling import DETERMINIZATION_TRIES, deal_hidden, view_state_dict
from rummy_envs.games.manipulation_rummy.scoring import RoundResult
from rummy_envs.games.manipulation_rummy.state_dict import ManipulationStateDict
from rummy_envs.games.manipulation_rummy.view import ManipulationView


class ManipulationState(ManipulationStateDict):
    """A game of Manipulation Rummy in progress: pure rules, mutated only by ``apply``.

    The whole game: the deal, the turn (up to ``max_draws`` draws, a meld decision after
    each but the last), the meld commit (placements ending in ``COMMIT`` or ``ABORT``), the
    knock, the out, knock and stock-out endings, round scoring and, with
    ``episode="match"``, the match to ``target_score`` (docs/manipulation_rummy.md#rules).
    Dealing is internal: round ``k`` is shuffled from ``(seed, k)`` (``rules.round_deck``),
    so the seed plus the action history replays a game exactly.
    """

    config_class: ClassVar[type[ManipulationConfig]] = ManipulationConfig
    UNDO_ACTIONS: ClassVar[frozenset[int]] = frozenset({ABORT})  # takes the commit back (check_playable)

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

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == Phase.GAME_OVER

    def legal_actions(self) -> list[int]:
        """Sorted legal action ids of the player to move (empty when terminal)."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

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
        return centred(self.scores())

    # -- bounds of any game (OpenSpiel's GameInfo) -----------------------------------------
    @classmethod
    def utility_bounds(cls, config: ManipulationConfig) -> tuple[float, float]:
        """The least and the greatest value any seat's ``returns()`` can take at any point of a
        game under ``config`` dealt from the start (truncated games included; a state dict may
        give a match any totals, which no bound can know).

        Scores are never negative, so a centred score lies within ``(n-1)/n`` of the highest
        score S, either way (one seat at S, the others at 0, or the reverse).

        A round pays each winner ``sum_q v_q - n m + bonus`` (m its lowest value) and the
        others 0. The hands hold at most V, every card of the game (340 a deck, 25 a joker).
        (Scores are never negative: a winner holds the lowest value.)
        Out: m = 0 and the table keeps at least one meld, 3 cards worth 1 or more, so at most
        ``V - 3 + out_bonus``. Knock or stock-out: every hand holds a card (an emptied hand
        ends the round as out at once), m >= 1, so at most
        ``V - n + max(not_knocker_bonus, stock_out_bonus)``. P, the larger, is S of one round.

        A match: with ``tie_break="share"`` every total is below the target before the round
        that ends the match, so a total is at most ``min(target - 1 + P, max_rounds P)``
        (``max_rounds P`` with ``"play_on"``, where tied leaders play on); the final score adds
        ``game_bonus`` and ``round_win_bonus`` for each of at most ``max_rounds`` rounds won.
        Two players reach the bound of one round: out with three aces, or a knock or
        stock-out holding one ace, against the rest of the game.
        """
        n, rounds = config.num_players, config.max_rounds
        value = sum(CARD_VALUES[:NUM_CARDS]) * config.decks + JOKER_VALUE * config.total_jokers
        best = max(value - 3 + config.out_bonus,
                   value - n + max(config.not_knocker_bonus, config.stock_out_bonus))
        if config.episode == "match":
            total = rounds * best
            if config.tie_break == "share":
                total = min(total, config.target_score - 1 + best)
            best = total + config.game_bonus + config.round_win_bonus * rounds
        return -(n - 1) * best / n, (n - 1) * best / n

    @classmethod
    def max_game_length(cls, config: ManipulationConfig) -> int:
        """An upper bound on the number of actions ``apply`` accepts in one game (episode) under
        ``config``, every cap included.

        Every draw takes a stock card, at most ``D = deck_size - 10 n`` in a round. A meld
        decision follows a draw of its own (none when ``max_draws`` is 1) and takes at most K
        actions (``max_table_ops_per_turn``): ``NO_MELD``, or placements ended by ``COMMIT``
        or ``ABORT`` before the K-th, which forces the abort. A turn has one knock decision at
        most, and every turn but the round's last draws a card: at most D + 1 of them. So a
        round takes at most ``D (K + 1) + 1`` actions, and a match ``max_rounds`` rounds. No
        loop of decisions escapes these caps. With ``max_draws=1`` the bound, D + 1, is reached
        by ``knock_timing="start_of_turn"`` with every hand within ``knock_limit``: DRAW after
        DRAW until the stock runs out.
        """
        melds = config.max_table_ops_per_turn if config.max_draws > 1 else 0
        draws = config.deck_size - HAND_SIZE * config.num_players
        rounds = config.max_rounds if config.episode == "match" else 1
        return rounds * (draws * (melds + 1) + 1)

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        legal = self.legal_actions()
        as_int = action_id(action)
        if as_int not in legal:
            raise illegal_action(self, action)
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

    def action_to_str(self, action: int) -> str:
        """Readable name of an action id (``actions.action_to_str``)."""
        return action_to_str(action)

    def str_to_action(self, text: str) -> int:
        """The action id of a name as ``action_to_str`` writes it (ValueError otherwise)."""
        return str_to_action(text)

    # -- views -----------------------------------------------------------------------------
    def player_view(self, player: int) -> ManipulationView:
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
            known=tuple(tuple(cards_of(self.known[q])) for q in seats),
            limit_seen=tuple(self.limit_seen[q] for q in seats),
            stock_size=len(self.stock),
            scores=tuple(scores[q] for q in seats),
            rounds_won=tuple(self.rounds_won[q] for q in seats),
            round_number=self.round_index + 1,
            legal_actions=tuple(self.legal_actions()) if mine else (),
            rules=self.config,
        )

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> ManipulationState:
        """An independent copy (cheap: ints and short lists)."""
        new = copy_with_lists(self, ("history", "hand_results", "totals", "rounds_won", "winners", "sizes", "stock",
                                     "naturals", "jokers_at", "placed", "spare", "limit_seen"))
        new.hands = [list(h) for h in self.hands]
        new.known = [list(k) for k in self.known]
        if self.in_commit:
            new.start_naturals, new.start_jokers = list(self.start_naturals), list(self.start_jokers)
        return new

    def mover_hand_is_limited(self, player: int) -> bool:
        """Does what ``player`` sees of another player to move limit that player's hidden
        hand? A knock decision shows a hand value within ``knock_limit``; a commit in
        progress shows that the hand can still complete a legal COMMIT."""
        return self.current_player not in (player, -1) and (self.phase != Phase.MELD or self.in_commit)

    def limited_hands(self, player: int) -> list[int]:
        """The other seats whose hidden hands what ``player`` saw limits: the player to move
        (``mover_hand_is_limited``) and every seat whose last turn ended with its hand seen
        within ``knock_limit`` or above it (``limit_seen``), unchanged since."""
        mover = [self.current_player] if self.mover_hand_is_limited(player) else []
        return mover + [q for q in range(self.n) if q not in (player, *mover) and self.limit_seen[q]]

    def _hands_consistent(self, player: int) -> bool:
        """Every hand of ``limited_hands(player)`` fits what was seen of it."""
        limit = self.config.knock_limit
        for q in self.limited_hands(player):
            if q == self.current_player and self.phase == Phase.MELD:
                if not TS.commit_options(self.commit_problem()).feasible:
                    return False
            elif (self.hand_value(q) <= limit) != (self.limit_seen[q] != "above"):
                return False
        return True

    def sample_determinization(self, player: int, rng: random.Random) -> ManipulationState:
        """A copy in which every card hidden from ``player`` (the other hands and the stock
        order) is redealt at random. A redeal that contradicts what was seen of a hand
        (``limited_hands``) is drawn again, up to ``DETERMINIZATION_TRIES`` times; then those
        hands are kept and the others redealt."""
        others = [q for q in range(self.n) if q != player]
        limited = self.limited_hands(player)
        if limited:
            for _ in range(DETERMINIZATION_TRIES):
                new = self._redeal(others, rng)
                if new._hands_consistent(player):
                    return new
            others = [q for q in others if q not in limited]
        return self._redeal(others, rng)

    def held_known(self, player: int) -> list[int]:
        """The cards every seat knows ``player`` holds now (copies repeated): those it took
        back with ABORT, less those it has placed in the commit in progress."""
        return still_known(cards_of(self.known[player]), cards_of(self.placed) if player == self.current_player else [])

    def _redeal(self, seats: list[int], rng: random.Random) -> ManipulationState:
        """A copy whose ``seats`` get random hands of their sizes from their cards and the
        stock, each keeping the cards known to be in it (``held_known``)."""
        pool = list(self.stock)
        kept = {q: self.held_known(q) for q in seats}
        for q in seats:
            pool += self.hand_cards(q)
            for card in kept[q]:
                pool.remove(card)
        rng.shuffle(pool)
        new = self.clone()
        for q in seats:
            k = self.sizes[q] - len(kept[q])
            new.hands[q] = counts_of(kept[q] + pool[:k])
            pool = pool[k:]
        new.stock = pool
        new._legal = None
        return new

    @classmethod
    def sample_from_view(cls, view: ManipulationView, rng: random.Random) -> ManipulationState:
        """A whole state consistent with ``view``: the cards the viewer cannot see
        (``sampling.hidden_cards``) dealt at random into the other hands, of their sizes, and
        the stock, as ``sample_determinization`` redeals them and from the same distribution.
        What the view shows of another player to move is kept: at a knock decision its hand
        is drawn among those worth at most ``knock_limit``; during its commit a deal whose
        hand cannot complete a legal COMMIT is drawn again, up to ``DETERMINIZATION_TRIES``
        times (then the last deal stands, and that player may only ``ABORT``).

        What no seat knows takes neutral values (``sampling.view_state_dict``): seed 0 (later
        rounds of a match are dealt from it), no initial deck, the first dealer the one
        ``from_dict`` takes by default, no history and no recorded round results. A finished
        game comes back finished with the view's scores as its totals, not truncated; a
        finished hand lists the winners its rounds won show (its ``scores()``, read from the
        recorded result, are then zeros), a finished match neither winners nor final totals.
        The dict is read with every check of ``from_dict`` but those the hidden hand of the
        player to move decides."""
        hands, stock = deal_hidden(view, rng)
        state = cls._read_dict(view_state_dict(view, hands, stock))
        if state.limited_hands(view.player) and not state._hands_consistent(view.player):
            others = [q for q in range(state.n) if q != view.player]
            for _ in range(DETERMINIZATION_TRIES - 1):
                candidate = state._redeal(others, rng)
                if candidate._hands_consistent(view.player):
                    return candidate
        return state


def replay(config: ManipulationConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None) -> ManipulationState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); pass the
    deck and first dealer the game was given, if any (``to_dict`` records them)."""
    state = ManipulationState(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state
