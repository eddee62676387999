"""MCP client configuration snippets (`docs-mcp mcp-config`): the JSON each client expects, for this install.

Clients disagree on the shape (`mcpServers` vs VS Code's `servers` with a `type`) and on how a
secret is referenced from a config file (`${VAR}`, `${env:VAR}`, VS Code's `${input:…}`), so
each gets its own function; tokens are always references, never values.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError

CLIENTS = ("claude-code", "claude-desktop", "cursor", "vscode")


@dataclass(frozen=True)
class Launch:
    """How a client reaches the server: a local command (stdio) or a URL (streamable HTTP)."""

    command: list[str] | None = None
    url: str | None = None
    token_env: str | None = None


@dataclass(frozen=True)
class Snippet:
    config: dict[str, Any]
    where: str  # the file the snippet goes into, or what to do with it


def docs_mcp_command() -> list[str]:
    """This install's `docs-mcp`, by absolute path, so a client with another PATH starts the same one."""
    script = Path(os.path.abspath(sys.executable)).parent / "docs-mcp"
    return [str(script)] if script.exists() else [os.path.abspath(sys.executable), "-m", "docs_mcp_core.cli"]


def server_name(index: Path | None, url: str | None) -> str:
    """A default server name from the index folder (or URL host): letters, digits, `-` and `_`."""
    base = Path(index).resolve().name if index else re.sub(r"^[a-z]+://", "", url or "").split("/")[0].split(":")[0]
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-").lower()
    return f"{slug}-docs" if slug else "docs"


def _stdio(launch: Launch) -> dict[str, Any]:
    assert launch.command
    return {"command": launch.command[0], "args": launch.command[1:]}


def snippet(client: str, name: str, launch: Launch) -> Snippet:
    if client not in CLIENTS:
        raise DocsMcpError(f"unknown client '{client}'; choose one of {', '.join(CLIENTS)}")
    token = launch.token_env
    if client == "vscode":
        inputs: list[dict[str, Any]] = []
        if launch.url:
            entry: dict[str, Any] = {"type": "http", "url": launch.url}
            if token:
                input_id = f"{name}-token"
                entry["headers"] = {"Authorization": f"Bearer ${{input:{input_id}}}"}
                inputs.append(
                    {
                        "type": "promptString",
                        "id": input_id,
                        "password": True,
                        "description": f"Bearer token for {name} (the value of {token} on the server)",
                    }
                )
        else:
            entry = {"type": "stdio", **_stdio(launch)}
        config: dict[str, Any] = {"servers": {name: entry}}
        if inputs:
            config["inputs"] = inputs
        return Snippet(config, ".vscode/mcp.json in your workspace (or your user profile's mcp.json)")
    if launch.url:
        if client == "claude-desktop":
            raise DocsMcpError(
                "Claude Desktop's config file starts local commands only; add a remote server under "
                "Settings > Connectors, or use --index for a local one"
            )
        entry = {"type": "http", "url": launch.url} if client == "claude-code" else {"url": launch.url}
        if token:
            ref = f"${{{token}}}" if client == "claude-code" else f"${{env:{token}}}"
            entry["headers"] = {"Authorization": f"Bearer {ref}"}
    else:
        entry = {"type": "stdio", **_stdio(launch)} if client == "claude-code" else _stdio(launch)
    where = {
        "claude-code": ".mcp.json in your project (shared with the team) or `claude mcp add-json NAME '<json>'`",
        "claude-desktop": "claude_desktop_config.json (Settings > Developer > Edit Config), then restart Claude Desktop",
        "cursor": ".cursor/mcp.json in your project, or ~/.cursor/mcp.json for every project",
    }[client]
    return Snippet({"mcpServers": {name: entry}}, where)
