"""The quick demo on embedded defaults (``python -m training``): for every game with
agents, one hand rendered between the two strongest agents, then a small duplicate
tournament of all of them (in gin, the search agent on a small budget) (the shipped PPO policy included) with its leaderboard and
plots, then a speed summary.

Runs in under a minute on 2 cores at its defaults; ``--help`` lists the knobs.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import agents
import rummy_envs
from agents import make_agent, registered_agents
from rummy_envs import cards as C
from rummy_envs.games.gin_rummy import deadwood
from rummy_envs.melds import max_cover
from training.tournament import run

STRENGTH_ORDER = ("heuristic", "novice", "random")


SLOW_TOURNAMENTS = {"rummy500": ({}, 2), "manipulation_rummy": ({"num_players": 2}, 10)}
"""Games whose demo tournament is cut down, as (options, deals divisor), so the whole demo
stays under a minute on 2 cores: Rummy 500's hands are long, and Manipulation Rummy's agents
and its random seats wait on the table solver over large hands (docs/table_solver.md), so
it plays the two-player game over a tenth of the deals (at least one)."""


DEMO_SEARCH = "ismcts:iterations=8"
"""The search agent of the demo on a small budget (a quarter of its default), so the demo
stays under a minute; it plays in gin only (``SEARCH_GAMES``)."""
SEARCH_GAMES = ("gin_rummy",)


def games_with_agents() -> list[str]:
    """Games that have more than the random agent."""
    return [g for g in rummy_envs.ENVS if set(registered_agents(g)) - {"random"}]


def shipped_policy(game: str) -> Path:
    """Where the trained PPO policy of ``game`` ships (it may not exist yet)."""
    return Path(agents.__file__).resolve().parent / "checkpoints" / game / "policy.npz"


def demo_agents(game: str) -> dict[str, str]:
    """The built-in agents of ``game`` (label -> agent name), strongest first (in gin the search
    agent, on a small budget), with the shipped PPO policy where the game has one."""
    known = registered_agents(game)
    chosen = {name: name for name in STRENGTH_ORDER if name in known}
    if game in SEARCH_GAMES and "ismcts" in known:
        chosen = {"heuristic": chosen["heuristic"], "ismcts": DEMO_SEARCH, **chosen}
    if shipped_policy(game).exists():
        chosen["ppo"] = f"ppo:{shipped_policy(game)}"
    return chosen


def show_hand(game: str, agent_names: list[str], seed: int) -> None:
    """Play and print one hand between named agents (seat order as given, repeated round the
    table when the game seats more players than names)."""
    env = rummy_envs.ENVS[game].env(render_mode="ansi", rich_info=True)
    env.reset(seed=seed)
    seated = [agent_names[i % len(agent_names)] for i in range(len(env.possible_agents))]
    players = {a: make_agent(n, game, seed + i) for i, (a, n) in enumerate(zip(env.possible_agents, seated))}
    moves = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        action = None if term or trunc else players[agent].act(obs["observation"], obs["action_mask"],
                                                                 env.unwrapped.player_view(agent))
        moves += action is not None
        env.step(action)
    result = info.get("hand_result", {})
    seats = ", ".join(f"{a} = {n}" for a, n in zip(env.possible_agents, seated))
    print(f"{seats}: {moves} moves, {result.get('kind', '?')}, points {result.get('points')}")
    print(env.render())


def random_play_rate(game: str, seconds: float) -> float:
    """Agent steps per second of uniform-random legal play through the AEC API."""
    env = rummy_envs.ENVS[game].env()
    rng = random.Random(0)
    steps, seed = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed)
        seed += 1
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else rng.choice(obs["action_mask"].nonzero()[0])
            steps += action is not None
            env.step(action)
            if time.perf_counter() - start >= seconds:  # long games (random Manipulation Rummy) stop mid-way
                break
    return steps / (time.perf_counter() - start)


def deadwood_rate(seconds: float) -> float:
    """Deadwood evaluations per second on random 10-card hands, memo cleared each pass."""
    rng = random.Random(0)
    hands = [rng.sample(range(C.NUM_CARDS), 10) for _ in range(2000)]
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        max_cover.cache_clear()
        for hand in hands:
            deadwood(hand)
        calls += len(hands)
    return calls / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=10, help="shared deals of each game's tournament")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the tournaments")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per speed measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="tournament_results/demo", help="folder of the tournament outputs")
    args = parser.parse_args(argv)
    for game in games_with_agents():
        chosen = demo_agents(game)
        strongest = list(chosen.values())[:2]
        print(f"\n=== {game}: one hand, {strongest[0]} against {strongest[1]} ===")
        show_hand(game, strongest, args.seed)
        options, divisor = SLOW_TOURNAMENTS.get(game, ({}, 1))
        deals = max(1, args.deals // divisor)
        described = f" ({', '.join(f'{k}={v}' for k, v in options.items())})" if options else ""
        print(f"\n=== {game}{described}: tournament of {', '.join(chosen)} over {deals} shared deals ===")
        out = Path(args.out) / f"{game}_{deals}deals_seed{args.seed}"
        run({"game": game, "options": options, "agents": chosen, "deals": deals, "seed": args.seed,
             "workers": args.workers, "output_dir": str(out), "chunk_deals": max(1, deals // (4 * args.workers))},
            show=True)
        print(f"results, games and plots: {out}/")
    print("\n=== speed (this machine; peers: python -m benchmarks.bench_gin_rummy) ===")
    for game in rummy_envs.ENVS:
        print(f"{game}: {random_play_rate(game, args.seconds):,.0f} agent steps/s (random play, full AEC API)")
    print(f"gin deadwood: {deadwood_rate(args.seconds):,.0f} hands/s (random 10-card hands)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
