"""The HTTP API on in-memory state by default: fast, no server needed (see tests/http_fixtures.py)."""

import pytest

from tests.http_fixtures import ApiFactory


@pytest.fixture
def api_factory(memory_api_factory: ApiFactory) -> ApiFactory:
    """The app on in-memory adapters; a module that needs real servers asks for `real_api_factory`."""
    return memory_api_factory
