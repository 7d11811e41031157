"""Duplicate round-robin tournaments between any agents, on one machine or on Ray.

The schedule is the duplicate format (docs/tournaments.md). Every pairing plays the same deals (deal
``d`` is dealt from one env seed for every pairing and seat order), with the seats rotated
over each deal so that the luck of the cards cancels:
- two-player games: each unordered pair plays every deal twice, seats swapped;
- n-player games: each ordered pair (focal, opponent) plays every deal n times, the focal
  agent in each seat in turn and n-1 copies of the opponent in the others.
The games of one pairing on one deal are a *duplicate set*, the unit of the intervals.

Every game is seeded from (tournament seed, deal, the labels by seat, seat), so results are
the same for any number of workers, either backend and any order of the agents in the config. Finished games are appended to
``games.jsonl`` as they arrive, each a game log (``rummy_envs.replay``) with the
tournament's keys added; a rerun of the same config in the same folder resumes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from itertools import combinations, permutations
from multiprocessing import get_context
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator

import rummy_envs
from agents import make_agent
from agents.base import agent_name_for
from rummy_envs.envs.base import rank_rewards
from rummy_envs.replay import game_log, replay_env
from training.config import (ConfigError, ConfigModel, Folder, GameId, KeyProblem, Options, check, check_agent,
                             read_yaml, validate)
from training.distributed import install_packed_registry, packed_registry, ray_session

# Keys that change how a tournament runs but not its games: a resume may change them.
RUN_KEYS = frozenset({"workers", "backend", "ray_address", "output_dir", "plots", "chunk_deals"})
# The keys a games.jsonl record adds to its game log (rummy_envs.replay.LOG_KEYS).
RECORD_KEYS = ("game_id", "focal", "opponent", "deal", "rotation", "seats", "agents", "env_seed", "agent_seeds",
               "margin", "focal_win", "scores", "standings", "rewards", "truncated")
GAMES_FILE = "games.jsonl"
CONFIG_FILE = "tournament.json"


def _labelled(agents: Any) -> Any:
    """A list of agent names as the mapping label -> name (each name its own label)."""
    if not isinstance(agents, (list, dict)) or len(agents) < 2:
        raise KeyProblem("", "expected a list of at least two agent names or a mapping label -> agent name")
    if isinstance(agents, dict):
        return agents
    if len(set(map(str, agents))) != len(agents):
        raise KeyProblem("", "an agent appears twice in the list; to play copies, give a mapping label -> agent name")
    return {str(name): name for name in agents}


Agents = Annotated[dict[str, str], BeforeValidator(_labelled), WithJsonSchema({"anyOf": [
    {"type": "array", "items": {"type": "string"}, "minItems": 2, "uniqueItems": True},
    {"type": "object", "additionalProperties": {"type": "string"}, "minProperties": 2}]})]


class TournamentConfig(ConfigModel):
    """What to play: the game and its rules options, the agents (label -> registry name),
    how many shared deals, the seed and the episode length; and how: workers, backend,
    where the outputs go. The agents and the options are checked once the game is known."""

    game: GameId
    agents: Agents
    deals: int = Field(100, ge=1)
    seed: int = Field(0, ge=0)
    episode: Literal["hand", "match"] = "hand"
    options: Options = {}
    workers: int = Field(1, ge=1, le=512)
    backend: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    output_dir: Folder = "tournament_results"
    plots: bool = True
    chunk_deals: int = Field(10, ge=1)
    focal: list[str] | None = None

    @field_validator("agents")
    @classmethod
    def _agents_play_the_game(cls, agents: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        for label, name in agents.items() if "game" in info.data else ():
            check_agent(name, info.data["game"], label)
        return agents

    @field_validator("options")
    @classmethod
    def _episode_apart(cls, options: dict[str, Any]) -> dict[str, Any]:
        if "episode" in options:
            raise KeyProblem("episode", "set the episode with the top-level key 'episode'")
        return options

    @model_validator(mode="after")
    def _env_builds(self) -> TournamentConfig:
        check(lambda: rummy_envs.ENVS[self.game].raw_env(**self.env_options), "options")
        return self

    @model_validator(mode="after")
    def _focal_agents_listed(self) -> TournamentConfig:
        unknown = [label for label in self.focal or () if label not in self.agents]
        if unknown or self.focal == []:
            raise KeyProblem("focal", f"the focal agents must be labels of 'agents' ({', '.join(self.agents)}); "
                                      f"got {self.focal}")
        return self

    @property
    def env_options(self) -> dict[str, Any]:
        return {**self.options, "episode": self.episode}

    def game_fields(self) -> dict[str, Any]:
        """The part of the config that decides the games (what a resume must match)."""
        return self.model_dump(mode="json", exclude=set(RUN_KEYS))


def parse_config(data: dict[str, Any], where: str = "tournament config") -> TournamentConfig:
    """Validate a config mapping: unknown keys, games, agents and rules options fail here,
    naming the key, before any game is played. From Python, ``agents`` may also hold agent
    objects and factories (classes or functions) beside names (``python_agents``)."""
    if isinstance(data.get("agents"), (list, dict)):
        data = {**data, "agents": python_agents(data["agents"])}
    return validate(TournamentConfig, data, where)


def python_agents(agents: list[Any] | dict[str, Any]) -> list[Any] | dict[str, Any]:
    """Agent objects and factories turned into agent names (``agents.base.agent_name_for``);
    in a list, an object is labelled by its ``name`` and a factory by its ``__name__``."""
    if isinstance(agents, dict):
        return {label: _name_for(str(label), agent) for label, agent in agents.items()}
    if all(isinstance(agent, str) for agent in agents):
        return agents
    labelled = {agent if isinstance(agent, str) else str(getattr(agent, "name", None) or getattr(agent, "__name__", type(agent).__name__)): agent
                for agent in agents}
    if len(labelled) != len(agents):
        raise ConfigError("config key 'agents': two agents have the same label; give a mapping label -> agent")
    return {label: _name_for(label, agent) for label, agent in labelled.items()}


def _name_for(label: str, agent: Any) -> str:
    try:
        return agent_name_for(label, agent)
    except ValueError as err:
        raise ConfigError(f"config key 'agents': {err}") from None


def load_config(path: str | Path, **overrides: Any) -> TournamentConfig:
    """Read and validate a YAML tournament config; ``overrides`` replace its keys."""
    data = read_yaml(path)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return parse_config(data, where=str(path))


# ----------------------------------------------------------------------------------------
# The schedule


@dataclass(frozen=True)
class Task:
    """The duplicate sets of one pairing over a run of deals: the unit sent to a worker."""

    pairing: int
    focal: str
    opponent: str
    first_deal: int
    last_deal: int  # exclusive


def pairings(config: TournamentConfig, num_players: int) -> list[tuple[str, str]]:
    """Unordered pairs for two players (both seatings are played); ordered pairs (focal
    against copies of the opponent) for more. With ``focal`` agents, only the pairs that
    hold one of them (two players) or have one as the focal agent (more)."""
    labels = list(config.agents)
    pairs = list(combinations(labels, 2) if num_players == 2 else permutations(labels, 2))
    if config.focal is None:
        return pairs
    return [(a, b) for a, b in pairs if a in config.focal or (num_players == 2 and b in config.focal)]


def seatings(focal: str, opponent: str, num_players: int) -> list[list[str]]:
    """The seat orders of one duplicate set: the focal agent in every seat once."""
    return [[focal if s == k else opponent for s in range(num_players)] for k in range(num_players)]


def schedule(config: TournamentConfig, num_players: int) -> list[Task]:
    tasks = []
    for index, (focal, opponent) in enumerate(pairings(config, num_players)):
        for start in range(0, config.deals, config.chunk_deals):
            tasks.append(Task(index, focal, opponent, start, min(start + config.chunk_deals, config.deals)))
    return tasks


def deal_seed(seed: int, deal: int) -> int:
    """The env seed of shared deal ``deal``: the same for every pairing and seating."""
    return _derive(seed, "deal", deal)


def _derive(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 2


# ----------------------------------------------------------------------------------------
# Playing


_ENV_CACHE: dict[str, Any] = {}


def _env_for(game: str, options: dict[str, Any]) -> Any:
    key = json.dumps([game, options], sort_keys=True)
    if key not in _ENV_CACHE:
        _ENV_CACHE[key] = rummy_envs.ENVS[game].raw_env(**options)
    return _ENV_CACHE[key]


def play_game(game: str, options: dict[str, Any], seats: list[str], names: dict[str, str], env_seed: int,
              agent_seeds: list[int]) -> dict[str, Any]:
    """One episode: the agents labelled ``seats`` (by seat) from the env seeded ``env_seed``.

    Returns the game log (rummy_envs.replay: game, options, engine seed, deck, dealer,
    actions), the final scores, the standings and the rewards by seat."""
    env = _env_for(game, options)
    env.reset(seed=env_seed)
    players = [make_agent(names[label], game, s) for label, s in zip(seats, agent_seeds)]
    for agent in players:
        agent.reset()
    seat_of = env.agent_name_mapping
    totals = [0.0] * len(seats)
    while env.agents:
        name = env.agent_selection
        seat = seat_of[name]
        obs, reward, terminated, truncated, _ = env.last()
        totals[seat] += reward
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(players[seat].act(obs["observation"], obs["action_mask"], env.player_view(name))))
    state = env.game
    return {**game_log(state, options), "scores": list(state.scores()), "standings": list(state.standings()),
            "rewards": totals, "truncated": bool(state.truncated)}


def play_task(config: TournamentConfig, num_players: int, task: Task,
              registry: bytes | None = None) -> list[dict[str, Any]]:
    """Every game of a task, as records (see the module docstring for the ids and seeds).
    ``registry`` holds the parent's registry entries of the agents (``packed_registry``),
    for a worker process that did not run the ``register`` calls."""
    install_packed_registry(registry)
    records = []
    for deal in range(task.first_deal, task.last_deal):
        env_seed = deal_seed(config.seed, deal)
        for rotation, seats in enumerate(seatings(task.focal, task.opponent, num_players)):
            agent_seeds = [_derive(config.seed, "agent", deal, json.dumps(seats), s) for s in range(num_players)]
            outcome = play_game(config.game, config.env_options, seats, config.agents, env_seed, agent_seeds)
            records.append(_record(config, task, deal, rotation, seats, env_seed, agent_seeds, outcome))
    return records


def _record(config: TournamentConfig, task: Task, deal: int, rotation: int, seats: list[str], env_seed: int,
            agent_seeds: list[int], outcome: dict[str, Any]) -> dict[str, Any]:
    n = len(seats)
    focal_seat = rotation
    scores = outcome["scores"]
    others = [scores[s] for s in range(n) if s != focal_seat]
    place = rank_rewards(outcome["standings"])[focal_seat]
    return {
        "game_id": (task.pairing * config.deals + deal) * n + rotation,
        "focal": task.focal,
        "opponent": task.opponent,
        "deal": deal,
        "rotation": rotation,
        "seats": seats,
        "agents": [config.agents[label] for label in seats],
        "env_seed": env_seed,
        "agent_seeds": agent_seeds,
        "margin": scores[focal_seat] - sum(others) / len(others),
        "focal_win": (place + 1.0) / 2.0,
        **outcome,
    }


def replay(record: dict[str, Any]) -> Any:
    """The raw env at the end of a logged game: the record is a game log (rummy_envs.replay)
    with the tournament's keys added, replayed exactly from its deal and actions."""
    return replay_env(record, extra_keys=RECORD_KEYS)


# ----------------------------------------------------------------------------------------
# Running, with resume


def _game_count(config: TournamentConfig, num_players: int) -> int:
    return len(pairings(config, num_players)) * config.deals * num_players


def num_players_of(config: TournamentConfig) -> int:
    return len(_env_for(config.game, config.env_options).possible_agents)


def _load_finished(out: Path, config: TournamentConfig) -> dict[int, dict[str, Any]]:
    """Records of a previous run of the same games in ``out`` (a torn last line is dropped)."""
    meta, log = out / CONFIG_FILE, out / GAMES_FILE
    if not log.exists():
        return {}
    if meta.exists():
        before = json.loads(meta.read_text())
        if before != config.game_fields():
            differ = sorted(k for k in before.keys() | config.game_fields().keys()
                            if before.get(k) != config.game_fields().get(k))
            raise ConfigError(f"{out} holds a tournament with other settings ({', '.join(differ)}); "
                              "use another output_dir or remove that folder")
    finished = {}
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        finished[record["game_id"]] = record
    return finished


def _task_ids(config: TournamentConfig, num_players: int, task: Task) -> range:
    first = (task.pairing * config.deals + task.first_deal) * num_players
    return range(first, first + (task.last_deal - task.first_deal) * num_players)


def run_tournament(config: TournamentConfig, progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Play every game not already in ``output_dir`` and return all records in game-id order.

    ``progress(done, total)`` is called as games finish."""
    registry = packed_registry(config.agents.values()) if config.backend == "ray" or config.workers > 1 else None
    out = Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    n = num_players_of(config)
    finished = _load_finished(out, config)
    (out / CONFIG_FILE).write_text(json.dumps(config.game_fields(), indent=1, sort_keys=True))
    todo = [t for t in schedule(config, n) if not all(i in finished for i in _task_ids(config, n, t))]
    total = _game_count(config, n)
    done = total - sum(len(_task_ids(config, n, t)) for t in todo)
    if progress:
        progress(done, total)
    with (out / GAMES_FILE).open("a") as log:
        for records in _execute(config, n, todo, registry):
            for r in records:
                finished[r["game_id"]] = r
                log.write(json.dumps(r) + "\n")
            log.flush()
            done += len(records)
            if progress:
                progress(done, total)
    ordered = [finished[i] for i in sorted(finished)]
    _rewrite(out / GAMES_FILE, ordered)
    return ordered


def _rewrite(path: Path, records: list[dict[str, Any]]) -> None:
    """The log in game-id order, replaced atomically, so every run leaves the same file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.replace(tmp, path)


def _execute(config: TournamentConfig, num_players: int, tasks: list[Task],
             registry: bytes | None) -> Iterator[list[dict[str, Any]]]:
    """Each task's records as it finishes, on the configured backend."""
    if not tasks:
        return
    if config.backend == "ray":
        yield from _execute_ray(config, num_players, tasks, registry)
    elif config.workers == 1:
        for task in tasks:
            yield play_task(config, num_players, task)
    else:
        with ProcessPoolExecutor(config.workers, mp_context=get_context("spawn")) as pool:
            pending = {pool.submit(play_task, config, num_players, t, registry) for t in tasks}
            while pending:
                ready, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in ready:
                    yield future.result()


def _execute_ray(config: TournamentConfig, num_players: int, tasks: list[Task],
                 registry: bytes | None) -> Iterator[list[dict[str, Any]]]:
    """The same tasks as Ray tasks: on the cluster at ``ray_address``, or a local Ray."""
    with ray_session(config.ray_address, config.workers, "config key 'backend': 'ray'") as ray:
        remote = ray.remote(play_task)
        pending = [remote.remote(config, num_players, t, registry) for t in tasks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])


def summarize(config: TournamentConfig, records: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json``: the config, the pairings with their intervals and the ratings."""
    from training.stats import pairing_results, ratings

    return {
        "config": config.model_dump(mode="json"),
        "rummy_envs_version": rummy_envs.__version__,
        "games": len(records),
        "pairings": [p.to_dict() for p in pairing_results(records)],
        "ratings": [r.to_dict() for r in ratings(list(config.agents), records)],
    }



def run(config: TournamentConfig | dict[str, Any] | str | Path, show: bool = False) -> dict[str, Any]:
    """The Python API: play (or resume) a tournament, write every output into
    ``output_dir`` and return the summary. ``show`` adds a progress bar and the leaderboard."""
    from training.report import print_leaderboard, write_outputs

    if isinstance(config, (str, Path)):
        config = load_config(config)
    elif isinstance(config, dict):
        config = parse_config(config)
    if show:
        from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

        columns = (*Progress.get_default_columns()[:2], MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns) as bar:
            job = bar.add_task(f"{config.game} tournament", total=None)
            records = run_tournament(config, lambda done, total: bar.update(job, completed=done, total=total))
    else:
        records = run_tournament(config)
    summary = summarize(config, records)
    write_outputs(Path(config.output_dir), summary, records, config.plots)
    if show:
        print_leaderboard(summary)
    return summary
