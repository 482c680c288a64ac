"""The read-only role's URL: DATABASE_READONLY_URL, or AgentKit's URL with role and database swapped."""

import pytest

from agentkit.adapters.demo import seed_demo_database, seed_sql
from agentkit.application.errors import ConfigurationError
from agentkit.entrypoints.wiring.locations import demo_reader_dsn
from agentkit.entrypoints.wiring.settings import load_settings


def test_derives_the_reader_url_from_the_admin_url() -> None:
    settings = load_settings({"POSTGRES_READONLY_USER": "reader", "POSTGRES_READONLY_PASSWORD": "p@ss/word"})
    dsn = demo_reader_dsn(settings.state, "postgresql+asyncpg://admin:secret@db.internal:5433/agentkit?sslmode=require")
    assert dsn == "postgresql://reader:p%40ss%2Fword@db.internal:5433/agentkit_demo?sslmode=require"


def test_derives_it_from_database_url_when_no_admin_url_is_given() -> None:
    settings = load_settings({"DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/agentkit", "DEMO_DATABASE": "shop"})
    assert (
        demo_reader_dsn(settings.state) == "postgresql://agentkit_demo_reader:agentkit_demo_reader@127.0.0.1:5432/shop"
    )


def test_an_explicit_readonly_url_wins() -> None:
    settings = load_settings(
        {"DATABASE_READONLY_URL": "postgres://ro:pw@replica:5432/demo", "DATABASE_URL": "postgresql://a@b/c"}
    )
    assert demo_reader_dsn(settings.state, "postgresql://x@y/z") == "postgresql://ro:pw@replica:5432/demo"


def test_without_any_url_the_error_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="DATABASE_READONLY_URL"):
        demo_reader_dsn(load_settings({}).state)


def test_the_seed_script_is_a_package_resource() -> None:
    script = seed_sql()
    assert "CREATE TABLE customers" in script
    assert "INSERT INTO order_items" in script


@pytest.mark.parametrize(
    ("database", "reader", "variable"),
    [
        ('demo"; DROP DATABASE agentkit; --', "reader", "DEMO_DATABASE"),
        ("Demo", "reader", "DEMO_DATABASE"),
        ("agentkit_demo", "reader; ALTER ROLE x SUPERUSER", "POSTGRES_READONLY_USER"),
        ("agentkit_demo", "", "POSTGRES_READONLY_USER"),
    ],
)
async def test_seeding_refuses_names_that_are_not_plain_identifiers(database: str, reader: str, variable: str) -> None:
    # Checked before connecting: the URL's port 1 on loopback is never contacted.
    with pytest.raises(ConfigurationError, match=variable):
        await seed_demo_database(
            "postgresql://nobody@127.0.0.1:1/agentkit", database=database, reader_user=reader, reader_password="x"
        )
