// The big screen of a table: the public view, its rotation, its last coups and its roads,
// refetched whenever the live stream says the table changed; the latest events in words; at a
// tournament's table, the round (its clock or coups left, the last coup, a break).
"use strict";

(() => {
  const { el, api, side, money, t } = Sabot;
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
    hands.replaceChildren(el("p", t("screen.last-coup", { coup: last.coup }), "caption"),
      ...Object.entries(sides).map(([s, cards]) => Sabot.handBox(
        { side: s, cards, point: last.points[s] }, s === "banker" ? null : last.outcomes[s])));
    hands.classList.add("past");
    hands.classList.toggle("three", Object.keys(sides).length > 2);
  }

  function renderBets(view) {
    const items = [];
    for (const b of view.bets) {
      items.push(el("li", t("screen.bet", { player: b.player, amount: money(b.amount), side: side(b.spot) })));
    }
    for (const s of known.stakes(view)) {
      const cover = s.cover;
      const item = el("li", t("screen.stake", { player: s.player, amount: money(s.amount),
                                                the: Sabot.theSide(s.tableau) }));
      if (cover) item.append(" ", el("span", Sabot.cover(cover), `tag ${cover}`));
      items.push(item);
    }
    if (view.banker) items.unshift(el("li", t("screen.bank", { player: view.banker, amount: money(view.bank) }), "bank"));
    if (!items.length) items.push(el("li", t(view.phase === "betting" ? "screen.no-bets" : "screen.nothing"), "empty"));
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
    if (rotation.banker) {
      items.push(el("li", t("screen.holder", { player: rotation.banker, amount: money(rotation.bank) }), "holder"));
    }
    for (const player of rotation.order) {
      items.push(el("li", player === rotation.banco_suivi ? t("screen.banco-suivi", { player }) : player,
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
                 el("td", Object.entries(sides).map(([s, c]) => `${Sabot.shortSide(s)} ${c.join(" ")}`).join(" | "), "cards"));
      return row;
    }));
  }

  function render(view, rotation, coups, roads) {
    document.title = `${view.name} · Sabot`;
    byId("name").textContent = view.name;
    byId("variant").textContent = view.settings.variant;
    byId("coup").textContent = view.coup_number;
    byId("taille").textContent = view.taille;
    byId("shoe").textContent = !view.shoe ? "–" : [t("screen.cards-left", { count: view.shoe.remaining }),
      ...(view.shoe.last_coup ? [t("screen.shoe-last-coup")] : [])].join(" · ");
    byId("bank").textContent = view.banker ? `${view.banker} ${money(view.bank)}` : t("bank.house");
    byId("phase").textContent = Sabot.phase(view);
    renderHands(view, coups);
    renderBets(view);
    renderSeats(view);
    renderRotation(view, rotation);
    renderCoups(coups);
    Roads.render(byId("roads"), roads);
    setClock(view);
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
      Sabot.status(t("screen.choose"), "");
      return;
    }
    Sabot.live(table, refresh, known, byId("log"), 6);
  }

  // The round of the tournament this table plays for, each time common.js reads it.
  let round = null;
  Sabot.onTournament(shown => {
    round = { shown, at: performance.now() };
    drawRound();
  });

  function drawRound() {
    if (!round) return;
    const { shown } = round;
    const gone = shown.status === "paused" ? 0 : (performance.now() - round.at) / 1000;
    const parts = [`${shown.stage} ${shown.round}`];
    if (shown.break_seconds_left !== null) {
      parts.push(t("clock.break-left", { time: Sabot.minutes(shown.break_seconds_left - gone) }));
    }
    if (shown.seconds_left !== null) parts.push(Sabot.minutes(shown.seconds_left - gone));
    if (shown.coups_left !== null) parts.push(shown.last_coup ? t("clock.last") : Sabot.coupsLeft(shown.coups_left));
    byId("round-box").hidden = false;
    byId("round-clock").textContent = parts.join(" · ");
    byId("round-clock").classList.toggle("urgent", shown.last_coup);
  }
  setInterval(drawRound, 250);

  start();
})();
