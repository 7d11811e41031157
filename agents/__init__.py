"""Agents that play any rummy-envs game through its observation, mask and player view."""

from agents.base import Agent, RandomAgent, make_agent, registered_agents

__all__ = ["Agent", "RandomAgent", "make_agent", "registered_agents"]
