"""hollywood_gin: Hollywood Gin, the gin engine (``rummy_envs.games.gin_rummy``) hand for hand,
scored on a three-column scoresheet (docs/hollywood_gin.md states the rules; its section
"Where the rules live in the code" maps each rule to its function).

- ``options``: ``HollywoodConfig``, gin's options with Hollywood's defaults and the sheet's.
- ``view``: ``HollywoodView``, gin's view of a seat plus the sheet.
- ``scoresheet``: ``Scoresheet``, the three columns: the entry rule, closing, settling, the
  match winner.
- ``state``: ``HollywoodState``, gin's state keeping the sheet as its match score.
"""

from rummy_envs.games.hollywood_gin.options import HollywoodConfig
from rummy_envs.games.hollywood_gin.scoresheet import NUM_COLUMNS, SHEET_KEYS, Scoresheet
from rummy_envs.games.hollywood_gin.state import HollywoodState
from rummy_envs.games.hollywood_gin.view import HollywoodView

__all__ = ["NUM_COLUMNS", "SHEET_KEYS", "HollywoodConfig", "HollywoodState", "HollywoodView", "Scoresheet"]
