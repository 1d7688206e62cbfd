// The player's view: what the API shows this player (their own face-down cards included) and
// the steps the API allows them now, as buttons and a bet form with the table's limits; whose
// turn it is and the player's own clock; each step confirmed in words, or its refusal.
"use strict";

(() => {
  const { el, api, side, theSide, money, t } = Sabot;
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
      case "bet": return t("player.bet-placed", { amount: money(fields.amount), the: theSide(fields.spot) });
      case "stake": return t("player.stake-placed", { amount: money(fields.amount), the: theSide(fields.tableau) });
      case "banco": return t("player.banco-called", { amount: money(view.bank) });
      case "pass-bet": return t("player.passed");
      default: return (done.events || []).map(Sabot.words).join("; ") || t("player.done");
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
        byId("error").textContent = t(error.status ? "player.refused" : "player.not-sent",
                                      { reason: error.message });
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
          nodes.push(button(t(suivi ? "player.banco-suivi" : "player.banco", { amount: money(view.bank) }),
                            "banco", () => ({ player: me })));
          break;
        }
        case "take-bank":  // a passed hand is taken with exactly the sum its banker withdrew
          nodes.push(button(view.bank_required ? t("player.take-passed-bank", { amount: money(view.bank_required) })
                              : t("player.take-bank", { amount: money(view.settings.min_stake) }), "award-bank",
                            () => ({ player: me, how: "taken", amount: view.bank_required ||
                                     Math.max(Number(byId("amount").value) || 0, view.settings.min_stake) })));
          break;
        case "decline-bank": nodes.push(button(t("player.decline-bank"), "decline-bank", () => ({ player: me }), "secondary")); break;
        case "pass-bet": nodes.push(button(t("player.pass"), "pass-bet", () => ({ player: me }), "secondary")); break;
        case "retire-bank": nodes.push(button(t("player.retire-bank"), "retire-bank", () => ({ player: me }), "secondary")); break;
        case "contribute":
          nodes.push(button(t("player.contribute"), "contribute", () => ({ player: me, entropy: randomHex(16) }),
                            "secondary"));
          break;
        case "cut": nodes.push(button(t("player.cut"), "cut", () => ({ player: me, position: 60 }))); break;
        case "offer": case "show-down":  // the banker's word, à deux tableaux
          nodes.push(button(t(a.step === "offer" ? "player.offer" : "player.show-down"),
                            Sabot.COMMANDS[a.step] || a.step, () => ({})));
          break;
        case "draw": case "stand": {
          const forced = a.forced ? ` ${t("player.forced")}` : "";
          nodes.push(button(`${t(a.step === "draw" ? "player.draw" : "player.stand")}${forced}`, "decide",
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
    byId("place").textContent = t(houseBanked() ? "player.place-bet" : "player.place-stake");
    const seat = view.seats.find(s => s.player === me);
    byId("limits").textContent = [t("player.limits", { limits: limits(view.settings) }),
      ...(seat ? [t("player.you-have", { chips: money(seat.chips) })] : []),
      ...(open ? [] : [t("player.bets-closed")])].join(" · ");
    byId("amount").min = String(view.settings.min_stake);
    if (view.settings.max_stake) byId("amount").max = String(view.settings.max_stake);
  }

  const OFFICIAL = /^@/;  // the croupier's and the house's steps are not a player's turn
  const TURNS = {
    bet: t("turn.bet"), "pass-bet": t("turn.bet"), draw: t("turn.decide"),
    stand: t("turn.decide"), decide: t("turn.decide"), offer: t("turn.offer"),
    "show-down": t("turn.offer"), "take-bank": t("turn.bank"),
    "decline-bank": t("turn.bank"), cut: t("turn.cut"), contribute: t("turn.contribute"),
  };

  // The table's stakes: "10 to 500", or "10, no maximum".
  function limits(settings) {
    return settings.max_stake ? t("limits.range", { min: money(settings.min_stake), max: money(settings.max_stake) })
      : t("limits.open", { min: money(settings.min_stake) });
  }

  // What is happening, for this player: their turn and what to do, another player's turn, a
  // bet already made, or the table's phase.
  function situation() {
    if (paused) return [t("player.paused"), "paused"];
    if (view.round_over) return [t("phase.round-over"), "round-over"];
    const mine = view.legal_actions.find(a => a.actor === me && TURNS[a.step]);
    if (mine) return [t("player.your-turn", { what: TURNS[mine.step] }), "mine"];
    const other = view.legal_actions.find(a => a.actor && a.actor !== me && !OFFICIAL.test(a.actor));
    if (view.phase === "betting") {
      if (view.banker === me) return [t("player.against-your-bank"), ""];
      if (view.banco_calls.includes(me)) return [t("player.banco-waiting"), ""];
      if (other && TURNS[other.step]) return [t("player.turn-to-bet", { player: other.actor }), ""];
      const open = view.legal_actions.some(a => ["bet", "stake", "banco"].includes(a.step) && a.actor === null);
      return [open ? t("phase.betting") : t("player.waiting-close"), ""];
    }
    if (other && TURNS[other.step]) return [t("player.turn-of", { player: other.actor, what: TURNS[other.step] }), ""];
    return [Sabot.phase(view), ""];
  }

  function render() {
    document.title = `${view.name} · ${me} · Sabot`;
    byId("name").textContent = `${view.name} · ${me}`;
    byId("who").textContent = t("player.who", { variant: view.settings.variant, coup: view.coup_number });
    byId("table-limits").textContent = limits(view.settings);
    const seat = view.seats.find(s => s.player === me);
    const called = view.phase === "betting" && view.banco_calls.includes(me)
      ? [{ player: me, amount: view.bank, banco: true, cover: "called" }] : [];
    const bets = [...view.bets, ...known.stakes(view), ...called].filter(b => b.player === me);
    byId("chips").textContent = seat ? money(seat.chips) : t("player.not-seated");
    byId("staked").textContent = money(bets.reduce((n, b) => n + b.amount, 0));
    byId("bank").textContent = view.banker === me ? t("player.bank-yours", { amount: money(view.bank) })
      : view.banker ? `${view.banker} ${money(view.bank)}` : t("bank.house");
    const [text, state] = situation();
    byId("phase").textContent = text;
    byId("phase").dataset.state = state;
    const held = view.coup ? view.coup.hands.filter(h => h.holder === me) : [];
    byId("mine").replaceChildren(...held.map(h => Sabot.handBox(h, null, t("player.your-hand"))));
    Sabot.showChanged(byId("actions"), actions(), JSON.stringify(view.legal_actions));
    renderBetForm();
    byId("bets").replaceChildren(...bets.map(b => {
      const cover = b.cover;
      const item = el("li", b.banco ? t("player.banco-against", { amount: money(b.amount) })
        : t("player.bet-on", { amount: money(b.amount), the: theSide(b.spot || b.tableau) }));
      if (cover) item.append(" ", el("span", Sabot.cover(cover), `tag ${cover}`));
      return item;
    }));
    byId("hands").replaceChildren(...Sabot.coupHands(view));
    byId("seats").tBodies[0].replaceChildren(...Sabot.seatRows(view));
    setClock({ ...view, legal_actions: view.legal_actions.filter(a => a.actor === me) });
  }

  // The tournament this table plays for (if any), found once among the tournaments' tables,
  // this player's place in its standings, and the secret bet where its stage allows one; a
  // player seated at another of its tables now (moved) is taken to that table's page.
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
    const seated = shown.tables.find(line => line.players.some(seat => seat.player === me));
    if (seated && seated.name !== view.name) {  // moved (balancing, a table broken): follow
      location.replace(`/player?table=${encodeURIComponent(seated.name)}`);
      return;
    }
    if (paused !== (shown.status === "paused")) {
      paused = shown.status === "paused";
      render();
    }
    const mine = rows.find(r => r.player === me);
    byId("position-box").hidden = !mine;
    if (mine) byId("position").textContent = t("player.position",
                                                { rank: mine.rank, count: rows.length, tournament });
    renderRound(shown);
    renderSecret(shown);
  }

  // The round the tournament plays and the coups left in it (the coup under way not yet played).
  function renderRound(shown) {
    byId("round-box").hidden = false;
    byId("round").textContent = `${shown.stage} · ${shown.round}`;
    byId("coups-left-box").hidden = shown.coups_left === null;
    byId("coups-left").textContent = shown.coups_left === null ? "" : shown.coups_left;
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
    if (kept) byId("secret-state").textContent = t("secret.placed", {
      coup: kept.coup, amount: money(kept.amount), the: theSide(kept.spot), fingerprint: kept.commitment.slice(0, 16) });
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
    const result = !paid ? t("secret.paid-at-table") : paid.delta > 0 ? t("secret.won", { amount: money(paid.delta) })
      : paid.delta < 0 ? t("secret.lost", { amount: money(-paid.delta) }) : t("secret.push");
    byId("secret-state").textContent = t("secret.revealed", { amount: money(kept.amount), the: theSide(kept.spot), result });
  }));

  // A player signed in before they have a seat (before the draw, or waiting for a
  // play-off's table): this page looks for their table every PAUSE_POLL_MS and opens it.
  async function awaitSeat(name) {
    const caller = await api("/me");
    if (caller.role !== "player") throw new Error(t("player.sign-in"));
    const shown = await api(`/tournaments/${encodeURIComponent(name)}`);
    const seated = shown.tables.find(line => line.players.some(seat => seat.player === caller.player));
    if (seated) {
      location.replace(`/player?table=${encodeURIComponent(seated.name)}`);
      return;
    }
    byId("name").textContent = `${name} · ${caller.player}`;
    Sabot.status(t("player.awaiting-seat"), "live");
    setTimeout(() => awaitSeat(name).catch(error => Sabot.status(error.message, "down")),
               PAUSE_POLL_MS);
  }

  async function start() {
    const awaited = new URLSearchParams(location.search).get("tournament");
    if (!table && awaited) {
      awaitSeat(awaited).catch(error => Sabot.status(error.message, "down"));
      return;
    }
    if (!table) {
      Sabot.status(t("player.no-table"), "down");
      return;
    }
    Sabot.live(table, async () => {
      if (me === null) {
        const caller = await api("/me");
        if (caller.role !== "player") throw new Error(t("player.sign-in"));
        me = caller.player;
        SabotReceipts.mount(me);  // "My coups": the player's receipts, checked here (receipts.js)
      }
      return refresh();
    }, known, byId("log"), 8);
    setInterval(() => { if (view) position().catch(() => {}); }, PAUSE_POLL_MS);
  }

  start();
})();
