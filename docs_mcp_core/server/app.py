"""The MCP server: tools and prompts from the published index, over the official SDK's low-level Server."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast

import anyio
import mcp.types  # noqa: F401 - first, so `from mcp import types` finds the submodule (lazy_imports.py)
from mcp import types  # after `import mcp.types` above: a submodule, not the deferred package's __init__
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from .. import __version__
from ..errors import DocsMcpError, internal_error_text
from ..failpoints import pause
from ..output.metadata import Prompt
from ..output.objectstore import location
from ..process import exit_now
from ..search import Library, SearchError, Served, Weights
from . import tools
from .mustache import TemplateError, render

if TYPE_CHECKING:  # imported where the first validator is made: a tools request, not before `initialize`
    from jsonschema import Draft202012Validator


def log(message: str) -> None:
    """Server messages go to stderr: on stdio, stdout is the protocol."""
    print(f"docs-mcp: {message}", file=sys.stderr, flush=True)


def _text(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=error, structured_content=structured
    )


def _has_own_channel(connection: Any) -> bool:
    """A handshake-era connection that lasts across requests and can be sent notifications. Not a
    2026-07-28 one (each request brings its own; they hear of changes on subscriptions/listen), nor a
    stateless HTTP request's (no channel to push on)."""
    return (
        connection is not None
        and getattr(connection, "has_standalone_channel", False)
        and getattr(connection, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS
        and hasattr(connection, "exit_stack")
    )


def tool_names(tool_prefix: str | None) -> tuple[str, str]:
    """(search_docs, get_doc) names with the prefix; a DocsMcpError if MCP would not accept them."""
    prefix = f"{tool_prefix}_" if tool_prefix else ""
    names = (f"{prefix}{tools.SEARCH}", f"{prefix}{tools.GET_DOC}")
    for name in names:
        if not (1 <= len(name) <= 64) or not all(c.isalnum() or c in "_-" for c in name):
            raise DocsMcpError(
                f"tool name '{name}' is not a valid MCP tool name; use a shorter --tool-prefix "
                "made of letters, digits, '_' and '-'"
            )
    return names


class _Server(Server):
    """The SDK's low-level Server, declaring `tools.listChanged` on handshake-era connections
    (the SDK's transports build their initialization options without arguments)."""

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), *args, **kwargs
        )


WATCH_SECONDS = 1.0  # how often a stdio server looks for a new publish while its client is idle
Role = Literal["user", "assistant"]  # what metadata.json's prompt messages hold (checked when the build wrote them)


class DocsServer:
    """Binds the served corpora (one or several: a search Library) to MCP tools and prompts;
    tool names may carry a prefix."""

    def __init__(self, library: Library, *, tool_prefix: str | None = None) -> None:
        self.library = library
        self.search_name, self.get_doc_name = tool_names(tool_prefix)
        self.changes_name = f"{tool_prefix}_{WHAT_CHANGED}" if tool_prefix else WHAT_CHANGED
        self._schemas_for: Served | None = None
        self._schemas_pins: tuple[Any, ...] = ()  # the versions the schemas' `version` enum was made from
        self._schema_cache: dict[str, Draft202012Validator] = {}
        self._schemas_json = ""  # the two tools' schemas as tool_signature writes them, made with the validators
        # tools/list_changed: the tool signature each handshake-era connection with a channel last saw, and a
        # session to reach it by; an entry leaves when its connection closes (see _follow)
        self._clients: dict[Any, tuple[Any, str]] = {}
        self._announced: str | None = None
        self.bus = InMemorySubscriptionBus()  # 2026-07-28 clients hear of changes on subscriptions/listen
        instructions = [index.metadata.instructions for _, index in library.starting().pairs]
        self.server = _Server(
            f"{tool_prefix}-docs" if tool_prefix else "docs-mcp",
            version=__version__,
            instructions="\n\n".join(i for i in instructions if i) or None,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
            on_subscriptions_listen=ListenHandler(self.bus),
        )

    # tools ----------------------------------------------------------------------------------
    async def _serving(self) -> Served:
        """The indexes the next request uses, so schemas and filters always match them.

        Before the first search has opened LanceDB, the metadata read at start stands in:
        `initialize` and `tools/list` must not wait for the tables.
        """
        return await self.library.serving()

    # change notifications ---------------------------------------------------------------------
    def tool_signature(self, index: Served) -> str:
        """What tools/list shows for these indexes: when it changes, clients are told to list again."""
        self._schemas(index)  # rebuilds self._schemas_json when the indexes or pins changed
        changes = self._versioned(index)
        described = [self._search_description(index), self._changes_schema(changes) if changes else None]
        return json.dumps(described, sort_keys=True) + self._schemas_json

    async def _follow(self, ctx: Any, index: Served) -> None:
        """Remember what this request's connection has seen, and tell every connection if the tools changed.

        Handshake-era connections get `notifications/tools/list_changed` on their own channel (stdio,
        or a stateful HTTP session's stream; a stateless HTTP server has no channel to push on);
        2026-07-28 connections get it on their `subscriptions/listen` stream.
        """
        signature = self.tool_signature(index)
        session = getattr(ctx, "session", None)
        connection: Any = getattr(session, "_connection", None)  # one per client; the session object is per request
        if _has_own_channel(connection):
            seen = self._clients.get(connection)
            if seen is None:
                # Forgotten when the connection closes. A weak key never was: the session kept as the value
                # refers to its connection, so every departed client (and, when each request had a
                # connection of its own, every request) stayed, and each call walked them all.
                connection.exit_stack.callback(self._clients.pop, connection, None)
            self._clients[connection] = (session, seen[1] if seen else signature)
        await self._announce(signature)

    async def _announce(self, signature: str) -> None:
        if self._announced is not None and signature != self._announced:
            log("the republished index changes the tool schemas: notifying clients (tools/list_changed)")
            await self.bus.publish(ToolsListChanged())
        self._announced = signature
        for connection, (session, seen) in list(self._clients.items()):
            if seen != signature:
                self._clients[connection] = (session, signature)
                try:
                    await session.send_tool_list_changed()
                except Exception as exc:  # noqa: BLE001 - a client that left must not fail the request at hand
                    log(f"could not send tools/list_changed: {exc}")

    async def open_indexes(self) -> None:
        """Open every corpus's index while the client initializes, so that its first search does not
        wait for it: once lancedb's import (under way in a thread since create_server, when an index
        has no serving snapshot) is done, so that `initialize` is answered first. An index that cannot be opened is left for the first
        request to report, as before."""
        if self.library.needs_lancedb():  # else every index is read from its serving snapshot
            await anyio.to_thread.run_sync(lambda: __import__("lancedb"), abandon_on_cancel=True)
        for corpus in self.library.corpora:
            with contextlib.suppress(Exception):  # reported by the request that needs it
                await corpus.engine.warm()
        pause("indexes-opened")  # a failpoint: a test sees this happen before it sends a request

    async def watch(self, every: float = WATCH_SECONDS) -> None:
        """Notice a publish while the client is idle, so list_changed reaches it before its next call."""
        while True:
            await anyio.sleep(every)
            if self.library.changed():  # each corpus's metadata.json, each reloading on its own
                try:
                    await self._announce(self.tool_signature(await self.library.served()))
                except Exception as exc:  # noqa: BLE001 - requests report a broken index; the watcher keeps going
                    log(f"watching for a new publish failed: {exc}")

    def _schemas(self, index: Served) -> dict[str, Draft202012Validator]:
        """Tool name -> validator (its schema in `.schema`), built once per set of published indexes."""
        if not index.same(self._schemas_for) or self.library.pins() != self._schemas_pins:
            self._schemas_for, self._schemas_pins = index, self.library.pins()
            corpora = index.corpora()
            search = tools.search_schema(index.taxonomy, corpora, index.by_corpus)
            get_doc = tools.get_doc_schema(corpora)
            versions = self.library.versions()
            if versions:  # a versioned corpus: any indexed version can answer, the served one by default
                served = ", ".join(f"{c.name} {c.version}" for c, _ in index.pairs if c.version)
                version = {
                    "type": "string",
                    "enum": sorted({label for labels in versions.values() for label in labels}),
                    "description": f"The docs version to answer from [default: the one served, {served}].",
                }
                search["properties"]["version"] = get_doc["properties"]["version"] = version
            from jsonschema import Draft202012Validator

            self._schema_cache = {
                self.search_name: Draft202012Validator(search),
                self.get_doc_name: Draft202012Validator(get_doc),
            }
            self._schemas_json = json.dumps([search, get_doc], sort_keys=True)
        return self._schema_cache

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        index = await self._serving()
        await self._follow(ctx, index)
        schemas = self._schemas(index)
        annotations = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=self.search_name,
                    description=self._search_description(index),
                    input_schema=tools.schema_of(schemas[self.search_name]),
                    annotations=annotations,
                ),
                types.Tool(
                    name=self.get_doc_name,
                    description=tools.GET_DOC_DESCRIPTION,
                    input_schema=tools.schema_of(schemas[self.get_doc_name]),
                    annotations=annotations,
                ),
                *self._changes_tool(index, annotations),
            ]
        )

    def _search_description(self, index: Served) -> str:
        """The search tool's description; for a versioned corpus, which version answers and how fresh it is."""
        text = tools.search_description(index.metadata, index.hybrid)
        notes = " ".join(f"Note: {note}." for note in self.library.notes(index.pairs))  # pinning, then stale
        if not any(corpus.version for corpus, _ in index.pairs):
            return text + (f" {notes}" if notes else "")
        from ..versions.serving import version_note

        versioned = [(corpus.name, corpus.out) for corpus, _ in index.pairs if corpus.version]
        return text + version_note(versioned) + (f" {notes}" if notes else "")

    # what_changed: only when a served corpus is a version of a versioned output with other versions
    def _versioned(self, index: Served) -> dict[str, tuple[Any, list[str]]]:
        from ..versions.serving import indexed_labels

        found = {corpus.name: (corpus, indexed_labels(corpus.out)) for corpus, _ in index.pairs if corpus.version}
        return {name: pair for name, pair in found.items() if len(pair[1]) > 1}

    def _changes_schema(self, versioned: dict[str, tuple[Any, list[str]]]) -> dict[str, Any]:
        labels = sorted({label for _, found in versioned.values() for label in found})
        version = {"type": "string", "enum": labels}
        properties: dict[str, Any] = {
            "from": {**version, "description": "The older version."},
            "to": {**version, "description": "The newer version."},
            "query": {"type": "string", "description": "Rank the changes by relevance to this, most relevant first."},
        }
        if len(versioned) > 1:
            properties["corpus"] = {"type": "string", "enum": sorted(versioned), "description": "The corpus."}
        required = ["from", "to", *(["corpus"] if len(versioned) > 1 else [])]
        return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}

    def _changes_tool(self, index: Served, annotations: types.ToolAnnotations) -> list[types.Tool]:
        versioned = self._versioned(index)
        if not versioned:
            return []
        served = ", ".join(f"{name} {corpus.version}" for name, (corpus, _) in versioned.items())
        return [
            types.Tool(
                name=self.changes_name,
                description="What changed in the docs between two indexed versions (serving "
                f"{served}): sections changed, renamed, added and removed, each with a short diff or its "
                "new text. Use it when upgrading, or when the project's version differs from the docs'.",
                input_schema=self._changes_schema(versioned),
                annotations=annotations,
            )
        ]

    async def _call_changes(self, arguments: dict[str, Any]) -> types.CallToolResult:
        from jsonschema import Draft202012Validator

        from ..versions.serving import changes_between

        index = await self.library.served()
        versioned = self._versioned(index)
        problem = (
            tools.check_arguments(self.changes_name, Draft202012Validator(self._changes_schema(versioned)), arguments)
            if versioned
            else f"{self.changes_name}: no served corpus has two indexed versions."
        )
        if problem:
            return _text(problem, error=True)
        corpus, labels = versioned[arguments.get("corpus") or next(iter(versioned))]
        for side in ("from", "to"):
            if arguments[side] not in labels:
                return _text(
                    f"corpus '{corpus.name}' has no version '{arguments[side]}'; it has: {', '.join(labels)}",
                    error=True,
                )
        text = await anyio.to_thread.run_sync(
            lambda: changes_between(
                Path(corpus.out), arguments["from"], arguments["to"], arguments.get("query"), served=corpus.version
            )
        )
        return _text(text)

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == self.changes_name:
            try:
                return await self._call_changes(dict(params.arguments or {}))
            except DocsMcpError as exc:
                return _text(str(exc), error=True)
        if params.name not in (self.search_name, self.get_doc_name):
            return _text(
                f"Unknown tool '{params.name}'. Available: {self.search_name}, {self.get_doc_name}.", error=True
            )
        try:
            index = await self.library.served()
            await self._follow(ctx, index)
            validator = self._schemas(index)[params.name]
            arguments = dict(params.arguments or {})
            if params.name == self.search_name:
                arguments = tools.match_taxonomy_case(arguments, index.taxonomy)
            problem = tools.check_arguments(params.name, validator, arguments)
            if problem:
                return _text(problem, error=True)
            if params.name == self.search_name:
                query = arguments.pop("query")
                limit = arguments.pop("limit", 10)
                cursor = arguments.pop("cursor", None)
                max_chars = arguments.pop("max_chars", None)
                corpus = arguments.pop("corpus", None)
                version = arguments.pop("version", None)
                page = await self.library.search(
                    query,
                    limit=limit,
                    filters=arguments,
                    cursor=cursor,
                    max_chars=max_chars,
                    corpus=corpus,
                    version=version,
                )
                # compact: fewer tokens for the agent; each hit's provenance in the structured content only
                return _text(json.dumps(page.to_json(), ensure_ascii=False), structured=page.structured())
            text, fields = await self.library.read_doc(
                arguments["chunk_id"],
                arguments.get("context", 0),
                max_chars=arguments.get("max_chars"),
                offset=arguments.get("offset", 0),
                tool=self.get_doc_name,
                version=arguments.get("version"),
            )
            return _text(text, structured=fields or None)
        except SearchError as exc:
            return _text(str(exc), error=True)
        except Exception as exc:  # noqa: BLE001 - the client gets a sentence, the log gets the trace
            log(f"{params.name} failed:\n{traceback.format_exc()}")
            return _text(internal_error_text(f"{params.name} failed unexpectedly", exc, str(exc)) + ".", error=True)

    # prompts --------------------------------------------------------------------------------
    async def _prompts(self) -> dict[str, Prompt]:
        served = await self._serving()
        prompts: dict[str, Prompt] = {}
        for _, index in served.pairs:  # with several corpora, the first corpus's prompt wins a shared name
            for prompt in index.metadata.prompts:
                prompts.setdefault(prompt.name, prompt)
        return prompts

    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    title=p.title,
                    description=p.description,
                    arguments=[
                        types.PromptArgument(name=a.name, description=a.description, required=a.required)
                        for a in p.arguments
                    ],
                )
                for p in (await self._prompts()).values()
            ]
        )

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompts = await self._prompts()
        prompt = prompts.get(params.name)
        if prompt is None:
            raise MCPError(
                types.INVALID_PARAMS, f"Prompt '{params.name}' not found. Available: {', '.join(prompts) or 'none'}."
            )
        values: dict[str, object] = dict(params.arguments or {})
        for argument in prompt.arguments:
            if argument.required and not str(values.get(argument.name, "")).strip():
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"Missing required prompt argument '{argument.name}' for prompt '{params.name}'.",
                )
        try:
            messages = [
                types.PromptMessage(
                    role=cast(Role, m.role), content=types.TextContent(type="text", text=render(m.content, values))
                )
                for m in prompt.messages
            ]
        except TemplateError as exc:
            raise MCPError(types.INTERNAL_ERROR, f"prompt '{params.name}' has a broken template: {exc}") from None
        return types.GetPromptResult(description=prompt.description, messages=messages)

    # resources ----------------------------------------------------------------------------------
    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name="corpora",
                    uri=CORPORA_URI,
                    mime_type="application/json",
                    description="The corpora served, each with where its answers come from, when it was "
                    "indexed and whether it can be read now; for a versioned corpus, the version served and every "
                    "indexed version.",
                )
            ]
        )

    async def read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if params.uri != CORPORA_URI:
            raise MCPError(types.INVALID_PARAMS, f"Resource '{params.uri}' not found. Available: {CORPORA_URI}.")
        from ..versions.serving import corpus_record  # lockfile readers and all: not on the server's start path

        served = await self._serving()
        corpora = [
            corpus_record(
                corpus.name,
                corpus.out,
                corpus.describe(index),
                {"indexed_at": index.metadata.stats.indexed_at, "source_commit": index.metadata.stats.source_commit},
                corpus.max_age,
            )
            for corpus, index in served.pairs
        ]
        for record, (corpus, _) in zip(corpora, served.pairs, strict=True):  # as /healthz sees it now
            health, record["available"] = await self.library.health(corpus)
            if not record["available"]:
                record["unavailable"] = health["message"]
        text = json.dumps({"corpora": corpora}, indent=2, ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=CORPORA_URI, mime_type="application/json", text=text)]
        )


CORPORA_URI = "docs-mcp://corpora"
WHAT_CHANGED = "what_changed"
CORPUS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")  # no ':' (the chunk ID prefix), '#' or spaces


@dataclass(frozen=True)
class ServedCorpus:
    """An index to serve; its name (the chunk ID prefix when several are served) defaults to the folder's."""

    out: Path | str  # a folder, or an s3:// URL
    name: str | None = None
    description: str | None = None
    notice: str | None = None  # a versioned corpus served at another version than the project locks: why
    max_age: dt.timedelta | None = None  # flagged as stale when its index is older (serve --max-age, max_age)
    # a versioned corpus: its output folder and the project whose lockfile pins it (re-pinned on change)
    versions_out: Path | None = None
    project: Path | None = None

    @property
    def corpus_name(self) -> str:
        if isinstance(self.out, str) and "://" in self.out:
            return self.name or self.out.rstrip("/").rsplit("/", 1)[-1]
        return self.name or Path(os.path.abspath(self.out)).name


def check_corpora(corpora: Sequence[ServedCorpus]) -> None:
    """Corpus names usable as chunk ID prefixes, and no name twice; a DocsMcpError saying how to name them."""
    if not corpora:
        raise DocsMcpError(
            "no index to serve: pass --index PATH (repeatable), or list corpora in docs-mcp.yaml's serve section"
        )
    for corpus in corpora if len(corpora) > 1 else []:  # a lone index's name is never shown
        if not CORPUS_NAME.match(corpus.corpus_name):
            raise DocsMcpError(
                f"'{corpus.corpus_name}' (index {corpus.out}) cannot name a corpus: use letters, digits, "
                "'.', '_' and '-' (it prefixes chunk IDs); name it with --index NAME=PATH"
            )
    names = [c.corpus_name for c in corpora]
    for name in dict.fromkeys(n for n in names if names.count(n) > 1):
        paths = [str(c.out) for c in corpora if c.corpus_name == name]
        raise DocsMcpError(
            f"two indexes would both be served as corpus '{name}' ({', '.join(paths)}); give each a "
            "name with --index NAME=PATH, or name them in docs-mcp.yaml's serve section"
        )


def create_server(
    out: Path | str | Sequence[ServedCorpus], *, tool_prefix: str | None = None, weights: Weights | None = None
) -> DocsServer:
    """Everything `docs-mcp serve` runs: reads each metadata.json now, imports LanceDB in the background
    when an index has no serving snapshot.

    Every check that can refuse to start (tool names, corpus names, metadata.json, cursor secret)
    runs before a background thread starts, so a refused start exits through the ordinary error path.
    The query embedding model loads in the background too: search is text-only until it is
    ready (`docs-mcp serve --preload` waits for it before serving). Several indexes are served
    together as corpora (search.Library); one index is the same server with one corpus.
    """
    tool_names(tool_prefix)
    corpora = [ServedCorpus(location(out))] if isinstance(out, (str, Path)) else list(out)
    check_corpora(corpora)
    library = Library.open([(c.corpus_name, location(c.out), c.description) for c in corpora], weights=weights, log=log)
    if library.needs_lancedb():  # an index read from its serving snapshot does not import it at all
        threading.Thread(target=lambda: __import__("lancedb"), name="warm-imports", daemon=True).start()
    for served, corpus in zip(corpora, library.corpora, strict=True):
        corpus.max_age, corpus.notice = served.max_age, served.notice
        corpus.versions_out, corpus.project = served.versions_out, served.project
    library.repin()  # records what the versions were chosen from: a change later re-pins
    return DocsServer(library, tool_prefix=tool_prefix)


def serve_then_exit(serve: Callable[[], None]) -> NoReturn:
    """Run a transport until it closes, then end the process at once, skipping interpreter finalization.

    Why not a normal exit: by then daemon threads may still be inside native code — the
    warm-up import of lancedb (Rust, pyo3), the query model loader importing torch, LanceDB's
    own runtime threads finishing a query for a client that left. Python 3.11 finalization
    stops such threads with pthread_exit, and unwinding through pyo3 frames aborts the process
    (`Fatal Python error: PyGILState_Release`, exit -6) in a few percent of stdio sessions.
    Joining our own threads is not enough (the loader can take seconds, and native pools are
    not ours to join). The server writes nothing that needs finalizing: every reply is written
    and flushed by the transport, and the index is only read; so flush stdio and os._exit.
    """
    code = 0
    try:
        serve()
    except KeyboardInterrupt:
        code = 130
    except SystemExit as exc:  # uvicorn exits this way when it cannot bind the port
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except DocsMcpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 1
    except BaseException:  # noqa: BLE001 - a bug: show it, then still exit without finalization
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the client may have closed the pipe already
            pass
    exit_now(code)


def ready_line(docs: DocsServer, transport: str) -> str:
    """What a person running `docs-mcp serve` by hand sees once the server waits for a client."""

    served = docs.library.starting().pairs
    if len(served) == 1:
        corpus, index = served[0]
        what = f"{corpus.out} ({index.metadata.stats.total_chunks} chunks)"
    else:
        what = (
            f"{len(served)} corpora ("
            + ", ".join(f"{c.name}: {c.out}, {index.metadata.stats.total_chunks} chunks" for c, index in served)
            + ")"
        )
    return f"serving {what} over {transport}; waiting for an MCP client"


async def serve_stdio(docs: DocsServer) -> None:
    """Serve one client on stdin and stdout until it closes them; a client that leaves while answers
    are on their way ends the server quietly, not with a traceback."""
    from contextlib import AsyncExitStack

    from mcp.server.stdio import stdio_server

    from .stdio_pipes import can_use_pipes, pipe_stdio

    try:
        async with AsyncExitStack() as stack:
            streams = await stack.enter_async_context(pipe_stdio()) if can_use_pipes() else (None, None)
            read, write = await stack.enter_async_context(stdio_server(*streams))
            log(ready_line(docs, "stdio"))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(docs.open_indexes)
                tasks.start_soon(docs.watch)
                await docs.server.run(read, write, docs.server.create_initialization_options())
                tasks.cancel_scope.cancel()
    except* (BrokenPipeError, ConnectionResetError):
        log("the client closed its end of stdout before every answer was sent; exiting")
