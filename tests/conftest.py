"""Root fixtures. The Postgres and Redis fixtures live in tests/state_fixtures.py."""

pytest_plugins = ["tests.state_fixtures"]
