"""`load_settings`: environment variables parsed once, with errors that name the variable."""

import pytest

from agentkit.application.errors import ConfigurationError
from agentkit.entrypoints.wiring.settings import Settings, load_settings


def test_defaults_when_nothing_is_set() -> None:
    settings = load_settings({})
    assert settings == Settings()
    assert (settings.loop.max_steps, settings.loop.run_mode, settings.http.port, settings.http.api_keys) == (
        10,
        "inline",
        8000,
        (),
    )
    assert settings.llm.llm_temperature is None


def test_values_are_parsed_from_strings() -> None:
    settings = load_settings(
        {"MAX_STEPS": "4", "LLM_TEMPERATURE": "0.2", "RUN_MODE": "inline", "REDIS_URL": " redis://cache:6379/0 "}
    )
    assert (settings.loop.max_steps, settings.llm.llm_temperature, settings.loop.run_mode) == (4, 0.2, "inline")
    assert settings.state.redis_url == "redis://cache:6379/0"


def test_comma_lists_are_split_and_trimmed() -> None:
    settings = load_settings({"API_KEYS": " key-a, key-b,,key-c ", "AGENTKIT_TOOL_MODULES": "acme.tools"})
    assert settings.http.api_keys == ("key-a", "key-b", "key-c")
    assert settings.tools.agentkit_tool_modules == ("acme.tools",)


@pytest.mark.parametrize("blank", ["", "   "], ids=["empty", "spaces"])
def test_empty_values_mean_unset(blank: str) -> None:
    settings = load_settings({"MAX_STEPS": blank, "LLM_TEMPERATURE": blank, "API_KEYS": blank, "REDIS_URL": blank})
    chosen = (settings.loop.max_steps, settings.llm.llm_temperature, settings.http.api_keys, settings.state.redis_url)
    assert chosen == (10, None, (), None)


def test_unrelated_variables_are_ignored() -> None:
    assert load_settings({"PATH": "/usr/bin", "HOME": "/root"}) == Settings()


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MAX_STEPS", "abc"),
        ("MAX_STEPS", "0"),
        ("RUN_MODE", "x"),
        ("MAX_RUN_ATTEMPTS", "0"),
        ("LLM_TEMPERATURE", "3"),
        ("PORT", "70000"),
        ("MAX_REPEATED_CALLS", "1"),
        ("LOG_LEVEL", "verbose"),
    ],
)
def test_bad_values_name_the_variable_first(variable: str, value: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load_settings({variable: value})
    message = str(info.value)
    assert message.startswith(f"{variable}: ")
    assert "\n" not in message


def test_keyword_overrides_win_over_the_environment() -> None:
    settings = load_settings({"MAX_STEPS": "5", "HOST": "0.0.0.0"}, max_steps=7, api_keys=["k1"])  # noqa: S104
    assert (settings.loop.max_steps, settings.http.host, settings.http.api_keys) == (7, "0.0.0.0", ("k1",))  # noqa: S104


def test_an_override_of_none_leaves_the_environment_value() -> None:
    assert load_settings({"MAX_STEPS": "5"}, max_steps=None).loop.max_steps == 5


def test_a_bad_override_is_reported_like_a_bad_variable() -> None:
    with pytest.raises(ConfigurationError, match=r"^MAX_STEPS: "):
        load_settings({}, max_steps=0)


def test_a_misspelled_override_is_an_error() -> None:
    with pytest.raises(TypeError, match="unknown setting 'max_step'"):
        load_settings({}, max_step=3)
