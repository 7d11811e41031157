"""Game logs and state dicts recorded by the engines before they were split into one package
per game (tests/fixtures/before_package_split.json) replay and load exactly as they did:
the same final state dict and returns, the same legal actions and the same observations
and masks for every seat. Only public entry points are used, so the test outlives any
reorganisation of the modules behind them. Two rule changes since are recorded on purpose:
in Rummy 500 a group shown and put back with CANCEL became known cards, so the final
``known`` of the two Rummy 500 logs that cancel a group is the one the engine now gives
(everything else, and the returns, as recorded); and in Manipulation Rummy the cards placed
and taken back with ABORT became known cards, and each hand's value against the knock limit
as its turn ended is kept, two new fields of its state dicts, so its logs end, and its
recorded dicts load, with the ``known`` and ``limit_seen`` the engine now gives (a dict
written before has neither: no card known, nothing seen but a knock decision's hand); the
observation segments that carry those two fields (``known``, ``limit_seen``) came later and
are left out of the recorded observations' digests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import rummy_envs
from rummy_envs.replay import replay

RECORDS = json.loads((Path(__file__).parent / "fixtures" / "before_package_split.json").read_text())


ADDED_SINCE = {"manipulation_rummy": ("known", "limit_seen")}
"""Observation segments added after the recording, left out of its digests."""


def observations_digest(env) -> str:
    """SHA-256 of every seat's observation (the segments the recording had) and mask, in
    seat order (as the recording did)."""
    layout = env.observation_layout()
    added = [layout[name] for name in ADDED_SINCE.get(env.metadata["name"].removesuffix("_v0"), ())]
    dropped = np.concatenate([np.arange(s.offset, s.offset + s.size) for s in added]) if added else []
    digest = hashlib.sha256()
    for agent in env.possible_agents:
        seen = env.observe(agent)
        observation = np.delete(np.asarray(seen["observation"], dtype=np.float32), dropped)
        digest.update(observation.tobytes())
        digest.update(np.asarray(seen["action_mask"], dtype=np.int8).tobytes())
    return digest.hexdigest()


def label(record: dict) -> str:
    return f"{record['game']}-{record['options']}-seed{record['log']['seed']}"


@pytest.mark.parametrize("record", RECORDS, ids=label)
def test_logs_from_before_replay_identically(record):
    state = replay(record["log"])
    assert state.to_dict() == record["final"]
    assert list(map(float, state.returns())) == record["returns"]


@pytest.mark.parametrize("record", [r for r in RECORDS if r["dicts"]], ids=label)
def test_state_dicts_from_before_load_identically(record):
    env = rummy_envs.ENVS[record["game"]].raw_env(**record["options"])
    for point in record["dicts"]:
        env.reset(options={"state": point["state"]})
        assert env.game.to_dict() == point["state"]
        assert list(env.game.legal_actions()) == point["legal"]
        assert observations_digest(env) == point["observations"]
