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
from training.stats import ELO_PER_LOG_ODDS, PRIOR_DRAWS, Z95, mean_interval, pairing_results, ratings, rate_interval
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


def test_focal_agents_keep_only_their_pairings():
    config = parse_config({**TINY, "agents": ["random", "novice", "heuristic"], "focal": ["heuristic"]})
    assert pairings(config, 2) == [("random", "heuristic"), ("novice", "heuristic")]
    assert pairings(config, 3) == [("heuristic", "random"), ("heuristic", "novice")]


def test_a_focal_tournament_plays_the_same_games_as_the_full_one(tmp_path):
    agents = {"r": "random", "n": "novice", "h": "heuristic"}
    full = run_tournament(parse_config(tiny(tmp_path / "full", game="least_count", agents=agents)))
    focal = run_tournament(parse_config(tiny(tmp_path / "focal", game="least_count", agents=agents, focal=["h"])))
    assert {r["focal"] for r in focal} == {"h"} and len(focal) == 2 * 3 * 4  # two pairings, three deals, four seats
    keep = ("focal", "opponent", "deal", "rotation", "seats", "env_seed", "agent_seeds", "actions", "scores")
    same = [{k: r[k] for k in keep} for r in full if r["focal"] == "h"]
    assert sorted(map(json.dumps, same)) == sorted(json.dumps({k: r[k] for k in keep}) for r in focal)
    summary = run(parse_config(tiny(tmp_path / "outputs", game="least_count", agents=agents, focal=["h"], plots=True)))
    board = (tmp_path / "outputs/out/summary.md").read_text()
    assert {r["agent"] for r in summary["ratings"]} == {"r", "n", "h"} and "| n | " in board and " - | - |" in board


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
    ({"focal": ["grandmaster"]}, "focal"),
    ({"focal": []}, "focal"),
    ({"focal": "random"}, "focal"),
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
        "plots", "chunk_deals", "focal"}
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


def test_two_agent_rating_is_the_closed_form_with_the_prior():
    """Two agents: the MLE difference is 400 log10 of the odds, the prior's draw counted."""
    records = [_game(i, "a", "b", i, 1, win) for i, win in enumerate([1, 1, 1, 0.5, 0, 1, 1, 0])]
    won, played = 5.5, 8
    expected = 400 * math.log10((won + PRIOR_DRAWS / 2) / (played - won + PRIOR_DRAWS / 2))
    a, b = ratings(["a", "b"], records)
    assert (a.agent, b.agent) == ("a", "b")
    assert a.rating - b.rating == pytest.approx(expected, abs=1e-9) and a.rating == pytest.approx(-b.rating)
    assert a.low < a.rating < a.high and b.low < b.rating < b.high


def _four_agent_records(seed: int = 3) -> list[dict]:
    """Two-player games of four agents, every pair on every deal, with some draws; ``d``
    loses every game, so only the prior keeps its rating finite."""
    import random

    rng, strength = random.Random(seed), {"a": 1.0, "b": 0.3, "c": 0.0}
    records = []
    for deal in range(12):
        for focal, opponent in [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]:
            for rotation in range(2):
                if opponent == "d":
                    win = 1.0
                else:
                    edge, u = 1 / (1 + math.exp(strength[opponent] - strength[focal])), rng.random()
                    win = 1.0 if u < 0.9 * edge else 0.5 if u < 0.9 * edge + 0.1 else 0.0
                records.append(_game(len(records), focal, opponent, deal, 0, win) | {"rotation": rotation})
    return records


def test_ratings_are_the_maximum_of_the_likelihood():
    """The Newton fit against scipy's direct maximisation of the same log-likelihood."""
    from scipy.optimize import minimize

    records, agents = _four_agent_records(), ["a", "b", "c", "d"]
    points = {(i, j): PRIOR_DRAWS / 2 for i in agents for j in agents if i != j}
    for r in records:
        points[r["focal"], r["opponent"]] += r["focal_win"]
        points[r["opponent"], r["focal"]] += 1 - r["focal_win"]

    def minus_log_likelihood(theta):
        strength = dict(zip(agents, theta))
        return sum(w * math.log1p(math.exp(strength[j] - strength[i])) for (i, j), w in points.items())

    best = minimize(minus_log_likelihood, [0.0] * 4, method="BFGS", options={"gtol": 1e-10}).x
    expected = {a: (t - best.mean()) * ELO_PER_LOG_ODDS for a, t in zip(agents, best)}
    ours = ratings(agents, records)
    assert [r.agent for r in ours] == ["a", "b", "c", "d"]
    assert {r.agent: r.rating for r in ours} == pytest.approx(expected, abs=1e-3)
    assert sum(r.rating for r in ours) == pytest.approx(0.0, abs=1e-9)
    assert all(math.isfinite(r.low) and r.low <= r.rating <= r.high for r in ours)  # d included, who never scores


@pytest.mark.parametrize("order", [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]])
def test_ratings_do_not_depend_on_agent_or_record_order(order):
    import random

    records, agents = _four_agent_records(), ["a", "b", "c", "d"]
    shuffled = records.copy()
    random.Random(sum(order[:2])).shuffle(shuffled)
    assert ratings([agents[i] for i in order], shuffled) == ratings(agents, records)


def test_rating_intervals_resample_whole_deals():
    """Every deal holds the same games, mixed results inside it: resampling whole deals always
    gives the same totals, so the interval closes on the rating (resampling single games
    would not)."""
    deal = [("a", "b", 1), ("a", "b", 0), ("a", "c", 1), ("a", "c", 0.5), ("b", "c", 0), ("b", "c", 1)]
    records = [_game(len(deal) * d + k, focal, opponent, d, 0, win)
               for d in range(10) for k, (focal, opponent, win) in enumerate(deal)]
    for rating in ratings(["a", "b", "c"], records):
        assert (rating.low, rating.high) == pytest.approx((rating.rating, rating.rating), abs=1e-9)


def test_rating_summary_is_reproducible_and_uses_its_seed():
    records = _four_agent_records()
    assert ratings(list("abcd"), records) == ratings(list("abcd"), records)
    assert ratings(list("abcd"), records, seed=1) != ratings(list("abcd"), records)


@pytest.mark.parametrize("wins", [[1.0] * 10, [1.0] * 9 + [0.5], [0.0] * 10, [0.5, 0.75, 1.0], [1.0], [0.75],
                                  [0.5] * 4])
def test_rate_intervals_stay_inside_zero_one(wins):
    interval = rate_interval(wins)
    assert 0.0 <= interval.low <= interval.mean <= interval.high <= 1.0
    assert interval.high - interval.low > 0.0


def test_rate_interval_all_wins_is_wilson_over_the_sets():
    """Every set won: the Wilson interval of 10 wins in 10 trials, one trial per set."""
    interval = rate_interval([1.0] * 10)
    assert interval.high == 1.0 and interval.low == pytest.approx(10 / (10 + Z95**2))


def test_rate_interval_matches_the_normal_one_with_many_sets():
    wins = [0.0, 0.5, 0.5, 1.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.5] * 40
    wilson, normal = rate_interval(wins), mean_interval(wins)
    assert wilson.low == pytest.approx(normal.low, abs=2e-3) and wilson.high == pytest.approx(normal.high, abs=2e-3)


def test_a_two_player_pairing_mirrors_its_win_rate_interval():
    records = [_game(2 * d + s, "a", "b", d, 1, 1.0 if d or s else 0.5) for d in range(6) for s in range(2)]
    a_vs_b, b_vs_a = pairing_results(records)
    assert a_vs_b.win_rate.high <= 1.0 and b_vs_a.win_rate.low >= 0.0
    assert b_vs_a.win_rate.mean == 1 - a_vs_b.win_rate.mean
    assert (b_vs_a.win_rate.low, b_vs_a.win_rate.high) == (1 - a_vs_b.win_rate.high, 1 - a_vs_b.win_rate.low)
    assert (b_vs_a.margin.low, b_vs_a.margin.high) == (-a_vs_b.margin.high, -a_vs_b.margin.low)


@pytest.mark.parametrize("game", ["gin_rummy", "least_count"])
def test_real_tournaments_rate_the_same_whatever_the_agent_order(tmp_path, game):
    """The agents listed in three orders play the same games (each seat's agent seed comes
    from the labels by seat, not from the order of the list), so only the game ids differ."""
    agents = {"h": "heuristic", "n": "novice", "r": "random"}
    summaries = [run(tiny(tmp_path / "".join(order), game=game, agents={label: agents[label] for label in order}))
                 for order in ("hnr", "rnh", "nrh")]
    assert [s["ratings"] for s in summaries[1:]] == [summaries[0]["ratings"]] * 2
    assert [_rounded(s["pairings"]) for s in summaries[1:]] == [_rounded(summaries[0]["pairings"])] * 2
    assert len({r["rating"] for r in summaries[0]["ratings"]}) == 3  # the games did separate them


def _rounded(value):
    """Floats rounded to 9 digits (a mirrored pairing's mean is summed in another order)."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return [_rounded(v) for v in value] if isinstance(value, list) else value


# -- the command line and the outputs ------------------------------------------------------
def test_cli_runs_a_tiny_tournament_and_writes_every_output(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    out = tmp_path / "results"
    path.write_text(f"game: gin_rummy\nagents: [random, novice]\ndeals: 2\noutput_dir: {out}\n")
    assert cli.main(["tournament", str(path), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert "novice" in printed and "head to head" in printed
    for name in ("results.csv", "results_long.csv", "summary.json", "summary.md", "games.jsonl", "head_to_head.png",
                 "ratings.png"):
        assert (out / name).stat().st_size > 0, name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == 4 and {r["agent"] for r in summary["ratings"]} == {"random", "novice"}
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 4
    assert len((out / "results_long.csv").read_text().splitlines()) == 1 + 4 * 2
    assert len((out / "games.jsonl").read_text().splitlines()) == 4


def test_cli_reports_a_bad_config_and_plays_nothing(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    path.write_text(f"game: gin_rummy\nagents: [random, novice]\ndeal: 2\noutput_dir: {tmp_path / 'o'}\n")
    assert cli.main(["tournament", str(path)]) == 2
    assert "'deal'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_rerun_into_a_used_folder_with_other_settings_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "t.yaml"
    path.write_text(f"game: gin_rummy\nagents: [random, novice]\ndeals: 1\nplots: false\noutput_dir: {tmp_path / 'o'}\n")
    assert cli.main(["tournament", str(path)]) == 0
    capsys.readouterr()
    before = (tmp_path / "o" / "games.jsonl").read_text()
    assert cli.main(["tournament", str(path), "--deals", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a tournament with other settings (deals)" in err, err
    assert "Traceback" not in err and (tmp_path / "o" / "games.jsonl").read_text() == before


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
