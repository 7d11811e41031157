"""Card ids, parsing, formatting, values and decks shared by every game.

A card is an int: ``suit * 13 + rank`` with rank 0..12 = A..K and suits C, D, H, S in that
order; every joker is 52. A set of distinct cards is often held as an int bitmask whose
bit ``c`` is set when card ``c`` is present (fast subset tests for meld search).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter

import numpy as np

NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = 52
JOKER = 52
RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
FULL_DECK_MASK = (1 << NUM_CARDS) - 1

CardsLike = str | Iterable[int | str]


def rank(card: int) -> int:
    """Rank 0..12 (A..K) of a non-joker card."""
    return card % NUM_RANKS


def suit(card: int) -> int:
    """Suit 0..3 (C, D, H, S) of a non-joker card."""
    return card // NUM_RANKS


def make_card(rank_index: int, suit_index: int) -> int:
    """Card id of a rank and a suit."""
    return suit_index * NUM_RANKS + rank_index


def gin_value(card: int) -> int:
    """Deadwood value in the gin games: A = 1, 2-10 face value, J/Q/K = 10."""
    return min(card % NUM_RANKS + 1, 10)


GIN_VALUES: tuple[int, ...] = tuple(gin_value(c) for c in range(NUM_CARDS))


def parse_card(token: str | int) -> int:
    """One card from ``"AS"``, ``"10D"``, ``"td"``, ``"JK"`` or an id; ValueError names a bad token."""
    if isinstance(token, (int,)) and not isinstance(token, bool):
        if 0 <= token <= JOKER:
            return int(token)
        raise ValueError(f"card id {token!r} is out of range 0..{JOKER}")
    if not isinstance(token, str):
        raise ValueError(f"card {token!r} is neither a card string nor an id")
    text = token.strip().upper()
    if text in ("JK", "JOKER", "*"):
        return JOKER
    if len(text) >= 2 and text[:-1] in ("10", "1O"):
        text = "T" + text[-1]
    if len(text) != 2 or text[0] not in RANK_CHARS or text[1] not in SUIT_CHARS:
        raise ValueError(f"cannot parse card {token!r}: expected rank A23456789TJQK and suit CDHS, e.g. 'TH'")
    return make_card(RANK_CHARS.index(text[0]), SUIT_CHARS.index(text[1]))


def parse(cards: CardsLike) -> list[int]:
    """Card ids from a string (``"AS 2S 3S"``, commas allowed) or an iterable of ids/strings."""
    if isinstance(cards, str):
        tokens: Iterable[int | str] = cards.replace(",", " ").split()
    else:
        tokens = cards
    return [parse_card(t) for t in tokens]


def format_card(card: int, symbols: bool = False) -> str:
    """Canonical two-letter form (``"TH"``, ``"JK"``); with ``symbols`` the suit is drawn (``"T♥"``)."""
    if card == JOKER:
        return "JK"
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id {card!r} is out of range 0..{JOKER}")
    suits = SUIT_SYMBOLS if symbols else SUIT_CHARS
    return RANK_CHARS[card % NUM_RANKS] + suits[card // NUM_RANKS]


def format(cards: CardsLike, symbols: bool = False) -> str:  # noqa: A001 - public name asked for
    """Space-separated canonical forms of cards, in the order given."""
    return " ".join(format_card(c, symbols) for c in parse(cards))


def to_mask(cards: Iterable[int]) -> int:
    """Bitmask of distinct card ids."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


_ROW_CARDS = [
    [tuple(s * NUM_RANKS + r for r in range(NUM_RANKS) if row >> r & 1) for row in range(1 << NUM_RANKS)]
    for s in range(NUM_SUITS)
]


def from_mask(mask: int) -> list[int]:
    """Sorted card ids of a bitmask of the 52 cards (one table look-up per suit)."""
    rows = _ROW_CARDS
    return [
        *rows[0][mask & 0x1FFF],
        *rows[1][mask >> 13 & 0x1FFF],
        *rows[2][mask >> 26 & 0x1FFF],
        *rows[3][mask >> 39 & 0x1FFF],
    ]


def deck(num_decks: int = 1, num_jokers: int = 0) -> list[int]:
    """An ordered deck: ``num_decks`` copies of the 52 cards, then the jokers (id 52)."""
    return [c for _ in range(num_decks) for c in range(NUM_CARDS)] + [JOKER] * num_jokers


def check_deck(order: Iterable[int | str], expected: Iterable[int]) -> list[int]:
    """Parse a deck order and check it is a permutation of ``expected``; ValueError says how it differs."""
    cards = parse(order)
    want = sorted(expected)
    if sorted(cards) != want:
        have, need = Counter(cards), Counter(want)
        extra = sorted((have - need).elements())
        missing = sorted((need - have).elements())
        raise ValueError(
            f"deck must be a permutation of the game's {len(want)} cards; got {len(cards)} cards, "
            f"extra: {format(extra) or 'none'}, missing: {format(missing) or 'none'}"
        )
    return cards


# ----------------------------------------------------------------------------------------
# Hash-driven shuffles: the same order in any language, process or numpy version.

HASH_SHUFFLE_VERSION = "v1"


def hash_words(key: str) -> Iterator[int]:
    """Unsigned 64-bit words from SHA-256: the digest of ``f"{key}|{k}"`` (UTF-8) for
    k = 0, 1, 2, ... gives four words each, read big-endian in order."""
    k = 0
    while True:
        digest = hashlib.sha256(f"{key}|{k}".encode()).digest()
        for start in range(0, 32, 8):
            yield int.from_bytes(digest[start:start + 8], "big")
        k += 1


def hash_below(words: Iterator[int], bound: int) -> int:
    """A uniform integer in [0, bound) from a word stream: words at or above the largest
    multiple of ``bound`` below 2**64 are skipped (no modulo bias), then ``word % bound``."""
    limit = (1 << 64) - (1 << 64) % bound
    while True:
        word = next(words)
        if word < limit:
            return word % bound


def hash_shuffle(items: list, key: str) -> list:
    """A copy of ``items`` in Fisher-Yates order driven by ``hash_words(key)``: for i from
    len - 1 down to 1, swap positions i and ``hash_below(words, i + 1)``."""
    out = list(items)
    words = hash_words(key)
    for i in range(len(out) - 1, 0, -1):
        j = hash_below(words, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def keyed_word(key: str) -> int:
    """A 64-bit word fixed by ``key``: BLAKE2b of ``key`` (UTF-8, 8-byte digest) read
    little-endian. ``keyed_word(key) % n`` draws among n with a bias below n / 2**64."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def keyed_permutation(size: int, key: str) -> list[int]:
    """The indexes ``0..size-1`` in the random order that ``key`` fixes: sorted by 64-bit
    little-endian words of SHAKE-128 of ``key`` (UTF-8), one word per index, equal words
    keeping their order. Every order is equally likely; it is the same on every platform and
    version, and costs a third of seeding a Mersenne Twister and shuffling with it (numpy
    sorts the words)."""
    words = np.frombuffer(hashlib.shake_128(key.encode()).digest(8 * size), _WORD)
    return words.argsort(kind="stable").tolist()


def keyed_order(items: Sequence, key: str) -> list:
    """``items`` in the order of ``keyed_permutation(len(items), key)``: item i goes where
    index i goes."""
    if len(items) < 2:
        return list(items)
    return list(itemgetter(*keyed_permutation(len(items), key))(items))


_WORD = np.dtype("<u8")


def daily_key(game: str, date: str, salt: str, label: str | int) -> str:
    """The versioned string a daily deal hashes: ``"v1|<game>|<YYYY-MM-DD>|<salt>|<label>"``."""
    return f"{HASH_SHUFFLE_VERSION}|{game}|{date}|{salt}|{label}"


class MultiDeckDeal:
    """Deck arithmetic for a rules config that defines ``decks`` (decks in play) and
    ``total_jokers`` (jokers in play): the games dealt from one or two decks with jokers."""

    decks: int
    total_jokers: int

    @property
    def deck_size(self) -> int:
        return NUM_CARDS * self.decks + self.total_jokers

    @property
    def max_copies(self) -> int:
        """Most copies of one id: the decks, or the jokers when there are more."""
        return max(self.decks, self.total_jokers)

    def full_deck(self) -> list[int]:
        return deck(self.decks, self.total_jokers)
