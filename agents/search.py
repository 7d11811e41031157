"""Search agents over determinizations of a seat's information set: single-observer
information-set MCTS (``ismcts``) and flat determinized Monte Carlo (``pimc``), for every game.

Both see only what their seat may see: each iteration plays on a full state drawn from the
seat's view (the hidden cards dealt at random, consistently with everything the view holds:
the engine's ``sample_from_view`` once a decision, then ``sample_determinization`` of that
world for the seat, which deals from the same worlds for less) with the engine's own
``clone``, ``apply`` and ``legal_actions``. Nothing reads the true state. A game may add a
*belief* (``BELIEFS``; the gin games' ``agents.gin_belief.GinBelief``, Least Count's
``agents.least_count_belief.LeastCountBelief``), kept from the views of every decision of the
seat in the hand, whose worlds replace the uniform ones: in gin the other hand weighted by how
likely its play was from it, in Least Count the others' counts as a network fitted to
heuristic play reads them (``belief=False`` turns it off; Least Count's is off unless
``belief=True``).

A world is played out by a *rollout*: the moves of a bundled agent (``rollout="novice"``,
the default) or uniformly random ones, until the hand ends (in a match, the end of the current hand:
the search plays each hand for its points) or ``rollout_depth`` decisions have been made; a
game may add a *leaf value* (``LEAF_VALUES``: an estimate of each seat's payoff for the rest
of the hand from the position, for example hand values) for a rollout cut short. The value of a
world is each seat's payoff gained from the root: ``returns()`` at the end minus
``returns()`` at the root, plus the leaf value.

``ismcts`` (Cowling, Powley and Whitehouse's single-observer ISMCTS): one tree per
decision, its nodes keyed by the sequence of actions from the root, shared by every
determinization. At a node, only the actions legal in the current world compete; each child
counts the times it was available, and the upper confidence bound uses that count in place of
its parent's visits. Single-observer: in four of the games an action id is the same public
event in every world (a discard names its card; a draw from the stock says that a card was
drawn, not which), so the seat's tree of action ids is a faithful picture of what it can
tell apart, and one tree shares all statistics. In Least Count a discard names positions in
the mover's sorted hand, so an opponent's discard id stands for different cards in
different worlds: there an opponent's node pools different public events (its averages stay
sound; the tree just cannot tell them apart).
Progressive widening keeps wide nodes (Manipulation's placements, Rummy 500's picks) narrow:
a node visited ``n`` times has at most ``widening * (n + 1) ** 0.5`` children, so its visits go to
few actions instead of one each to many.

A noisy search should not throw away a good move for a lucky one: each decision starts
from the ``prior`` agent's move (the heuristic), which is expanded first and kept unless the
search's choice beats it by ``confidence`` standard errors of the difference. In ``ismcts``
the root's moves were met in different worlds, so their difference carries each world's
luck; with ``verify=N`` the tree's choice is instead played beside the prior's move in ``N``
fresh worlds (rolled out by ``verify_rollout``) and judged by the paired differences, as
``pimc`` judges every move. ``verify_moves=K`` plays each of the tree's ``K`` most visited
moves (other than the prior's) in those worlds, and the one of the best mean is judged.

The budget is ``iterations`` per decision, or ``ms`` milliseconds per decision (then
``iterations`` caps it too when given); with an iteration budget and a seed the agent is
deterministic. Each game's defaults are in ``SETTINGS``. The tree is dropped after every
decision and holds at most ``max_nodes`` nodes, so memory stays bounded over any tournament.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

import rummy_envs
from rummy_envs.games.base import GameState, PlayerView
from rummy_envs.options import check_choice, check_int, check_number

LeafValue = Callable[[GameState], list[float]]
LEAF_VALUES: dict[str, LeafValue] = {}
"""Per game: each seat's estimated payoff for the rest of the hand, for rollouts cut short."""
BELIEFS: dict[str, Callable[[random.Random], Any]] = {}
"""Per game: a belief about the hidden cards kept from the seat's views (``observe(view)``,
``note_my_move(view, action)``, ``ready``, ``world(template, player)``), whose worlds replace
those dealt from the view alone while it is ``ready``."""

ROLLOUT_POLICIES = ("random", "novice", "heuristic")

GAME_DEFAULT: Any = object()
"""The default of a search option: the game's setting in ``SETTINGS``."""

MIN_SAMPLES = 8
"""Values a move needs (and the prior's move too) before it may overrule the prior: a standard
error from two or three rollouts is too unsure to test against."""

SETTINGS: dict[str, dict[str, Any]] = {
    "gin_rummy": {"iterations": 30, "rollout_depth": None},
    "hollywood_gin": {"iterations": 30, "rollout_depth": None},
    "least_count": {"iterations": 110, "rollout_depth": None, "belief": False},
    "rummy500": {"iterations": 16, "rollout_depth": 24},
    "manipulation_rummy": {"iterations": 32, "rollout_depth": 8, "verify": MIN_SAMPLES, "verify_rollout": "heuristic"},
}
"""Each game's default budget (``ismcts`` iterations a decision; ``pimc`` plays
``MIN_SAMPLES`` worlds, each with every legal move) and rollout length (None: to the end of the hand),
chosen to stay within about 100 ms a decision on one core (docs/tournaments.md#the-search-agents);
every game rolls out with its ``novice`` and keeps its ``heuristic``'s move unless another is
better by 2.5 standard errors. In Manipulation Rummy ``ismcts`` tests its choice against the
heuristic's move in 8 paired worlds of heuristic rollouts (``verify``), which beat the
heuristic where the tree's own test did not. Least Count's belief (the count network) is an
option there (``belief=True``), not its default: ``ismcts`` with it was level with the heuristic.
(``pimc:belief=True,rollout=heuristic,rollout_depth=12`` beats it, but the row serves both agents.)"""
COMMON_SETTINGS = {"rollout": "novice", "prior": "heuristic", "confidence": 2.5, "verify": 0, "verify_rollout": None,
                   "verify_moves": 1, "belief": True}


def state_class_of(game: str) -> type[GameState]:
    """The engine state class of a game id (``rummy_envs.ENVS``)."""
    if game not in rummy_envs.ENVS:
        raise ValueError(f"unknown game {game!r}; the games are {', '.join(rummy_envs.ENVS)}")
    return rummy_envs.ENVS[game].raw_env.state_class


class _Node:
    """A tree node: the action that led here, who chose it, its visits, the chooser's summed
    value and how often the action was available when its parent was visited."""

    __slots__ = ("mover", "visits", "total", "squares", "available", "children")

    def __init__(self, mover: int) -> None:
        self.mover = mover
        self.visits = 0
        self.total = 0.0
        self.squares = 0.0  # the chooser's summed squared value, for the root's confidence test
        self.available = 0
        self.children: dict[int, _Node] = {}


class _SearchAgent(ABC):
    """What both search agents share: the budget, the seeded random source, the rollouts."""

    name = "search"

    def __init__(self, game: str = "gin_rummy", seed: int | None = None, iterations: int | None = GAME_DEFAULT,
                 ms: float | None = None, rollout: str = GAME_DEFAULT, rollout_depth: int | None = GAME_DEFAULT,
                 prior: str | None = GAME_DEFAULT, confidence: float = GAME_DEFAULT,
                 belief: bool = GAME_DEFAULT) -> None:
        self.state_class = state_class_of(game)
        self.game = game
        chosen = {"iterations": iterations, "rollout": rollout, "rollout_depth": rollout_depth, "prior": prior,
                  "confidence": confidence}
        defaults = {**COMMON_SETTINGS, **SETTINGS[game]}
        if ms is not None and iterations is GAME_DEFAULT:
            defaults["iterations"] = None  # a time budget alone is not capped
        else:
            defaults["iterations"] = self.default_iterations(game)
        iterations, rollout, rollout_depth, prior, confidence = (
            defaults[k] if v is GAME_DEFAULT else v for k, v in chosen.items())
        if iterations is None and ms is None:
            raise ValueError("option iterations=None needs a time budget (ms=...)")
        if iterations is not None:
            check_int("iterations", iterations, 1)
        if ms is not None:
            check_number("ms", ms, 0, inclusive=False)
        check_choice("rollout", rollout, ROLLOUT_POLICIES)
        check_choice("prior", prior, (None, *ROLLOUT_POLICIES[1:]))
        if rollout_depth is not None:
            check_int("rollout_depth", rollout_depth, 1)
        check_number("confidence", confidence, 0)
        self.confidence = float(confidence)
        self.iterations = iterations
        self.ms = ms
        self.rollout = rollout
        self.prior = prior
        self.rollout_depth = rollout_depth
        self.seed = seed
        self.rng = random.Random(seed)
        self._policies: dict[str, list[Any]] = {}  # per rollout policy, its agent of each seat
        self._prior_agent: Any = None  # the agent whose move in the real position is the default
        self._template: GameState | None = None  # this decision's first world (``world``)
        self._template_view: PlayerView | None = None
        self.leaf_value = LEAF_VALUES.get(game)
        belief = self._or_game_setting("belief", belief)
        if not isinstance(belief, bool):
            raise ValueError(f"option belief must be True or False, not {belief!r}")
        self.belief = BELIEFS[game](self.rng) if belief and game in BELIEFS else None

    def _or_game_setting(self, name: str, value: Any) -> Any:
        """``value``, or the game's setting of option ``name`` where ``value`` is ``GAME_DEFAULT``."""
        return {**COMMON_SETTINGS, **SETTINGS[self.game]}[name] if value is GAME_DEFAULT else value

    def default_iterations(self, game: str) -> int:
        """The budget when none is given: the game's ``SETTINGS``."""
        return SETTINGS[game]["iterations"]

    def reset(self) -> None:
        """Nothing of a past decision is kept (each decision searches from scratch)."""
        for policy in [*(a for seats in self._policies.values() for a in seats), self._prior_agent]:
            if policy is not None:
                policy.reset()
        if self.belief is not None:
            self.belief.reset()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: PlayerView) -> int:
        legal = [int(a) for a in np.flatnonzero(action_mask)]
        if not legal:
            raise ValueError(f"{self.name}.act called with an empty action mask (not this player's turn?)")
        if self.belief is not None:
            self.belief.observe(view)
        action = legal[0] if len(legal) == 1 else self.choose(view, legal)
        if self.belief is not None:
            self.belief.note_my_move(view, action)
        return action

    @abstractmethod
    def choose(self, view: PlayerView, legal: list[int]) -> int:
        """The move to play among ``legal`` (two or more), searched from ``view``."""

    # -- the budget ------------------------------------------------------------------------
    def _iterations(self) -> Callable[[int], bool]:
        """A test ``more(done)``: may another iteration start after ``done``?"""
        if self.ms is None:
            return lambda done: done < self.iterations
        deadline = time.perf_counter() + self.ms / 1000.0
        cap = self.iterations if self.iterations is not None else math.inf
        return lambda done: done < 1 or (done < cap and time.perf_counter() < deadline)

    # -- worlds and rollouts -----------------------------------------------------------------
    def world(self, view: PlayerView) -> GameState:
        """A full state drawn from the view alone; its legal moves are the seat's.

        The first world of a decision is built from the view (``sample_from_view``); the
        others redeal that world's hidden cards (``sample_determinization`` for the seat),
        which draws from the same worlds (the engine contract tests that the two samplers
        agree) at a fraction of the cost: the view is read once a decision."""
        template = self._template
        fresh = template is None or self._template_view is not view
        if fresh:
            template = self._template = self.state_class.sample_from_view(view, self.rng)
            self._template_view = view
        if self.belief is not None and self.belief.ready:
            return self.belief.world(template, view.player)
        return template.clone() if fresh else template.sample_determinization(view.player, self.rng)

    def play_out(self, state: GameState, base: list[float], hands: int, rollout: str | None = None) -> list[float]:
        """Each seat's payoff gained from the root when ``state`` is played on by the rollout
        policy (``rollout``, else the agent's) to the end of the hand (or ``rollout_depth``
        moves, then the leaf value)."""
        steps, depth, rollout = 0, self.rollout_depth, rollout or self.rollout
        for policy in self._policies.get(rollout, ()):  # a rollout is a new episode to them, from this world
            policy.reset()
        while not state.is_terminal() and len(state.hand_results) == hands and (depth is None or steps < depth):
            state.apply(self._rollout_move(state, rollout))
            steps += 1
        gained = [r - b for r, b in zip(state.returns(), base)]
        cut = not state.is_terminal() and len(state.hand_results) == hands
        if cut and self.leaf_value is not None:
            gained = [g + v for g, v in zip(gained, self.leaf_value(state))]
        return gained

    def _rollout_move(self, state: GameState, rollout: str) -> int:
        if rollout == "random":
            legal = state.legal_actions()
            return legal[int(self.rng.random() * len(legal))]
        return self._agent_move(state, rollout)

    def _default_move(self, view: PlayerView, legal: list[int]) -> int | None:
        """The prior agent's move in the real position (the search keeps it unless another
        move is clearly better); None without a prior."""
        if self.prior is None:
            return None
        if self._prior_agent is None:
            self._prior_agent = self._agent(self.prior, self.seed)
        return int(self._prior_agent.act(None, mask_of(legal), view))

    def _paired_test(self, gaps: list[float]) -> bool:
        """Do the paired gaps (a move's payoff less the prior move's, world by world) put the
        move above the prior's by more than ``confidence`` standard errors? With fewer than
        ``MIN_SAMPLES`` of them, nothing is clear."""
        if len(gaps) < MIN_SAMPLES:
            return False
        return statistics.fmean(gaps) > self.confidence * statistics.stdev(gaps) / math.sqrt(len(gaps))

    def _agent(self, name: str, seed: int | None) -> Any:
        from agents.base import make_agent  # the registry imports this module

        return make_agent(name, self.game, seed)

    def _agent_move(self, state: GameState, rollout: str) -> int:
        """The move of the ``rollout`` agent of the seat to move (one agent object per seat)."""
        player = state.current_player
        seats = self._policies.setdefault(rollout, [])
        while len(seats) <= player:
            seats.append(self._agent(rollout, self.rng.randrange(2**31)))
        return int(seats[player].act(None, mask_of(state.legal_actions()), state.player_view(player)))


def mask_of(legal: list[int]) -> np.ndarray:
    """An action mask long enough for ``legal`` (sorted ids), 1 exactly on them."""
    mask = np.zeros(legal[-1] + 1, dtype=np.int8)
    mask[legal] = 1
    return mask


def _variance(node: _Node) -> float:
    mean = node.total / node.visits
    return max(0.0, node.squares / node.visits - mean * mean) * node.visits / (node.visits - 1)


class ISMCTSAgent(_SearchAgent):
    """Single-observer information-set MCTS (see the module docstring).

    ``exploration`` is the UCB constant, on values scaled by the spread of the values seen
    in this search; ``widening`` the progressive-widening factor (None: every legal action
    may get a child at once); ``max_nodes`` bounds the tree (past it, iterations go on
    without adding nodes); ``verify`` the worlds (0, or at least ``MIN_SAMPLES``) in which
    the tree's choice must beat the prior's move, paired, rolled out by ``verify_rollout``
    (None: the ``rollout``), before it is played (0: the tree's own statistics decide);
    ``verify_moves`` how many of the tree's most visited moves are candidates there (the
    prior's move among them is not: it is what they are measured against)."""

    name = "ismcts"

    def __init__(self, game: str = "gin_rummy", seed: int | None = None, iterations: int | None = GAME_DEFAULT,
                 ms: float | None = None, rollout: str = GAME_DEFAULT, rollout_depth: int | None = GAME_DEFAULT,
                 prior: str | None = GAME_DEFAULT, confidence: float = GAME_DEFAULT, exploration: float = 0.7,
                 widening: float | None = 2.0, max_nodes: int = 200_000, belief: bool = GAME_DEFAULT,
                 verify: int = GAME_DEFAULT, verify_rollout: str | None = GAME_DEFAULT,
                 verify_moves: int = GAME_DEFAULT) -> None:
        super().__init__(game, seed, iterations, ms, rollout, rollout_depth, prior, confidence, belief)
        check_number("exploration", exploration, 0)
        verify, verify_rollout = self._or_game_setting("verify", verify), self._or_game_setting(
            "verify_rollout", verify_rollout)
        if verify != 0:
            check_int("verify", verify, MIN_SAMPLES)
        check_choice("verify_rollout", verify_rollout, (None, *ROLLOUT_POLICIES))
        self.verify_moves = self._or_game_setting("verify_moves", verify_moves)
        check_int("verify_moves", self.verify_moves, 1)
        self.verify = verify
        self.verify_rollout = verify_rollout or self.rollout
        if widening is not None:
            check_number("widening", widening, 0, inclusive=False)
        check_int("max_nodes", max_nodes, 1)
        self.exploration = float(exploration)
        self.widening = widening
        self.max_nodes = max_nodes
        self.last_search: dict[str, Any] = {}

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        root = _Node(view.player)
        default = self._default_move(view, legal)
        more = self._iterations()
        nodes = 1
        low, high = 0.0, 0.0  # the spread of the values seen, which scales exploration
        done = 0
        while more(done):
            state = self.world(view)
            base = state.returns()
            hands = len(state.hand_results)
            node, path = root, []
            while not state.is_terminal() and len(state.hand_results) == hands:
                moves = state.legal_actions()
                mover = state.current_player
                fresh = [a for a in moves if a not in node.children]
                if fresh and nodes < self.max_nodes and self._may_widen(node):
                    action = default if node is root and default in fresh else self._first_to_try(state, fresh)
                    child = node.children[action] = _Node(mover)
                    nodes += 1
                    child.available += 1
                    for a in moves:
                        if a != action and a in node.children:
                            node.children[a].available += 1
                    state.apply(action)
                    path.append(child)
                    break
                known = [(a, node.children[a]) for a in moves if a in node.children]
                if not known:  # nothing to select (node budget spent): roll out from here
                    break
                action, child = self._select(known, high - low)
                state.apply(action)
                path.append(child)
                node = child
            value = self.play_out(state, base, hands)
            low, high = min(low, *value), max(high, *value)
            for child in path:
                child.visits += 1
                child.total += value[child.mover]
                child.squares += value[child.mover] ** 2
            root.visits += 1
            done += 1
        ranked = sorted(legal, key=lambda a: (root.children[a].visits, root.children[a].total)
                        if a in root.children else (-1, 0.0), reverse=True)  # ties keep the legal order
        best = choice = ranked[0]
        verified = 0
        rivals = [a for a in ranked[:self.verify_moves] if a != default] if self.verify else []
        if default is not None and (rivals or default != best):
            if rivals:
                gaps = self._paired_gaps(view, rivals, default, self.verify)
                best = max(rivals, key=lambda a: statistics.fmean(gaps[a]))
                verified, overrule = self.verify, self._paired_test(gaps[best])
            else:
                overrule = self._clearly_better(root, best, default)
            if overrule:
                self._prior_agent.reset()  # its plans for the turn no longer hold
            else:
                best = default
        self.last_search = {"iterations": done, "nodes": nodes, "choice": choice, "verified": verified,
                            "visits": {a: c.visits for a, c in root.children.items()}}
        return best

    def _paired_gaps(self, view: PlayerView, moves: list[int], default: int, worlds: int) -> dict[int, list[float]]:
        """Each of ``moves``' payoff less ``default``'s in each of ``worlds`` fresh worlds, every
        move played in the same world and rolled out: a world's luck cancels out of each gap,
        and worlds the tree did not see keep its lucky choices from judging themselves."""
        gaps: dict[int, list[float]] = {a: [] for a in moves}
        for _ in range(worlds):
            state = self.world(view)
            base = state.returns()
            hands = len(state.hand_results)
            values = []
            for action in (*moves, default):
                copy = state.clone()
                copy.apply(action)
                values.append(self.play_out(copy, base, hands, self.verify_rollout)[view.player])
            for action, value in zip(moves, values):
                gaps[action].append(value - values[-1])
        return gaps

    def _clearly_better(self, root: _Node, best: int, default: int) -> bool:
        """Is ``best``'s mean above the default move's by more than ``confidence`` standard
        errors of the difference (with fewer than ``MIN_SAMPLES`` visits of either, nothing is
        clear)?"""
        a, b = root.children[best], root.children.get(default)
        if b is None or min(a.visits, b.visits) < MIN_SAMPLES:
            return False
        gap = a.total / a.visits - b.total / b.visits
        return gap > self.confidence * math.sqrt(_variance(a) / a.visits + _variance(b) / b.visits)

    def _first_to_try(self, state: GameState, fresh: list[int]) -> int:
        """The untried move to expand: the rollout agent's move when it is untried (so the
        search starts from the agent's play and leaves it only on evidence), else a random one."""
        if self.rollout != "random":
            preferred = self._agent_move(state, self.rollout)
            if preferred in fresh:
                return preferred
        return fresh[int(self.rng.random() * len(fresh))]

    def _may_widen(self, node: _Node) -> bool:
        return self.widening is None or len(node.children) < self.widening * math.sqrt(node.visits + 1)

    def _select(self, known: list[tuple[int, _Node]], spread: float) -> tuple[int, _Node]:
        """The child of the highest upper confidence bound among those legal here; each
        counts this visit as one more time it was available."""
        scale = self.exploration * (spread if spread > 0 else 1.0)
        best, best_score = known[0], -math.inf
        for pair in known:
            child = pair[1]
            child.available += 1
            if child.visits == 0:
                score = math.inf
            else:
                score = child.total / child.visits + scale * math.sqrt(math.log(child.available) / child.visits)
            if score > best_score:
                best, best_score = pair, score
        return best


class PIMCAgent(_SearchAgent):
    """Flat determinized Monte Carlo (perfect-information Monte Carlo, or Monte Carlo policy
    improvement of the rollout agent): each iteration draws a world and plays every legal
    action in it, each followed by the rollout policy to the end of the hand; the action of
    the best mean payoff over the worlds is played. Every action meets the same worlds, so
    two actions are compared by their paired differences: with an agent rollout, its own move
    is kept unless another beats it by more than ``confidence`` standard errors of the paired
    difference. A reference that shows what the tree of ``ismcts`` adds."""

    name = "pimc"

    def default_iterations(self, game: str) -> int:
        """``MIN_SAMPLES`` worlds, the fewest that may overrule the prior (every legal move is
        rolled out in each, so the time a decision varies with the moves)."""
        return MIN_SAMPLES

    def choose(self, view: PlayerView, legal: list[int]) -> int:
        outcomes: dict[int, list[float]] = {a: [] for a in legal}
        more = self._iterations()
        done = 0
        while more(done):
            state = self.world(view)
            base = state.returns()
            hands = len(state.hand_results)
            for action in legal:
                copy = state.clone()
                copy.apply(action)
                outcomes[action].append(self.play_out(copy, base, hands)[view.player])
            done += 1
        best = max(legal, key=lambda a: sum(outcomes[a]))
        default = self._default_move(view, legal)
        if default is None or default == best:
            return best
        if self._paired_test([x - y for x, y in zip(outcomes[best], outcomes[default])]):
            self._prior_agent.reset()  # its plans for the turn no longer hold
            return best
        return default
