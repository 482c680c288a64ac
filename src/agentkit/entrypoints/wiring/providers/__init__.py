"""The dishka providers of the composition root, one per concern."""
