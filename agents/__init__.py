"""Agents that play any rummy-envs game through its observation, mask and player view."""

import rummy_envs
from agents import gin_belief, gin_rummy, least_count, least_count_belief, manipulation_rummy, rummy500, search
from agents.base import Agent, RandomAgent, make_agent, register, registered_agents
from agents.ppo import NumpyPolicy, PPOAgent, load_policy

register("novice", gin_rummy.GIN_GAMES, gin_rummy.GinNoviceAgent)
register("heuristic", gin_rummy.GIN_GAMES, gin_rummy.GinHeuristicAgent)
register("novice", "rummy500", rummy500.Rummy500NoviceAgent)
register("heuristic", "rummy500", rummy500.Rummy500HeuristicAgent)
register("novice", "least_count", least_count.LeastCountNoviceAgent)
register("heuristic", "least_count", least_count.LeastCountHeuristicAgent)
register("novice", "manipulation_rummy", manipulation_rummy.ManipulationNoviceAgent)
register("heuristic", "manipulation_rummy", manipulation_rummy.ManipulationHeuristicAgent)
search.BELIEFS.update(gin_rummy=gin_belief.GinBelief, hollywood_gin=gin_belief.GinBelief,
                      least_count=least_count_belief.LeastCountBelief)
search.LEAF_VALUES.update(rummy500=rummy500.leaf_value, manipulation_rummy=manipulation_rummy.leaf_value)
register("ismcts", tuple(rummy_envs.ENVS), search.ISMCTSAgent)
register("pimc", tuple(rummy_envs.ENVS), search.PIMCAgent)

__all__ = ["Agent", "NumpyPolicy", "PPOAgent", "RandomAgent", "load_policy", "make_agent", "register",
           "registered_agents"]
