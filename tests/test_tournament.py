"""Tournaments: the duplicate schedule, determinism across workers and backends, resume,
config validation, the statistics against hand-computed cases, and the CLI outputs."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from training import cli
from training.config import ConfigError
from training.stats import Z95, mean_interval, pairing_results, ratings
from training.tournament import (load_config, pairings, parse_config, replay, run, run_tournament, schedule,
                                 seatings)

TINY = {"game": "gin_rummy", "agents": ["random", "novice"], "deals": 3, "seed": 7, "plots": False}


def tiny(tmp_path: Path, **changes) -> dict:
    return {**TINY, "output_dir": str(tmp_path / "out"), **changes}


# -- the schedule --------------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [2, 3, 4, 8])
def test_every_agent_sits_in_every_seat_equally(num_players):
    labels = ["a", "b", "c"]
    config = parse_config({**TINY, "agents": {label: "random" for label in labels}})
    seat_counts: Counter = Counter()
    for focal, opponent in pairings(config, num_players):
        for seats in seatings(focal, opponent, num_players):
            assert len(seats) == num_players and seats.count(focal) == 1
            for seat, label in enumerate(seats):
                seat_counts[label, seat] += 1
    counts = {seat_counts[label, seat] for label in labels for seat in range(num_players)}
    assert len(counts) == 1, seat_counts


def test_pairings_two_players_unordered_more_players_ordered():
    config = parse_config({**TINY, "agents": ["random", "novice"]})
    assert pairings(config, 2) == [("random", "novice")]
    assert pairings(config, 4) == [("random", "novice"), ("novice", "random")]


def test_schedule_covers_every_deal_once_per_pairing():
    config = parse_config({**TINY, "deals": 23, "chunk_deals": 5})
    deals = [d for t in schedule(config, 2) for d in range(t.first_deal, t.last_deal)]
    assert sorted(deals) == list(range(23))


def test_every_pairing_plays_the_same_deals_with_seats_swapped(tmp_path):
    records = run_tournament(parse_config(tiny(tmp_path, agents={"r1": "random", "r2": "random", "n": "novice"})))
    by_deal: dict[int, set] = {}
    for r in records:
        by_deal.setdefault(r["deal"], set()).add(r["env_seed"])
        assert r["seats"][r["rotation"]] == r["focal"]
    assert all(len(seeds) == 1 for seeds in by_deal.values())
    assert len(records) == 3 * 3 * 2  # three pairs, three deals, two seatings


# -- determinism, backends and resume ------------------------------------------------------
def _strip(records):
    return [json.dumps(r, sort_keys=True) for r in records]


def test_one_and_two_workers_give_identical_results(tmp_path):
    one = run_tournament(parse_config(tiny(tmp_path / "1", workers=1, chunk_deals=1)))
    two = run_tournament(parse_config(tiny(tmp_path / "2", workers=2, chunk_deals=1)))
    assert _strip(one) == _strip(two)
    assert (tmp_path / "1/out/games.jsonl").read_text() == (tmp_path / "2/out/games.jsonl").read_text()


def test_ray_backend_gives_identical_results(tmp_path):
    pytest.importorskip("ray")
    local = run_tournament(parse_config(tiny(tmp_path / "local")))
    on_ray = run_tournament(parse_config(tiny(tmp_path / "ray", backend="ray", workers=2)))
    assert _strip(local) == _strip(on_ray)


def test_every_logged_game_replays_to_its_scores(tmp_path):
    for record in run_tournament(parse_config(tiny(tmp_path))):
        env = replay(record)
        assert list(env.game.scores()) == record["scores"]
        assert env.game.history == record["actions"]


def test_resume_plays_only_what_is_missing(tmp_path, monkeypatch):
    config = parse_config(tiny(tmp_path, chunk_deals=1))
    full = run_tournament(config)
    log = tmp_path / "out/games.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:2]) + "\n" + lines[2][:40])  # a crash mid-write
    played = []
    import training.tournament as T

    real = T.play_task
    monkeypatch.setattr(T, "play_task", lambda *a: played.append(a[2]) or real(*a))
    resumed = run_tournament(config)
    assert _strip(resumed) == _strip(full)
    assert [t.first_deal for t in played] == [1, 2]  # deal 0's set was complete


def test_resume_refuses_a_folder_of_other_games(tmp_path):
    run_tournament(parse_config(tiny(tmp_path)))
    with pytest.raises(ConfigError, match="seed"):
        run_tournament(parse_config(tiny(tmp_path, seed=8)))
    run_tournament(parse_config(tiny(tmp_path, workers=2)))  # how it runs may change


# -- config validation ---------------------------------------------------------------------
@pytest.mark.parametrize(("changes", "key"), [
    ({"colour": "red"}, "colour"),
    ({"game": "poker"}, "game"),
    ({"agents": ["random", "grandmaster"]}, "agents"),
    ({"agents": ["random"]}, "agents"),
    ({"deals": 0}, "deals"),
    ({"deals": "many"}, "deals"),
    ({"episode": "season"}, "episode"),
    ({"backend": "slurm"}, "backend"),
    ({"workers": 0}, "workers"),
    ({"plots": "yes"}, "plots"),
    ({"options": {"knock_limit": 99999}}, "knock_limit"),
    ({"options": {"no_such_rule": 1}}, "no_such_rule"),
    ({"options": {"episode": "match"}}, "options.episode"),
])
def test_bad_configs_fail_at_load_naming_the_key(tmp_path, changes, key):
    with pytest.raises(ConfigError, match=key):
        parse_config({**TINY, **changes})


def test_a_bad_agent_fails_at_load_naming_its_dotted_key(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("game: gin_rummy\nagents: {mine: random, theirs: grandmaster}\n")
    with pytest.raises(ConfigError, match=f"{path}: config key 'agents.theirs': unknown agent 'grandmaster'"):
        load_config(path)


def test_the_schema_is_json_and_lists_every_key(tmp_path):
    from training.schema import main
    from training.tournament import TournamentConfig

    assert main([str(tmp_path)]) == 0
    schema = json.loads((tmp_path / "tournament_config.schema.json").read_text())
    assert set(schema["properties"]) == set(TournamentConfig.model_fields) == {
        "game", "options", "agents", "deals", "seed", "episode", "workers", "backend", "ray_address", "output_dir",
        "plots", "chunk_deals"}
    assert schema["required"] == ["game", "agents"] and schema["additionalProperties"] is False
    assert [option["type"] for option in schema["properties"]["agents"]["anyOf"]] == ["array", "object"]


def test_yaml_config_and_overrides(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("game: hollywood_gin\nagents: [random, novice]\ndeals: 5\nepisode: match\n")
    config = load_config(path, deals=2, output_dir=str(tmp_path))
    assert (config.game, config.deals, config.episode, config.env_options) == ("hollywood_gin", 2, "match", {"episode": "match"})
    path.write_text("- just a list\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(path)


# -- statistics ----------------------------------------------------------------------------
def test_mean_interval_by_hand():
    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(((1.5**2) * 2 + (0.5**2) * 2) / 3)  # 1.2910
    assert interval.mean == 2.5
    assert interval.high - 2.5 == pytest.approx(Z95 * sd / 2)
    assert interval.low == pytest.approx(2.5 - 1.959964 * 1.2909944 / 2, abs=1e-6)
    assert mean_interval([5.0]).low is None
    assert mean_interval([2.0, 2.0]).excludes_zero() and not mean_interval([-1.0, 1.0]).excludes_zero()


def _game(game_id, focal, opponent, deal, margin, win):
    return {"game_id": game_id, "focal": focal, "opponent": opponent, "deal": deal, "margin": margin,
            "focal_win": win, "seats": [focal, opponent]}


def test_pairing_results_average_each_duplicate_set_first():
    records = [_game(0, "a", "b", 0, 10, 1), _game(1, "a", "b", 0, -4, 0),   # set mean 3, win 0.5
               _game(2, "a", "b", 1, 6, 1), _game(3, "a", "b", 1, 0, 0.5)]   # set mean 3, win 0.75
    a_vs_b, b_vs_a = sorted(pairing_results(records), key=lambda p: p.focal)
    assert (a_vs_b.focal, a_vs_b.margin.mean, a_vs_b.margin.low, a_vs_b.games) == ("a", 3.0, 3.0, 4)
    assert a_vs_b.win_rate.mean == 0.625
    assert (b_vs_a.focal, b_vs_a.margin.mean, b_vs_a.win_rate.mean) == ("b", -3.0, 0.375)


def test_ratings_follow_openskill_by_hand():
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    a, b = model.rating(), model.rating()
    [[a], [b]] = model.rate([[a], [b]], ranks=[0, 1])
    [[b], [a]] = model.rate([[b], [a]], ranks=[0, 0])
    ours = ratings(["a", "b"], [_game(0, "a", "b", 0, 5, 1), _game(1, "b", "a", 0, 0, 0.5)])
    assert [r.agent for r in ours] == ["a", "b"]
    assert ours[0].mu == pytest.approx(a.mu) and ours[0].sigma == pytest.approx(a.sigma)
    assert ours[1].mu == pytest.approx(b.mu) and ours[1].ordinal == pytest.approx(b.mu - 3 * b.sigma)


def test_ratings_do_not_depend_on_record_order():
    records = [_game(i, "a", "b", i, 1, i % 2) for i in range(6)]
    assert ratings(["a", "b"], records) == ratings(["a", "b"], records[::-1])


# -- the command line and the outputs ------------------------------------------------------
def test_cli_runs_a_tiny_tournament_and_writes_every_output(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    out = tmp_path / "results"
    path.write_text(f"game: gin_rummy\nagents: [random, novice]\ndeals: 2\noutput_dir: {out}\n")
    assert cli.main(["tournament", str(path), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "novice" in printed and "head to head" in printed
    for name in ("results.csv", "summary.json", "summary.md", "games.jsonl", "head_to_head.png", "ratings.png"):
        assert (out / name).stat().st_size > 0, name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == 4 and {r["agent"] for r in summary["ratings"]} == {"random", "novice"}
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 4
    assert len((out / "games.jsonl").read_text().splitlines()) == 4


def test_cli_reports_a_bad_config_and_plays_nothing(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    path.write_text(f"game: gin_rummy\nagents: [random, novice]\ndeal: 2\noutput_dir: {tmp_path / 'o'}\n")
    assert cli.main(["tournament", str(path)]) == 2
    assert "'deal'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_python_api_returns_the_summary(tmp_path):
    summary = run(tiny(tmp_path))
    assert summary["games"] == 6 and len(summary["pairings"]) == 2


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parent.parent / "configs/tournaments").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_committed_tournament_configs_load(path):
    config = load_config(path)
    assert config.deals >= 1 and len(config.agents) >= 2


def test_output_dir_may_be_a_path_from_python(tmp_path):
    """From Python a pathlib path is as good as text; YAML's non-text is refused naming the key."""
    config = parse_config({"game": "gin_rummy", "agents": ["random", "novice"], "output_dir": tmp_path})
    assert config.output_dir == str(tmp_path)
    with pytest.raises(ConfigError, match="'output_dir'"):
        parse_config({"game": "gin_rummy", "agents": ["random", "novice"], "output_dir": 3})
