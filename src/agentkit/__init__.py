"""AgentKit."""
