// What every page shares: the token of this tab, calls to the API, a table's live stream, the
// connection status, cards drawn as cards, events told in words, the turn's clock, requests
// sent once (`guarded`) and a page for what does not exist (`missing`).
// Every text from the server goes in through textContent (never HTML).
"use strict";

const Sabot = (() => {
  const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
  const SUIT_NAMES = { s: "spades", h: "hearts", d: "diamonds", c: "clubs" };
  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const TOKEN_KEY = "sabot.token";
  const RETRY_MS = 1000;
  const SETTLE_MS = 600;

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

  // A page for something that does not exist (an unknown table or tournament): its panels
  // give way to one sentence and a way back, instead of empty forms.
  function missing(text) {
    const main = document.querySelector("main");
    const box = el("section", null, "panel wide missing", { id: "missing" });
    const back = el("a", "the tables and tournaments", null, { href: "/" });
    const line = el("p", text, "phase");
    const way = el("p", "See ");
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
        status("connection back · live", "live");
        if (onBack) await onBack();
      } else {
        status("live", "live");
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
          status("connection lost · reconnecting…", "down");
          await new Promise(resolve => setTimeout(resolve, RETRY_MS));
        }
      }
    }
    loop();
  }

  // A table page's live loop: `load()` (which draws the page and answers the table view), then
  // from a few events before it, each burst of events into the page's feed and its
  // latest-events list, and one `load()` again. A first load that fails is said, and ends it.
  async function live(table, load, known, log, keep) {
    let view;
    try {
      view = await load();
    } catch (error) {
      if (error.status === 404) missing(`There is no table “${table}” here.`);
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
        if (lost || !followed.size) status(lost ? "connection back · live" : "live", "live");
        lost = false;
      } catch (error) {
        lost = true;
        status("connection lost · retrying…", "down");
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

  const SIDES = { punter: "punter", banker: "banker", right: "right tableau",
                  left: "left tableau", tie: "tie" };

  function side(name) {
    return SIDES[name] || name;
  }

  function money(amount) {
    return Number(amount).toLocaleString("en");
  }

  // A coup's result in words: "banker 7 beats punter 5", "tie at 6", per tableau.
  function outcomeWords(coup) {
    const many = Object.keys(coup.outcomes).length > 1;
    return Object.entries(coup.outcomes).map(([tableau, outcome]) => {
      const mine = coup.points[tableau];
      const bank = coup.points.banker;
      const name = many ? tableau : side(tableau);
      if (outcome === "tie") return `tie at ${mine}${many ? ` on the ${tableau}` : ""}`;
      return outcome === "banker" ? `banker ${bank} beats ${name} ${mine}`
        : `${name} ${mine} beats banker ${bank}`;
    }).join("; ");
  }

  // One event in words, as a croupier would announce it.
  function words(e) {
    const card = e.card ? cardText(e.card) : "a face-down card";
    switch (e.type) {
      case "Opened": return `table ${e.name} opened`;
      case "PlayerSeated": return `${e.player} sits down with ${money(e.chips)}`;
      case "PlayerLeft": return `${e.player} leaves the table`;
      case "ChipsAdjusted": return `${e.player}'s chips ${e.delta >= 0 ? "+" : ""}${money(e.delta)} (${e.reason})`;
      case "ShoeShuffled": return `a new ${e.physical ? "physical " : ""}shoe of ${e.decks} decks is shuffled`;
      case "EntropyContributed": return `${e.player} adds to the shuffle`;
      case "ShoeCut": return `${e.player} cuts the shoe`;
      case "CardBurned": return e.card ? `${cardText(e.card)} burned` : "a card is burned";
      case "TailleEnded": return "the shoe is finished";
      case "ShoeSeedRevealed": return "the shoe's seed is revealed";
      case "BankAwarded": return `${e.player} holds the bank: ${money(e.amount)}`;
      case "BankDeclined": return `${e.player} declines the bank`;
      case "BankPassed": return `${e.player} passes the hand with ${money(e.amount)}`;
      case "BetPlaced": return `${e.player} bets ${money(e.amount)} on ${side(e.spot)}`;
      case "StakePlaced": return `${e.player} stakes ${money(e.amount)} on the ${side(e.tableau)}`;
      case "BancoCalled": return `${e.player} calls banco!`;
      case "BettingClosed": return "no more bets";
      case "StakeCovered": return `${e.player}'s ${money(e.amount)} is covered`;
      case "StakeReturned": return `${e.player}'s ${money(e.amount)} goes back (not covered)`;
      case "CardDealt": return `${card} to the ${side(e.side)}`;
      case "NaturalShown": return e.sides.length ? `natural for the ${e.sides.map(side).join(" and ")}` : "no natural";
      case "ThirdCardAsked": return `the ${side(e.side)} asks for a card`;
      case "ThirdCardDrawn": return `${card} to the ${side(e.side)}`;
      case "HandStood": return `the ${side(e.side)} stands`;
      case "CardOffered": return "the banker says « je donne »: the punters may draw";
      case "BankerShowedDown": return "the banker shows down";
      case "CoupSettled": return outcomeWords(e);
      case "PayoutMade": {
        const p = e.payout;
        if (p.net > 0) return `${p.player} wins ${money(p.net)}`;
        if (p.net < 0) return `${p.player} loses ${money(-p.net)}`;
        return `${p.player}'s stake comes back`;
      }
      case "CommissionTaken": return `commission ${money(e.amount)}`;
      case "CoupClosed": return `coup ${e.coup} is over`;
      default: return e.type.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
    }
  }

  // A hand as cards, its point when known, who holds it and, once settled, who won.
  function handBox(hand, outcome, holder) {
    const box = el("div", null, "hand");
    const title = el("h3", holder ? `${side(hand.side)} · ${holder}` : side(hand.side));
    if (hand.point !== null && hand.point !== undefined) title.append(el("span", hand.point, "point"));
    if (outcome) {
      const who = outcome === "tie" ? "tie" : `${outcome === "punter" ? side(hand.side) : "banker"} wins`;
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
      row.append(el("td", seat.player), el("td", seat.chips, "num"),
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
  // returned at the close of betting (StakeCovered / StakeReturned: a banco is one) and when the
  // last event happened (the decision clock starts there).
  function feed() {
    const coverage = {};  // coup -> [{player, tableau, amount, cover}]
    const known = {
      lastEventAt: null,
      take(events) {
        for (const e of events) {
          if (e.type === "StakeCovered" || e.type === "StakeReturned") {
            (coverage[e.coup] = coverage[e.coup] || []).push({
              player: e.player, tableau: e.tableau, amount: e.amount,
              cover: e.type === "StakeCovered" ? "covered" : "returned" });
          }
          known.lastEventAt = e.timestamp;
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
  // runs (`bet_seconds`, a rotating order's turn: its actor is named), the seconds left since
  // the event that made it wait (when the deadline plays the default or passes the turn).
  function clock(node) {
    let deadline = null;
    let what = "";
    setInterval(() => {
      if (deadline === null) {
        node.hidden = true;
        return;
      }
      const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
      node.hidden = false;
      node.textContent = `${left} s to ${what}`;
      node.classList.toggle("urgent", left <= 5);
    }, 250);
    return (view, lastEventAt) => {
      const deciding = view.legal_actions.some(a => DECISIONS.has(a.step));
      const betting = view.legal_actions.some(a => BETS.has(a.step) && a.actor !== null);
      const limit = deciding ? view.settings.decision_seconds
        : betting ? view.settings.bet_seconds : 0;
      what = deciding ? "decide" : "bet";
      deadline = limit && lastEventAt ? Date.parse(lastEventAt) + limit * 1000 : null;
    };
  }

  const PHASES = {
    "no-shoe": "Waiting for a new shoe",
    shuffled: "The shoe is shuffled: waiting for the cut",
    burning: "Burning cards",
    "no-bank": "The bank is to be given",
    betting: "Place your bets",
    playing: "No more bets: the coup is dealt",
    settled: "The coup is settled: paying",
    "taille-over": "The shoe is finished",
  };

  // What the table is doing, in words.
  function phase(view) {
    if (view.phase === "no-bank" && view.bank_offered_to) return `The bank is offered to ${view.bank_offered_to}`;
    return PHASES[view.phase] || view.phase;
  }

  function tableParam() {
    return new URLSearchParams(location.search).get("table");
  }

  return { el, token, api, command, guarded, missing, status, follow, debounce, cardText, cardName, cardNode,
           side, money, words, outcomeWords, clock, tableParam, handBox, coupHands, seatRows,
           logEvents, feed, phase, live, poll, COMMANDS, SUITS, SUIT_NAMES };
})();
