"""The play page's server (``rummy serve``, training/serve.py), in-process through Starlette's
TestClient.

- a whole game of each game through the JSON API with random legal moves: the moves offered
  are the person's legal actions, the log is the moves as the person's seat saw them, and
  the final scores and places are the engine's;
- no response leaks: the person's scene and moves are the same in every world the seat
  cannot tell apart (and the every-card scene is not), and no response names a card the
  person has not seen at some point of the game;
- refused requests (400, 404, 409, 422) leave the game as it was;
- games going on at once do not mix, a seed deals the same game and the same agent replies,
  and ``make_app(seed=S)`` deals game k from S + k;
- bad settings are refused before serving; the page is one self-contained document.

Without Starlette (or httpx2, which its TestClient takes) the tests skip; they fail instead
under ``RUMMY_REQUIRE_INTEGRATIONS=1`` (CI), as tests/test_integrations.py does.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import re
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import rummy_envs
import training.serve as serve
from training.serve import CARD_TOKEN, PlayTable, make_app


def library(name: str) -> ModuleType:
    """Import a library of the serve extra, or skip (fail under RUMMY_REQUIRE_INTEGRATIONS) without it."""
    if os.environ.get("RUMMY_REQUIRE_INTEGRATIONS"):
        return importlib.import_module(name)
    return pytest.importorskip(name, reason=f"{name} is not installed (pip install -e '.[dev]')")


library("starlette")
library("httpx2")
TestClient = importlib.import_module("starlette.testclient").TestClient

# Each game with options that keep a whole game short, and the person's seat.
SETTINGS = [
    ("gin_rummy", {}, 0),
    ("gin_rummy", {"knocker_arrangement": "explicit", "layoff_mode": "explicit"}, 1),
    ("hollywood_gin", {}, 1),
    ("rummy500", {}, 0),
    ("manipulation_rummy", {"num_players": 2}, 1),
    ("least_count", {}, 2),
    ("least_count", {"num_players": 3, "episode": "match", "elimination_score": 30}, 0),
]
IDS = [f"{game}-{i}" for i, (game, _, _) in enumerate(SETTINGS)]
SEEDS = (3, 4)  # the games played of each setting
WORLDS = 2  # worlds sampled at each response


class Witness:
    """What each table's person has seen, recorded apart from the server's own code: the cards
    of every scene of its seat (after the deal and after each env step) and each move as its
    seat saw it (``env.last_move(seat)`` right after the step)."""

    def __init__(self) -> None:
        self.seen: dict[PlayTable, set[str]] = {}
        self.moves: dict[PlayTable, list[tuple[int, str]]] = {}

    def record(self, table: PlayTable) -> None:
        scene = table.env.scene(table.seat).to_dict()
        self.seen.setdefault(table, set()).update(tokens(json.dumps(scene)))


@pytest.fixture
def witness(monkeypatch: pytest.MonkeyPatch) -> Witness:
    """A Witness of every PlayTable, by wrapping its steps (the deal is seen as the first
    ``_advance`` begins)."""
    watched = Witness()
    step, advance = PlayTable._step, PlayTable._advance

    def watched_step(self: PlayTable, action: int | None) -> None:
        step(self, action)
        if action is not None:
            watched.moves.setdefault(self, []).append(self.env.last_move(self.seat))
        watched.record(self)

    def watched_advance(self: PlayTable) -> None:
        watched.record(self)
        advance(self)

    monkeypatch.setattr(PlayTable, "_step", watched_step)
    monkeypatch.setattr(PlayTable, "_advance", watched_advance)
    return watched


# The card a joker is declared as (manipulation rummy's JOKER_AS(c) and FREED_AS(c), rummy 500's
# PICK_JOKER(c)) is any card the rules allow there, named by the mover: it tells nobody where a
# real card is, so a move or a log entry may name one the person never saw.
DECLARED = re.compile(r"\b(?:JOKER_AS|FREED_AS|PICK_JOKER)\([^)]*\)")


def tokens(text: str) -> set[str]:
    """The cards a text names (a joker's declared identity aside)."""
    return set(CARD_TOKEN.findall(DECLARED.sub("", text)))


def named_cards(response: Any) -> set[str]:
    """The cards a response's JSON names anywhere, but for the identity a joker is declared as
    (in a move's name and its ``cards``)."""
    state = response.json()
    for move in state["moves"]:
        if DECLARED.fullmatch(move["name"]):
            move["cards"] = []
    return tokens(json.dumps(state))


def table_of(app: Any, game_id: str) -> PlayTable:
    return app.state.tables.tables[game_id]


def game_responses(client: Any, seed: int | None, rng: random.Random):
    """A whole game through the API, each move a random one of the response's ``moves``;
    yields each response (the new game's, then each move's)."""
    response = client.post("/api/games", json={} if seed is None else {"seed": seed})
    assert response.status_code == 201, response.text
    while True:
        yield response
        state = response.json()
        if state["over"]:
            return
        response = client.post(f"/api/games/{state['id']}/moves", json={"action": rng.choice(state["moves"])["action"]})
        assert response.status_code == 200, response.text


def whole_game(client: Any, seed: int | None, rng: random.Random) -> list[dict[str, Any]]:
    """Every response of a whole game, without the game's id (which differs from game to game)."""
    return [{k: v for k, v in response.json().items() if k != "id"} for response in game_responses(client, seed, rng)]


def legal_moves(env: Any, seat: int) -> list[tuple[int, str]]:
    """The seat's legal actions and their names when it is to move, else none."""
    if env.game.is_terminal() or env.game.current_player != seat:
        return []
    return [(action, env.action_to_str(action)) for action in env.game.legal_actions()]


# -- whole games -----------------------------------------------------------------------------
@pytest.mark.parametrize(("game", "options", "seat"), SETTINGS, ids=IDS)
def test_a_whole_game_through_the_api(game, options, seat, witness):
    """At every response the moves offered are exactly the person's legal actions (the
    engine's and the action mask's), the log is the moves as the person's seat saw them, GET
    shows the same state, and at the end the scores are the engine's and the places follow
    its standings."""
    app = make_app(game, options=options, seat=seat)
    client = TestClient(app)
    opponent = app.state.tables.opponent
    for seed in SEEDS:
        rng = random.Random(seed)
        for response in game_responses(client, seed, rng):
            state = response.json()
            table = table_of(app, state["id"])
            env = table.env
            assert client.get(f"/api/games/{state['id']}").json() == state
            assert state["game"] == env.metadata["name"] and state["seat"] == seat
            assert state["players"] == [f"player_{q} (you)" if q == seat else f"player_{q} ({opponent})"
                                        for q in range(len(env.possible_agents))]
            assert state["over"] == env.game.is_terminal()  # the agents play on to the person's turn or the end
            assert state["your_turn"] == (not state["over"])
            offered = [(move["action"], move["name"]) for move in state["moves"]]
            assert offered == legal_moves(env, seat)
            if state["your_turn"]:
                assert env.agent_selection == table.person
                mask = env.observe(table.person)["action_mask"]
                assert sorted(action for action, _ in offered) == np.flatnonzero(mask).tolist()
            hand = state["scene"]["hands"][seat]["cards"]
            for move in state["moves"]:
                named = CARD_TOKEN.findall(move["name"])
                assert move["cards"] == [card for k, card in enumerate(named)
                                         if named[:k + 1].count(card) <= hand.count(card)]
            seen_moves = witness.moves.get(table, [])
            assert [(int(re.match(r"player_(\d+) ", entry["player"]).group(1)), entry["move"])
                    for entry in state["log"]] == seen_moves
            assert [entry["player"] for entry in state["log"]] == [state["players"][q] for q, _ in seen_moves]
            assert state["scores"] == [int(score) for score in env.game.scores()]
            assert (state["places"] is None) == (not state["over"])
        assert state["over"] and state["moves"] == [] and state["log"]
        assert state["scores"] == list(env.game.scores())
        standings, places = env.game.standings(), state["places"]
        assert min(places) == 1 and len(places) == len(standings)
        for i in range(len(standings)):
            for j in range(len(standings)):
                assert (places[i] < places[j]) == (standings[i] > standings[j])


@pytest.mark.parametrize(("game", "options", "seat"), SETTINGS, ids=IDS)
def test_the_persons_state_is_the_same_in_every_world_it_cannot_tell_apart(game, options, seat):
    """At every response, a world with every card hidden from the person redealt
    (``sample_determinization``) gives the person the same scene, moves and scores as the
    response; the every-card scenes differ in some of those worlds (so the check has teeth)."""
    app = make_app(game, options=options, seat=seat)
    client = TestClient(app)
    rng = random.Random(8)
    compared = differ = 0
    for seed in SEEDS:
        for response in game_responses(client, seed, random.Random(seed)):
            state = response.json()
            env = table_of(app, state["id"]).env
            for _ in range(WORLDS):
                world = rummy_envs.ENVS[game].raw_env(**options)
                world.reset(options={"state": env.game.sample_determinization(seat, rng).to_dict()})
                world._last_move = env._last_move  # the same last move (the seat's name for it hides what it must)
                assert world.scene(seat).to_dict() == state["scene"]
                assert legal_moves(world, seat) == [(move["action"], move["name"]) for move in state["moves"]]
                assert [int(score) for score in world.game.scores()] == state["scores"]
                differ += world.scene().to_dict() != env.scene().to_dict()
                compared += 1
    assert compared and differ


@pytest.mark.parametrize(("game", "options", "seat"), SETTINGS, ids=IDS)
def test_no_response_names_a_card_the_person_has_not_seen(game, options, seat, witness):
    """Every card named anywhere in a response (the scene, the moves, the log, every text) is
    one the person's seat has seen at some point of the game; at some responses there are
    cards it has not seen (so the check has teeth)."""
    app = make_app(game, options=options, seat=seat)
    client = TestClient(app)
    unseen_somewhere = False
    for seed in SEEDS:
        for response in game_responses(client, seed, random.Random(seed)):
            table = table_of(app, response.json()["id"])
            named = named_cards(response)
            assert named, "a response names no card at all"
            assert named <= witness.seen[table], f"the response names cards never shown: {named - witness.seen[table]}"
            unseen_somewhere |= not tokens(json.dumps(table.env.scene().to_dict())) <= witness.seen[table]
    assert unseen_somewhere


def test_an_agents_knock_card_stays_face_down():
    """When the agent knocks at gin, the person's log says ``KNOCK (face down)`` and no
    response of the game names the knock card."""
    app = make_app("gin_rummy", seat=0)
    client = TestClient(app)
    knocks = 0
    for seed in range(4):
        responses = list(game_responses(client, seed, random.Random(seed)))
        env = table_of(app, responses[-1].json()["id"]).env
        mover, name = env.last_move()
        if mover == 0 or not name.startswith("KNOCK("):
            continue
        knocks += 1
        assert responses[-1].json()["log"][-1]["move"] == "KNOCK (face down)"
        card = CARD_TOKEN.findall(name)[0]
        assert not any(card in tokens(response.text) for response in responses)
    assert knocks


# -- refusals --------------------------------------------------------------------------------
def snapshot(client: Any, app: Any, game_id: str) -> tuple[Any, ...]:
    """All a refused request must leave as it was: the engine state, the GET state, the log,
    the games held."""
    table = table_of(app, game_id)
    return (table.env.game.to_dict(), client.get(f"/api/games/{game_id}").json(), list(table.log),
            list(app.state.tables.tables))


@pytest.fixture
def gin_game() -> tuple[Any, Any, str]:
    """An app, its client and a gin game waiting for the person's move."""
    app = make_app("gin_rummy", seed=3)
    client = TestClient(app)
    game_id = client.post("/api/games").json()["id"]
    return app, client, game_id


@pytest.mark.parametrize(("body", "status"), [
    (b"not json", 400), (b"\xff\xfe", 400), (b"{\"action\": ", 400),  # not JSON
    (b"[1]", 400), (b"3", 400), (b"\"DRAW_STOCK\"", 400), (b"null", 400),  # JSON but not an object
    (b"", 400), (b"{}", 400), (b"{\"act\": 1}", 400), (b"{\"action\": 1, \"seed\": 2}", 400),  # wrong keys
    (b"{\"action\": \"1\"}", 400), (b"{\"action\": true}", 400), (b"{\"action\": 1.0}", 400),
    (b"{\"action\": null}", 400), (b"{\"action\": [1]}", 400), (b"{\"action\": NaN}", 400),
    (b"{\"action\": " + b"9" * 5000 + b"}", 400), (b"[" * 100_000, 400),  # past what Python's json reads
    (b"{\"action\": -1}", 422), (b"{\"action\": 10000000000000000000000}", 422),
], ids=lambda value: repr(value)[:40] if isinstance(value, bytes) else str(value))
def test_a_refused_move_leaves_the_game_unchanged(gin_game, body, status):
    """A body that is not ``{"action": <int>}`` is a 400 and an id out of range a 422, each
    with only an error message, and the game goes on as before."""
    app, client, game_id = gin_game
    before = snapshot(client, app, game_id)
    response = client.post(f"/api/games/{game_id}/moves", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert list(response.json()) == ["error"] and response.json()["error"]
    assert snapshot(client, app, game_id) == before
    action = client.get(f"/api/games/{game_id}").json()["moves"][0]["action"]
    assert client.post(f"/api/games/{game_id}/moves", json={"action": action}).status_code == 200


def test_an_action_id_out_of_range_is_refused_saying_the_range(gin_game):
    """An id below 0 or from ``num_actions`` on: 422 with a message giving the ids' range, the
    game unchanged."""
    app, client, game_id = gin_game
    num_actions = table_of(app, game_id).env.num_actions
    before = snapshot(client, app, game_id)
    for action in (-1, num_actions, num_actions + 1, 10**22):
        response = client.post(f"/api/games/{game_id}/moves", json={"action": action})
        assert response.status_code == 422
        assert f"action {action} is out of range: the ids are 0..{num_actions - 1}" == response.json()["error"]
    assert snapshot(client, app, game_id) == before


def test_a_move_not_legal_now_is_refused_naming_it_and_the_phase(gin_game):
    """An action id of the game that is not legal in this phase: 422 with a message naming the
    action and the phase, and the game unchanged."""
    app, client, game_id = gin_game
    env = table_of(app, game_id).env
    legal = env.game.legal_actions()
    refused = 0
    for action in [a for a in range(env.num_actions) if a not in legal][::37]:
        before = snapshot(client, app, game_id)
        response = client.post(f"/api/games/{game_id}/moves", json={"action": action})
        assert response.status_code == 422
        message = response.json()["error"]
        assert env.action_to_str(action) in message and env.game.phase.name in message
        assert snapshot(client, app, game_id) == before
        refused += 1
    assert refused > 3


def test_an_unknown_game_is_a_404(gin_game):
    """A game id nobody holds: 404 for GET and for a move, the game held unchanged."""
    app, client, game_id = gin_game
    before = snapshot(client, app, game_id)
    for response in (client.get("/api/games/0123456789abcdef01234567"),
                     client.post("/api/games/0123456789abcdef01234567/moves", json={"action": 0}),
                     client.post(f"/api/games/{game_id}x/moves", json={"action": 0})):
        assert response.status_code == 404 and list(response.json()) == ["error"]
    assert snapshot(client, app, game_id) == before


def test_a_move_after_the_end_is_a_409():
    """Once the game is over every move is a 409 and the final state stays."""
    app = make_app("least_count", seed=1)
    client = TestClient(app)
    final = list(game_responses(client, None, random.Random(1)))[-1].json()
    game_id = final["id"]
    before = snapshot(client, app, game_id)
    for action in (0, 1, 2):
        response = client.post(f"/api/games/{game_id}/moves", json={"action": action})
        assert response.status_code == 409 and list(response.json()) == ["error"]
    assert snapshot(client, app, game_id) == before
    assert before[1] == final


@pytest.mark.parametrize("body", [
    b"{\"seed\": -1}", b"{\"seed\": \"3\"}", b"{\"seed\": true}", b"{\"seed\": 1.5}", b"{\"seed\": [3]}",
    b"{\"seed\": 3, \"seat\": 1}", b"{\"game\": \"gin_rummy\"}", b"[3]", b"3", b"not json",
    b"{\"seed\": " + b"9" * 5000 + b"}",
])
def test_a_refused_new_game_starts_nothing(gin_game, body):
    """A new game's body must be empty or ``{"seed": <int >= 0>}``: else a 400 and no game
    is added (the server's seed sequence does not move either)."""
    app, client, game_id = gin_game
    before = snapshot(client, app, game_id)
    response = client.post("/api/games", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and list(response.json()) == ["error"]
    assert snapshot(client, app, game_id) == before
    assert table_of(app, client.post("/api/games").json()["id"]).env.np_random_seed == 4  # the server's game 1


# -- games at once, seeds --------------------------------------------------------------------
def test_games_at_once_do_not_mix():
    """Three games whose moves are interleaved end exactly as the same games played one after
    the other: every response and the engine states."""
    seeds = (21, 22, 23)
    app = make_app("gin_rummy", "random")  # an agent with a random stream of its own, which must not be shared
    client = TestClient(app)
    runs = {seed: game_responses(client, seed, random.Random(seed)) for seed in seeds}
    together: dict[int, list[Any]] = {seed: [] for seed in seeds}
    while runs:
        for seed in list(runs):
            response = next(runs[seed], None)
            if response is None:
                del runs[seed]
            else:
                together[seed].append(response.json())
    alone_app = make_app("gin_rummy", "random")
    alone_client = TestClient(alone_app)
    for seed in seeds:
        alone = [response.json() for response in game_responses(alone_client, seed, random.Random(seed))]
        assert [{k: v for k, v in r.items() if k != "id"} for r in together[seed]] == \
               [{k: v for k, v in r.items() if k != "id"} for r in alone]
        assert table_of(app, together[seed][-1]["id"]).env.game.to_dict() == \
               table_of(alone_app, alone[-1]["id"]).env.game.to_dict()
    assert len({json.dumps(together[seed][0]["scene"]) for seed in seeds}) == len(seeds)


@pytest.mark.parametrize(("game", "opponent"), [("gin_rummy", "random"), ("manipulation_rummy", "heuristic")])
def test_a_seed_deals_the_same_game_and_the_same_replies(game, opponent):
    """Two apps given the same seed play the same game (deal, agents' replies, end) to the
    same moves (the random agent's choices too); another seed deals another game."""
    options = {"num_players": 2} if game == "manipulation_rummy" else {}
    first, again, other = (whole_game(TestClient(make_app(game, opponent, options, seat=1)), seed, random.Random(0))
                           for seed in (9, 9, 10))
    assert first == again
    assert any(entry["player"].startswith("player_0") for entry in first[-1]["log"])  # agent replies were compared
    assert first[0]["scene"] != other[0]["scene"]


def test_the_servers_seed_deals_game_k_from_seed_plus_k():
    """``make_app(seed=S)``: the k-th new game without a seed is the game of seed S + k (a
    game with its own seed does not move the sequence)."""
    app = make_app("gin_rummy", seed=40)
    client = TestClient(app)
    explicit = TestClient(make_app("gin_rummy"))
    for k in range(3):
        if k == 1:
            assert client.post("/api/games", json={"seed": 7}).status_code == 201
        rng = random.Random(k)
        served = whole_game(client, None, rng)
        assert served == whole_game(explicit, 40 + k, random.Random(k))
    ids = list(app.state.tables.tables)
    assert [table_of(app, game_id).env.np_random_seed for game_id in ids] == [40, 7, 41, 42]


# -- settings and the page -------------------------------------------------------------------
BAD_SETTINGS = [
    ({"game": "canasta"}, "canasta"),
    ({"game": "gin_rummy", "options": {"knock_limit": -3}}, "knock_limit"),
    ({"game": "gin_rummy", "options": {"bogus": 1}}, "bogus"),
    ({"game": "least_count", "options": {"num_players": "many"}}, "num_players"),
    ({"game": "gin_rummy", "seat": 2}, "seat 2"),
    ({"game": "gin_rummy", "seat": -1}, "seat -1"),
    ({"game": "gin_rummy", "seat": True}, "seat True"),
    ({"game": "least_count", "options": {"num_players": 2}, "seat": 3}, "seat 3"),
    ({"game": "gin_rummy", "opponent": "nobody"}, "nobody"),
    ({"game": "gin_rummy", "seed": -1}, "seed -1"),
    ({"game": "gin_rummy", "seed": "3"}, "seed '3'"),
    ({"game": "gin_rummy", "seed": True}, "seed True"),
]


@pytest.mark.parametrize(("settings", "named"), BAD_SETTINGS, ids=[named for _, named in BAD_SETTINGS])
def test_bad_settings_are_refused_before_serving(settings, named):
    """make_app refuses an unknown game, a bad option, a seat out of range, an unknown agent
    and a bad seed with a ValueError naming it."""
    with pytest.raises(ValueError, match=re.escape(named)):
        make_app(**settings)


@pytest.mark.parametrize(("argv", "named"), [
    (["--game", "canasta"], "canasta"),
    (["--game", "gin_rummy", "--option", "knock_limit=-3"], "knock_limit"),
    (["--game", "gin_rummy", "--option", "bogus=1"], "bogus"),
    (["--game", "gin_rummy", "--seat", "2"], "seat 2"),
    (["--game", "least_count", "--option", "num_players=2", "--seat", "3"], "seat 3"),
    (["--game", "gin_rummy", "--opponent", "nobody"], "nobody"),
    (["--game", "gin_rummy", "--seed", "-1"], "seed -1"),
])
def test_rummy_serve_exits_2_on_bad_settings_without_serving(argv, named, capsys, monkeypatch):
    """``rummy serve`` with a bad game, option, seat, agent or seed prints why on stderr and
    exits 2 without starting the server; good settings start it on this machine only."""
    uvicorn = library("uvicorn")
    served = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: served.append(kwargs))
    try:
        code = serve.main(argv)
    except SystemExit as stop:  # argparse's own refusals (a game not among the choices)
        code = stop.code
    assert code == 2 and not served
    assert named in capsys.readouterr().err
    assert serve.main(["--game", "gin_rummy", "--seed", "1"]) == 0
    assert served == [{"host": "127.0.0.1", "port": 8000, "log_level": "warning"}]


@pytest.mark.parametrize("game", list(rummy_envs.ENVS))
def test_the_page_is_one_self_contained_document(game):
    """GET / is the play page: HTML naming the game and its opponent, with no resource from
    elsewhere (no http(s) or protocol-relative src, href, CSS url or import)."""
    response = TestClient(make_app(game)).get("/")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = response.text
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert re.search(rf"<title>{game}: play \w+</title>", page)
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""url\(\s*["']?\s*(?:https?:)?//|@import""", page, re.I)


def test_rummy_serve_listens_on_localhost_and_answers(tmp_path):
    """The command itself: ``rummy serve`` (as a process) listens on 127.0.0.1 at the port it
    is given, serves the page and starts a game through the API."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "training.cli", "serve", "--game", "least_count",
                                "--opponent", "random", "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):  # up to a minute for the interpreter and the imports
            try:
                page = urllib.request.urlopen(base + "/", timeout=5).read().decode()
                break
            except OSError:
                assert process.poll() is None, process.stdout.read()
                time.sleep(0.1)
        else:
            raise AssertionError("rummy serve did not answer")
        assert "least_count: play random" in page
        request = urllib.request.Request(base + "/api/games", data=b'{"seed": 4}', method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert answer.status == 201 and json.loads(answer.read())["your_turn"]
    finally:
        process.terminate()
        process.wait(timeout=30)
