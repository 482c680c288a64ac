"""Where state lives: DATABASE_URL forms, POSTGRES_* assembly, and STATE_BACKEND's plan."""

import pytest

from agentkit.adapters.postgres import asyncpg_dsn, parse_database_url
from agentkit.application.errors import ConfigurationError
from agentkit.entrypoints.wiring.locations import database_url
from agentkit.entrypoints.wiring.settings import load_settings
from agentkit.entrypoints.wiring.startup import StatePlan, plan_state


@pytest.mark.parametrize(
    "raw",
    [
        "postgresql://agent:s3cr%40t@db.internal:6543/agentkit",
        "postgres://agent:s3cr%40t@db.internal:6543/agentkit",
        "postgresql+asyncpg://agent:s3cr%40t@db.internal:6543/agentkit",
    ],
)
def test_database_url_is_accepted_in_every_usual_form(raw: str) -> None:
    url = database_url(load_settings({"DATABASE_URL": raw}).state)

    assert url is not None
    assert url.drivername == "postgresql+asyncpg"
    assert (url.username, url.password, url.host, url.port, url.database) == (
        "agent",
        "s3cr@t",
        "db.internal",
        6543,
        "agentkit",
    )
    assert asyncpg_dsn(url) == "postgresql://agent:s3cr%40t@db.internal:6543/agentkit"


def test_sslmode_is_passed_to_asyncpg_as_ssl_and_back() -> None:
    url = parse_database_url("postgresql://u@h/db?sslmode=require")

    assert dict(url.query) == {"ssl": "require"}
    assert asyncpg_dsn(url) == "postgresql://u@h/db?sslmode=require"


@pytest.mark.parametrize("raw", ["mysql://u@h/db", "postgresql+psycopg2://u@h/db", "not a url"])
def test_another_database_or_driver_fails_naming_the_variable(raw: str) -> None:
    with pytest.raises(ConfigurationError, match=r"^DATABASE_URL: "):
        parse_database_url(raw)


def test_without_database_url_the_postgres_variables_assemble_it() -> None:
    settings = load_settings(
        {
            "POSTGRES_HOST": "pg",
            "POSTGRES_PORT": "5433",
            "POSTGRES_USER": "agent",
            "POSTGRES_PASSWORD": "p@ss:word",
            "POSTGRES_DB": "runs",
        }
    )

    url = database_url(settings.state)

    assert url is not None
    assert asyncpg_dsn(url) == "postgresql://agent:p%40ss%3Aword@pg:5433/runs"


def test_database_url_wins_over_the_postgres_variables() -> None:
    settings = load_settings({"DATABASE_URL": "postgresql://a@one/x", "POSTGRES_HOST": "two"})

    url = database_url(settings.state)

    assert url is not None
    assert url.host == "one"


def test_no_url_and_no_host_means_no_database() -> None:
    assert database_url(load_settings({}).state) is None


@pytest.mark.parametrize(
    ("backend", "env", "plan"),
    [
        ("auto", {}, StatePlan(postgres="memory", redis="memory")),
        ("auto", {"DATABASE_URL": "postgresql://h/db"}, StatePlan(postgres="external", redis="memory")),
        ("auto", {"POSTGRES_HOST": "h", "REDIS_URL": "redis://h"}, StatePlan(postgres="external", redis="external")),
        ("embedded", {}, StatePlan(postgres="embedded", redis="embedded")),
        ("embedded", {"REDIS_URL": "redis://h"}, StatePlan(postgres="embedded", redis="external")),
        ("memory", {"DATABASE_URL": "postgresql://h/db"}, StatePlan(postgres="memory", redis="memory")),
        (
            "external",
            {"DATABASE_URL": "postgresql://h/db", "REDIS_URL": "redis://h"},
            StatePlan(postgres="external", redis="external"),
        ),
    ],
)
def test_the_state_plan_follows_state_backend_and_the_urls_set(
    backend: str, env: dict[str, str], plan: StatePlan
) -> None:
    assert plan_state(load_settings({**env, "STATE_BACKEND": backend}).state) == plan


@pytest.mark.parametrize(
    ("env", "variable"), [({"REDIS_URL": "redis://h"}, "DATABASE_URL"), ({"POSTGRES_HOST": "h"}, "REDIS_URL")]
)
def test_external_without_a_url_fails_naming_it(env: dict[str, str], variable: str) -> None:
    with pytest.raises(ConfigurationError, match=f"^{variable}: "):
        plan_state(load_settings({**env, "STATE_BACKEND": "external"}).state)
