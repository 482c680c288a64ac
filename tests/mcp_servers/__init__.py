"""MCP servers the tests start: real servers written with the SDK, over stdio and Streamable HTTP."""
