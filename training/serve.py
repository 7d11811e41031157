"""``rummy serve --game GAME --opponent NAME``: a person plays agents in the browser.

A small Starlette app (the ``serve`` extra, run by uvicorn on localhost by default) serves
one page and a JSON API; each game is a ``PlayTable`` of its own, found by a random id, so
any number of games go on at once without mixing. The person's seat sees only what its
player view holds: every response is built from ``env.scene(seat)`` (the frames' picture of
that view), the legal moves of that seat, and the moves so far as that seat saw them
(``env.last_move(seat)``: a gin knock card stays face down). The agents move at once after
the person, so a response always ends at the person's turn or at the end of the game.

The API (docs/frames.md, "The play page"):
- ``POST /api/games`` with an optional ``{"seed": N}`` starts a game: 201 and its state;
- ``GET /api/games/{id}``: the game's state;
- ``POST /api/games/{id}/moves`` with ``{"action": ID}`` plays the person's move: 200 and the
  state after the agents' replies. A body that is not such an object is a 400, a game id
  nobody holds a 404, a move after the game ended a 409, an action id that is not legal
  now a 422; each with ``{"error": message}``, and the game goes on unchanged.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import secrets
import sys
import threading
from collections import OrderedDict
from typing import Any

import rummy_envs
from agents import make_agent
from rummy_envs.errors import IllegalActionError
from training.play import default_opponent, parse_option
from training.viewer import inline_page

MAX_TABLES = 512
"""Games kept at once; starting one more forgets the game touched least recently."""

CARD_TOKEN = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK)\b")


class MoveError(ValueError):
    """A request the game refuses, with the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class PlayTable:
    """One game: the person in ``seat`` against ``opponent`` agents in the other seats. The
    agents play as soon as it is their turn, so the game waits only for the person."""

    def __init__(self, game: str, options: dict[str, Any], seat: int, opponent: str, seed: int) -> None:
        self.env = rummy_envs.ENVS[game].raw_env(**{**options, "illegal_action": "raise"})
        self.seat = seat
        self.person = self.env.possible_agents[seat]
        self.agents = {agent: make_agent(opponent, game, seed + q + 1)
                       for q, agent in enumerate(self.env.possible_agents) if q != seat}
        self.players = [f"player_{q} (you)" if q == seat else f"player_{q} ({opponent})"
                        for q in range(len(self.env.possible_agents))]
        self.log: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.env.reset(seed=seed)
        self._advance()

    @property
    def over(self) -> bool:
        """Whether the episode has ended for the person."""
        return self.person not in self.env.agents or self.env.game.is_terminal()

    def _step(self, action: int | None) -> None:
        """One step of the env; a move is logged as the person's seat saw it."""
        self.env.step(action)
        if action is not None:
            mover, name = self.env.last_move(self.seat)
            self.log.append({"player": self.players[mover], "move": name})

    def _advance(self) -> None:
        """The agents' moves and the dead steps, up to the person's turn or the end."""
        env = self.env
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                self._step(None)
                continue
            if agent == self.person:
                return
            observation = env.observe(agent)
            self._step(self.agents[agent].act(observation["observation"], observation["action_mask"],
                                              env.player_view(agent)))

    def play(self, action: Any) -> None:
        """The person's move, then the agents' replies; MoveError (the game unchanged) for a
        move after the end, an action that is not an id, or one that is not legal now."""
        with self.lock:
            if self.over:
                raise MoveError(409, "the game is over; start a new one")
            if isinstance(action, bool) or not isinstance(action, int):
                raise MoveError(400, f"'action' must be an action id (an integer), got {json.dumps(action)}")
            if not 0 <= action < self.env.num_actions:
                raise MoveError(422, f"action {action} is out of range: the ids are 0..{self.env.num_actions - 1}")
            try:
                self._step(action)
            except IllegalActionError as err:
                raise MoveError(422, str(err)) from None
            self._advance()

    def state(self) -> dict[str, Any]:
        """What the page shows, all from the person's seat: the table it sees, its legal moves
        (each with the cards of its hand it names), the moves so far as it saw them, the scores, and at the
        end each seat's place."""
        with self.lock:
            env = self.env
            over = self.over
            scene = env.scene(self.seat).to_dict()
            moves = []
            if not over and env.agent_selection == self.person:
                hand = scene["hands"][self.seat]["cards"]
                for action in env.game.legal_actions():
                    name = env.action_to_str(action)
                    moves.append({"action": action, "name": name, "cards": hand_cards(name, hand)})
            scores = [int(score) for score in env.game.scores()]
            return {
                "game": env.metadata["name"],
                "seat": self.seat,
                "players": self.players,
                "scene": scene,
                "your_turn": bool(moves),
                "over": over,
                "moves": moves,
                "log": list(self.log),
                "scores": scores,
                "places": places(env.game.standings()) if over else None,
            }


def hand_cards(name: str, hand: list[str]) -> list[str]:
    """The cards of ``hand`` that a move's name names, in the name's order: what clicking
    cards of the hand picks the move by (a card a joker is declared as, or one of a pile,
    is no card of the hand unless the hand holds it)."""
    left = list(hand)
    named = []
    for card in CARD_TOKEN.findall(name.partition("(")[2]):
        if card in left:
            left.remove(card)
            named.append(card)
    return named


def places(standings: list[int]) -> list[int]:
    """Each seat's place from the standings (1 the best; tied seats share the best place)."""
    return [1 + sum(other > mine for other in standings) for mine in standings]


class Tables:
    """The games going on, by id; the least recently used is forgotten past ``capacity``."""

    def __init__(self, game: str, options: dict[str, Any], seat: int, opponent: str, seed: int | None,
                 capacity: int = MAX_TABLES) -> None:
        self.game, self.options, self.seat, self.opponent = game, options, seat, opponent
        self.capacity = capacity
        self.seeds = itertools.count(seed) if seed is not None else None
        self.tables: OrderedDict[str, PlayTable] = OrderedDict()
        self.lock = threading.Lock()

    def start(self, seed: int | None) -> tuple[str, PlayTable]:
        """A new game (dealt from ``seed``, else the server's next seed or a random one)."""
        with self.lock:
            if seed is None:
                seed = next(self.seeds) if self.seeds is not None else secrets.randbits(31)
        table = PlayTable(self.game, self.options, self.seat, self.opponent, seed)
        game_id = secrets.token_hex(12)  # no card text (7H) can hide in hex digits
        with self.lock:
            self.tables[game_id] = table
            while len(self.tables) > self.capacity:
                self.tables.popitem(last=False)
        return game_id, table

    def get(self, game_id: str) -> PlayTable:
        with self.lock:
            table = self.tables.get(game_id)
            if table is None:
                raise MoveError(404, f"no game {game_id!r} here (finished games are forgotten after "
                                     f"{self.capacity} newer ones, and when the server restarts)")
            self.tables.move_to_end(game_id)
            return table


def check_settings(game: str, options: dict[str, Any], seat: int, opponent: str | None) -> str:
    """The opponent to play (the game's default when None); ValueError naming a bad game,
    option, seat or agent, so that ``rummy serve`` refuses them before it listens."""
    if game not in rummy_envs.ENVS:
        raise ValueError(f"unknown game {game!r}; games: {', '.join(sorted(rummy_envs.ENVS))}")
    seats = len(rummy_envs.ENVS[game].raw_env(**options).possible_agents)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < seats:
        raise ValueError(f"seat {seat!r} is invalid; {game} has seats 0..{seats - 1} under these options")
    opponent = opponent or default_opponent(game)
    make_agent(opponent, game, 0)
    return opponent


def make_app(game: str, opponent: str | None = None, options: dict[str, Any] | None = None, seat: int = 0,
             seed: int | None = None) -> Any:
    """The play page's Starlette app for one game, its options, the person's seat and the
    agent playing the other seats (ValueError naming a bad one). ``seed`` fixes the deals:
    game k is dealt from ``seed + k`` (by default each deal is random)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    options = dict(options or {})
    opponent = check_settings(game, options, seat, opponent)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed {seed!r} is invalid; expected a non-negative integer")
    tables = Tables(game, options, seat, opponent, seed)
    page = inline_page("play", f"{game}: play {opponent}",
                       {"game": game, "opponent": opponent, "seat": seat})

    def refused(err: MoveError) -> JSONResponse:
        return JSONResponse({"error": str(err)}, status_code=err.status)

    async def body_of(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, an integer of too many digits, too deep
            raise MoveError(400, "the request body is not JSON") from None
        if not isinstance(body, dict):
            raise MoveError(400, f"expected a JSON object, got {json.dumps(body)[:80]}")
        return body

    async def index(request: Request) -> HTMLResponse:
        return HTMLResponse(page)

    async def new_game(request: Request) -> JSONResponse:
        try:
            body = await body_of(request)
            unknown = sorted(set(body) - {"seed"})
            if unknown:
                raise MoveError(400, f"unknown key {unknown[0]!r}; a new game takes only 'seed'")
            game_seed = body.get("seed")
            if game_seed is not None and (isinstance(game_seed, bool) or not isinstance(game_seed, int)
                                          or game_seed < 0):
                raise MoveError(400, f"'seed' must be a non-negative integer, got {json.dumps(game_seed)}")
        except MoveError as err:
            return refused(err)
        game_id, table = tables.start(game_seed)
        return JSONResponse({"id": game_id, **table.state()}, status_code=201)

    async def show_game(request: Request) -> JSONResponse:
        game_id = request.path_params["game_id"]
        try:
            return JSONResponse({"id": game_id, **tables.get(game_id).state()})
        except MoveError as err:
            return refused(err)

    async def move(request: Request) -> JSONResponse:
        game_id = request.path_params["game_id"]
        try:
            table = tables.get(game_id)
            body = await body_of(request)
            if set(body) != {"action"}:
                raise MoveError(400, "expected {\"action\": <action id>}, got the keys "
                                     f"{sorted(body) or 'none'}")
            table.play(body["action"])
        except MoveError as err:
            return refused(err)
        return JSONResponse({"id": game_id, **table.state()})

    app = Starlette(routes=[
        Route("/", index),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", show_game),
        Route("/api/games/{game_id}/moves", move, methods=["POST"]),
    ])
    app.state.tables = tables
    return app


def main(argv: list[str] | None = None) -> int:
    """Run ``rummy serve`` until interrupted; 2 on a bad game, option, seat or agent."""
    parser = argparse.ArgumentParser(prog="rummy serve", description="Play an agent in the browser: a local web "
                                     "page where you click cards and moves (pip install 'rummy-envs[serve]').")
    parser.add_argument("--game", required=True, choices=sorted(rummy_envs.ENVS), help="the game to play")
    parser.add_argument("--opponent", help="agent name (default: the best of heuristic, novice, random for the game)")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, help="deal game k from seed + k (default: random deals)")
    parser.add_argument("--option", type=parse_option, action="append", default=[], metavar="KEY=VALUE",
                        help="env option, repeatable (values: int, float, true/false, none or text)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this "
                        "machine only)")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    try:
        import uvicorn
    except ImportError as err:
        print(f"{parser.prog}: {err}; install the serve extra: pip install 'rummy-envs[serve]'", file=sys.stderr)
        return 2
    try:
        app = make_app(args.game, args.opponent, dict(args.option), args.seat, args.seed)
    except ValueError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    print(f"playing {args.game} at http://{args.host}:{args.port}/ (Ctrl+C stops)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
