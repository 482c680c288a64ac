// Building the page from data. Everything untrusted (goals, answers, tool output, prompts) becomes a
// text node: nothing here ever parses a string as HTML, so a `<script>` in a tool's output is shown.

/** An element with attributes (`on…` are listeners) and children (nodes, or strings made text). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  put(el, children);
  return el;
}

/** Append children: nodes as they are, anything else as text; null, undefined and false are skipped. */
export function put(el, children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  return put(el, children);
}

/** JSON, indented, as a <pre> block. */
export function jsonBlock(value, cls = "json") {
  return h("pre", { class: cls }, JSON.stringify(value, null, 2));
}

export const TERMINAL = new Set([
  "succeeded", "failed", "refused", "max_steps_exceeded", "timed_out", "cancelled", "expired",
]);
// `waiting`: a run that called other agents waits on its child runs; like `requires_action` it goes on.
export const STATUSES = ["pending", "running", "requires_action", "waiting", ...TERMINAL];

export function statusBadge(status) {
  return h("span", { class: `status status-${status}`, "data-status": status }, status.replaceAll("_", " "));
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function ms(value) {
  if (value === null || value === undefined) return "";
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

export function usd(value) {
  return value === null || value === undefined ? "" : `$${value.toFixed(value < 0.01 ? 5 : 3)}`;
}

export function short(text, max = 120) {
  const s = String(text ?? "");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A definition list of label → value pairs, empty values left out. */
export function facts(pairs) {
  const dl = h("dl", { class: "facts" });
  for (const [label, value] of pairs) {
    if (value === null || value === undefined || value === "") continue;
    put(dl, [h("dt", null, label), h("dd", null, value)]);
  }
  return dl;
}

/** A message box for an error (a problem detail's text when there is one). */
export function errorBox(error) {
  return h("p", { class: "error", role: "alert" }, error?.message || String(error));
}

export function isAbort(error) {
  return error?.name === "AbortError";
}
