// The sign-in slips: made by the organiser for every player of a tournament (or one), or with
// `croupiers=1` for every table's croupier console, drawn as printable cards. The QR codes are the server's SVG (segno: paths only, no text from anyone);
// each is parsed as SVG and only its <svg> element taken in. Every other text goes in through
// textContent.
"use strict";

(() => {
  const { el, api } = Sabot;
  const byId = id => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  const tournament = params.get("tournament") || "";
  const player = params.get("player");
  const croupiers = params.get("croupiers") === "1";

  function qr(svgText) {
    const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.localName !== "svg" || svg.querySelector("script, foreignObject")) {
      return el("p", "(no QR code)", "error");
    }
    const node = document.importNode(svg, true);
    node.setAttribute("role", "img");
    node.setAttribute("aria-label", "QR code of the sign-in link");
    return node;
  }

  function slip(s) {
    const card = el("article", null, "slip");
    card.append(el("h2", croupiers ? `croupier · ${s.table}` : s.player, "slip-name"));
    const place = croupiers ? `table ${s.table} · croupier console`
      : s.table ? `table ${s.table} · seat ${s.seat}` : "not seated yet";
    card.append(el("p", `${s.tournament} · ${place}`, "slip-place"));
    const code = el("div", null, "slip-qr");
    code.append(qr(s.qr_svg));
    card.append(code);
    const pin = el("p", null, "slip-pin");
    pin.append("PIN ", el("strong", s.pin, "pin"));
    card.append(pin);
    card.append(el("p", croupiers ? `Scan to open this table's console, or type ${s.name} and the PIN in the lobby.`
      : "Scan to sign in, or type your name and PIN in the lobby. Keep it to yourself.", "slip-help"));
    card.append(el("p", s.link, "slip-link"));
    return card;
  }

  async function make() {
    byId("error").textContent = "";
    const base = `/tournaments/${encodeURIComponent(tournament)}`;
    try {
      const made = croupiers ? await api(`${base}/tables/sign-in`, {})
        : player ? [await api(`${base}/players/${encodeURIComponent(player)}/sign-in`, {})]
        : await api(`${base}/sign-in`, {});
      byId("slips").replaceChildren(...made.map(slip));
      byId("print").disabled = made.length === 0;
      Sabot.status(`${made.length} slip${made.length === 1 ? "" : "s"} made`, "live");
    } catch (error) {
      byId("error").textContent = error.message;
    }
  }

  async function start() {
    byId("name").textContent = `${croupiers ? "Croupiers' sign-in slips" : "Sign-in slips"} · ${tournament}` +
      (player ? ` · ${player}` : "");
    try {
      const me = await api("/me");
      byId("who").textContent = `signed in as ${me.role}`;
      if (me.role !== "organiser") throw new Error("sign in with the organiser's token (from the lobby)");
      Sabot.status("ready", "live");
    } catch (error) {
      Sabot.status(error.message, "down");
      byId("error").textContent = error.message;
      byId("make").disabled = true;
    }
  }

  byId("make").addEventListener("click", make);
  byId("print").addEventListener("click", () => window.print());
  start();
})();
