"""What the conformance suite runs against: a provider's client, made to meet a list of fake answers.

`HttpTarget` serves the answers from a `LoopbackLLMServer` in the provider's wire format and
builds the real client against its URL (the usual case, and what a provider package uses);
`ScriptedTarget` plays them with the scripted client, which has no wire.
"""

from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Protocol

from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.adapters.llm.scripted import ScriptedFailure, ScriptedLLMClient, ScriptedTurnOutcome
from agentkit.application.errors import LLMRequestError
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import FinishReason, LLMResponse, ToolCall, Usage
from agentkit.testing.llm_conformance.answers import Answer, Failure, FakeUsage, Hang, Reply
from agentkit.testing.llm_conformance.loopback import LoopbackLLMServer, SentResult, WireFormat

ClientBuilder = Callable[[str, float], LLMClient]
"""Builds the client under test from the fake's base URL and a request timeout in seconds."""

_TRANSIENT = frozenset({408, 409, 429})


class ConformanceTarget(Protocol):
    """A provider as the suite sees it.

    Attributes:
        name: How test ids name it.
        priced: Whether the price table knows the client's model (the cost is then checked).
        bad_calls_are_unavailable: The provider reports a call it could not parse as transient
            trouble (Gemini's `MALFORMED_FUNCTION_CALL`) instead of returning it with `arguments_error`.
    """

    name: str
    priced: bool
    bad_calls_are_unavailable: bool

    @abstractmethod
    async def client(self, answers: Sequence[Answer], *, timeout_s: float = 30.0) -> LLMClient:
        """A client whose provider answers the next requests with `answers`, in order."""

    @abstractmethod
    def requests(self) -> int:
        """How many requests the last client made reached the provider."""

    @abstractmethod
    def tool_results(self, request_no: int) -> list[SentResult]:
        """The tool results request `request_no` (from 0) of the last client carried back."""

    @abstractmethod
    async def aclose(self) -> None:
        """Close every client and fake made."""


class HttpTarget(ConformanceTarget):
    """A provider client against a loopback fake speaking its wire format.

    Args:
        name: How test ids name it.
        wire: Makes the wire format (one per client: the Anthropic fake's cache is per server).
        build: Builds the client from the fake's base URL and a request timeout.
        priced: Whether the price table knows the model `build` names.
        bad_calls_are_unavailable: See `ConformanceTarget`.
    """

    def __init__(
        self,
        name: str,
        wire: Callable[[], WireFormat],
        build: ClientBuilder,
        *,
        priced: bool = False,
        bad_calls_are_unavailable: bool = False,
    ) -> None:
        self.name = name
        self.priced = priced
        self.bad_calls_are_unavailable = bad_calls_are_unavailable
        self._wire = wire
        self._build = build
        self._servers: list[LoopbackLLMServer] = []
        self._clients: list[LLMClient] = []

    async def client(self, answers: Sequence[Answer], *, timeout_s: float = 30.0) -> LLMClient:
        """Start a fake with `answers` and build the client against it."""
        server = await LoopbackLLMServer(self._wire(), answers).__aenter__()
        self._servers.append(server)
        client = self._build(server.base_url, timeout_s)
        self._clients.append(client)
        return client

    @property
    def server(self) -> LoopbackLLMServer:
        """The last fake started."""
        return self._servers[-1]

    def requests(self) -> int:
        """Requests the last fake received."""
        return len(self.server.requests)

    def tool_results(self, request_no: int) -> list[SentResult]:
        """What the wire format reads from the request."""
        return self.server.wire.tool_results(self.server.requests[request_no])

    async def aclose(self) -> None:
        """Close the clients, then the fakes."""
        for client in self._clients:
            await client.aclose()
        for server in self._servers:
            await server.aclose()


class ScriptedTarget(ConformanceTarget):
    """The scripted client, playing the answers as responses and failures (it has no wire)."""

    name = "scripted"
    priced = False
    bad_calls_are_unavailable = False

    def __init__(self) -> None:
        self._last: ScriptedLLMClient | None = None

    async def client(self, answers: Sequence[Answer], *, timeout_s: float = 30.0) -> LLMClient:
        """A scripted client with the answers as its script."""
        self._last = ScriptedLLMClient([_scripted(answer) for answer in answers])
        return self._last

    def requests(self) -> int:
        """Calls the last client took."""
        return len(self._last.requests) if self._last else 0

    def tool_results(self, request_no: int) -> list[SentResult]:
        """The tool messages the call was sent."""
        messages = self._last.requests[request_no][0] if self._last else []
        return [
            SentResult(call_id=m.tool_call_id, text=m.content, is_error=m.is_error)
            for m in messages
            if m.role == "tool"
        ]

    async def aclose(self) -> None:
        """Nothing to close."""


def _scripted(answer: Answer) -> ScriptedTurnOutcome:
    if isinstance(answer, Hang):
        return ScriptedFailure(error=ProviderUnavailable("the script did not answer in time"))
    if isinstance(answer, Failure):
        if answer.status in _TRANSIENT or answer.status >= 500:
            retry_after = answer.headers.get("retry-after")
            return ScriptedFailure(
                error=ProviderUnavailable(
                    f"HTTP {answer.status}: {answer.message}",
                    retry_after_s=float(retry_after) if retry_after else None,
                    status=answer.status,
                )
            )
        return ScriptedFailure(error=LLMRequestError(f"HTTP {answer.status}: {answer.message}"))
    if answer.cut_after is not None:
        partial = _response(answer)
        return ScriptedFailure(
            error=ProviderUnavailable("the script's connection broke"), fragments=answer.cut_after, partial=partial
        )
    return _response(answer)


def _response(reply: Reply) -> LLMResponse:
    calls = tuple(
        ToolCall(id=ToolCallId(c.id), name=c.name, arguments=c.arguments)
        if c.raw_arguments is None
        else ToolCall(id=ToolCallId(c.id), name=c.name, arguments_error=f"not a JSON object: {c.raw_arguments!r}")
        for c in reply.calls
    )
    usage = reply.usage or FakeUsage()
    finish = {
        "stop": FinishReason.STOP,
        "tool_calls": FinishReason.TOOL_CALLS,
        "refusal": FinishReason.REFUSED,
        "length": FinishReason.LENGTH,
    }[reply.stop]
    if calls and finish is not FinishReason.LENGTH:
        finish = FinishReason.TOOL_CALLS
    refused = finish is FinishReason.REFUSED
    return LLMResponse(
        text="" if refused else reply.text,
        tool_calls=() if refused else calls,
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
        ),
        finish_reason=finish,
        refusal=(reply.refusal or "refused") if refused else None,
    )
