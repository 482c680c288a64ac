"""The demo shop database behind sql_readonly: the seed script, seeding, and the seeder adapter."""

from agentkit.adapters.demo.seeder import DemoSeedConfig, PostgresDemoSeeder
from agentkit.adapters.demo.seeding import DEMO_TABLES, DemoSeed, seed_demo_database, seed_sql

__all__ = [
    "DEMO_TABLES",
    "DemoSeed",
    "DemoSeedConfig",
    "PostgresDemoSeeder",
    "seed_demo_database",
    "seed_sql",
]
