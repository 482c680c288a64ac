"""LLM_TOKEN_PROVIDER: a bearer token from the user's own code, for providers signed in without a key.

The setting names a zero-argument callable as `package.module:attribute`; it returns the token (or
an awaitable of it) and is called before each request, so refreshing and caching are its business,
as with azure-identity's `get_bearer_token_provider` (Microsoft Entra ID for Azure OpenAI)::

    # myauth.py
    from azure.identity import DefaultAzureCredential, get_bearer_token_provider
    token = get_bearer_token_provider(DefaultAzureCredential(), "https://cognitiveservices.azure.com/.default")

    LLM_TOKEN_PROVIDER=myauth:token
"""

import importlib
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from agentkit.application.errors import ConfigurationError

TokenSource = Callable[[], Awaitable[str]]


def load_token_provider(spec: str) -> TokenSource:
    """The callable `spec` names, as an async function returning the token.

    Raises:
        ConfigurationError: the spec is not `module:attribute`, or does not import to a callable.
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError("LLM_TOKEN_PROVIDER: expected package.module:attribute, such as myauth:token")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigurationError(f"LLM_TOKEN_PROVIDER: cannot load {spec}: {type(exc).__name__}: {exc}") from exc
    if not callable(found):
        raise ConfigurationError(f"LLM_TOKEN_PROVIDER: {spec} is not callable")
    provider: Callable[[], Any] = found

    async def token() -> str:
        value = provider()
        if inspect.isawaitable(value):
            value = await value
        return str(value)

    return token
