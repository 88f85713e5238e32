// Shared helpers of the viewer: the API client (the token travels in a header), DOM building
// (text is always set as text: nothing from a memory is parsed as HTML, except the body HTML
// the server rendered with raw HTML escaped), and the memory editor.

// The token arrives once: in the fragment (`#token=…`, from the launcher page `local-recall ui`
// opens, never sent to any server) or the query (`?token=…`, the URL printed by
// `local-recall ui --no-browser`). It is kept in this tab's sessionStorage, which, unlike a
// cookie, no other port of 127.0.0.1 can read, and removed from the address bar at once.
function takeToken() {
  const hash = location.hash.startsWith("#token=") ? decodeURIComponent(location.hash.slice(7)) : "";
  const query = new URLSearchParams(location.search).get("token") || "";
  const given = hash || query;
  if (given) {
    sessionStorage.setItem("recall-token", given);
    history.replaceState(null, "", location.pathname + (hash ? "" : location.hash));
  }
  return given || sessionStorage.getItem("recall-token") || "";
}

export const TOKEN = takeToken();

export async function api(path, body) {
  const options = { headers: { "X-Recall-Token": TOKEN } };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) {
    const error = new Error(data.error || response.statusText);
    error.status = response.status;
    throw error;
  }
  return data;
}

export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function when(iso) {
  return iso ? iso.replace("T", " ").slice(0, 16) : "";
}

export function badges(m) {
  return h(
    "span",
    { class: "badges" },
    h("span", { class: `badge kind-${m.kind}` }, m.kind),
    m.unreviewed ? h("span", { class: "badge unreviewed" }, "unreviewed") : null,
    m.disputed ? h("span", { class: "badge disputed", title: m.disputed.reason }, "disputed") : null,
    m.stale ? h("span", { class: "badge stale", title: m.stale.detail }, `stale: ${m.stale.reason}`) : null,
    m.superseded_by ? h("span", { class: "badge superseded" }, "superseded") : null,
    m.branch ? h("span", { class: "badge branch", title: "branch" }, m.branch) : null,
  );
}

export function markdown(html) {
  const node = h("div", { class: "markdown" });
  node.innerHTML = html; // rendered by the server: raw HTML escaped, links checked, no images
  return node;
}

export function notice(text, kind = "info") {
  const box = document.getElementById("notice");
  box.textContent = text;
  box.className = kind;
  box.hidden = !text;
}

// The editor: writes through the library (validation and redaction apply). A failed save
// keeps every field as typed and shows the error next to the buttons.
export function editor(m, onSaved, onCancel) {
  const field = (label, input) => h("label", {}, h("span", {}, label), input);
  const subject = h("input", { name: "subject", value: m.subject, required: true });
  const keywords = h("input", { name: "keywords", value: m.keywords.join(", ") });
  const scope = h("input", { name: "scope", value: m.applies_to });
  const body = h("textarea", { name: "body", rows: 14 });
  body.value = m.body;
  const error = h("p", { class: "error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "primary" }, "Save");
  const form = h(
    "form",
    { class: "editor", "data-id": m.id },
    field("Subject", subject),
    field("Keywords (comma separated)", keywords),
    field("Scope", scope),
    field("Body (markdown)", body),
    h("div", { class: "actions" }, save,
      h("button", { type: "button", onclick: () => onCancel() }, "Cancel"),
      h("span", { class: "hint" }, "Ctrl+Enter saves, Esc cancels")),
    error,
  );
  form.dataset.dirty = "";
  form.addEventListener("input", () => (form.dataset.dirty = "1"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    save.disabled = true;
    error.hidden = true;
    try {
      const saved = await api(`/api/memories/${m.id}`, {
        subject: subject.value, body: body.value, keywords: keywords.value,
        scope: scope.value, fingerprint: m.fingerprint,
      });
      form.dataset.dirty = "";
      onSaved(saved);
    } catch (err) {
      error.textContent = `Not saved: ${err.message}`;
      error.hidden = false;
      save.disabled = false;
    }
  });
  form.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      onCancel();
    }
  });
  setTimeout(() => subject.focus(), 0);
  return form;
}

export function editing() {
  const form = document.querySelector("form.editor");
  return form !== null && form.dataset.dirty === "1";
}

// A session found it wrong (the file's `disputed:` key): why, and when; a person settles it by
// accepting, editing or rejecting the memory.
function disputedBlock(m) {
  if (!m.disputed) return null;
  const d = m.disputed;
  const meta = [d.date, d.session ? `session ${d.session.slice(0, 8)}` : null].filter(Boolean).join(", ");
  return h("p", { class: "disputed-detail" },
    h("strong", {}, "Disputed by a session: "), d.reason, meta ? h("span", { class: "hint" }, ` (${meta})`) : null,
    h("span", { class: "hint" }, " Accept if it still holds, edit it, or reject it."));
}

// How this user's sessions used it (their record in state/: nobody else's).
function usageLine(m) {
  if (!m.usage) return null;
  const parts = Object.entries(m.usage).filter(([, n]) => n > 0).map(([use, n]) => `${use} ${n}`);
  return parts.length ? h("p", { class: "usage hint" }, `Your sessions: ${parts.join(" · ")}`) : null;
}

export function memoryCard(m, actions) {
  return h("article", { class: "memory", "data-id": m.id },
    h("h1", { class: "subject" }, m.subject),
    h("p", { class: "meta" }, when(m.occurred_at), " · ", m.applies_to, " ", badges(m)),
    m.stale ? h("p", { class: "stale-detail" }, m.stale.detail) : null,
    disputedBlock(m),
    usageLine(m),
    actions || null,
    markdown(m.body_html),
    m.keywords.length ? h("p", { class: "keywords" }, m.keywords.map((k) => h("span", { class: "keyword" }, k))) : null);
}


// Search as you type (debounced) re-renders the view under the cursor: the box that asked keeps
// focus and caret (`refocus`, called after each render).
let focusAfterRender = null;

export function typing(input, submit, delay = 300) {
  let timer = 0;
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => { focusAfterRender = input.id; submit(); }, delay);
  });
}

export function refocus() {
  const id = focusAfterRender;
  focusAfterRender = null;
  const input = id ? document.getElementById(id) : null;
  if (!input) return;
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
}
