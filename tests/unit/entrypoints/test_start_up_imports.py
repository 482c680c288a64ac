"""`agentkit --help`, a bad setting and `import agentkit` answer at once: they never load the heavy libraries.

Measured on a 2-vCPU VM: `agentkit --help` took about 5.4 s of CPU when it imported SQLAlchemy,
Litestar, the OpenAI and Google SDKs and Pygments; without them about 0.2 s. The guard here is which
modules a fresh interpreter holds afterwards, not a clock, so it holds on a busy machine too.
"""

import json
import os
import subprocess
import sys

import pytest

# Each costs from a few hundred milliseconds to two seconds of CPU to import.
HEAVY = (
    "sqlalchemy",
    "asyncpg",
    "alembic",
    "litestar",
    "uvicorn",
    "dishka",
    "redis",
    "openai",
    "google",
    "httpx",
    "pygments",
    "rich",
    "structlog",
)

PROBE = """
import json, sys
{body}
print(json.dumps(sorted({{name.partition(".")[0] for name in sys.modules}})))
"""


def loaded_after(body: str, **env: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Run `body` in a fresh interpreter; the top-level packages it loaded (the last stdout line)."""
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-c", PROBE.format(body=body)],
        env={**os.environ, "AGENTKIT_ENV_FILE": os.devnull, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1])), done


CLI = """
from agentkit.entrypoints.wiring.main import main
try:
    code = main({argv!r})
except SystemExit as exit:
    code = exit.code
print("exit", code)
"""


def test_help_loads_none_of_the_heavy_libraries() -> None:
    loaded, done = loaded_after(CLI.format(argv=["--help"]))

    assert "exit 0" in done.stdout
    assert "usage: agentkit" in done.stdout
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["run", "hi"], {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": ""}, "OPENAI_API_KEY is not set"),
        (["serve"], {"LLM_PROVIDER": "gemini", "GEMINI_API_KEY": ""}, "GEMINI_API_KEY is not set"),
        (["worker"], {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": ""}, "OPENAI_API_KEY is not set"),
        (
            ["run", "hi"],
            {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k", "LLM_BASE_URL": "localhost:11434/v1"},
            "LLM_BASE_URL: expected an http:// or https:// URL",
        ),
        (["run", "hi"], {"MAX_STEPS": "many"}, "MAX_STEPS: Expected `int`, got `str`"),
        (["serve"], {"PORT": "0"}, "PORT: Expected `int` >= 1"),
        (["serve"], {"AGENTKIT_TOOL_MODULES": "no_such_module_x"}, "AGENTKIT_TOOL_MODULES: cannot import"),
    ],
)
def test_a_bad_setting_is_reported_before_any_heavy_library_loads(
    argv: list[str], env: dict[str, str], message: str
) -> None:
    loaded, done = loaded_after(CLI.format(argv=argv), **env)

    assert "exit 2" in done.stdout
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_import_agentkit_is_light_and_the_tool_api_needs_no_framework() -> None:
    bare, _ = loaded_after("import agentkit")
    tools, _ = loaded_after("from agentkit import tool, ToolContext, ToolError, context_provider, extend")

    assert bare.isdisjoint(HEAVY), sorted(bare & set(HEAVY))
    assert "msgspec" not in bare
    assert tools.isdisjoint(HEAVY), sorted(tools & set(HEAVY))
