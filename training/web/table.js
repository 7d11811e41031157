// Draws a scene (rummy_envs.frames.Scene.to_dict: the seats' hands, the table's rows, a few
// lines of text) as HTML; shared by the replay viewer and the play page.
"use strict";
const RummyTable = (() => {
  const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A card face from its text ("7H", "TD", "JK"), or a card back for null.
  function card(text) {
    if (text === null) {
      const back = element("span", "card back");
      back.title = "face down";
      return back;
    }
    if (text === "JK") {
      const joker = element("span", "card joker");
      joker.append(element("span", "rank", "JK"), element("span", "suit", "\u2605"));
      joker.dataset.card = text;
      joker.title = "joker";
      return joker;
    }
    const rank = text[0] === "T" ? "10" : text[0];
    const suit = text[1];
    const face = element("span", "card " + (suit === "D" || suit === "H" ? "red" : "black"));
    face.append(element("span", "rank", rank), element("span", "suit", SUITS[suit] || suit));
    face.dataset.card = text;
    face.title = text;
    return face;
  }

  // options.onCard(text, index, node): makes the first hand's cards (the seat's own) clickable;
  // options.selected: indexes of that hand's cards drawn as selected.
  function scene(data, options) {
    options = options || {};
    const root = element("div", "scene");
    root.append(element("div", "title", data.title));
    data.hands.forEach((hand, seat) => {
      const box = element("div", "hand" + (hand.to_move ? " to-move" : ""));
      box.dataset.seat = String(seat);
      box.append(element("div", "label", `${hand.label} (${hand.count} cards)${hand.to_move ? " \u2190 to move" : ""}`));
      const cards = element("div", "cards");
      const faces = hand.cards === null ? Array(hand.count).fill(null) : hand.cards;
      faces.forEach((text, index) => {
        const node = card(text);
        if (options.onCard && seat === options.ownHand && text !== null) {
          node.classList.add("selectable");
          if (options.selected && options.selected.has(index)) node.classList.add("selected");
          node.addEventListener("click", () => options.onCard(text, index, node));
        }
        cards.append(node);
      });
      box.append(cards);
      root.append(box);
    });
    for (const row of data.rows) {
      const line = element("div", "row");
      line.append(element("div", "label", row.label));
      const cards = element("div", "cards");
      for (const group of row.groups) {
        const set = element("span", "group");
        group.forEach((text) => set.append(card(text)));
        cards.append(set);
      }
      if (row.hidden) {
        cards.append(card(null), element("span", "hidden-count", `${row.hidden} face down`));
      }
      line.append(cards);
      root.append(line);
    }
    root.append(element("div", "lines", data.lines.join("\n")));
    return root;
  }

  return { card, scene, element };
})();
