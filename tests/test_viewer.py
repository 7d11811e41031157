"""The replay viewer (``rummy view``, training.viewer) without a browser.

- a logged game of each game becomes, at every step, the env's own scene and move name for
  every card and for each seat, with the scores, the final scores and the logged ones;
- a ``--seat`` page holds that seat's view alone: no other seat's cards, no hidden card in a
  move's name (gin's face-down knock card, a defender's melds before the hand ends);
- the page is one self-contained file, and no text of the log can break out of its data;
- a bad file, game, log or seat is refused naming it (exit 2), and ``--game N`` picks by
  ``game_id`` in a tournament's log, else by line.
"""

from __future__ import annotations

import functools
import html
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import rummy_envs
from rummy_envs import replay as RP
from training import cli, tournament
from training.viewer import main, read_game, viewer_data, viewer_page

# game -> (env options, seed): small games of seeded random moves (knocks preferred, so the
# gin games end in a knock and the Hollywood match is short).
GAMES = {"gin_rummy": ({}, 1), "hollywood_gin": ({"episode": "match", "target_score": 10}, 1),
         "rummy500": ({"num_players": 3}, 0), "manipulation_rummy": ({"num_players": 2}, 2),
         "least_count": ({"num_players": 3}, 0)}
CARD = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK)\b")
DATA_START = '<script id="page-data" type="application/json">'


def choose(env: Any, rng: random.Random) -> int:
    """A random legal action, a knock or gin where there is one."""
    legal = list(env.game.legal_actions())
    knocks = [a for a in legal if env.action_to_str(a).startswith(("KNOCK", "GIN"))]
    return rng.choice(knocks or legal)


@functools.lru_cache(maxsize=None)
def played(game: str, options_json: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A game of seeded random moves: its log, and what the env itself showed at the deal and
    after each action (per view, every card then each seat: scene and move name; the scores)."""
    options = json.loads(options_json)
    env = rummy_envs.ENVS[game].raw_env(**options)
    env.reset(seed=seed)
    rng = random.Random(seed)
    views = [None, *range(len(env.possible_agents))]
    seen: dict[str, Any] = {"scenes": [[] for _ in views], "moves": [[] for _ in views], "scores": [], "movers": [],
                            "hands": []}

    def look() -> None:
        for index, view in enumerate(views):
            seen["scenes"][index].append(env.scene(view).to_dict())
            last = env.last_move(view)
            seen["moves"][index].append("the deal" if last is None else f"player_{last[0]}: {last[1]}")
        seen["scores"].append([int(s) for s in env.game.scores()])
        seen["hands"].append(getattr(env.game, "hand_index", 0))  # a match's hand, from 0

    look()
    while not env.game.is_terminal():
        seen["movers"].append(env.game.current_player)
        env.step(choose(env, rng))
        look()
    return RP.game_log(env.game, options), seen


def logged(game: str) -> tuple[dict[str, Any], dict[str, Any]]:
    options, seed = GAMES[game]
    return played(game, json.dumps(options), seed)


@functools.lru_cache(maxsize=None)
def knock_game() -> dict[str, Any]:
    """A gin log (layoffs played by hand) where player_1 knocks and player_0 then melds and
    lays off: the first such game of the seeds from 0."""
    options = json.dumps({"layoff_mode": "explicit"})
    for seed in range(200):
        log, seen = played("gin_rummy", options, seed)
        moves = seen["moves"][0]  # every card
        knock = next((step for step, move in enumerate(moves) if move.startswith("player_1: KNOCK(")), len(moves))
        after = moves[knock + 1:]
        if all(any(m.startswith(f"player_0: {name}(") for m in after) for name in ("MELD", "LAYOFF")):
            return log
    raise AssertionError("no seed gives a knock by player_1 with melds and layoffs after it")


@pytest.fixture(scope="module")
def tournament_records(tmp_path_factory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("tournament")
    tournament.run({"game": "gin_rummy", "agents": ["random", "novice"], "deals": 1, "workers": 1, "plots": False,
                    "output_dir": out})
    return [json.loads(line) for line in (out / tournament.GAMES_FILE).read_text().splitlines()]


def embedded(page: str) -> Any:
    """The JSON data of a viewer page."""
    start = page.index(DATA_START) + len(DATA_START)
    return json.loads(page[start:page.index("</script>", start)].replace("<\\/", "</"))


def face_up(scene: dict[str, Any]) -> set[str]:
    """The cards a scene shows face up (hands shown, the table's rows)."""
    cards = {card for hand in scene["hands"] if hand["cards"] is not None for card in hand["cards"]}
    return cards | {card for row in scene["rows"] for group in row["groups"] for card in group}


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# -- what the viewer shows -----------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_every_step_is_the_envs_own_scene_move_and_scores(game):
    """Per view (every card, each seat) and step: the scene and the move name the env showed
    while the game was played, the scores then; the final scores are the engine's."""
    log, seen = logged(game)
    data = viewer_data(log)
    steps = len(log["actions"]) + 1
    seats = len(seen["scenes"]) - 1
    assert data["game"] == game and data["players"] == [f"player_{q}" for q in range(seats)]
    assert [view["name"] for view in data["views"]] == ["every card", *(f"player_{q}'s view" for q in range(seats))]
    for index, view in enumerate(data["views"]):
        assert len(view["scenes"]) == len(view["moves"]) == steps
        assert view["moves"][0] == "the deal"
        assert view["scenes"] == seen["scenes"][index], view["name"]
        assert view["moves"] == seen["moves"][index], view["name"]
    env = rummy_envs.ENVS[game].raw_env(**log["options"])
    assert data["views"][0]["moves"][1:] == [f"player_{mover}: {env.action_to_str(action)}"
                                             for mover, action in zip(seen["movers"], log["actions"])]
    assert len(data["scores"]) == steps and data["scores"] == seen["scores"]
    assert data["final_scores"] == [int(s) for s in RP.replay(log).scores()] == data["scores"][-1]
    assert data["logged_scores"] is None
    assert json.loads(json.dumps(data)) == data  # plain JSON values


def test_a_tournament_record_shows_its_agents_and_logged_scores(tournament_records):
    """A record of a tournament's games.jsonl replays (its extra keys accepted), its players
    are labelled with their agents and its logged scores sit beside the final ones."""
    assert len(tournament_records) == 2
    for record in tournament_records:
        data = viewer_data(record)
        assert data["players"] == [f"player_{q} ({agent})" for q, agent in enumerate(record["agents"])]
        assert set(record["agents"]) == {"random", "novice"}
        assert data["logged_scores"] == record["scores"]
        assert data["final_scores"] == [int(s) for s in RP.replay(record, tournament.RECORD_KEYS).scores()]
        assert data["final_scores"] == data["scores"][-1] == record["scores"]
        assert len(data["views"]) == 3 and all(len(v["scenes"]) == len(record["actions"]) + 1 for v in data["views"])


# -- a seat's page -------------------------------------------------------------------------------
@pytest.mark.parametrize("game", list(GAMES))
def test_a_seat_page_holds_that_seats_view_alone(game):
    """viewer_data(seat=s): one view, the full data's view of s; the other seats' hands are
    never shown, and a card in the name of another seat's move was face up to s just before
    or after it (on the same deal)."""
    log, seen = logged(game)
    full = viewer_data(log)
    seats = len(full["players"])
    for seat in range(seats):
        data = viewer_data(log, seat=seat)
        assert data["views"] == [full["views"][seat + 1]]
        assert {k: v for k, v in data.items() if k != "views"} == {k: v for k, v in full.items() if k != "views"}
        scenes, moves = data["views"][0]["scenes"], data["views"][0]["moves"]
        for step, scene in enumerate(scenes):
            assert [hand["label"].startswith(f"player_{q}") for q, hand in enumerate(scene["hands"])] == [True] * seats
            assert all(hand["cards"] is None for q, hand in enumerate(scene["hands"]) if q != seat), (seat, step)
            assert scene["hands"][seat]["cards"] is not None
            same_deal = step and seen["hands"][step] == seen["hands"][step - 1]
            if same_deal and not moves[step].startswith(f"player_{seat}: "):
                shown = face_up(scenes[step - 1]) | face_up(scene)
                assert set(CARD.findall(moves[step])) <= shown, (seat, step, moves[step])


def test_gin_hides_the_knock_card_and_the_defenders_melds():
    """The other seat's knock is "KNOCK (face down)" in a seat's view (the card in the every
    card view); the knocker sees the defender's MELD and LAYOFF without their cards until the
    hand ends."""
    log = knock_game()
    full = viewer_data(log)
    everything = full["views"][0]["moves"]
    knock = next(step for step, move in enumerate(everything) if move.startswith("player_1: KNOCK("))
    card = CARD.search(everything[knock]).group()
    defender, knocker = viewer_data(log, seat=0), viewer_data(log, seat=1)
    assert full["views"][1]["moves"][knock] == defender["views"][0]["moves"][knock] == "player_1: KNOCK (face down)"
    assert knocker["views"][0]["moves"][knock] == everything[knock] == f"player_1: KNOCK({card})"
    assert "KNOCK(" not in json.dumps(defender)
    assert card not in face_up(defender["views"][0]["scenes"][knock])
    last = len(everything) - 1
    hidden = [step for step in range(knock + 1, last)
              if everything[step].startswith(("player_0: MELD(", "player_0: LAYOFF("))]
    assert hidden
    for step in hidden:
        assert knocker["views"][0]["moves"][step] == everything[step].partition("(")[0]
        assert defender["views"][0]["moves"][step] == everything[step]
        assert not set(CARD.findall(everything[step])) & face_up(knocker["views"][0]["scenes"][step])
    assert knocker["views"][0]["moves"][last] == everything[last]


def test_a_seat_page_carries_nothing_of_the_other_views():
    """viewer_page(seat=s) embeds only s's view."""
    log = knock_game()
    page = viewer_page(log, seat=0)
    assert embedded(page) == viewer_data(log, seat=0)
    assert "player_1's view" not in page and "every card" not in page and "KNOCK(" not in page


# -- a self-contained page -----------------------------------------------------------------------
def test_the_page_is_self_contained():
    """No address outside the file: no http(s), no src/href/url() but data:, no import."""
    for game in GAMES:
        log, _ = logged(game)
        seat = 2 if game == "rummy500" else None
        page = viewer_page(log, seat=seat)
        assert "http://" not in page and "https://" not in page and "@import" not in page
        links = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", page, re.IGNORECASE)
        links += re.findall(r"""url\(\s*["']?([^"')\s]*)""", page, re.IGNORECASE)
        assert all(link.startswith("data:") for link in links), links
        assert "__DATA__" not in page and "__TITLE__" not in page and "__STYLE__" not in page
        assert "__TABLE_SCRIPT__" not in page
        assert embedded(page) == viewer_data(log, seat=seat)


@pytest.mark.parametrize("text", ["</script><b>", "<!--<script>", "</SCRIPT ><b>", "__DATA__ & __TITLE__"])
def test_no_text_of_the_log_breaks_out_of_the_data(text):
    """A title or agent name holding script text neither closes the data's script element nor
    opens a comment in it that would keep it open; the data parses back whole, the title is
    escaped, and a placeholder's name in the text is not filled in."""
    log, _ = logged("gin_rummy")
    record = {**log, "game_id": 0, "agents": [text, "novice"], "scores": [0, 1]}
    page = viewer_page(record, title=text)
    assert "</script><b>" not in page and "<!--<script" not in page and "</SCRIPT" not in page
    assert page.count("</script>") == page.count("<script")
    data = embedded(page)
    assert data == viewer_data(record, title=text)
    assert data["players"][0] == f"player_0 ({text})" and data["title"].endswith(text)
    assert f"<title>{html.escape(data['title'])}</title>" in page
    assert page.count(DATA_START) == 1


# -- refusals ------------------------------------------------------------------------------------
def test_read_game_refuses_a_bad_file_naming_the_line(tmp_path):
    """Not JSON, not an object: the line's number; nothing in it; a game id or line not there:
    the games it holds."""
    log, _ = logged("least_count")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(log) + "\n\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 3: not JSON"):
        read_game(bad, 0)
    write_lines(bad, [log, [1, 2]])
    with pytest.raises(ValueError, match=r"line 2: expected a game log \(a JSON object\)"):
        read_game(bad, 0)
    for empty in ("", "\n  \n"):
        bad.write_text(empty, encoding="utf-8")
        with pytest.raises(ValueError, match="holds no games"):
            read_game(bad, 0)
    write_lines(bad, [{**log, "game_id": 4}, {**log, "game_id": 6}])
    with pytest.raises(ValueError, match=r"no game with game_id 5 \(its games: 4\.\.6\)"):
        read_game(bad, 5)
    write_lines(bad, [log, log])
    for number in (2, -1):
        with pytest.raises(ValueError, match=rf"holds games 0\.\.1; there is no game {number}"):
            read_game(bad, number)


def test_a_log_that_does_not_replay_is_refused_naming_the_field():
    """An illegal action: ReplayError naming actions[i]; an unknown key or a bad seat: ValueError."""
    log, _ = logged("rummy500")
    index = len(log["actions"]) // 2
    legal = RP.replay({**log, "actions": log["actions"][:index]}).legal_actions()
    illegal = next(a for a in range(10**6) if a not in legal)
    actions = list(log["actions"])
    actions[index] = illegal
    with pytest.raises(RP.ReplayError, match=re.escape(f"'actions[{index}]'")):
        viewer_data({**log, "actions": actions})
    with pytest.raises(ValueError, match="colour"):
        viewer_data({**log, "colour": "red"})
    for seat in (3, -1, "1", 1.0):
        with pytest.raises(ValueError, match=re.escape(f"seat {seat!r} is invalid; rummy500 has seats 0..2")):
            viewer_data(log, seat=seat)
    with pytest.raises(ValueError, match="seat True is invalid"):
        viewer_data(log, seat=True)


def test_main_exits_2_naming_the_problem(tmp_path, capsys):
    """Every refusal of ``rummy view`` is exit status 2 with the message on stderr, no page written."""
    log, _ = logged("gin_rummy")
    index = 3
    actions = list(log["actions"])
    legal = RP.replay({**log, "actions": actions[:index]}).legal_actions()
    actions[index] = next(a for a in range(10**6) if a not in legal)
    files = {"notjson": "{oops\n", "list": "[1]\n", "empty": "", "ids": json.dumps({**log, "game_id": 3}) + "\n",
             "short": json.dumps(log) + "\n", "illegal": json.dumps({**log, "actions": actions}) + "\n"}
    for name, text in files.items():
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")
    cases = [(["notjson.jsonl"], "line 1: not JSON"), (["list.jsonl"], "line 1: expected a game log"),
             (["empty.jsonl"], "holds no games"),
             (["ids.jsonl", "--game", "0"], "no game with game_id 0 (its games: 3..3)"),
             (["short.jsonl", "--game", "1"], "holds games 0..0; there is no game 1"),
             (["illegal.jsonl"], f"'actions[{index}]'"),
             (["short.jsonl", "--seat", "2"], "seat 2 is invalid; gin_rummy has seats 0..1"),
             (["missing.jsonl"], "missing.jsonl")]
    for argv, message in cases:
        capsys.readouterr()
        assert main([str(tmp_path / argv[0]), *argv[1:]]) == 2, argv
        out, err = capsys.readouterr()
        assert err.startswith("rummy view: error: ") and message in err, (argv, err)
        assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".html") == []


# -- writing the page ----------------------------------------------------------------------------
def test_main_writes_the_page_beside_the_log_or_where_told(tmp_path, capsys, tournament_records):
    """``rummy view games.jsonl --game 1``: games_1.html beside the log; ``-o`` elsewhere; the
    ``rummy`` command dispatches ``view`` to it."""
    games = write_lines(tmp_path / "games.jsonl", tournament_records)
    record = next(r for r in tournament_records if r["game_id"] == 1)
    assert main([str(games), "--game", "1"]) == 0
    assert "games_1.html" in capsys.readouterr().out
    page = (tmp_path / "games_1.html").read_text(encoding="utf-8")
    assert page == viewer_page(record, title="games.jsonl, game 1")
    out = tmp_path / "pages" / "seat.html"
    out.parent.mkdir()
    assert main([str(games), "--game", "0", "--seat", "1", "-o", str(out)]) == 0
    data = embedded(out.read_text(encoding="utf-8"))
    assert data == viewer_data(tournament_records[0], seat=1, title="games.jsonl, game 0")
    assert [view["name"] for view in data["views"]] == ["player_1's view"]
    via_cli = tmp_path / "cli.html"
    assert cli.main(["view", str(games), "--game", "1", "--output", str(via_cli)]) == 0
    assert via_cli.read_text(encoding="utf-8") == page
    assert cli.main(["view", str(tmp_path / "nothing.jsonl")]) == 2
    assert "nothing.jsonl" in capsys.readouterr().err


def test_game_n_is_the_game_id_where_every_record_has_one(tmp_path, tournament_records):
    """--game N is the record whose game_id is N when all have one (the file in reverse
    order), else the N-th line."""
    by_id = sorted(tournament_records, key=lambda r: r["game_id"])
    reverse = write_lines(tmp_path / "reverse.jsonl", by_id[::-1])
    for record in by_id:
        assert read_game(reverse, record["game_id"]) == record
    plain = [logged(game)[0] for game in ("gin_rummy", "least_count", "rummy500")]
    lines = write_lines(tmp_path / "plain.jsonl", plain)
    for number, log in enumerate(plain):
        assert read_game(lines, number) == log
    mixed = write_lines(tmp_path / "mixed.jsonl", [by_id[1], plain[1], by_id[0]])  # one without game_id: by line
    assert [read_game(mixed, n) for n in range(3)] == [by_id[1], plain[1], by_id[0]]
    assert main([str(reverse), "--game", "0", "-o", str(tmp_path / "zero.html")]) == 0
    assert embedded((tmp_path / "zero.html").read_text(encoding="utf-8"))["logged_scores"] == by_id[0]["scores"]
