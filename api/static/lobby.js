// The lobby: the tables (and tournaments) with links to the pages the caller may use, and
// signing in with a slip's name and PIN or with a token. There is no lobby stream: the lists
// are read again every POLL_MS.
"use strict";

(() => {
  const { el, api } = Sabot;
  const POLL_MS = 3000;
  const byId = id => document.getElementById(id);
  let me = { role: "anonymous", player: null, tables: [] };

  function link(text, href) {
    return el("a", text, null, { href });
  }

  function renderTables(tables) {
    byId("no-tables").hidden = tables.length > 0;
    byId("tables").replaceChildren(...tables.map(t => {
      const q = `?table=${encodeURIComponent(t.name)}`;
      const item = el("li");
      item.append(link(t.name, `/screen${q}`), " ",
                  el("span", `${t.variant} · ${t.phase} · ${t.coups} coups · ${t.seated.length} seated`, "limits"));
      const links = el("div", null, "links");
      links.append(link("big screen", `/screen${q}`));
      if (me.role === "organiser" || (me.role === "croupier" && me.tables.includes(t.table_id))) {
        links.append(" · ", link("croupier console", `/croupier${q}`));
      }
      if (me.role === "player" && t.seated.includes(me.player)) {
        links.append(" · ", link("your seat", `/player${q}`));
      }
      item.append(links);
      return item;
    }));
  }

  function renderTournaments(tournaments) {
    byId("tournaments-box").hidden = false;
    byId("no-tournaments").hidden = tournaments.length > 0;
    byId("tournaments").replaceChildren(...tournaments.map(t => {
      const name = t.name || t.tournament_id;
      const item = el("li");
      item.append(link(name, `/?tournament=${encodeURIComponent(name)}`), " ",
                  el("span", [t.status, t.stage].filter(Boolean).join(" · "), "limits"));
      return item;
    }));
  }

  async function read() {
    renderTables(await api("/tables"));
    try {
      renderTournaments(await api("/tournaments"));
    } catch (error) {
      if (error.status !== 404 && error.status !== 405) throw error;  // no tournaments here
    }
  }

  async function whoAmI() {
    me = { role: "anonymous", player: null, tables: [] };
    try {  // a token of this tab, else the sign-in cookie of this browser, else nobody
      me = await api("/me");
      byId("error").textContent = "";
    } catch (error) {
      Sabot.token.clear();
      byId("error").textContent = error.message;
    }
    byId("who").textContent = me.role === "anonymous" ? "not signed in: the public view"
      : `signed in as ${me.role}${me.player ? ` ${me.player}` : ""}`;
    byId("organiser-link").hidden = me.role !== "organiser";
    byId("signout").hidden = me.role === "anonymous";
  }

  byId("signin").addEventListener("submit", async event => {
    event.preventDefault();
    Sabot.token.set(byId("token").value.trim());
    byId("token").value = "";
    await whoAmI();
    renderTables(await api("/tables"));
  });
  byId("pin-signin").addEventListener("submit", async event => {
    event.preventDefault();
    try {
      const landing = await api("/sign-in/pin", { player: byId("pin-player").value.trim(),
                                                  pin: byId("pin").value.trim() });
      Sabot.token.clear();  // the cookie speaks for this browser now
      location.assign(landing.page);
    } catch (error) {
      byId("error").textContent = error.message;
      byId("pin").value = "";
    }
  });
  byId("signout").addEventListener("click", async () => {
    Sabot.token.clear();
    await api("/sign-out", {}).catch(() => {});
    await whoAmI();
    renderTables(await api("/tables"));
  });

  whoAmI().then(() => Sabot.poll(read, POLL_MS));
})();
