"""The PettingZoo AEC machinery shared by every rummy environment.

A game's env subclasses ``RummyEnv`` and supplies the engine (``_new_state``), the
observation encoder and its named segments; everything else (seeding, rewards, dead
steps, illegal actions, masks, episode ends) lives here once.

Engines used here provide: ``current_player``, ``legal_actions()``, ``apply(a)``,
``is_terminal()``, ``truncated``, ``scores()`` (each player's game score so far, larger is
better), ``standings()`` (what ranks players at the end), ``hand_results`` and ``to_dict()``.

A game whose players can leave before the episode ends (Least Count eliminations) says who
has left with ``_seats_out()``, asked whenever a hand ends. A leaving agent is terminated the PettingZoo way: it gets
its last reward, is selected for one dead step, then is gone from ``agents``; the others
play on. Rewards go only to the agents still in the episode, and still sum to zero: the
points reward is centred on them, and under ``win_loss`` a leaving agent is paid its final
place at once while the agents staying share the opposite amount (their final payment
then makes up the rest of their own place's reward); an episode reset from a state dict in
which seats have already left starts from those payments (``_paid_before_reset``).

Infos have one fixed structure (``INFO_KEYS``: scalars and arrays of one length per seat) in
every step of every episode, from ``reset`` on, so RL libraries can batch them; the rich,
variable result of each hand is added with the env option ``rich_info=True``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import secrets
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from rummy_envs.cards import keyed_word
from rummy_envs.errors import IllegalActionError, UnsupportedRenderModeError, action_id
from rummy_envs.frames import FrameCanvas, FrameSize, Hand, Scene
from rummy_envs.games.base import GameConfig, GameState, PlayerView
from rummy_envs.options import check_bool, check_choice, check_number, unknown_options_error
from rummy_envs.state_dicts import with_env_options


@dataclass(frozen=True)
class Segment:
    """A named slice of the observation vector: ``offset:offset + size``, values in [0, high]."""

    name: str
    offset: int
    size: int
    high: float
    description: str


def make_layout(parts: list[tuple[str, int, float, str]]) -> dict[str, Segment]:
    """Segments laid end to end from ``(name, size, high, description)`` tuples."""
    layout: dict[str, Segment] = {}
    offset = 0
    for name, size, high, description in parts:
        layout[name] = Segment(name, offset, size, high, description)
        offset += size
    return layout


INFO_KEYS = ("hands_finished", "hand_points", "scores", "truncated", "eliminated", "offender_seat")
"""What every agent's info holds at every step (``RummyEnv._set_infos``): hands finished in the game,
each seat's points in the last finished hand, each seat's score so far (final once the
episode is over), whether the episode was truncated, whether this agent left the match
early, and the seat whose illegal action ended the episode (-1 if none)."""


class RummyEnv(AECEnv, ABC):
    """AEC adapter over a pure rules engine (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2,
                "is_parallelizable": False}
    num_actions: ClassVar[int]
    state_class: ClassVar[type[GameState]]  # the engine state: State(config, seed, deck, dealer) and State.from_dict
    config: GameConfig  # the game's rules config (a dataclass with from_kwargs), set before __init__ runs

    def __init__(self, *, num_players: int, render_mode: str | None, reward: str, reward_scale: float,
                 illegal_action: str, rich_info: bool = False, render_seat: int | None = None) -> None:
        super().__init__()
        self.metadata = copy.deepcopy(type(self).metadata)  # per instance: wrappers that edit it touch this env only
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UnsupportedRenderModeError(f"option render_mode={render_mode!r} is invalid; choose one of "
                                             f"{', '.join(map(repr, self.metadata['render_modes']))}")
        check_choice("reward", reward, ("points", "win_loss"))
        check_number("reward_scale", reward_scale, 0, inclusive=False)
        check_choice("illegal_action", illegal_action, ("raise", "terminate"))
        check_bool("rich_info", rich_info)
        if render_seat is not None and (isinstance(render_seat, bool) or not isinstance(render_seat, int)
                                        or not 0 <= render_seat < num_players):
            raise ValueError(f"option render_seat={render_seat!r} is invalid; expected None or a seat 0..{num_players - 1}")
        self.render_seat = render_seat
        self._canvas: FrameCanvas | None = None
        self._last_move: tuple[int, int] | None = None  # (seat, action) of the last action played
        self.render_mode = render_mode
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.illegal_action = illegal_action
        self.rich_info = rich_info
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.layout = self.observation_layout()
        size = sum(s.size for s in self.layout.values())
        high = np.concatenate([np.full(s.size, s.high, np.float32) for s in self.layout.values()])
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, high, (size,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        self.observation_size = size
        state_segments = self.state_layout().values()
        state_high = np.concatenate([np.full(s.size, s.high, np.float32) for s in state_segments])
        self.state_space = spaces.Box(0.0, state_high, state_high.shape, np.float32)
        self.game: GameState | None = None  # the engine state of the episode, from the first reset on
        self.np_random_seed = secrets.randbits(64)  # the stream of an env never seeded
        self._episode = 0  # resets since the last seeded one
        self._np_random: np.random.Generator | None = None
        self._zeros = np.zeros(num_players, np.float32)  # copied into the infos while all zero, never handed out

    # -- to be supplied by each game -----------------------------------------------------------
    @abstractmethod
    def observation_layout(self) -> dict[str, Segment]:
        ...

    @abstractmethod
    def _state_parts(self) -> list[tuple[str, int, float, str]]:
        """``(name, size, high, description)`` of what ``state()`` adds after player_0's
        observation: the hidden cards (every hand, the stock) and the seat to move."""

    @abstractmethod
    def _state_extra(self) -> np.ndarray:
        """The float32 values of ``_state_parts()``, in order."""

    def _rules_config(self, rules: dict[str, Any]) -> GameConfig:
        """The engine's rules config from the rules keywords; an unknown name fails listing
        every option this env accepts, env options included."""
        config_class = self.state_class.config_class
        unknown = set(rules) - {f.name for f in dataclasses.fields(config_class)}
        if unknown:
            raise unknown_options_error(self.metadata["name"], unknown, self.accepted_options())
        return config_class.from_kwargs(**rules)

    @classmethod
    def accepted_options(cls) -> list[str]:
        """Every keyword this env's constructor takes: its env options (the named parameters
        of the constructors below ``RummyEnv``) and the engine's rules options."""
        names = {f.name for f in dataclasses.fields(cls.state_class.config_class)}
        for klass in cls.__mro__:
            if klass is RummyEnv:
                break
            if "__init__" in vars(klass):
                names |= {p.name for p in inspect.signature(klass.__init__).parameters.values()
                          if p.name != "self" and p.kind is not p.VAR_KEYWORD}
        return sorted(names)

    def _new_state(self, seed: int, options: dict[str, Any]) -> GameState:
        """A fresh engine state from the game seed and the reset options: a ``deck`` and
        ``dealer``, or a whole ``state``: a dict, whose options must be this env's, or an
        engine state of this env's rules, which is copied (no dict round trip: for code that
        replays a position many times, such as a baseline played on the same deal)."""
        if "state" not in options:
            return self.state_class(self.config, seed, options.get("deck"), options.get("dealer"))
        if set(options) != {"state"}:
            raise ValueError("reset option 'state' cannot be combined with 'deck' or 'dealer'")
        state = options["state"]
        if isinstance(state, GameState):
            if type(state) is not self.state_class or state.config != self.config:
                raise ValueError(f"reset option 'state': a {type(state).__name__} of other rules than this env's "
                                 f"{self.state_class.__name__} ({self.config})")
            return state.clone()
        return self.state_class.from_dict(with_env_options(state, self.config))

    @abstractmethod
    def _encode(self, player: int) -> np.ndarray:
        ...

    def encode(self, game: GameState, player: int) -> np.ndarray:
        """``player``'s observation vector (what ``observe`` returns under ``"observation"``) in
        any engine state ``game`` of this env's rules, leaving the env's own episode as it was:
        the OpenSpiel bridge's observation tensor."""
        episode = self.game
        self.game = game
        try:
            return self._encode(player)
        finally:
            self.game = episode

    def player_view(self, agent: str) -> PlayerView:
        """What ``agent`` may see, as its game's frozen view dataclass (for rule-based agents,
        search agents and people); it never holds a card hidden from that seat."""
        return self.game.player_view(self.agent_name_mapping[agent])

    @abstractmethod
    def action_to_str(self, action: int) -> str:
        ...

    @abstractmethod
    def str_to_action(self, text: str) -> int:
        ...

    def _hand_info(self, player: int) -> dict[str, Any]:
        """What ``rich_info`` adds to every agent's info when a hand ends: the engine's result
        of that hand, its number and the agent's seat."""
        info = dataclasses.asdict(self.game.hand_results[-1])
        info["hand_number"] = len(self.game.hand_results)
        info["seat"] = player
        return {"hand_result": info}

    def _seats_out(self) -> set[int]:
        """Seats that have left the episode before its end; none unless a game overrides it."""
        return set()

    # -- the state vector and infos -------------------------------------------------------------
    def state_layout(self) -> dict[str, Segment]:
        """Named segments of ``state()``, in order: player_0's observation (its segments named
        ``player_0.<segment>``), then the game's hidden cards and the seat to move."""
        parts = [(f"player_0.{s.name}", s.size, s.high, s.description) for s in self.layout.values()]
        return make_layout(parts + self._state_parts())

    def state(self) -> np.ndarray:
        """Full-information vector (``state_layout()``) for centralised critics."""
        return np.concatenate([self._encode(0), self._state_extra()])

    def _set_infos(self, seats: list[int], out: set[int], offender_seat: int = -1) -> None:
        """Give the agents of ``seats`` their fixed-structure info now (``INFO_KEYS``); ``out`` are
        the seats that have left (``_seats_out()``). Each info gets arrays of its own, writable
        (torch warns on read-only ones), so no agent can change another's."""
        game = self.game
        results = game.hand_results
        points = np.array(results[-1].points, np.float32) if results else self._zeros
        scores = np.array(self._scores, np.float32) if any(self._scores) else self._zeros
        hands_finished, truncated = len(results), bool(game.truncated)
        for p in seats:
            self.infos[self.possible_agents[p]] = {
                "hands_finished": hands_finished,
                "hand_points": points.copy(),
                "scores": scores.copy(),
                "truncated": truncated,
                "eliminated": p in out,
                "offender_seat": offender_seat,
            }

    # -- PettingZoo API ----------------------------------------------------------------------
    @property
    def np_random(self) -> np.random.Generator:
        """A numpy Generator for whoever expects one on a PettingZoo env: made on first use in
        each episode from its game seed. The env draws nothing from it."""
        if self._np_random is None:
            self._np_random, _ = seeding.np_random(self.game.seed if self.game is not None else self.np_random_seed)
        return self._np_random

    @np_random.setter
    def np_random(self, generator: np.random.Generator) -> None:
        self._np_random = generator

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode. ``seed`` fixes everything random; without it the env's own
        stream continues. ``options``: ``deck``, ``dealer`` or ``state`` (an engine dict)."""
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
            self.np_random_seed, self._episode = int(seed), 0
        if options:
            options = dict(options)
            unknown = options.keys() - {"deck", "dealer", "state"}
            if unknown:  # PettingZoo's api_test passes arbitrary keys, so these warn, not fail
                warnings.warn(f"ignoring unknown reset option(s): {', '.join(sorted(unknown))}; known: deck, "
                              "dealer, state", stacklevel=2)
        else:
            options = {}
        game_seed = episode_seed(self.np_random_seed, self._episode)
        self.game = self._new_state(game_seed, options)
        self._last_move = None
        self._episode += 1
        self._np_random = None
        out = self._seats_out()
        seats = [p for p in range(len(self.possible_agents)) if p not in out]
        self.agents = [self.possible_agents[p] for p in seats]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._scores = list(self.game.scores())
        self.infos = {}
        self._set_infos(seats, out)
        self._win_loss_paid = self._paid_before_reset(out)  # paid early when others left (win_loss)
        self._rewards_set = False  # a reward of the last step is not zero (most steps pay nothing)
        self._skip_agent_selection = None
        self._hands_seen = len(self.game.hand_results)
        mover = self.game.current_player
        self.agent_selection = self.possible_agents[mover] if mover >= 0 else self.agents[0]
        self._after_move()
        if self._rewards_set:  # only a state dict that is already over pays at reset
            self._accumulate_rewards()

    def _paid_before_reset(self, out: set[int]) -> dict[str, float]:
        """What ``win_loss`` has paid each agent still in when the episode starts from a state
        dict in which the seats ``out`` have already left: each was paid its place on leaving
        (a place that stays its place to the end) and the seats staying shared the opposite,
        so every agent still in holds an equal share of minus those places. Their final
        payment then sums to zero with the rest, as in an episode played from the deal."""
        paid = 0.0
        if out and self.reward_mode == "win_loss":
            ranks = rank_rewards(self.game.standings())
            paid = -sum(ranks[q] for q in out) / len(self.agents) / self.reward_scale
        return dict.fromkeys(self.agents, paid)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        player = self.agent_name_mapping[agent]
        mask = bytearray(self.num_actions)  # set entry by entry: cheaper than numpy for a few actions
        if player == self.game.current_player:
            for action in self.game.legal_actions():
                mask[action] = 1
        return {"observation": self._encode(player), "action_mask": np.frombuffer(mask, np.int8)}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        legal = game.legal_actions()
        as_int = action if type(action) is int else action_id(action)
        if as_int not in legal:
            if self.illegal_action == "raise":
                name = self.action_to_str(as_int) if as_int is not None else repr(action)
                raise IllegalActionError(action, name, agent, game.phase.name, [self.action_to_str(a) for a in legal])
            self._end_by_illegal_action(agent, action)
            return
        self._cumulative_rewards[agent] = 0.0
        mover = game.current_player
        game.apply(as_int)
        self._last_move = (mover, as_int)
        self._after_move()
        if self._rewards_set:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # -- rewards and episode end ---------------------------------------------------------------
    def _after_move(self) -> None:
        game = self.game
        if len(game.hand_results) == self._hands_seen and not game.is_terminal():
            # Scores only change when a hand ends: the common step pays nothing.
            if self._rewards_set:
                for a in self.agents:
                    self.rewards[a] = 0.0
                self._rewards_set = False
            self.agent_selection = self.possible_agents[game.current_player]
            return
        self._rewards_set = True
        scores = game.scores()
        deltas = [new - old for new, old in zip(scores, self._scores)]
        self._scores = list(scores)
        seats = [self.agent_name_mapping[a] for a in self.agents]  # the seats still in the episode
        if self.reward_mode == "points":
            mean = sum(deltas[p] for p in seats) / len(seats)
            for p in seats:
                self.rewards[self.possible_agents[p]] = (deltas[p] - mean) / self.reward_scale
        else:
            for a in self.agents:
                self.rewards[a] = 0.0
        hand_ended = len(game.hand_results) != self._hands_seen
        self._hands_seen = len(game.hand_results)
        over = game.is_terminal()
        out = self._seats_out()
        self._set_infos(seats, out)
        if self.rich_info:
            for p in seats:
                info = self.infos[self.possible_agents[p]]
                if hand_ended:
                    info.update(self._hand_info(p))
                if over:
                    info["final_scores"] = list(scores)
        if over:
            if self.reward_mode == "win_loss":
                ranks = rank_rewards(game.standings())
                for p in seats:
                    a = self.possible_agents[p]
                    self.rewards[a] = ranks[p] / self.reward_scale - self._win_loss_paid[a]
            for p in seats:
                a = self.possible_agents[p]
                if game.truncated:
                    self.truncations[a] = True
                else:
                    self.terminations[a] = True
            return
        self.agent_selection = self.possible_agents[game.current_player]
        leaving = [p for p in seats if p in out]
        if leaving:
            self._leave(leaving, [p for p in seats if p not in out])

    def _leave(self, leaving: list[int], staying: list[int]) -> None:
        """Terminate the agents of seats that left mid-episode (see the module docstring); their
        dead steps come before the next move."""
        if self.reward_mode == "win_loss":
            ranks = rank_rewards(self.game.standings())
            paid_now = 0.0
            for p in leaving:
                a = self.possible_agents[p]
                self.rewards[a] = ranks[p] / self.reward_scale - self._win_loss_paid[a]
                paid_now += self.rewards[a]
            for p in staying:
                a = self.possible_agents[p]
                self.rewards[a] = -paid_now / len(staying)
                self._win_loss_paid[a] += self.rewards[a]
        for p in leaving:
            self.terminations[self.possible_agents[p]] = True
        self._deads_step_first()

    def _end_by_illegal_action(self, agent: str, action: Any) -> None:
        self._cumulative_rewards[agent] = 0.0
        self._set_infos([self.agent_name_mapping[a] for a in self.agents], self._seats_out(),
                        self.agent_name_mapping[agent])
        for a in self.agents:
            self.rewards[a] = (-1.0 if a == agent else 1.0 / (len(self.agents) - 1)) / self.reward_scale
            self.terminations[a] = True
            if self.rich_info:
                self.infos[a].update(illegal_action=repr(action), offender=agent)
        self._accumulate_rewards()

    # -- rendering ---------------------------------------------------------------------------
    def render(self, mode: str | None = None) -> str | np.ndarray | None:
        """The table in ``mode`` (default: the env's ``render_mode``): ``"ansi"`` returns the
        text, ``"human"`` prints it with suit symbols, ``"rgb_array"`` returns a picture (an
        (H, W, 3) uint8 array of one shape for the env's options: every card face up, or with
        ``render_seat`` what that seat sees, the rest face down), no mode renders nothing. The
        mode argument is for consumers that pass one (RLlib's ``PettingZooEnv``)."""
        if mode is not None:
            check_choice("render mode", mode, tuple(self.metadata["render_modes"]))
        mode = mode or self.render_mode
        if mode is None:
            return None
        if mode == "rgb_array":
            return self.frame(self.render_seat)
        text = self._render_text(symbols=mode == "human")
        if mode == "human":
            print(text)
            return None
        return text

    def frame(self, seat: int | None = None) -> np.ndarray:
        """The position as a picture: every card face up, or what ``seat`` sees with every card
        hidden from it face down (built from that seat's player view alone); the empty table
        before the first reset."""
        if self._canvas is None:
            self._canvas = FrameCanvas(self._frame_size())
        return self._canvas.draw(self.scene(seat))

    def scene(self, seat: int | None = None) -> Scene:
        """The position as the frames, the replay viewer and the play page show it: every card,
        or what ``seat`` sees (built from the seats' player views, the others' hands from
        ``seat``'s view alone); an empty table before the first reset."""
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                                 or not 0 <= seat < len(self.possible_agents)):
            raise ValueError(f"seat {seat!r} is invalid; expected None or a seat 0..{len(self.possible_agents) - 1}")
        if self.game is None:
            return Scene(self.metadata["name"], (), (), ())
        views = [self.game.player_view(p) for p in range(len(self.possible_agents))]
        return self._scene(views, seat)

    @abstractmethod
    def _frame_size(self) -> FrameSize:
        """The seats, table rows and text lines of this game's frames under its options."""

    @abstractmethod
    def _scene(self, views: list[PlayerView], seat: int | None) -> Scene:
        """The position as a picture shows it, from the seats' views: all of them face up, or
        ``views[seat]`` alone with the other hands face down."""

    def _frame_hands(self, views: list[PlayerView], seat: int | None, sizes: list[int],
                     notes: list[str]) -> tuple[Hand, ...]:
        """Every seat's hand for a frame: its own view's cards when all are shown or it is
        ``seat``, else ``sizes[q]`` cards face down (the hand sizes ``seat`` sees, by absolute
        seat); ``notes[q]`` follows the seat's name."""
        game = self.game
        mover = -1 if game.is_terminal() else game.current_player
        hands = []
        for q, view in enumerate(views):
            label = f"player_{q}{notes[q]}"
            if seat is None or q == seat:
                hands.append(Hand(label, tuple(view.hand), len(view.hand), q == mover))
            else:
                hands.append(Hand(label, None, sizes[q], q == mover))
        return tuple(hands)

    @staticmethod
    def _by_seat(relative: Any, me: int) -> list[Any]:
        """Per-seat values of a view whose seats are relative to seat ``me`` (index 0 is ``me``),
        indexed by absolute seat."""
        n = len(relative)
        return [relative[(q - me) % n] for q in range(n)]

    def _frame_title(self, views: list[PlayerView], seat: int | None, where: str) -> str:
        """The frame's first line: the game, ``where`` (hand or round), the phase, who moves
        and whose view it is."""
        game = self.game
        moving = "game over" if game.is_terminal() else f"player_{game.current_player} to move"
        viewer = "every card shown" if seat is None else f"seen by player_{seat}"
        return f"{self.metadata['name']}  {where}  {game.phase.name}  {moving}  ({viewer})"

    def _move_line(self, seat: int | None) -> str:
        """The last action and who played it, as ``seat`` may know it."""
        last = self.last_move(seat)
        return "last move: -" if last is None else f"last move: player_{last[0]} {last[1]}"

    def last_move(self, seat: int | None = None) -> tuple[int, str] | None:
        """The seat that played the last action and the action's name as ``seat`` may know it
        (a hidden card left out, as in gin's face-down knock card; every name when ``seat`` is
        None or played it); None before the first move of the episode."""
        if self._last_move is None:
            return None
        mover, action = self._last_move
        name = self.action_to_str(action)
        return mover, name if seat is None or seat == mover else self._move_seen(name, mover, seat)

    def _move_seen(self, name: str, mover: int, seat: int) -> str:
        """What ``seat`` sees of another seat's action named ``name``: the name, in games whose
        actions are all public."""
        return name

    @abstractmethod
    def _render_text(self, symbols: bool) -> str:
        ...

    def close(self) -> None:
        pass


def episode_seed(seed: int, episode: int) -> int:
    """The game seed of reset number ``episode`` (from 0) after ``reset(seed=seed)``: the top 62
    bits of ``cards.keyed_word("<seed>:<episode>")``, so neighbouring seeds and episodes deal
    unrelated games. Cheap (0.5 us), where seeding a numpy generator on every reset cost 8 us."""
    return keyed_word(f"{seed}:{episode}") >> 2


def bits_to_array(bits: int, size: int) -> np.ndarray:
    """float32 vector of length ``size`` whose entry i is bit i of ``bits`` (a Python int)."""
    raw = np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, count=size, bitorder="little").astype(np.float32)


def rank_rewards(scores: list[float]) -> list[float]:
    """+1 for first, -1 for last, linear in between; tied players share their places."""
    n = len(scores)
    if n < 2:
        return [0.0] * n
    order = sorted(range(n), key=lambda i: -scores[i])
    place_value = [1.0 - 2.0 * k / (n - 1) for k in range(n)]
    out = [0.0] * n
    k = 0
    while k < n:
        j = k
        while j + 1 < n and scores[order[j + 1]] == scores[order[k]]:
            j += 1
        shared = sum(place_value[k : j + 1]) / (j - k + 1)
        for i in order[k : j + 1]:
            out[i] = shared
        k = j + 1
    return out



class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with a direct ``last()``, ``step()`` and ``agent_iter()``.

    The inherited methods read the wrapped env's attributes through two ``__getattr__`` layers
    on every call, which costs more than a whole engine step; these check the same order rules
    and ask the wrapped env directly.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self.env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _DirectOrderEnforcingIterable(self, max_iter)

    def render(self, mode: str | None = None) -> str | None:
        """``RummyEnv.render``, with the same optional mode argument."""
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return self.env.render(mode)


class _DirectOrderEnforcingIterable(AECOrderEnforcingIterable):
    """What ``OrderEnforcing.agent_iter()`` returns: iterates with the direct iterator below."""

    def __iter__(self) -> AECOrderEnforcingIterator:
        return _DirectOrderEnforcingIterator(self.env, self.max_iter)


class _DirectOrderEnforcingIterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator`` that reads ``agents`` and ``agent_selection`` from the
    wrapped env directly, with the same checks."""

    def __next__(self) -> str:
        wrapper: Any = self.env
        env = wrapper.env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return env.agent_selection
