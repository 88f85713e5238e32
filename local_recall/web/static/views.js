// The curation views: review queue, stale list, consolidation proposals; and stats, file view.
// Each returns a node; `ctx.keys` maps a key to an action on the selected item (one keystroke).
import { api, editor, h, memoryCard, notice, when } from "./lib.js";

async function act(path, body, message, ctx) {
  try {
    await api(path, body);
    notice(message);
    ctx.rerender();
  } catch (err) {
    notice(err.message, "error");
  }
}

function editInPlace(item, m, ctx) {
  item.replaceChildren(editor(m, () => { notice("Saved."); ctx.rerender(); }, () => ctx.rerender()));
}

function queue(title, empty, rows, buttons, ctx) {
  if (!rows.length) return h("section", { class: "queue" }, h("h1", {}, title), h("p", { class: "empty" }, empty));
  const byId = new Map(rows.map((m) => [m.id, m]));
  const items = rows.map((m) => {
    const item = h("div", { class: "item", "data-id": m.id, tabindex: "-1" });
    item.append(memoryCard(m, h("div", { class: "actions" }, buttons(m, item))),
      h("p", { class: "open" }, h("a", { href: `#/m/${m.id}` }, "Open")));
    return item;
  });
  ctx.byId = byId;
  return h("section", { class: "queue" }, h("h1", {}, `${title} (${rows.length})`), items);
}

export async function reviewView(ctx) {
  const rows = await api("/api/review");
  const accept = (m) => act("/api/review/accept", { ids: [m.id] }, `Accepted: ${m.subject}`, ctx);
  const reject = (m) => act("/api/review/reject", { ids: [m.id] }, `Rejected: ${m.subject}`, ctx);
  // the same fact in other words (memory/likeness.py): merged as `consolidate` merges
  const merge = (m) => m.looks_like && act("/api/review/merge", { ids: [m.id, m.looks_like.id] }, `Merged: ${m.subject}`, ctx);
  const node = queue("Review", "Nothing to review: every memory has been accepted.", rows, (m, item) => [
    m.looks_like ? h("p", { class: "looks-like" }, "Looks like ",
      h("a", { href: `#/m/${m.looks_like.id}` }, m.looks_like.subject || m.looks_like.id), ` (${m.looks_like.id.slice(0, 8)})`) : null,
    h("button", { type: "button", class: "accept primary", onclick: () => accept(m) }, "Accept (a)"),
    h("button", { type: "button", class: "edit", onclick: () => editInPlace(item, m, ctx) }, "Edit (e)"),
    h("button", { type: "button", class: "reject danger", onclick: () => reject(m) }, "Reject (r)"),
    m.looks_like ? h("button", { type: "button", class: "merge", onclick: () => merge(m) }, "Merge (m)") : null,
  ], ctx);
  const pick = (fn) => (item) => item && fn(ctx.byId.get(item.dataset.id), item);
  Object.assign(ctx.keys, { a: pick(accept), r: pick(reject), m: pick(merge), e: pick((m, item) => editInPlace(item, m, ctx)) });
  return node;
}

export async function staleView(ctx) {
  const rows = await api("/api/stale");
  const still = (m) => act("/api/stale/still-true", { id: m.id }, `Marked still true: ${m.subject}`, ctx);
  const remove = (m) => act(`/api/memories/${m.id}/delete`, {}, `Deleted: ${m.subject}`, ctx);
  const node = queue("Stale", "No memory is stale: their files have not changed much since.", rows, (m, item) => [
    // a deleted file cannot be "still true": keeping the memory drops that anchor instead
    m.stale && m.stale.reason === "deleted"
      ? h("button", { type: "button", class: "still-true", onclick: () => still(m),
        title: "The file is gone: the memory stays, without it (a file: scope widens to its folder)" },
      `Keep without ${m.stale.anchor} (s)`)
      : h("button", { type: "button", class: "still-true primary", onclick: () => still(m) }, "Still true (s)"),
    h("button", { type: "button", class: "edit", onclick: () => editInPlace(item, m, ctx) }, "Edit (e)"),
    h("button", { type: "button", class: "delete danger", onclick: () => remove(m) }, "Delete (d)"),
  ], ctx);
  const pick = (fn) => (item) => item && fn(ctx.byId.get(item.dataset.id), item);
  Object.assign(ctx.keys, { s: pick(still), d: pick(remove), e: pick((m, item) => editInPlace(item, m, ctx)) });
  return node;
}

export async function consolidateView(ctx) {
  const groups = await api("/api/consolidation");
  const title = h("h1", {}, `Consolidation (${groups.length} ${groups.length === 1 ? "group" : "groups"})`);
  if (!groups.length) return h("section", { class: "queue" }, title, h("p", { class: "empty" }, "No near-duplicates found."));
  const skipped = new Set();
  const apply = (group, keep) => act("/api/consolidation/apply",
    { keep, group: [group.proposal.keep, ...group.proposal.remove] }, "Merged.", ctx);
  const items = groups.map((group, index) => {
    const p = group.proposal;
    const columns = group.memories.map((m) => h("div", { class: "column" },
      memoryCard(m, h("div", { class: "actions" },
        h("button", { type: "button", class: m.id === p.keep ? "keep primary" : "keep", onclick: () => apply(group, m.id) },
          m.id === p.keep ? "Keep this one (proposed, m)" : "Keep this one")))));
    const item = h("div", { class: "item group", "data-index": index, tabindex: "-1" },
      h("p", { class: "merge" }, `Merged: keywords ${p.keywords.join(", ") || "—"}; anchors ${p.anchors.join(", ") || "—"}; `
        + `dated ${when(p.occurred_at)}; the others are deleted and remembered as rejected.`),
      h("div", { class: "side-by-side" }, columns),
      h("div", { class: "actions" }, h("button", { type: "button", class: "skip", onclick: () => { skipped.add(index); item.hidden = true; } }, "Skip (x)")));
    return item;
  });
  const pick = (fn) => (item) => item && fn(groups[Number(item.dataset.index)], item);
  Object.assign(ctx.keys, {
    m: pick((group) => apply(group, group.proposal.keep)),
    x: pick((group, item) => { item.hidden = true; ctx.select(Number(item.dataset.index) + 1); }),
  });
  return h("section", { class: "queue" }, title, items);
}

export async function statsView() {
  const s = await api("/api/stats");
  const table = (rows) => h("table", { class: "stats" }, rows.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v ?? "—"))));
  const limit = (used, max) => (max ? `${used} of ${max} (${Math.round((100 * used) / max)}%)` : `${used} (no limit)`);
  const d = s.daemon || {};
  return h("section", { class: "stats-page" },
    h("h1", {}, "Stats"),
    h("h2", {}, "Memories"),
    table([["Total", s.memories.total], ...Object.entries(s.memories.by_kind).map(([k, v]) => [`Kind: ${k}`, v]),
      ...Object.entries(s.memories.by_state).map(([k, v]) => [`State: ${k}`, v]), ["Unreadable files", s.problems]]),
    h("h2", {}, "Index"),
    table([["Embedder", s.index.embedder], ["Indexed", s.index.indexed], ["Files", s.index.files],
      ["Embedder error", s.index.embedder_error], ["Index error", s.index.index_error], ["Last degraded search", s.index.last_fallback]]),
    h("h2", {}, "Extraction"),
    table([["Status", s.extraction.summary]]),
    h("h2", {}, `Extraction budget (${s.budget.date}, UTC)`),
    table([["Calls", limit(s.budget.calls, s.budget.max_calls)], ["Tokens", limit(s.budget.tokens, s.budget.max_tokens)]]),
    h("h2", {}, "Daemon"),
    table([["State", d.state], ["Started", when(d.started)], ["Last re-index", d.last_sync ? `${when(d.last_sync.at)} (${d.last_sync.seconds} s)` : null],
      ["Last pass", d.last_pass ? `${when(d.last_pass.at)} (${d.last_pass.seconds} s)` : null],
      ["Counts", d.counts ? Object.entries(d.counts).map(([k, v]) => `${k} ${v}`).join(", ") : null]]),
    h("h2", {}, "Hook latency"),
    h("p", {}, s.hook_latency ?? "Not recorded: hooks do not log their latency yet (see docs/ui.md)."));
}

export async function fileView({ params }) {
  const f = await api(`/api/file?path=${encodeURIComponent(params.get("path") || "")}`);
  return h("section", { class: "file" }, h("p", {}, h("button", { type: "button", onclick: () => history.back() }, "← Back")),
    h("h1", {}, f.path), h("pre", {}, f.text), f.truncated ? h("p", { class: "hint" }, "(cut at 512 kB)") : null);
}
