"""Use-cases, ports, the agent loop and the tool registry. Imports the domain only."""
