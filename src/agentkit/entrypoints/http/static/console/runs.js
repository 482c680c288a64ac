// The key's runs, newest first, filtered and paged by keyset; live: new runs appear (the first page is
// asked again every few seconds) and the shown unfinished runs' status changes come from their events.
// And the inbox: every run that waits on an answer, with its calls.

import { pendingCalls } from "./actions.js";
import { api, followRun } from "./api.js";
import { STATUSES, TERMINAL, errorBox, fill, h, isAbort, short, statusBadge, usd, when } from "./dom.js";

const REFRESH_MS = 2000;
const PAGE = 25; // runs a page (then "Older runs" follows the listing's `next` link)
// Runs followed at once (each an open stream; a browser opens about six connections to one server).
const FOLLOWED = 3;

function row(run) {
  const tokens = run.usage.input_tokens + run.usage.output_tokens;
  return h("tr", { "data-run": run.id, "data-status": run.status },
    h("td", null, h("a", { href: `#/runs/${run.id}` }, when(run.created_at))),
    h("td", { class: "status-cell" }, statusBadge(run.status)),
    h("td", null, run.agent),
    h("td", { class: "goal" }, h("a", { href: `#/runs/${run.id}` }, short(run.goal, 90))),
    h("td", null, run.session_id || ""),
    h("td", { class: "num" }, tokens ? String(tokens) : ""),
    h("td", { class: "num" }, usd(run.cost_usd)));
}

function filterForm(agents, apply) {
  const status = h("select", { name: "status", "aria-label": "status" },
    h("option", { value: "" }, "any status"), STATUSES.map((s) => h("option", { value: s }, s.replaceAll("_", " "))));
  const agent = h("select", { name: "agent", "aria-label": "agent" },
    h("option", { value: "" }, "any agent"), agents.map((a) => h("option", { value: a.name }, a.name)));
  const session = h("input", { name: "session_id", placeholder: "session", "aria-label": "session", pattern: "[A-Za-z0-9._:\\-]+" });
  const after = h("input", { name: "created_after", type: "datetime-local", "aria-label": "created after", step: 1 });
  const before = h("input", { name: "created_before", type: "datetime-local", "aria-label": "created before", step: 1 });
  const form = h("form", { class: "filters", id: "filters" },
    status, agent, session, h("label", null, "from ", after), h("label", null, "to ", before),
    h("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    if (status.value) query.append("status", status.value);
    if (agent.value) query.append("agent", agent.value);
    if (session.value.trim()) query.append("session_id", session.value.trim());
    if (after.value) query.append("created_after", new Date(after.value).toISOString());
    if (before.value) query.append("created_before", new Date(before.value).toISOString());
    apply(query);
  });
  return form;
}

function withLimit(query, limit) {
  const copy = new URLSearchParams(query);
  copy.set("limit", String(limit));
  return copy;
}

export async function runsView(main, signal) {
  const agents = await api("/v1/agents", { signal });
  const body = h("tbody", { id: "runs" });
  const more = h("button", { type: "button", id: "more", hidden: true }, "Older runs");
  const status = h("div", { class: "list-status" });
  const table = h("table", { class: "runs" },
    h("thead", null, h("tr", null, ["created", "status", "agent", "goal", "session", "tokens", "cost"].map((c) => h("th", null, c)))),
    body);
  const rows = new Map(); // run id → its row
  const followed = new Map(); // run id → the AbortController of its stream
  let query = new URLSearchParams();
  let next = null;
  let generation = 0; // a filter change makes the refreshes of the one before moot

  const show = (run, { prepend = false } = {}) => {
    const fresh = row(run);
    const old = rows.get(run.id);
    if (old) old.replaceWith(fresh);
    else if (prepend) body.prepend(fresh);
    else body.append(fresh);
    rows.set(run.id, fresh);
    if (TERMINAL.has(run.status)) {
      followed.get(run.id)?.abort();
      followed.delete(run.id);
    } else if (!followed.has(run.id) && followed.size < FOLLOWED) {
      follow(run.id);
    }
  };

  const follow = (id) => {
    const stop = new AbortController();
    followed.set(id, stop);
    signal.addEventListener("abort", () => stop.abort(), { once: true });
    followRun(id, (event, data) => {
      if (event !== "status") return false;
      if (rows.has(id)) show(data);
      return TERMINAL.has(data.status);
    }, stop.signal).catch((error) => { if (!isAbort(error)) console.warn("follow", id, error.message); })
      .finally(() => { if (followed.get(id) === stop) followed.delete(id); });
  };

  const load = async (url, { reset }) => {
    const page = await api(url, { signal });
    if (reset) {
      body.replaceChildren();
      rows.clear();
      for (const stop of followed.values()) stop.abort();
      followed.clear();
    }
    page.runs.forEach((run) => show(run));
    next = page.next;
    more.hidden = !next;
    fill(status, rows.size ? "" : h("p", { class: "muted" }, "No runs match."));
  };

  const refresh = async (mine) => {
    // the first page again: runs created since appear on top, changed ones are redrawn
    const page = await api(`/v1/runs?${withLimit(query, PAGE)}`, { signal });
    if (mine !== generation) return;
    for (const run of [...page.runs].reverse()) {
      const known = rows.get(run.id);
      if (!known) show(run, { prepend: true });
      else if (known.dataset.status !== run.status) show(run);
    }
    if (rows.size) fill(status);
  };

  const apply = (newQuery) => {
    query = newQuery;
    generation += 1;
    return load(`/v1/runs?${withLimit(query, PAGE)}`, { reset: true }).catch((error) => { if (!isAbort(error)) fill(status, errorBox(error)); });
  };

  more.addEventListener("click", () => { if (next) load(next, { reset: false }).catch((e) => fill(status, errorBox(e))); });
  fill(main, h("h1", null, "Runs"), filterForm(agents, apply), table, status, more);
  await apply(query);

  const timer = setInterval(() => {
    refresh(generation).catch((error) => { if (!isAbort(error)) fill(status, errorBox(error)); });
  }, REFRESH_MS);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

export async function inboxView(main, signal) {
  const list = h("div", { id: "inbox" });
  fill(main, h("h1", null, "Waiting on you"),
    h("p", { class: "muted" }, "Runs paused on an approval or a client tool's output."), list);
  const draw = async () => {
    const page = await api("/v1/runs?status=requires_action&limit=50", { signal });
    if (!page.runs.length) {
      fill(list, h("p", { class: "muted", id: "inbox-empty" }, "Nothing waits."));
      return;
    }
    fill(list, page.runs.map((run) => h("article", { class: "card inbox-run", "data-run": run.id },
      h("h2", null, h("a", { href: `#/runs/${run.id}` }, short(run.goal, 100))),
      h("p", { class: "muted" }, `${run.agent} · created ${when(run.created_at)}`),
      pendingCalls(run, () => draw().catch(() => {})))));
  };
  await draw();
  // redrawn only when what waits changed, so a half-typed reason is not wiped
  let seen = JSON.stringify([...list.querySelectorAll("[data-run]")].map((el) => el.dataset.run));
  const timer = setInterval(async () => {
    try {
      const page = await api("/v1/runs?status=requires_action&limit=50", { signal });
      const now = JSON.stringify(page.runs.map((run) => run.id));
      if (now !== seen) {
        seen = now;
        await draw();
      }
    } catch (error) {
      if (!isAbort(error)) fill(list, errorBox(error));
    }
  }, REFRESH_MS * 2);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}
