"""Test kits AgentKit ships for code built on it: a provider package runs them against itself.

Nothing in AgentKit's product imports this package (an import-linter contract keeps it so); it
needs pytest, which a provider package's tests have anyway.
"""
