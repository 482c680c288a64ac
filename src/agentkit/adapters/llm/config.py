"""What the LLM_* variables say: the one configuration every provider factory receives.

A provider plug-in's factory is `(LLMConfig) -> LLMClient`: it reads the fields it needs (its model,
base URL and key) and ignores the rest. The composition root reads these from the environment once;
field `llm_model` is the variable `LLM_MODEL`, and so on.
"""

from typing import Annotated, Literal

import msgspec

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]


class LLMConfig(msgspec.Struct, frozen=True, kw_only=True, rename="upper"):
    """The LLM provider, its model and how patiently to call it."""

    # demo: a rule-based stand-in that answers AgentKit's own demo questions with the built-in tools,
    # so a fresh install runs; a real deployment names openai, gemini, anthropic or a plug-in.
    llm_provider: str = "demo"
    llm_model: str = ""
    llm_base_url: str | None = None
    llm_script: str | None = None
    openai_api_key: str | None = None
    gemini_api_key: str | None = None
    anthropic_api_key: str | None = None
    # azure_openai (the classic deployment API): its key and api-version; LLM_BASE_URL is the
    # resource's endpoint, LLM_MODEL the deployment's name
    azure_openai_api_key: str | None = None
    azure_openai_api_version: str | None = None
    # openai, azure_openai: a bearer token from `package.module:callable` instead of a key
    # (Microsoft Entra ID; see token_provider)
    llm_token_provider: str | None = None
    llm_temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    llm_max_tokens: PositiveInt | None = None
    llm_request_timeout_s: PositiveFloat = 60.0
    llm_max_retries: NonNegativeInt = 3
    llm_backoff_base_s: PositiveFloat = 0.5
    llm_backoff_cap_s: PositiveFloat = 20.0
    # openai: the `content` of an assistant message that calls tools and says nothing. "" works for
    # OpenAI and llama-cpp-python (a missing key makes its templates fail); null for gateways that reject "".
    llm_tool_call_content: Literal["empty", "null", "omit"] = "empty"
    # openai: read an answer made only of JSON tool calls naming offered tools as those calls
    # (small models on their own chat template write them as text); off: it stays the answer.
    llm_text_tool_calls: bool = False
    # openai: send `parallel_tool_calls` with this value (false: at most one tool call a turn); unset:
    # the request leaves it out and the provider's default holds (OpenAI's allows several). An agent
    # profile may set its own (`parallel_tool_calls`).
    llm_parallel_tool_calls: bool | None = None
    # anthropic: cache breakpoints on the tools, the system prompt and the conversation so far, so
    # each turn reads the prefix the last one sent from the cache (billed at a tenth of the input price).
    llm_prompt_caching: bool = True
