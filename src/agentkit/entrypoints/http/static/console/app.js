// The console's entry: asks for the API key once per tab, then draws the view the URL's fragment names.

import { api, apiKey, onUnauthorized } from "./api.js";
import { agentsView, newRunView, toolsView } from "./catalog.js";
import { errorBox, fill, h, isAbort } from "./dom.js";
import { runView } from "./run.js";
import { inboxView, runsView } from "./runs.js";

const main = document.getElementById("view");
const nav = document.getElementById("nav");
let current = null; // the shown view's AbortController: leaving a view stops its requests and streams

function loginView(message) {
  nav.hidden = true;
  const input = h("input", {
    type: "password", id: "api-key", name: "api-key", autocomplete: "off", required: true,
    placeholder: "X-API-Key", "aria-label": "API key",
  });
  const status = h("p", { class: "error", role: "alert" }, message || "");
  const form = h("form", { class: "card login", id: "login" },
    h("h1", null, "AgentKit console"),
    h("p", { class: "muted" }, "Your API key is kept in this tab only (session storage) and sent as X-API-Key."),
    h("label", { for: "api-key" }, "API key"), input,
    h("button", { type: "submit" }, "Sign in"), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    apiKey.set(input.value.trim());
    try {
      await api("/v1/agents", { trying: true });
      route();
    } catch (error) {
      apiKey.clear();
      fill(status, error.status === 401 ? "This key is not valid here." : error.message);
    }
  });
  fill(main, form);
  input.focus();
}

const VIEWS = [
  [/^#\/runs\/([0-9a-fA-F-]{36})$/, runView, "runs"],
  [/^#\/inbox$/, inboxView, "inbox"],
  [/^#\/new$/, newRunView, "new"],
  [/^#\/agents$/, agentsView, "agents"],
  [/^#\/tools$/, toolsView, "tools"],
  [/^#\/runs$/, runsView, "runs"],
];

function route() {
  current?.abort();
  current = new AbortController();
  if (!apiKey.get()) {
    loginView();
    return;
  }
  nav.hidden = false;
  const hash = location.hash || "#/runs";
  let [, view, name] = VIEWS.at(-1);
  let args = [];
  for (const [pattern, candidate, label] of VIEWS) {
    const match = hash.match(pattern);
    if (match) {
      [view, name, args] = [candidate, label, match.slice(1)];
      break;
    }
  }
  for (const link of nav.querySelectorAll("a")) {
    link.classList.toggle("active", link.dataset.view === name);
  }
  fill(main);
  const signal = current.signal;
  Promise.resolve(view(main, signal, ...args)).catch((error) => {
    if (!isAbort(error) && !signal.aborted) fill(main, errorBox(error));
  });
}

onUnauthorized(() => {
  apiKey.clear();
  current?.abort();
  loginView("The API refused the key: sign in again.");
});
document.getElementById("logout").addEventListener("click", () => {
  apiKey.clear();
  route();
});
window.addEventListener("hashchange", route);
route();
