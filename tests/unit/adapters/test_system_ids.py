"""Run ids: random version-4 UUIDs in their canonical spelling (PostgreSQL's uuid column reads them back alike)."""

import uuid

from agentkit.adapters.system import UuidIdGenerator


def test_run_ids_are_canonical_random_version_4_uuids() -> None:
    ids = [UuidIdGenerator().new_run_id() for _ in range(1000)]

    for run_id in ids:
        parsed = uuid.UUID(run_id)
        assert str(parsed) == run_id
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
    assert len(set(ids)) == 1000
