"""A2A through the a2a-sdk's own client: cards, send (blocking and streaming), get, list, cancel, input, push, auth."""

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers.proto_helpers import new_text_message
from a2a.types.a2a_pb2 import SendMessageRequest, GetTaskRequest, TaskState

from agentkit.domain.ids import ToolCallId
from agentkit.domain.messages import LLMResponse, ToolCall, Usage
from tests.http_fixtures import KEY_A, ApiClient, ApiFactory, headers


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=2))


async def test_smoke(api_factory: ApiFactory) -> None:
    api = await api_factory([answer("four")])
    card = await A2ACardResolver(api, "http://testserver").get_agent_card()
    print(card)
    api.headers["X-API-Key"] = KEY_A
    client = ClientFactory(ClientConfig(httpx_client=api, streaming=False)).create(card)
    events = [e async for e in client.send_message(SendMessageRequest(message=new_text_message("2+2?")))]
    print(events)
