// The tournament's big screen: its numbers and payouts (GET /tournaments/{t}), the standings in
// the official order (its /standings, as given) or, once finished, the results with their prizes,
// "Provisional" until the organiser publishes them. It follows
// the live streams of the tournament's tables and refetches on their events; the tournament's
// own steps (start, pause, a new round) are caught by a read every POLL_MS (`Sabot.poll`).
"use strict";

(() => {
  const { el, api, money } = Sabot;
  const POLL_MS = 3000;
  const RECORD_MS = 10000;
  const ROWS = 14;
  const name = new URLSearchParams(location.search).get("tournament");
  const path = `/tournaments/${encodeURIComponent(name)}`;
  const byId = id => document.getElementById(id);
  let clockAt = null;  // when seconds_left was read, and its value
  let follow = () => {};

  function minutes(seconds) {
    const s = Math.max(0, Math.round(seconds));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }

  setInterval(() => {
    if (clockAt) byId("clock-left").textContent = minutes(clockAt.left - (Date.now() - clockAt.at) / 1000);
  }, 250);

  function renderView(t) {
    document.title = `${t.name} · Sabot`;
    byId("name").textContent = t.name;
    byId("state").textContent = t.status;
    byId("round").textContent = `${t.stage} · ${t.round}`;
    clockAt = t.seconds_left === null ? null : { left: t.seconds_left, at: Date.now() };
    if (!clockAt) byId("clock-left").textContent = t.status === "paused" ? "paused" : "–";
    byId("coups-left").textContent = t.coups_left === null ? "–" : t.coups_left;
    byId("players").textContent = `${t.players_left} of ${t.entrants}`;
    byId("average").textContent = money(t.average_stack);
    byId("pool").textContent = money(t.prize_pool);
    byId("cut").textContent = t.next_cut === null || t.status === "finished" ? "–" : `top ${t.next_cut}`;
    byId("limits").textContent = `${money(t.min_stake)} to ${t.max_stake ? money(t.max_stake) : "no maximum"}`;
    byId("payouts").replaceChildren(...t.payouts.map((amount, i) => {
      const item = el("li");
      item.append(el("span", `${i + 1}.`, "place"), money(amount));
      return item;
    }));
    byId("tables").replaceChildren(...t.tables.map(line => {
      const item = el("li");
      item.append(el("a", line.name, null, { href: `/screen?table=${encodeURIComponent(line.name)}` }),
                  ` · ${line.players.length} players`);
      return item;
    }));
    for (const line of t.tables) follow(line.name);
  }

  function row(cells, cls) {
    const tr = el("tr", null, cls);
    tr.append(...cells.map(([text, c]) => el("td", text, c)));
    return tr;
  }

  function renderStandings(rows) {
    byId("standings-title").textContent = "Standings";
    byId("provisional").hidden = true;
    byId("standings").tBodies[0].replaceChildren(...rows.slice(0, ROWS).map(r => row(
      [[r.rank, "num rank"], [r.player, "player"], [money(r.chips), "num chips"],
       [r.status || "", "state"], [r.prize ? money(r.prize) : "", "num"]],
      r.rank === 1 ? "leader" : "")));
    byId("empty").hidden = rows.length > 0;
  }

  function renderResults(results) {
    const winner = byId("winner");
    winner.hidden = false;
    winner.textContent = results.winners.length === 1 ? `Winner: ${results.winners[0]}`
      : `Winners: ${results.winners.join(", ")}`;
    byId("standings-title").textContent = "Results";
    const provisional = byId("provisional");
    provisional.hidden = false;
    provisional.textContent = results.published ? "Final" : "Provisional";
    byId("standings").tBodies[0].replaceChildren(...results.positions.slice(0, ROWS).map(p => row(
      [[p.position, "num rank"], [p.player, "player"], ["", "num chips"],
       [p.tied > 1 ? `shared by ${p.tied}` : "placed", "state"], [money(p.prize), "num"]],
      p.position === 1 ? "leader" : "")));
    byId("empty").hidden = results.positions.length > 0;
  }

  async function read() {
    const view = await api(path).catch(error => {
      if (error.status === 404) return null;  // not created yet: the standings say so
      throw error;
    });
    if (view) renderView(view);
    if (view && view.status === "finished") renderResults(await api(`${path}/results`));
    else renderStandings(await api(`${path}/standings`));
  }

  // The record's fingerprint: the latest signed checkpoint, short enough to photograph.
  async function showRecord() {
    const body = await api("/audit/checkpoints?last=1").catch(() => null);
    byId("record").textContent = !body ? ""
      : body.fingerprint ? `record ${body.fingerprint} · key ${body.key}`
      : `record: no checkpoint yet · key ${body.key}`;
    setTimeout(showRecord, RECORD_MS);
  }

  if (name) {
    follow = Sabot.poll(read, POLL_MS);
    showRecord();
  }
  else Sabot.status("no tournament: open /?tournament=NAME", "down");
})();
