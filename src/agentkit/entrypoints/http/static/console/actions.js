// What a paused run waits on: each call with its arguments, Approve / Reject (with a reason) for an
// approval, a form for a client tool's output. Answers go to /approvals and /tool_outputs.

import { api } from "./api.js";
import { errorBox, fill, h, jsonBlock } from "./dom.js";

function approvalControls(run, call, done, status) {
  const reason = h("input", { type: "text", class: "reason", placeholder: "reason (shown to the model)", maxlength: 2000, "aria-label": "reason" });
  const send = async (decision) => {
    const body = { call_id: call.call_id, digest: call.digest, decision };
    if (decision === "reject" && reason.value.trim()) body.reason = reason.value.trim();
    await api(`/v1/runs/${run.id}/approvals`, { method: "POST", body });
  };
  return [
    h("button", { type: "button", class: "approve", onclick: () => answer(() => send("approve"), done, status) }, "Approve"),
    reason,
    h("button", { type: "button", class: "reject danger", onclick: () => answer(() => send("reject"), done, status) }, "Reject"),
  ];
}

function outputControls(run, call, done, status) {
  const output = h("textarea", { class: "output", rows: 3, placeholder: "the tool's output: text, or JSON", "aria-label": "output" });
  const send = async () => {
    let value = output.value;
    try {
      value = JSON.parse(value);
    } catch {
      // not JSON: the output is the text as it is
    }
    await api(`/v1/runs/${run.id}/tool_outputs`, { method: "POST", body: { call_id: call.call_id, digest: call.digest, output: value } });
  };
  return [output, h("button", { type: "button", class: "send-output", onclick: () => answer(send, done, status) }, "Send output")];
}

async function answer(send, done, status) {
  fill(status);
  try {
    await send();
    done();
  } catch (error) {
    fill(status, errorBox(error));
  }
}

/** The calls a run in `requires_action` waits on; `done` is called after each answer is stored. */
export function pendingCalls(run, done) {
  const calls = run.required_action?.calls || [];
  const box = h("section", { class: "pending" });
  for (const call of calls) {
    const status = h("div", { class: "answer-status" });
    const card = h("div", { class: "card call", "data-call": call.call_id },
      h("div", { class: "call-head" },
        h("strong", null, call.name), " ",
        h("span", { class: "tag" }, call.kind === "approval" ? "needs approval" : "client tool"), " ",
        h("code", { class: "muted" }, call.call_id)),
      jsonBlock(call.arguments));
    if (call.answer) {
      card.append(h("p", { class: "answered" }, `answered: ${call.answer.decision}`, call.answer.reason ? ` (${call.answer.reason})` : ""));
    } else {
      card.append(h("div", { class: "controls" },
        call.kind === "approval" ? approvalControls(run, call, done, status) : outputControls(run, call, done, status)));
    }
    card.append(status);
    box.append(card);
  }
  if (run.required_action?.expires_at) {
    box.append(h("p", { class: "muted" }, `waits until ${new Date(run.required_action.expires_at).toLocaleString()}, then expires`));
  }
  return box;
}
