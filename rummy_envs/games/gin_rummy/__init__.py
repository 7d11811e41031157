"""gin_rummy: the rules engine (its public names)."""

from rummy_envs.games.gin_rummy.engine import *  # noqa: F401,F403
