"""Remote MCP over Streamable HTTP for a person's connection (loaded only by the `/mcp` route)."""
