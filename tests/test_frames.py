"""``render_mode="rgb_array"`` frames of every env: one shape and dtype over whole games at
every player count tested; a seat's frame unchanged when the cards it cannot see are redealt
(the observations' leak test, on pictures); a golden frame per game guards the drawing;
Gymnasium's ``RecordVideo`` writes an MP4 through the single-seat wrapper and a PettingZoo
loop a GIF."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import rummy_envs
from rummy_envs.frames import save_animation
from rummy_envs.wrappers import SingleAgentEnv

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "frames"
UPDATE_GOLDEN = os.environ.get("RUMMY_UPDATE_GOLDEN") == "1"  # rewrite the golden frames instead of checking
SETTINGS = [
    ("gin_rummy", {}), ("gin_rummy", {"episode": "match", "knocker_arrangement": "explicit"}),
    ("hollywood_gin", {"episode": "match"}),
    ("rummy500", {"num_players": 2}), ("rummy500", {"num_players": 8, "num_decks": 2, "num_jokers": 2}),
    ("manipulation_rummy", {"num_players": 2}), ("manipulation_rummy", {"num_players": 5}),
    ("least_count", {"num_players": 2}), ("least_count", {"num_players": 10, "cut_joker": True}),
]
IDS = [f"{game}-{i}" for i, (game, _) in enumerate(SETTINGS)]


def random_steps(env, rng: random.Random, steps: int):
    """Random legal play of an AEC env for ``steps`` decisions or to its end, yielding after each."""
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(obs["action_mask"].nonzero()[0])))
        yield
        steps -= 1
        if steps <= 0:
            return


@pytest.mark.parametrize(("game", "options"), SETTINGS, ids=IDS)
def test_frames_keep_one_shape_over_a_whole_game(game, options):
    env = rummy_envs.ENVS[game].env(render_mode="rgb_array", **options)
    blank = env.unwrapped.frame()  # the empty table: PettingZoo's wrapper refuses render() before reset()
    env.reset(seed=1)
    shapes, seats = {blank.shape}, len(env.possible_agents)
    for k, _ in enumerate(random_steps(env, random.Random(2), 150)):
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
        shapes.add(frame.shape)
        shapes.add(env.unwrapped.frame(k % seats).shape)
    assert len(shapes) == 1


def test_render_seat_is_checked():
    with pytest.raises(ValueError, match="render_seat"):
        rummy_envs.ENVS["least_count"].env(num_players=3, render_seat=3)
    with pytest.raises(ValueError, match="render_seat"):
        rummy_envs.ENVS["gin_rummy"].env(render_seat=True)
    env = rummy_envs.ENVS["gin_rummy"].env(render_mode="rgb_array", render_seat=1)
    env.reset(seed=0)
    np.testing.assert_array_equal(env.render(), env.unwrapped.frame(1))


@pytest.mark.parametrize(("game", "options"), SETTINGS[::2], ids=IDS[::2])
def test_a_seats_frame_is_the_same_in_every_world_it_cannot_tell_apart(game, options):
    """At positions of random games, each seat's frame drawn from the true state equals the one
    drawn from a world with every card hidden from that seat redealt; the frames with every
    card shown differ in some of those worlds (so the check has teeth)."""
    rng = random.Random(4)
    env = rummy_envs.ENVS[game].raw_env(**options)
    env.reset(seed=6)
    shown_differ = compared = 0
    for k, _ in enumerate(random_steps(env, rng, 90)):
        if k % 6 or env.game.is_terminal():
            continue
        true_env = rummy_envs.ENVS[game].raw_env(**options)
        true_env.reset(options={"state": env.game.to_dict()})
        for seat in range(len(env.possible_agents)):
            world = rummy_envs.ENVS[game].raw_env(**options)
            world.reset(options={"state": env.game.sample_determinization(seat, rng).to_dict()})
            np.testing.assert_array_equal(world.frame(seat), true_env.frame(seat))
            shown_differ += not np.array_equal(world.frame(), true_env.frame())
            compared += 1
    assert compared and shown_differ


def test_another_seats_face_down_knock_card_stays_unnamed():
    env = rummy_envs.ENVS["gin_rummy"].raw_env()
    env.reset(seed=0)
    env._last_move = (0, env.str_to_action("KNOCK(7H)"))
    assert env._move_line(None) == env._move_line(0) == "last move: player_0 KNOCK(7H)"
    assert env._move_line(1) == "last move: player_0 KNOCK (face down)"


GOLDEN_SETTINGS = {"gin_rummy": {}, "hollywood_gin": {"episode": "match"}, "rummy500": {"num_players": 3},
                   "manipulation_rummy": {"num_players": 3}, "least_count": {"num_players": 4}}


@pytest.mark.parametrize("game", list(GOLDEN_SETTINGS))
def test_golden_frame(game):
    """The frame after 40 seeded random decisions, against the committed picture (a tolerance
    for font rasterising; ``RUMMY_UPDATE_GOLDEN=1`` rewrites the pictures after a change to
    the drawing that was meant)."""
    env = rummy_envs.ENVS[game].env(render_mode="rgb_array", **GOLDEN_SETTINGS[game])
    env.reset(seed=11)
    for _ in random_steps(env, random.Random(12), 40):
        pass
    frame = env.render()
    path = GOLDEN / f"{game}.png"
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(frame).save(path)
    golden = np.asarray(Image.open(path).convert("RGB"))
    assert golden.shape == frame.shape
    differing = np.any(np.abs(golden.astype(int) - frame.astype(int)) > 48, axis=2).mean()
    assert differing < 0.002, f"{differing:.2%} of the pixels differ from {path.name}"


def test_record_video_writes_an_mp4_through_the_single_seat_wrapper(tmp_path):
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(SingleAgentEnv("least_count", render_mode="rgb_array", num_players=3, render_seat=0),
                      str(tmp_path), episode_trigger=lambda episode: True, disable_logger=True)
    env.reset(seed=1)
    rng, done = np.random.default_rng(0), False
    while not done:
        action = int(rng.choice(np.flatnonzero(env.unwrapped.action_masks())))
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_a_pettingzoo_loop_saves_a_gif(tmp_path):
    env = rummy_envs.ENVS["rummy500"].env(render_mode="rgb_array")
    env.reset(seed=3)
    frames = [env.render()]
    for _ in random_steps(env, random.Random(3), 12):
        frames.append(env.render())
    path = tmp_path / "game.gif"
    save_animation(frames, str(path), fps=4)
    with Image.open(path) as gif:
        assert gif.n_frames == len(frames) and gif.size == (frames[0].shape[1], frames[0].shape[0])
    with pytest.raises(ValueError, match="frame"):
        save_animation([], str(path))
