"""A single-agent Gymnasium view of any rummy-envs game, for single-agent RL libraries.

One seat learns; every other seat is played by an opponent (anything with
``act(observation, action_mask, view) -> int`` and ``reset()``, such as the agents of the
``agents`` package or an exported policy). The wrapper steps the opponents itself, so the
learner only ever sees its own observation, its own action mask and its own rewards: the
other seats' observations and rewards never reach it. The learning seat rotates over
episodes, so a policy learns every seat (dealer and non-dealer alike).

``reset_turns`` and ``step_turns`` are ``reset`` and ``step`` as generators that yield
each opponent move for someone else to answer: ``training.vec_env`` answers the moves of
many envs' policy opponents in one forward pass.

``action_masks()`` returns the learner's legal actions, as sb3-contrib's MaskablePPO
expects. Every game of ``rummy_envs.ENVS`` is registered with Gymnasium as
``rummy_envs/<game>-v0``::

    import gymnasium, rummy_envs.wrappers
    env = gymnasium.make("rummy_envs/gin_rummy-v0", knock_limit=10)

This module imports neither torch nor the ``agents`` package.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import gymnasium
import numpy as np
from gymnasium import spaces

import rummy_envs
from rummy_envs.envs.base import RummyEnv, Segment

MAX_REDEALS = 100  # deals in a row that may end before the learner moves before reset gives up
ILLEGAL_WARNING_AFTER = 3  # the learner's illegal actions before the one warning that it ignores the mask


@runtime_checkable
class Player(Protocol):
    """What may fill an opponent seat: the ``agents.Agent`` protocol."""

    def reset(self) -> None: ...

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any) -> int: ...


@dataclass(frozen=True)
class OpponentTurn:
    """An opponent seat to move, as the ``*_turns`` generators of ``SingleAgentEnv`` yield it:
    the player of that seat and what the seat observes (its view: ``env.aec_env.player_view(agent)``)."""

    player: Player
    agent: str
    observation: np.ndarray
    action_mask: np.ndarray


StepResult = tuple[np.ndarray, float, bool, bool, dict[str, Any]]
Turns = Generator[OpponentTurn, int, Any]
"""A reset or step in progress: it yields each opponent move it needs and is sent the action."""

OpponentFactory = Callable[[np.random.Generator], Player]
"""Builds the player of one opponent seat for one episode from the env's random stream."""

Opponents = Player | Sequence[Player] | OpponentFactory | None


class UniformRandomPlayer:
    """Uniform over the legal actions, drawing from a generator it is given: the default
    opponent, so the wrapper needs no other package."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def reset(self) -> None:
        """Nothing to forget between episodes."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: Any = None) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(legal.size)])


def describe_layout(layout: dict[str, Segment]) -> list[list[Any]]:
    """The segments as ``[name, size, high]`` in order: what a policy's input means, without
    the offsets (they follow from the sizes) and the descriptions."""
    return [[s.name, s.size, float(s.high)] for s in layout.values()]


def layout_hash(layout: dict[str, Segment] | list[list[Any]], num_actions: int) -> str:
    """A short hash of what a policy's input and output mean: the segment names, sizes and
    bounds in order (a layout or its ``describe_layout``), and the number of actions.
    Descriptions are left out on purpose, so rewording a doc string does not invalidate
    trained policies."""
    described = describe_layout(layout) if isinstance(layout, dict) else [list(entry) for entry in layout]
    return hashlib.sha256(json.dumps(described + [["num_actions", num_actions]]).encode()).hexdigest()[:16]


def env_layout_hash(env: Any) -> str:
    """``layout_hash`` of an env: a ``SingleAgentEnv``, a raw AEC env or either wrapped."""
    base = env.unwrapped
    aec = base.aec_env if isinstance(base, SingleAgentEnv) else base
    return layout_hash(aec.observation_layout(), aec.num_actions)


class SingleAgentEnv(gymnasium.Env):
    """One learning seat of a rummy game; opponents play the other seats.

    ``game``: a name of ``rummy_envs.ENVS``. ``options``: the env's keyword options (rules
    options, ``reward``, ``reward_scale``, ``episode``, ...); ``illegal_action`` defaults to
    ``"terminate"`` here (an unmasked action ends the episode with the env's penalty, as RL
    libraries and Gymnasium's checker expect); ``"raise"`` restores the error. ``rich_info``
    defaults to ``True`` here (the episode's last info carries the hand result for people:
    single-agent libraries keep infos as dicts and do not batch them). ``opponents``:
    - ``None``: uniform random players drawing from this env's seeded stream;
    - one player: it plays every other seat (``reset()`` is called every episode);
    - a sequence of players, one per other seat, in seat order after the learner;
    - a factory ``rng -> player`` called for every other seat at every reset (a pool).
    ``learner_seat``: a fixed seat, or ``None`` to rotate: episode k of a seeded run plays
    seat ``(offset + k) % num_players``, the offset drawn from the seed.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}  # every RummyEnv's

    def __init__(self, game: str, opponents: Opponents = None, learner_seat: int | None = None,
                 render_mode: str | None = None, **options: Any) -> None:
        if game not in rummy_envs.ENVS:
            raise ValueError(f"unknown game {game!r}; known games: {', '.join(rummy_envs.ENVS)}")
        self.game = game
        options.setdefault("illegal_action", "terminate")
        options.setdefault("rich_info", True)
        self.aec_env: RummyEnv = rummy_envs.ENVS[game].raw_env(render_mode=render_mode, **options)
        self.metadata = {"render_modes": list(self.aec_env.metadata["render_modes"]),  # per instance, as the env's
                         "render_fps": self.aec_env.metadata["render_fps"]}
        self.num_players = len(self.aec_env.possible_agents)
        if learner_seat is not None and not (isinstance(learner_seat, int) and 0 <= learner_seat < self.num_players):
            raise ValueError(f"learner_seat={learner_seat!r} is invalid; expected None or a seat 0..{self.num_players - 1}")
        self.fixed_seat = learner_seat
        self.render_mode = render_mode
        self.observation_space = self.aec_env.observation_space(self.aec_env.possible_agents[0])["observation"]
        self.action_space = spaces.Discrete(self.aec_env.num_actions)
        self.set_opponents(opponents)
        self.learner = self.aec_env.possible_agents[learner_seat or 0]
        self.seat_players: dict[str, Player] = {}
        self._seat_offset = 0
        self._episodes = 0
        self._mask = np.zeros(self.aec_env.num_actions, bool)
        self._episode_return = 0.0
        self.illegal_actions = 0  # the learner's, over the env's life

    # -- opponents -----------------------------------------------------------------------------
    def set_opponents(self, opponents: Opponents) -> None:
        """Replace the opponents from the next episode on (see the class docstring)."""
        if opponents is not None and not isinstance(opponents, Player) and not callable(opponents):
            others = list(opponents)
            if len(others) != self.num_players - 1 or not all(isinstance(p, Player) for p in others):
                raise ValueError(f"opponents: expected a player, a factory or {self.num_players - 1} players "
                                 f"(one per other seat), got {opponents!r}")
        self.opponents = opponents

    def _players_for_episode(self, learner_seat: int) -> dict[str, Player]:
        others = [(learner_seat + k) % self.num_players for k in range(1, self.num_players)]
        source = self.opponents
        if source is None:
            chosen = [UniformRandomPlayer(self.np_random) for _ in others]
        elif isinstance(source, Player):
            chosen = [source] * len(others)
        elif callable(source):
            chosen = [source(self.np_random) for _ in others]
        else:
            chosen = list(source)
        for player in {id(p): p for p in chosen}.values():
            player.reset()
        return {self.aec_env.possible_agents[seat]: p for seat, p in zip(others, chosen)}

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new episode and play the opponents up to the learner's first move.

        ``options`` go to the AEC env's reset (``deck``, ``dealer``, ``state``)."""
        return self.play_turns(self.reset_turns(seed=seed, options=options))

    def step(self, action: int) -> StepResult:
        """The learner plays ``action``; the opponents play until its next move or the end.

        The reward is the learner's own reward over that stretch. At the episode's end the
        info holds the AEC env's info for the learner plus ``episode_return``, the learner's
        total reward in the episode."""
        return self.play_turns(self.step_turns(action))

    # -- the same, one opponent move at a time ---------------------------------------------------
    def play_turns(self, turns: Turns) -> Any:
        """Run a ``reset_turns`` or ``step_turns`` generator to its end, each opponent acting
        for itself; returns what ``reset`` or ``step`` returns."""
        try:
            turn = next(turns)
            while True:
                turn = turns.send(self.answer(turn))
        except StopIteration as finished:
            return finished.value

    def answer(self, turn: OpponentTurn) -> int:
        """The move of the opponent to move: its ``act`` on its observation, mask and view."""
        return int(turn.player.act(turn.observation, turn.action_mask, self.aec_env.player_view(turn.agent)))

    def reset_turns(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Turns:
        """``reset`` as a generator that yields every opponent move it needs and is sent the
        action, so that a driver may answer the moves of many envs together (one forward pass
        of a policy for all of them); returns ``(observation, info)``."""
        super().reset(seed=seed)
        if seed is not None:
            self._episodes = 0
            self._seat_offset = int(self.np_random.integers(self.num_players))
        for _ in range(MAX_REDEALS):
            seat = self.fixed_seat if self.fixed_seat is not None else (self._seat_offset + self._episodes) % self.num_players
            self._episodes += 1
            self.learner = self.aec_env.possible_agents[seat]
            self.aec_env.reset(seed=int(self.np_random.integers(2**62)), options=options)
            self.seat_players = self._players_for_episode(seat)
            self._episode_return, terminated, truncated = yield from self._opponent_turns()
            if not (terminated or truncated):
                return self._observe(), {"learner_seat": seat}
            if options:
                break
        raise RuntimeError(f"{self.game}: the episode ended before the learning seat had a move "
                           f"({'with these reset options' if options else f'{MAX_REDEALS} deals in a row'})")

    def step_turns(self, action: int) -> Turns:
        """``step`` as a generator, as ``reset_turns``; returns what ``step`` returns."""
        env = self.aec_env
        if env.agent_selection != self.learner or self._learner_done():
            raise RuntimeError("step() called after the episode ended; call reset()")
        action = int(action)
        if not (0 <= action < self._mask.size and self._mask[action]):
            self._note_illegal_action(action)
        env.step(action)
        reward = float(env.rewards.get(self.learner, 0.0))
        more, terminated, truncated = yield from self._opponent_turns()
        reward += more
        self._episode_return += reward
        info = {}
        if terminated or truncated:
            info = {**env.infos.get(self.learner, {}), "episode_return": self._episode_return}
        return self._observe(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False once the episode is over)."""
        return self._mask

    def render(self) -> str | np.ndarray | None:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()

    # -- what the learner may read -------------------------------------------------------------
    def observation_layout(self) -> dict[str, Segment]:
        """The named segments of the observation vector (the AEC env's layout)."""
        return self.aec_env.observation_layout()

    @property
    def learner_seat(self) -> int:
        return self.aec_env.agent_name_mapping[self.learner]

    # -- internals ------------------------------------------------------------------------------
    def _note_illegal_action(self, action: int) -> None:
        """Count the learner's illegal actions; under ``illegal_action="terminate"`` each one
        ends the episode at a penalty, which an unmasked learner can hit on nearly every
        step without noticing, so the ``ILLEGAL_WARNING_AFTER``-th gets one warning."""
        self.illegal_actions += 1
        if self.illegal_actions == ILLEGAL_WARNING_AFTER and self.aec_env.illegal_action == "terminate":
            warnings.warn(f"{self.game}: the learner played {self.illegal_actions} illegal actions (the last: "
                          f"{action}), each ending its episode with a penalty under illegal_action='terminate'; "
                          "use the action mask (action_masks(), which sb3-contrib's MaskablePPO reads) or "
                          "illegal_action='raise' to find the bug", RuntimeWarning, stacklevel=3)

    def _learner_done(self) -> bool:
        env = self.aec_env
        return env.terminations[self.learner] or env.truncations[self.learner]

    def _opponent_turns(self) -> Generator[OpponentTurn, int, tuple[float, bool, bool]]:
        """Opponent moves (and dead steps) until the learner is to move or its episode is over,
        each yielded to be answered; returns the learner's rewards meanwhile and whether it
        terminated or was truncated."""
        env = self.aec_env
        learner = self.learner
        reward = 0.0
        while not (env.terminations[learner] or env.truncations[learner]):
            agent = env.agent_selection
            if agent == learner:
                return reward, False, False
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
            else:
                observed = env.observe(agent)
                env.step((yield OpponentTurn(self.seat_players[agent], agent, observed["observation"],
                                             observed["action_mask"])))
            reward += env.rewards.get(learner, 0.0)
        return reward, bool(env.terminations[learner]), bool(env.truncations[learner])

    def _observe(self) -> np.ndarray:
        observed = self.aec_env.observe(self.learner)
        self._mask = observed["action_mask"].astype(bool)
        return observed["observation"]


def _register() -> None:
    """``rummy_envs/<game>-v0`` for every game, once."""
    for game in rummy_envs.ENVS:
        env_id = f"rummy_envs/{game}-v0"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="rummy_envs.wrappers:SingleAgentEnv", kwargs={"game": game})


_register()
