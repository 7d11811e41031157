"""A researcher's own agents in tournaments: registered names under process spawning and Ray,
agent objects and factories given to the Python API, and the early refusal of agents that
worker processes could not rebuild."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from my_agents import LowestLegal, make_highest
from training.config import ConfigError
from training.tournament import parse_config, run_tournament

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """The names these tests register stay out of the registry other tests read."""
    import agents.base

    copy = {name: dict(by_game) for name, by_game in agents.base._REGISTRY.items()}
    monkeypatch.setattr(agents.base, "_REGISTRY", copy)


def _tiny(out: Path, agents, **changes) -> dict:
    return {"game": "gin_rummy", "agents": agents, "deals": 2, "seed": 3, "plots": False,
            "output_dir": str(out), "chunk_deals": 1, **changes}


def _python(code: str, *args: str, script: Path | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` as a script file (``script``) or with ``python -c`` (an interactive
    ``__main__`` without a file, as in a notebook)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    if script is not None:
        script.write_text(textwrap.dedent(code))
        command = [sys.executable, str(script), *args]
    else:
        command = [sys.executable, "-c", textwrap.dedent(code), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


REGISTERED_IN_MAIN = """
    import sys
    from agents import register
    from my_agents import LowestLegal
    from training.tournament import parse_config, run_tournament

    class Mine(LowestLegal):
        name = "mine"

    if __name__ == "__main__":
        register("mine2", "*", Mine)
        config = {"game": "gin_rummy", "agents": ["mine2", "random"], "deals": 2, "workers": 2,
                  "chunk_deals": 1, "plots": False, "output_dir": sys.argv[1]}
        print(len(run_tournament(parse_config(config))))
"""


def test_a_name_registered_under_main_plays_on_spawned_workers(tmp_path):
    done = _python(REGISTERED_IN_MAIN, str(tmp_path / "out"), script=tmp_path / "tour.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4"]


def test_lambdas_play_on_spawned_workers_and_an_unpicklable_agent_is_refused_first(tmp_path):
    import threading

    from agents import register

    register("lambda_agent", "*", lambda game, seed: LowestLegal(rank=1))
    one = run_tournament(parse_config(_tiny(tmp_path / "one", ["lambda_agent", "random"])))
    two = run_tournament(parse_config(_tiny(tmp_path / "two", ["lambda_agent", "random"], workers=2)))
    assert [json.dumps(r, sort_keys=True) for r in one] == [json.dumps(r, sort_keys=True) for r in two]
    lock = threading.Lock()
    register("locked", "*", lambda game, seed: LowestLegal() if lock else None)
    with pytest.raises(ConfigError, match="agent 'locked' cannot be sent to worker processes: it does not "
                       "pickle.*workers: 1"):
        run_tournament(parse_config(_tiny(tmp_path / "out", ["locked", "random"], workers=2)))
    assert not (tmp_path / "out").exists()
    assert len(run_tournament(parse_config(_tiny(tmp_path / "out", ["locked", "random"])))) == 4
    locked = Counting()
    locked.lock = lock
    with pytest.raises(ConfigError, match="'agents.locked'.*cannot copy the agent object.*give a class or function"):
        parse_config(_tiny(tmp_path / "out", {"locked": locked, "r": "random"}))


INTERACTIVE = """
    import sys
    from my_agents import LowestLegal
    from training.tournament import parse_config, run_tournament

    class Mine(LowestLegal):
        name = "mine"

    config = {"game": "gin_rummy", "agents": {"mine": Mine(rank=1), "r": "random"}, "deals": 1, "workers": 2,
              "plots": False, "output_dir": sys.argv[1]}
    records = run_tournament(parse_config(config))
    print(len(records), records[0]["agents"])
"""


def test_an_agent_defined_in_an_interactive_session_plays_on_spawned_workers(tmp_path):
    """A class defined at the Python prompt or in a notebook cannot be imported by a spawned
    worker; it travels by value."""
    done = _python(INTERACTIVE, str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2 ['python:mine', 'random']", done.stdout


class Counting(LowestLegal):
    """Counts its moves, to show that the tournament plays copies of an agent object."""

    def __init__(self) -> None:
        super().__init__()
        self.moves = 0

    def act(self, observation, action_mask, view) -> int:
        self.moves += 1
        return super().act(observation, action_mask, view)


@pytest.mark.parametrize("workers", [1, 2])
def test_agent_objects_and_factories_play_from_the_python_api(tmp_path, workers):
    counting = Counting()
    agents = {"object": counting, "class": LowestLegal, "function": make_highest, "named": "random"}
    config = parse_config(_tiny(tmp_path / "out", agents, workers=workers))
    assert config.agents == {"object": "python:object", "class": "my_agents:LowestLegal",
                             "function": "my_agents:make_highest", "named": "random"}
    records = run_tournament(config)
    assert len(records) == 6 * 2 * 2
    assert counting.moves == 0  # every seat of every game played its own copy
    assert {r["focal"] for r in records} == set(agents) - {"named"}
    games = [json.dumps(r, sort_keys=True) for r in records]
    again = [json.dumps(r, sort_keys=True) for r in run_tournament(parse_config(
        _tiny(tmp_path / "again", agents, workers=3 - workers)))]
    assert games == again


def test_a_list_of_objects_is_labelled_by_their_names(tmp_path):
    config = parse_config(_tiny(tmp_path, [LowestLegal(), make_highest, "random"]))
    assert config.agents == {"lowest": "python:lowest", "make_highest": "my_agents:make_highest",
                             "random": "random"}
    with pytest.raises(ConfigError, match="'agents': two agents have the same label"):
        parse_config(_tiny(tmp_path, [LowestLegal(), LowestLegal()]))
    with pytest.raises(ConfigError, match="'agents'.*expected a name, an agent object"):
        parse_config(_tiny(tmp_path, {"a": 42, "b": "random"}))


@pytest.mark.slow  # a Ray start-up; the default run starts Ray once, in tests/test_tournament.py
def test_ray_workers_rebuild_registered_lambdas_and_objects(tmp_path):
    pytest.importorskip("ray")
    from agents import register

    register("ray_lambda", "*", lambda game, seed: LowestLegal(rank=1))
    agents = {"lam": "ray_lambda", "object": Counting(), "r": "random"}
    local = run_tournament(parse_config(_tiny(tmp_path / "local", agents)))
    on_ray = run_tournament(parse_config(_tiny(tmp_path / "ray", agents, backend="ray", workers=2)))
    assert [json.dumps(r, sort_keys=True) for r in local] == [json.dumps(r, sort_keys=True) for r in on_ray]


def _fenced(text: str, language: str, containing: str) -> str:
    import re

    blocks = [b for b in re.findall(rf"```{language}\n(.*?)```", text, re.S) if containing in b]
    assert len(blocks) == 1, f"expected one {language} block with {containing!r}"
    return textwrap.dedent(blocks[0])


def test_the_documented_ways_to_enter_your_own_agent_run_as_written(tmp_path):
    """docs/tournaments.md's own-agent examples, on two workers: the module, the Python API
    with objects, and the YAML with an import path and an exported policy (the shipped gin
    policy stands in for one made by rummy export)."""
    import shutil

    doc = (ROOT / "docs" / "tournaments.md").read_text()
    (tmp_path / "my_agents.py").write_text(_fenced(doc, "python", "class LowestLegal:"))
    shutil.copy(ROOT / "agents" / "checkpoints" / "gin_rummy" / "policy.npz", tmp_path / "policy.npz")
    (tmp_path / "tournament.yaml").write_text(_fenced(doc, "yaml", "my_agents:LowestLegal"))
    api = _fenced(doc, "python", "from my_agents import LowestLegal").replace('"deals": 50', '"deals": 2')
    assert '"deals": 2' in api and '"workers": 2' in api
    script = api + "    print(sorted(r['agent'] for r in summary['ratings']))\n" \
        + "    from training import cli\n    raise SystemExit(cli.main(['tournament', 'tournament.yaml', '--deals', '2']))\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    (tmp_path / "run.py").write_text(script)
    done = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "['heuristic', 'lowest', 'second']" in done.stdout
    long = (tmp_path / "results" / "mixed" / "summary.json").read_text()
    assert '"ppo:policy.npz"' in long and '"my_agents:LowestLegal"' in long
