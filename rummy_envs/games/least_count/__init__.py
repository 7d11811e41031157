"""least_count: the rules engine (its public names)."""

from rummy_envs.games.least_count.engine import *  # noqa: F401,F403
