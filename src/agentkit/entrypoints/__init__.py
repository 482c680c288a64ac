"""Inbound adapters: the CLI, the HTTP API and the worker. They call use-cases from the container."""
