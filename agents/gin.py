"""Rule-based agents for the gin games (gin_rummy, hollywood_gin).

Both agents read only ``player_view()`` (a ``GinView``) and the engine's public helpers,
so they never see a hidden card. They share the showdown play: with
``knocker_arrangement="explicit"`` or ``layoff_mode="explicit"`` they declare the
arrangement of least deadwood (for the defender: counting the layoffs it allows) and lay
off everything that fits.
"""

from __future__ import annotations

import numpy as np

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games import gin as G
from rummy_envs.games.gin import GinView, Phase

GIN_GAMES = ("gin_rummy", "hollywood_gin")


def remaining_mask(view: GinView) -> int:
    """My cards not yet declared in a meld or laid off in the showdown."""
    laid = C.to_mask(card for card, _ in view.layoffs) if view.knocker == 1 else 0
    return C.to_mask(view.hand) & ~M.union([C.to_mask(m) for m in view.my_melds]) & ~laid


def showdown_action(view: GinView) -> int:
    """The next explicit showdown action: melds of least deadwood, then every layoff."""
    remaining = remaining_mask(view)
    extents = [C.to_mask(m) for m in view.knocker_melds]
    legal = set(view.legal_actions)
    if view.phase == Phase.LAYOFF:
        _, order = M.layoff_closure(remaining, extents)
        for card, slot in order:
            action = G.LAYOFF + slot * C.NUM_CARDS + card
            if action in legal:
                return action
        return G.DONE
    defending = view.phase == Phase.DEFENDER_MELD
    allow_layoffs = defending and bool(view.knocker_deadwood)
    best: tuple[int, tuple[int, ...]] | None = None
    for covered, chosen in M.arrangements(remaining):
        rest = remaining & ~covered
        if allow_layoffs:
            rest &= ~M.layoff_closure(rest, extents)[0]
        key = (M.gin_mask_value(rest), chosen)
        if best is None or key < best:
            best = key
    assert best is not None
    for meld in best[1]:
        action = G.MELD + M.MELD_INDEX[meld]
        if action in legal:
            return action
    return G.DONE


def _discard_choices(view: GinView) -> list[int]:
    """Cards I may discard now (the taken card excluded where the rules forbid it)."""
    return sorted({a - G.DISCARD for a in view.legal_actions if G.DISCARD <= a < G.KNOCK})


def _knock_choices(view: GinView) -> list[int]:
    return [a for a in view.legal_actions if G.KNOCK <= a < G.MELD or a == G.BIG_GIN]


def _lowest_knock(view: GinView) -> int:
    """The knock (or big gin) that leaves the least deadwood; ties: the highest card shed."""
    hand = C.to_mask(view.hand)
    if view.phase == Phase.LAST_CHANCE and view.top_discard is not None:
        hand |= 1 << view.top_discard

    def key(action: int) -> tuple[int, int]:
        if action == G.BIG_GIN:
            return (-1, 0)
        card = action - G.KNOCK
        return (M.min_deadwood(hand ^ (1 << card)), -C.GIN_VALUES[card])

    return min(_knock_choices(view), key=key)


def melds_with(hand: int, card: int) -> bool:
    """True when ``card`` ends up in a meld of a least-deadwood arrangement of hand + card."""
    with_card = hand | 1 << card
    return M.min_deadwood(with_card) < M.min_deadwood(hand) + C.GIN_VALUES[card]


class GinNoviceAgent:
    """The obvious greedy player, the level of RLCard's and OpenSpiel's bundled gin bots:
    knock or gin as soon as allowed, otherwise discard the card that leaves the least
    deadwood (the highest on ties), and take the discard only when it melds."""

    name = "novice"

    def __init__(self, game: str = "gin_rummy", seed: int | None = None) -> None:
        self.game = game

    def reset(self) -> None:
        """The novice remembers nothing."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: GinView) -> int:
        phase = view.phase
        if phase in (Phase.KNOCKER_MELD, Phase.DEFENDER_MELD, Phase.LAYOFF):
            return showdown_action(view)
        if phase == Phase.FORCED_DRAW:
            return G.DRAW_STOCK
        if phase == Phase.LAST_CHANCE:
            return _lowest_knock(view) if _knock_choices(view) else G.PASS
        hand = C.to_mask(view.hand)
        if phase in (Phase.OFFER_ND, Phase.OFFER_D, Phase.DRAW):
            take = melds_with(hand, view.top_discard)
            if phase == Phase.DRAW:
                return G.TAKE_DISCARD if take else G.DRAW_STOCK
            return G.TAKE_DISCARD if take else G.PASS
        if _knock_choices(view):
            return _lowest_knock(view)
        card = min(_discard_choices(view), key=lambda c: (M.min_deadwood(hand ^ (1 << c)), -C.GIN_VALUES[c], -c))
        return G.DISCARD + card

