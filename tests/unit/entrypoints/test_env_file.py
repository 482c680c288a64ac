"""`.env` is read when `agentkit` starts; variables already in the environment win over it."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.entrypoints.wiring.env_file import load_env_file
from agentkit.entrypoints.wiring.main import main


@pytest.fixture
def saved_environ() -> Iterator[None]:
    """`main` adds the file's variables to os.environ: put it back as it was (set up before monkeypatch)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_the_files_variables_fill_in_what_the_environment_does_not_set(tmp_path: Path) -> None:
    env_file = tmp_path / "settings.env"
    env_file.write_text(
        "# a comment\n"
        "LLM_PROVIDER=openai\n"
        "export OPENAI_API_KEY='sk-from-file'\n"
        'API_KEYS="a,b"\n'
        "LLM_MODEL=${LLM_PROVIDER}-model\n"
        "BARE\n"
    )
    environ = {"AGENTKIT_ENV_FILE": str(env_file), "LLM_PROVIDER": "gemini"}

    assert load_env_file(environ) == env_file
    assert environ["LLM_PROVIDER"] == "gemini"  # the environment wins
    assert environ["OPENAI_API_KEY"] == "sk-from-file"
    assert environ["API_KEYS"] == "a,b"
    assert environ["LLM_MODEL"] == "openai-model"  # references read the file's own values
    assert "BARE" not in environ


def test_no_file_is_no_error(tmp_path: Path) -> None:
    environ = {"AGENTKIT_ENV_FILE": str(tmp_path / "absent.env")}

    assert load_env_file(environ) is None
    assert environ == {"AGENTKIT_ENV_FILE": str(tmp_path / "absent.env")}


def test_agentkit_reads_dot_env_in_the_working_directory(
    saved_environ: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_text("MAX_STEPS=many\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTKIT_ENV_FILE")
    monkeypatch.delenv("MAX_STEPS", raising=False)

    assert main(["run", "x"]) == 2
    assert capsys.readouterr().err == "agentkit: configuration error: MAX_STEPS: Expected `int`, got `str`\n"


def test_the_environment_wins_over_dot_env(
    saved_environ: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_text("LLM_PROVIDER=openai\nOPENAI_API_KEY=\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTKIT_ENV_FILE")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("LLM_PROVIDER", "demo")
    monkeypatch.setenv("STATE_BACKEND", "memory")

    assert main(["run", "what is 2+3?"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("2+3 = 5.")
