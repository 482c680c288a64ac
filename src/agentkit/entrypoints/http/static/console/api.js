// The API, as this page talks to it: the key from the tab's session storage in X-API-Key (never in a
// URL), JSON in and out, problem details as errors, and a run's Server-Sent Events read through
// fetch (EventSource cannot send a header), resumed with Last-Event-ID after a dropped connection.

const KEY = "agentkit.apiKey";

export const apiKey = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `the API answered ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.problem = problem;
  }
}

let unauthorized = () => {};

/** Called when the API refuses the key (the page asks for another). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

function headers(extra) {
  return { "X-API-Key": apiKey.get() || "", ...extra };
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/**
 * A JSON request to the API; resolves to the decoded body, rejects with an ApiError. A 401 signs the
 * page out, unless `trying` (the sign-in form, which says so itself).
 */
export async function api(path, { method = "GET", body, signal, extra = {}, trying = false } = {}) {
  const init = { method, signal, headers: headers({ Accept: "application/json", ...extra }) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  if (response.status === 401 && !trying) unauthorized();
  if (!response.ok) throw new ApiError(response.status, await problemOf(response));
  return response.status === 204 ? null : response.json();
}

function sleep(delay, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, delay);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/** Split a text/event-stream body into events ({id, event, data}); comments are dropped. */
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let current = { id: "", event: "message", data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === "\r" ? 2 : 1));
      if (line === "") {
        if (current.data.length) yield { id: current.id, event: current.event, data: current.data.join("\n") };
        current = { id: "", event: "message", data: [] };
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") current.data.push(text);
      else if (field === "event") current.event = text;
      else if (field === "id") current.id = text;
    }
  }
}

/**
 * Follow a run's events until `handle` says it is done (returns true: a terminal status came) or the
 * signal aborts. A dropped connection is resumed after the last event seen, so none is lost or repeated.
 */
export async function followRun(runId, handle, signal) {
  let last = "";
  let failures = 0;
  while (!signal.aborted) {
    try {
      const extra = { Accept: "text/event-stream" };
      if (last) extra["Last-Event-ID"] = last;
      const response = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, { headers: headers(extra), signal });
      if (response.status === 401) unauthorized();
      if (!response.ok) throw new ApiError(response.status, await problemOf(response));
      failures = 0;
      for await (const event of events(response.body)) {
        if (event.id) last = event.id;
        if (handle(event.event, JSON.parse(event.data))) return;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status < 500 && error.status !== 429) throw error;
      failures += 1;
      if (failures > 10) throw error;
    }
    await sleep(Math.min(250 * 2 ** failures, 5000), signal);
  }
}
