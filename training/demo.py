"""Quick demo: agents play and render a few hands of every game, then a speed summary.

Runs on embedded defaults in well under a minute; ``--help`` lists the knobs.
"""

from __future__ import annotations

import argparse
import random
import time

import rummy_envs
from agents import make_agent
from rummy_envs import cards as C
from rummy_envs.games.gin import deadwood
from rummy_envs.melds import max_cover


def play_hand(game: str, agent_names: list[str], seed: int, render: bool) -> dict:
    """One episode of ``game`` between named agents; returns the final info of player_0."""
    env = rummy_envs.ENVS[game].env(render_mode="ansi" if render else None)
    env.reset(seed=seed)
    agents = {a: make_agent(n, game, seed + i) for i, (a, n) in enumerate(zip(env.possible_agents, agent_names))}
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        if term or trunc:
            action = None
        else:
            action = agents[agent].act(obs["observation"], obs["action_mask"], env.unwrapped.player_view(agent))
        env.step(action)
    if render:
        print(env.render())
    return {"rewards": totals, "result": info.get("hand_result", {})}


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
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=3, help="hands rendered per game")
    parser.add_argument("--agents", nargs="+", default=["random", "random"], help="agent names by seat")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per speed measurement")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for game in rummy_envs.ENVS:
        print(f"=== {game}: {' vs '.join(args.agents)} ===")
        for i in range(args.hands):
            outcome = play_hand(game, args.agents, args.seed + i, render=True)
            result = outcome["result"]
            print(f"hand {i + 1}: {result.get('kind', '?')}, points {result.get('points')}, rewards {outcome['rewards']}\n")
    print("=== speed (this machine; peers: python -m benchmarks.bench_gin) ===")
    for game in rummy_envs.ENVS:
        print(f"{game}: {random_play_rate(game, args.seconds):,.0f} agent steps/s (random play, full AEC API)")
    print(f"gin deadwood: {deadwood_rate(args.seconds):,.0f} hands/s (random 10-card hands)")
    return 0
