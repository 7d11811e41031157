"""rummy500: the rules engine (its public names)."""

from rummy_envs.games.rummy500.engine import *  # noqa: F401,F403
