// The big screen of a table: the public view, its rotation, its last coups and its roads,
// refetched whenever the live stream says the table changed; the latest events in words.
"use strict";

(() => {
  const { el, api, side, money } = Sabot;
  const table = Sabot.tableParam();
  const path = `/tables/${encodeURIComponent(table)}`;
  const setClock = Sabot.clock(document.getElementById("clock"));
  const known = Sabot.feed();


  function byId(id) {
    return document.getElementById(id);
  }

  function renderHands(view, coups) {
    const hands = byId("hands");
    if (view.coup) {
      hands.replaceChildren(...Sabot.coupHands(view));
      hands.classList.remove("past");
      hands.classList.toggle("three", view.coup.hands.length > 2);
      return;
    }
    const last = coups[coups.length - 1];
    if (!last) {
      hands.replaceChildren();
      return;
    }
    const sides = {};
    for (const line of last.cards) (sides[line.side] = sides[line.side] || []).push(line.card);
    hands.replaceChildren(el("p", `last coup (${last.coup})`, "caption"),
      ...Object.entries(sides).map(([s, cards]) => Sabot.handBox(
        { side: s, cards, point: last.points[s] }, s === "banker" ? null : last.outcomes[s])));
    hands.classList.add("past");
    hands.classList.toggle("three", Object.keys(sides).length > 2);
  }

  function renderBets(view) {
    const items = [];
    for (const b of view.bets) items.push(el("li", `${b.player} · ${money(b.amount)} on ${side(b.spot)}`));
    for (const s of known.stakes(view)) {
      const cover = s.cover;
      const item = el("li", `${s.player} · ${money(s.amount)} on the ${side(s.tableau)}`);
      if (cover) item.append(" ", el("span", cover, `tag ${cover}`));
      items.push(item);
    }
    if (view.banker) items.unshift(el("li", `bank: ${view.banker} · ${money(view.bank)}`, "bank"));
    if (!items.length) items.push(el("li", view.phase === "betting" ? "no bets yet" : "nothing on the table", "empty"));
    byId("bets").replaceChildren(...items);
  }

  function renderSeats(view) {
    const staked = {};
    for (const b of [...view.bets, ...view.stakes]) staked[b.player] = (staked[b.player] || 0) + b.amount;
    byId("seats").tBodies[0].replaceChildren(...Sabot.seatRows(
      view, seat => [el("td", staked[seat.player] || "", "num")]));
  }

  function renderRotation(view, rotation) {
    const banked = !view.settings.variant.match(/punto-banco|simplified/);
    byId("rotation-box").hidden = !banked;
    const items = [];
    if (rotation.banker) items.push(el("li", `${rotation.banker} holds the shoe · bank ${money(rotation.bank)}`, "holder"));
    for (const player of rotation.order) {
      items.push(el("li", player === rotation.banco_suivi ? `${player} (banco suivi)` : player,
                    player === rotation.offered_to ? "holder" : ""));
    }
    byId("rotation").replaceChildren(...items);
  }

  function renderCoups(coups) {
    const shown = coups.length && Object.keys(coups[0].outcomes).length > 1 ? 3 : 4;
    byId("coups").tBodies[0].replaceChildren(...coups.slice(-shown).reverse().map(coup => {
      const sides = {};
      for (const line of coup.cards) (sides[line.side] = sides[line.side] || []).push(Sabot.cardText(line.card));
      const row = el("tr", null, "coup");
      row.append(el("td", coup.coup, "num"), el("td", Sabot.outcomeWords(coup), "result"),
                 el("td", Object.entries(sides).map(([s, c]) => `${s} ${c.join(" ")}`).join(" | "), "cards"));
      return row;
    }));
  }

  function render(view, rotation, coups, roads) {
    document.title = `${view.name} · Sabot`;
    byId("name").textContent = view.name;
    byId("variant").textContent = view.settings.variant;
    byId("coup").textContent = view.coup_number;
    byId("taille").textContent = view.taille;
    byId("shoe").textContent = view.shoe
      ? `${view.shoe.remaining} left${view.shoe.last_coup ? " · last coup" : ""}` : "–";
    byId("bank").textContent = view.banker ? `${view.banker} ${money(view.bank)}` : "house";
    byId("phase").textContent = Sabot.phase(view);
    renderHands(view, coups);
    renderBets(view);
    renderSeats(view);
    renderRotation(view, rotation);
    renderCoups(coups);
    Roads.render(byId("roads"), roads);
    setClock(view, known.lastEventAt);
  }

  async function refresh() {
    const [view, rotation, coups, roads] = await Promise.all(
      [api(path), api(`${path}/rotation`), api(`${path}/recall?last=5`), api(`${path}/roads`)]);
    render(view, rotation, coups, roads);
    return view;
  }

  async function start() {
    if (!table) {
      byId("pick").hidden = false;
      Sabot.status("choose a table", "");
      return;
    }
    Sabot.live(table, refresh, known, byId("log"), 6);
  }

  start();
})();
