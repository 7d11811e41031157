// The play page: the person's table and moves, from the server's JSON API (training.serve).
"use strict";
(() => {
  const settings = JSON.parse(document.getElementById("page-data").textContent);
  const byId = (id) => document.getElementById(id);
  let game = null;
  let selected = new Map();  // index in the hand -> card text
  let busy = false;
  let answered = 0;

  byId("title").textContent = `${settings.game}: you (player_${settings.seat}) against ${settings.opponent}`;

  async function call(method, path, body) {
    busy = true;
    try {
      const response = await fetch(path, {
        method, headers: { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const data = await response.json();
      if (!response.ok) {
        byId("error").textContent = data.error;
        return;
      }
      byId("error").textContent = "";
      game = data;
      selected = new Map();
      render();
    } catch (err) {
      byId("error").textContent = `the server did not answer (${err.message})`;
    } finally {
      busy = false;
      answered += 1;
      document.body.dataset.answered = String(answered);  // tests wait on this
    }
  }

  function named(move) {
    const cards = [...move.cards];
    for (const text of selected.values()) {
      const at = cards.indexOf(text);
      if (at < 0) return false;
      cards.splice(at, 1);
    }
    return true;
  }

  function renderMoves() {
    const box = byId("moves");
    box.replaceChildren();
    let shown = game.moves;
    if (selected.size) {
      const naming = game.moves.filter(named);
      if (naming.length) shown = naming;
      else byId("error").textContent = "no legal move names the cards you picked";
    }
    for (const move of shown) {
      const button = RummyTable.element("button", "move" + (selected.size && named(move) ? " named" : ""), move.name);
      button.dataset.action = String(move.action);
      button.addEventListener("click", () => { if (!busy) call("POST", `/api/games/${game.id}/moves`, { action: move.action }); });
      box.append(button);
    }
  }

  function toggle(text, index) {
    if (!game.your_turn) return;
    if (selected.has(index)) selected.delete(index); else selected.set(index, text);
    byId("error").textContent = "";
    render();
  }

  function render() {
    byId("players").textContent = game.players.join(" \u00b7 ");
    byId("table").replaceChildren(RummyTable.scene(game.scene, {
      ownHand: game.seat, onCard: game.your_turn ? toggle : null, selected: new Set(selected.keys()),
    }));
    const named = (scores) => scores.map((score, seat) => `${game.players[seat]} ${score}`).join(", ");
    if (game.over) {
      const winners = game.players.filter((_, seat) => game.places[seat] === 1);
      byId("status").textContent = `game over: ${winners.join(" and ")} ${winners.length > 1 ? "tie" : "wins"}`;
      byId("scores").textContent = `final scores: ${named(game.scores)}`;
    } else {
      byId("status").textContent = game.your_turn ? "your turn" : "waiting";
      byId("scores").textContent = `scores: ${named(game.scores)}`;
    }
    renderMoves();
    byId("log").replaceChildren(...game.log.map((entry) => RummyTable.element("li", "", `${entry.player}: ${entry.move}`)));
    byId("log").lastElementChild?.scrollIntoView({ block: "nearest" });
    document.body.dataset.state = game.over ? "over" : "playing";
  }

  byId("new-game").addEventListener("click", () => { if (!busy) call("POST", "/api/games"); });
  call("POST", "/api/games");
})();
