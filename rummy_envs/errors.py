"""Errors shared by every engine and environment."""


class IllegalActionError(ValueError):
    """An action that is not legal now; the game state is left exactly as it was."""

    def __init__(self, action: int, action_name: str, player: int | str, phase: str, legal: list[str] | None = None):
        self.action = action
        self.player = player
        self.phase = phase
        hint = f"; legal: {', '.join(legal[:12])}{' ...' if len(legal) > 12 else ''}" if legal is not None else ""
        super().__init__(f"illegal action {action} ({action_name}) by {player} in phase {phase}{hint}")
