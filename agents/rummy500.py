"""Rule-based agents for Rummy 500 (``rummy500``).

Both agents read only the ``Rummy500View`` and plan their table play with a small search of
their own over bitmasks, using the engine's card values: the new melds their natural cards
form (sets, and sequences of 3 to 5 positions: a longer one is a union of those), the
layoffs of what is left onto the table's melds, then their jokers. A plan is played through
the micro-actions one group at a time (pick its cards, commit it) and made again after each
commit. The mask has the last word: a group it refuses is dropped (cancelled if begun) and
the agent stops melding for the turn, following the mask, which has no dead ends, only to
place a deep take's target. The rules options the planning depends on (the joker value, the
decks, whether going out needs a discard) are read from the view's ``rules``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from rummy_envs import cards as C
from rummy_envs.games import rummy500 as R
from rummy_envs.games.rummy500 import Phase, Rummy500View

JOKER = R.JOKER
JOKER_VALUE = R.Rummy500Config.joker_value  # the default; the agents read ``view.rules.joker_value``
NUM_RANKS = 13
ROW = (1 << NUM_RANKS) - 1
HIGH_ACE = 13  # sequence positions run 0..13, the ace at 0 (low) or 13 (high)
POINTS = R.RANK_POINTS  # a card's value in the hand (and on the table, but for a low ace)
COLUMNS = tuple(sum(1 << (s * NUM_RANKS + r) for s in range(4)) for r in range(NUM_RANKS))

Commit = tuple[tuple[int, ...], tuple[int, ...], int]
"""A table action: the natural cards to pick, the identities to declare jokers as, the commit action."""


def card_value(card: int, joker_value: int = JOKER_VALUE) -> int:
    """Points of a card in the hand: aces 15, faces 10, others their rank, a joker ``joker_value``."""
    return joker_value if card == JOKER else POINTS[card % NUM_RANKS]


bits = C.from_mask  # card ids of a bitmask, lowest first


def _position_points(pos: int) -> int:
    return 1 if pos == 0 else POINTS[pos % NUM_RANKS]


@lru_cache(maxsize=None)
def _runs_in_row(row: int) -> tuple[tuple[int, int], ...]:
    """``(ranks, table points)`` of every sequence of 3 to 5 positions inside a suit's 13-bit
    rank row (the ace low or high)."""
    positions = row | (row & 1) << HIGH_ACE
    out = []
    for lo in range(HIGH_ACE - 1):
        for length in (3, 4, 5):
            span = ((1 << length) - 1) << lo
            if lo + length - 1 > HIGH_ACE or positions & span != span:
                break
            ranks = (span & ROW) | span >> HIGH_ACE
            out.append((ranks, sum(_position_points(p) for p in range(lo, lo + length))))
    return tuple(out)


def new_melds(avail: int) -> list[tuple[int, int]]:
    """``(cards, table points)`` of every set and every sequence of 3 to 5 positions in the
    natural cards ``avail``, the most points first."""
    out: list[tuple[int, int]] = []
    a, b, c, d = avail & ROW, avail >> 13 & ROW, avail >> 26 & ROW, avail >> 39 & ROW
    three = (a & b & (c | d)) | (c & d & (a | b))
    for rank in bits(three):
        column = avail & COLUMNS[rank]
        value = POINTS[rank]
        if column.bit_count() == 4:
            out.append((column, 4 * value))
            out += [(column ^ 1 << card, 3 * value) for card in bits(column)]
        else:
            out.append((column, 3 * value))
    for suit, row in enumerate((a, b, c, d)):
        if row.bit_count() >= 3:
            out += [(ranks << 13 * suit, value) for ranks, value in _runs_in_row(row)]
    out.sort(key=lambda m: -m[1])
    return out


def whole_melds(cards: int) -> int:
    """The cards of ``cards`` that belong to some set or 3-card sequence within ``cards``."""
    a, b, c, d = cards & ROW, cards >> 13 & ROW, cards >> 26 & ROW, cards >> 39 & ROW
    three = (a & b & (c | d)) | (c & d & (a | b))
    out = 0
    for suit, row in enumerate((a, b, c, d)):
        positions = row | (row & 1) << HIGH_ACE
        starts = positions & positions >> 1 & positions >> 2
        span = starts | starts << 1 | starts << 2
        out |= ((row & three) | (span & ROW) | span >> HIGH_ACE) << 13 * suit
    return out


def _meld_partners() -> tuple[tuple[tuple[int, int], ...], ...]:
    """For each card, ``(other card, completions)``: the cards that make a 3-card meld with it
    and that other card (a set's missing suits, a sequence's missing position)."""
    table: list[dict[int, int]] = [{} for _ in range(52)]

    def add(x: int, y: int, z: int) -> None:
        table[x][y] = table[x].get(y, 0) | 1 << z

    for rank in range(NUM_RANKS):
        column = [s * NUM_RANKS + rank for s in range(4)]
        for x in column:
            for y in column:
                for z in column:
                    if len({x, y, z}) == 3:
                        add(x, y, z)
    for suit in range(4):
        for lo in range(HIGH_ACE - 1):
            trio = [suit * NUM_RANKS + p % NUM_RANKS for p in range(lo, lo + 3)]
            for i in range(3):
                x, y, z = trio[i], trio[(i + 1) % 3], trio[(i + 2) % 3]
                add(x, y, z)
                add(x, z, y)
    return tuple(tuple(sorted(d.items())) for d in table)


PARTNERS = _meld_partners()
RELATED = tuple(sum(1 << other for other, _ in partners) for partners in PARTNERS)
"""RELATED[c]: the cards that share a 3-card meld with c."""
PAIRS = tuple(tuple((other, z) for other, completions in partners for z in bits(completions) if other < z)
              for partners in PARTNERS)
"""PAIRS[c]: each pair of cards that makes a 3-card meld with c, once."""


# ----------------------------------------------------------------------------------------
# The table and the hand as the planner reads them


class Table:
    """The view's melds: sequences ``(slot, suit, lo, hi)`` over positions 0..13, 3-card sets
    ``(slot, rank, cards)`` (a full set takes nothing), and the identities already on the table
    as often as there are decks, which no card may join (``blocked``); with the rules the
    planning reads from ``view.rules``: the decks, the joker value and ``keep_one`` (going out
    needs a final discard, ``must_discard_to_go_out``)."""

    __slots__ = ("seqs", "sets", "blocked", "once", "decks", "joker_value", "keep_one")

    def __init__(self, view: Rummy500View) -> None:
        self.seqs: list[tuple[int, int, int, int]] = []
        self.sets: list[tuple[int, int, int]] = []
        once = twice = 0
        for slot, meld in enumerate(view.melds):
            cards = meld.cards
            mask = 0
            for card in cards:
                bit = 1 << card
                twice |= once & bit
                once |= bit
                mask |= bit
            if meld.is_set:
                if len(cards) == 3:
                    self.sets.append((slot, cards[0] % NUM_RANKS, mask))
            else:
                lo = cards[0] % NUM_RANKS
                self.seqs.append((slot, cards[0] // NUM_RANKS, lo, lo + len(cards) - 1))
        rules = view.rules
        self.decks = rules.decks
        self.joker_value = rules.joker_value
        self.keep_one = rules.must_discard_to_go_out
        self.once = once
        self.blocked = twice if self.decks == 2 else once


def closure(rest: int, table: Table) -> tuple[int, int, list[tuple[int, int, bool]]]:
    """Lay off what ``rest`` can onto the table's melds, chaining along sequences.

    Returns ``(points, laid cards, steps)``, each step ``(card, slot, at the high end)``; a
    card that fits a sequence and a set goes on the sequence, which may then take more."""
    laid = points = 0
    steps: list[tuple[int, int, bool]] = []
    blocked = table.blocked
    for slot, suit, lo, hi in table.seqs:
        base = suit * NUM_RANKS
        while lo > 0 and not (lo == 1 and hi == HIGH_ACE):
            card = base + (lo - 1) % NUM_RANKS
            bit = 1 << card
            if not rest & bit or blocked & bit:
                break
            rest ^= bit
            laid |= bit
            lo -= 1
            points += _position_points(lo)
            steps.append((card, slot, False))
        while hi < HIGH_ACE and not (hi == HIGH_ACE - 1 and lo == 0):
            card = base + (hi + 1) % NUM_RANKS
            bit = 1 << card
            if not rest & bit or blocked & bit:
                break
            rest ^= bit
            laid |= bit
            hi += 1
            points += _position_points(hi)
            steps.append((card, slot, True))
    for slot, rank, cards in table.sets:
        missing = COLUMNS[rank] & ~cards & rest & ~blocked
        if missing:
            card = missing.bit_length() - 1
            rest ^= 1 << card
            laid |= 1 << card
            points += POINTS[rank]
            steps.append((card, slot, False))
    return points, laid, steps


class Plan:
    """One way to play the table this turn: the commits in order, what stays in the hand
    (natural cards, second copies, jokers) and the plan's score."""

    __slots__ = ("commits", "rest", "twice", "jokers", "score")

    def __init__(self, commits: list[Commit], rest: int, twice: int, jokers: int, score: float) -> None:
        self.commits, self.rest, self.twice, self.jokers, self.score = commits, rest, twice, jokers, score


Scorer = Callable[[int, int, int, int], float]
"""``score(points placed, natural cards left, second copies left, jokers left)``."""


def _layoff_action(slot: int, high: bool) -> int:
    return (R.LAY_OFF_HIGH if high else R.LAY_OFF) + slot


def plan_table(once: int, twice: int, jokers: int, table: Table, target: int | None, banned: int | None,
               keep_one: bool, score: Scorer, max_leaves: int = 400) -> Plan | None:
    """The best-scoring plan for the hand ``once``/``twice``/``jokers`` (None if none is valid).

    A plan is valid when it places the target (if any) and leaves a card that may be
    discarded, or nothing at all unless ``keep_one``. The search tries every choice of
    non-overlapping new melds (up to ``max_leaves``), each followed by every layoff that
    fits; jokers are then placed greedily: completing the best pair left, else onto the table."""
    avail = once & ~table.blocked
    cands = new_melds(avail)
    natural_target = target if target is not None and target != JOKER else None
    best: list = [None]
    leaves = 0

    def leaf(left: int, points: int, chosen: tuple[int, ...]) -> None:
        lay_points, laid, steps = closure(left, table)
        placed = (avail & ~left) | laid
        rest = once & ~placed
        if natural_target is not None and not placed >> natural_target & 1 and not jokers:
            return
        if not _can_end(rest, twice, jokers, banned, keep_one):
            return
        value = score(points + lay_points, rest, twice, jokers)
        if best[0] is None or (value, points + lay_points) > best[0][:2]:  # ties: place more
            best[0] = (value, points + lay_points, chosen, steps, rest)

    def walk(start: int, left: int, points: int, chosen: tuple[int, ...]) -> None:
        nonlocal leaves
        leaves += 1
        leaf(left, points, chosen)
        for i in range(start, len(cands)):
            if leaves >= max_leaves:
                return
            meld, value = cands[i]
            if meld & left == meld:
                walk(i + 1, left ^ meld, points + value, chosen + (meld,))

    walk(0, avail, 0, ())
    if best[0] is None:
        return None
    _, points, chosen, steps, rest = best[0]
    commits: list[Commit] = [(tuple(bits(m)), (), R.MELD_NEW) for m in chosen]
    for card, slot, high in steps:  # consecutive cards on one end go as one group
        if len(commits) > len(chosen) and commits[-1][2] == _layoff_action(slot, high):
            commits[-1] = (commits[-1][0] + (card,), (), commits[-1][2])
        else:
            commits.append(((card,), (), _layoff_action(slot, high)))
    placed_target = natural_target is None or not rest >> natural_target & 1
    if jokers:
        held = jokers
        rest, jokers, points, placed_target = _place_jokers(rest, jokers, table, once & ~rest, steps, points,
                                                            commits, natural_target, placed_target)
        if target == JOKER:
            placed_target = jokers < held
        if not _can_end(rest, twice, jokers, banned, keep_one):
            return None
    if target is not None:
        if not placed_target:
            return None
        _target_first(commits, target)
    return Plan(commits, rest, twice, jokers, score(points, rest, twice, jokers))


def _can_end(rest: int, twice: int, jokers: int, banned: int | None, keep_one: bool) -> bool:
    """Can a turn leaving these cards end: a card other than the banned one to discard, or
    no card at all when going out by a table action is allowed."""
    if not rest and not twice and not jokers:
        return not keep_one
    if banned is None:
        return True
    if banned == JOKER:
        return bool(rest or twice)
    return bool((rest | twice) & ~(1 << banned) or jokers)


def _target_first(commits: list[Commit], target: int) -> None:
    """Move the commit that places the target to the front (a deep take's target must go first)."""
    for i, (naturals, declared, action) in enumerate(commits):
        if (target in naturals) if target != JOKER else declared:
            if action != R.MELD_NEW:  # a layoff: only the cards up to the target, from the meld's end
                cut = naturals.index(target) + 1 if target != JOKER else len(naturals)
                head = (naturals[:cut], declared, action)
                if cut < len(naturals):
                    commits[i] = (naturals[cut:], (), action)
                else:
                    del commits[i]
                commits.insert(0, head)
            else:
                commits.insert(0, commits.pop(i))
            return


def _place_jokers(rest: int, jokers: int, table: Table, placed: int, steps: list[tuple[int, int, bool]], points: int,
                  commits: list[Commit], target: int | None, placed_target: bool) -> tuple[int, int, int, bool]:
    """Place the jokers greedily after the natural plan: each completes the best pair of cards
    left into a new meld (the target's pair first), else goes onto a table meld's end or a
    3-set, pulling the natural cards that then fit; two jokers make a meld with the best card
    left. Returns the cards and jokers left, the points and whether the target is placed."""
    used = table.once | placed if table.decks == 1 else table.blocked | (table.once & placed)
    ends = _ends_after(table, steps)
    while jokers:
        best: tuple[int, int, int, int] | None = None  # (value, x, y, declared)
        for x in bits(rest):
            for y, completions in PARTNERS[x]:
                if y <= x or not rest >> y & 1:
                    continue
                free = completions & ~used & ~rest
                if free:
                    value = card_value(x) + card_value(y) + (100 if target in (x, y) else 0)
                    if best is None or value > best[0]:
                        best = (value, x, y, free.bit_length() - 1)
        if best is not None:
            _, x, y, z = best
            rest &= ~(1 << x | 1 << y)
            used |= 1 << x | 1 << y | 1 << z
            jokers -= 1
            points += card_value(x) + card_value(y) + table.joker_value
            commits.append(((x, y), (z,), R.MELD_NEW))
            placed_target = placed_target or target in (x, y)
            continue
        spot = _joker_layoff(ends, used | rest)
        if spot is not None:
            slot, high, z = spot
            chain = _chain(ends, slot, high, rest, used)
            rest &= ~C.to_mask(chain)
            used |= 1 << z | C.to_mask(chain)
            jokers -= 1
            points += table.joker_value + sum(POINTS[c % NUM_RANKS] for c in chain)
            commits.append((tuple(chain), (z,), _layoff_action(slot, high)))
            placed_target = placed_target or (target is not None and target in chain)
            continue
        if jokers >= 2 and rest:
            x = max(bits(rest), key=lambda c: (card_value(c), c))
            pair = _two_jokers(x, used | rest)
            if pair is not None:
                rest &= ~(1 << x)
                used |= 1 << x | 1 << pair[0] | 1 << pair[1]
                jokers -= 2
                points += card_value(x) + 2 * table.joker_value
                commits.append(((x,), pair, R.MELD_NEW))
                placed_target = placed_target or target == x
                continue
        break
    return rest, jokers, points, placed_target


def _ends_after(table: Table, steps: list[tuple[int, int, bool]]) -> dict[int, list[int]]:
    """Each table meld's extent after the natural layoffs: sequences ``[suit, lo, hi]``,
    3-sets ``[-1, rank, cards]``, by slot."""
    ends: dict[int, list[int]] = {slot: [suit, lo, hi] for slot, suit, lo, hi in table.seqs}
    ends.update({slot: [-1, rank, cards] for slot, rank, cards in table.sets})
    for card, slot, high in steps:
        meld = ends[slot]
        if meld[0] < 0:
            del ends[slot]  # the set is full
        elif high:
            meld[2] += 1
        else:
            meld[1] -= 1
    return ends


def _joker_layoff(ends: dict[int, list[int]], used: int) -> tuple[int, bool, int] | None:
    """A table spot for a joker: ``(slot, high end, identity)``, sequence ends first."""
    for slot, meld in ends.items():
        suit, lo, hi = meld
        if suit < 0:
            continue
        base = suit * NUM_RANKS
        if hi < HIGH_ACE and not (hi == HIGH_ACE - 1 and lo == 0):
            z = base + (hi + 1) % NUM_RANKS
            if not used >> z & 1:
                return slot, True, z
        if lo > 0 and not (lo == 1 and hi == HIGH_ACE):
            z = base + (lo - 1) % NUM_RANKS
            if not used >> z & 1:
                return slot, False, z
    for slot, meld in ends.items():
        if meld[0] < 0:
            missing = COLUMNS[meld[1]] & ~meld[2] & ~used
            if missing:
                return slot, False, missing.bit_length() - 1
    return None


def _chain(ends: dict[int, list[int]], slot: int, high: bool, rest: int, used: int) -> list[int]:
    """Place a joker at one end of a meld, then the natural cards of ``rest`` that continue
    that end; updates the meld's extent and returns those natural cards."""
    meld = ends[slot]
    if meld[0] < 0:
        del ends[slot]
        return []
    suit = meld[0]
    chain: list[int] = []
    if high:
        meld[2] += 1
        while meld[2] < HIGH_ACE and not (meld[2] == HIGH_ACE - 1 and meld[1] == 0):
            card = suit * NUM_RANKS + (meld[2] + 1) % NUM_RANKS
            if not rest >> card & 1 or used >> card & 1:
                break
            chain.append(card)
            meld[2] += 1
    else:
        meld[1] -= 1
        while meld[1] > 0 and not (meld[1] == 1 and meld[2] == HIGH_ACE):
            card = suit * NUM_RANKS + (meld[1] - 1) % NUM_RANKS
            if not rest >> card & 1 or used >> card & 1:
                break
            chain.append(card)
            meld[1] -= 1
    return chain


def _two_jokers(card: int, used: int) -> tuple[int, int] | None:
    """Two identities that make a meld with ``card`` (for two jokers), if free."""
    for y, completions in PARTNERS[card]:
        free = completions & ~used
        if not used >> y & 1 and free:
            return y, free.bit_length() - 1
    return None


# ----------------------------------------------------------------------------------------
# Shared play


class Hand:
    """A hand as a multiset: natural cards at least once, second copies, jokers."""

    __slots__ = ("once", "twice", "jokers")

    def __init__(self, cards: tuple[int, ...] | list[int]) -> None:
        self.once = self.twice = self.jokers = 0
        for card in cards:
            self.add(card)

    def add(self, card: int) -> None:
        if card == JOKER:
            self.jokers += 1
        elif self.once >> card & 1:
            self.twice |= 1 << card
        else:
            self.once |= 1 << card

    def plus(self, cards: tuple[int, ...] | list[int]) -> Hand:
        new = Hand(())
        new.once, new.twice, new.jokers = self.once, self.twice, self.jokers
        for card in cards:
            new.add(card)
        return new


def _discards(view: Rummy500View) -> list[int]:
    return [a - R.DISCARD for a in view.legal_actions if a >= R.DISCARD]


def _follow_mask(view: Rummy500View) -> int:
    """A legal table action that heads for a commit: commit when one is legal, else pick the
    target (a joker for a joker target), else the most valuable card offered. The mask has no
    dead ends, so this always ends in a commit."""
    legal = view.legal_actions
    commits = [a for a in legal if a == R.MELD_NEW or R.LAY_OFF <= a < R.DISCARD]
    if commits:
        return commits[0]
    picks = [a for a in legal if R.PICK <= a < R.LAY_OFF]
    target = view.target
    for a in picks:
        if (a - R.PICK == target) if target != JOKER else a >= R.PICK_JOKER:
            return a
    if picks:
        return max(picks, key=lambda a: (a < R.PICK_JOKER, card_value((a - R.PICK) % 52), a))
    return R.CANCEL if R.CANCEL in legal else legal[0]


class _Rummy500Agent(ABC):
    """What both agents share: playing a plan through the micro-actions, with the mask as the
    final word. Subclasses choose the draw, score plans and choose the discard."""

    name = "rummy500"

    def __init__(self, game: str = "rummy500", seed: int | None = None) -> None:
        self.game = game
        self.reset()

    def reset(self) -> None:
        """Forget this turn's refused groups and plan."""
        self.refused = False  # the mask refused a planned group this turn
        self._cache: tuple[tuple, Plan | None] | None = None

    # -- to override -----------------------------------------------------------------------
    @abstractmethod
    def draw_action(self, view: Rummy500View) -> int:
        """DRAW_STOCK, or TAKE_DISCARD of the top card or a deeper one."""

    @abstractmethod
    def score(self, view: Rummy500View) -> Scorer:
        """How this agent values a plan of table play."""

    @abstractmethod
    def discard(self, view: Rummy500View) -> int:
        """The DISCARD action that ends the turn."""

    # -- the turn --------------------------------------------------------------------------
    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Rummy500View) -> int:
        if view.phase == Phase.DRAW:
            self.refused = False
            return self.draw_action(view)
        return self._table_action(view)

    def plan(self, view: Rummy500View) -> Plan | None:
        """This turn's plan from the view (cached while the hand and table stay the same)."""
        key = (view.hand, view.melds, view.target, view.banned, view.discard_pile, view.stock_size, view.known,
               view.hand_sizes, view.rules)
        if self._cache is None or self._cache[0] != key:
            hand = Hand(view.hand)
            table = Table(view)
            self._cache = (key, plan_table(hand.once, hand.twice, hand.jokers, table, view.target, view.banned,
                                           table.keep_one, self.score(view)))
        return self._cache[1]

    def _table_action(self, view: Rummy500View) -> int:
        legal = view.legal_actions
        plan = None if self.refused else self.plan(view)
        pending, declared = set(view.pending), set(view.pending_jokers)
        if plan is None or not plan.commits:
            if pending or view.target is not None:
                return _follow_mask(view) if plan is None else R.CANCEL
            return self.discard(view)
        naturals, jokers, action = plan.commits[0]
        if pending <= set(naturals) and declared <= set(jokers):
            for card in naturals:
                if card not in pending:
                    if R.PICK + card in legal:
                        return R.PICK + card
                    return self._refuse(view)
            for identity in jokers:
                if identity not in declared:
                    if R.PICK_JOKER + identity in legal:
                        return R.PICK_JOKER + identity
                    return self._refuse(view)
            if action in legal:
                return action
        return self._refuse(view)

    def _refuse(self, view: Rummy500View) -> int:
        """The mask refused the planned group: stop planning this turn, cancel what was
        picked, then go on."""
        self.refused = True
        if view.pending or view.pending_jokers:
            return R.CANCEL
        return self._table_action(view)


def _highest_card(cards: list[int]) -> int:
    """The most valuable card, a joker last (the highest id on ties)."""
    return max(cards, key=lambda c: (c != JOKER, card_value(c), c))


class Rummy500NoviceAgent(_Rummy500Agent):
    """The obvious greedy player: it melds and lays off everything it can as soon as it can
    (the plan placing the most points, so it goes out whenever it can), throws its highest
    card, and takes the top discard only when that card can go on the table at once, never
    deeper. Deterministic; ``seed`` is accepted for the registry."""

    name = "novice"

    def score(self, view: Rummy500View) -> Scorer:
        return lambda points, rest, twice, jokers: points

    def draw_action(self, view: Rummy500View) -> int:
        legal = view.legal_actions
        pile = view.discard_pile
        top = R.TAKE_DISCARD + len(pile) - 1
        if pile and top in legal:
            hand = Hand(view.hand).plus([pile[-1]])
            table = Table(view)
            # Placed at once: the best plan with the card as a target places it.
            taken = plan_table(hand.once, hand.twice, hand.jokers, table, pile[-1], pile[-1], table.keep_one,
                               self.score(view))
            if taken is not None:
                return top
        for action in (R.DRAW_STOCK, R.END_HAND):
            if action in legal:
                return action
        return legal[0]

    def discard(self, view: Rummy500View) -> int:
        return R.DISCARD + _highest_card(_discards(view))


# ----------------------------------------------------------------------------------------
# The heuristic player


class Reading:
    """What the heuristic reads off one view: how likely each card is still to reach me (to
    complete a near-meld), how likely the next player holds it, and the risk that a card kept
    is caught in the hand when the hand ends.

    A card is worth ``value * (p * (1 + risk) - risk)`` kept: placed later with chance ``p``
    (from the live cards that would meld it), otherwise caught in the hand with chance ``risk``."""

    def __init__(self, view: Rummy500View, table: Table, agent: Rummy500HeuristicAgent) -> None:
        self.agent = agent
        self.table = table
        n = view.num_players
        decks = table.decks
        seen = [0] * 53
        for card in view.hand:
            seen[card] += 1
        pile = 0
        for card in view.discard_pile:
            seen[card] += 1
            if card != JOKER:
                pile |= 1 << card
        for meld in view.melds:
            jokers = meld.jokers
            for card in meld.cards:
                seen[JOKER if card in jokers else card] += 1
        for seat in range(1, n):
            for card in view.known[seat]:
                seen[card] += 1
        self.unseen = [max(0, decks - seen[z]) for z in range(52)] + [max(0, view.rules.total_jokers - seen[JOKER])]
        total = self.total_unseen = sum(self.unseen)
        turns_left = view.stock_size / n  # my draws left if nobody goes out
        lateness = min(1.0, turns_left / agent.horizon)
        # The chance that the hand ends before my next turn: an opponent with few cards goes out.
        smallest = min(view.hand_sizes[1:])
        soon = agent.threat[smallest - 1] if smallest <= len(agent.threat) else 0.0
        risk = self.risk = max(1.0 / (1.0 + turns_left / agent.horizon), soon)
        q = min(0.9, turns_left / total) if total else 0.0  # chance I draw a given unseen card
        pile_odds = agent.pile_odds * lateness
        blocked = table.blocked
        self.out_odds = [0.0 if blocked >> z & 1 else max(1.0 - (1.0 - q) ** self.unseen[z],
                                                            pile_odds if pile >> z & 1 else 0.0) for z in range(52)]
        self.single_odds = agent.single_odds * lateness
        self.loose = self.single_odds * (1.0 + risk) - risk  # worth per point of a loose card
        self.joker_worth = table.joker_value * (agent.joker_odds * (1.0 + risk) - risk)
        hold_odds = 1.0 - max(soon, agent.hold_risk)
        self.held = [POINTS[c % NUM_RANKS] * (hold_odds * (1.0 + risk) - risk) for c in range(52)]  # in a whole meld
        # Going out leaves every other hand's points caught there.
        self.out_bonus = agent.out_bonus + agent.out_per_card * sum(view.hand_sizes[1:]) / (n - 1)
        # Cards two positions from a sequence's end: the card between makes them a layoff.
        self.gap_outs: dict[int, int] = {}
        for _slot, suit, lo, hi in table.seqs:
            base = suit * NUM_RANKS
            if lo >= 2 and not (lo == 2 and hi == HIGH_ACE):
                self._gap(base + (lo - 2) % NUM_RANKS, base + (lo - 1) % NUM_RANKS)
            if hi <= HIGH_ACE - 2 and not (hi == HIGH_ACE - 2 and lo == 0):
                self._gap(base + (hi + 2) % NUM_RANKS, base + (hi + 1) % NUM_RANKS)
        # The next player: its known cards for sure, each hidden card as likely as any unseen one.
        hidden = view.hand_sizes[1] - len(view.known[1])
        share = hidden / total if total else 0.0
        self.next_holds = [min(1.0, self.unseen[z] * share) for z in range(52)]
        for card in view.known[1]:
            if card != JOKER:
                self.next_holds[card] = 1.0
        self._worth: dict[tuple[int, int], float] = {}
        self._danger: dict[int, float] = {}

    def _gap(self, card: int, between: int) -> None:
        self.gap_outs[card] = self.gap_outs.get(card, 0) | 1 << between

    def worth(self, card: int, rest: int) -> float:
        """Expected worth of keeping the natural ``card`` (in ``rest``, which holds no whole
        meld): placed later with the chance that some live card melds it with a card of
        ``rest`` or bridges it to a table sequence, else caught in the hand with chance
        ``risk``. Memoised: it depends on ``rest`` only through the cards related to ``card``."""
        key = (card, rest & RELATED[card])
        found = self._worth.get(key)
        if found is None:
            p = self._odds(card, key[1])
            found = self._worth[key] = POINTS[card % NUM_RANKS] * (p * (1.0 + self.risk) - self.risk)
        return found

    def _odds(self, card: int, rest: int) -> float:
        outs = self.gap_outs.get(card, 0)
        for other, completions in PARTNERS[card]:
            if rest >> other & 1:
                outs |= completions
        if not outs:
            return self.single_odds
        miss = 1.0
        odds = self.out_odds
        for z in bits(outs):
            miss *= 1.0 - odds[z]
        return 1.0 - miss

    def keep_value(self, rest: int, twice: int, jokers: int) -> float:
        """Expected worth of the cards kept: those of whole melds placed later unless the hand
        ends first, the others judged against the rest of the hand without those melds (whose
        cards are spoken for); second copies count as loose cards."""
        total = 0.0
        whole = whole_melds(rest)
        context = rest & ~whole
        for card in bits(rest):
            total += self.held[card] if whole >> card & 1 else self.worth(card, context)
        if twice:
            total += sum(POINTS[c % NUM_RANKS] for c in bits(twice)) * self.loose
        return total + jokers * self.joker_worth

    def after_discard(self, rest: int, twice: int, jokers: int, banned: int | None) -> float:
        """Worth of the cards kept after the best discard, each card judged by its own worth
        and danger, or the going-out bonus when the hand empties (by a table action or by
        discarding the last card)."""
        if not rest and not twice and not jokers:
            return self.out_bonus
        total = 0.0
        best = -1e9
        whole = whole_melds(rest)
        context = rest & ~whole
        for card in bits(rest):
            w = self.held[card] if whole >> card & 1 else self.worth(card, context)
            total += w
            if card != banned:
                best = max(best, -w - self.danger(card))
        for card in bits(twice):
            w = POINTS[card % NUM_RANKS] * self.loose
            total += w
            if card != banned:
                best = max(best, -w - self.danger(card))
        if jokers:
            total += jokers * self.joker_worth
            if banned != JOKER:
                best = max(best, -self.joker_worth - self.danger(JOKER))
        if rest.bit_count() + twice.bit_count() + jokers == 1:
            return self.out_bonus
        return total + best

    def danger(self, card: int) -> float:
        """Expected points the next player gains from my discard ``card``: it takes the card
        when it holds two that meld with it, or one that bridges it to a table sequence, or
        when the card lays off on the table."""
        found = self._danger.get(card)
        if found is not None:
            return found
        agent = self.agent
        if card == JOKER:
            found = agent.danger_weight * self.table.joker_value
        else:
            holds = self.next_holds
            miss = 0.0 if closure(1 << card, self.table)[1] else 1.0
            for other, z in PAIRS[card]:
                miss *= 1.0 - holds[other] * holds[z]
            for between in bits(self.gap_outs.get(card, 0)):
                miss *= 1.0 - holds[between]
            found = agent.danger_weight * (1.0 - miss) * (POINTS[card % NUM_RANKS] + agent.feed_bonus)
        self._danger[card] = found
        return found


class Rummy500HeuristicAgent(_Rummy500Agent):
    """A stronger rule-based player that weighs every card it would keep.

    A kept card is worth its value times ``p (1 + risk) - risk``: ``p`` the chance it is placed
    later (the live cards that would meld it with a card of the hand or bridge it to a table
    sequence; cards in the pile count, as a deep take can fetch them) and ``risk`` the chance
    the hand ends with it, growing as the stock shrinks or an opponent's hand empties. Table
    play: the plan placing the most points plus the worth of the cards kept. Draw: the stock
    (its expected outcome over the unseen cards), the top discard or any deep take, whichever
    leaves the best turn: the points it lets me place minus what the cards taken that stay in
    the hand risk. Discard: the card whose loss costs least, less the points it would hand the
    next player (known pick-ups, table layoffs). It goes out whenever it can. Deterministic;
    ``seed`` is accepted for the registry.
    """

    name = "heuristic"

    horizon = 4.0  # my draws left at which a kept card's risk is one half
    threat = (1.0, 0.7, 0.5, 0.3)  # least risk when an opponent holds 1, 2, 3, 4 cards
    hold_risk = 0.1  # least chance that a meld kept in the hand is caught there
    joker_odds = 0.9  # chance a joker kept is placed later
    pile_odds = 0.5  # chance to fetch a card from the pile when it would meld
    single_odds = 0.1  # chance a loose card is placed later (early in the hand)
    danger_weight = 1.0  # how much the next player's gain counts against a discard
    feed_bonus = 5.0  # what a discard the next player can use is worth to it beyond its value
    out_bonus = 10.0  # worth of going out beyond the cards placed
    out_per_card = 4.0  # and per card in an opponent's hand (on average)
    take_margin = 1.0  # a take must beat the stock by this much

    def score(self, view: Rummy500View) -> Scorer:
        reading = self.reading(view)
        banned = view.banned

        def score(points: int, rest: int, twice: int, jokers: int) -> float:
            return points + reading.after_discard(rest, twice, jokers, banned)

        return score

    def reading(self, view: Rummy500View) -> Reading:
        return Reading(view, Table(view), self)

    def _turn_value(self, hand: Hand, table: Table, reading: Reading, target: int | None, banned: int | None) -> float:
        def score(points: int, rest: int, twice: int, jokers: int) -> float:
            return points + reading.after_discard(rest, twice, jokers, banned)

        plan = plan_table(hand.once, hand.twice, hand.jokers, table, target, banned, table.keep_one, score)
        return -1e9 if plan is None else plan.score

    def draw_action(self, view: Rummy500View) -> int:
        legal = view.legal_actions
        table = Table(view)
        reading = Reading(view, table, self)
        hand = Hand(view.hand)
        pile = view.discard_pile
        options: list[tuple[float, int]] = []
        if R.DRAW_STOCK in legal:
            options.append((self._stock_value(hand, table, reading) + self.take_margin, R.DRAW_STOCK))
        if R.END_HAND in legal:
            joker_value = view.rules.joker_value
            options.append((-float(sum(card_value(c, joker_value) for c in view.hand)) + self.take_margin, R.END_HAND))
        top = len(pile) - 1
        for action in legal:
            if R.TAKE_DISCARD <= action < R.PICK:
                i = action - R.TAKE_DISCARD
                taken = hand.plus(pile[i:])
                target, banned = (None, pile[i]) if i == top else (pile[i], None)
                options.append((self._turn_value(taken, table, reading, target, banned), action))
        if not options:
            return legal[0]
        return max(options, key=lambda o: (o[0], -o[1]))[1]

    def _stock_value(self, hand: Hand, table: Table, reading: Reading) -> float:
        """Expected turn value after drawing from the stock: the cards that would meld or lay
        off are tried one by one; with any other card the table play stays the same and the
        turn ends by discarding that card, or by keeping it and discarding the hand's best."""
        unseen = reading.unseen
        total = reading.total_unseen
        useful = 0
        rest = hand.once
        for x in bits(rest):
            for y, completions in PARTNERS[x]:
                if y > x and rest >> y & 1:
                    useful |= completions
        for _slot, suit, lo, hi in table.seqs:
            base = suit * NUM_RANKS
            if lo > 0 and not (lo == 1 and hi == HIGH_ACE):
                useful |= 1 << (base + (lo - 1) % NUM_RANKS)
            if hi < HIGH_ACE and not (hi == HIGH_ACE - 1 and lo == 0):
                useful |= 1 << (base + (hi + 1) % NUM_RANKS)
        for _slot, rank, cards in table.sets:
            useful |= COLUMNS[rank] & ~cards
        useful &= ~table.blocked
        plan = plan_table(hand.once, hand.twice, hand.jokers, table, None, None, table.keep_one,
                          lambda p, r, t, j: p + reading.keep_value(r, t, j))
        if plan is None:
            return -1e9
        still = plan.score
        swap = reading.after_discard(plan.rest, plan.twice, plan.jokers, None) - reading.keep_value(
            plan.rest, plan.twice, plan.jokers)  # discarding the hand's best card instead
        value = 0.0
        for z in range(52):
            if unseen[z]:
                if useful >> z & 1:
                    value += unseen[z] * self._turn_value(hand.plus([z]), table, reading, None, None)
                else:
                    value += unseen[z] * (still + max(-reading.danger(z), POINTS[z % NUM_RANKS] * reading.loose + swap))
        if unseen[JOKER]:
            value += unseen[JOKER] * self._turn_value(hand.plus([JOKER]), table, reading, None, None)
        return value / total if total else still

    def discard(self, view: Rummy500View) -> int:
        choices = _discards(view)
        reading = self.reading(view)
        hand = Hand(view.hand)

        def loss(card: int) -> tuple[float, int, int]:
            left = hand.plus([])
            if card == JOKER:
                left.jokers -= 1
            elif left.twice >> card & 1:
                left.twice ^= 1 << card
            else:
                left.once ^= 1 << card
            kept = reading.keep_value(left.once, left.twice, left.jokers)
            return (-kept + reading.danger(card), -card_value(card, view.rules.joker_value), -card)

        return R.DISCARD + min(choices, key=loss)


def meld_card_points(meld: R.MeldView, index: int, joker_value: int) -> int:
    """Points of the card at ``index`` of a table meld: a joker its value, an ace at the low
    end of a sequence 1, any other card its rank's points."""
    identity = meld.cards[index]
    if identity in meld.jokers:
        return joker_value
    rank = identity % NUM_RANKS
    low_ace = rank == 0 and not meld.is_set and index == 0 and len(meld.cards) > 1 and meld.cards[1] % NUM_RANKS == 1
    return 1 if low_ace else POINTS[rank]


def hand_score_now(view: Rummy500View) -> int:
    """The seat's score for the hand if it ended now: its credited table points less the
    points left in its hand (and, on its turn, in the group it is showing)."""
    value = view.rules.joker_value
    table = sum(meld_card_points(meld, i, value) for meld in view.melds for i, seat in enumerate(meld.credit)
                if seat == 0)
    held = sum(card_value(card, value) for card in view.hand)
    if view.is_my_turn:
        held += sum(card_value(card, value) for card in view.pending) + value * len(view.pending_jokers)
    return table - held


def leaf_value(state: R.Rummy500State) -> list[float]:
    """Each seat's hand score if the hand ended now (``hand_score_now``), centred: the
    search's estimate of a rollout cut short."""
    scores = [hand_score_now(state.player_view(p)) for p in range(state.config.num_players)]
    mean = sum(scores) / len(scores)
    return [s - mean for s in scores]
