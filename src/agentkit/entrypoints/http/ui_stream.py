"""A run's events as the Vercel AI SDK's UI message stream (`format=vercel`): what `useChat` reads.

The run is one assistant message. Each LLM call is a step (`start-step` .. `finish-step`, the tool
calls it asked for and their results inside); text and argument fragments become `text-delta` and
`tool-input-delta` as they come, and the stored step completes them: text a slow client missed
(fragments are dropped from the log once their step is stored) comes as one last `text-delta`, a
call's arguments as `tool-input-available`. A resumed run that asks its model again (`retry`) sends
`reset-step`: the client drops what the step showed so far. A run that does not succeed ends with an
`error` chunk (its status and reason), then `finish` and `data: [DONE]`.
"""

from collections.abc import AsyncIterator
from typing import Final

import msgspec
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from agentkit.application.ports.run_event_log import (
    ChildDeltaEvent,
    ChildEvent,
    DeltaEvent,
    RunEvent,
    StatusEvent,
    StepEvent,
)
from agentkit.application.runs.follow_run import RunFollower
from agentkit.domain.run import Run, RunStatus
from agentkit.domain.steps import LLMStep, ToolStep
from agentkit.entrypoints.http.dto.actions import action_view
from agentkit.entrypoints.http.dto.ui_chunks import (
    DONE,
    ErrorChunk,
    FinishChunk,
    FinishReason,
    FinishStepChunk,
    RequiredActionChunk,
    ResetStepChunk,
    StartChunk,
    StartStepChunk,
    TextDeltaChunk,
    TextEndChunk,
    TextStartChunk,
    ToolInputAvailableChunk,
    ToolInputDeltaChunk,
    ToolInputStartChunk,
    ToolOutputAvailableChunk,
    ToolOutputErrorChunk,
    UIChunk,
)
from agentkit.entrypoints.http.events import KEEP_ALIVE, NO_BUFFERING

UI_MESSAGE_STREAM_HEADERS: Final = {"x-vercel-ai-ui-message-stream": "v1", **NO_BUFFERING}
"""What the AI SDK expects of a UI message stream response (besides `text/event-stream`)."""
_FINISH: Final[dict[RunStatus, FinishReason]] = {
    RunStatus.SUCCEEDED: "stop",
    RunStatus.REFUSED: "content-filter",
    RunStatus.MAX_STEPS_EXCEEDED: "other",
    RunStatus.CANCELLED: "other",
}
_encoder = msgspec.json.Encoder()


class UIMessageStream:
    """One run's events, in order, as UI message chunks (one translator per response).

    What it tracks: the step open in the message, the text part open in it (and the text the step
    sent so far), the calls whose arguments stream (by their index in the turn), and the calls
    announced to the client whose results are due (the step ends once they came).
    """

    def __init__(self, run: Run) -> None:
        self._run = run
        self._step: int | None = None
        self._text_id: str | None = None
        self._texts = 0  # text parts opened: each gets an id of its own, also after a reset
        self._sent_text = ""  # the open step's text so far, every part of it
        self._calls: dict[int, str] = {}  # index in the turn -> call id, for calls whose arguments stream
        self._announced: set[str] = set()  # calls the client knows of (tool-input-available)
        self._due: set[str] = set()  # announced calls of the open step without a result yet
        self._told = False  # a step of the run reached this stream (else the stored answer is all there is)
        self.ended = False

    def start(self) -> list[UIChunk]:
        """The message begins: it is the run's (its id), in the run's session."""
        run = self._run
        metadata = {"run_id": run.id, "session_id": run.session_id, "agent": run.agent}
        return [StartChunk(message_id=run.id, message_metadata=metadata)]

    def on_event(self, event: RunEvent) -> list[UIChunk]:
        """The chunks one event of the run's log makes (none for most status changes)."""
        if isinstance(event, DeltaEvent):
            return self._on_delta(event)
        if isinstance(event, StepEvent):
            step = event.step
            return self._on_llm_step(step) if isinstance(step, LLMStep) else self._on_tool_step(step)
        if isinstance(event, ChildEvent | ChildDeltaEvent):
            return []  # the UI message stream shows the run's own answer
        return self._on_status(event)

    def stopped(self) -> list[UIChunk]:
        """The server stopped streaming before the run ended (it is shutting down): say where the run is."""
        chunks = self._close_step()
        text = f"the server stopped streaming; the run goes on: GET /v1/runs/{self._run.id}/events"
        return [*chunks, ErrorChunk(error_text=text), FinishChunk(finish_reason="other")]

    def _on_delta(self, delta: DeltaEvent) -> list[UIChunk]:
        self._told = True
        chunks = self._open_step(delta.step_no)
        if delta.kind == "retry":
            return [*chunks, *self._reset()]
        if delta.kind == "text":
            if self._text_id is None:
                chunks.append(self._open_text())
            self._sent_text += delta.text
            assert self._text_id is not None  # noqa: S101 - opened above
            chunks.append(TextDeltaChunk(id=self._text_id, delta=delta.text))
            return chunks
        chunks += self._close_text()
        call_id = self._calls.get(delta.index)
        if delta.call_id is not None and call_id != delta.call_id:  # a call's first fragment names it
            call_id = self._calls[delta.index] = delta.call_id
            chunks.append(ToolInputStartChunk(tool_call_id=call_id, tool_name=delta.name or ""))
        if call_id is not None and delta.text:
            chunks.append(ToolInputDeltaChunk(tool_call_id=call_id, input_text_delta=delta.text))
        return chunks

    def _on_llm_step(self, step: LLMStep) -> list[UIChunk]:
        self._told = True
        chunks = self._open_step(step.step_no)
        streamed_calls = set(self._calls.values())
        final_calls = {call.id for call in step.tool_calls}
        if step.redacted:  # stored without its content (TRACE_PAYLOADS, TRACE_REDACT_FIELDS): keep what streamed
            rest = ""
        elif not step.text.startswith(self._sent_text) or not streamed_calls <= final_calls:
            chunks += self._reset()  # what streamed is not what the step holds: show the step afresh
            rest = step.text
        else:
            rest = step.text[len(self._sent_text) :]
        if rest:
            if self._text_id is None:
                chunks.append(self._open_text())
            assert self._text_id is not None  # noqa: S101 - opened above
            chunks.append(TextDeltaChunk(id=self._text_id, delta=rest))
            self._sent_text = step.text
        chunks += self._close_text()
        for call in step.tool_calls:
            chunks.append(ToolInputAvailableChunk(tool_call_id=call.id, tool_name=call.name, input=call.arguments))
            self._announced.add(call.id)
            self._due.add(call.id)
        self._calls = {}
        if not self._due:  # an answer (or a failed call): nothing more belongs to this step
            chunks += self._close_step()
        return chunks

    def _on_tool_step(self, step: ToolStep) -> list[UIChunk]:
        self._told = True
        chunks: list[UIChunk] = []
        if step.call_id not in self._announced:  # its LLM step never reached this stream: say what was called
            chunks += self._open_step(self._step if self._step is not None else step.step_no)
            chunks.append(
                ToolInputAvailableChunk(tool_call_id=step.call_id, tool_name=step.tool_name, input=step.arguments)
            )
            self._announced.add(step.call_id)
        result = step.result
        if result.ok:
            chunks.append(ToolOutputAvailableChunk(tool_call_id=step.call_id, output=result.output))
        else:
            chunks.append(ToolOutputErrorChunk(tool_call_id=step.call_id, error_text=result.error or "the call failed"))
        self._due.discard(step.call_id)
        if not self._due:
            chunks += self._close_step()
        return chunks

    def _on_status(self, event: StatusEvent) -> list[UIChunk]:
        run = self._run = event.run
        if run.status is RunStatus.REQUIRES_ACTION:
            view = action_view(run.action)
            return [] if view is None else [RequiredActionChunk(id=run.id, data=msgspec.to_builtins(view))]
        if not run.is_terminal:
            return []
        self.ended = True
        chunks = self._close_step()
        if not self._told and run.answer:  # its steps' events expired before this client came: the stored answer
            chunks += [StartStepChunk(), self._open_text()]
            assert self._text_id is not None  # noqa: S101 - opened above
            chunks += [TextDeltaChunk(id=self._text_id, delta=run.answer), *self._close_text(), FinishStepChunk()]
        if run.status is not RunStatus.SUCCEEDED:
            reason = f": {run.failure_reason}" if run.failure_reason else ""
            chunks.append(ErrorChunk(error_text=f"the run ended {run.status.value}{reason}"))
        chunks.append(FinishChunk(finish_reason=_FINISH.get(run.status, "error")))
        return chunks

    def _open_step(self, step_no: int) -> list[UIChunk]:
        """Begin the step `step_no` (ending the one open, if another)."""
        if self._step == step_no:
            return []
        chunks = self._close_step()
        self._step = step_no
        chunks.append(StartStepChunk())
        return chunks

    def _close_step(self) -> list[UIChunk]:
        if self._step is None:
            return []
        chunks = self._close_text()
        self._step = None
        self._sent_text = ""
        self._calls = {}
        self._due = set()
        chunks.append(FinishStepChunk())
        return chunks

    def _open_text(self) -> TextStartChunk:
        self._texts += 1
        self._text_id = f"text-{self._texts}"
        return TextStartChunk(id=self._text_id)

    def _close_text(self) -> list[UIChunk]:
        if self._text_id is None:
            return []
        chunks: list[UIChunk] = [TextEndChunk(id=self._text_id)]
        self._text_id = None
        return chunks

    def _reset(self) -> list[UIChunk]:
        """Void what the open step showed: the client drops its parts since `start-step`."""
        self._text_id = None
        self._sent_text = ""
        self._calls = {}
        return [ResetStepChunk()]


async def ui_messages(follower: RunFollower) -> AsyncIterator[ServerSentEventMessage]:
    """The follower's events as UI message chunks, a keep-alive comment wherever it had nothing to say,
    and `[DONE]` at the end."""
    stream = UIMessageStream(follower.run)
    for chunk in stream.start():
        yield ServerSentEventMessage(data=_encoder.encode(chunk))
    async for entry in follower:
        if entry is None:
            yield ServerSentEventMessage(comment=KEEP_ALIVE, data=None)
            continue
        for chunk in stream.on_event(entry.event):
            yield ServerSentEventMessage(data=_encoder.encode(chunk))
    if not stream.ended:
        for chunk in stream.stopped():
            yield ServerSentEventMessage(data=_encoder.encode(chunk))
    yield ServerSentEventMessage(data=DONE)


def ui_message_stream(follower: RunFollower, headers: dict[str, str]) -> ServerSentEvent:
    """The streaming response, with the header the AI SDK looks for."""
    return ServerSentEvent(ui_messages(follower), headers={**headers, **UI_MESSAGE_STREAM_HEADERS}, status_code=200)
