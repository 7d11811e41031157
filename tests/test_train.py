"""Training: every smoke config trains, checkpoints and exports a policy that the ppo agent
plays legally; numpy and torch pick the same actions; resume continues the step count;
checkpoints refuse other observation layouts; configs fail with the key's name; the CLI and
the Ray backend run."""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

import rummy_envs

pytest.importorskip("sb3_contrib", reason="the training tests need the train extra")

from agents import make_agent  # noqa: E402
from agents.features import policy_layout  # noqa: E402
from agents.ppo import NumpyPolicy, load_policy  # noqa: E402
from rummy_envs.wrappers import SingleAgentEnv, describe_layout, layout_hash  # noqa: E402
from training import cli  # noqa: E402
from training.config import ConfigError, read_yaml  # noqa: E402
from training.train import (CHECKPOINTS, EVAL_LOG, LayoutMismatchError, latest_checkpoint,  # noqa: E402
                            load_checkpoint, make_env, make_vec_env, new_model, train)
from training.train_config import load_config, parse_config, parse_seeds  # noqa: E402
from training.tournament import replay, run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GAME_CONFIG_DIRS = [ROOT / "configs" / game for game in rummy_envs.ENVS if (ROOT / "configs" / game).is_dir()]
SMOKE_CONFIGS = [folder / "smoke.yaml" for folder in GAME_CONFIG_DIRS if (folder / "smoke.yaml").exists()]


def smoke(path: Path, output_dir: Path, **changes) -> object:
    return load_config(path, output_dir=str(output_dir), **changes)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, object]:
    """Each smoke config trained once (its TrainResult), shared by the tests below."""
    results = {}
    for path in SMOKE_CONFIGS:
        config = smoke(path, tmp_path_factory.mktemp(path.parent.name))
        results[config.game] = (config, train(config))
    return results


def test_every_game_with_a_ppo_config_has_a_smoke_config():
    assert SMOKE_CONFIGS, "no configs/<game>/smoke.yaml"
    assert {d.name for d in GAME_CONFIG_DIRS if (d / "ppo.yaml").exists()} <= {p.parent.name for p in SMOKE_CONFIGS}
    for folder in GAME_CONFIG_DIRS:
        for path in folder.glob("*.yaml"):
            assert load_config(path).game == folder.name


@pytest.mark.parametrize("path", SMOKE_CONFIGS, ids=lambda p: p.parent.name)
def test_smoke_config_trains_checkpoints_and_exports(path, trained, tmp_path):
    config, result = trained[path.parent.name]
    run_dir = Path(result.run_dir)
    assert result.steps == config.total_steps
    checkpoint = latest_checkpoint(run_dir)
    assert checkpoint is not None and checkpoint.name == f"step_{config.total_steps:09d}"
    meta = json.loads((checkpoint / "meta.json").read_text())
    assert meta["config"] == config.to_dict() and meta["steps"] == config.total_steps
    assert meta["rummy_envs_version"] and len(meta["layout_hash"]) == 16
    assert sorted(p.name for p in (run_dir / CHECKPOINTS).iterdir()) == ["step_000000128", "step_000000256"]
    assert list((run_dir / "tb").rglob("events.out.tfevents.*")), "no TensorBoard log"
    assert len((run_dir / EVAL_LOG).read_text().splitlines()) == 1 + 2 * len(config.evaluation.opponents)
    assert len(list((run_dir / "pool").glob("step_*.npz"))) == 3  # steps 0, 128 and 256
    imitated = json.loads((run_dir / "imitation.json").read_text())
    assert imitated["teacher"] == config.imitation.teacher and imitated["decisions"] == config.imitation.decisions
    policy = load_policy(result.policy)
    assert policy.info.game == config.game and policy.info.steps == config.total_steps
    assert Path(result.policy).stat().st_size < 200_000
    # The exported policy plays a tiny tournament of its training game (the same player count);
    # replaying its games checks every move was legal.
    options = {k: v for k, v in config.env.items() if k != "episode"}
    summary = run({"game": config.game, "agents": {"ppo": f"ppo:{result.policy}", "random": "random"},
                   "options": options, "episode": config.env.get("episode", "hand"),
                   "deals": 2, "output_dir": str(tmp_path / "t"), "plots": False})
    seats = len(rummy_envs.ENVS[config.game].raw_env(**config.env).possible_agents)
    pairings = 1 if seats == 2 else 2  # two players: one pairing; more: each agent the focal one among the other's copies
    assert summary["games"] == pairings * 2 * seats  # 2 deals, each with the focal agent in every seat
    records = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert all(not replay(r).agents for r in records)


@pytest.mark.parametrize("game", ["gin_rummy", "least_count", "rummy500", "manipulation_rummy"])
def test_numpy_policy_picks_the_torch_policys_actions(trained, game):
    """The ppo agent (numpy, features computed from the player's view) against the torch
    policy on the training env's observation (features appended by the env wrapper);
    Manipulation Rummy's policy reads the plain observation."""
    config, result = trained[game]
    assert (config.features is None) == (game == "manipulation_rummy")  # both paths exercised
    checkpoint = latest_checkpoint(Path(result.run_dir))
    env = make_env(config)
    model = load_checkpoint(checkpoint, env)
    agent = make_agent(f"ppo:{checkpoint / 'policy.npz'}", config.game)
    base = env.unwrapped
    obs, _ = env.reset(seed=0)
    agreed = 0
    for _ in range(1500):
        mask = base.action_masks()
        torch_action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        raw = base.aec_env.observe(base.learner)
        numpy_action = agent.act(raw["observation"], raw["action_mask"], base.aec_env.player_view(base.learner))
        if int(torch_action) != numpy_action:  # only a float near-tie may differ
            logits = agent.policy.logits(obs)
            assert abs(logits[int(torch_action)] - logits[numpy_action]) < 1e-5
        else:
            agreed += 1
        obs, _, terminated, truncated, _ = env.step(numpy_action)
        if terminated or truncated:
            obs, _ = env.reset()
    assert agreed >= 1490


def test_ppo_agent_is_cached_and_refuses_another_game(trained):
    _, result = trained["gin_rummy"]
    first = make_agent(f"ppo:{result.policy}", "gin_rummy", 0)
    assert make_agent(f"ppo:{result.policy}", "gin_rummy", 1).policy is first.policy
    with pytest.raises(ValueError, match="trained for 'gin_rummy', not 'hollywood_gin'"):
        make_agent(f"ppo:{result.policy}", "hollywood_gin", 0)
    with pytest.raises(ValueError, match="no exported policy"):
        make_agent("ppo:/no/such/policy.npz", "gin_rummy", 0)


def test_resume_continues_the_step_count(trained, tmp_path, capsys):
    config, result = trained["gin_rummy"]
    copy = tmp_path / "run"
    shutil.copytree(Path(result.run_dir).parent, copy)
    longer = config.with_overrides(output_dir=str(copy), total_steps=512)
    with pytest.raises(ConfigError, match="--resume"):
        train(longer)
    resumed = train(longer, resume=True)
    out = capsys.readouterr().out
    assert "resuming" in out and "at step 256" in out
    assert resumed.steps == 512
    steps = sorted(int(p.name.split("_")[1]) for p in (Path(resumed.run_dir) / CHECKPOINTS).iterdir())
    assert steps == [128, 256, 384, 512]
    curve = (Path(resumed.run_dir) / "learning_curve.csv").read_text().splitlines()[1:]
    assert [int(line.split(",")[0]) for line in curve] == [128, 256, 384, 512]
    evaluations = (Path(resumed.run_dir) / EVAL_LOG).read_text()
    again = train(longer, resume=True)  # nothing left to train: the step-512 evaluation is reused
    assert again.steps == 512 and again.evaluation == resumed.evaluation
    assert (Path(resumed.run_dir) / EVAL_LOG).read_text() == evaluations
    meta = json.loads((Path(resumed.run_dir) / CHECKPOINTS / "step_000000512" / "meta.json").read_text())
    first = json.loads((Path(result.run_dir) / CHECKPOINTS / "step_000000256" / "meta.json").read_text())
    assert meta["elapsed_seconds"] > first["elapsed_seconds"]
    with pytest.raises(ConfigError, match="ppo"):
        train(config.with_overrides(output_dir=str(copy), total_steps=640, ppo={**config.to_dict()["ppo"], "n_epochs": 3}),
              resume=True)


def test_subprocess_envs_and_relu_train(tmp_path):
    """The opponent pool (with its numpy snapshots) pickles into subprocess envs."""
    data = read_yaml(SMOKE_CONFIGS[0])
    data.update(output_dir=str(tmp_path), total_steps=128, vec_env="subproc", imitation={},
                ppo={**data["ppo"], "activation": "relu"}, evaluation={**data["evaluation"], "opponents": ["random"]})
    result = train(parse_config(data))
    assert result.steps == 128 and load_policy(result.policy).activation == "relu"


def test_checkpoint_refuses_an_env_of_another_layout(trained):
    config, result = trained["gin_rummy"]
    checkpoint = latest_checkpoint(Path(result.run_dir))
    with pytest.raises(LayoutMismatchError, match=r"\+scores \(4\)") as err:
        load_checkpoint(checkpoint, SingleAgentEnv("gin_rummy", episode="match"))
    assert "trained on gin_rummy" in str(err.value)
    with pytest.raises(LayoutMismatchError, match=r"\+sheet_scores"):
        load_checkpoint(checkpoint, make_env(config.with_overrides(game="hollywood_gin")))
    with pytest.raises(LayoutMismatchError, match=r"-feature_melded \(52\)"):
        load_checkpoint(checkpoint, SingleAgentEnv("gin_rummy"))  # trained with features, given none
    # The numpy export refuses a layout this package no longer builds, and a wrong-sized observation.
    policy = load_policy(result.policy)
    stale = NumpyPolicy(policy.hidden, policy.head, policy.activation,
                        type(policy.info)(**{**policy.info.__dict__, "layout_hash": "0123456789abcdef"}))
    with pytest.raises(ValueError, match="retrain"):
        stale.check_layout()
    with pytest.raises(ValueError, match="expects"):
        policy.best_action(np.zeros(policy.input_size + 4, np.float32), np.ones(policy.num_actions))
    with pytest.raises(ValueError, match="features"):  # an observation without its features
        policy.best_action(np.zeros(policy.input_size - policy.features.size, np.float32), np.ones(policy.num_actions))



def test_a_policy_plays_on_when_the_env_adds_segments(trained):
    """A policy recorded without a segment the env now has (here: gin's ``opponent_known``, cut out
    of a trained policy's first layer) takes its input from the new observation by segment
    name, and plays exactly as on its own input; a recorded segment gone or resized, or no
    recorded layout, is refused."""
    _, result = trained["gin_rummy"]
    policy = load_policy(result.policy)
    layout = policy_layout(rummy_envs.ENVS["gin_rummy"].raw_env().observation_layout(), policy.features)
    known = layout["opponent_known"]
    dropped = np.arange(known.offset, known.offset + known.size)
    older = [entry for entry in describe_layout(layout) if entry[0] != "opponent_known"]
    (weight, bias), *rest = policy.hidden
    info = dataclasses.replace(policy.info, layout=older, layout_hash=layout_hash(older, policy.num_actions))
    old = NumpyPolicy([(np.delete(weight, dropped, axis=0), bias), *rest], policy.head, policy.activation, info)
    old.check_layout()
    env = rummy_envs.ENVS["gin_rummy"].env()
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    full, inputs = [], []
    for agent in env.agent_iter(80):
        observation, _, term, trunc, _ = env.last()
        view = env.unwrapped.player_view(agent)
        full.append(policy.policy_input(observation["observation"], view))
        inputs.append(old.policy_input(observation["observation"], view))
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    full, inputs = np.stack(full), np.stack(inputs)
    assert full[:, dropped].any()  # a picked-up card is there to be cut
    assert np.array_equal(inputs, np.delete(full, dropped, axis=1))
    assert np.allclose(old.logits(inputs), policy.logits(np.where(np.isin(np.arange(full.shape[1]), dropped), 0, full)))
    resized = [[name, size + (name == "stock_size"), high] for name, size, high in older]
    for recorded, message in ((resized, "segments stock_size are gone or changed"), (None, "does not record")):
        bad = dataclasses.replace(info, layout=recorded, layout_hash=layout_hash(recorded or older, policy.num_actions))
        with pytest.raises(ValueError, match=message):
            NumpyPolicy(old.hidden, old.head, old.activation, bad).check_layout()


BAD_CONFIGS = [
    ({"speed": 3}, "'speed'"),
    ({"game": "poker"}, "'game'"),
    ({"total_steps": 0}, "'total_steps'"),
    ({"n_envs": "8"}, "'n_envs'"),
    ({"vec_env": "threads"}, "'vec_env'"),
    ({"env": {"knock_limit": -1}}, "'env'"),
    ({"env": {"colour": "red"}}, "'env'"),
    ({"ppo": {"learning_rate": "3e-4"}}, "'ppo.learning_rate'"),
    ({"ppo": {"gamma": 1.5}}, "'ppo.gamma'"),
    ({"ppo": {"net_arch": [64, 0]}}, "'ppo.net_arch'"),
    ({"ppo": {"activation": "gelu"}}, "'ppo.activation'"),
    ({"ppo": {"batch_size": 10_000}}, "'ppo.batch_size'"),
    ({"ppo": {"momentum": 0.9}}, "'ppo.momentum'"),
    ({"self_play": {"opponents": {"grandmaster": 1.0}}}, "'self_play.opponents.grandmaster'"),
    ({"self_play": {"opponents": {"random": -1}}}, "'self_play.opponents.random'"),
    ({"self_play": {"opponents": {"ismcts:iterations=0": 1.0}}}, "'self_play.opponents.ismcts:iterations=0'"),
    ({"self_play": {"opponents": {"random": 0}}}, "'self_play.opponents'"),
    ({"self_play": {"pool_size": 0}}, "'self_play.pool_size'"),
    ({"evaluation": {"opponents": ["random", "random"]}}, "'evaluation.opponents'"),
    ({"evaluation": {"opponents": ["self"]}}, "'evaluation.opponents'"),
    ({"evaluation": {"deals": 0}}, "'evaluation.deals'"),
    ({"evaluation": {"rounds": 3}}, "'evaluation.rounds'"),
    ({"progress_bar": "yes"}, "'progress_bar'"),
    ({"features": "poker_odds"}, "'features'"),
    ({"imitation": {"teacher": "self"}}, "'imitation.teacher'"),
    ({"imitation": {"decisions": 0}}, "'imitation.decisions'"),
    ({"imitation": {"temperature": 1}}, "'imitation.temperature'"),
    ({"reward_shaping": -1}, "'reward_shaping'"),
    ({"reward_baseline": "grandmaster"}, "'reward_baseline'"),
]


@pytest.mark.parametrize("change,key", BAD_CONFIGS, ids=[k for _, k in BAD_CONFIGS])
def test_bad_config_fails_with_the_keys_name(change, key):
    data = read_yaml(SMOKE_CONFIGS[0])
    for name, value in change.items():
        data[name] = {**data[name], **value} if isinstance(value, dict) and isinstance(data.get(name), dict) else value
    with pytest.raises(ConfigError, match=key):
        parse_config(data)


def test_a_bad_nested_key_or_value_fails_at_load_naming_the_dotted_key(tmp_path):
    data = read_yaml(SMOKE_CONFIGS[0])
    data["self_play"] = {**data["self_play"], "pool_size": 0, "speed": 3}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    message = str(raised.value)
    assert f"{path}: config key 'self_play.pool_size'" in message and "greater than or equal to 1" in message
    assert "unknown key 'self_play.speed'; known keys: opponents, pool_size, snapshot_every" in message


def test_the_schema_is_json_and_lists_every_key(tmp_path):
    from training.schema import main
    from training.train_config import EVAL_KEYS, IMITATION_KEYS, PPO_KEYS, SELF_PLAY_KEYS, TOP_KEYS

    assert main([str(tmp_path)]) == 0
    schema = json.loads((tmp_path / "train_config.schema.json").read_text())
    assert set(schema["properties"]) == TOP_KEYS and set(schema["required"]) == {"game", "total_steps"}
    sections = {"ppo": PPO_KEYS, "self_play": SELF_PLAY_KEYS, "evaluation": EVAL_KEYS, "imitation": IMITATION_KEYS}
    for name, keys in sections.items():
        definition = schema["$defs"][schema["properties"][name]["$ref"].rpartition("/")[2]]
        assert set(definition["properties"]) == keys and definition["additionalProperties"] is False, name
    assert schema["properties"]["game"]["enum"] == list(rummy_envs.ENVS)


def test_missing_keys_and_seed_lists():
    with pytest.raises(ConfigError, match="'total_steps'"):
        parse_config({"game": "gin_rummy"})
    assert parse_seeds("0-3") == [0, 1, 2, 3] and parse_seeds("5") == [5] and parse_seeds("1,4-5") == [1, 4, 5]
    for bad in ("x", "3-1", "1,1", "-2"):
        with pytest.raises(ConfigError, match="--seeds"):
            parse_seeds(bad)


def test_cli_reports_a_bad_config_by_key(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(SMOKE_CONFIGS[0].read_text() + "\nlearning_rate: 0.1\n")
    assert cli.main(["train", str(path)]) == 2
    assert "'learning_rate'" in capsys.readouterr().err


def test_cli_trains_seeds_as_ray_tasks_on_a_local_ray(tmp_path, capsys):
    pytest.importorskip("ray")
    config = SMOKE_CONFIGS[0]
    code = cli.main(["train", str(config), "--seeds", "0-1", "--backend", "ray", "--workers", "2",
                     "--output-dir", str(tmp_path / "runs"), "--total-steps", "128"])
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    for seed in (0, 1):  # trained in Ray worker processes, not here
        summary = json.loads((tmp_path / "runs" / f"seed_{seed}" / "summary.json").read_text())
        assert summary["pid"] != os.getpid()
    for seed in (0, 1):
        assert f"seed {seed}: 128 steps" in out
        assert load_policy(tmp_path / "runs" / f"seed_{seed}" / "policy.npz").info.seed == seed
    first, second = (np.load(tmp_path / "runs" / f"seed_{s}" / "policy.npz")["head_weight"] for s in (0, 1))
    assert not np.array_equal(first, second)  # the seeds really differ


def test_gin_hand_features_match_the_rules_engine():
    from agents.features import GIN_HAND
    from rummy_envs.games import gin_rummy as G

    env = SingleAgentEnv("gin_rummy")
    rng = np.random.default_rng(3)
    env.reset(seed=8)
    checked = {10: 0, 11: 0}
    for _ in range(300):
        view = env.aec_env.player_view(env.learner)
        features = GIN_HAND.compute(view)
        hand = list(view.hand)
        melded = [c for c in range(52) if features[52 + c]]
        assert set(melded) <= set(hand)
        if len(hand) == 11:
            for card in hand:
                assert features[card] == pytest.approx(G.deadwood([c for c in hand if c != card]) / 100)
            assert features[104] == pytest.approx(min(features[c] for c in hand))
        else:
            assert features[104] == pytest.approx(G.deadwood(hand) / 100)
            assert G.deadwood([c for c in hand if c not in melded]) == G.deadwood(hand)
            top = view.top_discard
            if top is not None:
                after = min(G.deadwood([c for c in hand + [top] if c != card]) for card in hand)
                assert features[105] == pytest.approx(max(0.0, G.deadwood(hand) / 100 - after / 100))
        checked[min(len(hand), 11)] += 1
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            env.reset()
    assert checked[10] and checked[11]


LEAST_COUNT_RULES = [{}, {"hand_size": 7, "sequence_same_suit": True, "allow_two_different_pairs": True,
                          "allow_three_of_a_kind": True, "num_printed_jokers": 2, "cut_joker": True,
                          "num_players": 3}]


@pytest.mark.parametrize("rules", LEAST_COUNT_RULES, ids=["default", "variant"])
def test_least_count_hand_features_match_the_heuristics_hand_values(rules):
    """Sheds from the engine's discard sets; hand values after each discard and pick from
    the heuristic agent's own valuation (every unseen card judged one by one)."""
    from agents.features import LEAST_COUNT_HAND
    from agents.least_count import LeastCountHeuristicAgent, Reading
    from rummy_envs.games import least_count as L

    env = SingleAgentEnv("least_count", **rules)
    heuristic = LeastCountHeuristicAgent()
    rng = np.random.default_rng(5)
    env.reset(seed=2)
    checked = {L.Phase.TURN_START: 0, L.Phase.PICK: 0}
    for _ in range(400):
        view = env.aec_env.player_view(env.learner)
        features = LEAST_COUNT_HAND.compute(view)
        shed, after, picks, closed = features[:127], features[127:254], features[254:307], features[307]
        reading = Reading(view, heuristic)
        values = reading.ctx.values
        assert features[308] == pytest.approx(env.aec_env.game.count(view.player) / 20)
        if view.phase == L.Phase.TURN_START:
            may_close = view.stock_size > 0 or bool(view.dead_pile)
            discards = [a for a in view.legal_actions if a != L.DECLARE]
            for action in discards:
                cards = L.subset_cards(list(view.hand), action)
                kept = list(view.hand)
                for card in cards:
                    kept.remove(card)
                best = min(heuristic.pick_values(kept, sorted(set(view.open_set)), may_close, reading, 1.0))[0]
                assert shed[action - 1] == pytest.approx(sum(values[c] for c in cards) / 20)
                assert after[action - 1] == pytest.approx(best / 20)
            assert not np.any(np.delete(shed, [a - 1 for a in discards])) and not picks.any() and closed == 0
        else:
            opens = [a - L.PICK_OPEN for a in view.legal_actions if a != L.PICK_CLOSED]
            expected = heuristic.pick_values(list(view.hand), opens, L.PICK_CLOSED in view.legal_actions, reading, 1.0)
            for value, action in expected:
                got = closed if action == L.PICK_CLOSED else picks[action - L.PICK_OPEN]
                assert got == pytest.approx(value / 20)
            assert np.count_nonzero(np.delete(picks, opens)) == 0 and not shed.any()
        checked[view.phase] += 1
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            env.reset()
    assert all(checked.values())


def test_least_count_declare_odds_count_the_unseen_cards():
    """With every opponent card known the declaration's fate is certain; with one hidden card
    each, an opponent stays above my count with the share of unseen cards that keep it there."""
    import dataclasses

    from agents.features import declare_odds
    from agents.least_count import unseen_cards
    from rummy_envs import cards as C
    from rummy_envs.games import least_count as L

    env = SingleAgentEnv("least_count")
    env.reset(seed=4)
    view = env.aec_env.player_view(env.learner)
    rest = [c for c in range(52) if c not in view.hand and c not in view.open_set]
    known = (view.hand, tuple(rest[0:5]), tuple(rest[5:10]), tuple(rest[10:15]))
    counts = [sum(C.GIN_VALUES[c] for c in cards) for cards in known[1:]]
    certain = dataclasses.replace(view, known=known, hand_sizes=(5, 5, 5, 5))
    p_valid, excess, shortfall = declare_odds(certain, unseen_cards(certain))
    assert p_valid == (min(counts) > view.count)
    assert shortfall == pytest.approx(max(0, view.count - min(counts)))
    if p_valid:
        assert excess == pytest.approx(np.mean(counts) - view.count)
    for count in (0, 7, 12, 25):
        partial = dataclasses.replace(view, count=count, known=(view.hand, known[1][:4], known[2][:4], known[3][:4]))
        unseen = unseen_cards(partial)
        above = 1.0
        for cards in partial.known[1:]:
            need = count - sum(C.GIN_VALUES[c] for c in cards)  # the hidden card must be worth more
            above *= sum(m for c, m in unseen.items() if L.card_values(None)[c] > need) / sum(unseen.values())
        assert declare_odds(partial, unseen)[0] == pytest.approx(above)


@pytest.mark.parametrize("game, options", [("gin_rummy", {}), ("least_count", {}),
                                           ("manipulation_rummy", {"num_players": 2})])
def test_shaping_terms_telescope_to_minus_the_first_potential(game, options):
    from training.learner_env import POTENTIALS, PotentialShaping

    env = SingleAgentEnv(game, reward_scale=10.0, **options)
    shaped = PotentialShaping(SingleAgentEnv(game, reward_scale=10.0, **options), weight=0.5, gamma=1.0)
    rng = np.random.default_rng(0)
    for seed in range(5):
        env.reset(seed=seed)
        shaped.reset(seed=seed)
        first = POTENTIALS[game](env.aec_env.player_view(env.learner))
        plain_total = shaped_total = 0.0
        while True:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, reward, terminated, truncated, _ = env.step(action)
            _, shaped_reward, *_ = shaped.step(action)
            plain_total += reward
            shaped_total += shaped_reward
            if terminated or truncated:
                break
        assert shaped_total - plain_total == pytest.approx(-0.5 * first / 10.0)


@pytest.mark.parametrize("game, options, opponent", [
    ("gin_rummy", {}, "heuristic"), ("least_count", {}, "heuristic"), ("rummy500", {}, None),
    ("manipulation_rummy", {"num_players": 3}, "novice")])
def test_duplicate_baseline_pays_zero_when_the_learner_plays_as_the_baseline(game, options, opponent):
    """A learner playing the baseline agent's moves scores exactly 0 an episode (the same deal,
    the opponents continuing as copies of themselves: Least Count's heuristic remembers the
    round, random opponents draw from the env's stream); a random learner scores its own
    return less the baseline's, and the deals are those of the plain env."""
    from training.learner_env import DuplicateBaseline

    def env_with(wrapped: bool):
        opponents = None if opponent is None else make_agent(opponent, game, 1)
        env = SingleAgentEnv(game, opponents=opponents, episode="hand", **options)
        return DuplicateBaseline(env, "heuristic") if wrapped else env

    wrapped, plain = env_with(True), env_with(False)
    me, rng = make_agent("heuristic", game, 0), np.random.default_rng(0)
    for learner in ("heuristic", "random"):
        wrapped_obs, _ = wrapped.reset(seed=3)
        plain_obs, _ = plain.reset(seed=3)
        for _ in range(4):
            me.reset()
            total = 0.0
            while True:
                assert np.array_equal(wrapped_obs, plain_obs)
                base = wrapped.unwrapped
                mask = base.action_masks()
                action = (me.act(wrapped_obs, mask, base.aec_env.player_view(base.learner)) if learner == "heuristic"
                          else int(rng.choice(np.flatnonzero(mask))))
                wrapped_obs, reward, terminated, truncated, info = wrapped.step(action)
                plain_obs, plain_reward, *_ = plain.step(action)
                total += reward
                if terminated or truncated:
                    break
            if learner == "heuristic":
                assert total == 0.0 and info["baseline_return"] == info["episode_return"]
            else:
                assert total == pytest.approx(info["episode_return"] - info["baseline_return"])
            wrapped_obs, _ = wrapped.reset()
            plain_obs, _ = plain.reset()


def test_rummy500_features_follow_the_hand_and_the_legal_takes():
    """In-meld cards against a brute-force search of the hand's 3-card melds (the engine's
    ``classify``); every card feature only on cards of the hand, the take features only on
    legal TAKE_DISCARD positions, the plan only on cards the hand holds."""
    from itertools import combinations

    from agents.features import RUMMY500_HAND
    from rummy_envs.games import rummy500 as R

    env = SingleAgentEnv("rummy500", num_jokers=1)
    rng = np.random.default_rng(5)
    env.reset(seed=2)
    ids, piles = R.NUM_IDS, R.MAX_PILE
    takes_seen = 0
    for _ in range(600):
        view = env.aec_env.player_view(env.learner)
        features = RUMMY500_HAND.compute(view)
        assert features.shape == (RUMMY500_HAND.size,) and features.min() >= 0 and features.max() <= 1
        plan, in_meld, lays_off, keep, danger = (features[k * ids:(k + 1) * ids] for k in range(5))
        held = set(view.hand)
        naturals = sorted(held - {R.JOKER})
        melded = {c for trio in combinations(naturals, 3) if R.classify(sum(1 << c for c in trio)) for c in trio}
        assert {c for c in range(52) if in_meld[c]} == melded
        for segment in (plan, lays_off, keep, danger):
            assert set(np.flatnonzero(segment)) <= held
        assert all(keep[c] > 0 for c in held)  # every held card is judged
        legal_takes = {a - R.TAKE_DISCARD for a in view.legal_actions if R.TAKE_DISCARD <= a < R.PICK}
        take = features[5 * ids:5 * ids + 2 * piles]
        assert set(np.flatnonzero(take[:piles])) | set(np.flatnonzero(take[piles:])) <= legal_takes
        takes_seen += bool(legal_takes)
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            env.reset()
    assert takes_seen


def test_rummy500_potential_is_the_score_now_from_the_engine():
    """The potential against the engine's own table and hand points: my score now minus the
    mean of every seat's, an opponent's hidden cards at a card's mean value."""
    from agents.rummy500 import card_value
    from training.learner_env import RUMMY500_MEAN_CARD, rummy500_score_potential

    env = SingleAgentEnv("rummy500", num_players=3, num_jokers=1, opponents=make_agent("novice", "rummy500", 0))
    env.reset(seed=4)
    checked = 0
    for _ in range(400):
        me = env.aec_env.possible_agents.index(env.learner)
        game = env.aec_env.unwrapped.game
        seats = [(me + k) % 3 for k in range(3)]
        table = game.table_points()
        view = env.aec_env.player_view(env.learner)
        scores = [table[q] - (game.hand_points(q) if k == 0 else sum(card_value(c) for c in view.known[k])
                              + RUMMY500_MEAN_CARD * (view.hand_sizes[k] - len(view.known[k])))
                  for k, q in enumerate(seats)]
        assert rummy500_score_potential(view) == pytest.approx(scores[0] - sum(scores) / 3)
        checked += any(table)
        _, _, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        if terminated or truncated:
            env.reset()
    assert checked


def test_imitation_clones_the_teacher(tmp_path):
    from training.imitation import clone, collect

    config = parse_config({"game": "gin_rummy", "total_steps": 64, "n_envs": 1, "features": "gin_hand",
                           "output_dir": str(tmp_path), "ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [64]},
                           "imitation": {"teacher": "novice", "decisions": 3000, "epochs": 6, "batch_size": 64}})
    env = make_env(config)
    demos = collect(config, env, seed=0)
    assert demos.inputs.shape == (3000, env.observation_space.shape[0])
    assert all(demos.masks[i, a] for i, a in enumerate(demos.actions))  # the teacher's moves are legal
    model = new_model(config, make_vec_env(config), tmp_path, seed=0)
    untrained = config.with_overrides(imitation={**config.to_dict()["imitation"], "epochs": 1, "learning_rate": 1e-12})
    before = clone(model, demos, untrained, seed=0)
    after = clone(model, demos, config, seed=0)
    assert after["held_out_accuracy"] > max(0.6, before["held_out_accuracy"] + 0.2), (before, after)


def test_imitation_fits_the_value_to_the_teachers_returns(tmp_path):
    from training.imitation import clone, collect

    config = parse_config({"game": "least_count", "total_steps": 64, "n_envs": 1, "output_dir": str(tmp_path),
                           "ppo": {"n_steps": 64, "batch_size": 64, "net_arch": [64]},
                           "imitation": {"teacher": "novice", "decisions": 2000, "epochs": 8, "batch_size": 64,
                                         "fit_value": True}})
    demos = collect(config, make_env(config), seed=0)
    assert np.isnan(demos.returns).any() and not np.isnan(demos.returns[:100]).any()  # the last game unfinished
    policy_only = clone(new_model(config, make_vec_env(config), tmp_path, seed=0), demos,
                        config.with_overrides(imitation={**config.to_dict()["imitation"], "fit_value": False}), seed=0)
    figures = clone(new_model(config, make_vec_env(config), tmp_path, seed=0), demos, config, seed=0)
    explained = [f["held_out_value_explained_variance"] for f in (policy_only, figures)]
    assert explained[1] > max(0.1, explained[0] + 0.1), explained


def test_discounted_returns_stop_at_each_episode_end():
    from training.imitation import discounted_returns

    returns = discounted_returns(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([False, True, False, True, False]), 0.5)
    assert returns[:4].tolist() == [2.0, 2.0, 5.0, 4.0] and np.isnan(returns[4])


@pytest.mark.parametrize("game", ["gin_rummy", "least_count", "rummy500"])
def test_heuristic_move_feature_is_the_heuristics_move(game):
    """One-hot on the move a fresh heuristic agent makes in the learner's view, zero when
    the seat has no move; joined after another set, each set's segments in order."""
    from agents import make_agent
    from agents.features import feature_set

    name = {"gin_rummy": "gin_hand", "least_count": "least_count_hand", "rummy500": "rummy500_hand"}[game]
    joined = feature_set(f"{name}+heuristic_move", game)
    first, advice = feature_set(name, game), feature_set("heuristic_move", game)
    assert joined.size == first.size + advice.size == first.size + SingleAgentEnv(game).action_space.n
    heuristic = make_agent("heuristic", game, 0)
    env = SingleAgentEnv(game)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(60):
        view = env.aec_env.player_view(env.learner)
        features = joined.compute(view)
        assert np.array_equal(features[:first.size], first.compute(view))
        move = features[first.size:]
        heuristic.reset()  # asked afresh: Least Count's heuristic would remember the round's earlier turns
        assert move.sum() == 1 and move[heuristic.act(np.zeros(0), env.action_masks(), view)] == 1
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if terminated or truncated:
            assert not advice.compute(env.aec_env.player_view(env.learner)).any()
            env.reset()


def test_a_feature_set_pickles_by_name():
    """A policy sent to an env worker carries its feature set; the copy computes the same."""
    import pickle

    from agents.features import feature_set

    env = SingleAgentEnv("gin_rummy")
    env.reset(seed=2)
    view = env.aec_env.player_view(env.learner)
    for name in ("gin_hand", "heuristic_move", "gin_hand+heuristic_move"):
        features = feature_set(name, "hollywood_gin" if name == "gin_hand" else "gin_rummy")
        copy = pickle.loads(pickle.dumps(features))
        assert copy.name == name and copy.parts == features.parts
        assert np.array_equal(copy.compute(view), features.compute(view))


@pytest.mark.parametrize("name,message", [("gin_hand+gin_hand", "twice"), ("gin_hand+poker", "'poker'"),
                                          ("least_count_hand", "not gin_rummy")])
def test_a_bad_feature_set_name_is_refused(name, message):
    from agents.features import feature_set

    with pytest.raises(ValueError, match=message):
        feature_set(name, "gin_rummy")


def test_docs_config_table_lists_every_key_with_its_default():
    import re

    import yaml

    from training.train_config import EVAL_KEYS, IMITATION_KEYS, PPO_KEYS, SELF_PLAY_KEYS, TOP_KEYS

    text = (ROOT / "docs" / "training.md").read_text()
    table = text[text.index("## Config keys"):text.index("## Several seeds")]
    documented = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `([\w.]+)` \| ([^|]+) \|", table, re.M)}
    sections = {"ppo": PPO_KEYS, "self_play": SELF_PLAY_KEYS, "evaluation": EVAL_KEYS, "imitation": IMITATION_KEYS}
    expected = {k for k in TOP_KEYS if k not in sections} | {f"{s}.{k}" for s, keys in sections.items() for k in keys}
    assert set(documented) == expected
    defaults = parse_config({"game": "gin_rummy", "total_steps": 1}).to_dict()
    special = {"game": "required", "total_steps": "required", "output_dir": "`runs/<game>`"}
    for key, shown in documented.items():
        section, _, name = key.rpartition(".")
        value = defaults[section][name] if section else defaults[key]
        if key in special:
            assert shown == special[key]
        elif value is None:
            assert shown == "none", key
        else:
            assert yaml.safe_load(shown.strip("`")) == value, (key, shown, value)


def test_no_shipped_config_exports_over_the_shipped_agents():
    for path in ROOT.glob("configs/*/*.yaml"):
        assert "export_dir" not in read_yaml(path), f"{path} would overwrite what a run did not make"


def test_an_export_over_a_policy_needs_force_and_is_refused_before_training(tmp_path, capsys):
    export = tmp_path / "shipped"
    export.mkdir()
    (export / "policy.npz").write_bytes(b"not made by this run")
    argv = ["train", str(SMOKE_CONFIGS[0]), "--output-dir", str(tmp_path / "runs"), "--export-dir", str(export),
            "--no-progress", "--total-steps", "128"]
    assert cli.main(argv) == 2
    assert "already holds a policy.npz; pass --force" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() and (export / "policy.npz").read_bytes() == b"not made by this run"
    assert cli.main([*argv, "--force"]) == 0
    assert load_policy(export / "policy.npz").info.steps == 128


def test_subprocess_envs_build_opponents_registered_only_here(monkeypatch):
    import multiprocessing
    import threading

    import agents.base
    from agents import register

    copy = {name: dict(by_game) for name, by_game in agents.base._REGISTRY.items()}
    monkeypatch.setattr(agents.base, "_REGISTRY", copy)
    from my_agents import LowestLegal
    from training.selfplay import OpponentPool

    register("registered_here", "*", LowestLegal)
    register("lambda_opponent", "*", lambda game, seed: LowestLegal(rank=1))
    pool = OpponentPool("gin_rummy", {"registered_here": 1.0, "lambda_opponent": 1.0}, 1)
    with multiprocessing.get_context("spawn").Pool(1) as workers:
        assert workers.apply(_opponent_ranks, (pool,)) == {0, 1}
    locked = LowestLegal()
    locked.lock = threading.Lock()
    register("locked", "*", lambda game, seed: locked)
    with pytest.raises(ConfigError, match="'locked' cannot be sent to worker processes: it does not pickle"):
        pickle.dumps(OpponentPool("gin_rummy", {"locked": 1.0}, 1))


def _opponent_ranks(pool) -> set[int]:
    rng = np.random.default_rng(0)
    return {pool(rng).rank for _ in range(20)}
