"""Hand features a policy may read beside the env's observation.

A feature set is computed from a player's view (``player_view``: only what that player may
see) and appended to the observation vector, as extra named segments of the policy's
input layout. A small MLP learns the meld structure of a hand from 52 card bits only
slowly; handing it, say, the deadwood left by each possible discard lets a short training
run learn *when* and *what* to play rather than rediscovering arithmetic. Training
(``features:`` in a config) and the ``ppo:<path>`` agent use the same functions, and an
exported policy records its feature set, so they always agree. A game gets features by
adding a ``FeatureSet`` to ``FEATURE_SETS``. ``heuristic_move`` (every game) is the move the
game's heuristic agent would make; sets join with "+" (``gin_hand+heuristic_move``).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import rummy_envs
from agents import least_count as LC
from agents import rummy500 as R5
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import Segment, make_layout
from rummy_envs.games import least_count as L
from rummy_envs.games import rummy500 as R
from rummy_envs.games.gin_rummy import HAND_SIZE, GinView

N = C.NUM_CARDS
DEADWOOD_SCALE = 100.0  # no gin hand has 100 points of deadwood


@dataclass(frozen=True)
class FeatureSet:
    """Named segments ``(name, size, high, description)`` and the function filling them."""

    name: str
    games: tuple[str, ...]
    parts: tuple[tuple[str, int, float, str], ...]
    compute: Callable[[Any], np.ndarray]

    @property
    def size(self) -> int:
        return sum(size for _, size, _, _ in self.parts)

    def __reduce__(self) -> tuple[Callable[[str, str], FeatureSet], tuple[str, str]]:
        """Pickled by name (a policy sent to an env worker carries its feature set)."""
        return feature_set, (self.name, self.games[0])


def gin_hand_features(view: GinView) -> np.ndarray:
    """The ``gin_hand`` segments for one gin view (see ``GIN_HAND.parts``)."""
    out = np.zeros(2 * N + 2, np.float32)
    hand = C.to_mask(view.hand)
    if len(view.hand) > HAND_SIZE:
        for card in view.hand:
            out[card] = M.min_deadwood(hand & ~(1 << card)) / DEADWOOD_SCALE
        deadwood = float(out[list(view.hand)].min())
    else:
        deadwood = M.min_deadwood(hand) / DEADWOOD_SCALE
        top = view.top_discard
        if top is not None and not hand >> top & 1:
            with_top = hand | 1 << top
            after = min(M.min_deadwood(with_top & ~(1 << card)) for card in view.hand) / DEADWOOD_SCALE
            out[2 * N + 1] = max(0.0, deadwood - after)
    best = M.max_cover(hand)
    melded = next(covered for covered, _ in M.arrangements(hand) if M.gin_mask_value(covered) == best)
    out[N : 2 * N] = [melded >> card & 1 for card in range(N)]
    out[2 * N] = deadwood
    return out


GIN_HAND = FeatureSet(
    name="gin_hand",
    games=("gin_rummy", "hollywood_gin"),
    parts=(
        ("feature_discard_deadwood", N, 1.0, "holding 11 cards: the deadwood left by discarding each card / 100"),
        ("feature_melded", N, 1.0, "cards in a least-deadwood arrangement of my hand"),
        ("feature_deadwood", 1, 1.0, "my deadwood / 100 (11 cards: after the best discard)"),
        ("feature_take_gain", 1, 1.0, "holding 10 cards: how much taking the face-up card would lower my deadwood / 100"),
    ),
    compute=gin_hand_features,
)


COUNT_SCALE = 20.0  # Least Count features are counts / 20 (a 5-card hand counts at most 50)
NUM_DISCARDS = L.PICK_OPEN - L.DISCARD  # one DISCARD action per subset of the 7 hand positions
LC_IDS = L.NUM_IDS  # card ids with the printed joker
LC_COUNTS = L.MAX_HAND * LC.MAX_VALUE + 1  # a hand's count is 0..70
COUNT_HIGH = L.MAX_HAND * LC.MAX_VALUE / COUNT_SCALE  # the bound of a count feature
VALUE_HIGH = (L.MAX_HAND + 1) * LC.MAX_VALUE / COUNT_SCALE  # of a hand value after a pick (a count plus one card)


def _card_value_sums(card: np.ndarray, cards: int) -> list[np.ndarray]:
    """The distributions of the sum of 0, 1, ..., ``cards`` independent card values, each
    distributed as ``card`` (index = value)."""
    sums = [np.eye(LC_COUNTS)[0]]
    for _ in range(cards):
        sums.append(np.convolve(sums[-1], card)[:LC_COUNTS])
    return sums


def declare_odds(view: L.LeastCountView, unseen: Counter[int]) -> tuple[float, float, float]:
    """Declaring now with my count ``d``, if every opponent's unknown cards were drawn at
    random from the ``unseen`` ones: the chance the declaration is valid, the opponents' mean
    expected excess over ``d`` when it is, and the expected shortfall ``(d - lowest count)+``."""
    values = LC.context_of(view).values
    card = np.zeros(LC.MAX_VALUE + 1)
    for c, copies in unseen.items():
        card[values[c]] += copies
    card = card / card.sum() if card.sum() else np.eye(LC.MAX_VALUE + 1)[0]
    seats = LC.opponents(view)
    hidden = {seat: view.hand_sizes[seat] - len(view.known[seat]) for seat in seats}
    sums = _card_value_sums(card, max(hidden.values(), default=0))
    d = view.count
    lowest_valid = d if view.rules.tie_declaration_valid else d + 1
    p_valid, excess, all_above = 1.0, 0.0, np.ones(d)
    for seat in seats:
        known = sum(values[c] for c in view.known[seat])
        dist = np.concatenate((np.zeros(known), sums[hidden[seat]][:LC_COUNTS - known]))
        tail = dist[lowest_valid:].sum()
        p_valid *= tail
        if tail > 0:
            excess += (dist[lowest_valid:] * (np.arange(lowest_valid, LC_COUNTS) - d)).sum() / tail
        all_above *= 1.0 - np.cumsum(dist)[:d]
    return p_valid, excess / max(1, len(seats)), float((1.0 - all_above).sum())


def by_rank(unseen: Counter[int]) -> list[tuple[int, list[tuple[int, int]]]]:
    """The ``unseen`` cards (id -> copies) grouped by rank (the printed joker its own rank):
    ``(copies of the rank, [(card, copies), ...])`` for each rank with any."""
    ranks: dict[int, list[tuple[int, int]]] = {}
    for card, copies in unseen.items():
        ranks.setdefault(LC.JOKER_RANK if card == LC.JOKER else card % C.NUM_RANKS, []).append((card, copies))
    return [(sum(copies for _, copies in cards), cards) for cards in ranks.values()]


def closed_pick_value(shape: LC.Shape, unseen: list[tuple[int, list[tuple[int, int]]]], total: int) -> float:
    """The expected value of ``shape``'s hand after picking one of the ``unseen`` cards
    (``by_rank``, ``total`` copies in all) at random. The cards of one rank are judged once,
    unless their suit matters: sequences of one suit, or a suit of which the hand already
    holds a flush but one card."""
    ctx = shape.ctx
    if not total:
        return float(shape.count + LC.MAX_VALUE - shape.best)
    values, best_with = ctx.values, shape.best_with
    suited = [ctx.rules.sequence_same_suit or row.bit_count() >= L.FLUSH_SIZE - 1 for row in shape.suit_rows]
    gain = 0
    if any(suited):
        for _, cards in unseen:
            gain += sum(copies * (values[card] - best_with(card)) for card, copies in cards)
    else:
        for copies, cards in unseen:
            card = cards[0][0]
            gain += copies * (values[card] - best_with(card))
    return shape.count + gain / total


def least_count_features(view: L.LeastCountView) -> np.ndarray:
    """The ``least_count_hand`` segments for one Least Count view (see ``LEAST_COUNT_HAND.parts``).

    A hand's *value* is the heuristic agent's: its count minus the most points one legal
    discard of it sheds next turn. Discards are judged with the best pick after them: an
    open card, or the closed deck at the expected value over the unseen cards."""
    out = np.zeros(2 * NUM_DISCARDS + LC_IDS + 5, np.float32)
    ctx = LC.context_of(view)
    values = ctx.values
    unseen = LC.unseen_cards(view)
    ranks, total = by_rank(unseen), sum(unseen.values())

    def pick_values(kept: list[int], opens: list[int]) -> tuple[list[float], float]:
        """The hand value after picking each open card, and after the closed deck (expected)."""
        shape = LC.Shape(kept, ctx)
        return [shape.count + values[c] - shape.best_with(c) for c in opens], closed_pick_value(shape, ranks, total)

    if view.phase == L.Phase.TURN_START and view.is_my_turn:
        opens, closed = sorted(set(view.open_set)), view.stock_size > 0 or bool(view.dead_pile)
        for action, cards in LC.discard_options(view):
            subset = action - L.DISCARD + 1
            kept = [c for i, c in enumerate(view.hand) if not subset >> i & 1]
            after_open, after_closed = pick_values(kept, opens)
            after = after_open + [after_closed] if closed or not after_open else after_open
            out[action - L.DISCARD] = sum(values[c] for c in cards) / COUNT_SCALE
            out[NUM_DISCARDS + action - L.DISCARD] = min(after) / COUNT_SCALE
    elif view.phase == L.Phase.PICK and view.is_my_turn:
        opens, closed = LC.pick_options(view)
        after_open, after_closed = pick_values(list(view.hand), opens)
        for card, value in zip(opens, after_open):
            out[2 * NUM_DISCARDS + card] = value / COUNT_SCALE
        if closed:
            out[2 * NUM_DISCARDS + LC_IDS] = after_closed / COUNT_SCALE
    base = 2 * NUM_DISCARDS + LC_IDS + 1
    out[base] = view.count / COUNT_SCALE
    out[base + 1: base + 4] = declare_odds(view, unseen)
    out[base + 2: base + 4] /= COUNT_SCALE
    return out


LEAST_COUNT_HAND = FeatureSet(
    name="least_count_hand",
    games=("least_count",),
    parts=(
        ("feature_discard_shed", NUM_DISCARDS, COUNT_HIGH,
         "at my turn's start: the points each legal DISCARD sheds / 20"),
        ("feature_discard_value", NUM_DISCARDS, VALUE_HIGH,
         "at my turn's start: my hand's value after each legal DISCARD and the best pick after it / 20"),
        ("feature_pick_value", LC_IDS, VALUE_HIGH,
         "picking: my hand's value after picking each open card / 20"),
        ("feature_pick_closed", 1, VALUE_HIGH,
         "picking: my hand's expected value after picking from the closed deck (when it may) / 20"),
        ("feature_count", 1, COUNT_HIGH, "my count / 20"),
        ("feature_declare_valid", 1, 1.0, "the chance a declaration now is valid (others' unknown cards at random)"),
        ("feature_declare_excess", 1, COUNT_HIGH,
         "the others' mean expected count above mine if it is valid / 20"),
        ("feature_declare_shortfall", 1, COUNT_HIGH,
         "the expected (my count - lowest count)+ / 20"),
    ),
    compute=least_count_features,
)

R5_IDS = R5.JOKER + 1  # Rummy 500 card ids with the joker
R5_POINTS_SCALE = 100.0  # Rummy 500 point features are points / 100
R5_DANGER_HIGH = R5.JOKER_VALUE + R5.Rummy500HeuristicAgent.feed_bonus  # the most a discard can hand the next player
_R5_READER = R5.Rummy500HeuristicAgent()  # the heuristic's estimates, read by the features (it holds no game state)


def _r5_plan(hand: R5.Hand, table: R5.Table, target: int | None, banned: int | None) -> R5.Plan | None:
    """The plan placing the most points this turn (the novice's), None if no valid plan."""
    return R5.plan_table(hand.once, hand.twice, hand.jokers, table, target, banned, False,
                         lambda points, rest, twice, jokers: points)


def _r5_left(plan: R5.Plan | None, hand: R5.Hand, joker_value: int) -> float:
    """Points of the cards a plan leaves in the hand (the whole hand without a plan)."""
    rest, twice, jokers = (hand.once, hand.twice, hand.jokers) if plan is None else (plan.rest, plan.twice, plan.jokers)
    return float(sum(R5.card_value(c) for c in R5.bits(rest) + R5.bits(twice)) + jokers * joker_value)


def rummy500_features(view: R5.Rummy500View) -> np.ndarray:
    """The ``rummy500_hand`` segments for one Rummy 500 view (see ``RUMMY500_HAND.parts``).

    The plans are the novice's (the most points placed this turn); the worth of keeping a
    card and the danger of discarding it are the heuristic's estimates (``agents.rummy500.Reading``)."""
    out = np.zeros(5 * R5_IDS + 2 * R.MAX_PILE + 3, np.float32)
    hand = R5.Hand(view.hand)
    table = R5.Table(view)
    plan = _r5_plan(hand, table, view.target, view.banned)
    placed_now = 0.0 if plan is None else plan.score
    left_now = _r5_left(plan, hand, view.rules.joker_value)
    if plan is not None:
        out[R5.bits(hand.once & ~plan.rest)] = 1.0
        out[R5.JOKER] = float(plan.jokers < hand.jokers)
    whole = R5.whole_melds(hand.once)
    out[R5_IDS + np.array(R5.bits(whole), int)] = 1.0
    out[2 * R5_IDS + np.array(R5.bits(R5.closure(hand.once, table)[1]), int)] = 1.0
    reading = R5.Reading(view, table, _R5_READER)
    context = hand.once & ~whole
    for card in set(view.hand):
        if card == R5.JOKER:
            worth = reading.joker_worth
        else:
            worth = reading.held[card] if whole >> card & 1 else reading.worth(card, context)
        out[3 * R5_IDS + card] = (worth / R5.JOKER_VALUE + 1.0) / 2.0
        out[4 * R5_IDS + card] = min(1.0, reading.danger(card) / R5_DANGER_HIGH) if card != R5.JOKER else 1.0
    takes = 5 * R5_IDS  # the take segments follow the five card segments
    pile = view.discard_pile
    if view.phase == R.Phase.DRAW and view.is_my_turn:
        for action in view.legal_actions:
            if R.TAKE_DISCARD <= action < R.PICK:
                i = action - R.TAKE_DISCARD
                taken = hand.plus(pile[i:])
                target, banned = (None, pile[i]) if i == len(pile) - 1 else (pile[i], None)
                after = _r5_plan(taken, table, target, banned)
                gain = (0.0 if after is None else after.score) - placed_now
                burden = _r5_left(after, taken, view.rules.joker_value) - left_now
                out[takes + i] = min(1.0, max(0.0, gain / R5_POINTS_SCALE))
                out[takes + R.MAX_PILE + i] = min(1.0, max(0.0, burden / R5_POINTS_SCALE))
    tail = takes + 2 * R.MAX_PILE
    out[tail] = min(1.0, placed_now / R5_POINTS_SCALE)
    out[tail + 1] = min(1.0, left_now / R5_POINTS_SCALE)
    out[tail + 2] = reading.risk
    return out


RUMMY500_HAND = FeatureSet(
    name="rummy500_hand",
    games=("rummy500",),
    parts=(
        ("feature_plan", R5_IDS, 1.0, "cards of my hand the plan placing the most points this turn puts on the table "
                                      "(52: a joker)"),
        ("feature_in_meld", R5_IDS, 1.0, "natural cards of my hand in a set or sequence within my hand"),
        ("feature_lays_off", R5_IDS, 1.0, "natural cards of my hand that lay off on the table's melds"),
        ("feature_keep_worth", R5_IDS, 1.0, "the heuristic's worth of keeping each card of my hand, per point, "
                                            "from -1 to 1 mapped to 0..1"),
        ("feature_discard_danger", R5_IDS, 1.0, "the heuristic's estimate of what discarding each card of my hand "
                                                "hands the next player / 20"),
        ("feature_take_gain", R.MAX_PILE, 1.0, "drawing: for each legal TAKE_DISCARD position, the extra points the "
                                               "best plan then places / 100"),
        ("feature_take_burden", R.MAX_PILE, 1.0, "drawing: for each legal TAKE_DISCARD position, the extra points "
                                                 "left in my hand after that plan / 100"),
        ("feature_plan_points", 1, 1.0, "points the plan places this turn / 100"),
        ("feature_hand_points", 1, 1.0, "points left in my hand after that plan / 100"),
        ("feature_risk", 1, 1.0, "the heuristic's chance that the hand ends before a kept card is placed"),
    ),
    compute=rummy500_features,
)

FEATURE_SETS: dict[str, FeatureSet] = {GIN_HAND.name: GIN_HAND, LEAST_COUNT_HAND.name: LEAST_COUNT_HAND,
                                       RUMMY500_HAND.name: RUMMY500_HAND}
"""Feature sets by name (besides ``heuristic_move``, built per game)."""

HEURISTIC = "heuristic"
HEURISTIC_MOVE = "heuristic_move"
JOIN = "+"  # "gin_hand+heuristic_move": both sets' segments, in that order
_NO_OBSERVATION = np.zeros(0, np.float32)  # the heuristics read the view alone


def make_heuristic(game: str) -> Any:
    """The game's registered ``heuristic`` agent (imported late: the registry imports this module)."""
    from agents import make_agent

    return make_agent(HEURISTIC, game, 0)


@functools.cache
def heuristic_move(game: str) -> FeatureSet:
    """The move the game's ``heuristic`` agent would make in this view, one-hot over the
    actions (all zero when the seat has no move). A policy reading it can copy its teacher
    exactly and learn only where to differ from it: the heuristic's opponent model and
    lookahead are more than a feed-forward network clones from examples. The heuristic is
    asked afresh each time (reset first), so the feature depends on the view alone; one
    that remembers earlier turns (Least Count's reads the others' discards over the round)
    plays here without that memory."""
    teacher = make_heuristic(game)
    size = rummy_envs.ENVS[game].raw_env().num_actions

    def compute(view: Any) -> np.ndarray:
        out = np.zeros(size, np.float32)
        if view.legal_actions:
            teacher.reset()  # the move depends on this view alone, never on the calls before
            out[teacher.act(_NO_OBSERVATION, _NO_OBSERVATION, view)] = 1.0
        return out

    return FeatureSet(name=HEURISTIC_MOVE, games=(game,), compute=compute, parts=(
        ("feature_heuristic_move", size, 1.0, "the move the heuristic agent would make (one-hot)"),))


def joined(sets: list[FeatureSet]) -> FeatureSet:
    """One feature set of several: their segments one after another."""
    def compute(view: Any) -> np.ndarray:
        return np.concatenate([s.compute(view) for s in sets])

    games = tuple(g for g in sets[0].games if all(g in s.games for s in sets))
    return FeatureSet(name=JOIN.join(s.name for s in sets), games=games, compute=compute,
                      parts=tuple(part for s in sets for part in s.parts))


def feature_set(name: str, game: str) -> FeatureSet:
    """The named feature set (or sets joined by "+"), checked to be made for ``game``."""
    names = name.split(JOIN)
    sets = []
    for one in names:
        if one == HEURISTIC_MOVE and game in rummy_envs.ENVS:
            sets.append(heuristic_move(game))
            continue
        if one not in FEATURE_SETS:
            raise ValueError(f"unknown feature set {one!r}; known: {', '.join([*FEATURE_SETS, HEURISTIC_MOVE])} "
                             f"(several joined by {JOIN!r})")
        if game not in FEATURE_SETS[one].games:
            raise ValueError(f"feature set {one!r} is for {', '.join(FEATURE_SETS[one].games)}, not {game}")
        sets.append(FEATURE_SETS[one])
    if len(set(names)) < len(names):
        raise ValueError(f"feature set {name!r} names a set twice")
    return sets[0] if len(sets) == 1 else joined(sets)


def feature_sets_of(game: str) -> dict[str, FeatureSet]:
    """Every single feature set made for ``game``, by name."""
    return {name: fs for name, fs in FEATURE_SETS.items() if game in fs.games} | {HEURISTIC_MOVE: heuristic_move(game)}


def policy_layout(env_layout: dict[str, Segment], features: FeatureSet | None) -> dict[str, Segment]:
    """A policy's input layout: the env's segments, then the feature segments if any."""
    if features is None:
        return env_layout
    parts = [(s.name, s.size, s.high, s.description) for s in env_layout.values()]
    return make_layout(parts + list(features.parts))
