"""The Docker image, compose stack and CI workflow agree with the code and with each other.

Docker is not run here (no engine on the test machines); these checks catch what breaks a build or a
stack before anyone runs it: a setting name that AgentKit does not read, credentials that differ
between PostgreSQL and the API, a COPY source that .dockerignore leaves out, a CI that no longer runs
what .ci/run runs.
"""

import fnmatch
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml  # type: ignore[import-untyped]  # PyYAML comes with Litestar, without type stubs

from agentkit.entrypoints.wiring.settings import variables

ROOT = Path(__file__).parents[2]
SETTINGS = set(variables())
AGENTKIT_SERVICES = {"setup", "api", "worker"}


def load_yaml(name: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / name).read_text())
    return document


def env_file_names(path: Path) -> set[str]:
    return {line.split("=", 1)[0] for line in path.read_text().splitlines() if line and not line.startswith("#")}


def test_every_agentkit_service_runs_the_one_image_that_one_service_builds() -> None:
    services = load_yaml("compose.yml")["services"]

    assert {services[name]["image"] for name in AGENTKIT_SERVICES} == {"agentkit:local"}
    builders = [name for name, service in services.items() if "build" in service]
    assert builders == ["setup"]
    assert services["setup"]["build"]["dockerfile"] == "docker/Dockerfile"
    assert (ROOT / services["setup"]["build"]["dockerfile"]).is_file()


def test_every_agentkit_service_reads_the_defaults_then_an_optional_dot_env() -> None:
    services = load_yaml("compose.yml")["services"]

    for name in AGENTKIT_SERVICES:
        files = services[name]["env_file"]
        assert files[-1] == {"path": ".env", "required": False}, name  # last: its values win
        assert all((ROOT / entry["path"]).is_file() for entry in files[:-1]), name


def test_the_compose_settings_are_settings_agentkit_reads() -> None:
    services = load_yaml("compose.yml")["services"]
    wiring = set(services["api"]["environment"])

    assert env_file_names(ROOT / "docker" / "compose.env") <= SETTINGS
    assert wiring <= SETTINGS


def test_the_api_connects_to_the_postgres_the_stack_starts() -> None:
    services = load_yaml("compose.yml")["services"]
    postgres = services["postgres"]["environment"]
    url = urlsplit(services["api"]["environment"]["DATABASE_URL"])
    redis = urlsplit(services["api"]["environment"]["REDIS_URL"])

    assert (url.hostname, url.username, url.password) == (
        "postgres",
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
    )
    assert url.path == "/" + postgres["POSTGRES_DB"]
    assert redis.hostname == "redis"


def test_the_api_starts_after_healthy_servers_and_a_finished_setup() -> None:
    services = load_yaml("compose.yml")["services"]

    assert services["setup"]["depends_on"]["postgres"] == {"condition": "service_healthy"}
    assert services["api"]["depends_on"]["setup"] == {"condition": "service_completed_successfully"}
    assert services["worker"]["depends_on"]["setup"] == {"condition": "service_completed_successfully"}
    assert "healthcheck" in services["postgres"]


def test_the_stack_migrates_one_way_its_services_as_they_start() -> None:
    services = load_yaml("compose.yml")["services"]
    defaults = dict(
        line.split("=", 1)
        for line in (ROOT / "docker" / "compose.env").read_text().splitlines()
        if line and not line.startswith("#")
    )

    assert defaults["MIGRATE_ON_START"] == "true"  # the api and the workers migrate (once, under a lock)...
    commands = [" ".join(services[name].get("command", [])) for name in AGENTKIT_SERVICES]
    assert not [command for command in commands if "migrate" in command]  # ...and nothing else does


def test_the_stack_runs_queue_mode_with_a_worker_on_the_same_state() -> None:
    services = load_yaml("compose.yml")["services"]

    assert services["api"]["environment"]["RUN_MODE"] == services["worker"]["environment"]["RUN_MODE"] == "queue"
    assert services["worker"]["command"] == ["agentkit", "worker"]
    assert services["worker"]["environment"]["DATABASE_URL"] == services["api"]["environment"]["DATABASE_URL"]
    assert services["worker"]["environment"]["REDIS_URL"] == services["api"]["environment"]["REDIS_URL"]
    assert "healthcheck" in services["redis"]


def test_the_image_environment_names_real_settings() -> None:
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    runtime = dockerfile.rsplit("\nFROM ", 1)[1]
    env_line = next(line for line in runtime.splitlines() if line.startswith("ENV "))
    names = set(re.findall(r"([A-Z_]+)=", env_line)) - {"PATH", "PYTHONUNBUFFERED"}

    assert names
    assert names <= SETTINGS


def test_dockerignore_keeps_what_the_dockerfile_copies_and_drops_local_state() -> None:
    patterns = [line for line in (ROOT / ".dockerignore").read_text().splitlines() if line and not line.startswith("#")]
    sources = [
        source
        for line in (ROOT / "docker" / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ") and "--from=" not in line
        for source in line.split()[1:-1]
    ]

    def ignored(path: str) -> bool:
        matched = False
        for pattern in patterns:
            negated = pattern.startswith("!")
            if fnmatch.fnmatch(path, pattern.removeprefix("!").removeprefix("**/")):
                matched = not negated
        return matched

    assert sources
    assert [source for source in sources if ignored(source)] == []
    assert all(ignored(path) for path in (".env", ".venv", ".git", ".agentkit", ".tools", "tests"))


def test_the_ci_workflow_runs_ci_run_on_postgres_and_redis() -> None:
    workflow = load_yaml(".github/workflows/ci.yml")
    (job,) = workflow["jobs"].values()
    commands = [step["run"] for step in job["steps"] if "run" in step]
    env = job["env"]

    assert commands[-1] == "bash .ci/run"
    assert env["CI"] == "true"
    assert job["services"]["postgres"]["image"].startswith("postgres:16")
    assert job["services"]["redis"]["image"].startswith("redis:7")
    assert urlsplit(env["DATABASE_URL"]).port == int(job["services"]["postgres"]["ports"][0].split(":")[0])
    assert urlsplit(env["REDIS_URL"]).port == int(job["services"]["redis"]["ports"][0].split(":")[0])
    assert all("--health-cmd" in service["options"] for service in job["services"].values())
    uses = [step["uses"] for step in job["steps"] if "uses" in step]
    assert all(re.fullmatch(r"[\w-]+/[\w-]+@[0-9a-f]{40}", action) for action in uses), uses
