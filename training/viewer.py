"""``rummy view GAMES.jsonl [--game N] [--seat S]``: a logged game as one HTML file.

The file steps through the game move by move (buttons, arrow keys, a slider, the move list)
and needs nothing else: no server, no network, its script, style and data inlined. It is
built by replaying the log through the engine (``rummy_envs.replay.replay_env``), so what it
shows is what happened: at each step the table as the env's ``scene`` draws it, the move's
name as our docs write it, and the scores; at the end the final scores beside the logged
ones. Without ``--seat`` it holds every card and each seat's view, chosen in the page; with
``--seat S`` it holds only what seat S saw (the others' cards and hidden moves are not in
the file at all).

``GAMES.jsonl`` is a file of game logs, one per line: a tournament's ``games.jsonl`` or
logs written by ``rummy_envs.replay.game_log``. ``--game N`` picks the game whose
``game_id`` is N where the records have one, else the N-th line (from 0).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from rummy_envs.replay import read_log, replay_env
from training.tournament import RECORD_KEYS


def web_asset(name: str) -> str:
    """A file of ``training/web`` (the shared table script and style, the page templates)."""
    return resources.files("training").joinpath("web", name).read_text(encoding="utf-8")


def inline_page(page: str, title: str, data: Any = None) -> str:
    """One of ``training/web``'s pages (``viewer`` or ``play``: its body ``<page>.html`` and
    script ``<page>.js``) set into ``page.html`` with the table's style and script, the title
    and the JSON ``data``, all inlined in one pass (no inlined text is read again for a
    placeholder), every ``<`` of the data escaped as ``\\u003c``: no text of the data can close
    the script element, nor open a comment or tag in it that would keep it from closing."""
    parts = {"STYLE": web_asset("table.css"), "TABLE_SCRIPT": web_asset("table.js"), "TITLE": html.escape(title),
             "BODY": web_asset(f"{page}.html"), "PAGE_SCRIPT": web_asset(f"{page}.js"),
             "DATA": json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")}
    return re.sub(r"__(STYLE|TABLE_SCRIPT|TITLE|BODY|PAGE_SCRIPT|DATA)__", lambda match: parts[match.group(1)],
                  web_asset("page.html"))


def read_game(path: str | Path, number: int) -> dict[str, Any]:
    """Game ``number`` of a JSON-lines file of game logs (by ``game_id`` where the records
    have one, else by line from 0); ValueError naming the line or saying what the file holds."""
    records = []
    for line_number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {line_number}: not JSON ({err.msg})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}, line {line_number}: expected a game log (a JSON object)")
        records.append(record)
    if not records:
        raise ValueError(f"{path} holds no games")
    if all("game_id" in record for record in records):
        found = [record for record in records if record["game_id"] == number]
        if not found:
            ids = sorted(record["game_id"] for record in records)
            raise ValueError(f"{path} has no game with game_id {number} (its games: {ids[0]}..{ids[-1]})")
        return found[0]
    if not 0 <= number < len(records):
        raise ValueError(f"{path} holds games 0..{len(records) - 1}; there is no game {number}")
    return records[number]


def player_labels(record: dict[str, Any], seats: int) -> list[str]:
    """``player_q``, with the agent's name where a tournament record names it."""
    agents = record.get("agents")
    if isinstance(agents, list) and len(agents) == seats:
        return [f"player_{q} ({agent})" for q, agent in enumerate(agents)]
    return [f"player_{q}" for q in range(seats)]


def viewer_data(record: dict[str, Any], seat: int | None = None, title: str = "") -> dict[str, Any]:
    """What the viewer page shows of a logged game, replayed through the engine: per view
    (every card and each seat's, or ``seat``'s alone) the scene and the move's name at every
    step (step 0 the deal, step k after the k-th action), the scores at every step, the final
    scores, and the scores the record logged (if it has them). ValueError or ReplayError
    naming the log's field that cannot be replayed."""
    log = read_log(record, RECORD_KEYS)
    views: list[int | None] = []
    scenes: list[list[dict[str, Any]]] = []
    moves: list[list[str]] = []
    scores: list[list[int]] = []

    def record_step(env: Any) -> None:
        if not views:
            seats = len(env.possible_agents)
            if seat is not None and not (isinstance(seat, int) and 0 <= seat < seats):
                raise ValueError(f"seat {seat!r} is invalid; {log.game} has seats 0..{seats - 1}")
            views.extend([None, *range(seats)] if seat is None else [seat])
            scenes.extend([] for _ in views)
            moves.extend([] for _ in views)
        for index, shown in enumerate(views):
            scenes[index].append(env.scene(shown).to_dict())
            last = env.last_move(shown)
            moves[index].append("the deal" if last is None else f"player_{last[0]}: {last[1]}")
        scores.append([int(score) for score in env.game.scores()])

    env = replay_env(record, RECORD_KEYS, on_move=record_step)
    seats = len(env.possible_agents)
    logged = record.get("scores")
    return {
        "game": log.game,
        "title": f"{env.metadata['name']}: {title or f'seed {log.seed}'}",
        "players": player_labels(record, seats),
        "views": [{"name": "every card" if shown is None else f"player_{shown}'s view", "scenes": scenes[index],
                   "moves": moves[index]} for index, shown in enumerate(views)],
        "scores": scores,
        "final_scores": [int(score) for score in env.game.scores()],
        "logged_scores": logged if isinstance(logged, list) else None,
    }


def viewer_page(record: dict[str, Any], seat: int | None = None, title: str = "") -> str:
    """The viewer of a logged game as one self-contained HTML page."""
    data = viewer_data(record, seat, title)
    return inline_page("viewer", data["title"], data)


def main(argv: list[str] | None = None) -> int:
    """Run ``rummy view``; 0 when the page is written, 2 on a bad file, game or seat."""
    parser = argparse.ArgumentParser(prog="rummy view", description="Write a logged game as one self-contained "
                                     "HTML page that steps through it move by move.")
    parser.add_argument("games", metavar="GAMES.jsonl", help="game logs, one per line (a tournament's games.jsonl)")
    parser.add_argument("--game", type=int, default=0, metavar="N",
                        help="the game: its game_id in a tournament's log, else its line from 0 (default 0)")
    parser.add_argument("--seat", type=int, metavar="S", help="show only what seat S saw (default: every card, "
                        "and each seat's view to choose in the page)")
    parser.add_argument("-o", "--output", metavar="PAGE.html",
                        help="the page to write (default: GAMES_N.html beside the log)")
    args = parser.parse_args(argv)
    source = Path(args.games)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}_{args.game}.html")
    try:
        record = read_game(source, args.game)
        page = viewer_page(record, args.seat, f"{source.name}, game {args.game}")
        output.write_text(page, encoding="utf-8")
    except (OSError, ValueError) as err:  # a ReplayError is a ValueError
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    print(f"game {args.game} of {source} written to {output}")
    return 0
