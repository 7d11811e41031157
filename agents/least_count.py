"""Rule-based agents for Least Count (``least_count``).

Both agents read only the ``LeastCountView`` (the rules options are in it: every player
knows the rules) and the engine's public card values. The discard patterns are the
engine's: a ``Shape`` knows a hand's ranks and suits and answers, in a few bit operations,
the most points one legal discard of the hand sheds, also with one card more (what a pick
would bring).

``LeastCountNoviceAgent`` is the obvious greedy player. ``LeastCountHeuristicAgent`` plans
each discard with the pick that follows it, weighs what the hand can shed next turn, tracks
what each opponent shed and picked up to estimate their counts, and declares when the
expected points of declaring, against the false-declaration penalty, are good enough.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games import least_count as L
from rummy_envs.games.least_count import DiscardRules, LeastCountConfig, LeastCountView, Phase

JOKER = C.JOKER
NUM_RANKS = C.NUM_RANKS
JOKER_RANK = L.JOKER_RANK
MAX_VALUE = 10  # the most a card is worth
COUNTS = L.MAX_HAND * MAX_VALUE + 1  # count distributions cover 0..the largest count
NOVICE_DECLARE_COUNT = 10  # the mainstream declare_max_count, the novice's own limit when the game sets none


# ----------------------------------------------------------------------------------------
# What one discard can shed


class Context:
    """The rules as the set search needs them: card values (the cut card's rank is worth 0),
    each rank's value, and every sequence window of an allowed length as ``(rank mask,
    value)``, also listed per rank for the windows a given card can join."""

    __slots__ = ("rules", "values", "rank_values", "set_sizes", "windows", "windows_of", "shortest")

    def __init__(self, rules: DiscardRules, cut_card: int | None) -> None:
        self.rules = rules
        self.values = L.card_values(cut_card)
        self.rank_values = tuple(self.values[r] for r in range(NUM_RANKS)) + (self.values[JOKER],)
        self.set_sizes = rules.set_sizes
        lengths = rules.sequence_lengths
        self.windows = tuple((ranks, sum(self.rank_values[r] for r in range(NUM_RANKS) if ranks >> r & 1))
                             for lo, hi, ranks in M.SEQUENCE_INTERVALS if hi - lo + 1 in lengths)
        self.windows_of = tuple(tuple(w for w in self.windows if w[0] >> r & 1) for r in range(NUM_RANKS))
        self.shortest = lengths[0]


@lru_cache(maxsize=256)
def context(rules: DiscardRules, cut_card: int | None) -> Context:
    """The ``Context`` of these rules and cut card, built once."""
    return Context(rules, cut_card)


def context_of(view: LeastCountView) -> Context:
    """The ``Context`` of the game and round ``view`` shows."""
    return context(view.rules.discard_rules, view.cut_card)


class Shape:
    """A hand's ranks and suits: its count and ``best``, the most points one legal discard
    of it sheds (a single, a group of one rank, two pairs, a sequence or a flush, as the
    rules allow); ``best_with(card)`` is the same for the hand plus one card."""

    __slots__ = ("ctx", "count", "counts", "row", "suit_rows", "pairs", "best")

    def __init__(self, cards: tuple[int, ...] | list[int], ctx: Context) -> None:
        self.ctx = ctx
        values = ctx.values
        counts = [0] * (NUM_RANKS + 1)
        suit_rows = [0, 0, 0, 0]
        row = count = high = 0
        for card in cards:
            value = values[card]
            count += value
            if value > high:
                high = value
            if card == JOKER:
                counts[JOKER_RANK] += 1
                continue
            rank = card % NUM_RANKS
            counts[rank] += 1
            row |= 1 << rank
            suit_rows[card // NUM_RANKS] |= 1 << rank
        self.count, self.counts, self.row, self.suit_rows = count, counts, row, suit_rows
        rank_values = ctx.rank_values
        pairs = sorted(((2 * rank_values[r], r) for r in range(NUM_RANKS + 1) if counts[r] >= 2), reverse=True)
        self.pairs = pairs  # (points, rank) of each rank held at least twice, the most points first
        multi = -1  # the best discard of two or more cards, -1 if none
        for _, r in pairs:
            multi = max(multi, self._group(r, counts[r]))
        if len(pairs) >= 2 and ctx.rules.allow_two_different_pairs:
            multi = max(multi, pairs[0][0] + pairs[1][0])
        for rank_row in (suit_rows if ctx.rules.sequence_same_suit else (row,)):
            if rank_row.bit_count() >= ctx.shortest:
                for ranks, value in ctx.windows:
                    if rank_row & ranks == ranks and value > multi:
                        multi = value
        for suit_row in suit_rows:
            if suit_row.bit_count() >= L.FLUSH_SIZE:
                multi = max(multi, self._flush(suit_row))
        self.best = max(high, multi)

    def _group(self, rank: int, held: int) -> int:
        """The most points of a legal group of ``held`` cards of ``rank``."""
        size = max((s for s in self.ctx.set_sizes if s <= held), default=0)
        return size * self.ctx.rank_values[rank]

    def _flush(self, suit_row: int) -> int:
        """The 5 most valuable distinct cards of one suit's rank row."""
        rank_values = self.ctx.rank_values
        return sum(sorted((rank_values[r] for r in range(NUM_RANKS) if suit_row >> r & 1), reverse=True)[:L.FLUSH_SIZE])

    def set_with(self, card: int) -> int:
        """The most points of a legal discard of two or more cards that includes ``card``,
        from this hand plus ``card``; -1 if the card forms none."""
        ctx = self.ctx
        rank = JOKER_RANK if card == JOKER else card % NUM_RANKS
        held = self.counts[rank] + 1
        best = -1
        if held >= 2:
            best = self._group(rank, held)
            if ctx.rules.allow_two_different_pairs:
                other = next((value for value, r in self.pairs if r != rank), -1)
                if other >= 0:
                    best = max(best, 2 * ctx.rank_values[rank] + other)
        if card == JOKER:
            return best
        bit = 1 << rank
        suit = card // NUM_RANKS
        rank_row = (self.suit_rows[suit] if ctx.rules.sequence_same_suit else self.row) | bit
        if rank_row.bit_count() >= ctx.shortest:
            for ranks, value in ctx.windows_of[rank]:
                if rank_row & ranks == ranks and value > best:
                    best = value
        suit_row = self.suit_rows[suit] | bit
        if suit_row.bit_count() >= L.FLUSH_SIZE:
            best = max(best, self._flush_with(suit_row, rank))
        return best

    def _flush_with(self, suit_row: int, rank: int) -> int:
        """The most valuable flush of one suit's rank row that holds ``rank``."""
        rank_values = self.ctx.rank_values
        others = sorted((rank_values[r] for r in range(NUM_RANKS) if suit_row >> r & 1 and r != rank), reverse=True)
        return rank_values[rank] + sum(others[:L.FLUSH_SIZE - 1])

    def best_with(self, card: int) -> int:
        """``best`` of this hand plus ``card``."""
        return max(self.best, self.ctx.values[card], self.set_with(card))


# ----------------------------------------------------------------------------------------
# Reading the view


def discard_options(view: LeastCountView) -> list[tuple[int, tuple[int, ...]]]:
    """``(action, cards)`` of every legal discard."""
    hand = list(view.hand)
    return [(a, tuple(L.subset_cards(hand, a))) for a in view.legal_actions if L.DISCARD <= a < L.PICK_OPEN]


def pick_options(view: LeastCountView) -> tuple[list[int], bool]:
    """The open-set cards that may be picked, and whether the closed deck may."""
    legal = view.legal_actions
    return [a - L.PICK_OPEN for a in legal if L.PICK_OPEN <= a < L.PICK_CLOSED], L.PICK_CLOSED in legal


def unseen_cards(view: LeastCountView) -> Counter[int]:
    """Copies of each card id that ``view``'s player has not seen: not in its hand, the open
    set, its pending discard, the dead pile, the cut card or any card known in a hand."""
    unseen = Counter(view.rules.full_deck())
    seen = Counter(view.hand)
    seen.update(view.open_set)
    seen.update(view.pending_discard)
    seen.update(view.dead_pile)
    for known in view.known[1:]:
        seen.update(known)
    if view.cut_card is not None:
        seen[view.cut_card] += 1
    unseen.subtract(seen)
    return +unseen


def opponents(view: LeastCountView) -> list[int]:
    """Relative seats of the other players still in the match."""
    return [k for k in range(1, view.num_players) if not view.eliminated[k]]


# ----------------------------------------------------------------------------------------
# The agents


class _LeastCountAgent(ABC):
    """Phase dispatch shared by both agents: the start of a turn (declare or discard) and
    the pick."""

    name = "least_count"

    def __init__(self, game: str = L.GAME, seed: int | None = None) -> None:
        self.game = game
        self.reset()

    def reset(self) -> None:
        """Nothing to forget by default."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: LeastCountView) -> int:
        if view.phase == Phase.TURN_START:
            return self.turn_start(view)
        return self.pick(view)

    @abstractmethod
    def turn_start(self, view: LeastCountView) -> int:
        """DECLARE or a DISCARD."""

    @abstractmethod
    def pick(self, view: LeastCountView) -> int:
        """PICK_OPEN of a card of the open set, or PICK_CLOSED."""


class LeastCountNoviceAgent(_LeastCountAgent):
    """The obvious greedy player: it declares at the first chance its count is at most the
    game's ``declare_max_count`` (the mainstream 10 when the game sets none: declaring any
    higher is mostly a false declaration), otherwise sheds the legal discard worth the most
    points (more cards on ties), and picks an open card only when it forms a set with its
    hand (the most valuable set), else the closed deck. Deterministic; ``seed`` is accepted
    for the registry."""

    name = "novice"

    def turn_start(self, view: LeastCountView) -> int:
        limit = view.rules.declare_max_count
        if L.DECLARE in view.legal_actions and view.count <= (NOVICE_DECLARE_COUNT if limit is None else limit):
            return L.DECLARE
        values = context_of(view).values
        return max(discard_options(view), key=lambda o: (sum(values[c] for c in o[1]), len(o[1]), -o[0]))[0]

    def pick(self, view: LeastCountView) -> int:
        ctx = context_of(view)
        opens, closed = pick_options(view)
        shape = Shape(view.hand, ctx)
        forming = [(shape.set_with(c), -ctx.values[c], c) for c in opens]
        forming = [f for f in forming if f[0] >= 0]
        if forming:
            return L.PICK_OPEN + max(forming)[2]
        if closed:
            return L.PICK_CLOSED
        return L.PICK_OPEN + min(opens, key=lambda c: (ctx.values[c], c))


# ----------------------------------------------------------------------------------------
# The heuristic player


class Snapshot:
    """What the heuristic saw when it last passed the turn on: the seats that move before
    its next turn (relative, in order), their hand sizes and known cards then, whether each
    may declare at the start of its turn, where the dead pile will go on, and the size of
    the open set the first of them picks from."""

    __slots__ = ("round", "movers", "sizes", "known", "may_declare", "dead_len", "open_size")

    def __init__(self, round_number: int, movers: list[int], sizes: tuple[int, ...],
                 known: tuple[tuple[int, ...], ...], may_declare: tuple[bool, ...], dead_len: int,
                 open_size: int) -> None:
        self.round, self.movers, self.sizes, self.known = round_number, movers, sizes, known
        self.may_declare, self.dead_len, self.open_size = may_declare, dead_len, open_size

    @classmethod
    def round_start(cls, view: LeastCountView) -> Snapshot:
        """The deal of ``view``'s round: full hands, nothing known, the open card on the table."""
        n = view.num_players
        active = [k for k in range(n) if not view.eliminated[k]]
        first = next(k % n for k in range(view.dealer + 1, view.dealer + n + 1) if k % n in active)
        movers = [k for k in active if k >= first and k != 0] if first != 0 else []
        sizes = tuple(view.rules.hand_size if k in active else 0 for k in range(n))
        any_turn = view.rules.declare_timing == "start_of_any_turn"
        return cls(view.round_number, movers, sizes, ((),) * n, (any_turn,) * n, 0,
                   int(view.rules.initial_open_card))

    @classmethod
    def after_pick(cls, view: LeastCountView, action: int) -> Snapshot:
        """The end of my turn in ``view`` (my PICK), ``action`` being the pick."""
        any_turn = view.rules.declare_timing == "start_of_any_turn"
        picked_open = action != L.PICK_CLOSED
        return cls(view.round_number, opponents(view), view.hand_sizes, view.known,
                   tuple(any_turn or done for done in view.turn_done),
                   len(view.dead_pile) + len(view.open_set) - picked_open, len(view.pending_discard))


@dataclass(frozen=True)
class LastTurn:
    """What the heuristic knows of an opponent's last turn: its discard (None when it could
    not be told apart in the dead pile), the card it picked from the open set (None: the
    closed deck) and whether it could have declared instead."""

    discard: tuple[int, ...] | None
    picked: int | None
    passed: bool


class Reading:
    """What the heuristic reads off one view: the unseen cards and their values, and each
    opponent's count distribution (memoised)."""

    def __init__(self, view: LeastCountView, agent: LeastCountHeuristicAgent) -> None:
        self.view = view
        self.agent = agent
        self.ctx = ctx = context_of(view)
        self.unseen = unseen_cards(view)
        self.total = sum(self.unseen.values())
        values = np.zeros(MAX_VALUE + 1)
        for card, copies in self.unseen.items():
            values[ctx.values[card]] += copies
        self.unseen_values = values
        self.uniform = values / self.total if self.total else np.eye(MAX_VALUE + 1)[0]
        self._counts: dict[int, np.ndarray] = {}

    def count_distribution(self, seat: int) -> np.ndarray:
        """Probabilities of each count of the opponent at relative ``seat`` (index = count):
        a mixture of a player who sheds its highest cards and one who plays at random, by
        the odds its discards gave (``LeastCountHeuristicAgent.shedder_odds``)."""
        found = self._counts.get(seat)
        if found is None:
            view, agent = self.view, self.agent
            known = list(view.known[seat])
            hidden = view.hand_sizes[seat] - len(known)
            naive = self.uniform_count_distribution(seat)
            last = agent.last_turns.get(seat)
            if last is None or last.discard is None:
                found = naive
            else:
                odds = agent.shedder_odds(seat)
                shedder = self._shedder(known, hidden, last)
                found = odds * shedder + (1 - odds) * naive
            self._counts[seat] = found
        return found

    def uniform_count_distribution(self, seat: int) -> np.ndarray:
        """The count of the opponent at relative ``seat`` if its hidden cards were any unseen
        cards: its known cards plus as many values drawn from the unseen ones."""
        view, values = self.view, self.ctx.values
        known = view.known[seat]
        return _add_cards(_point(sum(values[c] for c in known)), self.uniform, view.hand_sizes[seat] - len(known))

    def _shedder(self, known: list[int], hidden: int, last: LastTurn) -> np.ndarray:
        """The count of a player who sheds its highest cards: the cards it kept at its last
        turn are mostly worth at most its single discard, the card it drew is any unseen
        card, and if it could have declared and did not its count was likely above
        ``assumed_declare_count``."""
        agent, values = self.agent, self.ctx.values
        picked_known = last.picked is not None and last.picked in known
        if picked_known:
            known.remove(last.picked)
        fresh = 0 if picked_known or not hidden else 1
        tilt = self.uniform
        if len(last.discard) == 1:
            weighted = self.unseen_values * np.where(np.arange(MAX_VALUE + 1) <= values[last.discard[0]], 1.0,
                                                     agent.kept_bias)
            if weighted.sum():
                tilt = weighted / weighted.sum()
        kept = _add_cards(_point(sum(values[c] for c in known)), tilt, hidden - fresh)
        if last.passed:  # its count at the start of that turn: kept + its discard
            low = agent.declare_level(self.view.rules) - sum(values[c] for c in last.discard)
            if low >= 0:
                kept[:low + 1] *= agent.passed_bias
                kept /= kept.sum()
        if picked_known:
            return _shift(kept, values[last.picked])
        return _add_cards(kept, self.uniform, fresh)

    def discard_likelihood(self, value: int, held: int) -> float:
        """How much likelier a single discard of ``value`` from ``held`` cards is for a player
        who sheds its highest card than for one who throws any card."""
        cdf = np.cumsum(self.uniform)
        below = cdf[value - 1] if value else 0.0
        rational = cdf[value] ** held - below ** held
        anyone = self.uniform[value]
        return rational / anyone if anyone > 0 else 1.0


class LeastCountHeuristicAgent(_LeastCountAgent):
    """A stronger rule-based player.

    - **Hand value.** A hand is worth its count minus ``shed_weight`` times the most points
      one legal discard of it sheds: the count is what it declares with or is caught with
      soon, the shed what the next turn takes off (so pairs, sequences and high cards that
      go together keep their worth). The weight shrinks with the chance that an opponent
      declares before its next turn (one that may declare, with a count of at most
      ``assumed_declare_count``).
    - **Discard and pick.** Each legal discard is judged with the best pick after it: an open
      card (known) or the closed deck (the expected hand value over the unseen cards).
    - **Reading the others.** At the start of each turn it attributes the discards and
      pick-ups since its last turn to the seats that made them (the open set is the last
      one's discard; the others' are cut out of the dead pile by their hand sizes and known
      pick-ups). An opponent's count is its known cards plus its hidden ones drawn from the
      unseen values, as a mixture of two players. One sheds its highest cards: what it kept
      is mostly worth at most its last single discard (``kept_bias`` for cards above), the
      card it just drew is any unseen card, and if it could have declared and did not its
      count then was likely above ``assumed_declare_count`` (``passed_bias`` below). The
      other plays at random. Each single discard moves the odds between them by how likely
      that value is as the highest of the hand it was thrown from.
    - **Declaring.** The expected margin of declaring is the chance of being strictly lowest
      (or tied, with ``tie_declaration_valid``) times the others' expected excess, minus the
      chance of a false declaration times its penalty (``false_declare_penalty``) and the
      expected shortfall; in a match a false declaration that would eliminate it costs
      ``elimination_cost`` more. It declares when that reaches ``declare_margin`` plus
      ``declare_share`` of the excess at stake.

    Deterministic; ``seed`` is accepted for the registry.
    """

    name = "heuristic"

    shed_weight = 1.0  # how much of the next turn's best shed counts in a hand's value
    declare_margin = 1.0  # the least expected margin at which it declares
    declare_share = 0.7  # plus this share of the others' expected excess (waiting while lowest pays too)
    kept_bias = 0.3  # relative odds that a shedder kept a card above its last single discard
    assumed_declare_count = 10  # the count at which others are taken to declare when they can
    passed_bias = 0.35  # relative odds of a count at or below it for a shedder who did not declare
    shedder_prior = 4.0  # prior odds that an opponent sheds its highest cards rather than plays at random
    evidence_cap = 10.0  # the most one discard moves those odds, either way
    elimination_cost = 40.0  # extra loss of a false declaration that eliminates it from a match

    def reset(self) -> None:
        """Forget the round's memory."""
        self.snapshot: Snapshot | None = None
        self.last_turns: dict[int, LastTurn] = {}  # relative seat -> its last turn
        self.evidence: dict[int, float] = {}  # relative seat -> likelihood ratio of its discards, shedder : random

    def declare_level(self, rules: LeastCountConfig) -> int:
        """The count at or below which others are taken to declare when they may."""
        limit = rules.declare_max_count
        return self.assumed_declare_count if limit is None else min(limit, self.assumed_declare_count)

    def shedder_odds(self, seat: int) -> float:
        """The chance that the opponent at ``seat`` sheds its highest cards."""
        odds = self.shedder_prior * self.evidence.get(seat, 1.0)
        return odds / (1.0 + odds)

    # -- memory ----------------------------------------------------------------------------
    def observe(self, view: LeastCountView, reading: Reading) -> None:
        """Attribute the discards and pick-ups since the last snapshot to the seats that made
        them: the dead pile grows by each open set less the card picked from it."""
        snap = self.snapshot
        if snap is None or snap.round != view.round_number:
            snap = Snapshot.round_start(view)
            self.last_turns, self.evidence = {}, {}
        self.snapshot = None
        dead = view.dead_pile
        pos, open_size = snap.dead_len, snap.open_size
        died: list[tuple[int, ...]] = []  # per mover, what of the open set died when it picked
        picks: list[int | None] = []  # per mover, the card it picked from the open set
        for k in snap.movers:
            gained = list((Counter(view.known[k]) - Counter(snap.known[k])).elements())
            picks.append(gained[0] if gained else None)
            size = open_size - bool(gained)
            died.append(tuple(dead[pos:pos + size]))
            pos += size
            open_size = snap.sizes[k] - view.hand_sizes[k] + 1
        attributed = pos == len(dead) and len(view.open_set) == open_size  # no reshuffle on the way
        cap = self.evidence_cap
        for i, k in enumerate(snap.movers):
            if i + 1 == len(snap.movers):
                discard: tuple[int, ...] | None = view.open_set
            elif attributed:  # the next mover picked from it; the rest died
                picked = picks[i + 1]
                discard = tuple(sorted(died[i + 1] + (() if picked is None else (picked,))))
            else:
                discard = None
            self.last_turns[k] = LastTurn(discard, picks[i], snap.may_declare[k])
            if discard is not None and len(discard) == 1 and snap.sizes[k] > 1:
                ratio = reading.discard_likelihood(reading.ctx.values[discard[0]], snap.sizes[k])
                self.evidence[k] = self.evidence.get(k, 1.0) * min(cap, max(1.0 / cap, ratio))

    # -- hands -----------------------------------------------------------------------------
    def hand_weight(self, reading: Reading) -> float:
        """``shed_weight``, less as it gets likelier that someone declares before my next turn."""
        view = reading.view
        calm = 1.0
        for seat in opponents(view):
            if view.turn_done[seat] or view.rules.declare_timing != "start_of_turn":
                calm *= reading.count_distribution(seat)[self.declare_level(view.rules) + 1:].sum()
        return self.shed_weight * calm

    def pick_values(self, kept: list[int], opens: list[int], closed: bool, reading: Reading,
                    weight: float) -> list[tuple[float, int]]:
        """``(hand value, action)`` of every pick after keeping ``kept``."""
        shape = Shape(kept, reading.ctx)
        values, base = reading.ctx.values, shape.count
        out = [(base + values[c] - weight * shape.best_with(c), L.PICK_OPEN + c) for c in opens]
        if closed:
            if reading.total:
                expected = sum(m * (values[x] - weight * shape.best_with(x))
                               for x, m in reading.unseen.items()) / reading.total
                out.append((base + expected, L.PICK_CLOSED))
            else:
                out.append((float(base + MAX_VALUE), L.PICK_CLOSED))
        return out

    def turn_start(self, view: LeastCountView) -> int:
        reading = Reading(view, self)
        self.observe(view, reading)
        if L.DECLARE in view.legal_actions and self.should_declare(reading):
            return L.DECLARE
        weight = self.hand_weight(reading)
        opens, closed = sorted(set(view.open_set)), view.stock_size > 0 or bool(view.dead_pile)
        hand = view.hand
        values = reading.ctx.values
        best: tuple[float, int, int] | None = None
        for action, cards in discard_options(view):
            subset = action - L.DISCARD + 1
            kept = [c for i, c in enumerate(hand) if not subset >> i & 1]
            value = min(self.pick_values(kept, opens, closed, reading, weight))[0]
            key = (value, -sum(values[c] for c in cards), action)
            if best is None or key < best:
                best = key
        assert best is not None
        return best[2]

    def pick(self, view: LeastCountView) -> int:
        reading = Reading(view, self)
        opens, closed = pick_options(view)
        action = min(self.pick_values(list(view.hand), opens, closed, reading, self.hand_weight(reading)))[1]
        self.snapshot = Snapshot.after_pick(view, action)
        return action

    # -- declaring -------------------------------------------------------------------------
    def declare_odds(self, reading: Reading) -> tuple[float, float, float]:
        """Declaring now: the chance it is valid, the others' mean excess over my count if
        so, and the expected shortfall ``(my count - lowest count)+``."""
        view = reading.view
        d = view.count
        seats = opponents(view)
        lowest_valid = d if view.rules.tie_declaration_valid else d + 1  # the least count keeping it valid
        p_valid = 1.0
        excess = 0.0
        all_above = np.ones(d)  # P(every opponent's count > t) for t = 0..d-1
        for seat in seats:
            dist = reading.count_distribution(seat)
            tail = dist[lowest_valid:].sum()
            p_valid *= tail
            if tail > 0:
                excess += (dist[lowest_valid:] * (np.arange(lowest_valid, dist.size) - d)).sum() / tail
            all_above *= 1.0 - np.cumsum(dist)[:d]
        return p_valid, excess / max(1, len(seats)), float((1.0 - all_above).sum())

    def declare_value(self, reading: Reading) -> tuple[float, float]:
        """The expected margin of declaring now (the others' mean excess if valid, minus the
        penalty and shortfall if false, and the elimination cost in a match), and that excess."""
        view = reading.view
        rules: LeastCountConfig = view.rules
        p_valid, excess, shortfall = self.declare_odds(reading)
        loss = (1.0 - p_valid) * rules.false_declare_penalty + shortfall
        eliminating = view.totals[0] + rules.false_declare_penalty + view.count > rules.elimination_score
        if rules.episode == "match" and eliminating:
            loss += (1.0 - p_valid) * self.elimination_cost
        return p_valid * excess - loss, excess

    def should_declare(self, reading: Reading) -> bool:
        """Declare when the expected margin reaches ``declare_margin`` plus ``declare_share``
        of the excess at stake: waiting while lowest pays too (others' false declarations,
        a lower count), so a small edge is not worth ending the round."""
        value, excess = self.declare_value(reading)
        return value >= self.declare_margin + self.declare_share * excess


def _point(count: int) -> np.ndarray:
    """The count distribution certain of ``count`` (index = count, up to ``COUNTS``)."""
    dist = np.zeros(COUNTS)
    dist[count] = 1.0
    return dist


def _shift(dist: np.ndarray, value: int) -> np.ndarray:
    """``dist`` plus one card known to be worth ``value``."""
    return np.concatenate((np.zeros(value), dist[:COUNTS - value]))


def _add_cards(dist: np.ndarray, card: np.ndarray, cards: int) -> np.ndarray:
    """``dist`` plus ``cards`` independent cards, each of value distribution ``card``."""
    for _ in range(cards):
        dist = np.convolve(dist, card)[:COUNTS]
    return dist
