"""Each MCP client's config format, as its own documentation gives it, as JSON Schema.

Written from the documentation (cited per client), not from what `mcp-config` prints, so a test
that validates the printed entry against these fails when the entry drifts from the client's format.
Entries are strict (`additionalProperties: false`) over the fields each document lists.
"""

from __future__ import annotations

from typing import Any

STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
STRING_LIST = {"type": "array", "items": {"type": "string"}}
COMMAND = {"type": "string", "minLength": 1}
URL = {"type": "string", "pattern": r"^https?://"}
VAR = r"[A-Za-z_][A-Za-z0-9_]*"
NAME = r"^[a-zA-Z][a-zA-Z0-9_-]*$"  # VS Code's (schemastore mcp-config), the strictest of them


def _object(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties, "additionalProperties": False}


def _file(key: str, server: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "required": [key],
        "properties": {
            key: {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"pattern": NAME},
                "additionalProperties": server,
            },
            **extra,
        },
    }


# Claude Code — https://code.claude.com/docs/en/mcp ("Add MCP servers from JSON configuration"):
#   claude mcp add-json local-weather '{"type":"stdio","command":"/path/to/weather-cli","args":[...],"env":{...}}'
#   claude mcp add-json weather-api '{"type":"http","url":"https://…/mcp","headers":{"Authorization":"Bearer token"}}'
# add-json takes this server object itself; project scope keeps the same objects in .mcp.json under
# "mcpServers", where ${VAR} is expanded in command, args, env, url and headers.
CLAUDE_CODE_SERVER = {
    "oneOf": [
        _object(
            ["type", "command"],
            {"type": {"const": "stdio"}, "command": COMMAND, "args": STRING_LIST, "env": STRINGS},
        ),
        _object(
            ["type", "url"],
            {
                "type": {"enum": ["http", "sse"]},
                "url": URL,
                "headers": {"type": "object", "additionalProperties": {"pattern": rf"^Bearer \$\{{{VAR}\}}$"}},
            },
        ),
    ]
}

# Claude Desktop — https://modelcontextprotocol.io/quickstart/user ("claude_desktop_config.json"):
#   {"mcpServers": {"filesystem": {"command": "npx", "args": [...]}}}, plus "env"; local commands only.
CLAUDE_DESKTOP_SERVER = _object(["command"], {"command": COMMAND, "args": STRING_LIST, "env": STRINGS})

# Cursor — https://cursor.com/docs/context/mcp (.cursor/mcp.json or ~/.cursor/mcp.json, "mcpServers"):
# stdio "command", "args", "env" (an optional "type": "stdio"); remote "url" and "headers"; config
# interpolation ${env:NAME}.
CURSOR_SERVER = {
    "oneOf": [
        _object(["command"], {"type": {"const": "stdio"}, "command": COMMAND, "args": STRING_LIST, "env": STRINGS}),
        _object(
            ["url"],
            {
                "url": URL,
                "headers": {"type": "object", "additionalProperties": {"pattern": rf"^Bearer \$\{{env:{VAR}\}}$"}},
            },
        ),
    ]
}

# VS Code — https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (.vscode/mcp.json):
# "servers" maps names to {"type": "stdio", "command", "args", "env", "envFile"} or
# {"type": "http" | "sse", "url", "headers"}; "inputs" holds {"type": "promptString", "id",
# "description", "password"} referenced as ${input:id}. Names: ^[a-zA-Z][a-zA-Z0-9_-]*$ (the
# schemastore mcp-config schema the editor validates with).
VSCODE_SERVER = {
    "oneOf": [
        _object(
            ["type", "command"],
            {
                "type": {"const": "stdio"},
                "command": COMMAND,
                "args": STRING_LIST,
                "env": STRINGS,
                "envFile": {"type": "string"},
            },
        ),
        _object(
            ["type", "url"],
            {
                "type": {"enum": ["http", "sse"]},
                "url": URL,
                "headers": {
                    "type": "object",
                    "additionalProperties": {"pattern": r"^Bearer \$\{input:[A-Za-z0-9_-]+\}$"},
                },
            },
        ),
    ]
}
VSCODE_INPUT = _object(
    ["type", "id", "description"],
    {
        "type": {"const": "promptString"},
        "id": {"type": "string"},
        "description": {"type": "string"},
        "password": {"type": "boolean"},
    },
)

# Windsurf — https://docs.windsurf.com/windsurf/cascade/mcp (~/.codeium/windsurf/mcp_config.json):
# "mcpServers" with Claude Desktop's stdio fields; a remote HTTP server needs "serverUrl" (or "url")
# and may have "headers"; ${env:VAR} is interpolated in command, args, env, serverUrl, url, headers.
WINDSURF_SERVER = {
    "oneOf": [
        _object(["command"], {"command": COMMAND, "args": STRING_LIST, "env": STRINGS}),
        _object(
            ["serverUrl"],
            {
                "serverUrl": URL,
                "headers": {"type": "object", "additionalProperties": {"pattern": rf"^Bearer \$\{{env:{VAR}\}}$"}},
            },
        ),
    ]
}

# Zed — https://zed.dev/docs/ai/mcp ("As Custom Servers", settings.json):
#   {"context_servers": {"local-mcp-server": {"command": "some-command", "args": [...], "env": {}},
#                        "remote-mcp-server": {"url": "https://example.com/mcp", "headers": {...}}}}
ZED_SERVER = {
    "oneOf": [
        _object(["command"], {"command": COMMAND, "args": STRING_LIST, "env": STRINGS}),
        _object(["url"], {"url": URL, "headers": STRINGS}),
    ]
}

# Codex — https://github.com/openai/codex/blob/main/docs/config.md ("MCP integration", ~/.codex/config.toml):
# [mcp_servers.NAME] with "command" (required), "args", "env", "env_vars", "cwd" for stdio; "url",
# "bearer_token_env_var" (the variable's name), "http_headers", "env_http_headers" for streamable HTTP.
CODEX_SERVER = {
    "oneOf": [
        _object(
            ["command"],
            {
                "command": COMMAND,
                "args": STRING_LIST,
                "env": STRINGS,
                "env_vars": STRING_LIST,
                "cwd": {"type": "string"},
            },
        ),
        _object(
            ["url"],
            {
                "url": URL,
                "bearer_token_env_var": {"type": "string", "pattern": rf"^{VAR}$"},
                "http_headers": STRINGS,
                "env_http_headers": STRINGS,
            },
        ),
    ]
}

# Gemini CLI — https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md
# ("mcpServers" in ~/.gemini/settings.json or .gemini/settings.json): one of "command" (stdio), "url"
# (SSE) or "httpUrl" (streamable HTTP), with "args", "headers", "env", "cwd", "timeout", "trust";
# string values may refer to environment variables as $VAR or ${VAR} (docs/cli/configuration.md).
GEMINI_SERVER = {
    "oneOf": [
        _object(["command"], {"command": COMMAND, "args": STRING_LIST, "env": STRINGS, "cwd": {"type": "string"}}),
        _object(
            ["httpUrl"],
            {
                "httpUrl": URL,
                "headers": {"type": "object", "additionalProperties": {"pattern": rf"^Bearer \$\{{{VAR}\}}$"}},
                "timeout": {"type": "integer"},
            },
        ),
    ]
}

SERVER = {
    "claude-code": CLAUDE_CODE_SERVER,
    "claude-desktop": CLAUDE_DESKTOP_SERVER,
    "cursor": CURSOR_SERVER,
    "vscode": VSCODE_SERVER,
    "windsurf": WINDSURF_SERVER,
    "zed": ZED_SERVER,
    "codex": CODEX_SERVER,
    "gemini": GEMINI_SERVER,
}
KEY = {
    "claude-code": "mcpServers",
    "claude-desktop": "mcpServers",
    "cursor": "mcpServers",
    "vscode": "servers",
    "windsurf": "mcpServers",
    "zed": "context_servers",
    "codex": "mcp_servers",
    "gemini": "mcpServers",
}


def file_schema(client: str) -> dict[str, Any]:
    """The whole config file as the client documents it (other top-level keys allowed: settings files)."""
    extra = {"inputs": {"type": "array", "items": VSCODE_INPUT}} if client == "vscode" else {}
    return _file(KEY[client], SERVER[client], **extra)
