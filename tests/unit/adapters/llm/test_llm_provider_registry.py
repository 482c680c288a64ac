"""Providers come from the `agentkit.llm_providers` entry points; the factory fails start-up clearly.

A plug-in here is a real installed distribution: a `*.dist-info` with `METADATA` and
`entry_points.txt` on `sys.path`, found by `importlib.metadata` like any pip-installed package.
"""

import json
import sys
import textwrap
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

import pytest

from agentkit.adapters.llm.config import LLMConfig
from agentkit.adapters.llm.factory import build_llm_client
from agentkit.adapters.llm.gemini_client import GeminiLLMClient
from agentkit.adapters.llm.openai_client import OpenAILLMClient
from agentkit.adapters.llm.registry import BUILTIN_PROVIDERS, ENTRY_POINT_GROUP, ProviderRegistry
from agentkit.adapters.llm.retry import RetryingLLMClient
from agentkit.adapters.llm.scripted import ScriptedLLMClient
from agentkit.application.errors import ConfigurationError
from agentkit.domain.messages import Message
from agentkit.entrypoints.wiring.settings import load_settings

PLUGIN_MODULE = '''
"""A provider from another package: AgentKit knows nothing about it."""

from agentkit.adapters.llm.errors import ProviderUnavailable
from agentkit.application.ports.llm_client import LLMClient
from agentkit.domain.messages import LLMResponse


class EchoLLMClient(LLMClient):
    def __init__(self, settings):
        self._model = settings.llm_model or "echo-1"
        self.fail_first = int(settings.llm_base_url or 0)
        self.calls = 0

    @property
    def provider(self):
        return "echo"

    @property
    def model(self):
        return self._model

    async def chat(self, messages, tools):
        self.calls += 1
        if self.calls <= self.fail_first:
            raise ProviderUnavailable("echo is busy", retry_after_s=0.25, status=503)
        return LLMResponse(text="echo: " + messages[-1].content)


def build(settings):
    return EchoLLMClient(settings)
'''


def env(**values: Any) -> LLMConfig:
    return load_settings({}, **values).llm


def install_plugin(root: Path, monkeypatch: pytest.MonkeyPatch, *, module: str, entries: str) -> None:
    """Install a distribution `module` with these entry points, as pip would, on sys.path."""
    (root / f"{module}.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    info = root / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entries}\n")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_the_builtins_are_registered_as_entry_points_of_agentkit() -> None:
    installed = {entry.name: entry.value for entry in entry_points(group=ENTRY_POINT_GROUP)}
    assert {name: installed.get(name) for name in BUILTIN_PROVIDERS} == BUILTIN_PROVIDERS


async def test_a_provider_from_another_package_needs_no_change_to_agentkit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(tmp_path, monkeypatch, module="agentkit_echo", entries="echo = agentkit_echo:build")

    client = build_llm_client(env(llm_provider="echo"))

    assert isinstance(client, RetryingLLMClient)
    assert "echo" in ProviderRegistry.from_entry_points().names()
    response = await client.chat([Message(role="user", content="hi")], [])
    assert response.text == "echo: hi"


async def test_a_plugin_runs_under_the_same_retry_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, monkeypatch, module="agentkit_echo2", entries="echo2 = agentkit_echo2:build")
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    # The plug-in reads LLM_BASE_URL as "fail this many times first", to show the retries.
    client = build_llm_client(env(llm_provider="echo2", llm_base_url="2"), sleep=sleep, rand=lambda: 0.5)
    response = await client.chat([Message(role="user", content="hi")], [])
    assert (response.text, response.attempts, waits) == ("echo: hi", 3, [0.25, 0.25])


def test_a_provider_registered_twice_is_a_configuration_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, monkeypatch, module="agentkit_fake_openai", entries="openai = agentkit_fake_openai:build")
    with pytest.raises(ConfigurationError, match=r"LLM_PROVIDER: provider 'openai' is registered more than once"):
        build_llm_client(env(llm_provider="openai", openai_api_key="k"))


def test_a_plugin_that_fails_to_import_is_a_configuration_error_naming_it() -> None:
    registry = ProviderRegistry([EntryPoint(name="broken", value="agentkit_no_such_module:build", group="g")])
    with pytest.raises(ConfigurationError, match=r"provider 'broken' \(agentkit_no_such_module:build\) failed to load"):
        build_llm_client(env(llm_provider="broken"), registry=registry)
    assert "openai" in registry.names()  # the built-ins are there whatever the metadata says


def test_a_factory_that_fails_or_builds_no_client_is_refused() -> None:
    registry = ProviderRegistry(
        [
            EntryPoint(name="odd", value="builtins:repr", group="g"),
            EntryPoint(name="buggy", value="json:dumps", group="g"),
        ]
    )
    with pytest.raises(ConfigurationError, match="provider 'odd' did not build an LLMClient"):
        build_llm_client(env(llm_provider="odd"), registry=registry)
    with pytest.raises(ConfigurationError, match="provider 'buggy' failed to build its client: TypeError"):
        build_llm_client(env(llm_provider="buggy"), registry=registry)


def test_an_unknown_provider_names_the_variable_and_the_choices() -> None:
    choices = "anthropic, azure_openai, demo, gemini, openai, scripted"
    with pytest.raises(ConfigurationError, match=rf"LLM_PROVIDER: unknown provider 'bedrock'.*{choices}"):
        build_llm_client(env(llm_provider="bedrock"))


@pytest.mark.parametrize(
    ("values", "variable"),
    [
        ({"llm_provider": "openai"}, "OPENAI_API_KEY"),
        ({"llm_provider": "gemini", "openai_api_key": "k"}, "GEMINI_API_KEY"),
        ({"llm_provider": "anthropic", "openai_api_key": "k"}, "ANTHROPIC_API_KEY"),
        ({"llm_provider": "scripted"}, "LLM_SCRIPT"),
        ({"llm_provider": "openai", "openai_api_key": "k", "llm_base_url": "http://127.0.0.1:11434/v1"}, "LLM_MODEL"),
    ],
)
def test_a_missing_setting_stops_start_up_naming_the_variable(values: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{variable} is not set"):
        build_llm_client(env(**values))


@pytest.mark.parametrize("provider", ["openai", "gemini", "anthropic"])
@pytest.mark.parametrize(
    "base_url",
    [
        "localhost:11434/v1",  # no scheme
        "ftp://127.0.0.1/v1",
        "http:///v1",  # no host
        "http://gateway:sekret@127.0.0.1:port/v1",  # a port that is not a number
    ],
)
def test_a_base_url_that_is_not_http_stops_start_up_without_repeating_it(provider: str, base_url: str) -> None:
    config = env(llm_provider=provider, llm_base_url=base_url, llm_model="m", **{f"{provider}_api_key": "k"})

    with pytest.raises(ConfigurationError) as raised:
        build_llm_client(config)
    # one line naming the variable, and never the value: a gateway's key may sit in it
    assert str(raised.value) == (
        "LLM_BASE_URL: expected an http:// or https:// URL with a host, such as http://127.0.0.1:11434/v1"
    )


async def test_switching_llm_provider_switches_the_adapter_with_no_code_change() -> None:
    openai = build_llm_client(env(llm_provider="openai", openai_api_key="k", llm_model="gpt-4.1"))
    gemini = build_llm_client(env(llm_provider="GEMINI", gemini_api_key="k"))
    assert isinstance(openai, RetryingLLMClient)
    assert isinstance(gemini, RetryingLLMClient)
    assert isinstance(openai.inner, OpenAILLMClient)
    assert isinstance(gemini.inner, GeminiLLMClient)
    assert (openai.inner.model, gemini.inner.model) == ("gpt-4.1", "gemini-2.5-flash")
    await openai.aclose()
    await gemini.aclose()


async def test_the_scripted_provider_replays_the_file_in_llm_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "scripted answer", "input_tokens": 3}]))
    client = build_llm_client(env(llm_provider="scripted", llm_script=str(script)))
    assert isinstance(client, RetryingLLMClient)
    assert isinstance(client.inner, ScriptedLLMClient)
    response = await client.chat([Message(role="user", content="hi")], [])
    assert (response.text, response.usage.input_tokens, response.attempts) == ("scripted answer", 3, 1)
