"""Tests that fail when the gin rules break (issue 13; docs/mutation.md has the mutation score).

Each check compares the engine and the encoder with something independent of them:
- the knocker's ``auto_best`` choice and the defender's reply against the brute-force
  oracle of tests/gin_rummy_oracle.py, over every arrangement of the knocker's hand;
- the legal actions against a rules oracle written here from gin_rummy.md (the re-discard
  ban on knocks, every Oklahoma upcard rank, the 50th card with a pile of many cards, big
  gin on 11 cards, the explicit showdown's melds and layoffs);
- every observation segment, decoded, against a record of the public play kept here action
  by action, and against ``player_view``, at mid-game states of standard, Oklahoma,
  explicit-showdown and match games (piles of many cards, takes, passes, knocks);
- the match score against tables worked out by hand (exact target, 0-point wins,
  shutouts under every option, boxes toward the target);
- determinizations keeping every publicly known card where it is;
- ``win_loss`` rewards paid on a reset from a finished state.

Fixed scenarios and a few seeded games keep it quick.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np
import pytest

from gin_rummy_oracle import (all_arrangements, can_lay_off, card_rank, card_suit, hand_value, is_meld,
                        oracle_deadwood, oracle_defender_deadwood)
from rummy_envs import cards as C
from rummy_envs import gin_rummy_v0
from rummy_envs.games import gin_rummy as G
from rummy_envs.games.gin_rummy import GinConfig, GinState, Phase

SPADES = 3
FULL_STOCK = 31


# ---------------------------------------------------------------------------------------
# The rules, written again from gin_rummy.md


def oracle_stakes(config: GinConfig, upcard: int) -> tuple[int, int]:
    """(knock limit, multiplier) of a hand with this upcard (section 9)."""
    if config.variant != "oklahoma":
        return config.knock_limit, 1
    rank = card_rank(upcard)
    if rank == 0:
        limit = 0 if config.oklahoma_ace_gin_only else 1
    else:
        limit = 10 if rank >= 9 else rank + 1
    doubled = config.oklahoma_spade_double and card_suit(upcard) == SPADES
    return limit, 2 if doubled else 1


def oracle_score(config: GinConfig, k: int, d: int, big_gin: bool, multiplier: int) -> tuple[bool, int]:
    """(the knocker wins, points) of a showdown with deadwoods k and d (section 7)."""
    if k == 0:
        return True, ((config.big_gin_bonus if big_gin else config.gin_bonus) + d) * multiplier
    if k < d or (k == d and not config.undercut_on_tie):
        return True, (d - k) * multiplier
    return False, (k - d + config.undercut_bonus) * multiplier


def oracle_best_knock(config: GinConfig, knocker: list[int], defender: list[int], limit: int, big_gin: bool,
                      multiplier: int) -> int:
    """The knocker's best net result (points won, minus points lost) over every arrangement of
    its hand within the limit, each met by the defender's best reply."""
    best = None
    for arrangement in all_arrangements(knocker):
        k = hand_value(knocker) - sum(hand_value(m) for m in arrangement)
        if k > limit:
            continue
        d = oracle_defender_deadwood(defender, arrangement) if k else oracle_deadwood(defender)
        wins, points = oracle_score(config, k, d, big_gin, multiplier)
        net = points if wins else -points
        best = net if best is None else max(best, net)
    assert best is not None, "a legal knock has an arrangement within the limit"
    return best


# ---------------------------------------------------------------------------------------
# Public play, followed action by action without the engine's bookkeeping


@dataclass
class Public:
    """What both players have seen of the hand so far, and the match score from the hands won."""

    upcard: int
    dealer: int
    pile: list[int]
    stock: int = FULL_STOCK
    discarded: list[set[int]] = field(default_factory=lambda: [set(), set()])
    known: list[set[int]] = field(default_factory=lambda: [set(), set()])
    passed: list[bool] = field(default_factory=lambda: [False, False])
    taken: int | None = None
    knocker: int = -1
    declared: list[list[int]] = field(default_factory=lambda: [[], []])  # melds declared, per seat
    laid: list[tuple[int, int]] = field(default_factory=list)  # (card, slot)

    @classmethod
    def deal(cls, state: GinState) -> Public:
        """The public part of a fresh deal (or of a state dict read at the start of a hand)."""
        return cls(upcard=state.upcard, dealer=state.dealer, pile=list(state.pile), stock=len(state.stock),
                   passed=list(state.passed))

    def play(self, state: GinState, action: int) -> None:
        """Record ``action`` of the player to move in ``state`` (before it is applied)."""
        p, phase = state.current_player, state.phase
        if phase in (Phase.OFFER_ND, Phase.OFFER_D) and action == G.PASS:
            self.passed[0 if phase == Phase.OFFER_ND else 1] = True
        elif action == G.TAKE_DISCARD:
            self._take(p)
        elif action == G.DRAW_STOCK:
            self.stock -= 1
            self.taken = None
        elif G.DISCARD <= action < G.KNOCK:
            card = action - G.DISCARD
            self.pile.append(card)
            self.discarded[p].add(card)
            self.known[p].discard(card)
            self.taken = None
        elif G.KNOCK <= action < G.MELD or action == G.BIG_GIN:
            if phase == Phase.LAST_CHANCE:
                self._take(p)
            if action != G.BIG_GIN:
                self.known[p].discard(action - G.KNOCK)
            self.knocker, self.taken = p, None
        elif G.MELD <= action < G.LAYOFF:
            self.declared[p].append(C.from_mask(G.M.MELDS[action - G.MELD]))
        elif G.LAYOFF <= action < G.NUM_ACTIONS:
            self.laid.append(divmod(action - G.LAYOFF, C.NUM_CARDS)[::-1])

    def _take(self, p: int) -> None:
        card = self.pile.pop()
        self.known[p].add(card)
        self.taken = card


def oracle_legal(state: GinState, public: Public) -> set[int]:
    """The legal actions of the player to move, from the rules, the hands and the public record."""
    cfg, p, phase = state.config, state.current_player, state.phase
    hand = C.from_mask(state.hands[p])
    limit, _ = oracle_stakes(cfg, public.upcard)
    if phase in (Phase.OFFER_ND, Phase.OFFER_D):
        return {G.TAKE_DISCARD, G.PASS}
    if phase == Phase.FORCED_DRAW:
        return {G.DRAW_STOCK}
    if phase == Phase.DRAW:
        return {G.DRAW_STOCK, G.TAKE_DISCARD}
    if phase in (Phase.DISCARD, Phase.LAST_CHANCE):
        banned = public.taken if phase == Phase.DISCARD else public.pile[-1]
        if phase == Phase.LAST_CHANCE:
            hand = hand + [banned]
            out = {G.PASS}
        else:
            out = {G.DISCARD + c for c in hand if c != banned or cfg.allow_rediscard_taken_card}
        for c in hand:
            if (c != banned or cfg.allow_rediscard_taken_card) and oracle_deadwood([x for x in hand if x != c]) <= limit:
                out.add(G.KNOCK + c)
        if cfg.big_gin_bonus is not None and oracle_deadwood(hand) == 0:
            out.add(G.BIG_GIN)
        return out
    declared = [c for meld in public.declared[p] for c in meld]
    remaining = [c for c in hand if c not in declared and c not in {card for card, _ in public.laid}]
    table_melds = {m for m in _melds_within(remaining)}
    if phase == Phase.KNOCKER_MELD:
        limit = 0 if state.big_gin else limit
        out = {G.MELD + G.M.MELD_INDEX[C.to_mask(m)] for m in table_melds
               if oracle_deadwood([c for c in remaining if c not in m]) <= limit}
        return out | ({G.DONE} if hand_value(remaining) <= limit else set())
    if phase == Phase.DEFENDER_MELD:
        return {G.DONE} | {G.MELD + G.M.MELD_INDEX[C.to_mask(m)] for m in table_melds}
    assert phase == Phase.LAYOFF
    extents = [C.from_mask(m) for m in state.knocker_melds]
    for card, slot in public.laid:
        extents[slot].append(card)
    return {G.DONE} | {G.LAYOFF + slot * C.NUM_CARDS + c for c in remaining for slot, extent in enumerate(extents)
                       if can_lay_off(c, extent)}


def _melds_within(cards: list[int]) -> list[tuple[int, ...]]:
    """The melds of the meld table (sets of 3-4, runs of 3-5) made of these cards."""
    out = []
    for arrangement in all_arrangements(cards):
        out += [tuple(sorted(m)) for m in arrangement if len(m) <= 5]
    return sorted(set(out))


# ---------------------------------------------------------------------------------------
# Decoding observations


def segments(env, agent: str) -> dict[str, np.ndarray]:
    """The observation of ``agent`` cut into its named segments."""
    obs = env.observe(agent)["observation"]
    return {s.name: obs[s.offset : s.offset + s.size] for s in env.observation_layout().values()}


def card_set(values: np.ndarray) -> set[int]:
    assert set(np.unique(values)) <= {0.0, 1.0}
    return {int(c) for c in np.flatnonzero(values)}


def check_observation(env, public: Public, player: int, totals: list[int], wins: list[int]) -> None:
    """Every segment of ``player``'s observation, and the view, against the public record."""
    game, agent, opp = env.game, f"player_{player}", 1 - player
    seg, view = segments(env, agent), env.player_view(agent)
    limit, multiplier = oracle_stakes(game.config, public.upcard)
    hand = set(C.from_mask(game.hands[player]))
    top = public.pile[-1] if public.pile else None
    assert card_set(seg["hand"]) == hand == set(view.hand)
    assert card_set(seg["top_discard"]) == ({top} if top is not None else set()) and view.top_discard == top
    assert card_set(seg["discard_pile"]) == set(public.pile) and list(view.discard_pile) == public.pile
    assert card_set(seg["my_discards"]) == public.discarded[player] == set(view.discarded[0])
    assert card_set(seg["opponent_discards"]) == public.discarded[opp] == set(view.discarded[1])
    assert card_set(seg["opponent_known"]) == public.known[opp] == set(view.opponent_known)
    assert seg["stock_size"][0] == pytest.approx(public.stock / FULL_STOCK) and view.stock_size == public.stock
    assert card_set(seg["phase"]) == {int(game.phase)} and view.phase == game.phase
    assert seg["knock_limit"][0] == pytest.approx(limit / 10) and view.knock_limit == limit
    assert seg["doubled"][0] == (multiplier == 2) and view.multiplier == multiplier
    is_dealer = public.dealer == player
    assert list(seg["opening"]) == [is_dealer, *public.passed]
    assert view.is_dealer == is_dealer and view.upcard_passed == tuple(public.passed)
    assert list(seg["knocker"]) == [public.knocker == player, public.knocker == opp]
    assert view.knocker == (None if public.knocker < 0 else 0 if public.knocker == player else 1)
    assert view.taken_card == (public.taken if game.current_player == player else None)
    slots = [card_set(seg["knocker_melds"][i * C.NUM_CARDS : (i + 1) * C.NUM_CARDS]) for i in range(3)]
    assert slots[len(view.knocker_melds):] == [set()] * (3 - len(view.knocker_melds))
    assert slots[: len(view.knocker_melds)] == [set(m) for m in view.knocker_melds]
    assert card_set(seg["knocker_deadwood"]) == set(view.knocker_deadwood)
    assert card_set(seg["my_melds"]) == {c for m in view.my_melds for c in m}
    if public.knocker < 0:
        assert not any(slots) and not view.knocker_deadwood and not view.my_melds
    if "scores" in seg:
        target = game.config.target_score
        expected = [totals[player] / target, totals[opp] / target, wins[player] / 10, wins[opp] / 10]
        assert seg["scores"] == pytest.approx(expected)
        assert view.scores == (totals[player], totals[opp]) and view.hands_won == (wins[player], wins[opp])


def check_showdown_view(game: GinState, public: Public, player: int) -> None:
    """What each side sees of a showdown in progress (gin_rummy.md, Observation): the defender
    the knocker's layout with the layoffs, the knocker its own arrangement without them."""
    view = game.view(player)
    k = public.knocker
    layout = [set(m) for m in view.knocker_melds]
    declared = sorted(c for m in public.declared[k] for c in m)
    if game.phase == Phase.KNOCKER_MELD:  # both see the melds declared so far
        assert sorted(c for m in layout for c in m) == declared
        return
    laid = {card for card, _ in public.laid}
    shown = {c for m in layout for c in m}
    if player == k:
        assert shown == set(declared) and {c for m in view.my_melds for c in m} == set(declared)
        assert view.layoffs == ()
    else:
        assert shown == set(declared) | laid
        assert {c for m in view.my_melds for c in m} == {c for m in public.declared[player] for c in m}
        assert list(view.layoffs) == public.laid
    assert set(view.knocker_deadwood) == set(C.from_mask(game.hands[k])) - set(declared)


# ---------------------------------------------------------------------------------------
# Seeded games, checked at every decision


def varied(state: GinState, rng: random.Random) -> int:
    """Play that takes, passes and knocks often enough to reach every kind of state."""
    legal = state.legal_actions()
    knocks = [a for a in legal if G.KNOCK <= a < G.MELD or a == G.BIG_GIN]
    if knocks and rng.random() < 0.6:
        return rng.choice(knocks)
    if state.phase in (Phase.OFFER_ND, Phase.OFFER_D, Phase.DRAW) and rng.random() < 0.45:
        return G.TAKE_DISCARD
    if state.phase == Phase.DISCARD:
        discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
        hand = state.hands[state.current_player]
        return min(discards, key=lambda a: (G.M.min_deadwood(hand ^ 1 << (a - G.DISCARD)), rng.random()))
    if state.phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF):
        melds = [a for a in legal if a != G.DONE]
        return rng.choice(melds) if melds and rng.random() < 0.8 else (G.DONE if G.DONE in legal else melds[0])
    return rng.choice(legal)


def play_checked(options: dict, seed: int, max_steps: int, start: dict | None = None, oracle_every: int = 1) -> GinState:
    """Play a seeded game through the raw env, checking at every decision the observations of
    both players, the legal actions (every ``oracle_every``-th decision) and a determinization."""
    env = gin_rummy_v0.raw_env(**options)
    env.reset(seed=seed, options={"state": start} if start else None)
    game, rng = env.game, random.Random(seed)
    public = Public.deal(game)
    totals, wins = list(game.match.totals), list(game.match.wins)
    for step in range(max_steps):
        for player in (0, 1):
            check_observation(env, public, player, totals, wins)
            if public.knocker >= 0 and not game.is_terminal():
                check_showdown_view(game, public, player)
        if game.is_terminal():
            break
        if step % oracle_every == 0:
            assert set(game.legal_actions()) == oracle_legal(game, public), (step, game.phase.name)
            check_determinization(game, rng)
        action = varied(game, rng)
        hands_before = len(game.hand_results)
        public.play(game, action)
        env.step(action)
        if len(game.hand_results) > hands_before:
            result = game.hand_results[-1]
            if result.winner >= 0:
                wins[result.winner] += 1
                box = game.config.box_bonus if game.config.boxes_count_toward_target else 0
                totals[result.winner] += result.points[result.winner] + box
            if not game.is_terminal():
                public = Public.deal(game)
    return game


GAMES = {
    "standard": ({}, 3),
    "oklahoma": ({"variant": "oklahoma", "oklahoma_ace_gin_only": False}, 3),
    "explicit": ({"knocker_arrangement": "explicit", "layoff_mode": "explicit", "big_gin_bonus": 31}, 3),
    "last_chance": ({"stock_end_rule": "opponent_last_chance", "dead_stock_size": 12, "big_gin_bonus": 31,
                     "allow_rediscard_taken_card": True}, 3),
    "match": ({"episode": "match", "target_score": 60, "variant": "oklahoma", "boxes_count_toward_target": True}, 2),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_observations_masks_and_determinizations_over_seeded_games(name):
    options, games = GAMES[name]
    for seed in range(games):
        play_checked(options, seed, max_steps=400 if options.get("episode") == "match" else 200, oracle_every=2)


def test_observations_in_a_match_started_from_given_scores():
    """The score segments show each side's own total (the totals differ), over a few hands."""
    state = GinState(GinConfig(episode="match", target_score=150), seed=4)
    data = state.to_dict()
    data["match"] = {"totals": [37, 92], "wins": [2, 5], "winner": -1}
    game = play_checked({"episode": "match", "target_score": 150}, 4, max_steps=150, start=data, oracle_every=5)
    assert len(game.hand_results) >= 1


# ---------------------------------------------------------------------------------------
# The knocker's and defender's choices against the brute-force oracle


def knock_states(options: dict, games: int, seed: int) -> list[GinState]:
    """States just before a knock: the first DISCARD of each seeded game where one is legal."""
    found = []
    for game_seed in range(seed, seed + games):
        state, rng = GinState(GinConfig(**options), seed=game_seed), random.Random(game_seed)
        for _ in range(200):  # more moves than a hand has: a broken engine must not loop forever
            if state.is_terminal():
                break
            if any(G.KNOCK <= a < G.MELD for a in state.legal_actions()):
                found.append(state.clone())
                break
            legal = state.legal_actions()
            if state.phase == Phase.DISCARD:  # the discard keeping the least deadwood
                hand = state.hands[state.current_player]
                discards = [a for a in legal if G.DISCARD <= a < G.KNOCK]
                legal = [min(discards, key=lambda a: G.M.min_deadwood(hand ^ 1 << (a - G.DISCARD)))]
            state.apply(rng.choice(legal))
    return found


@pytest.mark.parametrize("options", [{}, {"variant": "oklahoma", "undercut_on_tie": False, "undercut_bonus": 10}],
                         ids=["standard", "oklahoma"])
def test_auto_best_knocks_match_the_oracle(options):
    """Every knock of the first knockable turn of seeded games: the knocker's net result is the
    oracle's best over every arrangement, and the defender's deadwood its best reply."""
    checked = 0
    for state in knock_states(options, games=14, seed=100):
        p = state.current_player
        for action in [a for a in state.legal_actions() if G.KNOCK <= a < G.MELD][:3]:
            after = state.clone()
            after.apply(action)
            result = after.hand_results[-1]
            knocker = C.from_mask(state.hands[p] & ~(1 << (action - G.KNOCK)))
            defender = C.from_mask(state.hands[1 - p])
            limit, multiplier = oracle_stakes(state.config, state.upcard)
            net = result.points[p] - result.points[1 - p]
            assert net == oracle_best_knock(state.config, knocker, defender, limit, False, multiplier)
            melds = result.knocker_melds
            assert all(is_meld(m) for m in melds)
            k = hand_value(knocker) - sum(hand_value(m) for m in melds)
            assert result.deadwood[p] == k <= limit
            expected_d = oracle_defender_deadwood(defender, melds) if k else oracle_deadwood(defender)
            assert result.deadwood[1 - p] == expected_d
            checked += 1
    assert checked >= 15


@pytest.mark.parametrize("knocker, defender, upcard, stock_top, expected", [
    # G3: melding the hearts lets 5H 6H go off (10 points); keeping them back scores 12
    ("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C", [12, 0]),
    # G4: an undercut either way; the arrangement losing least (by 1 + 25) is the one kept
    ("AS 2S 3S 4C 5C 6C 8H 8D 8C 7D", "4S KH KS KD 6D 6H 6S 2D 3D AH", "7S", "QC", [0, 26]),
    # G5: gin refuses layoffs
    ("AC 2C 3C 4C 5H 5S 5D 9S TS JS", "6C 7C 8C QH QD 2H 3D 8S 9H KH", "KC", "KD", [77, 0]),
    # late knocks against a low defender, where some arrangements win and some are undercut:
    # the knocker takes the best net result, not the most points changing hands
    ("AC 2C 3C 4C 9D 3H 9H AS 3S 9S", "5C AD 5D AH 4H 5H 2S 4S 5S 6S", "QD", "KD", [1, 0]),  # not 25 lost
    ("AC 2C 3C 4C 9C 9D 3H 9H 3S 9S", "5C AD 5D AH 4H 5H 2S 4S 5S 6S", "QD", "KD", [2, 0]),  # not 1, 27 lost
    ("AC 2C 3C 4C 9C 9D 4H 9H AS 9S", "5C AD 2D 5D AH 5H 2S 4S 5S 6S", "QD", "KD", [1, 0]),  # not 25 or 28 lost
    ("AC 2C 3C 4C 9C 9D 7H 9H AS 9S", "5C AD 2D 5D AH 5H 2S 4S 5S 6S", "QD", "KD", [0, 27]),  # undercut either way
])
def test_auto_best_fixed_knocks(knocker, defender, upcard, stock_top, expected):
    state = GinState(GinConfig(), seed=0, deck=_deck(knocker, defender, upcard, stock_top), dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK", f"KNOCK({stock_top})"):
        state.apply(G.str_to_action(name))
    assert state.hand_results[-1].points == expected
    limit, _ = oracle_stakes(state.config, state.upcard)
    net = expected[0] - expected[1]
    assert net == oracle_best_knock(state.config, C.parse(knocker), C.parse(defender), limit, False, 1)


def _deck(nd: str, d: str, upcard: str, stock_top: str = "") -> list[int]:
    """A deck dealing ``nd`` to the non-dealer (seat 0 with dealer 1), ``d`` to the dealer,
    then the upcard and the top of the stock; the rest in id order."""
    order = [c for pair in zip(C.parse(nd), C.parse(d)) for c in pair] + C.parse(upcard) + C.parse(stock_top)
    return order + [c for c in range(C.NUM_CARDS) if c not in order]


# ---------------------------------------------------------------------------------------
# Oklahoma: every upcard rank, doubled scores


@pytest.mark.parametrize("ace_gin_only", [True, False])
@pytest.mark.parametrize("spade_double", [True, False])
def test_oklahoma_every_upcard_sets_limit_and_multiplier(ace_gin_only, spade_double):
    cfg = GinConfig(variant="oklahoma", oklahoma_ace_gin_only=ace_gin_only, oklahoma_spade_double=spade_double)
    for upcard in range(C.NUM_CARDS):
        deck = [c for c in range(C.NUM_CARDS) if c != upcard]
        deck.insert(20, upcard)
        state = GinState(cfg, seed=0, deck=deck, dealer=0)
        assert (state.knock_limit, state.multiplier) == oracle_stakes(cfg, upcard), C.format_card(upcard)
        expected_limit = {0: 0 if ace_gin_only else 1, 9: 10, 10: 10, 11: 10, 12: 10}.get(upcard % 13, upcard % 13 + 1)
        assert state.knock_limit == expected_limit


G4_KNOCKER, G4_DEFENDER = "AS 2S 3S 4C 5C 6C 8H 8D 8C 7D", "4S KH KS KD 6D 6H 6S 2D 3D AH"
G5_KNOCKER, G5_DEFENDER = "AC 2C 3C 4C 5H 5S 5D 9S TS JS", "6C 7C 8C QH QD 2H 3D 8S 9H KH"


@pytest.mark.parametrize("knocker, defender, upcard, spade_double, expected", [
    (G4_KNOCKER, G4_DEFENDER, "7S", True, [0, 52]),  # undercut 1 + 25, doubled
    (G4_KNOCKER, G4_DEFENDER, "7S", False, [0, 26]),
    (G4_KNOCKER, G4_DEFENDER, "7C", True, [0, 26]),
    (G5_KNOCKER, G5_DEFENDER, "KS", True, [154, 0]),  # gin 25 + 52, doubled
    (G5_KNOCKER, G5_DEFENDER, "AS", True, [154, 0]),  # an ace upcard: gin only, still doubled
])
def test_oklahoma_spade_upcard_doubles_every_score(knocker, defender, upcard, spade_double, expected):
    state = GinState(GinConfig(variant="oklahoma", oklahoma_spade_double=spade_double), seed=0,
                     deck=_deck(knocker, defender, upcard, "QC"), dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(QC)"):
        state.apply(G.str_to_action(name))
    assert state.hand_results[-1].points == expected


@pytest.mark.parametrize("upcard, knockable", [("5D", False), ("7C", True), ("JH", True), ("AC", False)])
def test_oklahoma_upcard_limit_decides_the_knock(upcard, knockable):
    """G4's knocker has 7 after discarding QC: legal from a 7 upcard up, not at 5 or an ace."""
    state = GinState(GinConfig(variant="oklahoma"), seed=0, deck=_deck(G4_KNOCKER, G4_DEFENDER, upcard, "QC"),
                     dealer=1)
    for name in ("PASS", "PASS", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    assert (G.str_to_action("KNOCK(QC)") in state.legal_actions()) == knockable


# ---------------------------------------------------------------------------------------
# Fixed legal-action scenarios: the re-discard ban on knocks, the 50th card, big gin


def test_knock_with_the_card_just_taken_is_illegal():
    """The non-dealer takes the upcard KD that completes nothing: discarding or knocking with
    it is banned that turn, every other knock stays legal."""
    hand = "AC 2C 3C 4D 5D 6D 7H 8H 9H TS"
    state = GinState(GinConfig(), seed=0, deck=_deck(hand, "2S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    state.apply(G.TAKE_DISCARD)
    legal = state.legal_actions()
    kd = C.parse_card("KD")
    assert G.DISCARD + kd not in legal and G.KNOCK + kd not in legal
    assert G.KNOCK + C.parse_card("TS") in legal
    allowed = GinState(GinConfig(allow_rediscard_taken_card=True), seed=0,
                       deck=_deck(hand, "2S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    allowed.apply(G.TAKE_DISCARD)
    assert G.KNOCK + kd in allowed.legal_actions()


def last_chance_state(hand: str, pile: str, **options) -> GinState:
    """A LAST_CHANCE decision of seat 1 with ``hand`` and a discard pile of several cards
    (its top last), the stock down to two cards."""
    others = [c for c in range(C.NUM_CARDS) if c not in C.parse(hand) + C.parse(pile)]
    data = {"hands": [C.format(others[:10]).split(), hand.split()], "discard_pile": pile.split(),
            "stock": C.format(others[10:12]).split(), "phase": "LAST_CHANCE", "current_player": 1, "dealer": 1,
            "upcard": pile.split()[0], "turns": 10, "options": {"stock_end_rule": "opponent_last_chance", **options}}
    data["knock_card"] = None
    rest = others[12:]
    data["discard_pile"] = C.format(rest).split() + pile.split()  # every card in one place
    data["upcard"] = C.format_card(rest[0])
    return GinState.from_dict(data)


def test_fifty_card_chance_takes_the_top_of_a_long_pile():
    """The 50th card is the top of the pile, not its bottom: with 9S on top the 10-card hand
    knocks (deadwood 1 after AS), with any card under it only."""
    state = last_chance_state("2H 3H 4H 9C 9D JD QD KD AS 5S", "7C 9S")
    legal = state.legal_actions()
    assert G.str_to_action("KNOCK(5S)") in legal
    assert G.str_to_action("KNOCK(9S)") not in legal  # the 50th card itself is not the knock card
    assert G.BIG_GIN not in legal
    state.apply(G.str_to_action("KNOCK(5S)"))
    assert C.parse_card("9S") in state.hand_results[-1].hands[1]


def test_fifty_card_big_gin_is_judged_on_eleven_cards():
    """Big gin at the 50th card needs all 11 cards (hand + top) melded: not offered to a
    10-card gin hand whose 11th card is loose, offered when the top card completes a hand."""
    loose = last_chance_state("2H 3H 4H 5H 9C 9D 9H JD QD KD", "TD 7C", big_gin_bonus=31)
    assert G.BIG_GIN not in loose.legal_actions()
    # with 7C, knocking 2H or 5H leaves 7; 7C itself may not be the knock card
    assert loose.legal_actions() == sorted([G.PASS, G.str_to_action("KNOCK(2H)"), G.str_to_action("KNOCK(5H)")])
    completes = last_chance_state("2H 3H 4H 5H 9C 9D 9H 9S JD QD", "7C KD", big_gin_bonus=31)
    assert G.BIG_GIN in completes.legal_actions()
    completes.apply(G.BIG_GIN)
    result = completes.hand_results[-1]
    assert result.kind == "big_gin" and result.winner == 1 and C.parse_card("KD") in result.hands[1]


# ---------------------------------------------------------------------------------------
# Match scoring edge tables


def match_after(results: list[tuple[int, int]], **options) -> tuple[G.StandardMatch, GinConfig]:
    """A match score after hands won, each ``(winner, points)``."""
    cfg = GinConfig(episode="match", **options)
    match = G.StandardMatch()
    for winner, points in results:
        hand_points = [0, 0]
        hand_points[winner] = points
        match.record(cfg, G.HandResult("knock", winner=winner, points=hand_points, knocker=winner))
    return match, cfg


@pytest.mark.parametrize("results, options, winner, final", [
    # exactly the target ends the match
    ([(0, 60), (0, 40)], {}, 0, [2 * 100 + 100 + 50, 0]),
    ([(0, 60), (0, 39)], {}, -1, [99, 0]),
    # a 0-point win is a hand won: no shutout
    ([(1, 0), (0, 100)], {}, 0, [100 + 100 + 25, 0 + 25]),
    ([(1, 0), (0, 100)], {"shutout_rule": "double_game_bonus"}, 0, [100 + 100 + 25, 25]),
    # shutouts under every rule
    ([(0, 70), (0, 30)], {}, 0, [2 * 100 + 100 + 50, 0]),
    ([(0, 70), (0, 30)], {"shutout_rule": "double_game_bonus"}, 0, [100 + 200 + 50, 0]),
    ([(0, 70), (0, 30)], {"shutout_rule": "none"}, 0, [100 + 100 + 50, 0]),
    # boxes toward the target: credited at once, not again at the end, not doubled by a shutout
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True}, 0, [2 * 75 + 50 + 100, 0]),
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True, "shutout_rule": "none"}, 0, [125 + 100, 0]),
    ([(0, 70), (0, 5)], {"boxes_count_toward_target": True, "shutout_rule": "double_game_bonus"}, 0,
     [125 + 200, 0]),
    ([(1, 10), (0, 70), (0, 5)], {"boxes_count_toward_target": True}, 0, [125 + 100, 35]),
    ([(0, 40), (0, 9)], {"boxes_count_toward_target": True}, -1, [99, 0]),
    # other bonuses
    ([(1, 30), (0, 120)], {"game_bonus": 7, "box_bonus": 3}, 0, [120 + 7 + 3, 30 + 3]),
    ([(1, 30), (1, 80)], {"target_score": 110}, 1, [0, 2 * 110 + 100 + 50]),
])
def test_match_scoring_table(results, options, winner, final):
    match, cfg = match_after(results, **options)
    assert match.winner == winner and match.is_over() == (winner >= 0)
    assert match.final_scores(cfg) == final
    assert match.scores(cfg) == final and match.standings(cfg) == final


def test_match_winner_through_the_engine_at_exactly_the_target():
    """A G3 knock worth 12 brings 88 to exactly 100: the match ends with the bonuses."""
    state = GinState(GinConfig(episode="match"), seed=0,
                     deck=_deck("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C"),
                     dealer=1)
    data = state.to_dict()
    data["match"] = {"totals": [88, 0], "wins": [3, 0], "winner": -1}
    state = GinState.from_dict(data)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
        state.apply(G.str_to_action(name))
    assert state.is_terminal() and state.match.winner == 0
    assert state.scores() == [2 * 100 + 100 + 4 * 25, 0]


# ---------------------------------------------------------------------------------------
# Determinizations


def check_determinization(state: GinState, rng: random.Random) -> None:
    """For each player: the sample looks the same to that player (same view), keeps every card
    whose place it knows, and redeals only the hidden cards among their places."""
    for p in (0, 1):
        det = state.sample_determinization(p, rng)
        opp = 1 - p
        assert det.view(p) == state.view(p)
        assert det.hands[p] == state.hands[p] and det.pile == state.pile
        assert det.discarded == state.discarded and det.known == state.known
        assert det.known[opp] & det.hands[opp] == state.known[opp]
        if state.knocker == opp:
            assert det.hands[opp] == state.hands[opp]
        if state.knocker == p:
            assert det.knock_card == state.knock_card
        hidden = state.hands[opp] & ~state.known[opp] if state.knocker != opp else 0
        pool = hidden | C.to_mask(state.stock) | (1 << state.knock_card if state.knocker == opp and
                                                  state.knock_card >= 0 else 0)
        det_pool = (det.hands[opp] & ~state.known[opp] if state.knocker != opp else 0) | C.to_mask(det.stock)
        det_pool |= 1 << det.knock_card if state.knocker == opp and det.knock_card >= 0 else 0
        assert det_pool == pool and len(det.stock) == len(state.stock)
        assert det.hands[opp].bit_count() == state.hands[opp].bit_count()


def test_determinization_keeps_cards_the_opponent_took():
    """The non-dealer takes the upcard KD, then the dealer takes the discarded 2S: each one's
    taken card stays in that hand in every sample, and hidden cards do move."""
    state = GinState(GinConfig(), seed=0,
                     deck=_deck("AC 2C 3C 4D 5D 6D 7H 8H 9H 2S", "3S 3D 5C 7C 8C JC QH KH KS QS", "KD"), dealer=1)
    for name in ("TAKE_DISCARD", "DISCARD(2S)", "TAKE_DISCARD"):
        state.apply(G.str_to_action(name))
    rng = random.Random(0)
    moved = 0
    for _ in range(30):
        for p in (0, 1):
            det = state.sample_determinization(p, rng)
            opp = 1 - p
            taken = C.parse_card("KD" if opp == 0 else "2S")
            assert det.hands[opp] >> taken & 1
            moved += det.hands[opp] != state.hands[opp]
        check_determinization(state, rng)
    assert moved > 50


# ---------------------------------------------------------------------------------------
# Rewards on a reset from a finished state


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_win_loss_paid_on_reset_from_a_finished_state(episode):
    state = GinState(GinConfig(episode=episode), seed=0,
                     deck=_deck("2H 3H 4H 9S 9C 9D JD QD KD AS", "5H 6H 9H TC TH TD AD AC 2C 7S", "8S", "8C"),
                     dealer=1)
    if episode == "match":
        data = state.to_dict()
        data["match"] = {"totals": [95, 0], "wins": [3, 0], "winner": -1}
        state = GinState.from_dict(data)
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(8C)"):
        state.apply(G.str_to_action(name))
    assert state.is_terminal()
    env = gin_rummy_v0.env(reward="win_loss", episode=episode)
    env.reset(options={"state": state.to_dict()})
    paid = {}
    for agent in env.agent_iter():
        _, reward, terminated, truncated, _ = env.last()
        assert terminated and not truncated
        paid[agent] = reward
        env.step(None)
    assert paid == {"player_0": 1.0, "player_1": -1.0}


# ---------------------------------------------------------------------------------------
# The knock card


@pytest.mark.parametrize("options", [{}, {"knocker_arrangement": "explicit", "layoff_mode": "explicit"}])
def test_knocking_a_card_taken_earlier_forgets_it(options):
    """The non-dealer takes the upcard KD (known to the dealer), and two turns later knocks
    with it: face down, it is no longer a known card of that hand."""
    state = GinState(GinConfig(**options), seed=0, dealer=1,
                     deck=_deck("AC 2C 3C 4D 5D 6D 7H 8H 9H TS", "2S 3D 5C 7C 8C JC QH KH KS QS", "KD", "JD 9S"))
    for name in ("TAKE_DISCARD", "DISCARD(TS)", "DRAW_STOCK", "DISCARD(JD)", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    assert state.known[0] == 1 << C.parse_card("KD") and state.view(1).opponent_known == (C.parse_card("KD"),)
    state.apply(G.str_to_action("KNOCK(KD)"))
    assert state.knock_card == C.parse_card("KD")
    assert state.known[0] == 0 and state.view(1).opponent_known == ()


def test_a_knock_with_the_ace_of_clubs_reads_back():
    """Card 0 as the knock card: the state dict keeps it (a falsy id is still a card)."""
    state = GinState(GinConfig(), seed=0, dealer=1,
                     deck=_deck("2C 3C 4C 4D 5D 6D 7H 8H 9H TS", "2S 3D 5C 7C 8C JC QH KH KS QS", "KD", "AC"))
    for name in ("PASS", "PASS", "DRAW_STOCK", "KNOCK(AC)"):
        state.apply(G.str_to_action(name))
    data = state.to_dict()
    assert data["knock_card"] == "AC"
    assert GinState.from_dict(data).to_dict() == data


@pytest.mark.parametrize("action", ["DISCARD(AC)", "DISCARD(KS)", "KNOCK(KS)"])
def test_the_first_and_last_card_ids_are_played(action):
    """AC and KS (ids 0 and 51) at the edges of the DISCARD and KNOCK action ranges."""
    state = GinState(GinConfig(), seed=0, dealer=1,
                     deck=_deck("AC 2D 3D 4D 5H 6H 7H 8C 8D 8S", "2S 3S 5C 7C 9C JC QH KH TS QS", "KD", "KS"))
    for name in ("PASS", "PASS", "DRAW_STOCK"):
        state.apply(G.str_to_action(name))
    card = C.parse_card(action[-3:-1])
    state.apply(G.str_to_action(action))
    assert not state.hands[0] >> card & 1
    if action.startswith("DISCARD"):
        assert state.pile[-1] == card and state.phase == Phase.DRAW and state.current_player == 1
    else:
        assert state.knock_card == card and state.hand_results[-1].knocker == 0


@pytest.mark.parametrize("cap", [1, 3])
def test_the_turn_cap_counts_each_plain_discard_once(cap):
    """gin_rummy.md: the hand ends after max_turns_per_hand turns, a turn being one plain
    discard: not before the cap-th discard, at it."""
    state = GinState(GinConfig(max_turns_per_hand=cap), seed=5)
    state.apply(G.PASS)
    state.apply(G.PASS)
    for turn in range(1, cap + 1):
        assert not state.is_terminal() and state.turns == turn - 1
        state.apply(G.DRAW_STOCK)
        state.apply(next(a for a in state.legal_actions() if G.DISCARD <= a < G.KNOCK))
    assert state.is_terminal() and state.turns == cap and state.hand_results[-1].kind == "turn_cap"
    assert state.truncated
