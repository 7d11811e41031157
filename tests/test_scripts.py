"""Smoke runs of every script: the demo (the README's run command) and the benchmarks."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_demo_runs_as_in_the_readme(tmp_path):
    out = subprocess.run([sys.executable, "-m", "training", "--deals", "2", "--seconds", "0.2", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=True).stdout
    for game in ("gin_rummy", "hollywood_gin"):
        assert f"=== {game}: tournament" in out and f"{game}:" in out
        assert (tmp_path / f"{game}_2deals_seed0" / "head_to_head.png").exists()
    assert "rating" in out and "agent steps/s" in out and "deadwood" in out


def test_tournament_benchmark_runs_and_writes_its_section(tmp_path):
    pytest.importorskip("rlcard")
    from benchmarks import bench_tournament

    out = tmp_path / "RESULTS.md"
    out.write_text("# Results\n")
    assert bench_tournament.main(["--seconds", "0.05", "--deals", "2", "--out", str(out)]) == 0
    assert bench_tournament.main(["--seconds", "0.05", "--deals", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Results") and text.count(bench_tournament.BEGIN) == 1 and "RLCard" in text


# Each game's benchmark (its extra needs) and what its report must hold.
GAME_BENCHMARKS = {
    "bench_gin_rummy": (("rlcard", "pyspiel"), ("OpenSpiel", "RLCard", "deadwood, meld-rich hands", "agree on every hand")),
    "bench_hollywood_gin": (("rlcard", "pyspiel"), ("ours hollywood_gin_v0.env()", "OpenSpiel's gin loop")),
    "bench_rummy500": ((), ("rummy500 2-player env steps/s >= 0.5x gin's", "mask of a decision", "spends its time")),
    "bench_manipulation_rummy": (("scipy",), ("DP is_legal vs ILP", "memo tables", "manipulation_rummy_v0.env() 4 players")),
    "bench_least_count": ((), ("least_count 4-player env steps/s >= gin's", "spends its time")),
    "bench_frames": ((), ("render() each decision", "frames/s of drawing alone")),
    "bench_openspiel": (("pyspiel",), ("bridged manipulation_rummy through pyspiel", "OpenSpiel gin_rummy, native C++")),
}


@pytest.mark.parametrize("module", GAME_BENCHMARKS)
def test_game_benchmark_smoke_run_replaces_its_own_section(module, tmp_path):
    needs, expected = GAME_BENCHMARKS[module]
    for name in needs:
        pytest.importorskip(name)
    from benchmarks.harness import markers

    bench = importlib.import_module(f"benchmarks.{module}")
    begin, end = markers(module)
    out = tmp_path / "RESULTS.md"
    other = "<!-- other:begin -->\nanother section\n<!-- other:end -->"
    out.write_text(f"# Results\n\n{begin}\nstale figures\n{end}\n\n{other}\n")
    assert bench.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Results") and "another section" in text and "stale figures" not in text
    assert text.count(begin) == text.count(end) == 1 and f"python -m benchmarks.{module} --smoke" in text
    assert "ours gin_rummy_v0.env()" in text or module == "bench_hollywood_gin"
    for phrase in expected:
        assert phrase in text, phrase


def test_search_benchmark_smoke_run_writes_its_section(tmp_path):
    from benchmarks import bench_search

    out = tmp_path / "RESULTS.md"
    out.write_text("# Results\n")
    assert bench_search.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count(bench_search.BEGIN) == 1 and "| gin_rummy | ismcts |" in text and "| least_count | pimc |" in text


def test_search_budget_smoke_run_writes_its_table_and_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from benchmarks import search_budget

    out, picture = tmp_path / "RESULTS.md", tmp_path / "budget.png"
    assert search_budget.main(["--smoke", "--out", str(out), "--plot", str(picture)]) == 0
    assert "| gin_rummy | 4 | heuristic |" in out.read_text() and picture.stat().st_size > 0


def test_search_worlds_smoke_run_writes_its_table(tmp_path):
    from benchmarks import search_worlds

    out = tmp_path / "RESULTS.md"
    assert search_worlds.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert all(f"| {worlds} |" in text for worlds in ("view", "true", "true-4", "odds", "deadwood", "calibrated"))


def test_least_count_worlds_smoke_run_writes_its_table(tmp_path):
    from benchmarks import least_count_worlds

    out = tmp_path / "RESULTS.md"
    assert least_count_worlds.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert all(f"| {worlds} |" in text for worlds in ("view", "belief", "true"))


def test_rollout_advantages_smoke_run_writes_its_table(tmp_path):
    pytest.importorskip("torch")
    from benchmarks import rollout_advantages

    out = tmp_path / "RESULTS.md"
    assert rollout_advantages.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| 1 | 40 | 0 |" in text and "| 4 | 40 | 4 |" in text


def test_rollout_advantages_are_measured_against_the_heuristic_move():
    """Every recorded decision has two or more legal moves, a value exactly on them, and 0 on
    the heuristic's own; the same worker measures the same values again."""
    import numpy as np

    from benchmarks import rollout_advantages

    data = rollout_advantages.collect(worker=3, decisions=6, reshuffles=2)
    rows = np.arange(6)
    assert (data["masks"].sum(axis=1) >= 2).all() and data["masks"][rows, data["moves"]].all()
    assert (np.isnan(data["advantages"]) == ~data["masks"]).all()
    assert (data["advantages"][rows, data["moves"]] == 0).all()
    again = rollout_advantages.collect(worker=3, decisions=6, reshuffles=2)
    assert all(np.array_equal(data[key], again[key], equal_nan=True) for key in data)


def test_rollout_advantages_judge_finds_a_better_move_where_there_is_one():
    """Synthetic decisions where move 1 beats the heuristic's move 0 by 10 points exactly
    when the first input is positive: the fitted policy leaves move 0 about half the time
    and gains nearly 5 points a decision; with a margin of 30 it never leaves it."""
    pytest.importorskip("torch")
    import numpy as np

    from benchmarks import rollout_advantages

    rng = np.random.default_rng(0)
    inputs = rng.normal(size=(3000, 8)).astype(np.float16)
    masks = np.zeros((3000, 3), bool)
    masks[:, :2] = True
    advantages = np.full((3000, 3), np.nan, np.float32)
    advantages[:, 0] = 0.0
    advantages[:, 1] = np.where(inputs[:, 0] > 0, 10.0, -10.0)
    data = {"inputs": inputs, "masks": masks, "advantages": advantages, "moves": np.zeros(3000, np.int64),
            "hands": np.arange(3000) // 10}
    found = rollout_advantages.fit_and_judge(data, epochs=5, seed=0)
    by_margin = {p["margin"]: p for p in found["policies"]}
    assert 0.4 < by_margin[0.0]["leaves"] < 0.6 and by_margin[0.0]["gain"] > 3.5
    assert found["held_loss"] < found["zero_loss"] / 2
    found = rollout_advantages.fit_and_judge(data, epochs=5, seed=0, margins=(30.0,))
    assert found["policies"][0]["leaves"] == 0.0 and found["policies"][0]["gain"] == 0.0


def test_rollout_advantages_fitted_agent_keeps_the_heuristic_move_below_its_margin():
    """With a margin no prediction reaches, the fitted agent plays the heuristic's move at
    every decision; with none, it plays its network's best legal move."""
    import numpy as np

    import rummy_envs
    from agents import make_agent
    from agents.features import feature_set
    from benchmarks import rollout_advantages

    env = rummy_envs.ENVS["gin_rummy"].env()
    env.reset(seed=5)
    size = env.observation_space(env.agents[0])["observation"].shape[0]
    rng = np.random.default_rng(1)
    features = feature_set("gin_hand+heuristic_move", "gin_rummy").size
    weights = [(rng.normal(size=(size + features, 16)).astype(np.float32), np.zeros(16, np.float32)),
               (rng.normal(size=(16, 16)).astype(np.float32), np.zeros(16, np.float32)),
               (rng.normal(size=(16, 450)).astype(np.float32), np.zeros(450, np.float32))]
    keeps = rollout_advantages.FittedAgent(weights, margin=1e9)
    free = rollout_advantages.FittedAgent(weights, margin=0.0)
    heuristic = make_agent("heuristic", "gin_rummy", 0)
    differ = 0
    for agent_name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        view = env.unwrapped.player_view(agent_name)
        move = heuristic.act(observation["observation"], observation["action_mask"], view)
        assert keeps.act(observation["observation"], observation["action_mask"], view) == move
        differ += free.act(observation["observation"], observation["action_mask"], view) != move
        env.step(move)
    assert differ > 0


def test_search_worlds_draws_each_kind_of_world(monkeypatch):
    """Every world keeps the seat's hand and every card once; ``true`` has the other hand,
    ``true-4`` all but 4 of its unseen cards, ``deadwood`` its least deadwood within 2,
    ``calibrated`` a least deadwood within 2 of one seen in self-play."""
    import rummy_envs
    from agents import make_agent
    from agents.search import mask_of
    from benchmarks import search_worlds
    from rummy_envs import cards as C
    from rummy_envs import melds as M

    env = rummy_envs.ENVS["gin_rummy"].raw_env()
    state = env.state_class(env.config, 11)
    heuristic = make_agent("heuristic", "gin_rummy", 0)
    for _ in range(9):  # a few turns in: the seat to move draws next
        state.apply(heuristic.act(None, mask_of(state.legal_actions()), state.player_view(state.current_player)))
    me = state.current_player
    view, other = state.player_view(me), 1 - me
    assert view.phase.name in ("DRAW", "DISCARD")
    monkeypatch.setattr(search_worlds, "deadwood_by_turn", lambda: [[20]] * 10)
    for worlds in ("view", "true", "true-4", "odds", "deadwood", "calibrated"):
        agent = search_worlds.WorldsAgent(worlds, seed=1, iterations=2)
        agent.true_state = state
        for _ in range(5):
            world = agent.world(view)
            cards = [*C.from_mask(world.hands[0]), *C.from_mask(world.hands[1]), *world.stock, *world.pile]
            assert sorted(cards) == list(range(52)) and world.hands[me] == state.hands[me]
            kept = (world.hands[other] & state.hands[other]).bit_count()
            if worlds == "true":
                assert world.hands[other] == state.hands[other] and world.stock != state.stock
            elif worlds == "true-4":
                assert kept == 6
            elif worlds == "deadwood":
                assert abs(M.min_deadwood(world.hands[other]) - M.min_deadwood(state.hands[other])) <= 2
            elif worlds == "calibrated":
                assert abs(M.min_deadwood(world.hands[other]) - 20) <= 2


def test_training_benchmark_smoke_run_writes_its_section(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    from benchmarks import bench_train

    monkeypatch.chdir(ROOT)
    out = tmp_path / "RESULTS.md"
    out.write_text("# Results\n")
    assert bench_train.main(["--steps", "64", "--games", "gin_rummy", "--pipelines", "sharded", "sb3",
                             "--out", str(out)]) == 0
    rows = {line.split(" | ")[1]: line.split(" | ") for line in out.read_text().splitlines()
            if line.startswith("| gin_rummy |")}
    assert set(rows) == {"sharded: batched, 2 local workers", "SB3 reference (DummyVecEnv, random opponents)"}
    assert rows["SB3 reference (DummyVecEnv, random opponents)"][4] == "1.00x"
    assert rows["sharded: batched, 2 local workers"][6] != "0%"  # the workers' opponent clocks came back


def test_learning_curves_smoke_run_draws_every_run_with_an_eval_csv(tmp_path):
    from training import curves

    run = tmp_path / "run"
    run.mkdir()
    (run / "eval.csv").write_text("step,opponent,games,margin,margin_low,margin_high,win_rate,win_low,win_high\n"
                                  "100,novice,4,1.5,-1.0,4.0,0.5,0.1,0.9\n200,novice,4,2.5,0.0,5.0,0.6,0.2,0.9\n")
    assert curves.read_evaluations(run) == {"novice": [(100, 1.5, -1.0, 4.0), (200, 2.5, 0.0, 5.0)]}
    out = tmp_path / "curves.png"
    assert curves.main([str(run), str(tmp_path / "no_run"), "--against", "novice", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    with pytest.raises(SystemExit):
        curves.main([str(tmp_path / "no_run")])
