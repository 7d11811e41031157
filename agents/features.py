"""Hand features a policy may read beside the env's observation.

A feature set is computed from a player's view (``player_view``: only what that player may
see) and appended to the observation vector, as extra named segments of the policy's
input layout. A small MLP learns the meld structure of a hand from 52 card bits only
slowly; handing it, say, the deadwood left by each possible discard lets a short training
run learn *when* and *what* to play rather than rediscovering arithmetic. Training
(``features:`` in a config) and the ``ppo:<path>`` agent use the same functions, and an
exported policy records its feature set, so they always agree. A game gets features by
adding a ``FeatureSet`` to ``FEATURE_SETS``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.envs.base import Segment, make_layout
from rummy_envs.games.gin import HAND_SIZE, GinView

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

FEATURE_SETS: dict[str, FeatureSet] = {GIN_HAND.name: GIN_HAND}
"""Feature sets by name."""


def feature_set(name: str, game: str) -> FeatureSet:
    """The named feature set, checked to be made for ``game``."""
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; known: {', '.join(FEATURE_SETS)}")
    features = FEATURE_SETS[name]
    if game not in features.games:
        raise ValueError(f"feature set {name!r} is for {', '.join(features.games)}, not {game}")
    return features


def policy_layout(env_layout: dict[str, Segment], features: FeatureSet | None) -> dict[str, Segment]:
    """A policy's input layout: the env's segments, then the feature segments if any."""
    if features is None:
        return env_layout
    parts = [(s.name, s.size, s.high, s.description) for s in env_layout.values()]
    return make_layout(parts + list(features.parts))
