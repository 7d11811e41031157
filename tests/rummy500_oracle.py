"""An independent brute-force oracle of Rummy 500's legal actions, read from a state dict.

It shares no code with the engine but card parsing. A group of cards can only be a meld or
a layoff if its cards are all of one rank or all of one suit, so the oracle tries every
subset of the hand's cards of each rank and of each suit (with up to two jokers, each
declared as every card of that rank or suit), against every destination: a new meld, every
set and both ends of every sequence on the table. Meld validity is checked from scratch
(ranks, suits, positions with the ace at 0 or 13). The turn rules (the deep-take target,
the re-discard ban, no dead ends) are a plain recursive search: an action is legal when
the turn can still be finished after it by some sequence of table actions and a discard,
or by going out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import combinations
from typing import Any

from rummy_envs.cards import parse, parse_card

JOKER = 52
NUM_RANKS = 13
MAX_MELDS = 36
# Action offsets as documented in docs/rummy500.md#actions.
DRAW_STOCK, END_HAND, MELD_NEW, CANCEL = 0, 1, 2, 3
TAKE_DISCARD, PICK, PICK_JOKER, LAY_OFF = 4, 112, 164, 216
LAY_OFF_HIGH, DISCARD = LAY_OFF + MAX_MELDS, LAY_OFF + 2 * MAX_MELDS
MAX_JOKERS_IN_A_GROUP = 2


@dataclass(frozen=True)
class TableMeld:
    """A meld as positions: a set is ``("set", rank, suits)``, a sequence ``("seq", suit, positions)``."""

    kind: str
    key: int
    members: tuple[int, ...]  # suits of a set, positions 0..13 of a sequence


@dataclass(frozen=True)
class Turn:
    """What the turn rules need: the hand, the table, the target and the ban."""

    hand: tuple[tuple[int, int], ...]  # sorted (card, count)
    melds: tuple[TableMeld, ...]
    table_counts: tuple[tuple[int, int], ...]  # identity -> copies on the table
    target: int  # card that must be placed, -1 none
    banned: int  # card that may not be discarded, -1 none
    decks: int
    first_action: bool  # the target must be in the first commit
    must_discard: bool


def positions_of(identities: list[int]) -> list[list[int]] | None:
    """Possible sorted position lists of a sequence of these identities (one suit, distinct
    ranks, consecutive with the ace low at 0 or high at 13), or None."""
    suits = {c // NUM_RANKS for c in identities}
    ranks = sorted(c % NUM_RANKS for c in identities)
    if len(suits) != 1 or len(set(ranks)) != len(ranks):
        return None
    out = []
    for ace in (0, 13):
        pos = sorted(ace if r == 0 else r for r in ranks)
        if pos == list(range(pos[0], pos[0] + len(pos))):
            out.append(pos)
    return out


def new_meld_shapes(identities: list[int]) -> list[TableMeld]:
    if len(identities) < 3 or len(set(identities)) != len(identities):
        return []
    ranks = {c % NUM_RANKS for c in identities}
    if len(ranks) == 1 and len(identities) <= 4:
        return [TableMeld("set", ranks.pop(), tuple(sorted(c // NUM_RANKS for c in identities)))]
    found = positions_of(identities) or []
    return [TableMeld("seq", identities[0] // NUM_RANKS, tuple(p)) for p in found]


def layoff_result(meld: TableMeld, identities: list[int], high: bool) -> TableMeld | None:
    if meld.kind == "set":
        if high or any(c % NUM_RANKS != meld.key for c in identities):
            return None
        suits = sorted(meld.members + tuple(c // NUM_RANKS for c in identities))
        return TableMeld("set", meld.key, tuple(suits)) if len(set(suits)) == len(suits) <= 4 else None
    if any(c // NUM_RANKS != meld.key for c in identities):
        return None
    k = len(identities)
    lo, hi = meld.members[0], meld.members[-1]
    wanted = list(range(lo - k, lo)) if not high else list(range(hi + 1, hi + k + 1))
    if wanted[0] < 0 or wanted[-1] > 13 or sorted(p % NUM_RANKS for p in wanted) != sorted(c % NUM_RANKS for c in identities):
        return None
    positions = tuple(sorted(meld.members + tuple(wanted)))
    return None if positions[0] == 0 and positions[-1] == 13 else TableMeld("seq", meld.key, positions)


def family_ids(family_key: tuple[str, int]) -> list[int]:
    kind, k = family_key
    return [s * NUM_RANKS + k for s in range(4)] if kind == "rank" else [k * NUM_RANKS + r for r in range(NUM_RANKS)]


def groups(turn: Turn, pending_natural: frozenset[int], pending_joker: frozenset[int], required: int = -1):
    """Every (natural identities, joker identities) group holding the pending group (and the
    natural card ``required``, if >= 0), drawn from the hand: each rank's and each suit's
    subsets, with up to two more jokers."""
    hand = dict(turn.hand)
    naturals = {c for c in hand if c != JOKER}
    free = hand.get(JOKER, 0) - len(pending_joker)
    seen = set()
    pending_all = pending_natural | pending_joker
    if required >= 0:
        pending_natural = pending_natural | {required}
        pending_all = pending_all | {required}
    keys = [("rank", r) for r in range(NUM_RANKS)] + [("suit", s) for s in range(4)]
    for key in keys:
        ids = family_ids(key)
        if not pending_all <= set(ids):
            continue
        mine = [c for c in ids if c in naturals and c not in pending_all]
        for size in range(len(mine) + 1):
            for chosen in combinations(mine, size):
                nat = pending_natural | frozenset(chosen)
                others = [c for c in ids if c not in nat and c not in pending_joker]
                for j in range(min(free, MAX_JOKERS_IN_A_GROUP) + 1):
                    for jok in combinations(others, j):
                        group = (nat, pending_joker | frozenset(jok))
                        if group not in seen and (nat or group[1]):
                            seen.add(group)
                            yield group


def raw_commits(turn: Turn, pending_natural=frozenset(), pending_joker=frozenset(), required: int = -1):
    """Valid (natural ids, joker ids, destination, resulting meld) commits, ignoring turn rules.
    Destination: -1 new meld, slot k (set / low end), MAX_MELDS + k (high end)."""
    counts = dict(turn.table_counts)
    for nat, jok in groups(turn, pending_natural, pending_joker, required):
        identities = sorted(nat | jok)
        if any(counts.get(c, 0) + 1 > turn.decks for c in identities):
            continue
        shapes = new_meld_shapes(identities)
        if shapes:
            yield nat, jok, -1, shapes[-1]  # a full suit: the ace high, as documented
        for slot, meld in enumerate(turn.melds):
            for high in (False, True):
                result = layoff_result(meld, identities, high)
                if result is not None:
                    yield nat, jok, slot + (MAX_MELDS if high else 0), result


def after_commit(turn: Turn, nat, jok, dest: int, result: TableMeld) -> Turn:
    hand = Counter(dict(turn.hand))
    for c in nat:
        hand[c] -= 1
    hand[JOKER] -= len(jok)
    counts = Counter(dict(turn.table_counts))
    for c in nat | jok:
        counts[c] += 1
    melds = list(turn.melds)
    if dest < 0:
        melds.append(result)
    else:
        melds[dest % MAX_MELDS] = result
    placed = (turn.target == JOKER and jok) or (turn.target != JOKER and turn.target in nat)
    return replace(turn, hand=tuple(sorted((c, k) for c, k in hand.items() if k > 0)), melds=tuple(melds),
                   table_counts=tuple(sorted(counts.items())), target=-1 if placed else turn.target)


def commit_legal(turn: Turn, nat, jok, dest, result) -> bool:
    placed = turn.target < 0 or (turn.target == JOKER and jok) or (turn.target != JOKER and turn.target in nat)
    if not placed and turn.first_action:
        return False
    after = after_commit(turn, nat, jok, dest, result)
    if not after.hand:  # went out
        return after.target < 0 and not turn.must_discard
    return can_finish(after)


@lru_cache(maxsize=100_000)
def can_finish(turn: Turn) -> bool:
    """Can the turn still end legally: a discard once the target is placed, or a table action
    after which it can (going out included)?"""
    if turn.target < 0 and any(c != turn.banned for c, _ in turn.hand):
        return True
    # A natural target due in the first commit: only groups holding it can be legal.
    required = turn.target if 0 <= turn.target < JOKER and turn.first_action else -1
    return any(commit_legal(turn, *commit) for commit in raw_commits(turn, required=required))


def turn_of(d: dict[str, Any], hand_cards: list[int] | None = None, target: int | None = None,
            banned: int | None = None) -> Turn:
    opts = d["options"]
    n = opts["num_players"]
    decks = opts["num_decks"] or (1 if n <= 4 else 2)
    p = d["current_player"]
    hand = Counter(parse(d["hands"][p]) if hand_cards is None else hand_cards)
    melds, counts = [], Counter()
    for m in d["melds"]:
        cards = parse(m["cards"])
        counts.update(cards)
        if len({c % NUM_RANKS for c in cards}) == 1 and len(cards) <= 4:
            melds.append(TableMeld("set", cards[0] % NUM_RANKS, tuple(sorted(c // NUM_RANKS for c in cards))))
        else:
            first = cards[0] % NUM_RANKS
            lo = 0 if first == 0 else first
            melds.append(TableMeld("seq", cards[0] // NUM_RANKS, tuple(range(lo, lo + len(cards)))))
    tgt = (parse_card(d["target"]) if d["target"] else -1) if target is None else target
    ban = (parse_card(d["banned"]) if d["banned"] else -1) if banned is None else banned
    return Turn(tuple(sorted(hand.items())), tuple(melds), tuple(sorted(counts.items())), tgt, ban, decks,
                opts["target_use_timing"] == "first_table_action", opts["must_discard_to_go_out"])


def legal_actions(d: dict[str, Any]) -> set[int]:
    """The legal action ids of the player to move in the state dict ``d``."""
    opts = d["options"]
    if d["phase"] == "DRAW":
        out = set()
        pile = parse(d["discard_pile"])
        if d["stock"]:
            out.add(DRAW_STOCK)
        elif opts["stock_end_rule"] == "end_on_decline":
            out.add(END_HAND)
        hand = parse(d["hands"][d["current_player"]])
        for i in range(len(pile)):
            taken = pile[i:]
            top = i == len(pile) - 1
            must_place = not top or opts["top_discard_must_be_used"]
            target = taken[0] if must_place else -1
            banned = taken[0] if top and not must_place and not opts["allow_rediscard_taken_card"] else -1
            if can_finish(turn_of(d, hand + taken, target, banned)):
                out.add(TAKE_DISCARD + i)
        return out
    if d["phase"] != "MELD":
        return set()
    turn = turn_of(d)
    pending_natural = frozenset(parse(d["pending"]))
    pending_joker = frozenset(parse(d["pending_jokers"]))
    pending = pending_natural | pending_joker
    out = set()
    for nat, jok, dest, result in raw_commits(turn, pending_natural, pending_joker):
        if not commit_legal(turn, nat, jok, dest, result):
            continue
        if (nat | jok) == pending:
            out.add(MELD_NEW if dest < 0 else LAY_OFF + dest)
        out |= {PICK + c for c in nat - pending_natural}
        out |= {PICK_JOKER + c for c in jok - pending_joker}
    if pending:
        out.add(CANCEL)
    elif turn.target < 0:
        out |= {DISCARD + c for c, _ in turn.hand if c != turn.banned}
    return out


def affordable(d: dict[str, Any]) -> bool:
    """States the oracle can check: a player to move who can never hold more than two jokers."""
    if d["current_player"] < 0:
        return False
    cards = parse(d["hands"][d["current_player"]]) + (parse(d["discard_pile"]) if d["phase"] == "DRAW" else [])
    return cards.count(JOKER) <= MAX_JOKERS_IN_A_GROUP
