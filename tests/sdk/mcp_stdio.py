"""Drives `personal-memory-mcp` as an MCP client does: the server in a subprocess, spoken to over stdio.

The command is what the console script in sdk/pyproject.toml runs (`personal_memory_sdk.mcp_cli:
main`), started with this interpreter and the SDK on PYTHONPATH, so the tests need no install.
"""

from __future__ import annotations

import json
import sys
import tomllib
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation

from local.fresh_loop import run_apart

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk"
_T = TypeVar("_T")


def console_script(name: str = "personal-memory-mcp") -> tuple[str, str]:
    """The (module, function) the SDK's pyproject names for a console script."""
    scripts = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]["scripts"]
    module, function = scripts[name].split(":")
    return module, function


def server_command(args: Sequence[str]) -> list[str]:
    """argv that runs the console script's target exactly as the installed wrapper would."""
    module, function = console_script()
    code = f"import sys; from {module} import {function} as main; sys.exit(main())"
    return [sys.executable, "-c", code, *args]


def parameters(args: Sequence[str], env: Mapping[str, str] | None = None) -> StdioServerParameters:
    command = server_command(args)
    return StdioServerParameters(
        command=command[0],
        args=command[1:],
        # memory_propose waits up to the allowed 30 s for the pump (not the default 3 s: a loaded machine's pump
        # can be slower, and the answer would be "pending"); it answers as soon as the outcome is known.
        env={"PYTHONPATH": str(SDK), "PERSONAL_MEMORY_OUTCOME_WAIT": "30", **(env or {})},
        cwd=str(ROOT),
    )


def local_args(url: str, user: str, credentials: Path, *extra: str) -> list[str]:
    return ["--base-url", url, "--user", user, "--credentials-file", str(credentials), *extra]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def run_client(
    params: StdioServerParameters,
    body: Callable[[Client], Awaitable[_T]],
    *,
    client_name: str = "Claude Desktop",
    mode: str = "legacy",
) -> _T:
    """Connect as the named client (`clientInfo.name`), run `body`, disconnect."""

    async def session() -> _T:
        info = Implementation(name=client_name, version="1.0.0")
        async with Client(params, client_info=info, mode=mode, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
            return await body(client)

    return run_apart(session())


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return dict(result.structured_content)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
