// The croupier's console: the table's legal steps as buttons (the API says which), a physical
// shoe's cards picked by rank and suit, and, before a card is confirmed, what the tableau will
// then require (POST /tables/{table}/tableau, with the cards this console dealt: the API shows a
// croupier no face-down card, but the croupier who dealt it knows it). The cards dealt are kept
// in the tab's session storage, per coup; the "physical shoe" choice in local storage, per
// table. A step's button is disabled while it is in flight and sends one command id
// (`Sabot.guarded`); ending the shoe asks first, and sits apart from the other steps. At a
// tournament's table a seat's step (a person's or a house bot's decision) is not the croupier's:
// the console names whom the table waits for. While the tournament is paused the console says so
// and offers no step; once the table has played its round's last coup it says so (the view then
// offers nothing that would put chips on a coup).
"use strict";

(() => {
  const { el, api, side, money, cardText, t } = Sabot;
  const table = Sabot.tableParam();
  const path = `/tables/${encodeURIComponent(table)}`;
  const setClock = Sabot.clock(document.getElementById("clock"));
  const known = Sabot.feed();
  const RANKS = "A23456789TJQK";
  const PLAYERS_STEPS = new Set(["contribute", "bet", "pass-bet", "stake", "banco", "take-bank",
                                 "decline-bank", "retire-bank"]);
  const PHASES = {
    "no-shoe": "No shoe: shuffle a new one", shuffled: "Shuffled: the shoe is to be cut",
    burning: "Burn the cards", "no-bank": "The bank is to be given",
    betting: "Bets are open", playing: "The coup is being dealt",
    settled: "Settled: pay the coup", "taille-over": "The shoe is finished: reveal its seed",
  };
  const PHYSICAL_KEY = `sabot.physical.${table}`;  // "true"/"false", this table's last choice
  const SET_APART = new Set(["end-taille"]);  // destructive: apart, and asked for first
  let view = null;
  let inTournament = false;  // a tournament's table: its seats decide for themselves
  let look = null;  // the tableau's look-ahead for the coup (with the chosen card, if any)

  const byId = id => document.getElementById(id);

  function label(step, s, card) {
    const to = s ? ` for the ${side(s)}` : "";
    switch (step) {
      case "shuffle": return "Shuffle a new shoe";
      case "cut": return "Cut the shoe";
      case "burn": return card ? `Burn ${cardText(card)}` : "Burn a card";
      case "award-bank": return "Give the bank";
      case "close-betting": return "Close betting";
      case "deal": return `Deal ${card ? cardText(card) + " " : ""}to the ${side(s)}`;
      case "show-naturals": return "Turn over the naturals";
      case "draw": return `Draw${to}`;
      case "stand": return `Stand${to}`;
      case "settle": return "Settle the coup";
      case "pay": return "Pay the coup";
      case "reveal-seed": return "Reveal the shoe's seed";
      case "end-taille": return "End the shoe now";
      case "offer": return "The banker gives a card (« je donne »)";
      case "show-down": return "The banker shows down";
      default: return step;
    }
  }

  // --- the cards this console dealt in the current coup --------------------------------

  const dealtKey = () => `sabot.dealt.${table}.${view.taille}.${view.coup_number}`;
  const dealt = () => JSON.parse(sessionStorage.getItem(dealtKey()) || "{}");

  function remember(s, card) {
    const cards = dealt();
    (cards[s] = cards[s] || []).push(card);
    sessionStorage.setItem(dealtKey(), JSON.stringify(cards));
  }

  function buildPicker() {
    const ranks = byId("ranks");
    for (const r of RANKS) {
      const input = el("input", null, null, { type: "radio", name: "rank", value: r });
      const name = r === "T" ? "10" : r;
      const item = el("label", null, null, { title: `rank ${name}` });
      item.append(input, el("span", name));
      ranks.append(item);
    }
    const suits = byId("suits");
    for (const [code, symbol] of Object.entries(Sabot.SUITS)) {
      const input = el("input", null, null, { type: "radio", name: "suit", value: code,
                                               "aria-label": Sabot.SUIT_NAMES[code] });
      const item = el("label", null, null, { title: Sabot.SUIT_NAMES[code] });
      item.append(input, el("span", symbol, "hd".includes(code) ? "red" : ""));
      suits.append(item);
    }
    byId("card-entry").addEventListener("change", () => lookAhead().then(render));
  }

  function chosen() {
    const rank = document.querySelector("input[name=rank]:checked");
    const suit = document.querySelector("input[name=suit]:checked");
    return rank && suit ? rank.value + suit.value : null;
  }

  function clearCard() {
    for (const input of document.querySelectorAll("#card-entry input")) input.checked = false;
  }

  // --- the tableau ----------------------------------------------------------------------

  async function lookAhead() {
    look = null;
    if (!view || view.phase !== "playing" || !view.shoe || !view.shoe.physical) return;
    try {
      look = await api(`${path}/tableau`, { known: dealt(), card: chosen() });
    } catch (error) {
      byId("preview").textContent = error.message;
    }
  }

  function rule(next) {
    const decisions = next.filter(a => a.step === "draw" || a.step === "stand");
    if (!decisions.length) {
      if (next.some(a => a.step === "settle")) return "then every card is out: settle the coup";
      const deal = next.find(a => a.step === "deal");
      return deal ? `next card to the ${side(deal.side)}` : "";
    }
    const hand = decisions[0].side;
    const point = look && look.points[hand];
    const on = point === null || point === undefined ? "" : ` on ${point}`;
    if (decisions.length > 1) return `the ${side(hand)}${on} may draw or stand`;
    return `the tableau: the ${side(hand)}${on} must ${decisions[0].step}`;
  }

  function renderTableau() {
    const preview = byId("preview");
    const tableau = byId("tableau");
    const card = chosen();
    preview.textContent = "";
    tableau.hidden = true;
    if (!look) return;
    if (card && look.side) {
      const points = Object.entries(look.points).filter(([, p]) => p !== null)
        .map(([s, p]) => `${side(s)} ${p}`).join(", ");
      const naturals = look.naturals.length ? `; natural for the ${look.naturals.map(side).join(" and ")}` : "";
      preview.textContent = `${cardText(card)} goes to the ${side(look.side)} (${points}${naturals}); ${rule(look.next)}`;
    } else if (!card && look.next.some(a => a.step === "draw" || a.step === "stand")) {
      tableau.hidden = false;
      tableau.textContent = rule(look.next);
    }
  }

  // --- the steps ------------------------------------------------------------------------

  // Whether a legal action is the croupier's to take: the table's own steps, and at a table
  // outside any tournament a seat's too (its croupier acts for anyone there).
  const croupiers = a => a.actor === null ? !PLAYERS_STEPS.has(a.step)
    : a.actor.startsWith("@") || !(inTournament || PLAYERS_STEPS.has(a.step));

  function steps() {
    const physical = view.shoe && view.shoe.physical;
    if (Sabot.pause.paused) return [];
    let shown = view.legal_actions.filter(a => croupiers(a) && !SET_APART.has(a.step));
    const decide = shown.find(a => a.step === "decide");
    if (decide) {
      const told = look && !chosen() ? look.next.filter(a => a.step === "draw" || a.step === "stand") : [];
      const choices = told.length ? told : [{ step: "draw", side: decide.side }, { step: "stand", side: decide.side }];
      shown = shown.filter(a => a.step !== "decide").concat(choices);
    }
    return shown.map(a => {
      const needsCard = physical && (a.step === "deal" || a.step === "burn");
      const button = el("button", label(a.step, a.side, needsCard ? chosen() : null),
                        a.forced ? "forced" : "");
      button.disabled = needsCard && !chosen();
      const sendOnce = Sabot.guarded(button, key => act(a, key));
      button.addEventListener("click", () => sendOnce().catch(() => {}));
      return button;
    });
  }

  // The steps that cannot be undone, apart from the others, each confirmed in a dialog first.
  function apart() {
    if (Sabot.pause.paused) return [];
    return view.legal_actions.filter(a => SET_APART.has(a.step)).map(a => {
      const button = el("button", label(a.step), "secondary danger");
      const sendOnce = Sabot.guarded(button, key => act(a, key));
      button.addEventListener("click", () => {
        if (!confirm("End the shoe now? No more coups are dealt from it; this cannot be undone.")) return;
        sendOnce().catch(() => {});
      });
      return button;
    });
  }

  function options() {
    const wanted = new Set(view.legal_actions.map(a => a.step));
    const nodes = [];
    const players = () => {
      const select = el("select");
      for (const seat of view.seats) select.append(el("option", seat.player, null, { value: seat.player }));
      return select;
    };
    const field = (text, control, id) => {
      control.id = id;
      const item = el("label", text);
      item.append(control);
      return item;
    };
    if (wanted.has("shuffle")) {
      const box = el("input", null, null, { type: "checkbox", id: "physical" });
      box.checked = localStorage.getItem(PHYSICAL_KEY) !== "false";  // physical unless unticked here
      box.addEventListener("change", () => localStorage.setItem(PHYSICAL_KEY, String(box.checked)));
      const item = el("label", null, "inline");
      item.append(box, document.createTextNode(" physical shoe (cards entered by hand)"));
      nodes.push(item);
    }
    if (wanted.has("cut")) {
      nodes.push(field("cut by", players(), "cut-player"));
      nodes.push(field("cut at card", el("input", null, null, { type: "number", min: "1", value: "100" }), "cut-position"));
    }
    if (wanted.has("award-bank")) {
      nodes.push(field("bank to", players(), "bank-player"));
      nodes.push(field("bank of", el("input", null, null, { type: "number", min: "1", value: "100" }), "bank-amount"));
    }
    return nodes;
  }

  async function act(a, key) {
    const card = chosen();
    const physical = view.shoe && view.shoe.physical;
    const value = id => byId(id).value;
    const bodies = {
      shuffle: () => ["shuffle", { physical: byId("physical").checked }],
      cut: () => ["cut", { player: value("cut-player"), position: Number(value("cut-position")) }],
      burn: () => ["burn", physical ? { card } : {}],
      deal: () => ["deal", physical ? { card } : {}],
      draw: () => ["decide", { side: a.side, draw: true }],
      stand: () => ["decide", { side: a.side, draw: false }],
      "award-bank": () => ["award-bank", { player: value("bank-player"),
                                           amount: Number(value("bank-amount")), how: "auction" }],
    };
    const [kind, fields] = (bodies[a.step] || (() => [Sabot.COMMANDS[a.step] || a.step, {}]))();
    try {
      const done = await Sabot.command(table, kind, fields, key);
      byId("error").textContent = "";
      if (kind === "deal" && physical) {
        const given = done.events.find(e => e.type === "CardDealt" || e.type === "ThirdCardDrawn");
        if (given) remember(given.side, card);
      }
      if (kind === "deal" || kind === "burn") clearCard();
    } catch (error) {
      byId("error").textContent = error.message;
    }
    await refresh();
  }

  // --- the page -------------------------------------------------------------------------

  function render() {
    document.title = `${view.name} · croupier · Sabot`;
    byId("name").textContent = `${view.name} · croupier`;
    byId("screen-link").href = `/screen?table=${encodeURIComponent(view.name)}`;
    byId("who").textContent = `${view.settings.variant} · coup ${view.coup_number} · signed in as ${view.viewer}`;
    byId("phase").textContent = Sabot.pause.paused ? t("croupier.paused")
      : view.round_over ? t("phase.round-over") : PHASES[view.phase] || view.phase;
    pausedShown = Sabot.pause.paused;
    byId("phase").dataset.state = Sabot.pause.paused ? "paused" : view.round_over ? "round-over" : "";
    const physical = view.shoe && view.shoe.physical;
    byId("card-entry").hidden = !(physical && view.legal_actions.some(a => a.step === "deal" || a.step === "burn"));
    renderTableau();
    const wanted = view.legal_actions.map(a => a.step).join();
    if (byId("options").dataset.steps !== wanted) {  // keep what was typed while the steps stay
      byId("options").dataset.steps = wanted;
      byId("options").replaceChildren(...options());
    }
    const waiting = view.legal_actions.filter(a => !croupiers(a) && !SET_APART.has(a.step))
      .map(a => a.actor ? t("croupier.awaits", { player: a.actor, step: a.step }) : a.step);
    const buttons = steps();
    if (waiting.length && !Sabot.pause.paused) {
      buttons.push(el("p", t("croupier.players-may", { steps: [...new Set(waiting)].join(", ") }), "limits"));
    }
    const shown = JSON.stringify(view.legal_actions);
    Sabot.showChanged(byId("steps"), buttons, shown);
    Sabot.showChanged(byId("apart"), apart(), shown);
    byId("hands").replaceChildren(...Sabot.coupHands(view));
    const mine = Object.entries(dealt()).map(([s, cards]) => `${side(s)}: ${cards.map(cardText).join(" ")}`);
    if (mine.length) byId("hands").append(el("p", `you dealt ${mine.join("; ")}`, "limits"));
    const rows = [
      ...view.bets.map(b => [b.player, side(b.spot), b.amount, "house"]),
      ...known.stakes(view).map(s => [s.player, side(s.tableau), s.amount, s.cover || "not yet"]),
    ];
    byId("bets").tBodies[0].replaceChildren(...rows.map(([player, on, amount, cover]) => {
      const row = el("tr");
      row.append(el("td", player), el("td", on), el("td", money(amount), "num"), el("td", cover));
      return row;
    }));
    byId("seats").tBodies[0].replaceChildren(...Sabot.seatRows(view));
    setClock(view);
  }

  async function refresh() {
    view = await api(path);
    await lookAhead();
    render();
    return view;
  }

  let pausedShown = null;  // whether the console shows the tournament paused (null: not yet)
  Sabot.onTournament(() => {  // read every second: this table's tournament, paused or not
    inTournament = true;
    if (view && Sabot.pause.paused !== pausedShown) render();
  });

  async function start() {
    buildPicker();
    if (!table) {
      Sabot.status("no table: open /croupier?table=NAME", "down");
      return;
    }
    Sabot.live(table, refresh, known, byId("log"), 8);
  }

  start();
})();
