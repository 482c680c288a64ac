"""The HTTP API on real PostgreSQL and Redis (see tests/http_fixtures.py)."""

import pytest

from tests.http_fixtures import ApiFactory


@pytest.fixture
def api_factory(real_api_factory: ApiFactory) -> ApiFactory:
    """These suites test what only real servers show: rows stored, outages, the demo database."""
    return real_api_factory
