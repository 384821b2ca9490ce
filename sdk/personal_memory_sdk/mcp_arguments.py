"""Wrong `memory_propose` arguments answered with a tool error naming the field, never the value.

The MCP SDK's own validation quotes the rejected value (`input_value={'secret': 'AKIA...'}`): a
pasted secret would come back in the answer and land in the client's transcript. And a lone
surrogate, which JSON can carry (`"\\ud800"`) and UTF-8 cannot, makes the SDK's JSON parser drop
the whole request: the call was never answered. `checked_lines` marks such strings before the SDK
parses the line, and `check_arguments` (a server middleware, run before the SDK's validation)
answers both (issue 37 #12).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import CallToolResult, TextContent

__all__ = ["argument_problem", "check_arguments", "checked_lines"]

_KINDS = ("preference", "fact", "note")
LONE_SURROGATE = "personal-memory/lone-surrogate"  # `_meta` key: the arguments that held one


def argument_problem(tool: object, arguments: object, lone: object = ()) -> str | None:
    """What is wrong with a `memory_propose` call's arguments (None: nothing); never a value."""
    if tool != "memory_propose":
        return None
    if not isinstance(arguments, dict):
        return "the arguments must be an object with `text` (and `kind`)"
    text, kind = arguments.get("text"), arguments.get("kind", "note")
    lone = lone if isinstance(lone, list) else []
    if "text" not in arguments:
        return "`text` is required"
    if not isinstance(text, str):
        return "`text` must be a string"
    if "text" in lone or not _is_unicode(text):
        return "`text` is not valid Unicode (it holds a lone surrogate)"
    if not isinstance(kind, str) or kind not in _KINDS or "kind" in lone:
        return "`kind` must be one of " + ", ".join(_KINDS)
    replaces = arguments.get("replaces")
    if replaces is not None and (not isinstance(replaces, str) or "replaces" in lone):
        return "`replaces` must be a note's `ref` from memory_context (a string)"
    return None


async def check_arguments(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Answer a `memory_propose` call with wrong arguments with a tool error; pass the rest on."""
    params = ctx.params if ctx.method == "tools/call" and isinstance(ctx.params, dict) else None
    if params is None:
        return await call_next(ctx)
    meta = params.get("_meta")
    lone = meta.get(LONE_SURROGATE, ()) if isinstance(meta, dict) else ()
    problem = argument_problem(params.get("name"), params.get("arguments") or {}, lone)
    if problem is None:
        return await call_next(ctx)
    words = f"Invalid arguments for memory_propose: {problem}."
    return CallToolResult(content=[TextContent(type="text", text=words)], is_error=True)


async def checked_lines(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    """The stdio lines; a request whose strings hold a lone surrogate made parseable (U+FFFD in
    its place), the arguments that held one named in `params._meta` for `check_arguments`."""
    async for line in lines:
        yield _marked(line)


def _marked(line: str) -> str:
    if "\\ud" not in line.lower():
        return line  # one reaches the server only as a JSON escape (stdin is read as UTF-8)
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if not isinstance(message, dict) or _is_unicode(json.dumps(message, ensure_ascii=False)):
        return line
    params = message.get("params")
    if isinstance(params, dict):
        arguments = params.get("arguments")
        held = arguments.items() if isinstance(arguments, dict) else ()
        lone = sorted(str(k) for k, v in held if isinstance(v, str) and not _is_unicode(v))
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), LONE_SURROGATE: lone}
    return json.dumps(_repaired(message))


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        if _is_unicode(value):
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    return value


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
