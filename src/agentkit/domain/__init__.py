"""The pure domain: runs, steps, messages and the loop policy. Standard library and msgspec only."""
