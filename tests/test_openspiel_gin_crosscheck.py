"""Our gin against OpenSpiel's own C++ gin (``pyspiel.load_game("gin_rummy")``), played in
lockstep on the same deals.

With the rules options of ``OPENSPIEL_RULES`` our engine plays OpenSpiel's gin. Both engines
get the same deal (OpenSpiel's chance nodes are fed the cards our engine dealt and, at every
stock draw, the card our stock yields); at every decision the legal actions of the two, named
through ``NATIVE_NAMES``, must be equal; one of them, picked at random, is played on both; at
the end both must pay the same. Where OpenSpiel's rules differ from ours the difference must
be one of the kinds named in ``DIFFERENCES``: each is checked to be OpenSpiel's rule at work
and ours to be the rule docs/gin_rummy.md states, and each has a reproduction below
(``test_<kind>_reproduction``). A game whose legal actions differ goes on with the actions
common to both; a game that OpenSpiel ends and we do not is counted and stopped there.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

pyspiel = pytest.importorskip("pyspiel")

from rummy_envs import cards as C  # noqa: E402
from rummy_envs import melds as M  # noqa: E402
from rummy_envs import openspiel as O  # noqa: E402
from rummy_envs.games import gin_rummy as G  # noqa: E402
from rummy_envs.games.gin_rummy import Phase  # noqa: E402

NATIVE = pyspiel.gin_rummy
NATIVE_UTILS = NATIVE.GinRummyUtils(C.NUM_RANKS, C.NUM_SUITS, G.HAND_SIZE)

OPENSPIEL_RULES: dict[str, Any] = {
    "variant": "standard",
    "knock_limit": 10,  # OpenSpiel's knock_card
    "gin_bonus": 25,
    "undercut_bonus": 25,
    # OpenSpiel pays the knocker the deadwood difference and adds the undercut bonus only
    # below zero: a tie pays nobody, our knocker's 0-point win.
    "undercut_on_tie": False,
    "big_gin_bonus": None,  # OpenSpiel has no big gin
    "allow_rediscard_taken_card": True,  # OpenSpiel may discard (or knock with) the card just taken
    # OpenSpiel's wall: a discard leaving 2 stock cards lets the other player knock with it
    # (taking it first) or pass, which ends the hand with no score.
    "dead_stock_size": 2,
    "stock_end_rule": "opponent_last_chance",
    # OpenSpiel's knocker declares its melds and its defender lays off and melds one action
    # at a time.
    "knocker_arrangement": "explicit",
    "layoff_mode": "explicit",
    "episode": "hand",
}
"""Our rules options that play OpenSpiel's gin with its default parameters. The others keep
their defaults: the first dealer, our ``max_turns_per_hand`` (200 plain discards, more than
OpenSpiel's own caps below allow) and the match options, unused in one hand."""

RULE_SETS: list[tuple[str, dict[str, Any], dict[str, Any], int]] = [
    ("defaults", OPENSPIEL_RULES, {}, 1200),
    ("oklahoma",
     OPENSPIEL_RULES | {"variant": "oklahoma", "oklahoma_ace_gin_only": True, "oklahoma_spade_double": False},
     {"oklahoma": True}, 200),
    ("limit_7_bonuses_20_10", OPENSPIEL_RULES | {"knock_limit": 7, "gin_bonus": 20, "undercut_bonus": 10},
     {"knock_card": 7, "gin_bonus": 20, "undercut_bonus": 10}, 200),
]
"""(name, our options, OpenSpiel's parameters, games): OpenSpiel's Oklahoma takes the knock
limit from the upcard (an ace: gin only) and never doubles. About one game in seven ends at
OpenSpiel's repeated upcard draw, so 1,200 games compare over 1,000 to the end."""

NATIVE_NAMES = {"Draw upcard": "TAKE_DISCARD", "Draw stock": "DRAW_STOCK", "Knock": "KNOCK"}
"""OpenSpiel's action names that stand for one of ours whatever the phase. The others:

- ``Pass`` is our ``PASS`` in the opening offer and at the wall (our ``LAST_CHANCE``), our
  ``DONE`` in the showdown (the knocker's melds, the defender's layoffs, its melds);
- a card (``7h``) is our ``DISCARD(7H)`` in the discard phase, our ``KNOCK(7H)`` right after
  ``Knock`` (OpenSpiel knocks, then discards: two actions for our one ``KNOCK(7H)``), and our
  ``LAYOFF(7H,slot)`` for any slot in the layoff phase (OpenSpiel's layoffs name no meld);
- cards run together (``7h8h9h``) are our ``MELD(7H 8H 9H)``.

The defender's showdown comes in the other order: ours declares its melds, then lays off
(``MELD... DONE LAYOFF... DONE``), OpenSpiel's lays off, then declares (``card... Pass
meld... Pass``). Our defender's melds are compared with the melds OpenSpiel offers once its
layoffs are passed over, and played on OpenSpiel after our layoffs."""

MISSED_KNOCK = "missed_knock"
LAYOFF_CHAIN_CUT = "layoff_chain_cut"
LAYOFF_ON_BOTH_MELDS = "layoff_on_both_melds"
REPEATED_UPCARD_DRAW = "repeated_upcard_draw"
UPCARD_DRAW_CAP = "upcard_draw_cap"
DIFFERENCES: dict[str, str] = {
    MISSED_KNOCK: (
        "OpenSpiel offers no Knock where ours offers KNOCK(c). OpenSpiel values 11 cards by one "
        "arrangement of all 11 that melds the most points, less its highest unmelded card; when "
        "the best knock needs another arrangement (such as one melding as many points that "
        "leaves a higher card to discard), it finds the hand above the limit. Ours tries "
        "every discard: KNOCK(c) is legal when the 10 cards left have deadwood within the limit."),
    LAYOFF_CHAIN_CUT: (
        "OpenSpiel extends a knocker's run only by the cards laid off right next to it as "
        "declared, so each end of a run takes at most two layoffs; ours chains without limit "
        "(after 5H goes on 2H-3H-4H, 6H fits, then 7H)."),
    LAYOFF_ON_BOTH_MELDS: (
        "OpenSpiel's layoffs name no meld: a card that fits a 3-card set and a run extends the "
        "run even when it went on the set, so the next card of the run may follow. Ours lays "
        "each card on the one meld its slot names; one laid on the set extends no run."),
    REPEATED_UPCARD_DRAW: (
        "OpenSpiel ends the hand with no score when both players in turn take the top discard "
        "and discard that same card at once. Ours has no such rule: the hand goes on."),
    UPCARD_DRAW_CAP: (
        "OpenSpiel ends the hand with no score at the 50th draw from the discard pile (openings "
        "aside). Ours caps only the turns of a hand (max_turns_per_hand), which random play does "
        "not reach."),
}
"""Every kind of difference between the two engines met in these games, and why."""

AGREED = "agreed"
"""The outcome of a game compared to the end whose returns agree."""


def native_card(card: int) -> int:
    """OpenSpiel's id of our card: its suits go s, c, d, h (ours C, D, H, S), its names are ours
    with a lower-case suit."""
    name = C.format_card(card)
    return NATIVE_UTILS.card_int(name[0] + name[1].lower())


def native_meld(action: int) -> int:
    """OpenSpiel's action declaring the cards of our ``MELD`` action."""
    return NATIVE.MELD_ACTION_BASE + NATIVE_UTILS.meld_to_int([native_card(c) for c in M.MELD_CARDS[action - G.MELD]])


def native_name(state: pyspiel.State, action: int, card_role: str, pass_name: str) -> str:
    """OpenSpiel's action as our action name: a lone card takes ``card_role`` (DISCARD, KNOCK
    or LAYOFF, the latter with no slot) and ``Pass`` is ``pass_name`` (PASS or DONE)."""
    text = state.action_to_string(state.current_player(), action).split("Action: ", 1)[1]
    if text == "Pass":
        return pass_name
    if text in NATIVE_NAMES:
        return NATIVE_NAMES[text]
    cards = sorted(C.parse_card(text[i:i + 2]) for i in range(0, len(text), 2))
    return f"{card_role}({C.format_card(cards[0])})" if len(cards) == 1 else f"MELD({C.format(cards)})"


def our_name(action: int, knock_in_one: bool) -> str:
    """Our action's name as OpenSpiel's actions are named: a layoff without its slot and, at
    the decision to knock (``knock_in_one``), every ``KNOCK(c)`` as the one ``KNOCK``."""
    name = G.action_to_str(action)
    if name.startswith("LAYOFF("):
        return name.split(",")[0] + ")"
    return "KNOCK" if knock_in_one and name.startswith("KNOCK(") else name


def group_by_name(actions: list[int], knock_in_one: bool) -> dict[str, list[int]]:
    """Our actions by their names as OpenSpiel's actions are named (several layoff slots share one)."""
    named: dict[str, list[int]] = {}
    for action in actions:
        named.setdefault(our_name(action, knock_in_one), []).append(action)
    return named


Pick = Callable[[G.GinState, list[int]], int]
"""Chooses one of our actions, from the engine state and the actions both engines offer."""


class Lockstep:
    """One deal played on both engines: our engine state, OpenSpiel's, the differences met so
    far by kind, and our defender's melds waiting to be played on OpenSpiel after its layoffs."""

    def __init__(self, ours: G.GinState, native_game: pyspiel.Game) -> None:
        self.ours = ours
        self.native = native_game.new_initial_state()
        non_dealer, dealer = 1 - ours.dealer, ours.dealer
        self.native_seat = {non_dealer: 0, dealer: 1}  # OpenSpiel's player 0 always leads
        # OpenSpiel deals ten cards to its player 0, ten to player 1, then the upcard.
        for card in C.from_mask(ours.hands[non_dealer]) + C.from_mask(ours.hands[dealer]) + [ours.upcard]:
            self.native.apply_action(native_card(card))
        for seat, native_seat in self.native_seat.items():
            dealt = sorted(native_card(c) for c in C.from_mask(ours.hands[seat]))
            assert sorted(self.native.hands()[native_seat]) == dealt
        assert self.native.upcard() == native_card(ours.upcard)
        assert self.native.knock_card() == ours.knock_limit
        self.waiting_melds: list[int] = []
        self.pile_draws = 0  # our TAKE_DISCARDs in the DRAW phase: OpenSpiel caps them
        self.differences: Counter[str] = Counter()

    # -- the decisions of the two engines, by our names ------------------------------------
    def native_options(self, card_role: str, state: pyspiel.State | None = None) -> dict[str, int]:
        """OpenSpiel's legal actions in ``state`` (its game now by default) by our names."""
        state = state or self.native
        pass_name = "DONE" if self.ours.phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF) else "PASS"
        return {native_name(state, a, card_role, pass_name): a for a in state.legal_actions()}

    def native_counterpart(self) -> dict[str, int]:
        """OpenSpiel's options at our decision, by our names."""
        phase = self.ours.phase
        if phase == Phase.DEFENDER_MELD:
            # OpenSpiel's defender declares its melds after its layoffs: ask a copy that passed them
            preview = self.native.clone()
            if not preview.finished_layoffs():
                preview.apply_action(NATIVE.PASS_ACTION)
            for action in self.waiting_melds:
                preview.apply_action(action)
            return self.native_options("MELD", preview)
        if phase == Phase.LAYOFF:
            # OpenSpiel's defender still holds the cards our defender melded: they are not ours to lay off
            remaining = self.ours.remaining
            return {name: a for name, a in self.native_options("LAYOFF").items()
                    if not name.startswith("LAYOFF(") or remaining >> C.parse_card(name[7:-1]) & 1}
        return self.native_options("DISCARD")

    def compare(self, ours: dict[str, list[int]], native: dict[str, int]) -> set[str]:
        """The names both offer; each name only one offers must be a named difference (counted)."""
        for name in set(ours) ^ set(native):
            self.differences[explain_option(self, name, offered_by_ours=name in ours)] += 1
        return set(ours) & set(native)

    # -- playing --------------------------------------------------------------------------
    def common_actions(self) -> list[int]:
        """Compare this decision: our actions whose names OpenSpiel offers too."""
        assert self.native.current_player() == self.native_seat[self.ours.current_player]
        ours = group_by_name(self.ours.legal_actions(), knock_in_one=True)
        common = self.compare(ours, self.native_counterpart())
        return sorted(a for name in common for a in ours[name])

    def step(self, pick: Pick) -> None:
        """Compare one decision and play the picked common action on both engines."""
        self.play(pick(self.ours, self.common_actions()))

    def play(self, action: int) -> None:
        """Play our ``action`` on our engine and its counterpart on OpenSpiel's, with the stock
        card our engine drew as OpenSpiel's chance outcome."""
        ours, native = self.ours, self.native
        phase, player = ours.phase, ours.current_player
        if phase == Phase.DEFENDER_MELD:
            if action != G.DONE:
                self.waiting_melds.append(native_meld(action))
            ours.apply(action)
            if action == G.DONE and native.finished_layoffs():  # gin: OpenSpiel's defender lays off nothing
                self.finish_native_defence()
            return
        if G.KNOCK <= action < G.MELD:
            native.apply_action(NATIVE.KNOCK_ACTION)
            knocks = group_by_name([a for a in ours.legal_actions() if G.KNOCK <= a < G.MELD], knock_in_one=False)
            assert our_name(action, knock_in_one=False) in self.compare(knocks, self.native_options("KNOCK"))
            native_action = self.native_options("KNOCK")[our_name(action, knock_in_one=False)]
        else:
            native_action = self.native_counterpart()[our_name(action, knock_in_one=False)]
        self.pile_draws += phase == Phase.DRAW and action == G.TAKE_DISCARD
        hand_before = ours.hands[player]
        ours.apply(action)
        native.apply_action(native_action)
        if action == G.DRAW_STOCK:  # OpenSpiel's stock draw is a chance node: our stock's card
            (drawn,) = C.from_mask(ours.hands[player] & ~hand_before)
            assert native_card(drawn) in dict(native.chance_outcomes())
            native.apply_action(native_card(drawn))
        if phase == Phase.LAYOFF and action == G.DONE:
            self.finish_native_defence()

    def finish_native_defence(self) -> None:
        """Our defender's melds on OpenSpiel, after its layoffs, then its final Pass."""
        for action in self.waiting_melds:
            assert action in self.native.legal_actions()
            self.native.apply_action(action)
        self.native.apply_action(NATIVE.PASS_ACTION)

    def play_out(self, pick: Pick) -> str:
        """Play to the end of either engine; the outcome: AGREED or the kind that ended
        OpenSpiel's game first."""
        while not (self.ours.is_terminal() or self.native.is_terminal()):
            self.step(pick)
        return self.outcome()

    def outcome(self) -> str:
        """AGREED when both games are over and pay the same: OpenSpiel's returns are the point
        difference (the knocker's points or minus the defender's), ours are centred on the mean,
        half of it. Otherwise the named kind that ended OpenSpiel's game."""
        if self.ours.is_terminal() and self.native.is_terminal():
            native_returns, our_returns = self.native.returns(), self.ours.returns()
            for seat, native_seat in self.native_seat.items():
                assert native_returns[native_seat] == 2 * our_returns[seat], (our_returns, native_returns,
                                                                              self.ours.to_dict())
            return AGREED
        assert self.native.is_terminal(), f"our game ended first:\n{self.ours.to_dict()}\n{self.native}"
        return explain_end(self)


# -- the named differences, each checked -----------------------------------------------------

def explain_option(lock: Lockstep, name: str, offered_by_ours: bool) -> str:
    """The kind of difference that explains ``name`` being offered by one engine only."""
    ours = lock.ours
    if offered_by_ours and name == "KNOCK" and is_missed_knock(lock):
        return MISSED_KNOCK
    if ours.phase == Phase.LAYOFF and name.startswith("LAYOFF("):
        card = C.parse_card(name[7:-1])
        if offered_by_ours and is_cut_chain(ours, card):
            return LAYOFF_CHAIN_CUT
        if not offered_by_ours and is_layoff_on_both_melds(ours, card):
            return LAYOFF_ON_BOTH_MELDS
    raise AssertionError(f"{name} offered by {'ours' if offered_by_ours else 'OpenSpiel'} only, in "
                         f"{ours.phase.name}; no named difference explains it\n{ours.to_dict()}\n{lock.native}")


def is_missed_knock(lock: Lockstep) -> bool:
    """Ours offers exactly the knocks the docs make legal, and OpenSpiel's value of the 11
    cards (one arrangement of all 11 melding the most, less its highest unmelded card) is
    above the limit. At the wall the 11 cards include the last discard."""
    ours = lock.ours
    hand = ours.hands[ours.current_player] | (1 << ours.pile[-1] if ours.phase == Phase.LAST_CHANCE else 0)
    within_limit = {c for c in C.from_mask(hand) if M.min_deadwood(hand & ~(1 << c)) <= ours.knock_limit}
    offered = {a - G.KNOCK for a in ours.legal_actions() if G.KNOCK <= a < G.MELD}
    native_hand = [native_card(c) for c in C.from_mask(hand)]
    native_value = NATIVE_UTILS.min_deadwood(native_hand)
    if ours.phase == Phase.DISCARD:  # the value OpenSpiel keeps to decide on Knock
        assert native_value == lock.native.deadwood()[lock.native_seat[ours.current_player]]
    return offered == within_limit != set() and native_value > ours.knock_limit


def is_cut_chain(ours: G.GinState, card: int) -> bool:
    """``card`` fits a run of the knocker as the layoffs extended it (ours chains), two or
    more laid-off cards beyond the run as the knocker laid it out (OpenSpiel stops there)."""
    for meld, extent in zip(ours.knocker_melds, ours.meld_extents):
        if M.is_set(meld) or not M.layoff_cards(extent) >> card & 1:
            continue
        cards = C.from_mask(meld)
        if (cards[0] - card if card < cards[0] else card - cards[-1]) >= 3:
            return True
    return False


def is_layoff_on_both_melds(ours: G.GinState, card: int) -> bool:
    """``card`` fits no knocker meld as our layoffs extended them, but fits a run extended by
    a card we laid on a set (OpenSpiel extends every meld a laid-off card fits)."""
    if any(M.layoff_cards(extent) >> card & 1 for extent in ours.meld_extents):
        return False
    on_sets = [laid for laid, slot in ours.layoffs if M.is_set(ours.knocker_melds[slot])]
    return any(M.layoff_cards(extent) >> laid & 1 and M.layoff_cards(extent | 1 << laid) >> card & 1
               for laid in on_sets for meld, extent in zip(ours.knocker_melds, ours.meld_extents) if not M.is_set(meld))


def explain_end(lock: Lockstep) -> str:
    """The kind of difference that ended OpenSpiel's game (with no score) while ours goes on."""
    ours, history = lock.ours, lock.ours.history
    assert lock.native.returns() == [0.0, 0.0] and not ours.is_terminal()
    at_cap = lock.pile_draws == NATIVE.MAX_NUM_DRAW_UPCARD_ACTIONS
    if at_cap and history[-1] == G.TAKE_DISCARD and ours.phase == Phase.DISCARD:
        return UPCARD_DRAW_CAP
    take, discard = G.TAKE_DISCARD, history[-1]
    if history[-4:] == [take, discard, take, discard] and G.DISCARD <= discard < G.KNOCK and ours.phase == Phase.DRAW:
        return REPEATED_UPCARD_DRAW
    raise AssertionError(f"OpenSpiel's game ended, ours goes on; no named difference explains it\n"
                         f"{ours.to_dict()}\n{lock.native}")


# -- players ---------------------------------------------------------------------------------

def purposeful(ours: G.GinState, actions: list[int], rng: random.Random) -> int:
    """A player with an aim: knock when it can, keep the least deadwood, take the top discard
    when it helps, declare and lay off before saying DONE."""
    hand = ours.hands[ours.current_player]
    knocks = [a for a in actions if G.KNOCK <= a < G.MELD]
    discards = knocks or [a for a in actions if G.DISCARD <= a < G.KNOCK]
    if discards:
        return min(discards, key=lambda a: (M.min_deadwood(hand & ~(1 << (a - G.DISCARD) % C.NUM_CARDS)), rng.random()))
    if G.TAKE_DISCARD in actions and len(actions) > 1:
        with_top = hand | 1 << ours.pile[-1]
        helps = min(M.min_deadwood(with_top & ~(1 << c)) for c in C.from_mask(hand)) < M.min_deadwood(hand)
        return G.TAKE_DISCARD if helps else next(a for a in actions if a != G.TAKE_DISCARD)
    return rng.choice([a for a in actions if a != G.DONE] or actions)


def random_player(rng: random.Random) -> Pick:
    """Half the time any common action, else the purposeful one: random play that still
    reaches knocks, layoffs and showdowns often."""
    return lambda ours, actions: rng.choice(actions) if rng.random() < 0.5 else purposeful(ours, actions, rng)


def scripted(names: list[str]) -> Pick:
    """Plays our actions by name, in order; each must be common to both engines."""
    queue = list(names)

    def pick(ours: G.GinState, actions: list[int]) -> int:
        action = G.str_to_action(queue.pop(0))
        assert action in actions, f"{G.action_to_str(action)} is not common: {[G.action_to_str(a) for a in actions]}"
        return action
    return pick


def dealt_by_seed(options: dict[str, Any], seed: int, native_options: dict[str, Any] | None = None) -> Lockstep:
    """A lockstep on the deal of ``seed``: the deal our OpenSpiel bridge makes from the seed's
    chance nodes, which is our engine's ``GinState(config, seed)``."""
    bridged = O.load_game("gin_rummy", **options).new_dealt_state(seed)
    return Lockstep(bridged.engine, pyspiel.load_game("gin_rummy", native_options or {}))


# -- the tests -------------------------------------------------------------------------------

def test_card_names_and_ids_map_one_to_one() -> None:
    names = [NATIVE_UTILS.card_string(native_card(c)) for c in range(C.NUM_CARDS)]
    assert [n[0] + n[1].upper() for n in names] == [C.format_card(c) for c in range(C.NUM_CARDS)]
    assert sorted(native_card(c) for c in range(C.NUM_CARDS)) == list(range(C.NUM_CARDS))


def test_our_stock_is_drawn_from_the_end_of_its_list() -> None:
    lock = dealt_by_seed(OPENSPIEL_RULES, 5)
    top = lock.ours.stock[-1]
    assert lock.ours.to_dict()["stock"][0] == C.format_card(top)
    lock.step(scripted(["PASS"]))
    lock.step(scripted(["PASS"]))
    lock.step(scripted(["DRAW_STOCK"]))
    assert lock.ours.hands[lock.ours.current_player] >> top & 1
    assert native_card(top) in lock.native.hands()[0]


@pytest.mark.parametrize("name, options, native_options, games", RULE_SETS, ids=[r[0] for r in RULE_SETS])
def test_random_games_agree_but_for_named_differences(name: str, options: dict[str, Any],
                                                      native_options: dict[str, Any], games: int) -> None:
    rng = random.Random(f"openspiel-crosscheck:{name}")
    native_game = pyspiel.load_game("gin_rummy", native_options)
    bridge = O.load_game("gin_rummy", **options)
    outcomes: Counter[str] = Counter()
    games_with: Counter[str] = Counter()
    occurrences: Counter[str] = Counter()
    showdowns = 0
    started = time.perf_counter()
    for _ in range(games):
        lock = Lockstep(bridge.new_dealt_state(rng.getrandbits(64)).engine, native_game)
        outcome = lock.play_out(random_player(rng))
        outcomes[outcome] += 1
        games_with.update(set(lock.differences) | ({outcome} - {AGREED}))
        occurrences.update(lock.differences)
        showdowns += outcome == AGREED and lock.ours.knocker >= 0
    seconds = time.perf_counter() - started
    print(f"\n{name}: {games} games in {seconds:.1f} s; outcomes {dict(outcomes)}; showdowns compared {showdowns}; "
          f"games with each difference {dict(games_with)}; differing decisions {dict(occurrences)}")
    assert set(games_with) <= set(DIFFERENCES)
    assert outcomes[AGREED] >= 0.75 * games  # most games are compared to the end
    assert showdowns >= 0.4 * games  # many of them through a knock, melds and layoffs


def test_missed_knock_reproduction() -> None:
    """The non-dealer takes the upcard 4S into ``3C 4C 5C 6C 2D 5D 3H 6H 5S 6S``. Discarding 6H
    leaves 10 (3C-6C, 4S-5S-6S; 2D 5D 3H): ours offers KNOCK(6H). OpenSpiel melds the 11 cards
    as 5C 5D 5S and 6C 6H 6S (33 points, as many as the runs), keeps 3C 4C 2D 3H 4S and drops
    a 4: 12, so it offers no Knock."""
    non_dealer, dealer = C.parse("3C 4C 5C 6C 2D 5D 3H 6H 5S 6S"), C.parse("7C 8C 9C TC JC QC KC AD 3D 4D")
    order = [c for pair in zip(non_dealer, dealer) for c in pair] + C.parse("4S")
    deck = order + [c for c in range(C.NUM_CARDS) if c not in order]
    ours = G.GinState(G.GinConfig(**OPENSPIEL_RULES), 0, deck=deck, dealer=1)
    lock = Lockstep(ours, pyspiel.load_game("gin_rummy"))
    lock.step(scripted(["TAKE_DISCARD"]))
    lock.common_actions()
    assert lock.differences == Counter({MISSED_KNOCK: 1})
    assert [G.action_to_str(a) for a in ours.legal_actions() if a >= G.KNOCK] == ["KNOCK(6H)"]
    assert NATIVE.KNOCK_ACTION not in lock.native.legal_actions() and lock.native.deadwood()[0] == 12


def test_layoff_chain_cut_reproduction() -> None:
    """Seed 3676: the dealer takes the upcard 9D, knocks with it and lays out TD-JD-QD,
    2H-3H-4H and TS-JS-QS (TC left, 10). The defender lays off 5H and 6H on the hearts; ours
    then offers 7H as well, OpenSpiel does not."""
    lock = dealt_by_seed(OPENSPIEL_RULES, 3676)
    for name in ["PASS", "TAKE_DISCARD", "KNOCK(9D)", "MELD(TD JD QD)", "MELD(2H 3H 4H)", "MELD(TS JS QS)", "DONE",
                 "DONE", "LAYOFF(5H,1)", "LAYOFF(6H,1)"]:
        lock.step(scripted([name]))
    lock.common_actions()
    assert lock.differences == Counter({LAYOFF_CHAIN_CUT: 1})
    assert G.str_to_action("LAYOFF(7H,1)") in lock.ours.legal_actions()
    assert native_card(C.parse_card("7H")) not in lock.native.legal_actions()


def test_layoff_on_both_melds_reproduction() -> None:
    """Seed 66839: the dealer takes the upcard 7D, knocks with it and lays out 2C 2D 2S,
    9C 9D 9H and 3H-4H-5H (JS left, 10). The defender lays 2H off on the set of twos (slot 0);
    OpenSpiel counts it on the hearts too and offers AH, ours does not (laid on the hearts,
    slot 2, 2H makes room for AH in ours as well)."""
    lock = dealt_by_seed(OPENSPIEL_RULES, 66839)
    for name in ["PASS", "TAKE_DISCARD", "KNOCK(7D)", "MELD(2C 2D 2S)", "MELD(9C 9D 9H)", "MELD(3H 4H 5H)", "DONE",
                 "DONE"]:
        lock.step(scripted([name]))
    on_the_run = lock.ours.clone()
    on_the_run.apply(G.str_to_action("LAYOFF(2H,2)"))
    assert G.str_to_action("LAYOFF(AH,2)") in on_the_run.legal_actions()
    lock.step(scripted(["LAYOFF(2H,0)"]))
    lock.common_actions()
    assert lock.differences == Counter({LAYOFF_ON_BOTH_MELDS: 1})
    assert not any(G.action_to_str(a).startswith("LAYOFF(AH") for a in lock.ours.legal_actions())
    assert native_card(C.parse_card("AH")) in lock.native.legal_actions()


def test_repeated_upcard_draw_reproduction() -> None:
    """Seed 0: the non-dealer takes the upcard 3D and discards it, the dealer takes it and
    discards it: OpenSpiel's hand is over with no score, ours goes on with the non-dealer's draw."""
    lock = dealt_by_seed(OPENSPIEL_RULES, 0)
    lock.play_out(scripted(["TAKE_DISCARD", "DISCARD(3D)", "TAKE_DISCARD", "DISCARD(3D)"]))
    assert lock.outcome() == REPEATED_UPCARD_DRAW
    assert lock.ours.phase == Phase.DRAW and lock.ours.current_player == 1 - lock.ours.dealer


def test_upcard_draw_cap_reproduction() -> None:
    """Seed 0: both pass the upcard, the non-dealer draws and discards; from then on each player
    takes the top discard and discards its lowest other card. At the 50th take OpenSpiel's hand
    is over with no score; ours goes on."""
    lock = dealt_by_seed(OPENSPIEL_RULES, 0)
    for name in ["PASS", "PASS", "DRAW_STOCK", "DISCARD(2D)"]:
        lock.step(scripted([name]))

    def take_then_discard_lowest(ours: G.GinState, actions: list[int]) -> int:
        if ours.phase == Phase.DRAW:
            return G.TAKE_DISCARD
        return min(a for a in actions if G.DISCARD <= a < G.KNOCK and a - G.DISCARD != ours.taken_card)
    assert lock.play_out(take_then_discard_lowest) == UPCARD_DRAW_CAP
    assert lock.pile_draws == 50 and lock.ours.phase == Phase.DISCARD and not lock.ours.is_terminal()


def test_every_difference_is_reproduced() -> None:
    assert all(f"test_{kind}_reproduction" in globals() for kind in DIFFERENCES)
