"""hollywood_gin: the rules engine (its public names)."""

from rummy_envs.games.hollywood_gin.engine import *  # noqa: F401,F403
