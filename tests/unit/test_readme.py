"""The README's examples run as a reader pastes them."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()


def block_after(heading: str, language: str) -> str:
    """The first fenced block of `language` after `heading`."""
    section = README[README.index(heading) :]
    found = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert found, f"no {language} block after {heading!r}"
    return found.group(1)


def run_as_pasted(tmp_path: Path, snippet: str) -> subprocess.CompletedProcess[str]:
    """Run a README snippet saved as a file, from the repository's folder as from a clone."""
    script = tmp_path / "snippet.py"
    script.write_text(snippet)
    return subprocess.run(  # noqa: S603 - this interpreter on the README's own code
        [sys.executable, str(script)],
        cwd=ROOT,  # the snippets read examples/scripts/*.json
        env={**os.environ, "AGENTKIT_ENV_FILE": os.devnull},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_python_snippet_runs_as_pasted_and_prints_only_its_own_output(tmp_path: Path) -> None:
    done = run_as_pasted(tmp_path, block_after("## Use it from Python", "python"))

    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 + 3 = 5.\n1 LLMStep\n2 ToolStep\n3 LLMStep\n"
    assert done.stderr == ""  # quiet by default: no log lines on either stream


def test_the_hidden_context_snippet_hands_the_tool_its_client_and_the_model_no_trace_of_it(tmp_path: Path) -> None:
    done = run_as_pasted(tmp_path, block_after("### Hidden context", "python"))

    assert done.returncode == 0, done.stderr
    assert done.stdout == "['order_id']\n['order 42: shipped']\nOrder 42 has shipped.\n"
    assert done.stderr == ""


def test_the_quickstart_keeps_the_run_id_the_server_answers(tmp_path: Path) -> None:
    quickstart = block_after("Ask the definition-of-done question", "sh")
    extract = re.search(r"python3 -c '(.*?)'\)", quickstart)
    assert extract, "the quickstart's curl pipes the run into python3 -c"
    run = '{"id": "r-1", "status": "succeeded", "answer": "Margaret Hamilton, $2,870.79; 15% is $430.62"}'

    done = subprocess.run(  # noqa: S603 - this interpreter on the README's own code
        [sys.executable, "-c", extract.group(1)], input=run, capture_output=True, text=True, timeout=60, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout == "r-1\n"
    assert "2,870.79" in done.stderr
