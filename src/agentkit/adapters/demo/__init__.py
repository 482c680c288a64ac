"""The demo shop database behind sql_readonly: seed script, seeding, and its connection URLs."""

from agentkit.adapters.demo.dsn import demo_reader_dsn
from agentkit.adapters.demo.seeding import DEMO_TABLES, DemoSeed, seed_demo_database, seed_sql

__all__ = [
    "DEMO_TABLES",
    "DemoSeed",
    "demo_reader_dsn",
    "seed_demo_database",
    "seed_sql",
]
