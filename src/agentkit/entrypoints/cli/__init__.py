"""The `agentkit` command."""
