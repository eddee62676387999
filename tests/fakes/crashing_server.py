"""A minimal third-party MCP docs server for harness tests: canned answers, then a crash.

Usage: python crashing_server.py CRASH_AFTER   (exits abruptly on that search_docs call; 0 = never)
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.stdio import stdio_server

CRASH_AFTER = int(sys.argv[1]) if len(sys.argv) > 1 else 0
calls = 0


async def list_tools(ctx, params) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "additionalProperties": True}
    return types.ListToolsResult(
        tools=[
            types.Tool(name="acme_search_docs", input_schema=schema),
            types.Tool(name="acme_get_doc", input_schema=schema),
        ]
    )


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    global calls
    if params.name.endswith("get_doc"):
        return types.CallToolResult(content=[types.TextContent(type="text", text="# doc")])
    calls += 1
    if CRASH_AFTER and calls >= CRASH_AFTER:
        os._exit(3)
    query = (params.arguments or {}).get("query", "")
    hits = [{"chunk_id": f"{word}.md#intro", "metadata": {}} for word in query.split()]
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps({"hits": hits, "next_cursor": None}))]
    )


async def main() -> None:
    server = Server("acme-docs", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
