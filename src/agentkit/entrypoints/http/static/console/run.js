// One run: its summary, what it waits on, its answer, and its steps as a timeline (LLM calls with model,
// tokens, cost, latency and finish reason, each with the exact prompt it sent; tool calls with arguments,
// result and duration, drawn on one time axis so calls that ran at once overlap). Live from its events:
// status changes, each step as it is recorded, and the model's text as it is written.

import { pendingCalls } from "./actions.js";
import { api, followRun } from "./api.js";
import { TERMINAL, errorBox, facts, fill, h, isAbort, jsonBlock, ms, put, short, statusBadge, usd, when } from "./dom.js";

const UUID = /^[0-9a-fA-F-]{36}$/;

function startOf(step) {
  if (step.started_at) return Date.parse(step.started_at);
  return Date.parse(step.created_at) - step.latency_ms;
}

function messageView(stored) {
  const m = stored.message;
  return h("div", { class: `message role-${m.role}` },
    h("div", { class: "message-head" }, h("span", { class: "tag" }, m.role), m.name ? ` ${m.name}` : "",
      m.tool_call_id ? h("code", { class: "muted" }, ` ${m.tool_call_id}`) : ""),
    m.content ? h("pre", { class: "text" }, m.content) : null,
    (m.tool_calls || []).map((c) => h("div", { class: "tool-call" }, `→ ${c.name} `, h("code", null, JSON.stringify(c.arguments)))));
}

function promptView(step, prompts) {
  const request = step.request;
  if (!request) return h("p", { class: "muted" }, "This step stored no prompt.");
  const messages = (prompts?.messages || []).slice(0, request.message_count);
  const tools = request.tools_digest ? prompts?.tool_sets?.[request.tools_digest] || [] : [];
  return h("div", { class: "prompt" },
    facts([["provider", request.provider], ["model", request.model],
      ["parameters", Object.keys(request.parameters || {}).length ? JSON.stringify(request.parameters) : ""]]),
    h("h4", null, `messages (${request.message_count})`), messages.map(messageView),
    h("h4", null, `tools (${tools.length})`),
    tools.map((tool) => h("details", { class: "tool-schema" }, h("summary", null, tool.name, h("span", { class: "muted" }, ` ${short(tool.description, 100)}`)), jsonBlock(tool.parameters))));
}

function stepView(step, axis, prompts) {
  const bar = h("div", { class: `bar bar-${step.kind}${step.error || step.result?.ok === false ? " bar-error" : ""}` });
  if (axis.span > 0) {
    const left = Math.min(99.5, Math.max(0, (100 * (startOf(step) - axis.start)) / axis.span));
    const width = Math.min(100 - left, Math.max(0.5, (100 * step.latency_ms) / axis.span));
    bar.style.setProperty("--left", `${left}%`);
    bar.style.setProperty("--width", `${width}%`);
  }
  const head = h("div", { class: "step-head" }, h("span", { class: "step-no" }, `#${step.step_no}`));
  const card = h("li", { class: `step step-${step.kind}`, "data-step": step.step_no, "data-kind": step.kind }, head, h("div", { class: "track" }, bar));
  if (step.kind === "llm") {
    put(head, [h("strong", null, "LLM"), " ", step.request?.model || step.response?.model || "",
      h("span", { class: "figures" }, `${step.input_tokens} in · ${step.output_tokens} out · ${ms(step.latency_ms)}`,
        step.cost_usd !== undefined ? ` · ${usd(step.cost_usd)}` : "",
        step.finish_reason ? ` · ${step.finish_reason}` : "", step.attempts > 1 ? ` · ${step.attempts} attempts` : "")]);
    if (step.text) card.append(h("pre", { class: "text" }, step.text));
    for (const call of step.tool_calls || []) card.append(h("div", { class: "tool-call" }, `→ ${call.name} `, h("code", null, JSON.stringify(call.arguments))));
    if (step.error) card.append(h("p", { class: "error" }, `${step.error_type || "error"}: ${step.error}`));
    const details = h("details", { class: "prompt-details" }, h("summary", null, "Prompt sent"));
    details.addEventListener("toggle", async () => {
      if (!details.open || details.dataset.loaded) return;
      details.dataset.loaded = "1";
      details.append(promptView(step, await prompts(step)));
    });
    card.append(details);
  } else {
    const result = step.result || {};
    put(head, [h("strong", null, "tool"), " ", h("span", { class: "tool-name" }, step.tool_name),
      h("span", { class: "figures" }, `${ms(step.latency_ms)}${result.ok ? " · ok" : " · error"}${result.truncated ? " · truncated" : ""}`)]);
    card.append(h("div", { class: "label" }, "arguments"), jsonBlock(step.arguments || {}));
    if (result.output) card.append(h("div", { class: "label" }, "result"), h("pre", { class: "text tool-output" }, result.output));
    if (result.error) card.append(h("p", { class: "error tool-error" }, result.error));
  }
  return card;
}

// A child run as the list shows it: from the run's `children` (a ChildRunView) or a `child` event (a RunView).
function childOf(data) {
  return { id: data.id, agent: data.agent, status: data.status,
    call_id: data.call_id ?? data.parent_call_id ?? null, step_no: data.step_no ?? data.parent_step_no ?? null };
}

function childrenView(children) {
  const shown = [...children.values()].filter((child) => UUID.test(String(child.id))); // only run ids become links
  if (!shown.length) return null;
  shown.sort((a, b) => (a.step_no ?? Infinity) - (b.step_no ?? Infinity));
  return h("section", { class: "children", id: "children" }, h("h2", null, `Child runs (${shown.length})`),
    h("ul", null, shown.map((child) => h("li", { "data-child": child.id, "data-status": child.status },
      h("a", { href: `#/runs/${child.id}`, class: "agent" }, child.agent), " ", statusBadge(child.status),
      h("span", { class: "muted" }, child.step_no !== null ? ` called at step #${child.step_no}` : "",
        child.call_id ? ` (${child.call_id})` : ""), " ",
      h("code", { class: "muted" }, child.id)))));
}

function parentLink(run) {
  if (!run.parent_run_id || !UUID.test(run.parent_run_id)) return "";
  return h("span", null, h("a", { href: `#/runs/${run.parent_run_id}`, id: "parent-link" }, run.parent_run_id),
    run.parent_step_no !== null && run.parent_step_no !== undefined ? ` (its step #${run.parent_step_no})` : "");
}

function tokens(usage) {
  return `${usage.input_tokens} in · ${usage.output_tokens} out`;
}

export async function runView(main, signal, id) {
  const summary = h("section", { class: "summary" });
  const waiting = h("section", { id: "waiting" });
  const outcome = h("section", { id: "outcome" });
  const family = h("div"); // the child runs, redrawn alone on their events (a form above keeps what was typed)
  const live = h("div", { id: "live" });
  const timeline = h("ol", { class: "timeline", id: "timeline" });
  const notes = h("div");
  fill(main, summary, waiting, outcome, family, h("h2", null, "Steps"), timeline, live, notes);

  const steps = new Map(); // step_no → step
  const children = new Map(); // child run id → {id, agent, status, call_id, step_no} (agents that call agents)
  let run = await api(`/v1/runs/${id}`, { signal });
  let promptsCache = null;
  const prompts = async (step) => {
    if (!promptsCache || (promptsCache.messages || []).length < (step.request?.message_count || 0)) {
      promptsCache = await api(`/v1/runs/${id}/trace?include=prompts`, { signal });
    }
    return promptsCache;
  };

  const drawSteps = () => {
    const all = [...steps.values()].sort((a, b) => a.step_no - b.step_no);
    const starts = all.map(startOf);
    const ends = all.map((s) => startOf(s) + s.latency_ms);
    const axis = { start: Math.min(...starts), span: Math.max(...ends) - Math.min(...starts) };
    const open = new Set([...timeline.querySelectorAll("details[open]")].map((d) => d.closest("[data-step]")?.dataset.step));
    fill(timeline, all.map((step) => stepView(step, axis, prompts)));
    for (const no of open) timeline.querySelector(`[data-step="${no}"] details`)?.setAttribute("open", "");
  };

  // GET /v1/runs/{id} lists the child runs; a status event's run does not (its children stay as they were).
  const takeChildren = (fresh) => {
    if (!Array.isArray(fresh.children)) return;
    for (const child of fresh.children) {
      const known = children.get(child.id);
      if (!(known && TERMINAL.has(known.status) && !TERMINAL.has(child.status))) children.set(child.id, childOf(child));
    }
  };
  takeChildren(run);

  const drawRun = () => {
    // the tree's totals beside the run's own, when child runs spent some too
    const tree = run.tree_usage && (children.size || run.tree_cost_usd !== run.cost_usd
      || run.tree_usage.input_tokens !== run.usage.input_tokens || run.tree_usage.output_tokens !== run.usage.output_tokens);
    fill(summary,
      h("div", { class: "title" }, h("h1", null, short(run.goal, 200)), statusBadge(run.status)),
      facts([["run", h("code", null, run.id)], ["agent", run.agent + (run.agent_version ? ` (${run.agent_version})` : "")],
        ["session", run.session_id], ["created", when(run.created_at)], ["started", when(run.started_at)],
        ["finished", when(run.finished_at)],
        ["parent run", parentLink(run)],
        ["tokens", tokens(run.usage)], ["cost", usd(run.cost_usd)],
        ["tree tokens", tree ? h("span", { id: "tree-tokens" }, tokens(run.tree_usage)) : ""],
        ["tree cost", tree ? usd(run.tree_cost_usd) : ""],
        ["reason", run.failure_reason]]),
      TERMINAL.has(run.status) ? null : h("button", { type: "button", class: "danger", id: "cancel", onclick: cancel }, "Cancel run"));
    fill(waiting,
      run.status === "requires_action" ? [h("h2", null, "Waiting on you"), pendingCalls(run, refresh)] : null,
      run.status === "waiting" ? [h("h2", null, "Waiting on its child runs"),
        h("p", { class: "muted" }, "The run goes on when the agents it called have answered.")] : null);
    fill(outcome,
      run.answer ? [h("h2", null, "Answer"), h("pre", { class: "text answer", id: "answer" }, run.answer)] : null,
      run.output !== null && run.output !== undefined ? [h("h2", null, "Typed output"), jsonBlock(run.output)] : null);
    fill(family, childrenView(children));
  };

  // The run as a request read it. Its events may have told a later state meanwhile (an answered run can
  // end before the answer's own response arrives): an ended run is never drawn as going on again.
  const update = (fresh) => {
    if (TERMINAL.has(run.status) && !TERMINAL.has(fresh.status)) return;
    takeChildren(fresh);
    run = fresh;
    drawRun();
  };
  const refresh = async () => update(await api(`/v1/runs/${id}`, { signal }));
  async function cancel() {
    try {
      update(await api(`/v1/runs/${id}/cancel`, { method: "POST", signal }));
    } catch (error) {
      fill(notes, errorBox(error));
    }
  }

  drawRun();
  const trace = await api(`/v1/runs/${id}/trace`, { signal });
  trace.steps.forEach((step) => steps.set(step.step_no, step));
  drawSteps();
  if (TERMINAL.has(run.status)) return;

  const writing = new Map(); // step_no → the box its text is written into
  const onEvent = (event, data) => {
    live.dataset.following = "true"; // the page follows the run's events (its model now streams)
    if (event === "status") {
      update(data);
      if (TERMINAL.has(run.status)) {
        fill(live);
        // the children as they ended (a status event's run does not list them)
        if (children.size) refresh().catch((error) => { if (!isAbort(error)) fill(notes, errorBox(error)); });
      }
      return TERMINAL.has(run.status);
    }
    if (event === "child") {
      // a child run's status changed: only its own (a grandchild's events stay on its parent's page)
      const known = children.get(data.id);
      // (a replayed older event never draws an ended child as going on again)
      if (data.parent_run_id === id && !(known && TERMINAL.has(known.status) && !TERMINAL.has(data.status))) {
        children.set(data.id, childOf(data));
        fill(family, childrenView(children));
      }
      return false;
    }
    if (event === "step") {
      writing.get(data.step_no)?.remove();
      writing.delete(data.step_no);
      steps.set(data.step_no, data);
      drawSteps();
    } else if (event === "delta") {
      let box = writing.get(data.step_no);
      if (!box || data.kind === "retry") {
        box?.remove();
        box = h("pre", { class: "text writing", "data-writing": data.step_no });
        writing.set(data.step_no, box);
        live.append(box);
      }
      if (data.kind === "text") box.append(data.text);
      else if (data.kind === "tool_call") box.append(data.name ? `\n→ ${data.name} ` : "", data.text);
    }
    return false;
  };
  followRun(id, onEvent, signal).catch((error) => { if (!isAbort(error)) fill(notes, errorBox(error)); });
}
