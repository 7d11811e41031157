"""Agents that play any rummy-envs game through its observation, mask and player view."""

from agents import gin
from agents.base import Agent, RandomAgent, make_agent, register, registered_agents

register("novice", gin.GIN_GAMES, gin.GinNoviceAgent)
register("heuristic", gin.GIN_GAMES, gin.GinHeuristicAgent)

__all__ = ["Agent", "RandomAgent", "make_agent", "register", "registered_agents"]
