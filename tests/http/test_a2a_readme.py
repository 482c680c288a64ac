"""The README's A2A examples against a served app: the Python client as pasted, and the curl's request."""

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from agentkit.domain.messages import LLMResponse, Usage
from tests.http_fixtures import KEY_A, ApiFactory, headers
from tests.sse_fixtures import served
from tests.unit.test_readme import block_after


def answer(text: str) -> LLMResponse:
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=2))


async def test_the_readme_a2a_python_client_runs_as_pasted(memory_api_factory: ApiFactory, tmp_path: Path) -> None:
    api = await memory_api_factory([answer("391")])
    script = tmp_path / "a2a_snippet.py"
    script.write_text(block_after("## A2A: every agent", "python"))
    async with served(api.app) as url:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, str(script)],
            env={**os.environ, "AGENTKIT_URL": url, "AGENTKIT_API_KEY": KEY_A},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "TASK_STATE_COMPLETED 391\n"
    listed = (await api.get("/v1/runs", headers=headers())).json()["runs"]
    assert [(run["goal"], run["answer"]) for run in listed] == [("What is 17 * 23?", "391")]


async def test_the_readme_a2a_curl_request_is_answered_with_the_completed_task(memory_api_factory: ApiFactory) -> None:
    api = await memory_api_factory([answer("391")])
    curl = block_after("## A2A: every agent", "sh")
    body = re.search(r"-d '(.*?)'", curl, re.DOTALL)
    assert body, "the curl posts a JSON-RPC body"

    response = await api.post(
        "/a2a/default",
        content=body.group(1),
        headers=headers(**{"A2A-Version": "1.0", "Content-Type": "application/json"}),
    )

    result = response.json()["result"]["task"]
    assert result["status"]["state"] == "TASK_STATE_COMPLETED"
    assert result["artifacts"] == [{"artifactId": "answer", "name": "answer", "parts": [{"text": "391"}]}]
