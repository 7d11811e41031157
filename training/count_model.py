"""Fit the network behind the Least Count search agents' belief (agents/least_count_belief.py).

Heuristic self-play of the default four-player game: at the start of every turn of every
seat, that seat's belief reads the round (the heuristic's memory and the others' last turns)
and each other seat still holding cards gives one example, its ``count_features`` and its
true count. The network (two hidden ReLU layers) is fitted by cross-entropy over the
counts; the last ``held_out`` share of the deals measures it. Run from the repository root::

    python -m training.count_model [--deals 2000] [--seed 0] [--out agents/checkpoints/least_count/counts.npz]

About ten minutes on one core of a 2-core machine for the shipped file (2,000 deals).
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import torch

import rummy_envs
from agents import make_agent
from agents.least_count import COUNTS
from agents.least_count_belief import MODEL_PATH, READING_MEAN, UNIFORM_MEAN, CountModel, LeastCountBelief
from agents.search import mask_of
from rummy_envs.games.least_count import rules as L

GAME = "least_count"


def examples(deals: range) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, true counts and the deal of each example of heuristic self-play."""
    env = rummy_envs.ENVS[GAME].raw_env()
    features, counts, where = [], [], []
    for deal in deals:
        state = env.state_class(env.config, deal)
        seats = [make_agent("heuristic", GAME, s) for s in range(state.n)]
        beliefs = [LeastCountBelief(random.Random(deal)) for _ in range(state.n)]
        while not state.is_terminal():
            player = state.current_player
            view = state.player_view(player)
            if view.phase == L.Phase.TURN_START:
                reading = beliefs[player].read(view)
                values = reading.ctx.values
                for seat, row in beliefs[player].features(reading).items():
                    features.append(row)
                    counts.append(sum(values[c] for c in state.hands[(player + seat) % state.n]))
                    where.append(deal)
            action = seats[player].act(None, mask_of(state.legal_actions()), view)
            beliefs[player].note_my_move(view, action)
            state.apply(action)
    return np.array(features, dtype=float), np.array(counts, dtype=np.int64), np.array(where)


def fit(features: np.ndarray, counts: np.ndarray, seed: int, hidden: int = 128, epochs: int = 12,
        batch_size: int = 256, learning_rate: float = 1e-3) -> CountModel:
    """A network from features to count probabilities, fitted by cross-entropy."""
    torch.manual_seed(seed)
    mean, scale = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = torch.tensor((features - mean) / scale, dtype=torch.float32)
    y = torch.tensor(np.minimum(counts, COUNTS - 1))
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                              torch.nn.ReLU(), torch.nn.Linear(hidden, COUNTS))
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), batch_size):
            batch = order[start:start + batch_size]
            loss = torch.nn.functional.cross_entropy(net(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy())
              for m in net if isinstance(m, torch.nn.Linear)]
    return CountModel(layers, mean, scale)


def measure(model: CountModel, features: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    """Held-out figures: the mean absolute error of the network's mean count, the mean
    probability it gives the true count, and the same error for the means of the heuristic's
    reading and of a uniform deal (features ``READING_MEAN`` and ``UNIFORM_MEAN``)."""
    probabilities = model.probabilities(features)
    expected = probabilities @ np.arange(COUNTS)
    return {"examples": len(counts),
            "network_error": float(np.abs(expected - counts).mean()),
            "network_true_count_probability": float(probabilities[np.arange(len(counts)), counts].mean()),
            "reading_error": float(np.abs(features[:, READING_MEAN] - counts).mean()),
            "uniform_error": float(np.abs(features[:, UNIFORM_MEAN] - counts).mean())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--held-out", type=float, default=0.1)
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    started = time.perf_counter()
    first = args.seed * 1_000_000
    features, counts, where = examples(range(first, first + args.deals))
    held = where >= first + int(args.deals * (1 - args.held_out))
    model = fit(features[~held], counts[~held], args.seed)
    figures = measure(model, features[held], counts[held])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    model.save(args.out)
    print(f"{len(counts)} examples from {args.deals} deals, {time.perf_counter() - started:.0f} s; held out: "
          + ", ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
