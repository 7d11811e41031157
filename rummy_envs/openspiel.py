"""Every game as an OpenSpiel game, so OpenSpiel's algorithms (MCCFR, information-set MCTS,
``evaluate_bots``, ...) run on all five (``pip install -e ".[openspiel]"``).

Importing this module registers five Python games with ``pyspiel``: ``python_gin_rummy``,
``python_hollywood_gin``, ``python_rummy500``, ``python_manipulation_rummy`` and
``python_least_count``. Each takes every rules option of its engine as a game parameter
(``pyspiel.load_game("python_rummy500(num_players=4)")``); ``load_game(game, **options)``
takes our option names and values as the envs do. docs/openspiel.md has the whole story.

- **Chance.** A game opens with ``SEED_BYTES`` chance nodes, each a uniform byte; together
  they are the 64-bit seed from which the engine deals every hand of the game, exactly as
  ``State(config, seed)`` does for the envs. After that the game has no chance node: the
  stock's order is fixed by the deal, as with a shuffled physical deck.
- **Rewards.** ``returns()`` is the engine's zero-sum ``returns()``; ``rewards()`` is its
  change over the last action (non-zero when a hand ends), so rewards add up to the returns.
- **Observations.** ``observation_tensor(p)`` is the env's observation vector of seat ``p``
  (named by the env's segments), ``observation_string(p)`` the fields of ``p``'s player view.
  ``information_state_string(p)`` has perfect recall: the view after the deal, then for
  every action who moved (and, for ``p``'s own actions, which), and the view fields that
  changed for ``p``. Both come from player views only, so nothing hidden from ``p`` leaks.
- **Determinization.** ``resample_from_infostate(p, sampler)`` deals a world consistent with
  ``p``'s view through the engine's ``sample_from_view`` (the search agents' sampler).
- **Serialization.** A state pickles as the engine's state dict plus the information-state
  records, so ``serialize`` / ``deserialize_state`` carry our state dicts.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass
from typing import Any, ClassVar, get_args

import numpy as np
import pyspiel

import rummy_envs
from rummy_envs.games.base import GameConfig, GameState, PlayerView
from rummy_envs.view_text import field_text, shown_fields, view_fields

SEED_BYTES = 8
"""Chance nodes at the start of a game: the bytes of the deal seed, least significant first."""
NO_VALUE = -1
"""The game parameter value of an integer option whose value is none (the rules' default)."""
SEQUENCE_SEPARATOR = ";"
"""What joins the integers of a tuple option in its game parameter (``sequence_lengths="3;5"``,
a single one written ``"3;"``): OpenSpiel's game strings separate parameters by commas and
read a text of digits and signs as a number."""

PLAYER_COUNTS = {"gin_rummy": (2, 2), "hollywood_gin": (2, 2), "rummy500": (2, 8),
                 "manipulation_rummy": (2, 5), "least_count": (2, 10)}
"""The fewest and the most players of each game, as its rules options allow."""
LONG_NAMES = {"gin_rummy": "Gin Rummy", "hollywood_gin": "Hollywood Gin", "rummy500": "Rummy 500",
              "manipulation_rummy": "Manipulation Rummy", "least_count": "Least Count"}


def short_name(game: str) -> str:
    """The name a game is registered under with ``pyspiel``."""
    return f"python_{game}"


def _state_class(game: str) -> type[GameState]:
    if game not in rummy_envs.ENVS:
        raise ValueError(f"game={game!r} is invalid; choose one of {', '.join(rummy_envs.ENVS)}")
    return rummy_envs.ENVS[game].raw_env.state_class


def _fields(game: str) -> list[dataclasses.Field]:
    return list(dataclasses.fields(_state_class(game).config_class))


def _optional(field: dataclasses.Field) -> bool:
    return type(None) in get_args(field.type) or "None" in str(field.type)


def _is_sequence(field: dataclasses.Field) -> bool:
    return str(field.type).startswith("tuple")


def _to_parameter(field: dataclasses.Field, value: Any) -> bool | int | float | str:
    """An option's value as a pyspiel game parameter: none as ``NO_VALUE`` (integer options)
    or ``""`` (text options), a tuple of integers joined by ``SEQUENCE_SEPARATOR``."""
    if value is None:
        return "" if "str" in str(field.type) else NO_VALUE
    if isinstance(value, (tuple, list)):
        return SEQUENCE_SEPARATOR.join(str(v) for v in value) + (SEQUENCE_SEPARATOR if len(value) == 1 else "")
    return value


def _from_parameter(field: dataclasses.Field, value: Any) -> Any:
    """The option value a game parameter stands for (the inverse of ``_to_parameter``)."""
    if _is_sequence(field):
        parts = value.removesuffix(SEQUENCE_SEPARATOR).split(SEQUENCE_SEPARATOR) if isinstance(value, str) else []
        if not parts or not all(part.strip().isdigit() for part in parts):
            raise ValueError(f"game parameter {field.name}={value!r} is invalid; expected integers "
                             f"joined by {SEQUENCE_SEPARATOR!r}, such as \"3;5\"")
        return tuple(int(part) for part in parts)
    if _optional(field) and value in (NO_VALUE, ""):
        return None
    return value


def parameter_specification(game: str) -> dict[str, bool | int | float | str]:
    """Every rules option of ``game`` with its default, as pyspiel game parameters."""
    return {f.name: _to_parameter(f, f.default) for f in _fields(game)}


def _known_fields(game: str, names: Any) -> dict[str, dataclasses.Field]:
    """``game``'s option fields by name; ValueError naming any of ``names`` it has not."""
    fields = {f.name: f for f in _fields(game)}
    unknown = sorted(set(names) - set(fields))
    if unknown:
        raise ValueError(f"unknown {game} option(s) {', '.join(unknown)}; known: {', '.join(fields)}")
    return fields


def game_parameters(game: str, **options: Any) -> dict[str, bool | int | float | str]:
    """pyspiel parameters for our rules options (names and values as the envs take them);
    an unknown name raises ValueError naming it."""
    fields = _known_fields(game, options)
    return {name: _to_parameter(fields[name], value) for name, value in options.items()}


def load_game(game: str, **options: Any) -> pyspiel.Game:
    """``pyspiel.load_game`` for ``game`` with our rules options, such as
    ``load_game("least_count", num_players=6, cut_joker=True)``."""
    return pyspiel.load_game(short_name(game), game_parameters(game, **options))


def game_type(game: str) -> pyspiel.GameType:
    """The game's pyspiel type: sequential, explicit chance (the seed bytes), imperfect
    information, zero-sum, rewards when hands end."""
    fewest, most = PLAYER_COUNTS[game]
    return pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"Python {LONG_NAMES[game]} (rummy-envs)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=most,
        min_num_players=fewest,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameter_specification(game),
    )


class RummyGame(pyspiel.Game):
    """One of our games under one set of rules options, for pyspiel; a subclass per game
    names it (pyspiel registers a class: a registered closure crashes the interpreter's exit)."""

    game_name: ClassVar[str]

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game = self.game_name
        params = dict(params or {})
        fields = _known_fields(game, params)
        options = {name: _from_parameter(fields[name], value) for name, value in params.items()}
        self.state_class = _state_class(game)
        self.config: GameConfig = self.state_class.config_class.from_kwargs(**options)
        self.encoder = rummy_envs.ENVS[game].raw_env(**options)  # its encoder writes the tensors
        low, high = self.state_class.utility_bounds(self.config)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.encoder.num_actions,
            max_chance_outcomes=256,
            num_players=self.config.num_players,
            min_utility=float(low),
            max_utility=float(high),
            utility_sum=0.0,
            max_game_length=self.state_class.max_game_length(self.config),
        )
        super().__init__(game_type(game), info, params)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        """Pickled as its game string, loaded again through pyspiel's registry."""
        return pyspiel.load_game, (str(self),)

    def new_initial_state(self) -> RummyState:
        """The start of a game: the first chance node of the deal seed."""
        return RummyState(self)

    def new_dealt_state(self, seed: int) -> RummyState:
        """The state after the chance nodes chose ``seed``: the deal of ``State(config, seed)``."""
        if not 0 <= seed < 256 ** SEED_BYTES:
            raise ValueError(f"seed={seed!r} is invalid; expected 0 <= seed < 2**{8 * SEED_BYTES}")
        state = self.new_initial_state()
        for byte in seed.to_bytes(SEED_BYTES, "little"):
            state.apply_action(byte)
        return state

    def make_py_observer(self, iig_obs_type: pyspiel.IIGObservationType | None = None,
                         params: dict[str, Any] | None = None) -> RummyObserver:
        """The observation (default) or, with perfect recall, the information state, always of
        one player's own view: the only kind offered."""
        if params:
            raise ValueError(f"observation parameters are not supported; got {params!r}")
        if iig_obs_type is None:
            return RummyObserver(self, perfect_recall=False)
        if not iig_obs_type.public_info or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError("only a player's own observation is offered (public_info=True, "
                             "private_info=SINGLE_PLAYER)")
        return RummyObserver(self, perfect_recall=iig_obs_type.perfect_recall)


TEXT_SKIPS = ("legal_actions", "rules")
"""View fields the strings leave out: the legal actions (the state has them) and the rules
(the game's parameters)."""


def _view_text(view: PlayerView) -> str:
    return "\n".join(f"{name}: {text}" for name, text in view_fields(view, TEXT_SKIPS))


Step = tuple[int, int, tuple[tuple[str, Any], ...]]
"""What one player saw of one action: the mover, the action when the player is the mover
(else -1) and the ``(field, value)`` pairs of its view that changed."""


class _Record:
    """One player's information-state record: lines of text, then the view it opened with and
    the steps since, kept as values until the text is asked for. ``opened`` once it holds (or
    held) its opening view."""

    __slots__ = ("lines", "opened", "opening", "steps")

    def __init__(self, lines: list[str], opened: bool = False, opening: PlayerView | None = None,
                 steps: list[Step] | None = None) -> None:
        self.lines = lines
        self.opened = opened
        self.opening = opening
        self.steps = steps if steps is not None else []

    def open_with(self, view: PlayerView) -> None:
        """Open the record with ``view``, unless it opened before (a player who goes on)."""
        if not self.opened:
            self.opening, self.opened = view, True

    def text(self, engine: GameState) -> str:
        """The record as text, one line a step (``engine`` names the actions)."""
        if self.opening is not None:
            self.lines.append(_view_text(self.opening))
            self.opening = None
        for mover, action, changes in self.steps:
            seen = f"I played {engine.action_to_str(action)}" if action >= 0 else f"player {mover} moved"
            changed = "; ".join(f"{name}={field_text(name, value)}" for name, value in changes)
            self.lines.append(f"{seen}: {changed}" if changed else seen)
        self.steps.clear()
        return "\n".join(self.lines)

    def copy(self) -> _Record:
        return _Record(list(self.lines), self.opened, self.opening, list(self.steps))


@dataclass
class _Play:
    """The Python side of a state: what ``clone`` copies and ``serialize`` pickles.

    The records are written lazily, since random play and rollouts never read them: ``moves``
    are the actions applied since ``origin`` (the engine when the records opened, never
    changed), and the records cover the first ``covered`` of them, replayed on ``cursor``
    (``views`` are the players' views there; no cursor and no views before the first
    catch-up). ``returns`` and ``rewards`` are the engine's returns now and their change over
    the last action."""

    game: str
    seed_bytes: list[int]
    engine: GameState | None = None
    records: list[_Record] = dataclasses.field(default_factory=list)
    origin: GameState | None = None
    moves: list[int] = dataclasses.field(default_factory=list)
    covered: int = 0
    cursor: GameState | None = None
    views: list[PlayerView] = dataclasses.field(default_factory=list)
    returns: list[float] = dataclasses.field(default_factory=list)
    rewards: list[float] = dataclasses.field(default_factory=list)

    def start(self, engine: GameState, records: list[_Record] | None = None) -> None:
        """Begin play in ``engine``: each player's record opens with its view there, after
        ``records`` when given (what each player recalls of an earlier world; a record that
        already holds a view goes on from it)."""
        n = engine.config.num_players
        self.engine, self.origin = engine, engine.clone()
        self.records = records or [_Record([f"player {p} of {n}"]) for p in range(n)]
        self.moves, self.covered, self.cursor, self.views = [], 0, None, []
        self.returns = list(engine.returns())
        self.rewards = [0.0] * n

    def play(self, action: int) -> None:
        """Apply a player's action to the engine (the records catch up when read)."""
        engine = self.engine
        engine.apply(action)
        self.moves.append(action)
        returns = engine.returns()
        self.rewards = [new - old for new, old in zip(returns, self.returns)]
        self.returns = list(returns)

    def catch_up(self) -> None:
        """Record every move not yet recorded: what each player saw of it."""
        if self.cursor is None:
            self.cursor = self.origin.clone()
            self.views = [self.cursor.player_view(p) for p in range(len(self.records))]
            for record, view in zip(self.records, self.views):
                record.open_with(view)
        cursor, views = self.cursor, self.views
        for action in self.moves[self.covered:]:
            mover = cursor.current_player
            cursor.apply(action)
            for p, record in enumerate(self.records):
                before, after = views[p], cursor.player_view(p)
                changes = tuple((name, getattr(after, name)) for name in shown_fields(type(after), TEXT_SKIPS)
                                if getattr(before, name) != getattr(after, name))
                record.steps.append((mover, action if p == mover else -1, changes))
                views[p] = after
        self.covered = len(self.moves)

    def record_text(self, player: int) -> str:
        self.catch_up()
        return self.records[player].text(self.engine)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Play:
        engine, cursor = self.engine, self.cursor
        return _Play(self.game, list(self.seed_bytes), None if engine is None else engine.clone(),
                     [r.copy() for r in self.records], self.origin, list(self.moves), self.covered,
                     None if cursor is None else cursor.clone(), list(self.views), list(self.returns),
                     list(self.rewards))

    def __getstate__(self) -> dict[str, Any]:
        """The engine as its state dict, the records as text (their origin is now)."""
        texts = [self.record_text(p).split("\n") for p in range(len(self.records))] if self.engine else []
        return {"game": self.game, "seed_bytes": self.seed_bytes, "returns": self.returns, "rewards": self.rewards,
                "records": texts, "state": None if self.engine is None else self.engine.to_dict()}

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.game, self.seed_bytes = data["game"], list(data["seed_bytes"])
        self.engine, self.records, self.origin = None, [], None
        self.moves, self.covered, self.cursor, self.views = [], 0, None, []
        if data["state"] is not None:
            self.start(_state_class(self.game).from_dict(data["state"]), [_Record(lines, opened=True) for lines in data["records"]])
        self.returns, self.rewards = data["returns"], data["rewards"]


class RummyState(pyspiel.State):
    """A position of one of our games for pyspiel: the deal seed's chance nodes, then the
    engine state."""

    def __init__(self, game: RummyGame) -> None:
        super().__init__(game)
        self._play = _Play(game.game_name, [])
        self._config = game.config

    @property
    def engine(self) -> GameState | None:
        """The engine state, once the chance nodes have chosen the deal seed."""
        return self._play.engine

    def current_player(self) -> int:
        engine = self._play.engine
        if engine is None:
            return pyspiel.PlayerId.CHANCE
        if engine.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return engine.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self._play.engine.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Every byte of the deal seed, equally likely."""
        return [(byte, 1 / 256) for byte in range(256)] if self._play.engine is None else []

    def _apply_action(self, action: int) -> None:
        play = self._play
        if play.engine is not None:
            play.play(int(action))
            return
        if not 0 <= action < 256:
            raise ValueError(f"chance outcome {action!r} is invalid; a seed byte is 0..255")
        play.seed_bytes.append(int(action))
        if len(play.seed_bytes) == SEED_BYTES:
            seed = int.from_bytes(bytes(play.seed_bytes), "little")
            play.start(self.get_game().state_class(self._config, seed))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"SEED_BYTE({len(self._play.seed_bytes)}={action})"
        engine = self._play.engine
        if engine is None:
            raise ValueError(f"action {action!r} of player {player} before the deal: only seed bytes come first")
        return engine.action_to_str(action)

    def is_terminal(self) -> bool:
        engine = self._play.engine
        return engine is not None and engine.is_terminal()

    def returns(self) -> list[float]:
        play = self._play
        return list(play.returns) if play.engine is not None else [0.0] * self._config.num_players

    def rewards(self) -> list[float]:
        play = self._play
        return list(play.rewards) if play.engine is not None else [0.0] * self._config.num_players

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> RummyState:
        """A state ``player_id`` cannot tell from this one: its record kept, the hidden cards
        dealt at random by the engine's ``sample_from_view`` from its view alone, the seed of
        later hands drawn afresh. The other players' records restart from their views in the
        sampled world, which has no past of its own; ``history()`` stays this state's."""
        state = self.clone()
        engine = self._play.engine
        if engine is None:
            return state
        rng = random.Random(int(probability_sampler() * 2 ** 53))
        world = type(engine).sample_from_view(engine.player_view(player_id), rng)
        world.seed = rng.getrandbits(8 * SEED_BYTES)
        n = self._config.num_players
        play = state._play
        play.catch_up()
        records = [play.records[p] if p == player_id else _Record([f"player {p} of {n}", "resampled"]) for p in range(n)]
        returns, rewards = play.returns, play.rewards
        play.start(world, records)  # the player's view is unchanged: its record goes on
        play.returns, play.rewards = returns, rewards
        return state

    def information_state_record(self, player: int) -> str:
        """``player``'s perfect-recall record (``information_state_string``)."""
        play = self._play
        if play.engine is None:
            return f"player {player} of {self._config.num_players}: before the deal"
        return play.record_text(player)

    def observation_text(self, player: int) -> str:
        """``player``'s view now, field by field (``observation_string``)."""
        engine = self._play.engine
        return "" if engine is None else _view_text(engine.player_view(player))

    def __str__(self) -> str:
        """The engine's state dict as JSON (during the deal, the seed bytes chosen so far)."""
        engine = self._play.engine
        if engine is None:
            return f"dealing; seed bytes so far: {self._play.seed_bytes}"
        return json.dumps(engine.to_dict(), sort_keys=True, separators=(",", ":"))


class RummyObserver:
    """pyspiel's observer of one player: the env's observation vector and view text, or with
    perfect recall the information-state record (and no tensor)."""

    def __init__(self, game: RummyGame, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self.encoder = game.encoder
        if perfect_recall:
            self.tensor = None
            self.dict: dict[str, np.ndarray] = {}
            return
        self.tensor = np.zeros(game.encoder.observation_size, np.float32)
        self.dict = {name: self.tensor[s.offset:s.offset + s.size] for name, s in game.encoder.layout.items()}

    def set_from(self, state: RummyState, player: int) -> None:
        if self.tensor is None:
            return
        engine = state.engine
        if engine is None:
            self.tensor.fill(0.0)
        else:
            self.tensor[:] = self.encoder.encode(engine, player)

    def string_from(self, state: RummyState, player: int) -> str:
        return state.information_state_record(player) if self.perfect_recall else state.observation_text(player)


class GinRummyGame(RummyGame):
    game_name = "gin_rummy"


class HollywoodGinGame(RummyGame):
    game_name = "hollywood_gin"


class Rummy500Game(RummyGame):
    game_name = "rummy500"


class ManipulationRummyGame(RummyGame):
    game_name = "manipulation_rummy"


class LeastCountGame(RummyGame):
    game_name = "least_count"


GAME_CLASSES: dict[str, type[RummyGame]] = {cls.game_name: cls for cls in (
    GinRummyGame, HollywoodGinGame, Rummy500Game, ManipulationRummyGame, LeastCountGame)}
"""The pyspiel game class of each game, by our game name."""


def _register() -> None:
    """Register every game with pyspiel, once (importing the module again does nothing)."""
    registered = {t.short_name for t in pyspiel.registered_games()}
    for game, game_class in GAME_CLASSES.items():
        if short_name(game) not in registered:
            pyspiel.register_game(game_type(game), game_class)


_register()

__all__ = ["GAME_CLASSES", "NO_VALUE", "PLAYER_COUNTS", "SEED_BYTES", "RummyGame", "RummyObserver", "RummyState", "game_parameters",
           "game_type", "load_game", "parameter_specification", "short_name"]
