// What every page shares: the token of this tab, calls to the API, a table's live stream, the
// connection status, cards drawn as cards, events told in words, the turn's clock, requests
// sent once (`guarded`), a page for what does not exist (`missing`), the pages' words in the
// reader's language (`t`) and "Paused" on every page of a paused tournament (`watchPause`).
// Every text from the server goes in through textContent (never HTML).
"use strict";

const Sabot = (() => {
  const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
  const SUIT_NAMES = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };
  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const TOKEN_KEY = "sabot.token";
  const LANG_KEY = "sabot.lang";
  const RETRY_MS = 1000;
  const SETTLE_MS = 600;

  // The language of a page that offers one (`data-langs` on <html>: the player's page and the
  // screens): the reader's choice kept in localStorage, else the first of the browser's
  // languages a catalogue exists for (static/i18n/LANG.js), else English. Other pages stay
  // in English.
  const CATALOGUES = window.SabotWords || {};
  const offered = (document.documentElement.dataset.langs || "").split(" ").filter(l => CATALOGUES[l]);
  const lang = (() => {
    const chosen = localStorage.getItem(LANG_KEY);
    if (offered.includes(chosen)) return chosen;
    const browser = (navigator.languages || [navigator.language]).map(l => l.slice(0, 2).toLowerCase());
    return browser.find(l => offered.includes(l)) || "en";
  })();
  const catalogue = CATALOGUES[lang] || {};
  const english = CATALOGUES.en || {};

  // A text of the catalogue in the page's language, its "{name}"s filled from `vars`; with a
  // `count` the language calls singular (French: 0 and 1, English: 1), the key's "-one" form
  // where there is one ("le premier", not "les 1 premiers").
  const plural = new Intl.PluralRules(lang);
  function t(key, vars) {
    const one = vars && typeof vars.count === "number" && plural.select(vars.count) === "one"
      ? `${key}-one` : null;
    const text = (one && catalogue[one]) ?? catalogue[key] ?? (one && english[one])
      ?? english[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (whole, name) => (vars && name in vars ? String(vars[name]) : whole));
  }

  // The page's own texts (`data-t="key"`, `data-t-title` for a title) in its language, and the
  // switch between the languages (a button a language in the header), which reloads the page.
  function translatePage() {
    if (!offered.length) return;
    document.documentElement.lang = lang;
    for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
    const switcher = el("nav", null, "langs", { "aria-label": t("lang.switch") });
    for (const code of offered) {
      const choice = el("button", code.toUpperCase(), code === lang ? "lang chosen" : "lang",
                        { type: "button", lang: code, "aria-pressed": String(code === lang),
                          title: CATALOGUES[code]["lang.name"] });
      choice.addEventListener("click", () => {
        localStorage.setItem(LANG_KEY, code);
        location.reload();
      });
      switcher.append(choice);
    }
    (document.querySelector("header") || document.body).append(switcher);
  }

  function el(tag, text, cls, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
    return node;
  }

  const token = {
    get: () => sessionStorage.getItem(TOKEN_KEY),
    set: value => sessionStorage.setItem(TOKEN_KEY, value),
    clear: () => sessionStorage.removeItem(TOKEN_KEY),
  };

  // Every call says it comes from these pages' scripts: the API requires it of a write signed
  // in by the sign-in cookie (a page of another site cannot add it).
  function headers(extra) {
    const sent = { "X-Requested-With": "sabot", ...(extra || {}) };
    const held = token.get();
    if (held) sent.Authorization = `Bearer ${held}`;
    return sent;
  }

  // The views (served as they are, with their position) and the position of this tab's last
  // command: a view is read at it (`?at=`), so the page shows its own writes; a view still
  // behind answers 503 with Retry-After, and is read again.
  const VIEW = /^\/tables(\/[^/?]+\/(rotation|recall|roads))?(\?|$)|^\/tournaments\/[^/?]+\/standings(\?|$)/;
  const VIEW_RETRIES = 5;
  let written = 0;

  // GET (no body) or POST (a body) to the API, or `method`, with an `Idempotency-Key` if
  // given; a problem answer becomes an Error with its detail, status and rule.
  async function api(path, body, method, key) {
    const init = body === undefined ? { method: method || "GET", headers: headers() } : {
      method: method || "POST", body: JSON.stringify(body),
      headers: headers({ "Content-Type": "application/json",
                         ...(key ? { "Idempotency-Key": key } : {}) }),
    };
    const view = body === undefined && written > 0 && VIEW.test(path);
    const sent = view ? `${path}${path.includes("?") ? "&" : "?"}at=${written}` : path;
    let response = await fetch(sent, init);
    for (let tries = 0; view && response.status === 503 && tries < VIEW_RETRIES; tries++) {
      const seconds = Number(response.headers.get("Retry-After")) || 1;
      await new Promise(resolve => setTimeout(resolve, seconds * 1000));
      response = await fetch(sent, init);
    }
    const answer = await response.json().catch(() => ({}));
    if (response.ok && Number.isInteger(answer.position)) written = Math.max(written, answer.position);
    if (!response.ok) {
      const error = new Error(answer.detail || response.statusText);
      error.status = response.status;
      error.rule = answer.rule;
      throw error;
    }
    return answer;
  }

  const newKey = () => (crypto.randomUUID ? crypto.randomUUID()
    : [...crypto.getRandomValues(new Uint8Array(16))].map(b => b.toString(16)).join(""));

  // A table's command; `key` (its command id) from `guarded`, else a new one.
  function command(table, kind, fields, key) {
    return api(`/tables/${encodeURIComponent(table)}/commands`,
               { kind, command_id: key || newKey(), ...(fields || {}) });
  }

  // `send(key)` once a submission of `control` (a form or a button): its buttons disabled while
  // it is in flight (a second click does nothing), and one idempotency key for the submission,
  // kept until the server answers: a retry after a lost answer (or while the first still runs)
  // sends the same key, and the server records it once. A form changed since is a new key.
  // Answers the function to call (a submit or click handler), which rejects as `send` does.
  function guarded(control, send) {
    let key = null;
    const isForm = control.tagName === "FORM";
    if (isForm) control.addEventListener("input", () => { if (!control.dataset.busy) key = null; });
    return async () => {
      if (control.dataset.busy) return undefined;
      control.dataset.busy = "true";
      const held = (isForm ? [...control.querySelectorAll("button")] : [control])
        .filter(b => !b.disabled);
      for (const b of held) b.disabled = true;
      key = key || newKey();
      try {
        const answer = await send(key);
        key = null;
        return answer;
      } catch (error) {
        if (error.status !== undefined && error.rule !== "idempotency-key-in-use") key = null;
        throw error;
      } finally {
        delete control.dataset.busy;
        for (const b of held) b.disabled = false;
      }
    };
  }

  // Show `nodes` in `node` unless it already shows the same (their words, their state and
  // `extra`, what they act on): each table update re-renders, and a button swapped for its
  // twin between a look and a click would lose the click (or, in flight, be clickable twice).
  function showChanged(node, nodes, extra = "") {
    const key = nodes.map(n => `${n.tagName}:${n.textContent}:${Boolean(n.disabled)}`).join("|") + `|${extra}`;
    if (node.dataset.shown === key) return;
    node.dataset.shown = key;
    node.replaceChildren(...nodes);
  }

  // A page for something that does not exist (an unknown table or tournament): its panels
  // give way to one sentence and a way back, instead of empty forms.
  function missing(text) {
    const main = document.querySelector("main");
    const box = el("section", null, "panel wide missing", { id: "missing" });
    const back = el("a", t("missing.back"), null, { href: "/" });
    const line = el("p", text, "phase");
    const way = el("p", `${t("missing.see")} `);
    way.append(back, ".");
    box.append(line, way);
    main.replaceChildren(box);
    status(text, "down");
  }

  // The connection's state, said plainly in the page's #status (a live region).
  function status(text, state) {
    const node = document.getElementById("status");
    node.textContent = text;
    node.className = `status ${state}`;
    node.dataset.state = state;
  }

  // A table's events from version `after` on, read with fetch (an EventSource cannot send the
  // token). `onEvents(list)` is called for each burst. When the stream breaks the page says so
  // and tries again every second from the last event seen; `onBack()` runs once it is back.
  function follow(table, after, onEvents, onBack) {
    let last = after;
    let lost = false;
    async function once() {
      const response = await fetch(
        `/tables/${encodeURIComponent(table)}/events?after=${last}`,
        { headers: headers({ Accept: "text/event-stream" }), cache: "no-store" });
      if (!response.ok || !response.body) throw new Error(`stream: ${response.status}`);
      if (lost) {
        lost = false;
        status(t("status.back"), "live");
        if (onBack) await onBack();
      } else {
        status(t("status.live"), "live");
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error("the stream ended");
        buffer += value;
        const blocks = buffer.split(/\r?\n\r?\n/);
        buffer = blocks.pop();
        const events = [];
        for (const block of blocks) {
          const data = block.split(/\r?\n/).filter(l => l.startsWith("data:"))
            .map(l => l.slice(5).trimStart()).join("\n");
          if (!data) continue;  // a keep-alive comment
          const event = JSON.parse(data);
          last = Math.max(last, event.originator_version);
          events.push(event);
        }
        if (events.length) onEvents(events);
      }
    }
    async function loop() {
      for (;;) {
        try {
          await once();
        } catch (error) {
          lost = true;
          status(t("status.reconnecting"), "down");
          await new Promise(resolve => setTimeout(resolve, RETRY_MS));
        }
      }
    }
    loop();
  }

  // A table page's live loop: `load()` (which draws the page and answers the table view), then
  // from a few events before it, each burst of events into the page's feed and its
  // latest-events list, and one `load()` again; again too when the table's tournament moves on
  // (a step, a round, a pause: the view's `round_over` follows the tournament, not the table's
  // events). A first load that fails is said, and ends it.
  async function live(table, load, known, log, keep) {
    let view;
    try {
      view = await load();
    } catch (error) {
      if (error.status === 404) missing(t("missing.table", { table }));
      else status(error.message, "down");
      return;
    }
    const again = () => load().catch(e => status(e.message, "down"));
    const later = debounce(again, 60);
    const settled = debounce(again, SETTLE_MS);  // the views' runner a moment behind the events
    follow(table, Math.max(0, view.version - 60), events => {
      known.take(events);
      logEvents(log, events, keep);
      later();
      settled();
    }, load);
    let moved = null;  // the table's round (its view's round_over) moves with its tournament
    onTournament(shown => {
      const now = [shown.status, shown.stage, shown.round, shown.coups_left].join();
      if (moved !== null && moved !== now) later();
      moved = now;
    });
  }

  // A page without a stream of its own (the lobby, a tournament): `read()` now and every `ms`,
  // the status saying when a read fails and when one works again. `tables(name)` follows a
  // table's stream (once a table) and reads again on its events.
  function poll(read, ms) {
    let lost = false;
    const followed = new Set();
    async function once() {
      try {
        await read();
        if (lost || !followed.size) status(t(lost ? "status.back" : "status.live"), "live");
        lost = false;
      } catch (error) {
        lost = true;
        status(t("status.retrying"), "down");
      }
    }
    const later = debounce(once, 200);
    (async function loop() {
      await once();
      setTimeout(loop, ms);
    })();
    return async name => {
      if (followed.has(name)) return;
      followed.add(name);
      const view = await api(`/tables/${encodeURIComponent(name)}`);
      follow(name, view.version, later, once);
    };
  }

  // A burst of calls to `fn` (a payout run's events) becomes one call.
  function debounce(fn, ms) {
    let pending = null;
    return () => {
      clearTimeout(pending);
      pending = setTimeout(fn, ms);
    };
  }

  function cardText(code) {
    return (code[0] === "T" ? "10" : code[0]) + (SUITS[code[1]] || code[1]);
  }

  function cardName(code) {
    return `${RANK_NAMES[code[0]] || code[0]} of ${SUIT_NAMES[code[1]]}`;
  }

  function isRed(code) {
    return code[1] === "h" || code[1] === "d";
  }

  function cardNode(code) {
    if (code === null || code === undefined) {
      return el("span", "", "card down", { role: "img", "aria-label": "face-down card" });
    }
    const node = el("span", null, "card" + (isRed(code) ? " red" : ""),
                    { role: "img", "aria-label": cardName(code) });
    node.append(el("span", code[0] === "T" ? "10" : code[0], "rank"),
                el("span", SUITS[code[1]], "suit"));
    return node;
  }

  const SIDES = { punter: t("side.punter"), banker: t("side.banker"), right: t("side.right"),
                  left: t("side.left"), tie: t("side.tie") };
  const THE_SIDES = { punter: t("the.punter"), banker: t("the.banker"), right: t("the.right"),
                      left: t("the.left"), tie: t("the.tie") };
  const TABLEAUX = { right: t("tableau.right"), left: t("tableau.left") };
  const COVERS = { covered: t("cover.covered"), returned: t("cover.returned"), called: t("cover.called") };

  // A spot or a hand by itself ("punter"), and with its article ("the punter"); a hand in
  // short ("right" for the right tableau).
  function side(name) {
    return SIDES[name] || name;
  }

  function shortSide(name) {
    return TABLEAUX[name] || side(name);
  }

  // What became of a stake at the close of betting: covered, returned (or a banco called).
  function cover(name) {
    return COVERS[name] || name;
  }

  function theSide(name) {
    return THE_SIDES[name] || name;
  }

  // A number of chips as the page's language writes it, grouped from the thousands on in
  // every language ("9 472" beside "10 000" in French, whose default leaves four digits whole).
  const grouped = new Intl.NumberFormat(lang, { useGrouping: "always" });
  function money(amount) {
    return grouped.format(Number(amount));
  }

  // Seconds left as a clock reads them: "4:05" (a second begun counts whole).
  function minutes(seconds) {
    const s = Math.max(0, Math.ceil(seconds));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }

  // "3 coups left", "1 coup left": a round's coups still to play.
  function coupsLeft(count) {
    return t("clock.coups-left", { count });
  }

  // A coup's result in words: "banker 7 beats punter 5", "tie at 6", per tableau.
  function outcomeWords(coup) {
    const many = Object.keys(coup.outcomes).length > 1;
    return Object.entries(coup.outcomes).map(([tableau, outcome]) => {
      const said = { point: coup.points[tableau], bank: coup.points.banker,
                     name: many ? shortSide(tableau) : side(tableau) };
      if (outcome === "tie") return t(many ? "outcome.tie-on" : "outcome.tie", said);
      return t(outcome === "banker" ? "outcome.banker" : "outcome.punter", said);
    }).join("; ");
  }

  // One event in words, as a croupier would announce it.
  function words(e) {
    const said = { ...e, card: e.card ? cardText(e.card) : t("event.face-down"),
                   amount: money(e.amount), chips: money(e.chips),
                   side: side(e.side || e.spot || e.tableau), the: theSide(e.side || e.spot || e.tableau) };
    switch (e.type) {
      case "Opened": return t("event.Opened", said);
      case "PlayerSeated": return t("event.PlayerSeated", said);
      case "PlayerLeft": return t("event.PlayerLeft", said);
      case "ChipsAdjusted": return t("event.ChipsAdjusted",
                                     { ...said, delta: `${e.delta >= 0 ? "+" : ""}${money(e.delta)}` });
      case "ShoeShuffled": return t(e.physical ? "event.ShoeShuffled-physical" : "event.ShoeShuffled", said);
      case "EntropyContributed": return t("event.EntropyContributed", said);
      case "ShoeCut": return t("event.ShoeCut", said);
      case "CardBurned": return e.card ? t("event.CardBurned", said) : t("event.CardBurned-face-down");
      case "TailleEnded": return t("event.TailleEnded");
      case "ShoeSeedRevealed": return t("event.ShoeSeedRevealed");
      case "BankAwarded": return t("event.BankAwarded", said);
      case "BankDeclined": return t("event.BankDeclined", said);
      case "BankPassed": return t("event.BankPassed", said);
      case "LimitsChanged": return t(e.max_stake ? "event.LimitsChanged" : "event.LimitsChanged-open",
                                     { min: money(e.min_stake), max: money(e.max_stake) });
      case "BetPlaced": return t("event.BetPlaced", said);
      case "BetTurnBegan": return t("event.BetTurnBegan", said);
      case "BetTurnPassed": return t(e.reason === "clock" ? "event.BetTurnPassed-clock"
                                     : "event.BetTurnPassed", said);
      case "SittingOutCharged": return t("event.SittingOutCharged", said);
      case "StakePlaced": return t("event.StakePlaced", said);
      case "BancoCalled": return t("event.BancoCalled", said);
      case "BettingClosed": return t("event.BettingClosed");
      case "StakeCovered": return t("event.StakeCovered", said);
      case "StakeReturned": return t("event.StakeReturned", said);
      case "CardDealt": case "ThirdCardDrawn": return t("event.CardDealt", said);
      case "NaturalShown": return e.sides.length
        ? t("event.NaturalShown", { sides: e.sides.map(side).join(` ${t("and")} `),
                                    the_sides: e.sides.map(theSide).join(` ${t("and")} `) })
        : t("event.NaturalShown-none");
      case "ThirdCardAsked": return t("event.ThirdCardAsked", said);
      case "HandStood": return t("event.HandStood", said);
      case "CardOffered": return t("event.CardOffered");
      case "BankerShowedDown": return t("event.BankerShowedDown");
      case "CoupSettled": return outcomeWords(e);
      case "PayoutMade": {
        const p = { player: e.payout.player, amount: money(Math.abs(e.payout.net)) };
        if (e.payout.net > 0) return t("event.PayoutMade-won", p);
        if (e.payout.net < 0) return t("event.PayoutMade-lost", p);
        return t("event.PayoutMade-back", p);
      }
      case "CommissionTaken": return t("event.CommissionTaken", said);
      case "CoupClosed": return t("event.CoupClosed", said);
      default: return e.type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
    }
  }

  // A hand as cards, its point when known, who holds it and, once settled, who won.
  function handBox(hand, outcome, holder) {
    const box = el("div", null, "hand");
    const title = el("h3", holder ? `${side(hand.side)} · ${holder}` : side(hand.side));
    if (hand.point !== null && hand.point !== undefined) title.append(el("span", hand.point, "point"));
    if (outcome) {
      const who = outcome === "tie" ? t("hand.tie")
        : t("hand.wins", { side: outcome === "punter" ? side(hand.side) : side("banker") });
      title.append(el("span", who, "outcome"));
    }
    const cards = el("div", null, "cards");
    cards.append(...hand.cards.map(cardNode));
    box.append(title, cards);
    return box;
  }

  // The current coup's hands of a table view, each tableau with its outcome once settled.
  function coupHands(view) {
    const outcomes = (view.coup && view.coup.outcomes) || {};
    return view.coup ? view.coup.hands.map(h => handBox(
      h, h.side === "banker" ? null : outcomes[h.side], h.holder)) : [];
  }

  function seatRows(view, extra) {
    return view.seats.map(seat => {
      const row = el("tr", null, seat.player === view.banker ? "banker" : "");
      row.append(el("td", seat.player, null, { "data-bank": t("seat.bank") }), el("td", seat.chips, "num"),
                 ...(extra ? extra(seat) : []));
      return row;
    });
  }

  // A short list of the latest events, newest first, in words.
  function logEvents(node, events, keep) {
    for (const e of events) node.prepend(el("li", words(e)));
    while (node.children.length > keep) node.lastChild.remove();
  }

  // What a page learns from a table's events besides the view: the stakes each coup engaged or
  // returned at the close of betting (StakeCovered / StakeReturned: a banco is one).
  function feed() {
    const coverage = {};  // coup -> [{player, tableau, amount, cover}]
    const known = {
      take(events) {
        for (const e of events) {
          if (e.type === "StakeCovered" || e.type === "StakeReturned") {
            (coverage[e.coup] = coverage[e.coup] || []).push({
              player: e.player, tableau: e.tableau, amount: e.amount,
              cover: e.type === "StakeCovered" ? "covered" : "returned" });
          }
        }
      },
      // The stakes of a coup: as covered or returned once betting closed, else as placed.
      stakes: view => (view.phase === "playing" || view.phase === "settled") && coverage[view.coup_number]
        ? coverage[view.coup_number] : view.stakes.map(s => ({ ...s, cover: null })),
    };
    return known;
  }

  // The command that takes a legal step, where its kind is not the step's name.
  const COMMANDS = { offer: "offer-card" };

  const DECISIONS = new Set(["draw", "stand", "decide"]);

  const BETS = new Set(["bet", "pass-bet"]);

  // The turn's clock: while a hand is to decide (`decision_seconds`) or a player's turn to bet
  // runs (a rotating order's turn: its actor is named), the seconds left as the server sent
  // them in the view (`clock_ms`), counted down on this page's own clock from when the view
  // came (`performance.now()`): a phone's wall clock set wrong changes nothing. A view of the
  // same version (the same clock) that came later than the last never moves the deadline back:
  // the time it spent on the way only makes its count too high, so the earliest deadline holds
  // until the version changes or the tournament resumes.
  function clock(node) {
    let deadline = null;
    let what = "";
    let armed = null;  // the version and pause the deadline was read under
    function draw() {
      if (deadline === null) {
        node.hidden = true;
        return;
      }
      const left = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
      node.hidden = false;
      node.textContent = t(what, { left });
      node.classList.toggle("urgent", left <= 5);
    }
    setInterval(() => {
      if (!pause.paused) draw();  // paused: the clock stands still, showing what it had
    }, 250);
    return view => {
      const deciding = view.legal_actions.some(a => DECISIONS.has(a.step));
      const betting = view.legal_actions.some(a => BETS.has(a.step) && a.actor !== null);
      what = deciding ? "clock.decide" : "clock.bet";
      const read = (deciding || betting) && view.clock_ms !== null
        ? performance.now() + view.clock_ms : null;
      const under = `${view.version} ${pause.paused}`;
      deadline = read !== null && deadline !== null && armed === under
        ? Math.min(deadline, read) : read;
      armed = under;
      if (!pause.paused) draw();
    };
  }

  const PHASES = {
    "no-shoe": t("phase.no-shoe"),
    shuffled: t("phase.shuffled"),
    burning: t("phase.burning"),
    "no-bank": t("phase.no-bank"),
    betting: t("phase.betting"),
    playing: t("phase.playing"),
    settled: t("phase.settled"),
    "taille-over": t("phase.taille-over"),
  };

  // What the table is doing, in words (its round over: no more coups until the next round).
  function phase(view) {
    if (view.round_over) return t("phase.round-over");
    if (view.phase === "no-bank" && view.bank_offered_to) return t("phase.offered", { player: view.bank_offered_to });
    return PHASES[view.phase] || view.phase;
  }

  function tableParam() {
    return new URLSearchParams(location.search).get("table");
  }

  // The tournament a table plays for (null: none), among the tournaments whose tables are
  // named after them (`<tournament>-table-<n>`).
  async function tournamentOf(table) {
    const all = await api("/tournaments").catch(() => []);
    for (const t of all.filter(t => table.startsWith(`${t.name}-table-`))) {
      const shown = await api(`/tournaments/${encodeURIComponent(t.name)}`).catch(() => null);
      if (shown && shown.tables.some(line => line.name === table)) return t.name;
    }
    return null;
  }

  // "Paused" on every page of a tournament: the page's tournament (`?tournament=`, the one of
  // `?table=`, or the one the page names with `watchPause(name)`) is read every PAUSE_MS; while
  // it is paused a banner at the top says so, the body has the class `paused` and the clocks
  // stand still (`pause.paused`). Each view read goes to the functions given to
  // `onTournament` (a table's screen shows the round's clock with it).
  const PAUSE_MS = 1000;
  const pause = { paused: false, name: null };
  const readers = [];

  function onTournament(fn) {
    readers.push(fn);
  }

  function pauseBanner() {
    let banner = document.getElementById("paused-banner");
    if (!banner) {
      banner = el("div", t("paused.banner"), "paused-banner", { id: "paused-banner", role: "status" });
      banner.hidden = true;
      document.body.prepend(banner);
    }
    return banner;
  }

  function showPaused(paused) {
    pause.paused = paused;
    pauseBanner().hidden = !paused;
    document.body.classList.toggle("paused", paused);
  }

  function watchPause(name) {
    const first = pause.name === null;
    pause.name = name;
    if (!first || !name) return;
    (async function loop() {
      const shown = await api(`/tournaments/${encodeURIComponent(pause.name)}`).catch(() => null);
      if (shown) {
        showPaused(shown.status === "paused");
        for (const fn of readers) fn(shown);
      }
      setTimeout(loop, PAUSE_MS);
    })();
  }

  document.addEventListener("DOMContentLoaded", async () => {
    const params = new URLSearchParams(location.search);
    const table = params.get("table");
    const named = params.get("tournament") || (table ? await tournamentOf(table) : null);
    if (named) watchPause(named);
  });

  translatePage();

  return { t, lang, el, token, api, command, guarded, showChanged, missing, status, follow, debounce, cardText, cardName, cardNode,
           side, theSide, shortSide, cover, money, minutes, coupsLeft, words, outcomeWords, clock, tableParam, handBox, coupHands,
           seatRows, logEvents, feed, phase, live, poll, tournamentOf, watchPause, onTournament, pause, COMMANDS,
           SUITS, SUIT_NAMES };
})();
