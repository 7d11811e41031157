"""The replay viewer and the play page in headless Chromium, clicked as a person would.

Debian's ``chromium`` (``.ci/run`` installs it when it is missing) is driven by Playwright,
pointed at that browser: Playwright's own browser download is never used. Without the
browser or Playwright the tests skip, and fail under ``RUMMY_REQUIRE_INTEGRATIONS=1`` (CI).

- the viewer page of a logged game of each game opens with no console error, steps move by
  move (keyboard, buttons, slider) to its last move and shows the logged final scores;
- on the play page a whole gin hand and a whole Least Count round are played by clicking
  cards and moves; the page's final scores are the engine's, and no response of the server
  carries a card the person has not seen.

``RUMMY_UPDATE_SCREENSHOTS=1`` writes the screenshots the docs show (docs/images/web/).
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import rummy_envs
from rummy_envs.replay import game_log
from training.viewer import viewer_page

CHROMIUM = os.environ.get("RUMMY_CHROMIUM", "/usr/bin/chromium")
# The flags a closed network needs (no background connections that would be refused), and
# those of a root user in a container.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "docs" / "images" / "web"
REQUIRED = bool(os.environ.get("RUMMY_REQUIRE_INTEGRATIONS"))
CARD = re.compile(r"\b(?:[2-9TJQKA][CDHS]|JK)\b")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if REQUIRED:
        from playwright.sync_api import sync_playwright
        assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install chromium"
    else:
        sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
        if not Path(CHROMIUM).exists():
            pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A browser page that keeps every console error and uncaught exception."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1100, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def text(self, selector: str) -> str:
        return self.page.text_content(selector) or ""

    def screenshot(self, tmp_path: Path, name: str) -> None:
        """A screenshot into the test's folder, and into the docs under RUMMY_UPDATE_SCREENSHOTS."""
        self.page.screenshot(path=str(tmp_path / name), full_page=True)
        if os.environ.get("RUMMY_UPDATE_SCREENSHOTS"):
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=str(SCREENSHOTS / name), full_page=True)


# -- the replay viewer -------------------------------------------------------------------------
VIEWER_GAMES = {"gin_rummy": ({}, 1), "hollywood_gin": ({}, 0),
                "rummy500": ({"num_players": 3}, 0), "manipulation_rummy": ({"num_players": 3}, 1),
                "least_count": ({"num_players": 4}, 0)}


def logged_game(game: str, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """A game of seeded random moves as a log with its final scores, as a tournament logs it."""
    env = rummy_envs.ENVS[game].raw_env(**options)
    env.reset(seed=seed)
    rng = random.Random(seed)
    while not env.game.is_terminal():
        env.step(rng.choice(list(env.game.legal_actions())))
    return {**game_log(env.game, options), "scores": list(env.game.scores())}


@pytest.mark.parametrize("game", list(VIEWER_GAMES))
def test_the_viewer_steps_through_a_logged_game_to_its_final_scores(browser, tmp_path, game):
    options, seed = VIEWER_GAMES[game]
    record = logged_game(game, options, seed)
    moves = len(record["actions"])
    path = tmp_path / "game.html"
    path.write_text(viewer_page(record, title="a random game"), encoding="utf-8")
    env = rummy_envs.ENVS[game].raw_env(**options)
    names = [env.action_to_str(action) for action in record["actions"]]
    view = Page(browser)
    page = view.page
    page.goto(path.as_uri())
    assert view.text("#position") == f"move 0 of {moves}"
    assert view.text("#move") == "the deal"
    for step in range(1, moves + 1):
        page.keyboard.press("ArrowRight")
        assert view.text("#position") == f"move {step} of {moves}"
        assert view.text("#move").endswith(": " + names[step - 1])
        if step == moves // 2 and game == "gin_rummy":
            view.screenshot(tmp_path, "viewer.png")
    assert page.is_disabled("#next") and page.is_disabled("#last")
    named = ", ".join(f"player_{seat} {score}" for seat, score in enumerate(record["scores"]))
    assert view.text("#scores") == f"final scores: {named} (logged: {named})"
    page.click("#first")
    assert view.text("#position") == f"move 0 of {moves}"
    page.click("#next")
    page.click("#next")
    page.click("#prev")
    assert view.text("#position") == f"move 1 of {moves}"
    page.fill("#step", str(moves))
    assert view.text("#position") == f"move {moves} of {moves}"
    page.select_option("#view", label="player_1's view")
    assert page.locator(".hand").nth(0).locator(".card.back").count() > 0  # player_0's cards face down
    assert page.locator(".hand").nth(1).locator(".card.back").count() == 0
    assert view.errors == []


# -- the play page -----------------------------------------------------------------------------
@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app served by uvicorn on a free localhost port, in a thread; its address."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()


class SeenCards:
    """Every card the person's seat has seen, at the deal and after every step of every table
    (the server runs in this process, so its steps can be watched)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from training.serve import PlayTable

        self.cards: set[str] = set()
        for method in ("_advance", "_step"):  # the deal (the first advance), then every step
            monkeypatch.setattr(PlayTable, method, self._watched(getattr(PlayTable, method)))

    def _watched(self, method: Any) -> Any:
        def watched(table: Any, *args: Any) -> None:
            self.cards |= set(CARD.findall(json.dumps(table.env.scene(table.seat).to_dict())))
            method(table, *args)
            self.cards |= set(CARD.findall(json.dumps(table.env.scene(table.seat).to_dict())))

        return watched


def play_by_clicking(view: Page, base: str, rng: random.Random, seen: SeenCards, tmp_path: Path,
                     shot: str | None) -> int:
    """Play the page's game to its end by clicking: a move naming a card of the person's hand
    by clicking that card and then the move, other moves by their button. Every answer of the
    server is checked at once against the cards seen so far; the number of answers."""
    page = view.page
    answers = 0

    def answered(act: Any) -> None:
        nonlocal answers
        with page.expect_response(lambda response: "/api/games" in response.url) as response:
            act()
        leaked = set(CARD.findall(response.value.text())) - seen.cards
        assert leaked == set(), f"answer {answers} carries cards the person has not seen: {sorted(leaked)}"
        answers += 1
        page.wait_for_selector(f"body[data-answered='{answers}']")
        assert view.text("#error") == ""

    answered(lambda: page.goto(base + "/"))
    while page.get_attribute("body", "data-state") != "over":
        buttons = page.locator("#moves button")
        names = [buttons.nth(k).text_content() for k in range(buttons.count())]
        assert names, "the person's turn shows no move"
        name = rng.choice(names)
        exactly = re.compile("^" + re.escape(name) + "$")
        hand = page.locator(".hand .card.selectable")
        held = {hand.nth(k).get_attribute("data-card") for k in range(hand.count())}
        cards = [card for card in CARD.findall(name.partition("(")[2]) if card in held]
        if cards:
            page.click(f".hand .card.selectable[data-card='{cards[0]}']")
            assert page.locator("#moves button.named").filter(has_text=exactly).count() == 1
            if shot and answers > 6:
                view.screenshot(tmp_path, shot)
                shot = None
            answered(page.locator("#moves button.named").filter(has_text=exactly).click)
        else:
            answered(buttons.filter(has_text=exactly).first.click)
    return answers


@pytest.mark.parametrize(("game", "options", "seed"), [("gin_rummy", {}, 3), ("least_count", {"num_players": 3}, 5)])
def test_a_person_plays_a_whole_game_by_clicking(browser, tmp_path, monkeypatch, game, options, seed):
    if not REQUIRED:
        pytest.importorskip("starlette")
        pytest.importorskip("uvicorn")
    from training.serve import make_app

    seen = SeenCards(monkeypatch)
    app = make_app(game, "heuristic", options, seat=0, seed=seed)
    view = Page(browser)
    with serving(app) as base:
        answers = play_by_clicking(view, base, random.Random(seed), seen, tmp_path,
                                   "play.png" if game == "gin_rummy" else None)
        (table,) = app.state.tables.tables.values()
    scores = table.env.game.scores()
    assert table.env.game.is_terminal() and answers > 3
    players = ["player_0 (you)"] + [f"player_{q} (heuristic)" for q in range(1, len(scores))]
    assert view.text("#scores") == "final scores: " + ", ".join(f"{p} {s}" for p, s in zip(players, scores))
    assert view.text("#status").startswith("game over: ")
    if game == "gin_rummy":
        view.screenshot(tmp_path, "play_over.png")
    assert view.errors == []
