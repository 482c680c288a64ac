"""The step pipeline: steps and stored runs recorded once by the run, delivered off its path in batches."""
