"""Several agents: profiles (instructions, tools, terminal tools, output schema, model, limits) and their catalog."""
