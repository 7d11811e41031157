"""Can a network learn where the gin heuristic errs? One step of policy improvement over the
heuristic, measured by rollouts on the true state and distilled into the shipped policy's
network. A diagnostic for training, not a training mode.

The heuristic plays both seats of hands of gin (the env of ``configs/gin_rummy/ppo.yaml``,
its features included, so the inputs are what the shipped policy reads). At each of the
learner seat's decisions with two or more legal moves, every legal move is played from a
copy of the true state, and the heuristic then plays both seats to the end of the hand
(with ``--reshuffles K``: on K stocks, the true one and K - 1 shuffles of it, the same K for
every move, the move's points averaged over them). A move's *advantage* is its points less
those of the heuristic's own move.
Because the states are those real play reaches, the hidden cards follow their true
distribution given what the seat has seen, so a regression of the advantages on the
policy input estimates each move's expected advantage in the seat's information set: the
policy improvement step that search agents approximate with guessed worlds.

A network of the shipped policy's shape (two hidden layers of 256, tanh) is fitted to the
advantages (mean squared error over the legal moves, in points / 20) on the decisions of
nine hands in ten (whole hands: the decisions of one hand share its luck, so a split of
single decisions would leak). On the other hands' decisions, for each ``margin`` m: the
policy that leaves the heuristic's move only for a move predicted better by more than m
points. Reported: how often it leaves it; the mean measured advantage of its moves per
decision (0 where it keeps the heuristic's move), with a 95% interval over those hands;
and its margin per game when it plays the heuristic on ``--deals`` duplicate deals. A
positive gain would be a policy that beats the heuristic; the figures also bound what
imitating such a teacher can give at this amount of data.

Run from the repository root::

    python -m benchmarks.rollout_advantages [--decisions 50000,16000] [--reshuffles 1,4] [--workers 2]

``--smoke`` runs a token amount into a scratch place.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.harness import machine_line, markers, write_section

BEGIN, END = markers("rollout_advantages")
CONFIG = "configs/gin_rummy/ppo.yaml"
POINTS_SCALE = 20.0  # the config's reward_scale: the fit works in points / 20
MARGINS = (0.0, 1.0, 2.0, 4.0)


def collect(worker: int, decisions: int, reshuffles: int) -> dict[str, np.ndarray]:
    """``decisions`` decisions of the heuristic's learner seat with every legal move's
    measured advantage (NaN off the legal moves)."""
    from agents import make_agent
    from agents.search import PIMCAgent
    from training.train import make_env
    from training.train_config import load_config

    config = load_config(CONFIG)
    env = make_env(config)
    base = env.unwrapped
    base.set_opponents(lambda rng: make_agent("heuristic", config.game, int(rng.integers(2**62))))
    teacher = make_agent("heuristic", config.game, worker)
    rollouts = PIMCAgent(config.game, seed=worker, rollout="heuristic")  # its play_out: the heuristic in every seat
    shuffler = random.Random(worker)
    size, num_actions = env.observation_space.shape[0], int(env.action_space.n)
    inputs = np.zeros((decisions, size), np.float16)
    masks = np.zeros((decisions, num_actions), bool)
    advantages = np.full((decisions, num_actions), np.nan, np.float32)
    moves = np.zeros(decisions, np.int64)
    hand_of = np.zeros(decisions, np.int64)  # which hand of this worker each decision is in
    hand = 0
    observation, _ = env.reset(seed=1_000_003 * (worker + 1))
    teacher.reset()
    done = 0
    while done < decisions:
        aec, learner = base.aec_env, base.learner
        observed = aec.observe(learner)
        mask = base.action_masks()
        move = teacher.act(observed["observation"], observed["action_mask"], aec.player_view(learner))
        legal = np.flatnonzero(mask)
        if len(legal) > 1:
            state, seat = aec.game, aec.agent_name_mapping[learner]
            start, hands = state.returns(), len(state.hand_results)
            worlds = [state]
            for _ in range(reshuffles - 1):
                world = state.clone()
                shuffler.shuffle(world.stock)
                worlds.append(world)
            for action in legal:
                points = []
                for world in worlds:
                    copy = world.clone()
                    copy.apply(int(action))
                    points.append(rollouts.play_out(copy, start, hands)[seat])
                advantages[done, action] = sum(points) / len(points)
            advantages[done] -= advantages[done, move]
            inputs[done], masks[done], moves[done], hand_of[done] = observation, mask, move, worker * 10**6 + hand
            done += 1
        observation, _, terminated, truncated, _ = env.step(move)
        if terminated or truncated:
            observation, _ = env.reset()
            teacher.reset()
            hand += 1
    return {"inputs": inputs, "masks": masks, "advantages": advantages, "moves": moves, "hands": hand_of}


def fit_and_judge(data: dict[str, np.ndarray], epochs: int, seed: int,
                  margins: tuple[float, ...] = MARGINS) -> dict[str, object]:
    """Fit the network on the decisions of nine hands in ten; judge its policy at each margin
    on the other hands' decisions."""
    import torch

    x = torch.as_tensor(data["inputs"].astype(np.float32))
    legal = torch.as_tensor(data["masks"], dtype=torch.float32)
    target = torch.as_tensor(np.nan_to_num(data["advantages"]) / POINTS_SCALE)
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    hands = np.unique(data["hands"])
    held_hands = rng.permutation(hands)[: max(1, len(hands) // 10)]
    in_held = np.isin(data["hands"], held_hands)  # whole hands: a hand's decisions share its luck
    held, fit = np.flatnonzero(in_held), np.flatnonzero(~in_held)
    net = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                              torch.nn.Tanh(), torch.nn.Linear(256, legal.shape[1]))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

    def loss(rows: np.ndarray) -> torch.Tensor:
        index = torch.as_tensor(rows)
        return (((net(x[index]) - target[index]) ** 2) * legal[index]).sum() / legal[index].sum()

    for _ in range(epochs):
        rng.shuffle(fit)
        for start in range(0, len(fit), 256):
            optimizer.zero_grad()
            loss(fit[start:start + 256]).backward()
            optimizer.step()
    with torch.no_grad():
        held_loss = loss(held).item()
        predicted = np.where(data["masks"][held], net(x[held]).numpy() * POINTS_SCALE, -np.inf)
    measured = np.nan_to_num(data["advantages"][held])
    moves = data["moves"][held]
    zero_loss = float((measured[data["masks"][held]] ** 2).mean()) / POINTS_SCALE**2
    policies = []
    for margin in margins:
        others = np.arange(predicted.shape[1])[None, :] != moves[:, None]
        chosen = (predicted - margin * others).argmax(axis=1)
        gains = measured[np.arange(len(held)), chosen]
        half = 1.96 * _clustered_error(gains, data["hands"][held])
        policies.append({"margin": margin, "leaves": float(np.mean(chosen != moves)), "gain": float(gains.mean()),
                         "half": float(half)})
    alternatives = np.where(data["masks"] & (np.arange(legal.shape[1])[None, :] != data["moves"][:, None]),
                            data["advantages"], np.nan)
    weights = [(layer.weight.detach().numpy().T.copy(), layer.bias.detach().numpy().copy())
               for layer in net if isinstance(layer, torch.nn.Linear)]
    return {"decisions": len(x), "held_loss": held_loss, "zero_loss": zero_loss, "policies": policies,
            "alternative_mean": float(np.nanmean(alternatives)), "alternative_std": float(np.nanstd(alternatives)),
            "weights": weights}


def _clustered_error(values: np.ndarray, clusters: np.ndarray) -> float:
    """Standard error of the mean of ``values`` when those of one cluster (a hand) are not
    independent: from the clusters' totals."""
    labels, index = np.unique(clusters, return_inverse=True)
    if len(labels) < 2:
        return math.inf
    mean = values.mean()
    totals = np.bincount(index, weights=values - mean)
    return math.sqrt((totals**2).sum() * len(labels) / (len(labels) - 1)) / len(values)


class FittedAgent:
    """The fitted network as a gin player: the heuristic's move unless another legal move is
    predicted better by more than ``margin`` points. It reads what the shipped policy reads
    (the observation and its seat's features), nothing hidden."""

    name = "fitted"

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], margin: float) -> None:
        from agents.ppo import NumpyPolicy, PolicyInfo
        from training.train_config import load_config

        config = load_config(CONFIG)
        info = PolicyInfo(game=config.game, env_options=dict(config.env), features=config.features, layout_hash="",
                          steps=0, rummy_envs_version="", seed=None)  # an in-memory network, never saved
        self.policy = NumpyPolicy(weights[:-1], weights[-1], "tanh", info)
        assert self.policy.features is not None and self.policy.features.parts[-1][0] == "feature_heuristic_move", \
            "the advice must be the last segment of the input"
        self.margin = margin

    def reset(self) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: object) -> int:
        policy_input = self.policy.policy_input(observation, view)
        predicted = self.policy.logits(policy_input) * POINTS_SCALE
        advice = policy_input[-len(action_mask):]  # heuristic_move, the input's last segment
        predicted -= self.margin * (advice == 0)
        return int(np.argmax(np.where(np.asarray(action_mask) > 0, predicted, -np.inf)))


def play(weights: list[tuple[np.ndarray, np.ndarray]], margin: float, deals: int, seed: int, workers: int,
         out: Path) -> dict[str, float]:
    """The fitted agent at ``margin`` against the heuristic on duplicate deals: its margin per
    game with the 95% interval."""
    from training import tournament

    summary = tournament.run({"game": "gin_rummy", "episode": "hand", "deals": deals, "seed": seed,
                              "agents": {"fitted": FittedAgent(weights, margin), "heuristic": "heuristic"},
                              "workers": workers, "chunk_deals": max(1, deals // (4 * workers)),
                              "output_dir": str(out), "plots": False})
    return next(p["margin"] for p in summary["pairings"] if p["focal"] == "fitted")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--decisions", default="50000,16000", help="decisions measured in each run, all workers together")
    parser.add_argument("--reshuffles", default="1,4", help="stocks each move is played out on, in each run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--deals", type=int, default=500, help="duplicate deals each fitted policy plays")
    parser.add_argument("--seed", type=int, default=2031)
    parser.add_argument("--smoke", action="store_true", help="a token amount of decisions")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)
    runs = list(zip(map(int, args.decisions.split(",")), map(int, args.reshuffles.split(","))))
    workers, epochs, deals = (1, 1, 2) if args.smoke else (args.workers, args.epochs, args.deals)
    if args.smoke:
        runs = [(40, reshuffles) for _, reshuffles in runs]
    rows, notes = [], []
    for decisions, reshuffles in runs:
        found, seconds = measure(decisions, reshuffles, workers, epochs, args.seed)
        notes.append(f"- {found['decisions']:,} decisions on {reshuffles} stock(s) ({seconds:.0f} s on {workers} "
                     f"worker(s)): a move other than the heuristic's measured {found['alternative_mean']:+.2f} points, "
                     f"spread (standard deviation) {found['alternative_std']:.1f}; held-out loss "
                     f"{found['held_loss']:.4f} against {found['zero_loss']:.4f} for predicting no advantage anywhere.")
        for policy in found["policies"]:
            with tempfile.TemporaryDirectory() as scratch:
                played = play(found["weights"], policy["margin"], deals, args.seed, workers, Path(scratch))
            rows.append(f"| {reshuffles} | {found['decisions']:,} | {policy['margin']:.0f} | {policy['leaves']:.1%} | "
                        f"{policy['gain']:+.3f} [{policy['gain'] - policy['half']:+.3f}, "
                        f"{policy['gain'] + policy['half']:+.3f}] | {played['mean']:+.2f} [{played['low']:+.2f}, "
                        f"{played['high']:+.2f}] |")
            print(rows[-1], flush=True)
        print(notes[-1], flush=True)
    lines = [BEGIN, "## Can a network learn where the gin heuristic errs? (`python -m benchmarks.rollout_advantages`)", "",
             machine_line(), "",
             f"The heuristic's decisions (seed {args.seed}), every legal move played out by the heuristic from the true "
             f"state; a network of the shipped policy's shape fitted to the advantages for {epochs} epochs "
             "(the module docstring). Its policy at each margin leaves the heuristic's move for a move predicted better "
             "by more than the margin. *Held-out*: on the decisions of a tenth of the hands, kept out of the fit, how "
             "often it leaves the heuristic's move and the measured gain of its moves in points per decision (95% "
             f"interval over those hands). *Played*: its margin per game against the heuristic over {deals} duplicate "
             "deals (95% interval).", "", *notes, "",
             "| stocks | decisions | margin (points) | leaves the heuristic's move | held-out gain per decision | "
             "played, per game |", "|---:|---:|---:|---:|---:|---:|", *rows, END]
    write_section(args.out, BEGIN, END, "\n".join(lines))
    return 0


def measure(decisions: int, reshuffles: int, workers: int, epochs: int, seed: int) -> tuple[dict[str, object], float]:
    """One run: collect on the workers, then fit and judge; also the collection's seconds."""
    from training.vec_env import shard_sizes

    jobs = [(seed * 100 + k, share, reshuffles) for k, share in enumerate(shard_sizes(decisions, workers))]
    start = time.perf_counter()
    if workers == 1:
        parts = [collect(*job) for job in jobs]
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.starmap(collect, jobs)
    seconds = time.perf_counter() - start
    data = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    return fit_and_judge(data, epochs, seed), seconds


if __name__ == "__main__":
    raise SystemExit(main())
