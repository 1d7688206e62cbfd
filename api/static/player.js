// The player's view: what the API shows this player (their own face-down cards included) and
// the steps the API allows them now, as buttons and a bet form with the table's limits.
"use strict";

(() => {
  const { el, api, side, money } = Sabot;
  const table = Sabot.tableParam();
  const path = `/tables/${encodeURIComponent(table)}`;
  const setClock = Sabot.clock(document.getElementById("clock"));
  const known = Sabot.feed();
  const byId = id => document.getElementById(id);
  let me = null;
  let view = null;
  let rotation = null;

  const randomHex = bytes => [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map(b => b.toString(16).padStart(2, "0")).join("");
  const houseBanked = () => /punto-banco|simplified/.test(view.settings.variant);

  async function send(kind, fields) {
    try {
      await Sabot.command(table, kind, { player: me, ...fields });
      byId("error").textContent = "";
    } catch (error) {
      byId("error").textContent = error.message;
    }
    await refresh();
  }

  function button(text, onClick, cls) {
    const node = el("button", text, cls || "");
    node.type = "button";
    node.addEventListener("click", onClick);
    return node;
  }

  // The steps this player may take now, from the API's legal actions.
  function actions() {
    const mine = view.legal_actions.filter(a => a.actor === me || a.actor === null);
    const nodes = [];
    for (const a of mine) {
      switch (a.step) {
        case "banco": {
          const suivi = rotation && rotation.banco_suivi === me;
          nodes.push(button(`${suivi ? "Banco suivi" : "Banco"}: cover the bank of ${money(view.bank)}`,
                            () => send("banco", {})));
          break;
        }
        case "take-bank":
          nodes.push(button(`Take the bank (${money(view.settings.min_stake)} or more)`, () => {
            const amount = Number(byId("amount").value) || view.settings.min_stake;
            send("award-bank", { amount, how: "taken" });
          }));
          break;
        case "decline-bank": nodes.push(button("Decline the bank", () => send("decline-bank", {}), "secondary")); break;
        case "pass-bet": nodes.push(button("Pass (no bet this coup)", () => send("pass-bet", {}), "secondary")); break;
        case "retire-bank": nodes.push(button("Retire the bank", () => send("retire-bank", {}), "secondary")); break;
        case "contribute":
          nodes.push(button("Add to the shuffle", () => send("contribute", { entropy: randomHex(16) }),
                            "secondary"));
          break;
        case "cut": nodes.push(button("Cut the shoe", () => send("cut", { position: 60 }))); break;
        case "offer": case "show-down": {  // the banker's word, à deux tableaux
          const text = a.step === "offer" ? "Give a card (« je donne »)" : "Show down";
          nodes.push(button(text, () => Sabot.command(table, Sabot.COMMANDS[a.step] || a.step, {})
            .then(refresh, e => { byId("error").textContent = e.message; })));
          break;
        }
        case "draw": case "stand": {
          const forced = a.forced ? " (the tableau says so)" : "";
          nodes.push(button(`${a.step === "draw" ? "Draw" : "Stand"}${forced}`, () => {
            const fields = { side: a.side, draw: a.step === "draw" };
            Sabot.command(table, "decide", fields).then(refresh, e => { byId("error").textContent = e.message; });
          }));
          break;
        }
        default: break;
      }
    }
    return nodes;
  }

  function renderBetForm() {
    const spots = houseBanked() ? ["punter", "banker", "tie"]
      : view.settings.variant === "deux-tableaux" ? ["right", "left"] : ["punter"];
    const select = byId("spot");
    if (select.dataset.spots !== spots.join()) {
      select.dataset.spots = spots.join();
      select.replaceChildren(...spots.map(s => el("option", side(s), null, { value: s })));
    }
    const open = view.legal_actions.some(a => (a.step === "bet" || a.step === "stake") &&
      (a.actor === null || a.actor === me)) && me !== view.banker;  // in turn, where bets are
    byId("place").disabled = !open;
    byId("place").textContent = houseBanked() ? "Place bet" : "Stake";
    const seat = view.seats.find(s => s.player === me);
    const max = view.settings.max_stake ? money(view.settings.max_stake) : "no maximum";
    byId("limits").textContent = `limits: ${money(view.settings.min_stake)} to ${max}` +
      (seat ? ` · you have ${money(seat.chips)}` : "") + (open ? "" : " · bets are closed");
    byId("amount").min = String(view.settings.min_stake);
    if (view.settings.max_stake) byId("amount").max = String(view.settings.max_stake);
  }

  function render() {
    document.title = `${view.name} · ${me} · Sabot`;
    byId("name").textContent = `${view.name} · ${me}`;
    byId("who").textContent = `${view.settings.variant} · coup ${view.coup_number}`;
    const seat = view.seats.find(s => s.player === me);
    const bets = [...view.bets, ...known.stakes(view)].filter(b => b.player === me);
    byId("chips").textContent = seat ? money(seat.chips) : "not seated";
    byId("staked").textContent = money(bets.reduce((n, b) => n + b.amount, 0));
    byId("bank").textContent = view.banker === me ? `yours: ${money(view.bank)}`
      : view.banker ? `${view.banker} ${money(view.bank)}` : "house";
    byId("phase").textContent = view.bank_offered_to === me && view.phase === "no-bank"
      ? "The bank is offered to you" : Sabot.phase(view);
    const held = view.coup ? view.coup.hands.filter(h => h.holder === me) : [];
    byId("mine").replaceChildren(...held.map(h => Sabot.handBox(h, null, "your hand")));
    byId("actions").replaceChildren(...actions());
    renderBetForm();
    byId("bets").replaceChildren(...bets.map(b => {
      const cover = b.cover;
      const item = el("li", `${money(b.amount)} on the ${side(b.spot || b.tableau)}`);
      if (cover) item.append(" ", el("span", cover, `tag ${cover}`));
      return item;
    }));
    byId("hands").replaceChildren(...Sabot.coupHands(view));
    byId("seats").tBodies[0].replaceChildren(...Sabot.seatRows(view));
    setClock({ ...view, legal_actions: view.legal_actions.filter(a => a.actor === me) },
             known.lastEventAt);
  }

  // The tournament this table plays for (if any), found once among the tournaments' tables,
  // this player's place in its standings, and the secret bet where its stage allows one.
  let tournament;
  const tournamentPath = () => `/tournaments/${encodeURIComponent(tournament)}`;
  async function position() {
    if (tournament === undefined) {
      tournament = null;
      const all = await api("/tournaments").catch(() => []);
      for (const t of all.filter(t => t.status !== "finished")) {
        const shown = await api(`/tournaments/${encodeURIComponent(t.name)}`);
        if (shown.tables.some(line => line.name === view.name)) tournament = t.name;
      }
    }
    if (!tournament) return;
    const [rows, shown] = await Promise.all([api(`${tournamentPath()}/standings`), api(tournamentPath())]);
    const mine = rows.find(r => r.player === me);
    byId("position-box").hidden = !mine;
    if (mine) byId("position").textContent = `${mine.rank} of ${rows.length} · ${tournament}`;
    renderSecret(shown);
  }

  // The secret bet: the page draws the nonce and sends only the commitment (SHA-256 of
  // `sabot-secret-bet-v1/<spot>/<amount>/<nonce>`, as domain.tournament.state.secret_commitment);
  // the spot, amount and nonce stay in this tab's session storage until the reveal.
  const secretKey = () => `sabot.secret.${tournament}.${me}`;
  const keptSecret = () => JSON.parse(sessionStorage.getItem(secretKey()) || "null");

  function renderSecret(shown) {
    const kept = keptSecret();
    byId("secret-panel").hidden = !shown.secret_bet && !kept;
    byId("secret-place").disabled = Boolean(kept) || shown.status !== "running";
    byId("secret-reveal").hidden = !kept;
    byId("secret-amount").min = String(shown.min_stake);
    byId("secret-amount").max = String(shown.max_stake);
    if (kept) byId("secret-state").textContent = `Placed on coup ${kept.coup}: ${money(kept.amount)} on the ` +
      `${kept.spot} (fingerprint ${kept.commitment.slice(0, 16)}…). Reveal it once the coup is dealt.`;
  }

  async function secretStep(step) {
    try {
      await step();
      byId("secret-error").textContent = "";
    } catch (error) {
      byId("secret-error").textContent = error.message;
    }
    await refresh();
  }

  async function refresh() {
    [view, rotation] = await Promise.all([api(path), api(`${path}/rotation`)]);
    render();
    await position();
    return view;
  }

  byId("bet").addEventListener("submit", event => {
    event.preventDefault();
    const amount = Number(byId("amount").value);
    const on = byId("spot").value;
    if (houseBanked()) send("bet", { spot: on, amount });
    else send("stake", { tableau: on, amount });
  });

  byId("secret").addEventListener("submit", event => {
    event.preventDefault();
    const spot = byId("secret-spot").value;
    const amount = Number(byId("secret-amount").value);
    const nonce = randomHex(16);
    const commitment = Sha256.hex(`sabot-secret-bet-v1/${spot}/${amount}/${nonce}`);
    secretStep(async () => {
      await api(`${tournamentPath()}/secret-bets`, { commitment });
      sessionStorage.setItem(secretKey(), JSON.stringify(
        { spot, amount, nonce, commitment, coup: view.coup_number + 1 }));
    });
  });
  byId("secret-reveal").addEventListener("click", () => secretStep(async () => {
    const kept = keptSecret();
    const answer = await api(`${tournamentPath()}/secret-bets/reveal`,
                             { spot: kept.spot, amount: kept.amount, nonce: kept.nonce });
    sessionStorage.removeItem(secretKey());
    const paid = (answer.events || []).find(e => "delta" in e);
    const result = !paid ? "paid at the table" : paid.delta > 0 ? `won ${money(paid.delta)}`
      : paid.delta < 0 ? `lost ${money(-paid.delta)}` : "a push";
    byId("secret-state").textContent = `Revealed: ${money(kept.amount)} on the ${kept.spot}, ${result}.`;
  }));

  async function start() {
    if (!table) {
      Sabot.status("no table: open /player?table=NAME", "down");
      return;
    }
    Sabot.live(table, async () => {
      if (me === null) {
        const caller = await api("/me");
        if (caller.role !== "player") throw new Error("sign in with a player's token (from the lobby)");
        me = caller.player;
      }
      return refresh();
    }, known, byId("log"), 8);
  }

  start();
})();
