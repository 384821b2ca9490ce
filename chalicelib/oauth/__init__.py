"""The service as the OAuth authorization server of its own `/mcp` (docs/oauth.md): clients, Authlib's server, access tokens."""
