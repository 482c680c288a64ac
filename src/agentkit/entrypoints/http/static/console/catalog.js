// The agents and their tools (profiles and the JSON schemas models see), and the form that starts a run.

import { api } from "./api.js";
import { errorBox, facts, fill, h, jsonBlock } from "./dom.js";

export async function agentsView(main, signal) {
  const agents = await api("/v1/agents", { signal });
  fill(main, h("h1", null, "Agents"), agents.map((agent) => h("article", { class: "card agent", "data-agent": agent.name },
    h("h2", null, agent.name, agent.version ? h("span", { class: "muted" }, ` ${agent.version}`) : ""),
    agent.description ? h("p", null, agent.description) : null,
    facts([["model", `${agent.provider} · ${agent.model}`], ["tools", agent.tools.join(", ")],
      ["terminal tools", agent.terminal_tools.join(", ")], ["MCP servers", agent.mcp_servers.join(", ")],
      ["max steps", String(agent.max_steps)], ["token budget", agent.token_budget ?? ""],
      ["run timeout", `${agent.run_timeout_s} s`]]),
    agent.output_schema ? [h("h3", null, "Output schema"), jsonBlock(agent.output_schema)] : null,
    h("a", { href: "#/tools", class: "muted" }, "tool schemas"))));
}

export async function toolsView(main, signal) {
  const tools = await api("/v1/tools", { signal });
  fill(main, h("h1", null, "Tools"), tools.map((tool) => h("article", { class: "card tool", "data-tool": tool.name },
    h("h2", null, tool.name), h("p", null, tool.description),
    h("details", null, h("summary", null, "parameters"), jsonBlock(tool.parameters)))));
}

export async function newRunView(main, signal) {
  const agents = await api("/v1/agents", { signal });
  const goal = h("textarea", { id: "goal", name: "goal", rows: 4, required: true, placeholder: "What should the agent do?" });
  const agent = h("select", { id: "agent", name: "agent" }, agents.map((a) => h("option", { value: a.name }, a.name)));
  const session = h("input", { id: "session", name: "session", placeholder: "optional: continue this session", pattern: "[A-Za-z0-9._:\\-]+" });
  const status = h("div");
  const form = h("form", { class: "card run-form", id: "run-form" },
    h("h1", null, "New run"),
    h("label", { for: "goal" }, "Goal"), goal,
    h("label", { for: "agent" }, "Agent"), agent,
    h("label", { for: "session" }, "Session"), session,
    h("button", { type: "submit" }, "Start run"), status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { goal: goal.value, agent: agent.value };
    if (session.value.trim()) body.session_id = session.value.trim();
    try {
      const run = await api("/v1/runs", { method: "POST", body, extra: { Prefer: "respond-async" }, signal });
      location.hash = `#/runs/${run.id}`;
    } catch (error) {
      fill(status, errorBox(error));
    }
  });
  fill(main, form);
}
