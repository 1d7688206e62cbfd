// The organiser's console for tournaments, over the tournaments resource (POST /tournaments,
// /players, /start, /pause, /resume, /interventions, /announcements, /results/publish; GET
// /disputes) and the
// organiser's approval of a dispute's correction (POST /disputes/{id}/approvals). It follows the tournament's tables'
// streams and reads the tournament again every POLL_MS (`Sabot.poll`). A new tournament takes
// a preset with its dealing and clocks (any left empty: the preset's, shown beside them; the
// decision clock where the format has one). Its forms and its Start, Pause, Resume, Cancel,
// Archive and Publish buttons send once (`Sabot.guarded`: one idempotency key a submission,
// the button disabled in flight); a disqualification and a cancellation are confirmed in a
// dialog first; an unknown tournament is said, not shown as empty forms.
"use strict";

(() => {
  const { el, api, money } = Sabot;
  const POLL_MS = 3000;
  const byId = id => document.getElementById(id);
  let current = new URLSearchParams(location.search).get("tournament");
  let follow = () => {};

  const path = () => `/tournaments/${encodeURIComponent(current)}`;

  async function run(action) {
    try {
      await action();
      byId("error").textContent = "";
    } catch (error) {
      byId("error").textContent = error.message;
    }
    await refresh().catch(() => {});
  }

  function optional(id) {
    const value = byId(id).value;
    return value === "" ? undefined : Number(value);
  }

  // The fields of the create form a preset fills when they are left empty.
  const CLOCKS = { coups: "coups_per_round", "table-count": "tables", chips: "starting_chips",
                   minutes: "minutes_per_round", "bet-seconds": "bet_seconds",
                   "decision-seconds": "decision_seconds", "croupier-tables": "croupier_tables" };
  let presets = [];

  function describePreset() {
    const chosen = presets.find(p => p.name === byId("preset").value);
    if (!chosen) return;
    const f = chosen.format;
    for (const [id, field] of Object.entries(CLOCKS)) {
      byId(id).placeholder = f[field] === null || f[field] === undefined ? "preset's: none"
        : `preset's: ${f[field]}`;
    }
    byId("dealing").options[0].textContent = `as set: ${f.dealing}`;
    byId("decision-field").hidden = !("decision_seconds" in f);
    byId("preset-line").textContent = `${f.variant}${f.house_rules ? ` (${f.house_rules})` : ""}` +
      ` · ${f.dealing} dealing · ${f.betting_order} betting` +
      `${f.sitting_out === "min-stake" ? " · a turn the clock passes costs the minimum stake" : ""}` +
      `${f.min_bets ? ` · fewer than ${f.min_bets} bets a round ranks after those who made them` : ""}` +
      `${f.tie_break === "play-off" ? " · ties played off: who bets goes first, then the chips" : ""}` +
      ` · ${f.stages.length ? f.stages.map(stage => stage.name).join(" → ") : "one stage"}` +
      ` · from ${chosen.smallest_field} players`;
  }

  async function loadPresets() {
    presets = await api("/tournaments/presets");
    byId("preset").replaceChildren(...presets.map(p => el("option", p.name, null, { value: p.name })));
    describePreset();
  }

  async function loadTournaments() {
    const all = await api("/tournaments");
    if (!current && all.length) current = all[all.length - 1].name;
    const select = byId("tournament");
    select.replaceChildren(...all.map(t => el("option", `${t.name} (${t.status})`, null, { value: t.name })));
    if (current) select.value = current;
  }

  function renderView(t) {
    byId("summary").textContent = `${t.variant} · ${t.status} · ${t.stage} round ${t.round} · ` +
      `${t.players_left} of ${t.entrants} left · pool ${money(t.prize_pool)}`;
    const d = t.director;
    byId("director").textContent = !d ? "no director yet: a worker (sabot worker) directs it once started"
      : d.alive ? `directed by ${d.holder}`
      : `no worker alive for ${Math.round(d.seconds_since)} s: start a worker (sabot worker)`;
    byId("director").className = d && !d.alive ? "error" : "limits";
    byId("start").disabled = t.status !== "registering";
    byId("pause").disabled = t.status !== "running";
    byId("resume").disabled = t.status !== "paused";
    byId("cancel").disabled = t.status !== "registering";
    byId("archive").disabled = t.status !== "finished";
    byId("screen-link").href = `/?tournament=${encodeURIComponent(t.name)}`;
    byId("clock-link").href = `/?tournament=${encodeURIComponent(t.name)}&view=clock`;
    byId("announced").replaceChildren(...t.announcements.map(a => el("li", a.text)));
    Sabot.watchPause(t.name);
    const named = `?tournament=${encodeURIComponent(t.name)}`;
    byId("slips-link").href = `/slips${named}`;
    byId("croupier-slips-link").href = `/slips${named}&croupiers=1`;
    byId("seating-link").href = `/seating${named}`;
    byId("payouts-link").href = `/payouts${named}`;
    byId("tables").replaceChildren(...t.tables.map(line => {
      const q = `?table=${encodeURIComponent(line.name)}`;
      const item = el("li");
      item.append(el("a", line.name, null, { href: `/screen${q}` }),
                  el("a", "croupier console", null, { href: `/croupier${q}` }),
                  el("span", line.players.map(p => `${p.player} ${money(p.chips)}`).join(" · "), "limits"));
      return item;
    }));
    for (const line of t.tables) follow(line.name);
  }

  function renderPlayers(rows, registering) {
    byId("players").tBodies[0].replaceChildren(...rows.map(r => {
      const tr = el("tr");
      const remove = el("button", "Remove", "secondary", { type: "button", "aria-label": `remove ${r.player}` });
      remove.disabled = !registering;
      remove.addEventListener("click", () => run(() => api(
        `${path()}/players/${encodeURIComponent(r.player)}`, undefined, "DELETE")));
      const cell = el("td");
      cell.append(remove);
      tr.append(el("td", r.rank, "num"), el("td", r.player), el("td", money(r.chips), "num"),
                el("td", r.status || ""), cell);
      return tr;
    }));
  }

  // A correction the replay proposes is applied once the organiser and an auditor or a floor
  // manager approve it (POST /disputes/{id}/approvals): the organiser's half is a button here.
  function approval(d) {
    const cell = el("td");
    const c = d.correction;
    if (!c || c.approved || c.approvals.some(a => a.role === "organiser")) return cell;
    const chips = Object.entries(c.chips).map(([p, n]) => `${p} ${n > 0 ? "+" : ""}${money(n)}`).join(", ");
    const approve = el("button", `Approve (${chips})`, "secondary",
                       { type: "button", "aria-label": `approve the correction of coup ${d.coup} at ${d.table}` });
    approve.addEventListener("click", () => run(() => api(`/disputes/${d.id}/approvals`, {})));
    cell.append(approve);
    return cell;
  }

  function renderDisputes(disputes) {
    byId("disputes").tBodies[0].replaceChildren(...disputes.map(d => {
      const tr = el("tr", null, d.status === "replaying" || d.status === "awaiting approvals" ? "open" : "");
      const approvals = d.correction ? d.correction.approvals.map(a => `${a.role} ${a.by}`) : [];
      tr.append(el("td", d.table), el("td", d.coup, "num"), el("td", d.by), el("td", d.reason),
                el("td", [d.status, ...approvals].join(" · ")), el("td", d.discrepancies.length
                  ? d.discrepancies.map(x => x.description).join("; ") : d.verdict), approval(d));
      return tr;
    }));
    byId("no-disputes").hidden = disputes.length > 0;
  }

  function renderResults(view, results) {
    byId("payouts").replaceChildren(...view.payouts.map(amount => el("li", money(amount))));
    const published = results && results.published;
    byId("results-state").textContent = view.status !== "finished" ? "Results once the tournament is finished."
      : published ? `Results published by ${results.published_by} at ${new Date(results.published_at * 1000).toLocaleString()}.`
      : "Results provisional: publish them once every dispute is decided.";
    byId("publish").disabled = view.status !== "finished" || Boolean(published);
    byId("results-sheet").hidden = view.status !== "finished";
    byId("results-sheet").href = `/results?tournament=${encodeURIComponent(view.name)}`;
  }

  // The panels of one tournament, shown only once there is one.
  function shown(there, why) {
    for (const node of document.querySelectorAll(".per-tournament")) node.hidden = !there;
    if (!there) byId("summary").textContent = why;
  }

  async function refresh() {
    await loadTournaments();
    if (!current) {
      shown(false, "No tournament yet: create one above.");
      return;
    }
    let view;
    try {
      view = await api(path());
    } catch (error) {
      if (error.status !== 404) throw error;
      shown(false, `There is no tournament “${current}”: choose one or create it above.`);
      return;
    }
    shown(true);
    renderView(view);
    renderPlayers(await api(`${path()}/standings`), view.status === "registering");
    renderDisputes(await api(`${path()}/disputes`));
    renderResults(view, view.status === "finished" ? await api(`${path()}/results`) : null);
  }

  // A form's submission, sent once (`Sabot.guarded`) through `run`, if `ask()` (a dialog for
  // what cannot be undone) does not decline it.
  function submit(id, send, ask) {
    const sendOnce = Sabot.guarded(byId(id), send);
    byId(id).addEventListener("submit", event => {
      event.preventDefault();
      if (!byId(id).dataset.busy && (!ask || ask())) run(sendOnce);
    });
  }

  submit("create", async key => {
    const body = { name: byId("new-name").value.trim(), preset: byId("preset").value,
                   dealing: byId("dealing").value || undefined };
    for (const [id, field] of Object.entries(CLOCKS)) {
      if (!byId(id).closest("label").hidden) body[field] = optional(id);
    }
    const made = await api("/tournaments", body, "POST", key);
    current = made.name;
  });
  byId("preset").addEventListener("change", describePreset);
  byId("tournament").addEventListener("change", () => {
    current = byId("tournament").value;
    refresh().catch(() => {});
  });
  submit("register", async key => {
    const body = { player: byId("player").value.trim(), bot: byId("bot").checked };
    await api(`${path()}/players`, body, "POST", key);
    byId("player").value = "";
    byId("player").focus();
  });
  // A button's action, sent once (`Sabot.guarded`), if `ask()` does not decline it; an action
  // on the tournament (`acts`: it answers the tournament) is shown at once, before the
  // panels' refresh reads the rest.
  function press(id, route, ask, acts = true) {
    const sendOnce = Sabot.guarded(byId(id), async key => {
      const answer = await api(`${path()}/${route}`, {}, "POST", key);
      if (acts) renderView(answer);
    });
    byId(id).addEventListener("click", () => {
      if (!byId(id).dataset.busy && (!ask || ask())) run(sendOnce);
    });
  }
  for (const action of ["start", "pause", "resume", "archive"]) press(action, action);
  press("cancel", "cancel", () => confirm(`Cancel the tournament ${current}? It cannot be started again.`));
  press("publish", "results/publish", null, false);
  submit("announce", async key => {
    await api(`${path()}/announcements`, { text: byId("announcement").value.trim() }, "POST", key);
    byId("announcement").value = "";
  });
  submit("intervene", async key => {
    const body = { kind: byId("kind").value, reason: byId("reason").value.trim(),
                   player: byId("who-player").value.trim(), delta: Number(byId("delta").value) || 0,
                   table: byId("to-table").value.trim() || null };
    await api(`${path()}/interventions`, body, "POST", key);
    byId("reason").value = "";
  }, () => byId("kind").value !== "disqualify" ||
     confirm(`Disqualify ${byId("who-player").value.trim()}? This cannot be undone.`));

  async function start() {
    try {
      const me = await api("/me");
      byId("who").textContent = `signed in as ${me.role}`;
      if (me.role !== "organiser") throw new Error("sign in with the organiser's token (from the lobby)");
      await loadPresets();
    } catch (error) {
      Sabot.status(error.message, "down");
      byId("error").textContent = error.message;
      return;
    }
    follow = Sabot.poll(refresh, POLL_MS);
  }

  start();
})();
