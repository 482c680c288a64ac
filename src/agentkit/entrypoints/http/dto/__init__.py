"""The wire format: msgspec Structs for every request and response, and the mapping from the domain.

One module per concept; import from the module itself:

| module | what |
| --- | --- |
| `fields` | text types several shapes share: session ids, agent names, run statuses, the goal's pattern |
| `run_create`, `answers` | POST /v1/runs, and the answers a paused run waits on (approvals, tool outputs) |
| `runs`, `actions` | a run as every route shows it, a page of runs, and what a paused run waits on |
| `steps`, `messages`, `trace`, `events` | a run's steps, the messages its LLM calls sent, its trace, its SSE events |
| `tools`, `sessions`, `agents`, `chat`, `webhooks`, `health` | the other routes' shapes |
"""
