// The player's "My coups": their receipts (GET /me/receipts), kept on this phone (localStorage)
// and checked here, without trusting the server: each event's Merkle leaf and RFC 9162
// inclusion proof in a checkpoint signed by the operator's key (Ed25519 and SHA-256 through
// the browser's WebCrypto) and co-signed by the witnesses (C2SP signed notes), the events'
// signed MessagePack bytes against their readable fields, the player's amounts, and every card
// re-dealt from the revealed seed with the published shuffle (sabot-shoe-v1, a port of
// domain/game/shoe.py). The keys are the ones the page was given as it first opened after
// signing in (else with the first receipts), kept beside the receipts. On each later visit
// (and each check) it asks the record (GET /audit/consistency) whether its latest checkpoint
// still holds each receipt. The checks mirror
// infra/audit/offline_check/receipts.py; docs/audit.md, "Your receipts", spells them out.
"use strict";

const SabotReceipts = (() => {
  const { el, api, t, theSide, money } = Sabot;
  const enc = new TextEncoder();
  const subtle = window.crypto && crypto.subtle;
  const RANKS = "A23456789TJQK";
  const TABLE_NAMESPACE = "5ab07000-0000-4000-8000-7ab1e0000000";
  const OWN = ["BetPlaced", "StakePlaced", "BancoCalled", "StakeCovered", "StakeReturned", "PayoutMade"];
  const SHOE = ["ShoeShuffled", "EntropyContributed", "ShoeCut", "ShoeSeedRevealed"];
  const CARDS = ["CardDealt", "ThirdCardDrawn"];
  const MAX_LEAVES = 200;  // leaves a request of GET /audit/consistency proves

  // What does not hold of a receipt, its message in the page's words.
  class Failure extends Error {}
  const fail = (key, vars) => { throw new Failure(t(key, vars)); };

  // --- bytes ------------------------------------------------------------------------------
  const hex = bytes => [...bytes].map(b => b.toString(16).padStart(2, "0")).join("");
  function unhex(text, what) {
    if (typeof text !== "string" || !/^(?:[0-9a-f]{2})*$/.test(text)) fail("receipts.why.hex", { what });
    const out = new Uint8Array(text.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(2 * i, 2), 16);
    return out;
  }
  function unb64(text) {
    try { return Uint8Array.from(atob(text), c => c.charCodeAt(0)); } catch (error) { return fail("receipts.why.note"); }
  }
  const b64 = bytes => btoa(String.fromCharCode(...bytes));
  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const part of parts) { out.set(part, at); at += part.length; }
    return out;
  }
  const u32 = n => { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, n); return b; };
  const u64 = n => concat(u32(Math.floor(n / 2 ** 32)), u32(n >>> 0));
  const equal = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
  const sha256 = async bytes => new Uint8Array(await subtle.digest("SHA-256", bytes));
  const nodeHash = (left, right) => sha256(concat([1], left, right));

  // --- MessagePack, the events' signed bytes, read as infra/audit/offline_check/msgpack.py --
  function unpack(bytes) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let i = 0;
    const text = n => { const s = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(i, i + n)); i += n; return s; };
    const many = n => Array.from({ length: n }, () => value());
    const map = n => { const out = {}; for (let k = 0; k < n; k++) { const key = value(); out[key] = value(); } return out; };
    const sized = width => { const n = width === 1 ? view.getUint8(i) : width === 2 ? view.getUint16(i) : view.getUint32(i); i += width; return n; };
    function time(n) {
      const type = view.getInt8(i); i += 1;
      if (type !== -1) throw new Error(`MessagePack extension ${type}`);
      let seconds, nanos = 0;
      if (n === 4) seconds = view.getUint32(i);
      else if (n === 8) { const word = view.getBigUint64(i); seconds = Number(word & 0x3ffffffffn); nanos = Number(word >> 34n); }
      else { nanos = view.getUint32(i); seconds = Number(view.getBigInt64(i + 4)); }
      i += n;
      const base = new Date(seconds * 1000).toISOString().slice(0, 19);
      const micros = Math.floor(nanos / 1000);
      return micros ? `${base}.${String(micros).padStart(6, "0")}Z` : `${base}Z`;
    }
    function value() {
      const b = view.getUint8(i++);
      if (b <= 0x7f) return b;
      if (b >= 0xe0) return b - 0x100;
      if (b >= 0x80 && b <= 0x8f) return map(b & 0x0f);
      if (b >= 0x90 && b <= 0x9f) return many(b & 0x0f);
      if (b >= 0xa0 && b <= 0xbf) return text(b & 0x1f);
      const read = (fn, width) => { const v = fn(i); i += width; return v; };
      switch (b) {
        case 0xc0: return null;
        case 0xc2: return false;
        case 0xc3: return true;
        case 0xca: return read(k => view.getFloat32(k), 4);
        case 0xcb: return read(k => view.getFloat64(k), 8);
        case 0xcc: return read(k => view.getUint8(k), 1);
        case 0xcd: return read(k => view.getUint16(k), 2);
        case 0xce: return read(k => view.getUint32(k), 4);
        case 0xcf: return read(k => Number(view.getBigUint64(k)), 8);
        case 0xd0: return read(k => view.getInt8(k), 1);
        case 0xd1: return read(k => view.getInt16(k), 2);
        case 0xd2: return read(k => view.getInt32(k), 4);
        case 0xd3: return read(k => Number(view.getBigInt64(k)), 8);
        case 0xc4: case 0xc5: case 0xc6: { const n = sized({ 0xc4: 1, 0xc5: 2, 0xc6: 4 }[b]); const v = hex(bytes.subarray(i, i + n)); i += n; return v; }
        case 0xd9: case 0xda: case 0xdb: return text(sized({ 0xd9: 1, 0xda: 2, 0xdb: 4 }[b]));
        case 0xdc: case 0xdd: return many(sized(b === 0xdc ? 2 : 4));
        case 0xde: case 0xdf: return map(sized(b === 0xde ? 2 : 4));
        case 0xd6: return time(4);
        case 0xd7: return time(8);
        case 0xc7: { const n = sized(1); return time(n); }
        default: throw new Error(`MessagePack byte ${b}`);
      }
    }
    const out = value();
    if (i !== bytes.length) throw new Error("bytes after the value");
    return out;
  }
  // JSON with its keys sorted: two readings of the same fields compare equal.
  const stable = v => (v && typeof v === "object" && !Array.isArray(v))
    ? `{${Object.keys(v).sort().map(k => `${JSON.stringify(k)}:${stable(v[k])}`).join(",")}}`
    : Array.isArray(v) ? `[${v.map(stable).join(",")}]` : JSON.stringify(v);

  // --- the record: leaves, RFC 9162 proofs, keys, signatures ------------------------------
  function uuidBytes(text) {
    const digits = String(text).replace(/-/g, "");
    if (!/^[0-9a-f]{32}$/.test(digits)) fail("receipts.why.hex", { what: "stream" });
    return unhex(digits, "stream");
  }
  async function uuid5(namespace, name) {
    const b = new Uint8Array(await subtle.digest("SHA-1", concat(uuidBytes(namespace), enc.encode(name)))).slice(0, 16);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = hex(b);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  async function eventLeaf(e) {
    const state = unhex(e.state, "state");
    const topic = enc.encode(e.topic);
    const canonical = concat(u32(16), uuidBytes(e.stream), u64(e.version), u32(topic.length), topic,
                             u32(state.length), state);
    return sha256(concat([0], u64(e.n), canonical));
  }
  async function verifyInclusion(leaf, index, size, root, proof) {
    if (index >= size) return false;
    let fn = index, sn = size - 1, r = leaf;
    for (const p of proof) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        r = await nodeHash(p, r);
        while (fn !== 0 && fn % 2 === 0) { fn /= 2; sn = Math.floor(sn / 2); }
      } else {
        r = await nodeHash(r, p);
      }
      fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
    }
    return sn === 0 && equal(r, root);
  }
  async function verifyConsistency(first, second, firstRoot, secondRoot, proof) {
    if (first === second) return proof.length === 0 && equal(firstRoot, secondRoot);
    if (first > second || !proof.length) return false;
    const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : [...proof];
    let fn = first - 1, sn = second - 1;
    while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    let fr = path[0], sr = path[0];
    for (const c of path.slice(1)) {
      if (sn === 0) return false;
      if (fn % 2 === 1 || fn === sn) {
        fr = await nodeHash(c, fr); sr = await nodeHash(c, sr);
        if (fn % 2 === 0) while (fn !== 0 && fn % 2 === 0) { fn /= 2; sn = Math.floor(sn / 2); }
      } else {
        sr = await nodeHash(sr, c);
      }
      fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
    }
    return equal(fr, firstRoot) && equal(sr, secondRoot) && sn === 0;
  }
  const keys = new Map();
  async function ed25519(publicKey, message, signature) {
    const id = hex(publicKey);
    if (!keys.has(id)) keys.set(id, subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]));
    try {
      return await subtle.verify({ name: "Ed25519" }, await keys.get(id), signature, message);
    } catch (error) {
      return false;
    }
  }
  const keyId = async publicKey => hex((await sha256(publicKey)).slice(0, 8));
  const checkpointText = cp => `${cp.size}\n${cp.root}\n${cp.head}\n${cp.chain}\n${cp.time}\n` +
    (cp.partitions || []).map(p => `partition ${p.key} ${p.size} ${p.head} ${p.chain}\n`).join("");
  const noteKeyHash = async (name, type, publicKey) =>
    (await sha256(concat(enc.encode(`${name}\n`), [type], publicKey))).slice(0, 4);

  // A C2SP signed note: its text and signature lines (name, key hash, signature).
  function readNote(note) {
    const cut = typeof note === "string" ? note.lastIndexOf("\n\n") : -1;
    const lines = cut < 0 ? "" : note.slice(cut + 2);
    if (cut < 0 || !lines.endsWith("\n")) fail("receipts.why.note");
    const signatures = lines.slice(0, -1).split("\n").map(line => {
      const [name, encoded] = line.replace(/^\u2014 /, "").split(" ");
      const raw = unb64(encoded || "");
      return { name, hash: raw.slice(0, 4), signature: raw.slice(4) };
    });
    return { text: enc.encode(note.slice(0, cut + 1)), body: note.slice(0, cut + 1).split("\n"), signatures };
  }
  async function cosigned(note, name, publicKey) {
    const hash = await noteKeyHash(name, 0x04, publicKey);
    for (const s of note.signatures) {
      if (s.name !== name || !equal(s.hash, hash) || s.signature.length !== 72) continue;
      const when = new DataView(s.signature.buffer, s.signature.byteOffset).getBigUint64(0);
      if (await ed25519(publicKey, concat(enc.encode(`cosignature/v1\ntime ${when}\n`), note.text), s.signature.slice(8))) return true;
    }
    return false;
  }
  // The latest checkpoint of an answer, or a receipt's: signed by the operator's key the
  // page was given, its note too; the note read.
  async function signedCheckpoint(cp, noteText, given) {
    const publicKey = unhex(cp.public_key, "public_key");
    if (!given.operator.some(k => k.public_key === cp.public_key) || await keyId(publicKey) !== cp.key) {
      fail("receipts.why.key", { size: cp.size });
    }
    const prefixed = concat(enc.encode("sabot-checkpoint-v1\n"), enc.encode(checkpointText(cp)));
    if (!await ed25519(publicKey, prefixed, unhex(cp.signature, "signature"))) fail("receipts.why.signature", { size: cp.size });
    const note = readNote(noteText);
    const [origin, size, root, extension] = note.body;
    const hash = await noteKeyHash(origin, 0x01, publicKey);
    const signed = await Promise.all(note.signatures.filter(s => s.name === origin && equal(s.hash, hash))
      .map(s => ed25519(publicKey, note.text, s.signature)));
    if (!signed.includes(true) || size !== String(cp.size) || hex(unb64(root)) !== cp.root ||
        extension !== `sabot-checkpoint-v1 ${b64(await sha256(prefixed))}`) {
      fail("receipts.why.note-signature", { size: cp.size });
    }
    return note;
  }

  // --- the shoe: sabot-shoe-v1, as domain/game/shoe.py deals it ----------------------------
  async function hmacKey(bytes) {
    return subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  }
  async function shoeV1(seed, contributions, decks, cut) {
    const message = concat(enc.encode("sabot-shoe-v1"), ...contributions.flatMap(c => [u32(c.length), c]));
    const key = await hmacKey(new Uint8Array(await subtle.sign("HMAC", await hmacKey(seed), message)));
    const cards = [];
    for (let d = 0; d < decks; d++) for (const suit of "shdc") for (const rank of RANKS) cards.push(rank + suit);
    let block = null, at = 8, counter = 0;
    const word = async () => {
      if (at === 8) { block = new DataView(await subtle.sign("HMAC", key, u64(counter++))); at = 0; }
      return block.getUint32(4 * at++);
    };
    for (let i = cards.length - 1; i > 0; i--) {
      const bound = i + 1;
      const limit = 2 ** 32 - (2 ** 32 % bound);
      let w;
      do { w = await word(); } while (w >= limit);
      const j = w % bound;
      [cards[i], cards[j]] = [cards[j], cards[i]];
    }
    return cards.slice(cut).concat(cards.slice(0, cut));
  }
  const point = cards => cards.reduce((sum, c) => sum + Math.min(RANKS.indexOf(c[0]) + 1, 10) % 10, 0) % 10;
  const playerOf = (kind, f) => (kind === "PayoutMade" ? f.payout.player : f.player);

  // --- one receipt ----------------------------------------------------------------------
  // What holds of it: {leaf, witnesses, dealt}; a `Failure` saying what does not.
  async function check(r, given) {
    if (!r || r.format !== "sabot-receipt-v1" || !Array.isArray(r.events) || !r.events.length) fail("receipts.why.format");
    const cp = r.checkpoint;
    const note = await signedCheckpoint(cp, r.checkpoint_note, given);
    const root = unhex(cp.root, "root");
    const tableId = await uuid5(TABLE_NAMESPACE, `table/${r.table.name}`);
    if (tableId !== r.table.id) fail("receipts.why.table", { table: r.table.name });
    const taille = { contributions: [] };
    const own = [], hands = {}, cards = [];
    let settled = null;
    for (const e of r.events) {
      const label = { event: e.event, leaf: e.leaf };
      const proof = (e.proof || []).map(p => unhex(p, "proof"));
      if (!await verifyInclusion(await eventLeaf(e), e.leaf, cp.size, root, proof)) fail("receipts.why.proof", label);
      let fields;
      try { fields = unpack(unhex(e.state, "state")); } catch (error) { fail("receipts.why.state", label); }
      if (!e.topic.endsWith(`.${e.event}`)) fail("receipts.why.topic", label);
      const differ = [...new Set([...Object.keys(fields), ...Object.keys(e.fields || {})])]
        .filter(k => stable(fields[k]) !== stable((e.fields || {})[k]));
      if (differ.length) fail("receipts.why.fields", { ...label, fields: differ.join(", ") });
      if (e.stream !== tableId) fail("receipts.why.table", { table: r.table.name });
      if (!SHOE.includes(e.event) && fields.coup !== r.coup) fail("receipts.why.coup", { ...label, coup: r.coup });
      if (OWN.includes(e.event)) {
        if (playerOf(e.event, fields) !== r.player) fail("receipts.why.not-yours", label);
        own.push([e.event, fields]);
      }
      if (e.event === "ShoeShuffled") Object.assign(taille, fields, { contributions: [], seed: null, cut: null });
      if (e.event === "EntropyContributed") taille.contributions.push(fields.entropy);
      if (e.event === "ShoeCut") taille.cut = fields.position;
      if (e.event === "ShoeSeedRevealed" && fields.taille === taille.taille) taille.seed = fields.seed;
      if (CARDS.includes(e.event)) {
        cards.push(fields);
        (hands[fields.side] = hands[fields.side] || []).push(fields.card);
      }
      if (e.event === "CoupSettled") settled = fields;
    }
    // Each witness listed co-signed; those the phone was given are counted (a checkpoint
    // fetched before the witnesses co-signed it holds, co-signed by fewer).
    const witnesses = [];
    for (const w of r.witnesses || []) {
      if (!await cosigned(note, w.name, unhex(w.public_key, "witness"))) fail("receipts.why.witness", { name: w.name, size: cp.size });
      if (given.witnesses.some(k => k.public_key === w.public_key)) witnesses.push(w.public_key);
    }
    if (!own.length) fail("receipts.why.none", { player: r.player });
    const bets = own.filter(([kind]) => kind === "BetPlaced" || kind === "StakePlaced")
      .map(([, f]) => ({ spot: f.spot || f.tableau, amount: f.amount }));
    bets.forEach((bet, n) => {
      const said = (r.mine.bets || [])[n] || {};
      if (said.amount !== bet.amount || said.spot !== bet.spot) {
        fail("receipts.why.amount", { said: money(said.amount), saidOn: theSide(said.spot),
                                      amount: money(bet.amount), the: theSide(bet.spot) });
      }
    });
    const paid = own.find(([kind]) => kind === "PayoutMade");
    const payout = paid ? { staked: paid[1].payout.staked, net: paid[1].payout.net, commission: paid[1].payout.commission } : null;
    if ((r.mine.bets || []).length !== bets.length || stable(r.mine.payout) !== stable(payout)) {
      fail("receipts.why.payout", { said: money((r.mine.payout || {}).net), net: money((payout || {}).net) });
    }
    const summary = { taille: taille.taille, algorithm: taille.algorithm, decks: taille.decks, commitment: taille.commitment,
                      contributions: taille.contributions, cut: taille.cut, seed: taille.seed };
    if (stable(summary) !== stable(r.shoe)) fail("receipts.why.shoe");
    let dealt = false;
    if (taille.seed !== null && !taille.physical) {
      const seed = unhex(taille.seed, "seed");
      if (hex(await sha256(seed)) !== taille.commitment) fail("receipts.why.commitment", { taille: taille.taille });
      const shoe = await shoeV1(seed, taille.contributions.map(c => unhex(c, "entropy")), taille.decks, taille.cut);
      for (const c of cards) {
        if (shoe[c.position] !== c.card) fail("receipts.why.card", { card: c.card, position: c.position, expected: shoe[c.position] || "–" });
      }
      dealt = true;
    }
    if (settled) {
      for (const [side, recorded] of Object.entries(settled.points)) {
        if (point(hands[side] || []) !== recorded) fail("receipts.why.points", { side, recorded, expected: point(hands[side] || []) });
      }
    }
    return { bets, payout, leaf: r.events.find(e => OWN.includes(e.event)).leaf, witnesses: witnesses.length, dealt };
  }

  function words(r, held) {
    const part = held.bets.map(b => t("receipts.bet", { amount: money(b.amount), the: theSide(b.spot) })).join(` ${t("and")} `) ||
      t("receipts.payout", { amount: money(held.payout ? held.payout.net : 0) });
    return t(held.dealt ? "receipts.holds" : "receipts.holds-unrevealed",
             { part, coup: r.coup, table: r.table.name, leaf: held.leaf, witnesses: held.witnesses });
  }

  // Does the record still hold `receipts` (already checked)? For each, "rewritten" when its
  // own events are no longer in the latest checkpoint, "diverged" when that checkpoint does
  // not extend the receipt's, else "holds"; and the latest checkpoint's size. One request a
  // checkpoint held (at most MAX_LEAVES leaves each), each answer's checkpoint checked against
  // the keys given (a `Failure` if it is not theirs).
  async function watch(receipts, given) {
    const seen = new Map();
    const held = {};
    for (const r of receipts) (held[`${r.checkpoint.size}/${r.checkpoint.root}`] ||= []).push(r);
    for (const group of Object.values(held)) {
      const { size, root } = group[0].checkpoint;
      const leaves = [...new Set(group.flatMap(r => r.events.map(e => e.leaf)))];
      const proved = new Map();
      let answer = null;
      for (let at = 0; at < leaves.length; at += MAX_LEAVES) {
        const chunk = leaves.slice(at, at + MAX_LEAVES);
        answer = await api(`/audit/consistency?from=${size}&leaves=${chunk.join(",")}`);
        await signedCheckpoint(answer.checkpoint, answer.checkpoint_note, given);
        chunk.forEach((leaf, n) => proved.set(leaf, [answer.checkpoint, answer.inclusions[n] || []]));
      }
      const latest = answer.checkpoint;
      const extended = await verifyConsistency(size, latest.size, unhex(root, "root"), unhex(latest.root, "root"),
                                               answer.proof.map(p => unhex(p, "proof")));
      for (const r of group) {
        let state = extended ? "holds" : "diverged";
        for (const e of r.events) {
          const [cp, proof] = proved.get(e.leaf);
          if (!await verifyInclusion(await eventLeaf(e), e.leaf, cp.size, unhex(cp.root, "root"),
                                     proof.map(p => unhex(p, "proof")))) {
            state = "rewritten";
            break;
          }
        }
        seen.set(r, { state, latest: latest.size });
      }
    }
    return seen;
  }

  // --- kept on the phone ------------------------------------------------------------------
  const storeKey = player => `sabot.receipts.${player}`;
  const kept = player => JSON.parse(localStorage.getItem(storeKey(player)) || "null") || { keys: null, receipts: {} };
  const keep = (player, value) => localStorage.setItem(storeKey(player), JSON.stringify(value));

  // Adds the receipts fetched to those kept: a coup's first receipt is kept (the one a
  // rewritten record would contradict), unless it awaited its seed and the new one has it.
  function merge(store, fetched) {
    if (!store.keys) store.keys = fetched.keys;  // the keys first given are the ones held to
    for (const r of fetched.receipts) {
      const id = `${r.table.id}/${r.coup}`;
      const old = store.receipts[id];
      if (!old || (old.shoe.seed === null && r.shoe.seed !== null)) store.receipts[id] = r;
    }
    return store;
  }

  // The installation's keys as the page first opens after signing in (GET /audit/checkpoints):
  // the operator's, and the witnesses who co-signed its latest checkpoint (each one's name from
  // its co-signature line); kept, unless the phone holds some already.
  async function pinKeys(player) {
    if (kept(player).keys) return;
    const record = await api("/audit/checkpoints?last=1");
    const latest = record.latest;
    const witnesses = !latest ? [] : record.cosignatures
      .filter(c => c.note_signature && c.size === latest.size && c.root === latest.root && c.time === latest.time)
      .map(c => ({ name: c.note_signature.replace(/^\u2014 /, "").split(" ")[0], key: c.witness, public_key: c.public_key }));
    const store = kept(player);  // as it is now: receipts may have come meanwhile
    if (!store.keys) keep(player, { ...store, keys: { operator: [{ key: record.key, public_key: record.public_key }], witnesses } });
  }

  const control = (id, key, cls) => el("button", t(key), cls, { id, type: "button" });

  // The panel, in `#receipts-panel` (the player's page): its title, what it does, its
  // buttons, what the checks say, and a line a receipt.
  function mount(player) {
    const panel = document.getElementById("receipts-panel");
    if (!panel || !player || panel.childElementCount) return;
    const title = el("h2", t("receipts.title"), null, { id: "receipts-title" });
    const buttons = el("div", null, "steps");
    buttons.append(control("receipts-open", "receipts.open"), control("receipts-check", "receipts.check", "secondary"),
                   control("receipts-download", "receipts.download", "secondary"));
    const state = el("p", null, null, { id: "receipts-state", role: "status", "aria-live": "polite" });
    const record = el("p", null, "error", { id: "receipts-record", role: "alert" });
    const list = el("ol", null, "log", { id: "receipts-list" });
    panel.append(title, el("p", t("receipts.about"), "limits"), buttons, state, record, list);
    panel.setAttribute("aria-labelledby", "receipts-title");
    panel.hidden = false;
    let shown = null;  // the receipts last checked: kept, and any the phone had no room for

    async function show(fetch) {
      let store = kept(player);
      list.replaceChildren();
      record.textContent = "";
      if (!subtle) { state.textContent = t("receipts.no-crypto"); return; }
      let full = false;
      if (fetch) {
        try {
          store = merge(store, await api("/me/receipts"));
        } catch (error) {
          state.textContent = t("receipts.not-fetched", { reason: error.message });
        }
        try { keep(player, store); } catch (error) { full = true; }  // the storage's quota
      }
      shown = store;
      const receipts = Object.values(store.receipts).sort((a, b) => a.table.name.localeCompare(b.table.name) || a.coup - b.coup);
      if (!receipts.length) { state.textContent = t("receipts.none"); return; }
      const items = [];
      for (const r of receipts) {
        const item = el("li", t("receipts.checking", { coup: r.coup, table: r.table.name }), "receipt", { "data-coup": `${r.table.name}/${r.coup}` });
        list.append(item);
        try {
          item.textContent = words(r, await check(r, store.keys));
          item.className = "receipt ok";
          items.push([r, item]);
        } catch (error) {
          item.textContent = t("receipts.fails", { coup: r.coup, table: r.table.name, reason: error instanceof Failure ? error.message : String(error) });
          item.className = "receipt bad";
        }
      }
      state.textContent = t("receipts.checked", { count: receipts.length, good: items.length }) +
        (full ? ` ${t("receipts.full")}` : "");
      let seen;
      try {
        seen = await watch(items.map(([r]) => r), store.keys);
      } catch (error) {
        record.textContent = error instanceof Failure ? error.message : t("receipts.offline");
        return;
      }
      for (const [r, item] of items) {
        const { state: found, latest } = seen.get(r);
        if (found === "rewritten") {
          item.textContent = t("receipts.rewritten", { coup: r.coup, table: r.table.name, held: r.checkpoint.size, latest });
          item.className = "receipt bad";
        } else if (found === "diverged") {
          record.textContent = t("receipts.record-rewritten", { held: r.checkpoint.size, latest });
        }
      }
    }

    // One check at a time: the buttons wait while one runs.
    const checks = [...buttons.querySelectorAll("button")].slice(0, 2);
    async function run(fetch) {
      checks.forEach(b => { b.disabled = true; });
      try { await show(fetch); } finally { checks.forEach(b => { b.disabled = false; }); }
    }
    checks[0].addEventListener("click", () => run(true));
    checks[1].addEventListener("click", () => run(false));
    if (Object.keys(kept(player).receipts).length) run(false);  // a later visit: watch the record
    else pinKeys(player).catch(() => {});  // signed in: the keys to hold the receipts to
    document.getElementById("receipts-download").addEventListener("click", () => {
      const store = shown || kept(player);
      const file = { format: "sabot-receipts-v1", player, keys: store.keys, receipts: Object.values(store.receipts) };
      const link = el("a", null, null, { download: `sabot-receipts-${player}-${new Date().toISOString().slice(0, 10)}.json` });
      link.href = URL.createObjectURL(new Blob([JSON.stringify(file)], { type: "application/json" }));
      link.click();
      URL.revokeObjectURL(link.href);
    });
  }

  return { mount, check, shoeV1, unpack };
})();
