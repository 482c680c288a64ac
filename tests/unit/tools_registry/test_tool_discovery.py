"""Finding user tools in modules named by AGENTKIT_TOOL_MODULES and in `agentkit.tools` entry points."""

import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.application.errors import ConfigurationError
from agentkit.application.tools.discovery import load_entry_point_tools, load_tool_modules

PREFIX = "agentkit_discovery_probe"

TOOLS_MODULE = '''
from agentkit.application.tools import ToolContext, tool


@tool
def forecast(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool(name="weather-alerts")
def alerts(region: str) -> list[str]:
    return []


def helper() -> str:
    return "not a tool"


ALL = [forecast, alerts, helper]
'''


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on sys.path; modules imported from it are forgotten afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith(PREFIX)]:
        del sys.modules[name]


def write_module(site: Path, name: str, source: str) -> str:
    (site / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def install_distribution(site: Path, entry_points: dict[str, str]) -> None:
    """A minimal installed distribution that declares `agentkit.tools` entry points."""
    dist_info = site / "acme_tools-1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-tools\nVersion: 1.0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[agentkit.tools]\n{lines}")


def test_loads_the_tools_a_module_defines(site: Path) -> None:
    module = write_module(site, f"{PREFIX}_weather", TOOLS_MODULE)
    tools = load_tool_modules([module])
    assert sorted(t.name for t in tools) == ["forecast", "weather-alerts"]
    forecast = next(t for t in tools if t.name == "forecast")
    assert forecast("Oslo") == "sunny in Oslo"


def test_loads_several_modules_in_order(site: Path) -> None:
    first = write_module(site, f"{PREFIX}_first", TOOLS_MODULE)
    second = write_module(
        site,
        f"{PREFIX}_second",
        "from agentkit.application.tools import tool\n@tool\ndef clock() -> str:\n    return 'noon'\n",
    )
    assert [t.name for t in load_tool_modules([second, first])] == ["clock", "forecast", "weather-alerts"]


def test_tools_a_module_imports_are_not_registered_twice(site: Path) -> None:
    base = write_module(site, f"{PREFIX}_base", TOOLS_MODULE)
    user = write_module(
        site,
        f"{PREFIX}_user",
        f"from {base} import forecast\nfrom agentkit.application.tools import tool\n"
        "@tool\ndef clock() -> str:\n    return 'noon'\n",
    )
    exporter = write_module(site, f"{PREFIX}_exporter", f"from {base} import forecast\n__all__ = ['forecast']\n")

    assert [t.name for t in load_tool_modules([base, user])] == ["forecast", "weather-alerts", "clock"]
    assert [t.name for t in load_tool_modules([exporter])] == ["forecast"]


def test_no_modules_means_no_tools() -> None:
    assert load_tool_modules([]) == []


def test_a_module_that_fails_to_import_is_a_configuration_error(site: Path) -> None:
    broken = write_module(site, f"{PREFIX}_broken", "raise RuntimeError('missing API key')\n")
    with pytest.raises(ConfigurationError) as info:
        load_tool_modules([broken])
    message = str(info.value)
    assert message.startswith("AGENTKIT_TOOL_MODULES")
    assert broken in message
    assert "missing API key" in message


def test_a_module_that_does_not_exist_is_a_configuration_error(site: Path) -> None:
    with pytest.raises(ConfigurationError, match=f"AGENTKIT_TOOL_MODULES: cannot import '{PREFIX}_nowhere'"):
        load_tool_modules([f"{PREFIX}_nowhere"])


@pytest.mark.parametrize(
    ("target", "names"),
    [
        ("{module}", ["forecast", "weather-alerts"]),
        ("{module}:forecast", ["forecast"]),
        ("{module}:ALL", ["forecast", "weather-alerts"]),
        ("{module}:helper", []),
    ],
    ids=["module", "one-tool", "list", "not-a-tool"],
)
def test_loads_entry_point_tools(site: Path, target: str, names: list[str]) -> None:
    module = write_module(site, f"{PREFIX}_acme", TOOLS_MODULE)
    install_distribution(site, {"acme": target.format(module=module)})
    assert sorted(t.name for t in load_entry_point_tools()) == names


def test_a_broken_entry_point_is_a_configuration_error(site: Path) -> None:
    install_distribution(site, {"acme": f"{PREFIX}_absent"})
    with pytest.raises(ConfigurationError, match=re.escape("entry point 'acme' in 'agentkit.tools' failed to load")):
        load_entry_point_tools()


def test_other_groups_are_ignored(site: Path) -> None:
    module = write_module(site, f"{PREFIX}_acme", TOOLS_MODULE)
    install_distribution(site, {"acme": module})
    assert load_entry_point_tools(group="someone.else") == []
