// The viewer's page: a hash router over a few views, the memory list with search and filters,
// a memory's page, keyboard navigation and live updates (server-sent events).
import { TOKEN, api, badges, editing, editor, h, memoryCard, notice, refocus, typing, when } from "./lib.js";
import { consolidateView, fileView, reviewView, staleView, statsView } from "./views.js";
import { newView, sessionView, sessionsView } from "./pages.js";

const main = document.getElementById("main");
const state = { view: null, selected: 0, keys: {}, lastIds: new Set(), seq: 0, pending: false };

// --- routing ------------------------------------------------------------------------------

function route() {
  const hash = location.hash.slice(1) || "/";
  const [path, query] = hash.split("?");
  const params = new URLSearchParams(query || "");
  if (path.startsWith("/m/")) return { name: "memory", id: path.slice(3), params };
  if (path.startsWith("/s/")) return { name: "session", id: path.slice(3), params };
  const name = { "/": "list", "/review": "review", "/stale": "stale", "/consolidate": "consolidate",
    "/stats": "stats", "/file": "file", "/sessions": "sessions", "/new": "new" }[path];
  return { name: name || "list", params };
}

export function go(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

// A live refresh waits while someone types or edits: it would wipe what they typed.
function busy() {
  const tag = document.activeElement ? document.activeElement.tagName : "";
  return document.querySelector("form.editor") !== null || ["INPUT", "TEXTAREA", "SELECT"].includes(tag);
}

async function render({ live = false, force = false } = {}) {
  if (live && !force && busy()) {
    state.pending = true;
    if (editing()) notice("Memories changed on disk while you edit: if this one did, saving will be refused (your text stays).", "warn");
    return;
  }
  state.pending = false;
  const where = route();
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === (where.name === "session" ? "sessions" : where.name));
  }
  const views = { list: listView, memory: memoryView, review: reviewView, stale: staleView,
    consolidate: consolidateView, stats: statsView, file: fileView, sessions: sessionsView,
    session: sessionView, new: newView };
  const keys = {};
  const ctx = { params: where.params, id: where.id, go, live, select, keys, rerender: () => render({ live: true, force: true }) };
  const seq = ++state.seq; // a slower, older render must not overwrite a newer one
  try {
    const node = await views[where.name](ctx);
    if (seq !== state.seq) return;
    if (node) {
      main.replaceChildren(node);
      state.view = where.name;
      state.keys = keys;
      if (!live) state.selected = 0;
      select(state.selected, { focus: false });
      refocus();
    }
    document.body.dataset.view = where.name;
  } catch (err) {
    if (seq !== state.seq) return;
    main.replaceChildren(h("p", { class: "error", role: "alert" }, err.message));
    if (err.status === 401 || err.status === 403) notice("Run `local-recall ui` again: it opens the viewer with a fresh token.", "error");
  }
  await refreshCounts();
  if (seq === state.seq) document.body.dataset.ready = String(Date.now());
}

async function refreshCounts() {
  try {
    const counts = await api("/api/counts");
    document.getElementById("count-review").textContent = counts.unreviewed || "";
    document.getElementById("count-stale").textContent = counts.stale || "";
    const health = document.getElementById("health"); // failing extraction, on every page
    health.textContent = counts.extraction_warning || "";
    health.hidden = !counts.extraction_warning;
  } catch { /* the view itself reports errors */ }
}

// --- the list -------------------------------------------------------------------------------

function filterForm(params) {
  const input = (name, attrs = {}) => h("input", { name, value: params.get(name) || "", ...attrs });
  const select = (name, options) => {
    const node = h("select", { name }, options.map(([value, label]) => h("option", { value }, label)));
    node.value = params.get(name) || "";
    return node;
  };
  const form = h("form", { class: "filters", role: "search" },
    input("q", { type: "search", placeholder: "Search (hybrid, as the CLI)…", id: "search", "aria-label": "Search" }),
    select("kind", [["", "any kind"], ["episodic", "episodic"], ["thinking", "thinking"]]),
    select("review", [["", "any review state"], ["unreviewed", "unreviewed"], ["reviewed", "reviewed"]]),
    select("stale", [["", "stale or fresh"], ["stale", "stale"], ["fresh", "fresh"]]),
    input("scope", { placeholder: "scope: file:src/ or area:x", "aria-label": "Scope" }),
    input("since", { type: "date", "aria-label": "Since" }),
    input("until", { type: "date", "aria-label": "Until" }),
    input("session", { placeholder: "session id", "aria-label": "Source session" }),
    h("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [key, value] of new FormData(form)) if (value) next.set(key, value);
    go(`#/?${next}`);
  });
  form.addEventListener("change", (event) => {
    if (event.target.tagName === "SELECT") form.requestSubmit();
  });
  typing(form.querySelector("#search"), () => form.requestSubmit());
  return form;
}

async function listView({ params, live }) {
  const data = await api(`/api/memories?${params}`);
  const searching = data.search !== null;
  const ids = new Set(data.rows.map((row) => row.id));
  const fresh = live ? new Set([...ids].filter((id) => !state.lastIds.has(id))) : new Set();
  state.lastIds = ids;
  const rows = data.rows.map((m) => h("tr", { "data-id": m.id, class: fresh.has(m.id) ? "item new" : "item" },
    h("td", { class: "when" }, when(m.occurred_at)),
    h("td", {}, h("a", { href: `#/m/${m.id}`, class: "subject" }, m.subject),
      searching && m.snippet ? h("div", { class: "snippet" }, m.snippet) : null),
    h("td", {}, badges(m)),
    h("td", { class: "scope" }, m.applies_to),
    searching ? h("td", { class: "score" }, m.score.toFixed(3)) : null));
  const end = Math.min(data.offset + data.rows.length, data.total);
  const page = (delta) => {
    const next = new URLSearchParams(params);
    next.set("offset", Math.max(0, data.offset + delta * data.limit));
    go(`#/?${next}`);
  };
  const pager = h("div", { class: "pager" },
    h("button", { type: "button", id: "prev", disabled: data.offset === 0, onclick: () => page(-1) }, "← Newer"),
    h("span", { id: "range" }, data.total ? `${data.offset + 1}–${end} of ${data.total}` : "no memories"),
    h("button", { type: "button", id: "next", disabled: end >= data.total, onclick: () => page(1) }, "Older →"));
  const degraded = searching && data.search.degraded_reason
    ? h("p", { class: "degraded" }, `Search ran degraded: ${data.search.degraded_reason}`) : null;
  return h("section", { class: "list" }, filterForm(params), degraded,
    h("table", { class: "memories" },
      h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "Subject"), h("th", {}, "State"),
        h("th", {}, "Scope"), searching ? h("th", {}, "Score") : null)),
      h("tbody", {}, rows)),
    pager);
}

// --- one memory ------------------------------------------------------------------------------

// A path git renamed since the memory was written links to where the file is now.
function fileLink(path, moved) {
  const [old, now] = moved || [];
  const target = path === old ? now : path;
  return h("span", {}, h("a", { href: `#/file?path=${encodeURIComponent(target)}`, class: "file-link" }, target),
    target !== path ? h("span", { class: "hint renamed" }, ` (renamed from ${path})`) : null);
}

function provenanceBlock(m) {
  const p = m.provenance;
  const row = (label, value) => (value ? h("tr", {}, h("th", {}, label), h("td", {}, value)) : null);
  const files = p.files.length
    ? h("ul", { class: "files" }, p.files.map((f) => h("li", {}, fileLink(f, m.moved))))
    : null;
  const scopeFile = m.applies_to.startsWith("file:") ? m.applies_to.slice(5) : null;
  return h("table", { class: "provenance" },
    row("File", m.path), row("Commit", p.commit), row("Branch", p.branch), row("Session", p.session),
    row("Source", m.source),
    row("Anchors", files),
    scopeFile ? row("Scope file", fileLink(scopeFile, m.moved)) : null,
    row("Superseded by", p.superseded_by ? h("a", { href: `#/m/${p.superseded_by}` }, p.superseded_by) : null),
    row("Also claimed by", m.duplicates && m.duplicates.length
      ? h("span", { class: "error" }, `${m.duplicates.join(", ")} (not read; editing is refused, Delete removes them all)`)
      : null));
}

function transcriptBlock(id) {
  const block = h("section", { class: "transcript" }, h("h2", {}, "From the session"), h("p", { class: "hint" }, "Reading the transcript…"));
  api(`/api/memories/${id}/transcript`).then((t) => {
    const body = t.turns === null ? [h("p", { class: "hint" }, t.reason)]
      : t.turns.map((turn) => h("div", { class: `turn ${turn.role}` }, h("div", { class: "hint" }, `${turn.role} · ${when(turn.at)}`), h("pre", {}, turn.text)));
    block.replaceChildren(h("h2", {}, "From the session"), ...body);
  }).catch((err) => block.replaceChildren(h("h2", {}, "From the session"), h("p", { class: "error" }, err.message)));
  return block;
}

async function memoryView({ id, params }) {
  const m = await api(`/api/memories/${encodeURIComponent(id)}`);
  const container = h("section", { class: "memory-page" });
  const show = (mode) => {
    if (mode === "edit") {
      container.replaceChildren(editor(m, (saved) => { Object.assign(m, saved); notice("Saved."); show("view"); }, () => show("view")));
      return;
    }
    const act = async (path, body, after) => {
      try { await api(path, body); after(); } catch (err) { notice(err.message, "error"); }
    };
    const actions = h("div", { class: "actions" },
      m.editable ? h("button", { type: "button", id: "edit", onclick: () => show("edit") }, "Edit (e)") : null,
      m.unreviewed || m.disputed ? h("button", { type: "button", id: "accept", onclick: () => act("/api/review/accept", { ids: [m.id] }, () => render()) }, "Accept") : null,
      m.unreviewed || m.disputed ? h("button", { type: "button", id: "reject", onclick: () => act("/api/review/reject", { ids: [m.id] }, () => go("#/")) }, "Reject") : null,
      m.stale ? h("button", { type: "button", id: "still-true", onclick: () => act("/api/stale/still-true", { id: m.id }, () => render()) }, "Still true") : null,
      m.editable ? h("button", { type: "button", id: "delete", class: "danger", onclick: () => act(`/api/memories/${m.id}/delete`, {}, () => go("#/")) }, "Delete") : null);
    // replaceChildren writes a null as the text "null": only nodes go in
    container.replaceChildren(...[
      h("p", {}, h("a", { href: "#/", class: "back" }, "← Memories")),
      memoryCard(m, actions),
      h("h2", {}, "Provenance"), provenanceBlock(m),
      h("h2", {}, "Frontmatter"), h("pre", { class: "frontmatter" }, m.frontmatter),
      m.provenance.session ? transcriptBlock(m.id) : null].filter(Boolean));
  };
  show(params.get("edit") ? "edit" : "view");
  return container;
}

// --- keyboard ---------------------------------------------------------------------------------

function items() {
  return [...main.querySelectorAll(".item")];
}

function select(index, { focus = true } = {}) {
  const all = items();
  if (!all.length) return;
  state.selected = Math.max(0, Math.min(index, all.length - 1));
  all.forEach((node, i) => node.classList.toggle("selected", i === state.selected));
  const target = all[state.selected];
  if (focus) {
    (target.querySelector("a") || target).focus();
    target.scrollIntoView({ block: "nearest" });
  }
}

function selectedItem() {
  return items()[state.selected] || null;
}

document.addEventListener("keydown", (event) => {
  const tag = event.target.tagName;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (["INPUT", "TEXTAREA", "SELECT"].includes(tag)) {
    if (event.key === "Escape") event.target.blur();
    return;
  }
  const own = state.keys[event.key];
  if (own) { event.preventDefault(); own(selectedItem()); return; }
  const views = { 1: "#/", 2: "#/review", 3: "#/stale", 4: "#/consolidate", 5: "#/stats", 6: "#/sessions", 7: "#/new" };
  if (views[event.key]) go(views[event.key]);
  else if (event.key === "/") { event.preventDefault(); if (state.view !== "list") go("#/"); setTimeout(() => document.getElementById("search")?.focus(), 50); }
  else if (event.key === "j") select(state.selected + 1);
  else if (event.key === "k") select(state.selected - 1);
  else if (event.key === "n") document.getElementById("next")?.click();
  else if (event.key === "p") document.getElementById("prev")?.click();
  else if (event.key === "e" && state.view === "memory") document.getElementById("edit")?.click();
  else if (event.key === "Escape" && state.view === "session") go("#/sessions");
  else if (event.key === "Escape" && state.view !== "list") go("#/");
  else if (event.key === "?") document.getElementById("help").showModal();
  else if (event.key === "Enter" && state.view === "list" && !["A", "BUTTON"].includes(tag)) selectedItem()?.querySelector("a")?.click();
  else return;
});

// --- live updates -----------------------------------------------------------------------------

function connect() {
  const live = document.getElementById("live");
  const source = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`);
  source.addEventListener("hello", () => { live.textContent = "live"; live.classList.add("on"); });
  source.addEventListener("changed", (event) => {
    document.body.dataset.version = JSON.parse(event.data).version;
    render({ live: true });
  });
  source.onerror = () => { live.textContent = "reconnecting"; live.classList.remove("on"); };
}

document.getElementById("help-button").addEventListener("click", () => document.getElementById("help").showModal());
document.getElementById("help-close").addEventListener("click", () => document.getElementById("help").close());
document.addEventListener("focusout", () => setTimeout(() => { if (state.pending && !busy()) render({ live: true }); }, 0));
window.addEventListener("hashchange", () => { notice(""); render(); });
render();
connect();
