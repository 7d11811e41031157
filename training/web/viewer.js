// The replay viewer: steps through the scenes of a logged game (training.viewer.viewer_data).
"use strict";
(() => {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const last = data.views[0].moves.length - 1;
  const byId = (id) => document.getElementById(id);
  const slider = byId("step");
  const chooser = byId("view");
  let step = 0;

  byId("title").textContent = data.title;
  byId("players").textContent = data.players.join(" \u00b7 ");
  data.views.forEach((view, index) => chooser.append(new Option(view.name, String(index))));
  if (data.views.length < 2) byId("view-box").hidden = true;
  slider.max = String(last);
  const entries = data.views[0].moves.map((text, index) => {
    const item = RummyTable.element("li", "", text);
    item.addEventListener("click", () => show(index));
    byId("log").append(item);
    return item;
  });

  function scoresText(index) {
    const named = (scores) => scores.map((score, seat) => `player_${seat} ${score}`).join(", ");
    if (index < last) return "scores: " + named(data.scores[index]);
    let text = "final scores: " + named(data.final_scores);
    if (data.logged_scores) text += " (logged: " + named(data.logged_scores) + ")";
    return text;
  }

  function show(index) {
    step = Math.max(0, Math.min(last, index));
    const view = data.views[Number(chooser.value || 0)];
    slider.value = String(step);
    byId("position").textContent = `move ${step} of ${last}`;
    byId("move").textContent = view.moves[step];
    byId("table").replaceChildren(RummyTable.scene(view.scenes[step]));
    byId("scores").textContent = scoresText(step);
    entries.forEach((item, i) => {
      item.textContent = view.moves[i];
      item.className = i === step ? "current" : "";
    });
    entries[step].scrollIntoView({ block: "nearest" });
    byId("first").disabled = byId("prev").disabled = step === 0;
    byId("next").disabled = byId("last").disabled = step === last;
  }

  byId("first").addEventListener("click", () => show(0));
  byId("prev").addEventListener("click", () => show(step - 1));
  byId("next").addEventListener("click", () => show(step + 1));
  byId("last").addEventListener("click", () => show(last));
  slider.addEventListener("input", () => show(Number(slider.value)));
  chooser.addEventListener("change", () => show(step));
  document.addEventListener("keydown", (event) => {
    if (event.target === slider || event.target === chooser) return;
    const moves = { ArrowRight: step + 1, ArrowLeft: step - 1, Home: 0, End: last };
    if (event.key in moves) {
      event.preventDefault();
      show(moves[event.key]);
    }
  });
  show(0);
})();
