"""Agents that play any rummy-envs game through its observation, mask and player view."""

from agents import gin, rummy500
from agents.base import Agent, RandomAgent, make_agent, register, registered_agents

register("novice", gin.GIN_GAMES, gin.GinNoviceAgent)
register("heuristic", gin.GIN_GAMES, gin.GinHeuristicAgent)
register("novice", "rummy500", rummy500.Rummy500NoviceAgent)
register("heuristic", "rummy500", rummy500.Rummy500HeuristicAgent)

__all__ = ["Agent", "RandomAgent", "make_agent", "register", "registered_agents"]
