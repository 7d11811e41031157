"""What a Least Count seat believes of the other hands' counts, for the search agents' worlds.

A world dealt from the view alone gives each other hand uniform unseen cards, so its count
is what a random hand of that size holds. Hands in play are lower: their players shed their
highest cards and keep what pairs up, and a player who could have declared and did not is
probably above the count that declares. A search that plays in uniform worlds judges a
declaration against counts that are wrong and its hand play against opponents whose
closeness to declaring it cannot see. With the true hands as worlds, ``pimc`` with heuristic
rollouts beats the heuristic by 1.84 [0.63, 3.05] points a deal; in uniform worlds it is level
with it (``benchmarks.least_count_worlds``, docs/tournaments.md#the-search-agents).

``LeastCountBelief`` follows the round as the heuristic does (``LeastCountHeuristicAgent``'s
memory of each seat's last discard, pick and passed declaration, fed the seat's own views
and moves), keeps each other seat's last turns, and asks a small network (``CountModel``)
for each other seat's count distribution given what the seat saw of it (``count_features``).
The network is fitted to the true counts of heuristic self-play (``training.count_model``;
the file is ``agents/checkpoints/least_count/counts.npz``). A world is drawn by importance
resampling: once a decision, ``candidates`` uniform deals of the cards hidden from the seat,
each weighted by how much likelier the network makes the counts it gives the others than a
uniform deal does, those odds square-rooted (``WEIGHT_POWER``); each world is one of them
drawn by weight. The full odds let a few candidates carry most worlds (about 21 of the 256
at one decision in ten), so a decision's worlds could repeat one guess; tempered, at least 40
do. In play the two were level (docs/tournaments.md#the-search-agents). It reads no hidden
card: the true counts only shaped the network. Under rules other than the default game's
card play (``fitted_for``; how rounds add up to a match does not matter) the belief stays
aside and the worlds are dealt from the view.
"""

from __future__ import annotations

import dataclasses
import random
from functools import lru_cache
from pathlib import Path

import numpy as np

from agents.least_count import COUNTS, LastTurn, LeastCountHeuristicAgent, Reading, Snapshot
from rummy_envs.games.least_count import rules as L
from rummy_envs.games.least_count.rules import LeastCountConfig
from rummy_envs.games.least_count.state import LeastCountState, LeastCountView

CANDIDATES = 256  # uniform deals of the hidden cards weighed per decision
WEIGHT_POWER = 0.5  # the importance weights are tempered by this power (1: the network's counts exactly)
HISTORY = 3  # an opponent's last turns the features describe
MODEL_PATH = Path(__file__).resolve().parent / "checkpoints" / "least_count" / "counts.npz"
FITTED_RULES = LeastCountConfig()  # the network was fitted on the default game's card play
MATCH_OPTIONS = ("episode", "max_rounds", "elimination_score", "eliminate_on_equal", "match_end")
READING_MEAN, UNIFORM_MEAN = 9, 11  # positions in ``count_features`` of the reading's and a uniform deal's mean


def fitted_for(rules: LeastCountConfig) -> bool:
    """Are ``rules`` those the network was fitted on, up to how rounds add up to a match?"""
    return dataclasses.replace(rules, **{name: getattr(FITTED_RULES, name) for name in MATCH_OPTIONS}) == FITTED_RULES


def count_features(reading: Reading, seat: int, turns: list[LastTurn]) -> list[float]:
    """What the seat of ``reading`` knows of the opponent at relative ``seat`` whose last
    turns (latest last) are ``turns``: its hand size and known cards, the heuristic's and a
    uniform deal's count distributions (mean, spread), the unseen cards' mean value, the
    round's progress, and per turn its discard (size, highest, lowest, sum of values), its
    pick (from the open set, and the card's value) and whether it passed a declaration."""
    view, agent, values = reading.view, reading.agent, reading.ctx.values
    known = view.known[seat]
    counts = np.arange(COUNTS, dtype=float)
    features = [view.hand_sizes[seat], len(known), sum(values[c] for c in known),
                float(counts[:reading.uniform.size] @ reading.uniform), agent.shedder_odds(seat),
                view.turns, view.stock_size, view.count, float(view.turn_done[seat])]
    for position, dist in ((READING_MEAN, reading.count_distribution(seat)),
                           (UNIFORM_MEAN, reading.uniform_count_distribution(seat))):
        assert len(features) == position
        mean = float(counts @ dist)
        features += [mean, float(np.sqrt(max(0.0, (counts ** 2) @ dist - mean * mean)))]
    for back in range(1, HISTORY + 1):
        if back > len(turns):
            features += [0.0] * 8
            continue
        turn = turns[-back]
        shed = [values[c] for c in turn.discard] if turn.discard else [0]
        features += [1.0, len(turn.discard or ()), max(shed), min(shed), sum(shed), float(turn.picked is not None),
                     values[turn.picked] if turn.picked is not None else 0.0, float(turn.passed)]
    return features


class CountModel:
    """An MLP (ReLU) from ``count_features`` to the probabilities of each count."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], mean: np.ndarray, scale: np.ndarray) -> None:
        self.layers = layers
        self.mean = mean
        self.scale = scale

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """One row of count probabilities (0..``COUNTS`` - 1) per row of features."""
        x = (features - self.mean) / self.scale
        for i, (weight, bias) in enumerate(self.layers):
            x = x @ weight + bias
            if i + 1 < len(self.layers):
                x = np.maximum(x, 0.0)
        x = np.exp(x - x.max(axis=1, keepdims=True))
        return x / x.sum(axis=1, keepdims=True)

    def save(self, path: Path) -> None:
        """Write the layers and the input scaling to ``path`` (``load_count_model`` reads it)."""
        arrays = {f"weight{i}": w for i, (w, _) in enumerate(self.layers)}
        arrays |= {f"bias{i}": b for i, (_, b) in enumerate(self.layers)}
        np.savez_compressed(path, mean=self.mean, scale=self.scale, **arrays)


@lru_cache(maxsize=4)
def load_count_model(path: Path = MODEL_PATH) -> CountModel:
    """The fitted network at ``path`` (read once a process)."""
    with np.load(path) as data:
        depth = sum(name.startswith("weight") for name in data.files)
        layers = [(data[f"weight{i}"], data[f"bias{i}"]) for i in range(depth)]
        return CountModel(layers, data["mean"], data["scale"])


class LeastCountBelief:
    """The other seats' counts as the count network reads them (the module docstring)."""

    def __init__(self, rng: random.Random, candidates: int = CANDIDATES, model: CountModel | None = None) -> None:
        self.rng = rng
        self.candidates = candidates
        self.model = model  # None: the shipped network, read on the first turn it is needed
        self.reader = LeastCountHeuristicAgent()
        self.reset()

    def reset(self) -> None:
        """Forget the round being followed."""
        self.reader.reset()
        self.ready = False
        self.turns: dict[int, list[LastTurn]] = {}  # relative seat -> its turns read, latest last
        self._ratios: dict[int, np.ndarray] = {}  # absolute seat -> believed / uniform odds of each count
        self._values: list[int] = []
        self._round = -1
        self._template: LeastCountState | None = None  # the world whose candidate deals are drawn
        self._spans: list[tuple[int, int, int]] = []  # (seat, start, end): each other hand's hidden cards in a deal
        self._deals = np.zeros((0, 0), dtype=np.int64)  # per candidate: the hidden pool in dealt order
        self._cumulative: list[float] = []

    def observe(self, view: LeastCountView) -> None:
        """Read the others' turns since the seat's last one (call at every decision of the
        seat, before choosing), as the heuristic does at the start of its turn."""
        if not fitted_for(view.rules):
            return  # never ready: other rules deal other counts than the network learnt
        if view.phase == L.Phase.TURN_START:
            self._weigh(self.read(view))
        self.ready = bool(self._ratios) and view.phase != L.Phase.GAME_OVER

    def read(self, view: LeastCountView) -> Reading:
        """At the start of a turn: the heuristic's reading, with each other seat's last turn
        added to what the belief keeps of it."""
        if view.round_number != self._round:
            self.turns, self._round = {}, view.round_number
        reading = Reading(view, self.reader)
        self.reader.observe(view, reading)
        for seat, turn in self.reader.last_turns.items():
            kept = self.turns.setdefault(seat, [])
            if not kept or kept[-1] is not turn:
                kept.append(turn)
        return reading

    def note_my_move(self, view: LeastCountView, action: int) -> None:
        """After the seat's pick, remember the round as it stands (the heuristic's snapshot)."""
        if view.phase == L.Phase.PICK:
            self.reader.snapshot = Snapshot.after_pick(view, action)

    def features(self, reading: Reading) -> dict[int, list[float]]:
        """``count_features`` of every other seat still holding cards, by relative seat."""
        view = reading.view
        return {seat: count_features(reading, seat, self.turns.get(seat, []))
                for seat in range(1, view.num_players) if view.hand_sizes[seat]}

    def _weigh(self, reading: Reading) -> None:
        """Each other seat's odds of every count, the network's against a uniform deal's."""
        view = reading.view
        self._values = list(reading.ctx.values)
        features = self.features(reading)
        if self.model is None:
            self.model = load_count_model()
        believed = self.model.probabilities(np.array(list(features.values()), dtype=float))
        self._ratios = {}
        for row, seat in zip(believed, features):
            uniform = reading.uniform_count_distribution(seat)  # COUNTS long, as the network's rows
            odds = np.divide(row, uniform, out=np.zeros(COUNTS), where=uniform > 0)
            self._ratios[(view.player + seat) % view.num_players] = odds

    def world(self, template: LeastCountState, player: int) -> LeastCountState:
        """A redeal of ``template``'s hidden cards for ``player``: one of ``candidates``
        uniform deals of them (drawn once per template), chosen by how much likelier the
        network makes the others' counts in it, the rest of the pool shuffled into the deck."""
        if self._template is not template:
            self._deal_candidates(template, player)
        cards = self._deals[self.rng.choices(range(len(self._deals)), cum_weights=self._cumulative)[0]]
        world = template.clone()
        for seat, start, end in self._spans:
            world.hands[seat] = sorted(template.known[seat] + cards[start:end].tolist())
        stock = cards[self._spans[-1][2] if self._spans else 0:].tolist()
        self.rng.shuffle(stock)
        world.stock = stock
        world._legal = None
        return world

    def _deal_candidates(self, template: LeastCountState, player: int) -> None:
        """``candidates`` uniform deals of the pool hidden from ``player`` (the other hands'
        hidden cards, then the deck) and their cumulative weights."""
        self._template = template
        seats = [q for q in range(template.n) if q != player and template.hands[q]]
        hidden = [template.hidden_cards(q) for q in seats]
        self._spans, start = [], 0
        for seat, cards in zip(seats, hidden):
            self._spans.append((seat, start, start + len(cards)))
            start += len(cards)
        pool = np.array(template.stock + [c for cards in hidden for c in cards], dtype=np.int64)
        generator = np.random.default_rng(self.rng.randrange(2**63))
        self._deals = deals = pool[generator.random((self.candidates, pool.size)).argsort(axis=1)]
        values = np.array(self._values)
        weights = np.ones(self.candidates)
        for seat, start, end in self._spans:
            counts = values[deals[:, start:end]].sum(axis=1) + sum(values[c] for c in template.known[seat])
            weights *= self._ratios[seat][np.minimum(counts, COUNTS - 1)]
        if not weights.any():
            weights[:] = 1.0
        self._cumulative = np.cumsum(weights ** WEIGHT_POWER).tolist()
