"""rummy-envs: PettingZoo environments and pure rules engines for rummy card games."""

from rummy_envs import gin_rummy_v0, hollywood_gin_v0, least_count_v0, manipulation_rummy_v0, rummy500_v0
from rummy_envs.errors import IllegalActionError

__version__ = "0.1.0"

ENVS = {"gin_rummy": gin_rummy_v0, "hollywood_gin": hollywood_gin_v0, "rummy500": rummy500_v0,
        "manipulation_rummy": manipulation_rummy_v0, "least_count": least_count_v0}
"""Environment modules by game name; each has ``env(**options)`` and ``raw_env``."""

__all__ = ["ENVS", "IllegalActionError", "__version__", "gin_rummy_v0", "hollywood_gin_v0", "least_count_v0",
           "manipulation_rummy_v0", "rummy500_v0"]
