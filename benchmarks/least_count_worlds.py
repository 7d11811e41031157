"""What the Least Count search lacks: its worlds. ``pimc`` with heuristic rollouts in one seat
of the default four-player game against three heuristics, on shared deals (the search seat
rotated over the four seats of each), its worlds drawn in three ways. A diagnostic, not an
agent: the ``true`` worlds read the true state, which no agent may.

Run from the repository root::

    python -m benchmarks.least_count_worlds [--worlds view,belief,true] [--deals 12]

Worlds (each decision of the search seat draws ``--iterations`` of them):

- ``view``: dealt from the view alone (``belief=False``): the other hands' hidden cards uniform.
- ``belief``: from the count network's belief (``agents.least_count_belief``, the search
  agents' ``belief=True``; off by default in Least Count), which reads no hidden card.
- ``true``: the true state with the closed deck shuffled: every hand known.

The margin of a game is the search seat's points less the mean of the other three; each
deal's four games are averaged and reported with a 95% interval over the deals. Not run in
CI (``--smoke`` runs a token amount into a scratch place).
"""

from __future__ import annotations

import argparse
import random
import statistics
from pathlib import Path

import rummy_envs
from agents import make_agent
from agents.search import PIMCAgent, mask_of
from benchmarks.harness import write_worlds_table
from rummy_envs.games.base import GameState, PlayerView
from rummy_envs.games.least_count.state import LeastCountState

GAME = "least_count"


class WorldsAgent(PIMCAgent):
    """``pimc`` with heuristic rollouts whose worlds are drawn by ``worlds`` (the module
    docstring); the loop sets ``true_state`` before each decision, for ``true`` only."""

    def __init__(self, worlds: str, seed: int, iterations: int, rollout_depth: int) -> None:
        super().__init__(GAME, seed, iterations=iterations, rollout="heuristic", rollout_depth=rollout_depth,
                         belief=worlds == "belief")
        self.worlds = worlds
        self.true_state: LeastCountState | None = None

    def world(self, view: PlayerView) -> GameState:
        if self.worlds != "true":
            return super().world(view)
        assert self.true_state is not None
        world = self.true_state.clone()
        self.rng.shuffle(world.stock)
        world._legal = None
        return world


def margins(worlds: str, deals: int, seed: int, iterations: int, rollout_depth: int) -> list[float]:
    """The search seat's mean margin over the four seatings of each deal."""
    env = rummy_envs.ENVS[GAME].raw_env()
    seats = env.config.num_players
    seeds = random.Random(seed)
    result = []
    for deal in range(deals):
        env_seed = seeds.getrandbits(63)
        per_seat = []
        for focal in range(seats):
            state = env.state_class(env.config, env_seed)
            agents = [make_agent("heuristic", GAME, deal * seats + s) for s in range(seats)]
            search = agents[focal] = WorldsAgent(worlds, deal * seats + focal, iterations, rollout_depth)
            while not state.is_terminal():
                player = state.current_player
                search.true_state = state
                state.apply(agents[player].act(None, mask_of(state.legal_actions()), state.player_view(player)))
            returns = state.returns()
            per_seat.append(returns[focal] - statistics.fmean(r for q, r in enumerate(returns) if q != focal))
        result.append(statistics.fmean(per_seat))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", default="view,belief,true")
    parser.add_argument("--deals", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=8, help="worlds per decision")
    parser.add_argument("--rollout-depth", type=int, default=12)
    parser.add_argument("--seed", type=int, default=2051)
    parser.add_argument("--smoke", action="store_true", help="one deal of two worlds a decision, rollouts of 4")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)
    deals, iterations, depth = (1, 2, 4) if args.smoke else (args.deals, args.iterations, args.rollout_depth)
    intro = (f"`pimc` with heuristic rollouts of {depth} moves ({iterations} worlds a decision) in one seat of the "
             f"four-player game against three `heuristic`s, {deals} deals (seed {args.seed}), the search in each seat "
             "once; margin per game (its points less the others' mean) with its 95% interval. The worlds are "
             "described in the module docstring; `true` reads the hidden cards (a diagnostic).")
    write_worlds_table(args.out, "least_count_worlds", "What the Least Count search lacks: its worlds", intro,
                       args.worlds.split(","), lambda worlds: margins(worlds, deals, args.seed, iterations, depth))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
