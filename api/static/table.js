// The table display: fetch the public view, the rotation and the last coups, then refetch them
// whenever the live stream says the table changed. Every text from the server goes in through
// textContent (never HTML).
"use strict";

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
const params = new URLSearchParams(location.search);
const table = params.get("table");

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function cardText(code) {
  return (code[0] === "T" ? "10" : code[0]) + (SUITS[code[1]] || code[1]);
}

function cardNode(code) {
  if (code === null) return el("div", "", "card down");
  return el("div", cardText(code), "card" + ("hd".includes(code[1]) ? " red" : ""));
}

function renderRotation(rotation) {
  const items = [];
  if (rotation.banker) {
    items.push(el("li", `${rotation.banker} holds the shoe · bank ${rotation.bank}`, "holder"));
  }
  for (const player of rotation.order) {
    items.push(el("li", player === rotation.banco_suivi ? `${player} (banco suivi)` : player,
                  player === rotation.offered_to ? "holder" : ""));
  }
  document.getElementById("rotation").replaceChildren(...items);
}

function renderCoups(coups) {
  const body = document.querySelector("#coups tbody");
  body.replaceChildren(...coups.slice().reverse().map(coup => {
    const result = Object.entries(coup.outcomes).map(([side, outcome]) => {
      const winner = outcome === "punter" ? side : outcome;
      const score = `${side === "punter" ? "" : side + " "}${coup.points[side]}–${coup.points.banker}`;
      return `${score} ${winner === "tie" ? "tie" : winner + " wins"}`;
    }).join("; ");
    const sides = {};
    for (const line of coup.cards) {
      (sides[line.side] = sides[line.side] || []).push(cardText(line.card));
    }
    const cards = Object.entries(sides).map(([side, codes]) => `${side} ${codes.join(" ")}`);
    const row = el("tr", null, "coup");
    row.append(el("td", coup.coup, "num"), el("td", result, "result"),
               el("td", cards.join(" | "), "cards"));
    return row;
  }));
}

function render(view) {
  document.title = `${view.name} · Sabot`;
  document.getElementById("name").textContent = view.name;
  document.getElementById("variant").textContent = view.settings.variant;
  document.getElementById("phase").textContent = view.phase;
  document.getElementById("coup").textContent = view.coup_number;
  document.getElementById("taille").textContent = view.taille;
  document.getElementById("bank").textContent =
    view.banker ? `${view.banker}: ${view.bank}` : (view.bank || "house");
  document.getElementById("shoe").textContent =
    view.shoe ? `${view.shoe.remaining} left${view.shoe.last_coup ? " · last coup" : ""}` : "–";

  const hands = document.getElementById("hands");
  hands.replaceChildren();
  for (const hand of view.coup ? view.coup.hands : []) {
    const box = el("div", null, "hand");
    const title = el("h3", hand.holder ? `${hand.side} · ${hand.holder}` : hand.side);
    if (hand.point !== null) title.append(el("span", hand.point, "point"));
    const outcome = view.coup.outcomes && view.coup.outcomes[hand.side];
    if (outcome) title.append(el("span", `${outcome} wins`.replace("tie wins", "tie"), "outcome"));
    const cards = el("div", null, "cards");
    cards.append(...hand.cards.map(cardNode));
    box.append(title, cards);
    hands.append(box);
  }

  const staked = {};
  for (const b of [...view.bets, ...view.stakes]) staked[b.player] = (staked[b.player] || 0) + b.amount;
  const body = document.querySelector("#seats tbody");
  body.replaceChildren();
  for (const seat of view.seats) {
    const row = el("tr", null, seat.player === view.banker ? "banker" : "");
    row.append(el("td", seat.player), el("td", seat.chips, "num"),
               el("td", staked[seat.player] || "", "num"));
    body.append(row);
  }

  const actions = document.getElementById("actions");
  actions.replaceChildren(...view.legal_actions.map(a =>
    el("li", [a.step, a.side, a.actor ? `(${a.actor})` : "(any player)"].filter(Boolean).join(" "))));
}

function logEvent(event) {
  const log = document.getElementById("log");
  const what = [event.type, event.player, event.side, event.card, event.amount]
    .filter(x => x !== undefined && x !== null).join(" ");
  log.prepend(el("li", what));
  while (log.children.length > 8) log.lastChild.remove();
}

async function getJson(path) {
  const response = await fetch(`/tables/${encodeURIComponent(table)}${path}`);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

async function refresh() {
  const [view, rotation, coups] =
    await Promise.all([getJson(""), getJson("/rotation"), getJson("/recall?last=5")]);
  render(view);
  renderRotation(rotation);
  renderCoups(coups);
}

function setStatus(text, cls) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = "status " + cls;
}

async function start() {
  if (!table) {
    document.getElementById("pick").hidden = false;
    setStatus("choose a table", "");
    return;
  }
  try {
    await refresh();
  } catch (error) {
    setStatus(error.message, "down");
    return;
  }
  const stream = new EventSource(`/tables/${encodeURIComponent(table)}/events`);
  let pending = null;
  stream.onopen = () => setStatus("live", "live");
  stream.onerror = () => setStatus("reconnecting…", "down");
  stream.onmessage = message => {
    logEvent(JSON.parse(message.data));
    clearTimeout(pending);  // a burst of events (a payout run) is one refetch
    pending = setTimeout(() => refresh().catch(e => setStatus(e.message, "down")), 50);
  };
}

start();
