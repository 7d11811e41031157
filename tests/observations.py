"""The one observation decoder the tests share: an observation vector cut into its named
segments (``raw_env.layout``), and a count segment read back as the cards it counts."""

from __future__ import annotations

import numpy as np


def decode(raw, agent: str) -> dict[str, np.ndarray]:
    """``agent``'s observation as ``{segment name: its slice}`` of the raw env's layout."""
    obs = raw.observe(agent)["observation"]
    return {name: obs[s.offset:s.offset + s.size] for name, s in raw.layout.items()}


def counts(vector: np.ndarray) -> list[int]:
    """The card ids a count segment holds, each repeated as often as it is counted."""
    return np.repeat(np.arange(vector.size), np.rint(vector).astype(int)).tolist()
