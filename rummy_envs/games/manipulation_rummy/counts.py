"""Cards as counts: hands are lists of 53 counts (index 52: jokers), the table two lists of
52 (natural cards, and jokers by declared identity); card values for hands.
See docs/manipulation_rummy.md#cards-and-melds."""

from __future__ import annotations

from rummy_envs import cards as C

JOKER = C.JOKER
NUM_CARDS = C.NUM_CARDS
NUM_IDS = NUM_CARDS + 1  # card ids with the joker
HAND_SIZE = 10
JOKER_VALUE = 25
CARD_VALUES: tuple[int, ...] = C.GIN_VALUES + (JOKER_VALUE,)  # A = 1, 2-10 face value, J/Q/K = 10, joker 25


def counts_of(cards: list[int], size: int = NUM_IDS) -> list[int]:
    """Counts per id of a list of card ids."""
    out = [0] * size
    for card in cards:
        out[card] += 1
    return out


def cards_of(counts: list[int] | tuple[int, ...]) -> list[int]:
    """Sorted card ids of a count list, copies repeated (jokers last in a 53-entry list)."""
    return [card for card, k in enumerate(counts) if k for _ in range(k)]


def hand_value(hand: list[int]) -> int:
    """Value of a hand of 53 counts: A = 1, 2-10 face value, J/Q/K = 10, joker 25."""
    return sum(k * v for k, v in zip(hand, CARD_VALUES) if k)


def still_known(known: list[int] | tuple[int, ...], placed: list[int] | tuple[int, ...]) -> list[int]:
    """The cards known to be in a hand (copies repeated) that are still in it when ``placed``
    have gone down in the commit in progress: the known cards less the placed ones."""
    left = list(known)
    for card in placed:
        if card in left:
            left.remove(card)
    return left
