"""What the search lacks in gin: the worlds it plays in. ``pimc`` with heuristic rollouts
against the heuristic on shared duplicate deals, its worlds drawn in several ways, one of
them an oracle that sees the other hand. A diagnostic, not an agent: the oracle reads the
true state, which no agent may.

Run from the repository root::

    python -m benchmarks.search_worlds [--worlds view,true,true-4,odds,deadwood,calibrated] [--deals 40]

Worlds (each decision of the search seat draws ``--iterations`` of them):

- ``view``: ``sample_from_view`` alone (the baseline, the search agents' ``belief=False``).
- ``belief``: the other hand drawn from the particles of ``GinBelief``, which weighs hands by
  how likely the other seat's takes, passes and discards were from them (no hidden card
  read): the search agents' default.
- ``true``: the true state with the stock shuffled: the other hand exactly known.
- ``true-K``: the true state where K cards of the other hand that the seat has not seen it
  take are swapped for random stock cards, then the stock shuffled: the hand mostly known.
- ``odds``: worlds from the view whose other hand (beyond the cards it took) is drawn with
  the heuristic's own odds that it holds each card (``_Reading.held``), not uniformly.
- ``deadwood``: worlds from the view redrawn (up to 300 times) until the other hand's least
  deadwood is within 2 of the true one: how close it is to knocking known, not its cards.
- ``calibrated``: the same redraw towards a deadwood picked at random among those the
  other hand had at the same turn in heuristic self-play (``deadwood_by_turn``): no hidden
  card read. Worlds from the view hold hands far from a knock (a uniform hand's least
  deadwood stays near 50 while a played hand's falls from 45 to about 22 by the eighth
  turn); this corrects that.

``true-K``, ``odds``, ``deadwood`` and ``calibrated`` change only draw and discard decisions (elsewhere they
draw as ``view`` and ``true`` do). Each deal is played twice with the seats swapped; the
margin per game (the search seat's points less the heuristic's) is averaged per deal and
reported with its 95% interval over the deals. Not run in CI (``--smoke`` runs a token
amount into a scratch place).
"""

from __future__ import annotations

import argparse
import random
import statistics
from functools import lru_cache
from pathlib import Path

import rummy_envs
from agents import make_agent
from agents.gin_rummy import GinHeuristicAgent, _Reading
from agents.search import PIMCAgent, mask_of
from benchmarks.harness import write_worlds_table
from rummy_envs import cards as C
from rummy_envs import melds as M
from rummy_envs.games.base import GameState
from rummy_envs.games.gin_rummy import GinState, GinView, Phase

GAME = "gin_rummy"
DEADWOOD_TOLERANCE = 2
REDRAWS = 300


class WorldsAgent(PIMCAgent):
    """``pimc`` whose worlds are drawn by ``worlds`` (the module docstring); the loop sets
    ``true_state`` before each decision, for the oracle worlds only."""

    def __init__(self, worlds: str, seed: int, iterations: int) -> None:
        super().__init__(GAME, seed, iterations=iterations, rollout="heuristic", belief=worlds == "belief")
        self.worlds = worlds
        self.true_state: GinState | None = None
        self.reader = GinHeuristicAgent()

    def world(self, view: GinView) -> GameState:
        guessing = view.phase in (Phase.DRAW, Phase.DISCARD)
        if self.worlds in ("view", "belief") or (not guessing and self.worlds in ("odds", "deadwood", "calibrated")):
            return super().world(view)
        if self.worlds == "odds":
            return self._by_odds(view)
        if self.worlds == "deadwood":
            return self._by_deadwood(view)
        if self.worlds == "calibrated":
            return self._by_calibration(view)
        assert self.true_state is not None
        world = self.true_state.clone()
        swaps = int(self.worlds.split("-")[1]) if "-" in self.worlds else 0
        if swaps and guessing:
            other = 1 - view.player
            loose = C.from_mask(world.hands[other] & ~C.to_mask(view.opponent_known))
            out = self.rng.sample(loose, min(swaps, len(loose)))
            stock = list(world.stock)
            self.rng.shuffle(stock)
            world.hands[other] = world.hands[other] & ~C.to_mask(out) | C.to_mask(stock[:len(out)])
            world.stock = stock[len(out):] + out
        self.rng.shuffle(world.stock)
        world._legal = None
        return world

    def _by_odds(self, view: GinView) -> GameState:
        """The other hand's unknown cards drawn from the pool weighted by the heuristic's odds
        that the other seat holds each (Efraimidis and Spirakis' weighted sampling)."""
        world = super().world(view)
        other = 1 - view.player
        known = C.to_mask(view.opponent_known)
        hidden = world.hands[other] & ~known
        held = _Reading(view, self.reader).held
        pool = sorted(C.from_mask(hidden) + list(world.stock),
                      key=lambda card: -self.rng.random() ** (1.0 / max(held[card], 1e-6)))
        count = hidden.bit_count()
        world.hands[other] = known | C.to_mask(pool[:count])
        world.stock = pool[count:]
        self.rng.shuffle(world.stock)
        world._legal = None
        return world

    def _by_calibration(self, view: GinView) -> GameState:
        seen = deadwood_by_turn()[min(view.turns // 2, 9)]
        return self._redrawn_towards(view, self.rng.choice(seen)) if seen else super().world(view)

    def _by_deadwood(self, view: GinView) -> GameState:
        assert self.true_state is not None
        return self._redrawn_towards(view, M.min_deadwood(self.true_state.hands[1 - view.player]))

    def _redrawn_towards(self, view: GinView, deadwood: int) -> GameState:
        """Worlds from the view, drawn until the other hand's least deadwood is within
        ``DEADWOOD_TOLERANCE`` of ``deadwood`` (the last one after ``REDRAWS`` tries)."""
        for _ in range(REDRAWS):
            world = super().world(view)
            if abs(M.min_deadwood(world.hands[1 - view.player]) - deadwood) <= DEADWOOD_TOLERANCE:
                break
        return world


@lru_cache(maxsize=1)
def deadwood_by_turn(hands: int = 300, seed: int = 77) -> list[list[int]]:
    """The least deadwood of the other hand at each draw or discard decision of heuristic
    self-play, by turns of each seat finished (the last bucket pools the later turns)."""
    env = rummy_envs.ENVS[GAME].raw_env()
    heuristic = make_agent("heuristic", GAME, 0)
    buckets: list[list[int]] = [[] for _ in range(10)]
    for hand in range(hands):
        state = env.state_class(env.config, seed * 100_000 + hand)
        while not state.is_terminal():
            player = state.current_player
            view = state.player_view(player)
            if view.phase in (Phase.DRAW, Phase.DISCARD):
                buckets[min(view.turns // 2, 9)].append(M.min_deadwood(state.hands[1 - player]))
            state.apply(heuristic.act(None, mask_of(state.legal_actions()), view))
    return buckets


def margins(worlds: str, deals: int, seed: int, iterations: int) -> list[float]:
    """The search seat's mean margin per game on each deal (both seatings)."""
    env = rummy_envs.ENVS[GAME].raw_env()
    seeds = random.Random(seed)
    result = []
    for deal in range(deals):
        env_seed = seeds.getrandbits(63)
        per_seat = []
        for focal in (0, 1):
            state = env.state_class(env.config, env_seed)
            search = WorldsAgent(worlds, seed=deal * 2 + focal, iterations=iterations)
            heuristic = make_agent("heuristic", GAME, deal)
            while not state.is_terminal():
                player = state.current_player
                agent = search if player == focal else heuristic
                search.true_state = state
                state.apply(agent.act(None, mask_of(state.legal_actions()), state.player_view(player)))
            returns = state.returns()
            per_seat.append(returns[focal] - returns[1 - focal])
        result.append(statistics.fmean(per_seat))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worlds", default="view,true,true-4,odds,deadwood,calibrated")
    parser.add_argument("--deals", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=8, help="worlds per decision")
    parser.add_argument("--seed", type=int, default=2029)
    parser.add_argument("--smoke", action="store_true", help="one deal of two worlds a decision")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/RESULTS.md"))
    args = parser.parse_args(argv)
    deals, iterations = (1, 2) if args.smoke else (args.deals, args.iterations)
    intro = (f"`pimc` with heuristic rollouts ({iterations} worlds a decision) against `heuristic`, {deals} duplicate "
             f"deals of gin (seed {args.seed}); margin per game for the search with its 95% interval. The worlds are "
             "described in the module docstring; `true` and `true-K` read hidden cards (a diagnostic).")
    write_worlds_table(args.out, "search_worlds", "What the gin search lacks: its worlds", intro,
                       args.worlds.split(","), lambda worlds: margins(worlds, deals, args.seed, iterations))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
