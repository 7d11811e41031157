"""The checks every environment shares, written once (docs/conventions.md, "Tests every
game has"): PettingZoo's api_test and seed_test over option sets, invariants over random play
through the engine and through the AEC API (cards conserved, the mask is exactly the set of
legal actions, every action id tried on clones, rewards sum to zero and add up to the
returns, episodes end, infos keep one batchable structure), the hidden-card swap leak test,
determinizations, illegal-action atomicity, seeding and reset options, state dicts and
replay, the observation layout, the state vector and its space (PettingZoo's state_test),
rendering, action names and dead steps.

A game describes itself with a ``GameSpec`` (its env module, engine, option sets, a random
policy that reaches its interesting states, its state invariants and its hidden-card
variants); tests/test_env_contract.py runs every check for every spec. A game's own test
modules keep only what is particular to it, and may reuse the drivers here.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test, state_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from rummy_envs import IllegalActionError
from rummy_envs import cards as C
from rummy_envs.envs.base import INFO_KEYS, episode_seed, rank_rewards
from rummy_envs.state_dicts import FORMAT_VERSION, VERSION_KEY

ENV_ONLY_OPTIONS = {"render_mode", "reward", "reward_scale", "illegal_action", "rich_info", "observe_opponent_hand"}


class StepChecks:
    """Game-particular checks of an episode played through the env: ``before`` and ``after``
    each step (the env is given). The default checks nothing more."""

    def before(self, env: Any) -> None:
        """Called before every step of a live agent."""

    def after(self, env: Any) -> None:
        """Called after every step of a live agent."""


class Watcher:
    """Game-particular checks of one game played through the engine: ``before`` and ``after``
    each action, ``end`` once it is over. The default checks nothing more."""

    def before(self, state: Any) -> None:
        """Called before every action."""

    def after(self, state: Any) -> None:
        """Called after every action."""

    def end(self, state: Any) -> None:
        """Called once the game is over."""


@dataclass(frozen=True)
class GameSpec:
    """What the contract needs to know about one env (at one player count)."""

    id: str
    module: Any  # rummy_envs.<game>_v0
    state_class: type
    config_class: type
    env_option_sets: dict[str, dict[str, Any]]  # env configurations: rules + env options
    rule_sets: dict[str, dict[str, Any]]  # engine configurations
    policy: Callable[[Any, random.Random], int]  # random play that reaches the game's interesting states
    check_state: Callable[[Any], None]  # invariants of every state (cards conserved, hand sizes, ...)
    hidden_variants: Callable[[Any, int, random.Random], list[tuple[str, dict]]]  # dicts differing in hidden cards
    own_card_swap: Callable[[dict, int], dict]  # the observer's own card swapped with a stock card
    replay: Callable[[dict], Any]  # the state a dict's seed, options, deck, dealer and history replay to
    action_to_str: Callable[[int], str]
    full_deck: Callable[[Any], list[int]]  # every card of a configuration, as ids
    step_bound: Callable[[Any], int]  # more actions than any game of this config can take
    seeding_options: dict[str, Any]  # a configuration whose games are long enough to compare trajectories
    persistent_options: dict[str, Any]  # non-default options that every reset must keep
    dead_step_options: tuple[dict[str, Any], ...]
    bad_action_strings: tuple[str, ...]
    base_options: dict[str, Any] = field(default_factory=dict)  # added to every configuration (num_players)
    watcher: Callable[[Any], Watcher] = lambda config: Watcher()
    special: Callable[[Any], bool] = lambda state: False  # states always checked exhaustively and snapshotted
    reveals: Callable[[Any, int], bool] = lambda state, action: False  # does the action show the mover a hidden card?
    snapshot_filter: Callable[[dict[str, Any], Any], bool] = lambda rules, state: True
    check_coverage: Callable[[str, list[Any]], None] = lambda name, finals: None
    engine_games: dict[str, int] = field(default_factory=dict)  # per rule set, default 200
    env_episodes: dict[str, int] = field(default_factory=dict)  # per env option set, default 40
    leak_sets: tuple[str, ...] = ()  # rule sets of the leak and determinization checks (default: all)
    dict_sets: tuple[str, ...] = ()  # rule sets of the dict round trips (default: all)
    play_out_steps: int | None = None  # how far a determinization is played on (None: to the hand's end)
    continued_states: int = 40  # states an env resets to and plays on from
    main_set: str = ""  # the rule set of the checks that use one (default: the first)
    hand_policies: tuple[Callable[[Any, random.Random], int], ...] = ()  # alternated per game of one-hand configs
    role: Callable[[Any, int], str] = lambda state, p: "to move" if state.current_player == p else "waiting"
    env_checks: Callable[[Any], StepChecks] = lambda env: StepChecks()
    leak_games: int = 6
    determinization_games: int = 4  # games whose snapshots' determinizations are played on
    illegal_episodes: int = 6
    slow_contract: bool = False  # only PettingZoo's own checks in the default run, the rest under -m slow

    @property
    def main_rules(self) -> dict[str, Any]:
        return self.rules(self.main_set or next(iter(self.rule_sets)))

    def policy_for(self, config: Any, game: int) -> Callable[[Any, random.Random], int]:
        """The policy of the ``game``-th game of a configuration: ``hand_policies`` in turn for
        one-hand episodes, else ``policy`` (matches need progress to end)."""
        if self.hand_policies and getattr(config, "episode", "hand") == "hand":
            return self.hand_policies[game % len(self.hand_policies)]
        return self.policy

    # -- configurations ----------------------------------------------------------------------
    def env_options(self, name: str) -> dict[str, Any]:
        return {**self.base_options, **self.env_option_sets[name]}

    def rules(self, name: str) -> dict[str, Any]:
        return {**self.base_options, **self.rule_sets[name]}

    def make_env(self, **options: Any) -> Any:
        return self.module.env(**{**self.base_options, **options})

    def config(self, rules: dict[str, Any]) -> Any:
        return self.config_class(**{k: v for k, v in {**self.base_options, **rules}.items() if k not in ENV_ONLY_OPTIONS})

    def new_state(self, rules: dict[str, Any], seed: int, deck: list[int] | None = None, dealer: int | None = None):
        return self.state_class(self.config(rules), seed, deck, dealer)

    @property
    def agents(self) -> list[str]:
        return self.make_env().possible_agents

    @property
    def num_actions(self) -> int:
        return self.module.raw_env.num_actions

    def action_name(self, action: int) -> str:
        return self.action_to_str(action)

    def deck_strings(self, rules: dict[str, Any] | None = None) -> list[str]:
        """The full deck of a configuration as card strings, in id order."""
        return [C.format_card(c) for c in sorted(self.full_deck(self.config(rules or {})))]


def params(specs: list[GameSpec], sets: str = "", which: str = "", always: bool = False) -> list[Any]:
    """pytest params: each spec, or with ``sets`` ("env" or "rule") each spec crossed with its
    option sets, restricted to the GameSpec's tuple field ``which`` when that is not empty. A
    spec with ``slow_contract`` is marked ``slow`` unless ``always``."""
    out = []
    for spec in specs:
        marks = [pytest.mark.slow] if spec.slow_contract and not always else []
        if not sets:
            out.append(pytest.param(spec, id=spec.id, marks=marks))
            continue
        names = list(spec.env_option_sets if sets == "env" else spec.rule_sets)
        chosen = getattr(spec, which) if which else ()
        for name in chosen or names:
            out.append(pytest.param(spec, name, id=f"{spec.id}-{name}", marks=marks))
    return out


# ---------------------------------------------------------------------------------------
# PettingZoo's own checks
# ---------------------------------------------------------------------------------------


def check_api(spec: GameSpec, name: str) -> None:
    api_test(spec.make_env(**spec.env_option_sets[name]), num_cycles=300)


def check_seed(spec: GameSpec, name: str) -> None:
    seed_test(lambda: spec.make_env(**spec.env_option_sets[name]), num_cycles=300)


def check_state_test(spec: GameSpec, name: str) -> None:
    """PettingZoo's state_test: ``state_space`` on the env and on its parallel conversion, and
    ``state()`` inside it while stepping sampled (unmasked) actions, which needs
    ``illegal_action="terminate"``."""
    options = {**spec.env_option_sets[name], "illegal_action": "terminate"}
    state_test(spec.make_env(**options), turn_based_aec_to_parallel(spec.make_env(**options)), num_cycles=300)


# ---------------------------------------------------------------------------------------
# Drivers: the engine and the env under random play, with the checks of every step
# ---------------------------------------------------------------------------------------


def assert_mask_exact(spec: GameSpec, state: Any, mask: np.ndarray) -> None:
    """Try every action id on a clone: apply succeeds iff the mask has a 1."""
    before = state.to_dict()
    for a in range(spec.num_actions):
        trial = state.clone()
        try:
            trial.apply(a)
            accepted = True
        except IllegalActionError:
            accepted = False
        assert accepted == bool(mask[a]), \
            f"action {a} {spec.action_name(a)}: engine accepts={accepted}, mask={mask[a]} in {state.phase.name}"
    for flag in (False, True):  # a bool is no action id, even where action 0 or 1 is legal
        with pytest.raises(IllegalActionError):
            state.clone().apply(flag)
    legal = np.flatnonzero(mask)
    if len(legal):  # a numpy integer is played as the plain int it equals: the history stays JSON
        trial = state.clone()
        trial.apply(np.int64(legal[0]))
        json.dumps(trial.to_dict())
    assert state.to_dict() == before, "clone() is not independent of the original"


def play_engine(spec: GameSpec, rules: dict[str, Any], seed: int, policy, rng: random.Random) -> Any:
    """One game of the engine with the checks of every action."""
    config = spec.config(rules)
    s = spec.state_class(config, seed)
    watcher = spec.watcher(config)
    bound = spec.step_bound(config)
    steps = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        assert legal and legal == sorted(set(legal)) and all(0 <= a < spec.num_actions for a in legal)
        watcher.before(s)
        s.apply(policy(s, rng))
        steps += 1
        assert steps <= bound, "game did not terminate"
        spec.check_state(s)
        watcher.after(s)
    assert s.legal_actions() == [] and s.current_player == -1
    returns = s.returns()
    assert len(returns) == len(spec.agents) and abs(sum(returns)) < 1e-9
    watcher.end(s)
    return s


def play_env(spec: GameSpec, env: Any, rng: random.Random, policy, exhaustive_prob: float = 0.0,
             checks: StepChecks | None = None) -> tuple[dict[str, float], Any, int]:
    """One episode through the wrapped env, the AEC way (agent_iter, last, step), checking
    masks, rewards, observations and cards at every step; ``checks`` (by default the GameSpec's
    ``env_checks``) adds a game's own checks around each move. Returns each agent's total of
    the rewards ``last()`` gave, the final engine state and the number of moves."""
    checks = checks if checks is not None else spec.env_checks(env)
    raw = env.unwrapped
    agents = list(raw.possible_agents)
    box = env.observation_space(agents[0])["observation"]
    totals = dict.fromkeys(agents, 0.0)
    bound = spec.step_bound(raw.game.config)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        check_info(raw, agent, info)
        totals[agent] += reward
        assert box.contains(obs["observation"]), "observation outside its Box"
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].shape == (spec.num_actions,)
        if term or trunc:
            assert not obs["action_mask"].any()
            env.step(None)
            continue
        g = raw.game
        spec.check_state(g)
        assert agent == agents[g.current_player]
        mask = obs["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == set(g.legal_actions())
        other = rng.choice([a for a in agents if a != agent])
        assert not env.observe(other)["action_mask"].any(), "a waiting agent has a legal action"
        assert raw.player_view(agent).legal_actions == tuple(g.legal_actions())
        assert raw.player_view(other).legal_actions == ()
        if spec.special(g) or rng.random() < exhaustive_prob:
            assert_mask_exact(spec, g, mask)
        checks.before(env)
        env.step(policy(g, rng))
        steps += 1
        assert steps <= bound, "episode did not terminate"
        assert abs(sum(raw.rewards.values())) < 1e-9, f"rewards do not sum to zero: {raw.rewards}"
        checks.after(env)
    assert env.agents == []
    return totals, raw.game, steps


def check_info(raw: Any, agent: str, info: dict[str, Any], offender_seat: int = -1) -> None:
    """An agent's info has the fixed structure of ``INFO_KEYS`` (the same keys, types and
    shapes at every step of every episode, so RL libraries can batch it) and the engine's
    values; ``rich_info`` only adds keys."""
    g = raw.game
    n = len(raw.possible_agents)
    if raw.rich_info:
        assert set(INFO_KEYS) <= set(info), sorted(info)
    else:
        assert list(info) == list(INFO_KEYS), sorted(info)
    for key in ("hand_points", "scores"):
        assert isinstance(info[key], np.ndarray) and info[key].dtype == np.float32 and info[key].shape == (n,), key
        assert info[key].flags.writeable, f"{key} must be writable (torch warns on read-only arrays)"
        assert not any(np.shares_memory(info[key], other[key]) for other in raw.infos.values() if other is not info), \
            f"{key} is shared with another agent's info"
    assert type(info["hands_finished"]) is int and type(info["offender_seat"]) is int
    assert type(info["truncated"]) is bool and type(info["eliminated"]) is bool
    assert info["hands_finished"] == len(g.hand_results)
    last_points = g.hand_results[-1].points if g.hand_results else [0] * n
    as_float32 = lambda values: np.asarray(values, np.float32).tolist()  # noqa: E731 - what infos can hold
    assert info["hand_points"].tolist() == as_float32(last_points) and info["scores"].tolist() == as_float32(g.scores())
    assert info["truncated"] == g.truncated
    assert info["eliminated"] == (raw.agent_name_mapping[agent] in raw._seats_out())
    assert info["offender_seat"] == offender_seat


def plain_infos(infos: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A copy of the infos with arrays as lists, so that snapshots compare with ``==``."""
    return {a: {k: v.tolist() if isinstance(v, np.ndarray) else copy.deepcopy(v) for k, v in info.items()}
            for a, info in infos.items()}


def expected_totals(raw: Any, game: Any) -> list[float]:
    """What the rewards of a whole episode add up to: the returns, or the win/loss ranks."""
    if raw.reward_mode == "points":
        return [r / raw.reward_scale for r in game.returns()]
    return [r / raw.reward_scale for r in rank_rewards(game.standings())]


def snapshots(spec: GameSpec, rules: dict[str, Any], games: int, seed: int, every: float = 0.15,
              per_game: int = 12, special_only: bool = False) -> list[Any]:
    """Clones of states of games under the GameSpec's policy: each kept with probability
    ``every`` (special states always), at most ``per_game`` per game. Matches are long, so
    there ``every`` is divided by 20 to spread the picks over hands."""
    rng = random.Random(seed)
    config = spec.config(rules)
    if getattr(config, "episode", "hand") == "match":
        every /= 20
    out: list[Any] = []
    for i in range(games):
        s = spec.state_class(config, seed * 1000 + i)
        policy = spec.policy_for(config, i + 1)
        kept = 0
        while not s.is_terminal():
            special = spec.special(s)
            if (kept < per_game and (special or (not special_only and rng.random() < every))
                    and spec.snapshot_filter(rules, s)):
                out.append(s.clone())
                kept += 1
            s.apply(policy(s, rng))
    return out


# ---------------------------------------------------------------------------------------
# Invariants over random play
# ---------------------------------------------------------------------------------------


def engine_invariants(spec: GameSpec, name: str, games: int) -> None:
    rng = random.Random(len(name) + 7 * len(spec.id))
    rules = spec.rules(name)
    config = spec.config(rules)
    finals = [play_engine(spec, rules, 10_000 + i, spec.policy_for(config, i), rng) for i in range(games)]
    spec.check_coverage(name, finals)


def env_invariants(spec: GameSpec, name: str, episodes: int, exhaustive_prob: float) -> None:
    env = spec.make_env(**spec.env_option_sets[name])
    raw = env.unwrapped
    rng = random.Random(7)
    for i in range(episodes):
        env.reset(seed=500 + i)
        totals, game, _ = play_env(spec, env, rng, spec.policy_for(raw.config, i + 1), exhaustive_prob)
        assert abs(sum(totals.values())) < 1e-9
        assert [totals[a] for a in raw.possible_agents] == pytest.approx(expected_totals(raw, game)), (name, totals)


# ---------------------------------------------------------------------------------------
# Information leaks and determinizations
# ---------------------------------------------------------------------------------------


def observed(env: Any, agent: str) -> tuple[np.ndarray, np.ndarray, Any]:
    o = env.observe(agent)
    return o["observation"].copy(), o["action_mask"].copy(), env.unwrapped.player_view(agent)


def sorted_hand(cards: list[str]) -> list[str]:
    """A hand's card strings in the state dicts' order (by card id)."""
    return C.format(sorted(C.parse(cards))).split()


def swap_with_stock(d: dict, seat: int, card: str, rng: random.Random,
                    sort_hand: Callable[[list[str]], list[str]] = sorted_hand) -> dict:
    """A copy of state dict ``d`` with one ``card`` of ``seat``'s hand swapped with a random
    stock card of another kind, the hand re-sorted: a hidden-card variant for the leak checks."""
    j = rng.choice([i for i, y in enumerate(d["stock"]) if y != card])
    v = copy.deepcopy(d)
    hand = v["hands"][seat]
    hand[hand.index(card)] = v["stock"][j]
    v["hands"][seat] = sort_hand(hand)
    v["stock"][j] = card
    return v


def shuffled_stock(d: dict, rng: random.Random) -> list[tuple[str, dict]]:
    """The variant of state dict ``d`` with its stock reordered, when the stock holds two
    different cards (none otherwise)."""
    if len(set(d["stock"])) < 2:
        return []
    v = copy.deepcopy(d)
    while v["stock"] == d["stock"]:
        rng.shuffle(v["stock"])
    return [("shuffle stock", v)]


def observers(state: Any, n: int, rng: random.Random) -> list[int]:
    """The seats a leak check looks through: the player to move and one other (all of two)."""
    if n == 2:
        return [0, 1]
    mover = max(state.current_player, 0)
    return [mover, rng.choice([q for q in range(n) if q != mover])]


def leak_check(spec: GameSpec, name: str, games: int, ahead: int = 2, special_only: bool = False) -> Counter:
    """Compare player p's observation, mask and view between each state and its hidden
    variants, then again after p plays the same move in both (up to ``ahead`` moves that
    reveal no hidden card to p and do not end the hand)."""
    rules = spec.rules(name)
    env = spec.make_env(**rules)
    raw = env.unwrapped
    agents = raw.possible_agents
    rng = random.Random(17)
    checked: Counter = Counter()
    for state in snapshots(spec, rules, games, seed=len(name), every=0.1, special_only=special_only):
        d = state.to_dict()
        for p in observers(state, len(agents), rng):
            agent = agents[p]
            env.reset(options={"state": d})
            original = observed(env, agent)
            moves = []
            if state.current_player == p:
                moves = [a for a in state.legal_actions() if not spec.reveals(state, a)]
                moves = rng.sample(moves, min(ahead, len(moves)))
            for what, variant in spec.hidden_variants(state, p, rng):
                env.reset(options={"state": variant})
                assert raw.game.to_dict() != d
                obs, mask, view = observed(env, agent)
                where = f"{what}, observer {agent}, phase {state.phase.name}"
                assert np.array_equal(obs, original[0]), f"observation changed: {where}"
                assert np.array_equal(mask, original[1]), f"action mask changed: {where}"
                assert view == original[2], f"player_view changed: {where}"
                checked[(state.phase.name, spec.role(state, p))] += 1
                for a in moves:
                    after = []
                    for start in (d, variant):
                        env.reset(options={"state": start})
                        env.step(a)
                        ended = len(raw.game.hand_results) != len(state.hand_results)
                        after.append(None if ended else observed(env, agent))
                    if after[0] is None or after[1] is None:
                        continue  # the hand ended: hands are shown
                    where_a = f"{where}, after {spec.action_name(a)}"
                    assert np.array_equal(after[0][0], after[1][0]), f"observation changed: {where_a}"
                    assert np.array_equal(after[0][1], after[1][1]), f"action mask changed: {where_a}"
                    assert after[0][2] == after[1][2], f"player_view changed: {where_a}"
                    checked[("after move", spec.action_name(a).split("(")[0])] += 1
    return checked


def leak_check_has_teeth(spec: GameSpec) -> None:
    """Positive control: changing the observer's own hand does change its observation and view."""
    state = snapshots(spec, spec.main_rules, 3, seed=1)[5]
    d = state.to_dict()
    env = spec.make_env(**spec.main_rules)
    env.reset(options={"state": d})
    before = observed(env, spec.agents[0])
    env.reset(options={"state": spec.own_card_swap(d, 0)})
    after = observed(env, spec.agents[0])
    assert not np.array_equal(before[0], after[0]) and before[2] != after[2]


def determinization_check(spec: GameSpec, name: str, games: int) -> None:
    rng = random.Random(23)
    changed = 0
    n = len(spec.agents)
    for state in snapshots(spec, spec.rules(name), games, seed=3, every=0.1):
        before = state.to_dict()
        for p in observers(state, n, rng):
            det = state.sample_determinization(p, rng)
            spec.check_state(det)
            assert det.player_view(p) == state.player_view(p), f"p-view changed by determinization in {state.phase.name}"
            assert len(det.stock) == len(state.stock)
            changed += det.to_dict() != before
        assert state.to_dict() == before, "sample_determinization changed the state"
    assert changed > 0


def play_out(spec: GameSpec, det: Any, rng: random.Random, where: str) -> None:
    """A determinization is a state the game could be in: consistent, and play goes on from
    it to the end of the hand, or for ``spec.play_out_steps`` actions (a non-terminal state
    always has a legal action)."""
    spec.check_state(det)
    hands = len(det.hand_results)
    budget = spec.play_out_steps
    while not det.is_terminal() and len(det.hand_results) == hands and (budget is None or budget > 0):
        budget = None if budget is None else budget - 1
        assert det.legal_actions(), f"determinization has no legal action in {det.phase.name} ({where})"
        det.apply(rng.choice(det.legal_actions()))
        spec.check_state(det)


def determinizations_play_on(spec: GameSpec, name: str, games: int) -> None:
    rng = random.Random(27)
    n = len(spec.agents)
    for state in snapshots(spec, spec.rules(name), games, seed=9, every=0.1, per_game=8):
        for p in observers(state, n, rng):
            det = state.sample_determinization(p, rng)
            assert det.player_view(p) == state.player_view(p)
            play_out(spec, det, rng, f"observer {p}, phase {state.phase.name}")


# ---------------------------------------------------------------------------------------
# Illegal actions
# ---------------------------------------------------------------------------------------


def env_snapshot(env: Any) -> dict[str, Any]:
    raw = env.unwrapped
    agents = raw.possible_agents
    return {
        "obs": {a: tuple(x.copy() for x in env.observe(a).values()) for a in agents},
        "views": {a: raw.player_view(a) for a in agents},
        "rewards": dict(raw.rewards),
        "cumulative": dict(raw._cumulative_rewards),
        "terminations": dict(raw.terminations),
        "truncations": dict(raw.truncations),
        "infos": plain_infos(raw.infos),
        "agents": list(raw.agents),
        "selection": raw.agent_selection,
        "game": raw.game.to_dict(),
    }


def same_snapshot(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for agent, arrays in a["obs"].items():
        if not all(np.array_equal(x, y) for x, y in zip(arrays, b["obs"][agent])):
            return False
    return all(a[k] == b[k] for k in a if k != "obs")


def try_illegal(spec: GameSpec, env: Any, rng: random.Random) -> int:
    """Step the agent to move with illegal actions of every kind: each must raise
    IllegalActionError naming it, the agent and the phase, and change nothing."""
    raw = env.unwrapped
    g = raw.game
    agent = raw.agent_selection
    illegal = [int(a) for a in np.flatnonzero(env.observe(agent)["action_mask"] == 0)]
    tried = 0
    for action in [rng.choice(illegal), np.int64(rng.choice(illegal)), None, "DISCARD(AS)", -1, spec.num_actions,
                   2.0, True]:
        before = env_snapshot(env)
        with pytest.raises(IllegalActionError) as info:
            env.step(action)
        message = str(info.value)
        assert isinstance(info.value, ValueError)
        assert agent in message and g.phase.name in message, message
        assert str(action) in message or repr(action) in message, message
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool) and 0 <= action < spec.num_actions:
            assert spec.action_name(int(action)) in message, message
        assert same_snapshot(before, env_snapshot(env)), f"illegal action {action!r} changed the env"
        tried += 1
    return tried


def illegal_action_atomic(spec: GameSpec, name: str) -> None:
    env = spec.make_env(**spec.env_option_sets[name])
    raw = env.unwrapped
    rng = random.Random(31)
    tried = 0
    for i in range(spec.illegal_episodes):
        env.reset(seed=70 + i)
        hands = 0
        for _ in range(150):  # matches are long: their first 150 moves
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
            g = raw.game
            fresh_hand = len(g.hand_results) != hands  # just after a hand ended mid-match
            if fresh_hand or spec.special(g) and rng.random() < 0.5 or rng.random() < 0.15:
                tried += try_illegal(spec, env, rng)
            hands = len(g.hand_results)
            env.step(spec.policy(g, rng))
    assert tried > 10 * spec.illegal_episodes


def engine_illegal_action_atomic(spec: GameSpec) -> None:
    rng = random.Random(37)
    for state in snapshots(spec, spec.main_rules, 10, seed=5, every=0.2):
        before = state.to_dict()
        legal = set(state.legal_actions())
        for a in rng.sample([a for a in range(spec.num_actions) if a not in legal], 5) + [-1, spec.num_actions]:
            with pytest.raises(IllegalActionError):
                state.apply(a)
            assert state.to_dict() == before and state.legal_actions() == sorted(legal)


def illegal_action_terminate(spec: GameSpec) -> None:
    env = spec.make_env(illegal_action="terminate", reward_scale=2.0)
    raw = env.unwrapped
    agents = raw.possible_agents
    rng = random.Random(41)
    for i, bad in enumerate([None, -1, spec.num_actions, "x", "illegal id"]):
        env.reset(seed=i)
        for _ in range(rng.randrange(0, 12)):
            env.step(spec.policy(raw.game, rng))
            if any(raw.terminations.values()) or any(raw.truncations.values()):
                break
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            continue
        offender = raw.agent_selection
        if bad == "illegal id":
            bad = next(a for a in range(spec.num_actions) if a not in raw.game.legal_actions())
        game_before = raw.game.to_dict()
        env.step(bad)
        assert all(raw.terminations.values()) and raw.game.to_dict() == game_before
        for agent in agents:
            check_info(raw, agent, raw.infos[agent], offender_seat=agents.index(offender))
        share = 1.0 / (len(agents) - 1) / 2.0
        expected = {a: -0.5 if a == offender else share for a in agents}
        assert raw.rewards == pytest.approx(expected) and raw._cumulative_rewards[offender] == -0.5
        totals = dict.fromkeys(agents, 0.0)
        for agent in env.agent_iter():
            _, r, term, trunc, _ = env.last()
            assert term or trunc
            totals[agent] += r
            env.step(None)
        assert totals == pytest.approx(expected) and env.agents == []


# ---------------------------------------------------------------------------------------
# Seeding and reset options
# ---------------------------------------------------------------------------------------


def trajectory(spec: GameSpec, env: Any, seed: int, action_seed: int, steps: int = 200) -> list[Any]:
    raw = env.unwrapped
    env.reset(seed=seed)
    rng = random.Random(action_seed)
    out: list[Any] = [raw.game.to_dict()]
    for _ in range(steps):
        if any(raw.terminations.values()) or any(raw.truncations.values()):
            break
        obs = env.observe(raw.agent_selection)
        out.append((raw.agent_selection, obs["observation"].tobytes(), obs["action_mask"].tobytes()))
        env.step(spec.policy(raw.game, rng))
    out.append(raw.game.to_dict())
    out.append(dict(raw.rewards))
    return out


def same_seed_same_game(spec: GameSpec) -> None:
    env = spec.make_env(**spec.seeding_options)
    first = trajectory(spec, env, 123, action_seed=1)
    env.reset()  # something in between
    env.step(env.unwrapped.game.legal_actions()[0])
    assert trajectory(spec, env, 123, action_seed=1) == first
    assert trajectory(spec, spec.make_env(**spec.seeding_options), 123, action_seed=1) == first


def unseeded_reset_continues(spec: GameSpec) -> None:
    e1, e2 = spec.make_env(), spec.make_env()
    e1.reset(seed=99)
    e2.reset(seed=99)
    deals1, deals2 = [e1.unwrapped.game.to_dict()], [e2.unwrapped.game.to_dict()]
    for _ in range(3):
        e1.reset()
        e2.reset()
        deals1.append(e1.unwrapped.game.to_dict())
        deals2.append(e2.unwrapped.game.to_dict())
    assert deals1 == deals2
    hands = [json.dumps(d["hands"]) for d in deals1]
    assert len(set(hands)) == len(hands), "unseeded resets repeat the deal"


def episode_seeds(spec: GameSpec) -> None:
    """Reset k after ``reset(seed=s)`` deals the game seed ``episode_seed(s, k)``; a bad seed
    raises and changes nothing; ``np_random`` is a generator fixed by the episode's game."""
    env = spec.make_env()
    env.reset(seed=5)
    raw = env.unwrapped
    assert raw.game.seed == episode_seed(5, 0)
    first = raw.np_random.integers(1 << 30, size=4).tolist()
    for k in (1, 2):
        env.reset()
        assert raw.game.seed == episode_seed(5, k)
    before = raw.game.to_dict()
    for bad in (-1, 1.5, True, "5"):
        with pytest.raises(ValueError, match="seed must be a non-negative integer"):
            env.reset(seed=bad)
        assert raw.game.to_dict() == before
    env.reset(seed=np.int64(5))
    assert raw.game.seed == episode_seed(5, 0)
    assert raw.np_random.integers(1 << 30, size=4).tolist() == first
    assert len({episode_seed(s, k) for s in range(100) for k in range(100)}) == 10_000


def unknown_reset_options_warn(spec: GameSpec) -> None:
    """Reset options other than deck, dealer and state warn, naming them; the known ones do not."""
    env = spec.make_env()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=1, options={"deck": spec.deck_strings({}), "dealer": 0})
    with pytest.warns(UserWarning, match=r"ignoring unknown reset option\(s\): colour; known: deck, dealer, state"):
        env.reset(seed=1, options={"colour": "red"})


def different_seeds_different_deals(spec: GameSpec) -> None:
    env = spec.make_env()
    deals = set()
    for seed in range(30):
        env.reset(seed=seed)
        deals.add(json.dumps(env.unwrapped.game.to_dict()["hands"]))
    assert len(deals) == 30


def reset_keeps_constructor_options(spec: GameSpec) -> None:
    env = spec.make_env(**spec.persistent_options)
    raw = env.unwrapped
    layout, size = raw.observation_layout(), raw.observation_size
    agent = raw.possible_agents[0]
    deck = spec.deck_strings(spec.persistent_options)
    for kwargs in (dict(seed=1), dict(), dict(seed=2), dict(options={"deck": deck}), dict(options={"dealer": 1}),
                   dict(options={"deck": deck, "dealer": 0}), dict()):
        env.reset(**kwargs)
        assert raw.game.config == raw.config == spec.config(spec.persistent_options)
        assert raw.reward_scale == float(spec.persistent_options.get("reward_scale", 1.0))
        assert raw.observation_layout() == layout and raw.observation_size == size
        assert env.observe(agent)["observation"].shape == (size,)
        assert env.observation_space(agent)["observation"].shape == (size,)
    state = spec.new_state(spec.persistent_options, seed=4).to_dict()
    del state["options"]  # a hand-written state without options takes the env's options
    env.reset(options={"state": state})
    assert raw.game.config == raw.config
    env.reset()
    assert raw.game.config == raw.config


def bad_decks(spec: GameSpec) -> list[tuple[list[Any], str]]:
    good = spec.deck_strings()
    n = len(good)
    ids = C.parse(good[:-1])
    cases = [(good[:-1] + [good[0]], good[0]), (good[:-1], str(n - 1)), (good + [good[0]], str(n + 1)),
             (good[:-1] + ["ZZ"], "ZZ"), (ids + [99], "99")]
    if "JK" not in good:
        cases += [(good[:-1] + ["JK"], "JK"), (ids + [52], "JK")]
    return cases


def check_bad_deck(spec: GameSpec) -> None:
    for deck, needle in bad_decks(spec):
        env = spec.make_env()
        with pytest.raises(ValueError) as info:
            env.reset(seed=1, options={"deck": deck})
        message = str(info.value)
        assert needle in message and ("deck" in message or "card" in message), message


def check_dealer_option(spec: GameSpec) -> None:
    env = spec.make_env()
    n = len(env.possible_agents)
    for dealer in (0, 1, n - 1, 0):
        env.reset(options={"dealer": dealer})
        assert env.unwrapped.game.dealer == dealer
        assert env.agent_selection == env.possible_agents[env.unwrapped.game.current_player]
    for bad in (n, -1, "0"):
        with pytest.raises(ValueError, match="dealer"):
            spec.make_env().reset(options={"dealer": bad})


# ---------------------------------------------------------------------------------------
# State dicts and replay
# ---------------------------------------------------------------------------------------


def dict_and_replay(spec: GameSpec, name: str, games: int) -> None:
    rules = spec.rules(name)
    config = spec.config(rules)
    n = len(spec.agents)
    rng = random.Random(43)
    checked = 0
    deck_ids = sorted(spec.full_deck(config))
    for i in range(games):
        deck = dealer = None
        if i % 4 == 3:
            deck = list(deck_ids)
            rng.shuffle(deck)
            dealer = i % n
        s = spec.state_class(config, 300 + i, deck, dealer)
        while True:
            if rng.random() < 0.05 or spec.special(s) or s.is_terminal():
                d = s.to_dict()
                text = json.dumps(d)
                assert json.loads(text) == d
                rebuilt = spec.state_class.from_dict(json.loads(text))
                assert type(rebuilt) is spec.state_class and rebuilt.config == config
                assert rebuilt.to_dict() == d
                assert rebuilt.legal_actions() == s.legal_actions()
                assert all(rebuilt.player_view(p) == s.player_view(p) for p in range(n))
                assert rebuilt.returns() == s.returns() and rebuilt.is_terminal() == s.is_terminal()
                assert rebuilt.scores() == s.scores() and rebuilt.standings() == s.standings()
                a, b = s.clone(), rebuilt  # the rebuilt state plays on exactly like the original
                r1, r2 = random.Random(i), random.Random(i)
                for _ in range(30):
                    if a.is_terminal():
                        break
                    a.apply(spec.policy(a, r1))
                    b.apply(spec.policy(b, r2))
                assert a.to_dict() == b.to_dict()
                checked += 1
            if s.is_terminal():
                break
            s.apply(spec.policy(s, rng))
        d = s.to_dict()
        assert spec.replay(d).to_dict() == d  # the dict alone (seed, options, deck, dealer, history) replays it
        if deck is None:
            assert spec.replay({**d, "initial_deck": None, "first_dealer": None}).to_dict() == d  # the seed alone
    assert checked > games


def reset_from_state_dict_continues(spec: GameSpec) -> None:
    rules = spec.main_rules
    env = spec.make_env(**rules)
    raw = env.unwrapped
    rng = random.Random(47)
    for state in snapshots(spec, rules, 5, seed=6, every=0.2)[:spec.continued_states]:
        env.reset(options={"state": state.to_dict()})
        assert raw.game.to_dict() == state.to_dict()
        assert raw.agent_selection == raw.possible_agents[state.current_player]
        mask = env.observe(raw.agent_selection)["action_mask"]
        assert set(np.flatnonzero(mask).tolist()) == set(state.legal_actions())
        totals, _, _ = play_env(spec, env, rng, spec.policy)
        assert abs(sum(totals.values())) < 1e-9


def state_dict_errors(spec: GameSpec) -> None:
    env = spec.make_env()
    env.reset(seed=1)
    d = env.unwrapped.game.to_dict()
    with pytest.raises(ValueError, match="state"):
        env.reset(options={"state": d, "dealer": 0})
    broken = dict(d, stock=d["stock"][1:])  # a card vanishes
    with pytest.raises(ValueError):
        spec.state_class.from_dict(broken)
    with pytest.raises(ValueError):
        spec.make_env().reset(options={"state": broken})


def finished_state_dict_only_dead_steps(spec: GameSpec) -> None:
    rng = random.Random(3)
    state = spec.new_state({}, seed=5)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    env = spec.make_env()
    env.reset(options={"state": state.to_dict()})
    steps = 0
    for _agent in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        assert term or trunc
        env.step(None)
        steps += 1
    assert steps == len(env.possible_agents) and env.agents == []


# ---------------------------------------------------------------------------------------
# State dicts: the format, round trips and fuzzed dicts
# ---------------------------------------------------------------------------------------

_NAMED = re.compile(r"^state dict(?: fields? |: unknown key\(s\) )((?:'[^']+'(?:, )?)+)")
CARD_TEXT = re.compile(r"^(?:[A2-9TJQK][CDHS]|JK)$")


def named_fields(message: str) -> list[str]:
    """The fields a state dict error names (``state dict field 'hands[1]': ...``), or []."""
    match = _NAMED.match(message)
    return re.findall(r"'([^']+)'", match.group(1)) if match else []


def assert_names_a_field(spec: GameSpec, error: ValueError) -> None:
    """A refusal names at least one field, each one of the game's format (a nested name such
    as ``hand_results[2].points`` by its top-level key), or says the dict is not a mapping."""
    message = str(error)
    if message.startswith("state dict: expected a mapping"):
        return
    names = named_fields(message)
    keys = state_keys(spec)
    assert names, f"the error names no field: {message}"
    roots = {re.split(r"[.\[]", name)[0] for name in names}
    assert roots <= set(keys) or message.startswith("state dict: unknown key"), f"unknown field named: {message}"


def state_keys(spec: GameSpec) -> tuple[str, ...]:
    """The keys of the game's state dicts, in ``to_dict`` order."""
    return tuple(spec.new_state({}, 0).to_dict())


def assert_same_state(a: Any, b: Any) -> None:
    """Two states are the same game at the same point: dict, legal actions, every view, the
    scores and returns."""
    assert type(a) is type(b) and a.to_dict() == b.to_dict()
    assert a.legal_actions() == b.legal_actions() and a.is_terminal() == b.is_terminal()
    assert all(a.player_view(p) == b.player_view(p) for p in range(len(a.scores())))
    assert a.scores() == b.scores() and a.returns() == b.returns() and a.standings() == b.standings()


def round_trip(spec: GameSpec, state: Any) -> None:
    """``from_dict(to_dict(s))`` is ``s``, from the dict itself and through JSON text."""
    d = state.to_dict()
    assert_same_state(spec.state_class.from_dict(d), state)
    text = json.dumps(d)
    assert_same_state(spec.state_class.from_dict(json.loads(text)), state)
    assert state.to_dict() == d, "from_dict changed the dict it read"


_GAMES: dict[tuple[str, str, int], list[dict[str, Any]]] = {}


def game_points(spec: GameSpec, name: str, seed: int, count: int = 24) -> list[dict[str, Any]]:
    """Dicts of up to ``count`` points spread over one game of a rule set under the GameSpec's
    policy (the deal, the end and points between), memoized: fuzzing draws many from each."""
    key = (spec.id, name, seed)
    if key not in _GAMES:
        config = spec.config(spec.rules(name))
        rng = random.Random(seed)
        deck = None
        if seed % 3 == 2:  # some games from a given deck and dealer
            deck = sorted(spec.full_deck(config))
            rng.shuffle(deck)
        state = spec.state_class(config, seed, deck, seed % len(spec.agents) if deck else None)
        policy = spec.policy_for(config, seed)
        states = [state.clone()]
        while not state.is_terminal():
            state.apply(policy(state, rng))
            states.append(state.clone())
        step = max(1, len(states) // count)
        _GAMES[key] = [s.to_dict() for s in states[::step] + states[-1:]]
    return _GAMES[key]


def _card_lists(node: Any, path: tuple = ()) -> list[tuple[Any, ...]]:
    """The paths of every list of card strings in a dict tree (hands, piles, melds, ...)."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _card_lists(v, (*path, k))
    elif isinstance(node, list):
        if node and all(isinstance(x, str) and CARD_TEXT.match(x) for x in node):
            out.append(path)
        else:
            for i, v in enumerate(node):
                out += _card_lists(v, (*path, i))
    return out


def _positions(node: Any, path: tuple = ()) -> list[tuple[Any, ...]]:
    """The paths of every value in a dict tree."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        out.append((*path, k))
        out += _positions(v, (*path, k))
    return out


def _at(root: Any, path: tuple) -> Any:
    for k in path:
        root = root[k]
    return root


WRONG_VALUES = ("x", "NOPE", 7, -1, 2.5, None, True, [], {}, ["AS"], "AS", [[]], {"cards": []})


MUTATION_KINDS = ("drop", "rename", "move", "duplicate", "swap", "replace", "type", "range", "enum", "summary",
                  "seat", "card", "results")
"""What ``mutate`` does: the structural kinds (a key dropped or renamed, a card moved,
duplicated, swapped or replaced, a wrong type, an int out of range, the phase or a flag
changed) and the semantic ones, which keep the dict well-formed but make it say something
the rules may not reach: a summary (winners, totals, scores, eliminations) that disagrees
with the history, another seat to move or deal, a single-card field (a deep-take target, a
banned card) set to another card or cleared, a recorded hand or round dropped or repeated."""
SUMMARY_KEYS = ("winners", "totals", "scores", "out_round", "rounds_won", "standings", "round_index", "hand_index",
                "turns", "draws", "reshuffles", "multiplier")
SEAT_KEYS = ("current_player", "dealer", "first_dealer", "knocker", "declarer")
RESULT_KEYS = ("hand_results", "round_results", "results")


def mutate(d: dict[str, Any], rng: random.Random, count: int, phases: list[str]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``d`` with ``count`` random mutations of ``MUTATION_KINDS`` (the phase one of
    ``phases``). Returns the copy and what was done."""
    d = copy.deepcopy(d)
    done: list[str] = []
    for _ in range(count):
        kind = rng.choice(MUTATION_KINDS)
        if kind in ("summary", "seat", "card", "results"):
            done.append(_mutate_meaning(d, kind, rng))
            continue
        lists = _card_lists(d)
        cards = [(*p, i) for p in lists for i in range(len(_at(d, p)))]
        positions = _positions(d)
        if kind in ("drop", "rename"):
            keyed = [p for p in positions if isinstance(_at(d, p[:-1]), dict)]
            path = rng.choice(keyed)
            parent = _at(d, path[:-1])
            value = parent.pop(path[-1])
            if kind == "rename":
                key = str(path[-1])
                parent[rng.choice([key + "s", key[:-1], key.upper(), key.replace("_", "")]) or "k"] = value
            done.append(f"{kind} {path}")
        elif kind in ("move", "duplicate", "swap", "replace") and cards:
            src = rng.choice(cards)
            card = _at(d, src)
            dst_list = rng.choice(lists)
            target = _at(d, dst_list)
            if kind == "move":
                _at(d, src[:-1]).pop(src[-1])
                target.insert(rng.randrange(len(target) + 1), card)
            elif kind == "duplicate":
                target.insert(rng.randrange(len(target) + 1), card)
            elif kind == "swap":
                other = rng.choice(cards)
                _at(d, src[:-1])[src[-1]], _at(d, other[:-1])[other[-1]] = _at(d, other), card
            else:
                _at(d, src[:-1])[src[-1]] = C.format_card(rng.randrange(53))
            done.append(f"{kind} {card} at {src} -> {dst_list}")
        elif kind == "type":
            path = rng.choice(positions)
            _at(d, path[:-1])[path[-1]] = copy.deepcopy(rng.choice(WRONG_VALUES))
            done.append(f"type: wrong at {path}")
        elif kind == "range":
            ints = [p for p in positions if type(_at(d, p)) is int]
            if ints:
                path = rng.choice(ints)
                value = _at(d, path)
                _at(d, path[:-1])[path[-1]] = rng.choice([-1, -2, value + 1, value - 1, value + 2, 99, 10**9])
                done.append(f"range: out at {path}")
        else:
            flags = [p for p in positions if isinstance(_at(d, p), bool)]
            if "phase" in d and (not flags or rng.random() < 0.5):
                d["phase"] = rng.choice(phases)
                done.append(f"enum: phase {d['phase']}")
            elif flags:
                path = rng.choice(flags)
                _at(d, path[:-1])[path[-1]] = not _at(d, path)
                done.append(f"enum: flip {path}")
    return d, done


def _mutate_meaning(d: dict[str, Any], kind: str, rng: random.Random) -> str:
    """One semantic mutation of ``d`` in place (see ``MUTATION_KINDS``); what was done."""
    seats = len(d["hands"]) if isinstance(d.get("hands"), list) else 2
    if kind == "summary":
        keys = [k for k in SUMMARY_KEYS if k in d]
        if not keys:
            return "summary: none here"
        key = rng.choice(keys)
        value = d[key]
        if key == "winners":
            d[key] = sorted(rng.sample(range(seats), rng.randint(0 if value else 1, seats)))
        elif isinstance(value, list) and value and all(type(v) is int for v in value):
            i = rng.randrange(len(value))
            value[i] = max(0, value[i] + rng.choice([-10, -5, -1, 1, 2, 5, 10, 25]))
        elif type(value) is int:
            d[key] = max(0, value + rng.choice([-2, -1, 1, 2]))
        return f"summary: {key} = {d[key]!r}"
    if kind == "seat":
        keys = [k for k in SEAT_KEYS if type(d.get(k)) is int]
        if not keys:
            return "seat: none here"
        key = rng.choice(keys)
        d[key] = rng.choice([s for s in range(-1, seats) if s != d[key]])
        return f"seat: {key} = {d[key]}"
    if kind == "card":
        keys = [k for k, v in d.items() if v is None or (isinstance(v, str) and CARD_TEXT.match(v))]
        keys = [k for k in keys if k not in ("daily_date", "game")]
        if not keys:
            return "card: none here"
        key = rng.choice(keys)
        d[key] = None if d[key] is not None and rng.random() < 0.3 else C.format_card(rng.randrange(52))
        return f"card: {key} = {d[key]!r}"
    keys = [k for k in RESULT_KEYS if isinstance(d.get(k), list) and d[k]]
    if not keys:
        return "results: none here"
    key = rng.choice(keys)
    if rng.random() < 0.5:
        d[key].pop(rng.randrange(len(d[key])))
        return f"results: one of {key} dropped"
    d[key].append(copy.deepcopy(rng.choice(d[key])))
    return f"results: one of {key} repeated"


def play_on(spec: GameSpec, state: Any, rng: random.Random) -> None:
    """Random play from ``state`` to the end of the episode, the GameSpec's state invariants
    checked after every action, and the states reached (the last one and a few others) read
    back from their dicts. (The watchers follow a game from its deal, so they are not used
    from a state read mid-game.)"""
    bound = spec.step_bound(state.config)
    played = 0
    while not state.is_terminal():
        assert state.legal_actions(), f"no legal action in {state.phase.name}"
        state.apply(spec.policy(state, rng))
        played += 1
        assert played <= bound, "the game did not end"
        spec.check_state(state)
        if rng.random() < 0.02:
            round_trip(spec, state)  # what play reaches from a state read from a dict reads back
    assert state.current_player == -1 and state.legal_actions() == []
    returns = state.returns()
    assert abs(sum(returns)) <= 1e-9 * max(1.0, *map(abs, returns)), returns  # options may make points huge
    round_trip(spec, state)


def check_dict(spec: GameSpec, data: Any, rng: random.Random) -> bool:
    """``from_dict`` either refuses ``data`` with a ValueError naming a field of the format, or
    returns a state that passes the GameSpec's invariants, round-trips, and plays to the end under
    random play with the invariants holding. Returns whether it was accepted."""
    before = copy.deepcopy(data)
    try:
        state = spec.state_class.from_dict(data)
    except ValueError as error:
        assert_names_a_field(spec, error)
        assert data == before, "from_dict changed the dict it refused"
        return False
    spec.check_state(state)
    round_trip(spec, state)
    play_on(spec, state, rng)
    env_pays_zero_sum_from(spec, data, rng)
    return True


REWARD_MODES = ("points", "win_loss")


def env_pays_zero_sum_from(spec: GameSpec, data: dict[str, Any], rng: random.Random) -> None:
    """An env reset to an accepted dict, under a reward mode drawn from ``REWARD_MODES``,
    plays to the end with the env contract's checks at every step, and the rewards it pays
    from there sum to zero (as every mode's do from a deal)."""
    config = spec.state_class.from_dict(data).config
    env = spec.module.env(**dataclasses.asdict(config), reward=rng.choice(REWARD_MODES))
    env.reset(options={"state": data})
    totals, _, _ = play_env(spec, env, rng, spec.policy)
    assert abs(sum(totals.values())) <= 1e-9 * max(1.0, *map(abs, totals.values())), totals


def state_dict_format(spec: GameSpec) -> None:
    """The version is written first; other versions, non-mappings, unknown keys, bad values and
    lost or doubled cards are refused naming the field, also through ``reset``; a dict without
    a version is read as version 1, and a hand-written one of just the card places, phase and
    seats as the same deal."""
    state = spec.new_state(spec.main_rules, seed=3)
    d = state.to_dict()
    n = len(spec.agents)
    assert list(d)[0] == VERSION_KEY and d[VERSION_KEY] == FORMAT_VERSION
    assert_same_state(spec.state_class.from_dict({k: v for k, v in d.items() if k != VERSION_KEY}), state)
    hands = d["hands"]
    cases: list[tuple[Any, str]] = [
        ({**d, VERSION_KEY: FORMAT_VERSION + 1}, VERSION_KEY), ({**d, VERSION_KEY: "1"}, VERSION_KEY),
        ({**d, "hnads": hands}, "hnads"), ({**d, "phase": "NOPE"}, "phase"), ({**d, "phase": 1}, "phase"),
        ({**d, "current_player": n + 5}, "current_player"), ({**d, "current_player": "0"}, "current_player"),
        ({**d, "hands": hands[:-1]}, "hands"), ({**d, "hands": [hands[0] + hands[1][:1], *hands[1:]]}, "hands"),
        ({**d, "stock": d["stock"][1:]}, "stock"), ({**d, "stock": "AS KS ZZ"}, "stock[2]"),
        ({**d, "options": {"no_such_option": 1}}, "options"), ({**d, "options": []}, "options"),
        ({**d, "game": "no_such_game"}, "game"), ({**d, "seed": 1.5}, "seed"), ({**d, "history": [-1]}, "history[0]"),
    ]
    env = spec.make_env(**spec.main_rules)
    for bad, name in cases:
        for read in (spec.state_class.from_dict, lambda data: env.reset(options={"state": data})):
            with pytest.raises(ValueError) as info:
                read(bad)
            message = str(info.value)
            assert name in named_fields(message), f"{name} not named: {message}"
            assert_names_a_field(spec, info.value)
    with pytest.raises(ValueError, match=f"reads state dicts of format version {FORMAT_VERSION}"):
        spec.state_class.from_dict({**d, VERSION_KEY: 99})
    for bad in (5, "state", [d], None):
        for read in (spec.state_class.from_dict, lambda data: env.reset(options={"state": data})):
            with pytest.raises(ValueError, match="state dict: expected a mapping"):
                read(bad)
    places = {k: v for k, v in d.items() if k in ("options", "hands", "phase", "current_player", "dealer")
              or isinstance(v, str) and CARD_TEXT.match(v) or _card_lists({"v": v}) == [("v",)]}
    written = spec.state_class.from_dict(places).to_dict()
    differ = [k for k in d if k != "seed" and written[k] != d[k]]
    assert not differ, f"a scenario of the deal's card places, phase and seats differs in {differ}"


# ---------------------------------------------------------------------------------------
# Observation layout, state(), rendering, action names, options, dead steps
# ---------------------------------------------------------------------------------------


def observation_layout(spec: GameSpec, name: str) -> None:
    env = spec.make_env(**spec.env_option_sets[name])
    raw = env.unwrapped
    layout = raw.observation_layout()
    segments = list(layout.values())
    assert [s.name for s in segments] == list(layout) and len(set(layout)) == len(layout)
    offset = 0
    for seg in sorted(segments, key=lambda s: s.offset):
        assert seg.offset == offset and seg.size > 0, seg
        offset += seg.size
    box = env.observation_space(raw.possible_agents[0])["observation"]
    assert offset == box.shape[0] == raw.observation_size
    assert box.dtype == np.float32 and np.all(box.low == 0)
    for seg in segments:
        assert np.all(box.high[seg.offset:seg.offset + seg.size] == seg.high)
    env.reset(seed=3)  # a few segments decode to what the view says
    for a in raw.possible_agents:
        obs = env.observe(a)["observation"]
        view = raw.player_view(a)
        part = {k: obs[s.offset:s.offset + s.size] for k, s in layout.items()}
        assert np.repeat(np.arange(part["hand"].size), part["hand"].astype(int)).tolist() == sorted(view.hand)
        assert np.flatnonzero(part["phase"]).tolist() == [int(view.phase)]
        if "top_discard" in part:  # games with a discard pile (Least Count has open sets instead)
            assert np.flatnonzero(part["top_discard"]).tolist() == [view.discard_pile[-1]]


def state_vector(spec: GameSpec) -> None:
    env = spec.make_env()
    raw = env.unwrapped
    rng = random.Random(53)
    lengths = set()
    for i in range(3):
        env.reset(seed=i)
        while not any(raw.terminations.values()) and not any(raw.truncations.values()):
            st = env.state()
            assert isinstance(st, np.ndarray) and st.dtype == np.float32 and st.ndim == 1
            assert raw.state_space.contains(st), "state() outside state_space"
            lengths.add(st.shape[0])
            env.step(spec.policy(raw.game, rng))
        lengths.add(env.state().shape[0])
    assert len(lengths) == 1 and lengths.pop() > raw.observation_size
    assert sum(s.size for s in raw.state_layout().values()) == raw.state_space.shape[0] == env.state().shape[0]


def render_ansi(spec: GameSpec) -> None:
    env = spec.make_env(render_mode="ansi", **spec.seeding_options)
    raw = env.unwrapped
    rng = random.Random(59)
    env.reset(seed=2)
    for _ in range(30):
        text = env.render()
        assert isinstance(text, str) and text.strip() and raw.game.phase.name in text
        env.step(spec.policy(raw.game, rng))


def render_human(spec: GameSpec, capsys: Any) -> None:
    env = spec.make_env(render_mode="human")
    env.reset(seed=2)
    capsys.readouterr()
    assert env.render() is None
    out = capsys.readouterr().out
    assert out.strip() and env.unwrapped.game.phase.name in out and any(sym in out for sym in "♣♦♥♠")
    env.step(env.unwrapped.game.legal_actions()[0])  # human mode prints after each step
    assert capsys.readouterr().out.strip()
    quiet = spec.make_env()
    quiet.reset(seed=0)
    assert quiet.render() is None
    text = quiet.render("ansi")  # a mode argument, as RLlib's PettingZooEnv passes one
    assert isinstance(text, str) and quiet.unwrapped.game.phase.name in text
    frame = quiet.render("rgb_array")
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    with pytest.raises(ValueError, match="video"):
        quiet.render("video")


def action_names_round_trip(spec: GameSpec) -> None:
    raw = spec.module.raw_env(**spec.base_options)
    names = set()
    for a in range(spec.num_actions):
        text = raw.action_to_str(a)
        assert raw.str_to_action(text) == a, text
        assert raw.str_to_action(text.lower()) == a, text
        names.add(text)
    assert len(names) == spec.num_actions
    for outside in (-1, spec.num_actions, spec.num_actions + 1):  # named as no action, not as a near one
        assert raw.action_to_str(outside) == f"<out of range {outside}>"
    for bad in ("", "FLY", "DISCARD(ZZ)", "DISCARD(AS", *spec.bad_action_strings):
        with pytest.raises(ValueError):
            raw.str_to_action(bad)


def bad_env_options(spec: GameSpec) -> None:
    for kwargs, name in (({"reward": "x"}, "reward"), ({"reward_scale": 0}, "reward_scale"),
                         ({"reward_scale": -1.0}, "reward_scale"), ({"illegal_action": "ignore"}, "illegal_action"),
                         ({"render_mode": "video"}, "render_mode"), ({"render_seat": -1}, "render_seat"),
                         ({"episode": "tournament"}, "episode"),
                         ({"no_such_option": 1}, "no_such_option")):
        with pytest.raises(ValueError, match=name):
            spec.make_env(**kwargs)
        with pytest.raises(ValueError, match=name):
            spec.module.raw_env(**{**spec.base_options, **kwargs})


def unknown_option_lists_every_accepted_name(spec: GameSpec) -> None:
    """A misspelt option's error names every option the env accepts: its env options and the
    engine's rules options."""
    accepted = spec.module.raw_env.accepted_options()
    env_options = {"render_mode", "reward", "reward_scale", "illegal_action", "rich_info", "render_seat"}
    rules = {f.name for f in dataclasses.fields(spec.config_class)}
    assert env_options | rules <= set(accepted)
    with pytest.raises(ValueError, match="ilegal_action") as error:
        spec.make_env(ilegal_action="terminate")
    listed = str(error.value).split("known options: ")[1].split(", ")
    assert listed == accepted
    spec.make_env(**{name: getattr(spec.config(spec.main_rules), name) for name in rules})  # each one is accepted


def dead_steps(spec: GameSpec) -> None:
    for options in spec.dead_step_options:
        env = spec.make_env(**options)
        raw = env.unwrapped
        agents = raw.possible_agents
        rng = random.Random(61)
        for i in range(2):
            env.reset(seed=i)
            while not any(raw.terminations.values()) and not any(raw.truncations.values()):
                env.step(spec.policy(raw.game, rng))
            assert env.agents == agents
            with pytest.raises(ValueError):
                env.step(0)  # a dead agent may only step None
            seen = []
            while env.agents:
                agent = env.agent_selection
                assert raw.terminations[agent] or raw.truncations[agent]
                seen.append(agent)
                env.step(None)
            assert sorted(seen) == sorted(agents) and env.agents == []


def check_within_bounds(state_class: Any, config: Any, seeds: Iterable[int],
                        choose: Callable[[Any, random.Random, int], int], rng_seed: int | None = None) -> None:
    """Play a game of ``state_class`` under ``config`` for each seed, ``choose(state, rng,
    seed)`` picking the moves: every return seen at every step lies within the engine's
    ``utility_bounds``, and no game applies more actions than its ``max_game_length`` (the
    checks of OpenSpiel's random-simulation test). ``rng_seed`` shares one random stream
    over the games; by default each game has its own, seeded by its seed."""
    low, high = state_class.utility_bounds(config)
    longest = state_class.max_game_length(config)
    shared = None if rng_seed is None else random.Random(rng_seed)
    for seed in seeds:
        state, rng = state_class(config, seed), shared or random.Random(seed)
        while True:
            assert all(low <= r <= high for r in state.returns()), (seed, state.returns(), (low, high))
            if state.is_terminal():
                break
            state.apply(choose(state, rng, seed))
        assert len(state.history) <= longest, (seed, len(state.history), longest)
