"""Which run ids the Postgres adapter sends to the database: only the canonical UUID spelling."""

import uuid

import pytest

from agentkit.adapters.postgres.mapping import is_uuid

CANONICAL = str(uuid.UUID(int=0x5F0C54A42A8E4D8E9C53BD8E0E8B2F47))


def test_the_canonical_spelling_is_a_uuid() -> None:
    assert is_uuid(CANONICAL)


@pytest.mark.parametrize(
    "other",
    [CANONICAL.upper(), "{" + CANONICAL + "}", "urn:uuid:" + CANONICAL, CANONICAL.replace("-", ""), "x", "", "\x00"],
)
def test_other_spellings_are_not_found_rather_than_sent(other: str) -> None:
    assert not is_uuid(other)
