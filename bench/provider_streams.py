"""What each provider adapter costs this process per answer: CPU for a 1,000-token answer, whole and streamed.

Each SDK-backed adapter (OpenAI, Gemini, Anthropic) asks a loopback fake in its provider's wire
format (`agentkit.testing.llm_conformance`) for the same 1,000-word answer, read whole (`chat`) and
streamed (`stream`, one event per word), in alternating rounds of the same run. The fake runs in a
child process, so the CPU counted (`time.process_time` of this process) is the adapter's and its
SDK's: sending the request, reading and parsing the answer, translating it. Reported per answer
and, for streams, per event; the median round of each. The ratios compare providers measured
together.

Run: `.venv/bin/python bench/provider_streams.py [--quick]`.
"""

import argparse
import asyncio
import multiprocessing
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

from agentkit.adapters.llm.anthropic_client import AnthropicLLMClient
from agentkit.adapters.llm.gemini_client import GeminiLLMClient
from agentkit.adapters.llm.openai_client import OpenAILLMClient
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMResponse, Message
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.testing.llm_conformance import (
    AnthropicWire,
    FakeUsage,
    GeminiWire,
    LoopbackLLMServer,
    OpenAIWire,
    Reply,
    WireFormat,
)

WORDS = 1_000
ANSWER = Reply(text=" ".join(f"word{n}" for n in range(WORDS)), usage=FakeUsage(input_tokens=50, output_tokens=WORDS))
CONVERSATION = [Message(role="system", content="Answer at length."), Message(role="user", content="Go on.")]
WIRES: dict[str, Callable[[], WireFormat]] = {"openai": OpenAIWire, "gemini": GeminiWire, "anthropic": AnthropicWire}


def _serve(provider: str, answers: int, port_out: Any) -> None:
    """The fake, in a process of its own: `answers` copies of the answer, until the bench ends it."""

    async def run() -> None:
        async with LoopbackLLMServer(WIRES[provider](), [ANSWER] * answers) as server:
            port_out.put(server.base_url)
            await asyncio.Event().wait()

    asyncio.run(run())


def _client(provider: str, base_url: str) -> LLMClient:
    settings: dict[str, Any] = {"llm_provider": provider, "llm_request_timeout_s": 60.0}
    if provider == "openai":
        config = load_settings({}, **settings, llm_base_url=f"{base_url}/v1", openai_api_key="k", llm_model="m").llm
        return OpenAILLMClient.from_config(config)
    if provider == "gemini":
        config = load_settings({}, **settings, llm_base_url=base_url, gemini_api_key="k").llm
        return GeminiLLMClient.from_config(config)
    config = load_settings({}, **settings, llm_base_url=base_url, anthropic_api_key="k").llm
    return AnthropicLLMClient.from_config(config)


async def _whole(client: LLMClient) -> float:
    started = time.process_time()
    response = await client.chat(CONVERSATION, [])
    spent = time.process_time() - started
    assert response.text == ANSWER.text
    return spent


async def _streamed(client: LLMClient) -> tuple[float, int]:
    started = time.process_time()
    items = [item async for item in client.stream(CONVERSATION, [])]
    spent = time.process_time() - started
    assert isinstance(items[-1], LLMResponse)
    assert items[-1].text == ANSWER.text
    return spent, len(items) - 1


async def measure(provider: str, rounds: int) -> dict[str, float]:
    """Median CPU ms per whole answer and per streamed answer, and µs per streamed event."""
    queue: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(provider, 2 * rounds + 2, queue), daemon=True)
    server.start()
    base_url = queue.get(timeout=30)
    client = _client(provider, base_url)
    whole: list[float] = []
    streamed: list[float] = []
    fragments = 0
    try:
        await _whole(client)  # warm-up: connections, imports, caches
        _, fragments = await _streamed(client)
        for _ in range(rounds):
            whole.append(await _whole(client))
            spent, fragments = await _streamed(client)
            streamed.append(spent)
    finally:
        await client.aclose()
        server.terminate()
        server.join(timeout=10)
    whole_ms = statistics.median(whole) * 1000
    streamed_ms = statistics.median(streamed) * 1000
    return {
        "whole_ms": whole_ms,
        "streamed_ms": streamed_ms,
        "fragments": fragments,
        "per_event_us": (streamed_ms - whole_ms) * 1000 / fragments,
    }


async def main(quick: bool) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    rounds = 5 if quick else 21
    results = {provider: await measure(provider, rounds) for provider in WIRES}
    print(f"{WORDS}-word answer, {rounds} rounds each, median CPU of this process (the fake runs apart)")
    print(f"{'provider':<10} {'whole ms':>9} {'streamed ms':>12} {'events':>7} {'µs/event':>9} {'streamed/whole':>15}")
    for provider, r in results.items():
        print(
            f"{provider:<10} {r['whole_ms']:>9.1f} {r['streamed_ms']:>12.1f} {r['fragments']:>7.0f} "
            f"{r['per_event_us']:>9.0f} {r['streamed_ms'] / r['whole_ms']:>14.1f}x"
        )
    base = results["openai"]
    for provider, r in results.items():
        print(
            f"{provider}/openai: whole {r['whole_ms'] / base['whole_ms']:.2f}x, "
            f"streamed {r['streamed_ms'] / base['streamed_ms']:.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="5 rounds instead of 21")
    asyncio.run(main(parser.parse_args().quick))
