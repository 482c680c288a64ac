"""Use-cases about runs: create, execute, cancel, read."""
