// Session summaries (listed, searched as you type, each on its own page) and the new-memory
// form, which writes through the library like `local-recall add` (validated, redacted).
import { api, h, memoryCard, notice, typing, when } from "./lib.js";

export async function sessionsView(ctx) {
  const q = ctx.params.get("q") || "";
  const data = await api(`/api/sessions?${new URLSearchParams(q ? { q } : {})}`);
  const search = h("input", { type: "search", id: "session-search", name: "q", value: q,
    placeholder: "Search session summaries…", "aria-label": "Search session summaries" });
  const form = h("form", { class: "filters", role: "search" }, search);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = search.value.trim();
    ctx.go(value ? `#/sessions?${new URLSearchParams({ q: value })}` : "#/sessions");
  });
  typing(search, () => form.requestSubmit());
  const rows = data.rows.map((s) => h("tr", { class: "item", "data-id": s.id },
    h("td", { class: "when" }, when(s.occurred_at)),
    h("td", {}, h("a", { href: `#/s/${s.id}`, class: "subject" }, s.subject)),
    h("td", { class: "scope" }, s.branch || "")));
  const empty = q ? `No session summary holds “${q}”.` : "No session summaries yet: one is written when a session ends.";
  return h("section", { class: "list sessions" }, h("h1", {}, `Sessions (${data.total})`), form,
    rows.length
      ? h("table", { class: "memories" },
        h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "Summary"), h("th", {}, "Branch"))),
        h("tbody", {}, rows))
      : h("p", { class: "empty" }, empty));
}

export async function sessionView(ctx) {
  const s = await api(`/api/sessions/${encodeURIComponent(ctx.id)}`);
  const files = s.provenance.files.length
    ? h("ul", { class: "files" }, s.provenance.files.map((f) => h("li", {}, f))) : null;
  return h("section", { class: "memory-page session" },
    h("p", {}, h("a", { href: "#/sessions", class: "back" }, "← Sessions")),
    memoryCard(s, null),
    h("h2", {}, "Provenance"),
    h("table", { class: "provenance" },
      ...[["File", s.path], ["Session", s.provenance.session], ["Branch", s.provenance.branch],
        ["Commit", s.provenance.commit]].filter(([, v]) => v).map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))),
      files ? h("tr", {}, h("th", {}, "Files"), h("td", {}, files)) : null));
}

export async function newView(ctx) {
  const field = (label, input) => h("label", {}, h("span", {}, label), input);
  const subject = h("input", { name: "subject", id: "new-subject", required: true, maxlength: 200 });
  const keywords = h("input", { name: "keywords", id: "new-keywords", placeholder: "tox, pytest" });
  const scope = h("input", { name: "scope", id: "new-scope", value: "global",
    placeholder: "global, file:src/app.py or area:build" });
  const body = h("textarea", { name: "body", id: "new-body", rows: 12, required: true });
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "primary", id: "new-save" }, "Save");
  const form = h("form", { class: "editor new-memory" },
    field("Subject (one line)", subject),
    field("Keywords (comma separated; empty: extracted)", keywords),
    field("Scope", scope),
    field("Body (markdown)", body),
    h("div", { class: "actions" }, save, h("span", { class: "hint" }, "Ctrl+Enter saves")),
    error);
  form.dataset.dirty = "";
  form.addEventListener("input", () => (form.dataset.dirty = "1"));
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    error.hidden = true;
    try {
      const saved = await api("/api/memories/new", {
        subject: subject.value, body: body.value, keywords: keywords.value, scope: scope.value,
      });
      form.dataset.dirty = "";
      const said = saved.created ? "Saved." : "Already stored: the same text is this memory.";
      const redacted = saved.redacted.length
        ? ` Redacted (${saved.redacted.join(", ")}): the file holds [REDACTED:<kind>] instead of the value.` : "";
      // after the page change, whose own handler clears the notice
      window.addEventListener("hashchange", () => notice(said + redacted, redacted ? "warn" : "info"), { once: true });
      ctx.go(`#/m/${saved.id}`);
    } catch (err) {
      error.textContent = `Not saved: ${err.message}`;
      error.hidden = false;
      save.disabled = false;
    }
  });
  setTimeout(() => subject.focus(), 0);
  return h("section", { class: "new" }, h("h1", {}, "New memory"),
    h("p", { class: "hint" }, "A decision and why, a root cause, a convention, a gotcha: one fact. Written to local-recall/episodic-memory/ as reviewed; secrets are redacted first."),
    form);
}
