// The player's view: what the API shows this player (their own face-down cards included) and
// the steps the API allows them now, as buttons and a bet form with the table's limits; whose
// turn it is and the player's own clock; each step confirmed in words, or its refusal.
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
  let paused = false;  // the tournament of this table, if any, is paused
  const PAUSE_POLL_MS = 5000;  // the tournament's pause is read again this often

  const randomHex = bytes => [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map(b => b.toString(16).padStart(2, "0")).join("");
  const houseBanked = () => /punto-banco|simplified/.test(view.settings.variant);

  // What the page says once a step is recorded: the step in the player's words, else the
  // events the API answered, in words.
  function confirmation(kind, fields, done) {
    switch (kind) {
      case "bet": return `Bet placed: ${money(fields.amount)} on the ${side(fields.spot)}.`;
      case "stake": return `Stake placed: ${money(fields.amount)} on the ${side(fields.tableau)}.`;
      case "banco": return `Banco called: you cover the bank of ${money(view.bank)}.`;
      case "pass-bet": return "You pass this coup.";
      default: return (done.events || []).map(Sabot.words).join("; ") || "Done.";
    }
  }

  // Sends a step once (`Sabot.guarded`: the control disabled while in flight, one key and the
  // same fields until an answer comes), then says it is done or why it was refused, and reads
  // the table again. `step()` answers the command's kind and fields when it is first sent (a
  // form changed since is a new step).
  function sender(control, step) {
    let sent = null;
    const sendOnce = Sabot.guarded(control, key => Sabot.command(table, sent[0], sent[1], key));
    control.addEventListener("input", () => { if (!control.dataset.busy) sent = null; });
    return async () => {
      if (control.dataset.busy) return;
      sent = sent || step();
      try {
        const done = await sendOnce();
        byId("error").textContent = "";
        byId("notice").textContent = confirmation(sent[0], sent[1], done);
        sent = null;
      } catch (error) {
        byId("notice").textContent = "";
        byId("error").textContent = error.status ? `Refused: ${error.message}`
          : `Not sent (${error.message}): try again`;
        if (error.status) sent = null;
      }
      await refresh();
    };
  }

  function button(text, kind, fields, cls) {
    const node = el("button", text, cls || "");
    node.type = "button";
    node.addEventListener("click", sender(node, () => [kind, fields()]));
    return node;
  }

  // The steps this player may take now, from the API's legal actions.
  function actions() {
    const mine = view.legal_actions.filter(a => a.actor === me || a.actor === null);
    const nodes = [];
    for (const a of mine) {
      switch (a.step) {
        case "banco": {
          if (view.banco_calls.includes(me)) break;  // called already: the page says so
          const suivi = rotation && rotation.banco_suivi === me;
          nodes.push(button(`${suivi ? "Banco suivi" : "Banco"}: cover the bank of ${money(view.bank)}`,
                            "banco", () => ({ player: me })));
          break;
        }
        case "take-bank":
          nodes.push(button(`Take the bank (${money(view.settings.min_stake)} or more)`, "award-bank",
                            () => ({ player: me, amount: Number(byId("amount").value) || view.settings.min_stake,
                                     how: "taken" })));
          break;
        case "decline-bank": nodes.push(button("Decline the bank", "decline-bank", () => ({ player: me }), "secondary")); break;
        case "pass-bet": nodes.push(button("Pass (no bet this coup)", "pass-bet", () => ({ player: me }), "secondary")); break;
        case "retire-bank": nodes.push(button("Retire the bank", "retire-bank", () => ({ player: me }), "secondary")); break;
        case "contribute":
          nodes.push(button("Add to the shuffle", "contribute", () => ({ player: me, entropy: randomHex(16) }),
                            "secondary"));
          break;
        case "cut": nodes.push(button("Cut the shoe", "cut", () => ({ player: me, position: 60 }))); break;
        case "offer": case "show-down":  // the banker's word, à deux tableaux
          nodes.push(button(a.step === "offer" ? "Give a card (« je donne »)" : "Show down",
                            Sabot.COMMANDS[a.step] || a.step, () => ({})));
          break;
        case "draw": case "stand": {
          const forced = a.forced ? " (the tableau says so)" : "";
          nodes.push(button(`${a.step === "draw" ? "Draw" : "Stand"}${forced}`, "decide",
                            () => ({ side: a.side, draw: a.step === "draw" })));
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
    const open = !paused && view.legal_actions.some(a => (a.step === "bet" || a.step === "stake") &&
      (a.actor === null || a.actor === me)) && me !== view.banker &&
      !view.banco_calls.includes(me);  // in turn, where bets are; a banco is the whole stake
    byId("place").disabled = !open;
    byId("place").textContent = houseBanked() ? "Place bet" : "Stake";
    const seat = view.seats.find(s => s.player === me);
    const max = view.settings.max_stake ? money(view.settings.max_stake) : "no maximum";
    byId("limits").textContent = `limits: ${money(view.settings.min_stake)} to ${max}` +
      (seat ? ` · you have ${money(seat.chips)}` : "") + (open ? "" : " · bets are closed");
    byId("amount").min = String(view.settings.min_stake);
    if (view.settings.max_stake) byId("amount").max = String(view.settings.max_stake);
  }

  const OFFICIAL = /^@/;  // the croupier's and the house's steps are not a player's turn
  const TURNS = {
    bet: "place your bet or pass", "pass-bet": "place your bet or pass", draw: "draw or stand",
    stand: "draw or stand", decide: "draw or stand", offer: "give a card or show down",
    "show-down": "give a card or show down", "take-bank": "take the bank or decline it",
    "decline-bank": "take the bank or decline it", cut: "cut the shoe", contribute: "add to the shuffle",
  };

  // What is happening, for this player: their turn and what to do, another player's turn, a
  // bet already made, or the table's phase.
  function situation() {
    if (paused) return ["The tournament is paused", "paused"];
    const mine = view.legal_actions.find(a => a.actor === me && TURNS[a.step]);
    if (mine) return [`Your turn: ${TURNS[mine.step]}`, "mine"];
    const other = view.legal_actions.find(a => a.actor && a.actor !== me && !OFFICIAL.test(a.actor));
    if (view.phase === "betting") {
      if (view.banker === me) return ["Bets are open against your bank", ""];
      if (view.banco_calls.includes(me)) return ["Banco called: waiting for the close of betting", ""];
      if (other && TURNS[other.step]) return [`${other.actor}'s turn to bet`, ""];
      const open = view.legal_actions.some(a => ["bet", "stake", "banco"].includes(a.step) && a.actor === null);
      return [open ? "Place your bets" : "Waiting for the close of betting", ""];
    }
    if (other && TURNS[other.step]) return [`${other.actor}'s turn: ${TURNS[other.step]}`, ""];
    return [Sabot.phase(view), ""];
  }

  function render() {
    document.title = `${view.name} · ${me} · Sabot`;
    byId("name").textContent = `${view.name} · ${me}`;
    byId("who").textContent = `${view.settings.variant} · coup ${view.coup_number}`;
    const seat = view.seats.find(s => s.player === me);
    const called = view.phase === "betting" && view.banco_calls.includes(me)
      ? [{ player: me, amount: view.bank, banco: true, cover: "called" }] : [];
    const bets = [...view.bets, ...known.stakes(view), ...called].filter(b => b.player === me);
    byId("chips").textContent = seat ? money(seat.chips) : "not seated";
    byId("staked").textContent = money(bets.reduce((n, b) => n + b.amount, 0));
    byId("bank").textContent = view.banker === me ? `yours: ${money(view.bank)}`
      : view.banker ? `${view.banker} ${money(view.bank)}` : "house";
    const [text, state] = situation();
    byId("phase").textContent = text;
    byId("phase").dataset.state = state;
    const held = view.coup ? view.coup.hands.filter(h => h.holder === me) : [];
    byId("mine").replaceChildren(...held.map(h => Sabot.handBox(h, null, "your hand")));
    byId("actions").replaceChildren(...actions());
    renderBetForm();
    byId("bets").replaceChildren(...bets.map(b => {
      const cover = b.cover;
      const item = el("li", b.banco ? `banco: ${money(b.amount)} against the bank`
        : `${money(b.amount)} on the ${side(b.spot || b.tableau)}`);
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
    if (paused !== (shown.status === "paused")) {
      paused = shown.status === "paused";
      render();
    }
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

  const placeBet = sender(byId("bet"), () => {
    const amount = Number(byId("amount").value);
    const on = byId("spot").value;
    return houseBanked() ? ["bet", { player: me, spot: on, amount }]
      : ["stake", { player: me, tableau: on, amount }];
  });
  byId("bet").addEventListener("submit", event => {
    event.preventDefault();
    placeBet();
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
    setInterval(() => { if (view) position().catch(() => {}); }, PAUSE_POLL_MS);
  }

  start();
})();
