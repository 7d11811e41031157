"""``GinState``: a game of Gin Rummy (one hand, or a match) as the engine contract of
``rummy_envs.games.base`` has it: the data, ``apply`` dispatching each action to the rule
that plays it (rules.py), copies, the seats' views and the sampling of hidden cards for
search. Its dict form is state_dict.py's.

Dealing is internal: hand ``k`` of a match is dealt from a deck shuffled by
``random.Random`` seeded from ``(seed, k)``, so ``seed`` plus the action history replays a
game exactly (``replay``).
"""

from __future__ import annotations

import dataclasses
import random
from typing import ClassVar

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.errors import action_id
from rummy_envs.games.base import centred, copy_with_lists, illegal_action, unseen_pool
from rummy_envs.games.gin_rummy import actions as A
from rummy_envs.games.gin_rummy.actions import (BIG_GIN, DISCARD, DONE, DRAW_STOCK, HAND_SIZE, KNOCK, LAYOFF,
                                                MAX_KNOCKER_MELDS, MELD, NUM_ACTIONS, NUM_PLAYERS, PASS, TAKE_DISCARD,
                                                Phase)
from rummy_envs.games.gin_rummy.match import StandardMatch
from rummy_envs.games.gin_rummy.options import GinConfig
from rummy_envs.games.gin_rummy.scoring import hand_points_bound
from rummy_envs.games.gin_rummy.solvers import best_knocker_melds
from rummy_envs.games.gin_rummy.state_dict import GinStateDict
from rummy_envs.games.gin_rummy.view import GinView

def hands_won_bound(config: GinConfig) -> int:
    """The most hands one seat can win in one game to ``target_score``: at most
    ``max_hands_per_match``, and, when every won hand pays at least a point (no tie goes to the
    knocker for 0, no bonus is 0), at most ``target_score``: the points before the last win
    stay under the target."""
    zero_win = not config.undercut_on_tie or 0 in (config.gin_bonus, config.big_gin_bonus, config.undercut_bonus)
    return config.max_hands_per_match if zero_win else min(config.max_hands_per_match, config.target_score)


def game_score_bound(config: GinConfig) -> int:
    """The most one seat can score in one game to ``target_score`` once settled (a gin match,
    a Hollywood column): hand points under the target before its last won hand, plus that
    hand; doubled by a ``double_points`` shutout; the game bonus, twice on a
    ``double_game_bonus`` shutout; a box per hand won (only the last box on top of the target
    when boxes count toward it). The loser's total stays under the target, its boxes no more
    than the winner's bound."""
    points = config.target_score - 1 + hand_points_bound(config)
    doubled = 2 if config.shutout_rule == "double_points" else 1
    games = 2 if config.shutout_rule == "double_game_bonus" else 1
    boxes = 1 if config.boxes_count_toward_target else hands_won_bound(config)
    return doubled * points + games * config.game_bonus + boxes * config.box_bonus


class GinState(GinStateDict):
    """A game of Gin Rummy in progress: pure rules, mutated only by ``apply``."""

    config_class: ClassVar[type[GinConfig]] = GinConfig
    match_class: ClassVar[type[StandardMatch]] = StandardMatch  # the match score it keeps
    view_class: ClassVar[type[GinView]] = GinView

    def __init__(self, config: GinConfig | None = None, seed: int = 0, deck: list[int] | None = None, dealer: int | None = None):
        self.config = config or self.config_class()
        self.seed = int(seed)
        self.history = []
        self.match = self.match_class()
        self.hand_index = 0
        self.hand_results = []
        self.truncated = False
        first_dealer = random.Random(f"gin-dealer:{self.seed}").randrange(NUM_PLAYERS) if dealer is None else dealer
        if first_dealer not in (0, 1):
            raise ValueError(f"dealer must be 0 or 1, got {dealer!r}")
        self.initial_deck = None if deck is None else C.check_deck(deck, range(C.NUM_CARDS))
        self.first_dealer = first_dealer
        self._deal(first_dealer, self.initial_deck)

    # -- queries ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self.phase == Phase.GAME_OVER

    @property
    def stock_size(self) -> int:
        return len(self.stock)

    @property
    def defender(self) -> int:
        return 1 - self.knocker

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
        return centred(self.scores())

    # -- bounds of any game (OpenSpiel's GameInfo) ---------------------------------------------
    @classmethod
    def max_score(cls, config: GinConfig) -> int:
        """The most any seat's ``scores()`` can be in a game under ``config`` dealt from the start
        (a state dict may give a match any totals, which no bound can know); no score is below 0.

        A hand: the most one hand pays (``hand_points_bound``). A match: totals under the
        target while nobody has won (truncated matches included), then the winner's settled
        score (``game_score_bound``)."""
        return hand_points_bound(config) if config.episode == "hand" else game_score_bound(config)

    @classmethod
    def utility_bounds(cls, config: GinConfig) -> tuple[float, float]:
        """The least and the greatest value any seat's ``returns()`` can take at any point of a
        game under ``config`` (truncated games included): with two seats a return is half the
        difference of two scores in ``[0, max_score]``, so it lies within half ``max_score``.
        With the defaults: a gin against 98 deadwood, 61.5 in a hand; in a match, 99 one-point
        wins then that gin, doubled by the shutout, with the game bonus and 100 boxes, 1522."""
        half = cls.max_score(config) / 2
        return -half, half

    @classmethod
    def max_game_length(cls, config: GinConfig) -> int:
        """An upper bound on the number of actions ``apply`` accepts in one game (episode) under
        ``config``, every cap included.

        A hand opens with at most two passes of the upcard. Every turn then takes one card
        (stock or pile) and ends with a plain discard, at most ``max_turns_per_hand`` T of
        them (taking from the pile uses no stock, so only the cap bounds them). The hand ends
        at a plain discard, perhaps followed by the 50th-card PASS or knock, or at a knock in
        place of the discard after at most T - 1 of them: at most 2 + 2T + 1 actions. An
        explicit knocker then declares at most 3 melds (of three cards or more, out of 10 or
        11) and DONE; an explicit defender's melds and layoffs each take at least one of its
        10 cards, plus two DONEs. A match plays at most ``max_hands_per_match`` hands."""
        knocker = MAX_KNOCKER_MELDS + 1 if config.knocker_arrangement == "explicit" else 0
        defender = HAND_SIZE + 2 if config.layoff_mode == "explicit" else 0
        per_hand = 2 * config.max_turns_per_hand + 3 + knocker + defender
        return per_hand * (config.max_hands_per_match if config.episode == "match" else 1)

    def action_to_str(self, action: int) -> str:
        return A.action_to_str(action)

    def str_to_action(self, text: str) -> int:
        return A.str_to_action(text)

    # -- what a seat sees (docs/gin_rummy.md#player-view) --------------------------------------
    def visible_showdown(self, player: int) -> tuple[list[int], int, list[int]]:
        """What ``player`` sees of the showdown, as bitmasks: (the knocker's melds by slot,
        the knocker's unmelded cards, ``player``'s own melds).

        Once knocked, the knocker's hand is face up for the defender (melds declared so far
        and the rest); the defender's layoffs are the defender's own until the hand is over.
        auto_best picks the knocker's melds knowing the defender's hand, so the knocker sees
        that choice only at the end."""
        over = self.phase == Phase.GAME_OVER
        is_knocker, is_defender = self.knocker == player, self.knocker == 1 - player
        knocker_sees = is_knocker and (over or self.config.knocker_arrangement == "explicit")
        if is_defender or is_knocker and over:
            shown = self.knocker_melds if self.phase == Phase.KNOCKER_MELD else self.meld_extents
        elif knocker_sees:
            shown = self.knocker_melds
        else:
            shown = []
        dead = self.hands[self.knocker] & ~M.union(self.knocker_melds) if is_defender or knocker_sees else 0
        mine = self.knocker_melds if knocker_sees else self.defender_melds if is_defender else []
        return shown, dead, mine

    def player_view(self, player: int) -> GinView:
        """What ``player`` may see now (see ``GinView``)."""
        opp = 1 - player
        fmt = C.from_mask
        over = self.phase == Phase.GAME_OVER
        shown, dead, mine = self.visible_showdown(player)
        moving = self.current_player == player
        return self.view_class(
            player=player,
            phase=self.phase,
            is_my_turn=moving,
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
            taken_card=self.taken_card if self.taken_card >= 0 and moving else None,
            knocker=None if self.knocker < 0 else (0 if self.knocker == player else 1),
            knocker_melds=tuple(tuple(fmt(m)) for m in shown),
            knocker_deadwood=tuple(fmt(dead)),
            my_melds=tuple(tuple(fmt(m)) for m in mine),
            layoffs=tuple(self.layoffs) if self.knocker == opp or over else (),
            legal_actions=tuple(self.legal_actions()) if moving else (),
            hand_index=self.hand_index,
            upcard=self.upcard,
            turns=self.turns,
            my_known=tuple(fmt(self.known[player])),
            opponent_taken_card=self.taken_card if self.taken_card >= 0 and self.current_player == opp else None,
            knock_card=self.knock_card if self.knocker == player and self.knock_card >= 0 else None,
            hand_results=tuple(self.hand_results),
            rules=self.config,
            **self.match.view_fields(player),
        )

    # -- applying actions ------------------------------------------------------------------
    def apply(self, action: int) -> None:
        """Play ``action`` for the player to move; IllegalActionError leaves the state as it was."""
        as_int = action if type(action) is int else action_id(action)
        legal = self._legal if self._legal is not None else self.legal_actions()  # the cached list, without a call
        if as_int not in legal:
            raise illegal_action(self, action)
        action = as_int
        self.history.append(action)
        self._legal = None
        p = self.current_player
        phase = self.phase
        if phase in (Phase.OFFER_ND, Phase.OFFER_D):
            if action == TAKE_DISCARD:
                self._take_discard(p)
            else:
                self._pass_upcard(phase)
        elif action == DRAW_STOCK:
            self._draw_stock(p)
        elif action == TAKE_DISCARD:
            self._take_discard(p)
        elif action == PASS:  # only left in LAST_CHANCE
            self._pass_last_chance()
        elif DISCARD <= action < KNOCK:
            self._discard(p, action - DISCARD)
        elif KNOCK <= action < MELD or action == BIG_GIN:
            if phase == Phase.LAST_CHANCE:
                self._take_discard(p)
            self._knock(p, action - KNOCK if action != BIG_GIN else -1)
        elif MELD <= action < LAYOFF:
            self._declare_meld(phase, M.MELDS[action - MELD])
        elif LAYOFF <= action < NUM_ACTIONS:
            slot, card = divmod(action - LAYOFF, C.NUM_CARDS)
            self._lay_off(slot, card)
        elif action == DONE:
            self._done(phase)

    # -- search API ------------------------------------------------------------------------
    def clone(self) -> GinState:
        """An independent copy (cheap: ints, short lists)."""
        new = copy_with_lists(self, ("history", "hands", "pile", "stock", "known", "discarded", "passed",
                                     "knocker_melds", "meld_extents", "defender_melds", "layoffs", "hand_results"))
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
        hand, the stock order, a face-down knock card) is redealt at random. A knock card
        that was once discarded face up is not hidden: no other zone can hold it (a discard
        stays in the pile or in a hand that took it, in sight), so it is known to be there."""
        new = self.clone()
        opp = 1 - player
        hidden_opp = self.hands[opp] & ~self.visible_cards(player)
        pool = C.from_mask(hidden_opp) + list(self.stock)
        hidden_knock = (self.knock_card >= 0 and self.knocker == opp
                        and not (self.discarded[0] | self.discarded[1]) >> self.knock_card & 1)
        if hidden_knock:
            pool.append(self.knock_card)
        rng.shuffle(pool)
        n = hidden_opp.bit_count()
        new.hands[opp] = (self.hands[opp] & ~hidden_opp) | C.to_mask(pool[:n])
        rest = pool[n:]
        if hidden_knock:
            new.knock_card = rest.pop()
        new.stock = rest
        if self.knocker == player and self.phase in (Phase.DEFENDER_MELD, Phase.LAYOFF):
            new.remaining = new.hands[opp]  # the defence so far is hidden: redealt as if none yet
            if self.config.knocker_arrangement == "auto_best":  # chosen against the real defender
                new.knocker_melds = M.merge_runs(new._auto_knocker_melds())
            new.defender_melds, new.layoffs, new.meld_extents = [], [], list(new.knocker_melds)
        new._legal = None
        return new

    @classmethod
    def sample_from_view(cls, view: GinView, rng: random.Random) -> GinState:
        """A state consistent with ``view`` alone (docs/gin_rummy.md#sampling-from-a-view):
        the cards the seat cannot place (``base.unseen_pool``) are dealt at random into the
        zones ``sample_determinization`` redeals, with the same sizes: the hidden part of the
        other hand, the stock and the other seat's face-down knock card. While the knocker
        waits for an explicit defence, the defence so far is hidden: as in
        ``sample_determinization``, it is dealt as if nothing were declared yet, and an
        ``auto_best`` arrangement is chosen against the dealt defender.

        What no seat can know takes neutral values: ``seed`` 0 (later hands of a match are
        dealt from it), no ``initial_deck``, ``first_dealer`` the current dealer and an empty
        ``history``; ``remaining`` at the game's end is empty. Read back by ``from_dict``,
        which checks it."""
        me, opp = view.player, 1 - view.player
        knocker = -1 if view.knocker is None else (me if view.knocker == 0 else opp)
        knocker_melds, defender_melds, layoffs, revealed = _showdown_from_view(view, knocker)
        hands = [0, 0]
        hands[me] = C.to_mask(view.hand)
        placed = C.to_mask(view.opponent_known) | revealed
        knock_bit = 0 if view.knock_card is None else 1 << view.knock_card
        seen = hands[me] | placed | C.to_mask(view.discard_pile) | knock_bit
        # a card discarded face up that no zone in sight holds: the other seat's knock card
        traced = (C.to_mask(view.discarded[0]) | C.to_mask(view.discarded[1])) & ~seen
        pool = unseen_pool(range(C.NUM_CARDS), C.from_mask(seen | traced))
        rng.shuffle(pool)
        dealt = view.opponent_hand_size - placed.bit_count()
        hands[opp] = placed | C.to_mask(pool[:dealt])
        stock = pool[dealt:]
        big_gin = knocker >= 0 and hands[knocker].bit_count() == HAND_SIZE + 1
        opp_knock = C.from_mask(traced)[0] if traced else stock.pop() if knocker == opp and not big_gin else None
        knock_card = view.knock_card if knocker == me else opp_knock
        waiting = knocker == me and view.phase in (Phase.DEFENDER_MELD, Phase.LAYOFF)
        if waiting and view.rules.knocker_arrangement == "auto_best":  # chosen against the dealt defender
            knocker_melds = best_knocker_melds(view.rules, hands[me], hands[opp], 0 if big_gin else view.knock_limit,
                                               big_gin, view.multiplier)
        over = view.phase == Phase.GAME_OVER
        match = cls.match_class.from_view(view)
        data = {
            "game": view.rules.game,
            "options": dataclasses.asdict(view.rules),
            "hand_index": view.hand_index,
            "dealer": me if view.is_dealer else opp,
            "phase": view.phase.name,
            "current_player": -1 if over else me if view.is_my_turn else opp,
            "hands": [C.from_mask(h) for h in hands],
            "stock": stock,
            "discard_pile": list(view.discard_pile),
            "upcard": view.upcard,
            "knock_limit": view.knock_limit,
            "multiplier": view.multiplier,
            "taken_card": view.taken_card if view.is_my_turn else view.opponent_taken_card,
            "known": _by_seat(me, list(view.my_known), list(view.opponent_known)),
            "discarded": _by_seat(me, list(view.discarded[0]), list(view.discarded[1])),
            "turns": view.turns,
            "passed": list(view.upcard_passed),
            "knocker": knocker,
            "knock_card": knock_card,
            "big_gin": big_gin,
            "knocker_melds": [C.from_mask(m) for m in knocker_melds],
            "defender_melds": [C.from_mask(m) for m in defender_melds],
            "layoffs": [[card, slot] for card, slot in layoffs],
            "match": match.to_dict(),
            "hand_results": [dataclasses.asdict(r) for r in view.hand_results],
            "truncated": over and (not match.is_over() if view.rules.episode == "match"
                                   else view.hand_results[-1].kind == "turn_cap"),
        }
        if view.phase == Phase.KNOCKER_MELD:
            data["meld_extents"] = []  # laid out only once the knocker is done (else: from the layoffs)
        return cls.from_dict(data)


def _by_seat(me: int, mine: list[int], theirs: list[int]) -> list[list[int]]:
    """A pair seen from seat ``me`` (mine first) in seat order."""
    return [mine, theirs] if me == 0 else [theirs, mine]


def _showdown_from_view(view: GinView, knocker: int) -> tuple[list[int], list[int], list[tuple[int, int]], int]:
    """The showdown a view shows, as bitmasks: (the knocker's melds, the defender's melds, the
    layoffs, the other seat's cards it reveals). What the knocker cannot see yet (an
    ``auto_best`` arrangement, an explicit defence) comes back empty."""
    me = view.player
    if knocker < 0:
        return [], [], [], 0
    if view.phase == Phase.GAME_OVER:  # a showdown's result shows both hands
        last = view.hand_results[-1]
        return ([C.to_mask(m) for m in last.knocker_melds], [C.to_mask(m) for m in last.defender_melds],
                [(card, slot) for card, slot in last.layoffs], C.to_mask(last.hands[1 - me]))
    if knocker == me:
        return [C.to_mask(m) for m in view.my_melds], [], [], 0
    melds = [C.to_mask(m) for m in view.knocker_melds]  # with my layoffs on them
    for card, slot in view.layoffs:
        melds[slot] &= ~(1 << card)
    revealed = M.union(melds) | C.to_mask(view.knocker_deadwood)
    return melds, [C.to_mask(m) for m in view.my_melds], list(view.layoffs), revealed


def replay(config: GinConfig, seed: int, actions: list[int], deck: list[int] | None = None,
           dealer: int | None = None, state_class: type[GinState] = GinState) -> GinState:
    """The state reached by ``actions`` from the game seeded ``seed`` (exact replay); the
    deck and first dealer are those given to the game, when they were given."""
    state = state_class(config, seed, deck, dealer)
    for a in actions:
        state.apply(a)
    return state

