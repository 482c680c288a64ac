"""Sessions: read the history a next run will see, and forget it."""
