/* ivytrace graph pages: layered drawing (dagre), pan and zoom, module groups that
 * collapse and expand, search by op name, details of a node on hover and click.
 * The page's data is the JSON in <script id="ivt-data">; see ivytrace/viz/data.py. */
(function () {
  "use strict";

  const SVGNS = "http://www.w3.org/2000/svg";
  const SEP = "\u0001";
  const MAX_VISIBLE = 80; // items drawn at first; groups beyond that start collapsed
  const READABLE_K = 0.85; // the least first-view scale: 11 px labels drawn at 9.4 px
  const CHAR_W = 6.6;

  function svg(tag, attrs, parent) {
    const e = document.createElementNS(SVGNS, tag);
    if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function html(tag, cls, text, parent) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function clip(s, n) {
    s = String(s || "");
    return s.length > n ? s.slice(0, n - 1) + "\u2026" : s;
  }

  /* One drawn graph: a toolbar, an SVG canvas and a details panel inside `host`. */
  class View {
    constructor(host, data, opts) {
      this.host = host;
      this.data = data;
      this.opts = opts || {};
      this.nodes = data.nodes;
      this.edges = data.edges;
      this.showGhosts = true;
      this.plumbCount = this.nodes.filter((n) => n.plumb).length;
      // Reads that only walk to a sub-module (self._modules['encoder']) are plumbing:
      // hidden by default when there are many of them.
      this.showPlumbing = this.plumbCount <= 40;
      this.selected = -1;
      this.matches = [];
      this.matchPos = -1;
      this.layoutMs = 0;
      this.pos = new Map();
      this.t = { x: 0, y: 0, k: 1 };
      this.onSelect = null;
      this.buildGroups();
      this.buildDom();
      this.initialCollapse();
    }

    /* ---- module groups ------------------------------------------------- */
    buildGroups() {
      const root = { key: "", path: [], parent: null, children: [], items: [], count: 0, depth: 0 };
      const groups = new Map([["", root]]);
      this.nodes.forEach((n, i) => {
        let g = root;
        root.count++;
        const anc = [];
        const mod = n.mod || [];
        for (let d = 1; d <= mod.length; d++) {
          const key = mod.slice(0, d).join(SEP);
          let c = groups.get(key);
          if (!c) {
            c = { key, path: mod.slice(0, d), parent: g, children: [], items: [], count: 0, depth: d };
            groups.set(key, c);
            g.children.push(c);
          }
          c.count++;
          anc.push(c);
          g = c;
        }
        g.items.push(i);
        n._anc = anc;
      });
      // A group holding nothing but one sub-group is drawn as that sub-group.
      for (const g of groups.values()) {
        g.through = g !== root && g.items.length === 0 && g.children.length === 1;
      }
      for (const g of groups.values()) {
        let p = g.parent;
        while (p && p.through) p = p.parent;
        g.shown = p; // nearest ancestor that is drawn
        g.label = p ? g.path.slice(p.path.length).join(".") : "";
      }
      this.root = root;
      this.groups = groups;
      this.collapsed = new Set();
    }

    /* The drawn item a node belongs to: itself, or its outermost collapsed group. */
    itemOf(i) {
      const n = this.nodes[i];
      if (n.status && !this.showGhosts) return null;
      if (n.plumb && !this.showPlumbing) return null;
      for (const g of n._anc) {
        if (!g.through && this.collapsed.has(g.key)) return "g" + g.key;
      }
      return "n" + i;
    }

    visibleCount() {
      const seen = new Set();
      for (let i = 0; i < this.nodes.length; i++) {
        const it = this.itemOf(i);
        if (it) seen.add(it);
      }
      return seen.size;
    }

    /* Big graphs start with their module groups collapsed, then opened one level of
       nesting at a time while the drawing stays under MAX_VISIBLE items (the last
       level that does not fit is opened group by group, in order, as far as it fits). */
    initialCollapse() {
      if (this.visibleCount() <= MAX_VISIBLE) return;
      const drawn = [...this.groups.values()].filter((g) => g !== this.root && !g.through);
      for (const g of drawn) {
        let lv = 1;
        for (let p = g.shown; p && p !== this.root; p = p.shown) lv++;
        g.level = lv;
        this.collapsed.add(g.key);
      }
      const maxLevel = Math.max(0, ...drawn.map((g) => g.level));
      for (let lv = 1; lv <= maxLevel; lv++) {
        const level = drawn.filter((g) => g.level === lv);
        level.forEach((g) => this.collapsed.delete(g.key));
        if (this.visibleCount() <= MAX_VISIBLE) continue;
        level.forEach((g) => this.collapsed.add(g.key));
        for (const g of level) {
          this.collapsed.delete(g.key);
          if (this.visibleCount() > MAX_VISIBLE) {
            this.collapsed.add(g.key);
            break;
          }
        }
        break;
      }
    }

    expandAll() {
      this.collapsed.clear();
      this.render();
    }

    collapseAll() {
      for (const g of this.groups.values()) if (g !== this.root && !g.through) this.collapsed.add(g.key);
      this.render();
    }

    reveal(i) {
      let changed = false;
      for (const g of this.nodes[i]._anc) {
        if (this.collapsed.delete(g.key)) changed = true;
      }
      if (this.nodes[i].plumb && !this.showPlumbing) {
        this.showPlumbing = true;
        if (this.plumbBox) this.plumbBox.checked = true;
        changed = true;
      }
      if (this.nodes[i].status && !this.showGhosts) {
        this.showGhosts = true;
      this.plumbCount = this.nodes.filter((n) => n.plumb).length;
      // Reads that only walk to a sub-module (self._modules['encoder']) are plumbing:
      // hidden by default when there are many of them.
      this.showPlumbing = this.plumbCount <= 40;
        if (this.ghostBox) this.ghostBox.checked = true;
        changed = true;
      }
      return changed;
    }

    /* ---- DOM ------------------------------------------------------------ */
    buildDom() {
      const host = this.host;
      host.classList.add("ivt-view");
      const bar = html("div", "ivt-toolbar", null, host);
      html("span", "ivt-title", this.data.title, bar);
      const c = this.data.counts;
      html(
        "span",
        "ivt-counts",
        `${c.nodes} nodes \u00b7 ${c.inputs} inputs \u00b7 ${c.outputs} outputs \u00b7 ${c.constants} constants`,
        bar
      );
      const search = html("input", "ivt-search", null, bar);
      search.type = "search";
      search.placeholder = "search op\u2026";
      this.searchBox = search;
      const hits = html("span", "ivt-hits", "", bar);
      this.hitsLabel = hits;
      const btn = (label, title, fn, cls) => {
        const b = html("button", "ivt-btn" + (cls ? " " + cls : ""), label, bar);
        b.title = title;
        b.type = "button";
        b.addEventListener("click", fn);
        return b;
      };
      btn("\u25b2", "previous match", () => this.step(-1), "ivt-prev");
      btn("\u25bc", "next match (Enter)", () => this.step(1), "ivt-next");
      btn("expand all", "expand every module group", () => this.expandAll(), "ivt-expand-all");
      btn("collapse all", "collapse every module group", () => this.collapseAll(), "ivt-collapse-all");
      btn("fit", "fit the graph to the window", () => this.fit(), "ivt-fit");
      if (this.plumbCount) {
        const lab = html("label", "ivt-ghosts ivt-plumbing", null, bar);
        const cb = html("input", null, null, lab);
        cb.type = "checkbox";
        cb.checked = this.showPlumbing;
        lab.appendChild(document.createTextNode(` module reads (${this.plumbCount})`));
        lab.title = "show the attribute and item reads that walk from a module to its sub-modules";
        cb.addEventListener("change", () => {
          this.showPlumbing = cb.checked;
          this.render();
        });
        this.plumbBox = cb;
      }
      if (this.nodes.some((n) => n.status && n.status !== "new")) {
        const lab = html("label", "ivt-ghosts", null, bar);
        const cb = html("input", null, null, lab);
        cb.type = "checkbox";
        cb.checked = true;
        lab.appendChild(document.createTextNode(" show what the pass took out"));
        cb.addEventListener("change", () => {
          this.showGhosts = cb.checked;
          this.render();
        });
        this.ghostBox = cb;
      }
      search.addEventListener("input", () => this.search(search.value));
      search.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") this.step(ev.shiftKey ? -1 : 1);
      });

      const body = html("div", "ivt-body", null, host);
      const canvas = html("div", "ivt-canvas", null, body);
      this.canvas = canvas;
      this.svg = svg("svg", { class: "ivt-svg" }, canvas);
      const defs = svg("defs", null, this.svg);
      for (const [id, cls] of [["arrow", "ivt-arrow"], ["arrow-ghost", "ivt-arrow ghost"]]) {
        const m = svg(
          "marker",
          { id: this.uid(id), viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" },
          defs
        );
        svg("path", { d: "M0,0 L10,5 L0,10 z", class: cls }, m);
      }
      this.viewport = svg("g", { class: "ivt-viewport" }, this.svg);
      this.details = html("div", "ivt-details", null, body);
      html("div", "ivt-hint", "Hover or click a node for its call and source line. Click a grey group box to expand it, a group's title to collapse it. Drag to pan, wheel to zoom.", this.details);
      this.tip = html("div", "ivt-tip", null, canvas);
      this.tip.style.display = "none";
      this.bindCanvas();
    }

    uid(name) {
      if (!this._uid) this._uid = "v" + Math.random().toString(36).slice(2, 8);
      return this._uid + "-" + name;
    }

    bindCanvas() {
      const s = this.svg;
      let drag = null;
      s.addEventListener("mousedown", (ev) => {
        if (ev.button !== 0) return;
        drag = { x: ev.clientX, y: ev.clientY, tx: this.t.x, ty: this.t.y, moved: false };
      });
      window.addEventListener("mousemove", (ev) => {
        if (!drag) return;
        const dx = ev.clientX - drag.x;
        const dy = ev.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
        this.t.x = drag.tx + dx;
        this.t.y = drag.ty + dy;
        this.applyTransform();
      });
      window.addEventListener("mouseup", () => {
        if (drag && drag.moved) this.justDragged = true;
        drag = null;
      });
      s.addEventListener(
        "wheel",
        (ev) => {
          ev.preventDefault();
          const r = s.getBoundingClientRect();
          const mx = ev.clientX - r.left;
          const my = ev.clientY - r.top;
          const f = Math.exp(-ev.deltaY * 0.0015);
          const k = Math.min(4, Math.max(0.02, this.t.k * f));
          this.t.x = mx - ((mx - this.t.x) * k) / this.t.k;
          this.t.y = my - ((my - this.t.y) * k) / this.t.k;
          this.t.k = k;
          this.applyTransform();
        },
        { passive: false }
      );
      s.addEventListener("click", (ev) => {
        if (this.justDragged) {
          this.justDragged = false;
          return;
        }
        const g = ev.target.closest("[data-item]");
        if (!g) return;
        const item = g.getAttribute("data-item");
        if (g.classList.contains("ivt-group")) {
          this.collapsed.delete(item.slice(1));
          this.render(item);
        } else if (g.classList.contains("ivt-cluster-label")) {
          this.collapsed.add(item.slice(1));
          this.render(item);
        } else {
          this.select(+item.slice(1), false);
        }
      });
      s.addEventListener("mouseover", (ev) => {
        const g = ev.target.closest(".ivt-node");
        if (!g) return;
        this.showTip(+g.getAttribute("data-item").slice(1), ev);
      });
      s.addEventListener("mousemove", (ev) => {
        if (this.tip.style.display !== "none") this.moveTip(ev);
      });
      s.addEventListener("mouseout", (ev) => {
        const g = ev.target.closest(".ivt-node");
        if (g && !(ev.relatedTarget && g.contains(ev.relatedTarget))) this.tip.style.display = "none";
      });
    }

    applyTransform() {
      this.viewport.setAttribute("transform", `translate(${this.t.x},${this.t.y}) scale(${this.t.k})`);
    }

    /* ---- layout and drawing -------------------------------------------- */
    size(n) {
      const label = clip(n.label, 34);
      const out = clip(n.out, 34);
      const structural = n.fw === "ivytrace" && n.kind === "state";
      const chars = Math.max(label.length, out.length);
      const w = Math.max(structural ? 50 : 70, Math.min(250, chars * CHAR_W + 20));
      const h = out && !structural ? 36 : 22;
      return { w, h, label, out: structural ? "" : out };
    }

    render(focusItem) {
      const t0 = performance.now();
      const g = new dagre.graphlib.Graph({ compound: true });
      g.setGraph({ rankdir: "TB", nodesep: 14, ranksep: 26, edgesep: 6, marginx: 16, marginy: 16, ranker: "network-simplex" });
      g.setDefaultEdgeLabel(() => ({}));
      const items = new Map(); // item id -> {type, ...}
      const clusters = new Set();
      const parentOf = (anc) => {
        for (let d = anc.length - 1; d >= 0; d--) {
          const a = anc[d];
          if (!a.through) return a;
        }
        return null;
      };
      const ensureCluster = (grp) => {
        // grp is an expanded, drawn group: make it (and its drawn ancestors) a cluster
        const id = "c" + grp.key;
        if (clusters.has(id)) return id;
        clusters.add(id);
        g.setNode(id, { label: grp.label, clusterLabelPos: "top", paddingTop: 18 });
        const up = grp.shown;
        if (up && up !== this.root) g.setParent(id, ensureCluster(up));
        return id;
      };
      for (let i = 0; i < this.nodes.length; i++) {
        const id = this.itemOf(i);
        if (!id || items.has(id)) continue;
        if (id[0] === "n") {
          const n = this.nodes[i];
          const sz = this.size(n);
          items.set(id, { type: "node", i, sz });
          g.setNode(id, { width: sz.w, height: sz.h });
          const p = parentOf(n._anc);
          if (p) g.setParent(id, ensureCluster(p));
        } else {
          const grp = this.groups.get(id.slice(1));
          const label = clip(grp.label, 40);
          const w = Math.max(110, Math.min(300, label.length * CHAR_W + 30));
          items.set(id, { type: "group", grp, sz: { w, h: 38 } });
          g.setNode(id, { width: w, height: 38 });
          const p = grp.shown;
          if (p && p !== this.root) g.setParent(id, ensureCluster(p));
        }
      }
      const edgeSet = new Map();
      for (const e of this.edges) {
        const a = this.itemOf(e[0]);
        const b = this.itemOf(e[1]);
        if (!a || !b || a === b) continue;
        const key = a + ">" + b;
        const prev = edgeSet.get(key);
        if (prev) {
          prev.n++;
          if (!e[3]) prev.cls = "";
          continue;
        }
        edgeSet.set(key, { a, b, label: e[2], cls: e[3], n: 1 });
        g.setEdge(a, b);
      }
      dagre.layout(g);
      this.layoutMs = performance.now() - t0;
      this.draw(g, items, clusters, edgeSet);
      this.graphSize = { w: g.graph().width || 100, h: g.graph().height || 100 };
      this.renderMs = performance.now() - t0;
      this.visible = items.size;
      this.applyMatches();
      if (focusItem && this.pos.has(focusItem)) this.centerOn(focusItem);
      else if (focusItem === undefined) this.home();
      if (this.selected >= 0) this.markSelected();
    }

    draw(g, items, clusters, edgeSet) {
      const vp = this.viewport;
      while (vp.firstChild) vp.removeChild(vp.firstChild);
      this.pos = new Map();
      this.elements = new Map();
      const lc = svg("g", { class: "ivt-clusters" }, vp);
      const le = svg("g", { class: "ivt-edges" }, vp);
      const ln = svg("g", { class: "ivt-nodes" }, vp);
      for (const id of clusters) {
        const c = g.node(id);
        if (!c || c.width === undefined) continue;
        const grp = this.groups.get(id.slice(1));
        const gg = svg("g", { class: "ivt-cluster", "data-group": grp.path.join(".") }, lc);
        svg("rect", { x: c.x - c.width / 2, y: c.y - c.height / 2, width: c.width, height: c.height, rx: 6 }, gg);
        const tl = svg("text", { x: c.x - c.width / 2 + 8, y: c.y - c.height / 2 + 13, class: "ivt-cluster-label", "data-item": id }, gg);
        tl.textContent = "\u25be " + grp.label;
        const title = svg("title", null, gg);
        title.textContent = grp.path.join(".") + ` (${grp.count} nodes): click the title to collapse`;
      }
      for (const e of edgeSet.values()) {
        const ed = g.edge(e.a, e.b);
        if (!ed || !ed.points) continue;
        const pts = ed.points;
        let d = `M${pts[0].x},${pts[0].y}`;
        for (let k = 1; k < pts.length - 1; k++) {
          const mx = (pts[k].x + pts[k + 1].x) / 2;
          const my = (pts[k].y + pts[k + 1].y) / 2;
          d += ` Q${pts[k].x},${pts[k].y} ${k === pts.length - 2 ? pts[k + 1].x : mx},${k === pts.length - 2 ? pts[k + 1].y : my}`;
        }
        if (pts.length === 2) d += ` L${pts[1].x},${pts[1].y}`;
        const ghost = e.cls === "ghost" || e.cls === "merge";
        const p = svg("path", { d, class: "ivt-edge" + (e.cls ? " " + e.cls : ""), "marker-end": `url(#${this.uid(ghost ? "arrow-ghost" : "arrow")})` }, le);
        const title = svg("title", null, p);
        title.textContent = e.n > 1 ? `${e.n} values` : e.label;
      }
      for (const [id, it] of items) {
        const nd = g.node(id);
        this.pos.set(id, { x: nd.x, y: nd.y });
        const x = nd.x - it.sz.w / 2;
        const y = nd.y - it.sz.h / 2;
        if (it.type === "node") {
          const n = this.nodes[it.i];
          let cls = `ivt-node k-${n.kind} fw-${n.fw || "none"}`;
          if (n.status) cls += ` st-${n.status}`;
          if (n.inplace) cls += " inplace";
          if (n.ann) cls += ` ann-${n.ann.level}`;
          const attrs = { class: cls, "data-item": id, "data-kind": n.kind };
          if (n.ir !== undefined) attrs["data-ir"] = n.ir;
          if (n.status) attrs["data-status"] = n.status;
          const gg = svg("g", attrs, ln);
          svg("rect", { x, y, width: it.sz.w, height: it.sz.h, rx: n.kind === "input" || n.kind === "output" ? 12 : 4 }, gg);
          const t1 = svg("text", { x: nd.x, y: it.sz.out ? y + 14 : y + 15, class: "ivt-label" }, gg);
          t1.textContent = it.sz.label;
          if (it.sz.out) {
            const t2 = svg("text", { x: nd.x, y: y + 28, class: "ivt-spec" }, gg);
            t2.textContent = it.sz.out;
          }
          if (n.ann) {
            svg("circle", { cx: x + it.sz.w - 2, cy: y + 2, r: 5, class: "ivt-badge" }, gg);
          }
          this.elements.set(id, gg);
        } else {
          const grp = it.grp;
          const gg = svg("g", { class: "ivt-group", "data-item": id, "data-group": grp.path.join("."), "data-count": grp.count }, ln);
          svg("rect", { x, y, width: it.sz.w, height: it.sz.h, rx: 6 }, gg);
          const t1 = svg("text", { x: nd.x, y: y + 15, class: "ivt-label" }, gg);
          t1.textContent = "\u25b8 " + clip(grp.label, 40);
          const t2 = svg("text", { x: nd.x, y: y + 29, class: "ivt-spec" }, gg);
          t2.textContent = `${grp.count} nodes`;
          const title = svg("title", null, gg);
          title.textContent = grp.path.join(".") + ": click to expand";
          this.elements.set(id, gg);
        }
      }
    }

    /* The whole graph in the window. */
    fit() {
      const r = this.canvas.getBoundingClientRect();
      const W = Math.max(r.width, 100);
      const H = Math.max(r.height, 100);
      const gs = this.graphSize || { w: 100, h: 100 };
      const k = Math.max(0.02, Math.min(1.2, (W - 20) / gs.w, (H - 20) / gs.h));
      this.t = { k, x: (W - gs.w * k) / 2, y: Math.max(10, (H - gs.h * k) / 2) };
      this.applyTransform();
    }

    /* The first view: the whole graph when it is readable so, else its top (the
       inputs) at a readable size (labels at READABLE_K of their size or more). */
    home() {
      this.fit();
      if (this.t.k >= READABLE_K) return;
      const r = this.canvas.getBoundingClientRect();
      const gs = this.graphSize || { w: 100, h: 100 };
      const k = Math.max(READABLE_K, Math.min(1, (r.width - 20) / gs.w));
      // start where the data comes in: the first input (else the topmost box)
      let start = null;
      this.nodes.forEach((n, i) => {
        const p = this.pos.get("n" + i);
        if (p && n.kind === "input" && !start) start = p;
      });
      if (!start) for (const p of this.pos.values()) if (!start || p.y < start.y) start = p;
      if (!start) start = { x: gs.w / 2, y: 0 };
      const x = r.width / 2 - start.x * k;
      this.t = { k, x: Math.min(10, Math.max(r.width - 10 - gs.w * k, x)), y: 40 - start.y * k };
      this.applyTransform();
    }

    /* A window resize keeps the scale the reader chose (a re-fit would shrink the labels
       of a big graph to a few pixels) and keeps the centre of the view where it was. */
    keepOnResize() {
      const r = this.canvas.getBoundingClientRect();
      const last = this.lastSize;
      this.lastSize = { w: r.width, h: r.height };
      if (!last || !this.t) return;
      this.t = { k: this.t.k, x: this.t.x + (r.width - last.w) / 2, y: this.t.y + (r.height - last.h) / 2 };
      this.applyTransform();
    }

    centerOn(id) {
      const p = this.pos.get(id);
      if (!p) return;
      const r = this.canvas.getBoundingClientRect();
      const k = Math.max(this.t.k, 0.8);
      this.t = { k, x: r.width / 2 - p.x * k, y: r.height / 2 - p.y * k };
      this.applyTransform();
    }

    /* ---- search --------------------------------------------------------- */
    search(q) {
      q = q.trim().toLowerCase();
      this.query = q;
      this.matches = [];
      if (q) {
        this.nodes.forEach((n, i) => {
          if ((n.op && n.op.toLowerCase().includes(q)) || (n.label && n.label.toLowerCase().includes(q))) {
            if ((!n.status || this.showGhosts) && (!n.plumb || this.showPlumbing)) this.matches.push(i);
          }
        });
      }
      this.matchPos = -1;
      this.hitsLabel.textContent = q ? `${this.matches.length} match${this.matches.length === 1 ? "" : "es"}` : "";
      this.applyMatches();
    }

    applyMatches() {
      if (!this.elements) return;
      for (const el of this.elements.values()) {
        el.classList.remove("match");
        el.removeAttribute("data-matches");
      }
      const per = new Map();
      for (const i of this.matches) {
        const id = this.itemOf(i);
        if (id) per.set(id, (per.get(id) || 0) + 1);
      }
      for (const [id, n] of per) {
        const el = this.elements.get(id);
        if (!el) continue;
        el.classList.add("match");
        if (id[0] === "g") el.setAttribute("data-matches", n);
      }
    }

    step(dir) {
      if (!this.matches.length) return;
      this.matchPos = (this.matchPos + dir + this.matches.length) % this.matches.length;
      const i = this.matches[this.matchPos];
      this.hitsLabel.textContent = `${this.matchPos + 1} / ${this.matches.length}`;
      this.select(i, true);
    }

    /* ---- details -------------------------------------------------------- */
    select(i, center) {
      this.selected = i;
      if (this.reveal(i)) this.render("n" + i);
      else if (center) this.centerOn("n" + i);
      this.markSelected();
      this.fillDetails(i);
      if (this.onSelect) this.onSelect(i);
    }

    highlight(list) {
      // mark nodes (indices) from another view's selection
      if (!this.elements) return;
      for (const el of this.elements.values()) el.classList.remove("linked");
      let changed = false;
      for (const i of list) if (this.reveal(i)) changed = true;
      if (changed) this.render(list.length ? "n" + list[0] : null);
      for (const i of list) {
        const el = this.elements.get("n" + i);
        if (el) el.classList.add("linked");
      }
      if (list.length) this.centerOn("n" + list[0]);
    }

    markSelected() {
      if (!this.elements) return;
      for (const el of this.elements.values()) el.classList.remove("selected");
      const el = this.elements.get("n" + this.selected);
      if (el) el.classList.add("selected");
    }

    describe(n, box, full) {
      const row = (k, v, cls) => {
        if (v === undefined || v === null || v === "") return;
        const r = html("div", "ivt-row", null, box);
        html("span", "ivt-key", k, r);
        html("span", "ivt-val" + (cls ? " " + cls : ""), v, r);
      };
      html("div", "ivt-dtitle k-" + n.kind, n.op || n.label, box);
      const kind = n.kind === "op" ? `${n.fw} op` : n.kind;
      row("kind", kind + (n.inplace ? " (in place)" : "") + (n.generator ? " (draws random numbers)" : ""));
      if (n.status) row("pass", { removed: "removed: nothing needed it", merged: "merged into an equal earlier call", cached: "cached: computed once into a constant", new: "new in this pass" }[n.status], "st");
      row("output", n.out);
      row("call", n.call, "mono");
      if (n.src) {
        row("source", `${n.src.base}:${n.src.line}` + (n.src.fn ? ` in ${n.src.fn}` : ""));
        if (n.src.code) row("", n.src.code, "mono code");
        if (full) row("file", n.src.file, "small");
      }
      row("note", n.note);
      if (n.mod && n.mod.length) row("module", n.mod.join("."));
      if (n.ann) row("check", n.ann.text, "ann-" + n.ann.level);
      if (n.ir !== undefined && full) row("node", `#${n.ir}`);
    }

    fillDetails(i) {
      const box = this.details;
      box.textContent = "";
      this.describe(this.nodes[i], box, true);
      if (this.extraDetails) this.extraDetails(i, box);
    }

    showTip(i, ev) {
      const tip = this.tip;
      tip.textContent = "";
      this.describe(this.nodes[i], tip, false);
      tip.style.display = "block";
      this.moveTip(ev);
    }

    moveTip(ev) {
      const r = this.canvas.getBoundingClientRect();
      let x = ev.clientX - r.left + 14;
      const y = ev.clientY - r.top + 14;
      if (x + 380 > r.width) x = Math.max(0, ev.clientX - r.left - 390);
      this.tip.style.left = x + "px";
      this.tip.style.top = y + "px";
    }
  }

  /* ---- pages ---------------------------------------------------------- */
  function legend(parent) {
    const box = html("div", "ivt-legend", null, parent);
    const kinds = [
      ["k-input", "input"],
      ["k-op fw-torch", "torch"],
      ["k-op fw-tensorflow", "tensorflow"],
      ["k-op fw-jax", "jax"],
      ["k-op fw-numpy", "numpy"],
      ["k-op fw-python", "python"],
      ["k-constant", "constant / cached"],
      ["k-generator", "generator"],
      ["k-guard", "guard"],
      ["k-state", "state read / write"],
      ["k-external", "external object"],
      ["k-output", "output"],
      ["ivt-groupkey", "module group"],
    ];
    for (const [cls, label] of kinds) {
      const it = html("span", "ivt-key-item", null, box);
      html("span", "ivt-swatch " + cls, null, it);
      it.appendChild(document.createTextNode(label));
    }
    return box;
  }

  function graphPage(root, data) {
    legend(root);
    const host = html("div", "ivt-main", null, root);
    const v = new View(host, data.view);
    v.render();
    return [v];
  }

  function historyTable(parent, history, onPick) {
    const t = html("table", "ivt-history", null, parent);
    const head = html("tr", null, null, t);
    for (const h of ["pass", "ms", "nodes", "what it did"]) html("th", null, h, head);
    history.forEach((r, k) => {
      const tr = html("tr", null, null, t);
      html("td", "mono", r.name, tr);
      html("td", "num", r.ms.toFixed(2), tr);
      html("td", "num", `${r.before} \u2192 ${r.after}`, tr);
      html("td", null, r.note, tr);
      if (onPick) {
        tr.classList.add("pick");
        tr.addEventListener("click", () => onPick(k + 1));
      }
    });
    return t;
  }

  function pipelinePage(root, data) {
    legend(root);
    const strip = html("div", "ivt-stages", null, root);
    const info = html("div", "ivt-stage-info", null, root);
    const host = html("div", "ivt-main", null, root);
    const views = [];
    const buttons = [];
    const show = (k) => {
      buttons.forEach((b, j) => b.classList.toggle("active", j === k));
      views.forEach((v, j) => {
        if (v) v.host.style.display = j === k ? "" : "none";
      });
      if (!views[k]) {
        const div = html("div", "ivt-stage", null, host);
        div.setAttribute("data-stage", k);
        const v = new View(div, data.stages[k]);
        views[k] = v;
        window.ivytrace.views[k] = v;
        v.render();
      }
      const st = data.stages[k];
      info.textContent = "";
      if (k === 0) {
        html("span", null, `The graph as recorded: ${st.counts.nodes} nodes, before any pass.`, info);
      } else {
        const r = st.history[st.history.length - 1];
        const ch = st.changes;
        html("b", "mono", r.name, info);
        html("span", null, ` took ${r.ms.toFixed(2)} ms, ${r.before} \u2192 ${r.after} nodes: ${r.note}. `, info);
        const mk = (cls, n, word) => {
          const s = html("span", "ivt-chip " + cls, `${n} ${word}`, info);
          s.setAttribute("data-n", n);
        };
        mk("st-removed", ch.removed, "removed");
        mk("st-merged", ch.merged, "merged");
        mk("st-cached", ch.cached, "cached");
      }
      root.setAttribute("data-stage", k);
    };
    data.stages.forEach((st, k) => {
      const b = html("button", "ivt-stage-btn", null, strip);
      b.type = "button";
      b.setAttribute("data-stage", k);
      const name = k === 0 ? "traced" : st.pass;
      html("span", "mono", name, b);
      html("span", "ivt-stage-n", `${st.counts.nodes} nodes`, b);
      if (k > 0) {
        const r = st.history[st.history.length - 1];
        html("span", "ivt-stage-ms", `${r.ms.toFixed(1)} ms`, b);
      }
      b.addEventListener("click", () => show(k));
      buttons.push(b);
      if (k < data.stages.length - 1) html("span", "ivt-arrowtxt", "\u2192", strip);
      views.push(null);
    });
    const last = data.stages[data.stages.length - 1];
    const hist = html("details", "ivt-histbox", null, root);
    html("summary", null, "pass history (timings)", hist);
    historyTable(hist, last.history, show);
    window.ivytrace.showStage = show;
    show(data.stages.length - 1);
    return views;
  }

  function comparePage(root, data) {
    legend(root);
    const host = html("div", "ivt-main ivt-compare", null, root);
    const left = html("div", "ivt-pane", null, host);
    const right = html("div", "ivt-pane", null, host);
    const a = new View(left, data.view);
    const b = new View(right, data.compare);
    const fwd = new Map();
    const back = new Map();
    for (const [s, ts] of data.mapping || []) {
      fwd.set(s, ts);
      for (const t of ts) {
        if (!back.has(t)) back.set(t, []);
        back.get(t).push(s);
      }
    }
    const irIndex = (view) => {
      const m = new Map();
      view.nodes.forEach((n, i) => {
        if (n.ir !== undefined && !n.status) m.set(n.ir, i);
      });
      return m;
    };
    const ia = irIndex(a);
    const ib = irIndex(b);
    a.onSelect = (i) => {
      const n = a.nodes[i];
      b.highlight((fwd.get(n.ir) || []).map((t) => ib.get(t)).filter((x) => x !== undefined));
    };
    b.onSelect = (i) => {
      const n = b.nodes[i];
      a.highlight((back.get(n.ir) || []).map((t) => ia.get(t)).filter((x) => x !== undefined));
    };
    a.render();
    b.render();
    const rows = data.table || [];
    if (rows.length) {
      const box = html("details", "ivt-histbox ivt-anntable", null, root);
      box.open = true;
      html("summary", null, `per-node mapping and checks (${rows.length})`, box);
      const t = html("table", "ivt-history", null, box);
      const head = html("tr", null, null, t);
      for (const h of [data.view.title, data.compare.title, "check"]) html("th", null, h, head);
      for (const r of rows) {
        const tr = html("tr", "pick", null, t);
        html("td", "mono", r.source, tr);
        html("td", "mono", r.target, tr);
        html("td", r.level ? "ann-" + r.level : null, r.text, tr);
        tr.addEventListener("click", () => {
          if (r.s !== null && ia.has(r.s)) a.select(ia.get(r.s), true);
          else if (r.t !== null && ib.has(r.t)) b.select(ib.get(r.t), true);
        });
      }
    }
    return [a, b];
  }

  function main() {
    const root = document.getElementById("ivt-root");
    window.ivytrace = { views: [], errors: [] };
    try {
      const data = JSON.parse(document.getElementById("ivt-data").textContent);
      let views;
      if (data.mode === "pipeline") views = pipelinePage(root, data);
      else if (data.mode === "compare") views = comparePage(root, data);
      else views = graphPage(root, data);
      if (data.mode !== "pipeline") window.ivytrace.views = views;
      window.ivytrace.data = data;
      window.ivytrace.views.forEach((v) => v && v.keepOnResize());
      window.addEventListener("resize", () => window.ivytrace.views.forEach((v) => v && v.keepOnResize()));
      document.documentElement.setAttribute("data-ivt-ready", "1");
    } catch (err) {
      const box = html("pre", "ivt-error", "ivytrace page failed: " + (err && err.stack ? err.stack : err), root);
      box.setAttribute("role", "alert");
      throw err;
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();
