// The tournament's big screen: its numbers and payouts (GET /tournaments/{t}), its rules of
// sitting out and play-offs, the standings in the official order (its /standings, as given) or,
// once finished, the results with their prizes, "Provisional" until the organiser publishes
// them. It follows the live streams of the tournament's tables and refetches on their events;
// the tournament's own steps (start, pause, a new round) are caught by a read every POLL_MS
// (`Sabot.poll`).
// Standings longer than ROWS page through by themselves, a page every PAGE_MS; the
// organiser's latest announcements run along the bottom (the ticker); the room's clock is
// clock.js's (`RoomClock`).
"use strict";

(() => {
  const { el, api, money, minutes, t } = Sabot;
  const POLL_MS = 3000;
  const RECORD_MS = 10000;
  const ROWS = 14;
  const PAGE_MS = 8000;
  const TICKER_MS = 6000;
  const name = new URLSearchParams(location.search).get("tournament");
  const path = `/tournaments/${encodeURIComponent(name)}`;
  const byId = id => document.getElementById(id);
  let clockAt = null;  // when seconds_left was read, and its value
  let follow = () => {};
  let paging = { rows: [], page: 0, draw: () => {} };  // the standings or results shown

  setInterval(() => {
    if (clockAt && !Sabot.pause.paused) byId("clock-left").textContent = minutes(clockAt.left - (performance.now() - clockAt.at) / 1000);
  }, 250);

  const STATUSES = { registering: t("status.registering"), running: t("status.running"),
                     paused: t("status.paused"), finished: t("status.finished"),
                     cancelled: t("status.cancelled"), registered: t("status.registered"),
                     seated: t("status.seated"), out: t("status.out"), placed: t("status.placed") };

  const PLAYOFF_WORDS = { bets: "playoff.bets", chips: "playoff.chips", again: "playoff.again",
                          "draw-order": "playoff.draw-order" };

  // What sitting out costs and how a tie is played off, as the format says; who is short of
  // its minimum of bets since the last cut; what settled the latest play-off.
  function renderRules(shown) {
    const rules = [];
    if (shown.sitting_out === "min-stake") rules.push(t("rules.sitting-out"));
    if (shown.min_bets) rules.push(t("rules.min-bets", { count: shown.min_bets }));
    if (shown.tie_break === "play-off") rules.push(t("rules.play-off"));
    const line = (id, text) => Object.assign(byId(id), { hidden: !text, textContent: text || "" });
    line("rules", rules.join(" "));
    line("short", shown.short.length ? t("tournament.short", { names: shown.short.join(", ") }) : "");
    const last = shown.last_playoff;
    line("playoff-line", last && t(PLAYOFF_WORDS[last.decision], {
      round: last.round, players: last.players.join(", "), idle: last.idle.join(", ") }));
  }

  function renderView(shown) {
    document.title = `${shown.name} · Sabot`;
    byId("name").textContent = shown.name;
    byId("state").textContent = STATUSES[shown.status] || shown.status;
    byId("round").textContent = shown.break_seconds_left !== null && shown.status !== "finished"
      ? t("clock.break", { round: shown.round + 1 })  // between rounds: not the next stage's name
      : `${shown.stage} · ${shown.round}`;
    const left = shown.seconds_left === null ? shown.break_seconds_left : shown.seconds_left;  // a round's, or a break's
    clockAt = left === null ? null : { left, at: performance.now() };
    if (!clockAt) byId("clock-left").textContent = shown.status === "paused" ? STATUSES.paused : "–";
    byId("coups-left").textContent = shown.coups_left === null ? "–" : shown.coups_left;
    byId("players").textContent = t("tournament.players", { left: shown.players_left, entrants: shown.entrants });
    byId("average").textContent = money(shown.average_stack);
    byId("pool").textContent = money(shown.prize_pool);
    byId("cut").textContent = shown.next_cut === null || shown.status === "finished" ? "–"
      : t("tournament.top", { count: shown.next_cut });
    byId("limits").textContent = shown.max_stake
      ? t("limits.range", { min: money(shown.min_stake), max: money(shown.max_stake) })
      : t("limits.open", { min: money(shown.min_stake) });
    byId("payouts").replaceChildren(...shown.payouts.map((amount, i) => {
      const item = el("li");
      item.append(el("span", `${i + 1}.`, "place"), money(amount));
      return item;
    }));
    byId("tables").replaceChildren(...shown.tables.map(line => {
      const item = el("li");
      item.append(el("a", line.name, null, { href: `/screen?table=${encodeURIComponent(line.name)}` }),
                  ` · ${t("tournament.table-players", { count: line.players.length })}`);
      return item;
    }));
    for (const line of shown.tables) follow(line.name);
    renderRules(shown);
    renderTicker(shown.announcements);
    RoomClock.take(shown);
  }

  // The latest announcements, newest first, one every TICKER_MS.
  let told = [];
  let telling = 0;
  function renderTicker(announcements) {
    if (told.length && announcements.length && told[0].at !== announcements[0].at) telling = 0;
    told = announcements;
    byId("ticker").hidden = !told.length;
    tell();
  }

  function tell() {
    if (!told.length) return;
    const text = told[telling % told.length].text;
    const line = byId("ticker-text");
    if (line.textContent === text) return;
    const fresh = el("p", text, null, { id: "ticker-text" });
    line.replaceWith(fresh);  // a new node: its fade-in runs again
  }

  setInterval(() => {
    telling += 1;
    tell();
  }, TICKER_MS);

  // The rows of the page shown (all of them when they fit), and which page of how many.
  function paged(rows, draw) {
    const same = paging.draw === draw && paging.rows.length === rows.length;
    paging = { rows, draw, page: same ? paging.page : 0 };
    showPage();
  }

  function showPage() {
    const pages = Math.max(1, Math.ceil(paging.rows.length / ROWS));
    paging.page %= pages;
    paging.draw(paging.rows.slice(paging.page * ROWS, (paging.page + 1) * ROWS));
    const caption = byId("standings-page");
    caption.hidden = pages === 1;
    caption.textContent = t("standings.page", { page: paging.page + 1, pages });
  }

  setInterval(() => {
    paging.page += 1;
    showPage();
  }, PAGE_MS);

  function row(cells, cls) {
    const tr = el("tr", null, cls);
    tr.append(...cells.map(([text, c]) => el("td", text, c)));
    return tr;
  }

  const standingRows = rows => byId("standings").tBodies[0].replaceChildren(...rows.map(r => row(
    [[r.rank, "num rank"], [r.player, "player"], [money(r.chips), "num chips"],
     [STATUSES[r.status] || r.status || "", "state"], [r.prize ? money(r.prize) : "", "num"]],
    r.rank === 1 ? "leader" : "")));

  let finalChips = new Map();  // by player, from the standings: the results do not hold them
  const resultRows = positions => byId("standings").tBodies[0].replaceChildren(...positions.map(p => row(
    [[p.position, "num rank"], [p.player, "player"],
     [finalChips.has(p.player) ? money(finalChips.get(p.player)) : "–", "num chips"],
     [p.tied > 1 ? t("tournament.shared", { count: p.tied }) : STATUSES.placed, "state"],
     [money(p.prize), "num"]],
    p.position === 1 ? "leader" : "")));

  function renderStandings(rows) {
    byId("standings-title").textContent = t("heading.standings");
    byId("provisional").hidden = true;
    paged(rows, standingRows);
    byId("empty").hidden = rows.length > 0;
  }

  function renderResults(results) {
    const winner = byId("winner");
    winner.hidden = false;
    winner.textContent = t(results.winners.length === 1 ? "tournament.winner" : "tournament.winners",
                           { names: results.winners.join(", ") });
    byId("standings-title").textContent = t("heading.results");
    const provisional = byId("provisional");
    provisional.hidden = false;
    provisional.textContent = t(results.published ? "tournament.final" : "tournament.provisional");
    paged(results.positions, resultRows);
    byId("empty").hidden = results.positions.length > 0;
  }

  async function read() {
    const view = await api(path).catch(error => {
      if (error.status === 404) return null;  // not created yet: the standings say so
      throw error;
    });
    if (view) renderView(view);
    const standings = await api(`${path}/standings`);
    if (view && view.status === "finished") {
      finalChips = new Map(standings.map(r => [r.player, r.chips]));
      renderResults(await api(`${path}/results`));
    } else renderStandings(standings);
  }

  // The record's fingerprint: the latest signed checkpoint, short enough to photograph.
  async function showRecord() {
    const body = await api("/audit/checkpoints?last=1").catch(() => null);
    byId("record").textContent = !body ? ""
      : t(body.fingerprint ? "tournament.record" : "tournament.no-record",
          { fingerprint: body.fingerprint, key: body.key });
    setTimeout(showRecord, RECORD_MS);
  }

  if (name) {
    follow = Sabot.poll(read, POLL_MS);
    showRecord();
  }
  else Sabot.status(t("tournament.none"), "down");
})();
