"""MCP client configuration (`docs-mcp mcp-config`): each client's entry for this install, and its file.

Clients disagree on the top-level key (`mcpServers`, VS Code's `servers`, Zed's `context_servers`,
Codex's TOML `[mcp_servers.NAME]`), on the field a remote server goes in (`url`, Windsurf's
`serverUrl`, Gemini's `httpUrl`) and on how a file refers to a secret (`${VAR}`, `${env:VAR}`,
VS Code's `${input:…}`, Codex's `bearer_token_env_var`), so each client gets its own entry.
Tokens are always references, never values.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError

SERVER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")  # a key every client accepts (VS Code's is the strictest)


@dataclass(frozen=True)
class Launch:
    """How a client reaches the server: a local command (stdio) or a URL (streamable HTTP)."""

    command: list[str] | None = None
    url: str | None = None
    token_env: str | None = None


def _home() -> Path:
    return Path.home()


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _appdata() -> Path:
    return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming")


def _claude_desktop_file() -> Path:
    if sys.platform == "darwin":
        return _home() / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return _appdata() / "Claude" / "claude_desktop_config.json"
    return _config_home() / "Claude" / "claude_desktop_config.json"


def _zed_file() -> Path:
    return _appdata() / "Zed" / "settings.json" if sys.platform == "win32" else _config_home() / "zed" / "settings.json"


def _codex_file() -> Path:
    return Path(os.environ.get("CODEX_HOME") or _home() / ".codex") / "config.toml"


@dataclass(frozen=True)
class Client:
    """Where a client reads its MCP servers: the top-level key, the file's format, and the file --write
    edits by default (the project's, relative to the working folder, where the client has one)."""

    title: str
    key: str
    fmt: str  # json | jsonc (comments allowed by the client) | toml
    project_file: str | None = None
    user_file: Callable[[], Path] | None = None
    note: str = ""  # what else to know about that file

    def default_path(self, project: Path) -> Path:
        if self.project_file:
            return project / self.project_file
        assert self.user_file is not None
        return self.user_file()


CLIENTS: dict[str, Client] = {
    "claude-code": Client(
        "Claude Code",
        "mcpServers",
        "json",
        project_file=".mcp.json",
        note="this project's servers, shared with your team",
    ),
    "claude-desktop": Client(
        "Claude Desktop",
        "mcpServers",
        "json",
        user_file=_claude_desktop_file,
        note="Settings > Developer > Edit Config opens it; restart Claude Desktop after",
    ),
    "cursor": Client(
        "Cursor", "mcpServers", "json", project_file=".cursor/mcp.json", note="or ~/.cursor/mcp.json for every project"
    ),
    "vscode": Client(
        "VS Code",
        "servers",
        "jsonc",
        project_file=".vscode/mcp.json",
        note="or your user profile's mcp.json, which MCP: Open User Configuration opens",
    ),
    "windsurf": Client(
        "Windsurf",
        "mcpServers",
        "json",
        user_file=lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json",
        note="press refresh in Cascade's MCP panel after",
    ),
    "zed": Client(
        "Zed",
        "context_servers",
        "jsonc",
        user_file=_zed_file,
        note="your Zed settings, which zed: open settings opens; or a project's .zed/settings.json",
    ),
    "codex": Client("Codex", "mcp_servers", "toml", user_file=_codex_file, note="every project; $CODEX_HOME moves it"),
    "gemini": Client(
        "Gemini CLI",
        "mcpServers",
        "jsonc",
        project_file=".gemini/settings.json",
        note="or ~/.gemini/settings.json for every project",
    ),
}


@dataclass(frozen=True)
class Snippet:
    """The client's entry for one server, and what its config file gets (`config`, VS Code's inputs included)."""

    client: str
    name: str
    entry: dict[str, Any]
    inputs: list[dict[str, Any]] = field(default_factory=list)  # VS Code's top-level `inputs`

    @property
    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {CLIENTS[self.client].key: {self.name: self.entry}}
        if self.inputs:
            config["inputs"] = self.inputs
        return config

    def text(self) -> str:
        """The snippet as the client's file writes it: JSON, or a TOML table for Codex."""
        if CLIENTS[self.client].fmt == "toml":
            return toml_table(f"{CLIENTS[self.client].key}.{self.name}", self.entry)
        return json.dumps(self.config, indent=2, ensure_ascii=False) + "\n"

    def add_json_command(self) -> str:
        """Claude Code's `claude mcp add-json NAME '<json>'`: it takes the server object itself,
        not a `{"mcpServers": …}` document."""
        compact = json.dumps(self.entry, separators=(",", ":"), ensure_ascii=False)
        return f"claude mcp add-json {shlex.quote(self.name)} {shlex.quote(compact)}"


def docs_mcp_command() -> list[str]:
    """This install's `docs-mcp`, by absolute path, so a client with another PATH starts the same one."""
    script = Path(os.path.abspath(sys.executable)).parent / "docs-mcp"
    return [str(script)] if script.exists() else [os.path.abspath(sys.executable), "-m", "docs_mcp_core.cli"]


def server_name(base: str) -> str:
    """A default server name from a corpus name or URL host: letters, digits, `-` and `_`, ending in docs."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", base).strip("-_").lower()
    if not slug:
        return "docs"
    if not slug[0].isalpha():
        slug = f"docs-{slug}"
    return slug if slug.endswith("docs") else f"{slug}-docs"


def url_host(url: str) -> str:
    return re.sub(r"^[a-z]+://", "", url).split("/")[0].split(":")[0]


def check_server_name(name: str) -> str:
    if not SERVER_NAME.match(name):
        raise DocsMcpError(
            f"--name {name!r}: use a letter, then letters, digits, '-' or '_' (at most 64 characters); "
            "every client accepts such a name"
        )
    return name


def _bearer(client: str, name: str, token_env: str) -> tuple[str, list[dict[str, Any]]]:
    """The Authorization header value referring to the token, in the client's syntax (and VS Code's input)."""
    if client == "vscode":
        input_id = f"{name}-token"
        prompt = {
            "type": "promptString",
            "id": input_id,
            "password": True,
            "description": f"Bearer token for {name} (the value of {token_env} on the server)",
        }
        return f"Bearer ${{input:{input_id}}}", [prompt]
    if client in ("cursor", "windsurf"):
        return f"Bearer ${{env:{token_env}}}", []
    return f"Bearer ${{{token_env}}}", []  # Claude Code and Gemini CLI expand ${VAR}


def _remote(client: str, name: str, launch: Launch) -> Snippet:
    url, token = launch.url, launch.token_env
    assert url
    if client == "claude-desktop":
        raise DocsMcpError(
            "Claude Desktop's config file starts local commands only; add a remote server under "
            "Settings > Connectors, or use --index for a local one"
        )
    if client == "zed" and token:
        raise DocsMcpError(
            "Zed's settings.json takes a header's value as written, with no reference to an environment "
            "variable, and docs-mcp never writes a token into a file: run without --token-env and add "
            '"headers": {"Authorization": "Bearer …"} to the entry yourself'
        )
    if client == "codex":  # the token's variable by name: Codex reads it at start
        return Snippet(client, name, {"url": url, **({"bearer_token_env_var": token} if token else {})})
    field_name = {"windsurf": "serverUrl", "gemini": "httpUrl"}.get(client, "url")
    entry: dict[str, Any] = {"type": "http"} if client in ("claude-code", "vscode") else {}
    entry[field_name] = url
    inputs: list[dict[str, Any]] = []
    if token:
        value, inputs = _bearer(client, name, token)
        entry["headers"] = {"Authorization": value}
    return Snippet(client, name, entry, inputs)


def snippet(client: str, name: str, launch: Launch) -> Snippet:
    """The entry `client` needs to start (or reach) this server."""
    if client not in CLIENTS:
        raise DocsMcpError(f"unknown client '{client}'; choose one of {', '.join(CLIENTS)}")
    if launch.url:
        return _remote(client, name, launch)
    assert launch.command
    command, args = launch.command[0], launch.command[1:]
    if client == "claude-code":  # exactly what `claude mcp add-json` accepts, and .mcp.json holds
        return Snippet(client, name, {"type": "stdio", "command": command, "args": args, "env": {}})
    if client == "vscode":
        return Snippet(client, name, {"type": "stdio", "command": command, "args": args})
    if client == "zed":
        return Snippet(client, name, {"command": command, "args": args, "env": {}})
    return Snippet(client, name, {"command": command, "args": args})


# TOML, written by hand for the few value types an entry holds (strings, lists of strings, tables of
# strings): the file around it is never re-serialized (client_files keeps it byte for byte).
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, except DEL, which TOML wants escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_key(key: str) -> str:
    return key if BARE_KEY.match(key) else toml_string(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_table(dotted: str, entry: dict[str, Any]) -> str:
    header = ".".join(toml_key(part) for part in dotted.split("."))
    return f"[{header}]\n" + "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in entry.items())
