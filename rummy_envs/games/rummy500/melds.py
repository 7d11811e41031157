"""Rummy 500's cards and melds: card values (docs/rummy500.md#cards-and-melds), a hand as a
multiset of card ids, and the melds on the table with the test of what makes a new meld.

Cards are ids (``rank + 13 * suit``, every joker 52); a hand is a multiset held as
``[once, twice, jokers]``: the bitmask of ids held at least once, the bitmask of ids held
twice (two decks) and the number of jokers. The table holds card *identities*: a joker on
the table stands for the identity it was declared as (docs/rummy500.md#jokers), so a meld
is a bitmask of identities plus the bitmask of those held by jokers.
"""

from __future__ import annotations

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.rummy500.actions import JOKER

ROW = M.ROW_MASK  # one suit's 13 rank bits
RANK_POINTS = (15, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)  # by rank, A..K: in the hand and on the table
_ROW_POINTS = [sum(RANK_POINTS[r] for r in range(C.NUM_RANKS) if row >> r & 1) for row in range(1 << C.NUM_RANKS)]
COLUMNS = tuple(  # by rank: the bits of its four suits
    sum(1 << (s * C.NUM_RANKS + r) for s in range(C.NUM_SUITS)) for r in range(C.NUM_RANKS))
SET_SHAPES = tuple(tuple(M.MELDS[r * 5: r * 5 + 5]) for r in range(C.NUM_RANKS))  # 3-sets, then the 4-set
NEW_SEQUENCES = tuple(entry for entry in M.SEQUENCE_INTERVALS if entry[:2] != (0, 12))  # a full suit: ace high
_NEW_SEQUENCE_ROWS: dict[int, tuple[tuple[int, int, int], ...]] = {}
ACE_NEIGHBOURS = 1 << 1 | 1 << 12  # the two and the king


def new_sequences_in(row: int) -> tuple[tuple[int, int, int], ...]:
    """``(lo, hi, ranks)`` of every new sequence inside a suit's rank row (memoised); a full
    suit only ace high."""
    found = _NEW_SEQUENCE_ROWS.get(row)
    if found is None:
        found = _NEW_SEQUENCE_ROWS[row] = tuple(e for e in M.sequences_in_row(row) if e[:2] != (0, 12))
    return found


def mask_points(mask: int) -> int:
    """Hand value of the natural cards of a bitmask: aces 15, faces 10, others their rank."""
    return (_ROW_POINTS[mask & ROW] + _ROW_POINTS[mask >> 13 & ROW] + _ROW_POINTS[mask >> 26 & ROW]
            + _ROW_POINTS[mask >> 39 & ROW])


def multiset(cards: list[int]) -> list[int]:
    """``[once, twice, jokers]`` of card ids (at most two copies of a natural id)."""
    out = [0, 0, 0]
    for card in cards:
        ms_add(out, card)
    return out


def multiset_cards(ms: list[int]) -> list[int]:
    """Sorted card ids of a multiset, copies repeated, jokers last."""
    return sorted(C.from_mask(ms[0]) + C.from_mask(ms[1])) + [JOKER] * ms[2]


def ms_add(ms: list[int], card: int) -> None:
    """Add one card to a multiset (ValueError beyond two copies of an id)."""
    if card == JOKER:
        ms[2] += 1
        return
    bit = 1 << card
    if ms[0] & bit:
        if ms[1] & bit:
            raise ValueError(f"more than two copies of {C.format_card(card)}")
        ms[1] |= bit
    else:
        ms[0] |= bit


def ms_count(ms: list[int], card: int) -> int:
    """Copies of ``card`` (jokers: 52) in a multiset."""
    return ms[2] if card == JOKER else (ms[0] >> card & 1) + (ms[1] >> card & 1)


class Meld:
    """A meld on the table: a set (``key`` = rank) or a sequence (``key`` = suit, positions
    ``lo``..``hi`` with the ace at 0 or 13). ``cards`` are identities, ``jokers`` those held
    by jokers, ``credit`` the seat credited with each identity, ``owner`` who melded it."""

    __slots__ = ("is_set", "key", "lo", "hi", "cards", "jokers", "credit", "owner")

    def __init__(self, is_set: bool, key: int, lo: int, hi: int, cards: int, jokers: int, credit: dict[int, int],
                 owner: int) -> None:
        self.is_set, self.key, self.lo, self.hi = is_set, key, lo, hi
        self.cards, self.jokers, self.credit, self.owner = cards, jokers, credit, owner

    def copy(self) -> Meld:
        return Meld(self.is_set, self.key, self.lo, self.hi, self.cards, self.jokers, dict(self.credit), self.owner)

    def ordered(self) -> list[int]:
        """Identities in table order: a set by suit, a sequence from its low end."""
        if self.is_set:
            return C.from_mask(self.cards)
        base = self.key * C.NUM_RANKS
        return [base + pos % C.NUM_RANKS for pos in range(self.lo, self.hi + 1)]

    def value(self, identity: int, joker_value: int) -> int:
        """Points of one card of this meld: a joker its value, an ace at a sequence's low end 1."""
        if self.jokers >> identity & 1:
            return joker_value
        rank = identity % C.NUM_RANKS
        return 1 if rank == 0 and not self.is_set and self.lo == 0 else RANK_POINTS[rank]


def classify(identities: int) -> tuple[bool, int, int, int] | None:
    """``(is_set, key, lo, hi)`` of a new meld of these identities, or None if none: a set
    of 3-4 distinct suits of one rank, or 3+ consecutive cards of one suit, the ace low or
    high (a full suit counts its ace high)."""
    size = identities.bit_count()
    if size < 3:
        return None
    low = (identities & -identities).bit_length() - 1
    rank, suit = low % C.NUM_RANKS, low // C.NUM_RANKS
    if size <= 4 and identities & COLUMNS[rank] == identities:
        return True, rank, -1, -1
    row = identities >> (suit * C.NUM_RANKS)
    if row & ~ROW:
        return None
    for lo, hi, ranks in new_sequences_in(row):
        if ranks == row:
            return False, suit, lo, hi
    return None


def classify_ordered(cards: list[int]) -> tuple[bool, int, int, int] | None:
    """Like ``classify`` for identities listed in table order, so a sequence's ace position
    is read from where it stands (first: low, last: high)."""
    found = classify(C.to_mask(cards)) if len(set(cards)) == len(cards) else None
    if found is None or found[0]:
        return found
    suit = found[1]
    positions = [c % C.NUM_RANKS for c in cards]
    if positions[-1] == 0:
        positions[-1] = C.NUM_RANKS
    if (any(c // C.NUM_RANKS != suit for c in cards)
            or positions != list(range(positions[0], positions[0] + len(cards)))):
        return None
    return False, suit, positions[0], positions[-1]
