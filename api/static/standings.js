// The standings display: fetch a tournament's standings every POLL_MS and redraw the table.
// Every text from the server goes in through textContent (never HTML).
"use strict";

const POLL_MS = 1500;
const tournament = new URLSearchParams(location.search).get("tournament");

function cell(text, cls) {
  const node = document.createElement("td");
  node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function render(rows) {
  const body = document.querySelector("#standings tbody");
  body.replaceChildren(...rows.map(row => {
    const line = document.createElement("tr");
    line.className = row.rank === 1 ? "leader" : "";
    line.append(cell(row.rank, "num rank"), cell(row.player, "player"),
                cell(row.chips, "num chips"), cell(row.coups, "num"),
                cell(row.biggest_win, "num"), cell(row.tables.join(", "), "tables"));
    return line;
  }));
  document.getElementById("empty").hidden = rows.length > 0;
}

async function refresh() {
  try {
    const response = await fetch(`/tournaments/${encodeURIComponent(tournament)}/standings`);
    const body = await response.json();
    if (!response.ok) throw new Error(body.detail || response.statusText);
    render(body);
    const shown = await fetch(`/tournaments/${encodeURIComponent(tournament)}`);
    const view = shown.ok ? await shown.json() : null;
    const status = document.getElementById("status");
    const finished = view && view.status === "finished";
    status.textContent = finished
      ? `finished · winner ${view.winner ?? "shared"}`
      : `${view ? view.status : "live"} · ${new Date().toLocaleTimeString()}`;
    status.className = "status live";
  } catch (error) {
    const status = document.getElementById("status");
    status.textContent = error.message;
    status.className = "status down";
  }
  setTimeout(refresh, POLL_MS);
}

document.title = `${tournament} · Sabot`;
document.getElementById("name").textContent = tournament;
refresh();
