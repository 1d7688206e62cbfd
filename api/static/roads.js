// The scoreboards drawn from GET /tables/{table}/roads: for each tableau the bead road, the big
// road (ties as a slash and a count on the cell) and the three derived roads, each on a grid six
// rows high, the latest columns that fit. The cells' places come from the API (dragon's tails
// included); this only draws them, named in the page's language.
"use strict";

const Roads = (() => {
  const { el, t } = Sabot;
  const LETTER = { banker: t("road.letter-banker"), punter: t("road.letter-punter"),
                   tie: t("road.letter-tie") };
  const NAMES = { big_eye_boy: t("road.big-eye-boy"), small_road: t("road.small-road"),
                  cockroach_pig: t("road.cockroach-pig") };

  // Draw `cells` ({column, row, ...}) into a grid box, keeping the last columns that fit.
  function grid(name, cells, size, draw) {
    const box = el("figure", null, `road ${size}`);
    box.append(el("figcaption", name));
    const area = el("div", null, "cells", { role: "img" });
    box.append(area);
    area.setAttribute("aria-label", t("road.entries", { name, count: cells.length }));
    requestAnimationFrame(() => {
      const cell = area.clientHeight / 6;
      const fits = Math.max(1, Math.floor(area.clientWidth / cell));
      const last = cells.reduce((m, c) => Math.max(m, c.column), -1);
      const first = Math.max(0, last - fits + 1);
      area.replaceChildren(...cells.filter(c => c.column >= first).map(c => {
        const node = draw(c);
        node.style.gridColumn = String(c.column - first + 1);
        node.style.gridRow = String(c.row + 1);
        return node;
      }));
    });
    return box;
  }

  function board(b, many) {
    const box = el("div", null, "scoreboard");
    if (many) box.append(el("h2", `${Sabot.side(b.tableau)}`));
    const bead = b.bead.map((r, i) => ({ ...r, column: Math.floor(i / 6), row: i % 6 }));
    box.append(grid(t("road.bead"), bead, "full bead-road", r => {
      const node = el("span", LETTER[r.outcome], `bead ${r.outcome}`);
      if (r.punter_pair) node.classList.add("ppair");
      if (r.banker_pair) node.classList.add("bpair");
      return node;
    }));
    box.append(grid(t("road.big"), b.big_cells, "full big-road", c => {
      const node = el("span", c.ties ? String(c.ties) : "", `ring ${c.mark}`);
      if (c.ties) node.classList.add("tied");
      return node;
    }));
    const derived = el("div", null, "derived");
    for (const [key, name] of Object.entries(NAMES)) {
      derived.append(grid(name, b[key].cells, `half ${key}`,
                          c => el("span", "", `mark ${c.mark}`)));
    }
    box.append(derived);
    return box;
  }

  function render(node, roads) {
    const many = roads.boards.length > 1;
    node.classList.toggle("two", many);
    node.replaceChildren(...roads.boards.map(b => board(b, many)));
  }

  return { render };
})();
