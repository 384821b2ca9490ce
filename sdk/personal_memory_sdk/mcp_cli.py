"""`personal-memory-mcp`'s entry point: the configuration is read before the MCP SDK is imported.

A launch missing a piece (an address, a user, a credential) says so and exits 2 at once: the
MCP SDK's own imports take most of a second, and an MCP client waiting on a server that will
not start shows nothing until it exits. Serving is mcp_server.py's.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .mcp_config import ConfigError, load_config


def main(argv: Sequence[str] | None = None) -> int:
    """Read the configuration (a clear line and exit 2 when a piece is missing); serve stdio."""
    try:
        config = load_config(argv)
    except ConfigError as exc:
        print(f"personal-memory-mcp: {exc}", file=sys.stderr)
        return 2
    from .mcp_server import serve

    return serve(config)


if __name__ == "__main__":
    sys.exit(main())
