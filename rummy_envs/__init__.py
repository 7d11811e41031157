"""rummy-envs: PettingZoo environments and pure rules engines for rummy card games."""

from rummy_envs.errors import IllegalActionError

__version__ = "0.1.0"
__all__ = ["IllegalActionError", "__version__"]
