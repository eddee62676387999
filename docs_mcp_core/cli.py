"""`docs-mcp` command line: validate, build, search, serve and audit; `eval` joins from docs_mcp_eval."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from . import __version__
from .diagnostics import format_json, format_text, has_errors
from .errors import DocsMcpError

DOCS_DIR = click.Path(file_okay=False, path_type=Path)


def _fail_cleanly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """User errors become one clear message and exit code 1, never a traceback."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DocsMcpError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted; the previously published index is untouched", err=True)
            sys.exit(130)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


class _PluginGroup(click.Group):
    """Commands of other installed packages (`docs-mcp eval`) join through the `docs_mcp.commands`
    entry points, loaded only when named, so this package never imports them."""

    def _plugins(self) -> dict[str, Any]:
        from importlib.metadata import entry_points

        return {ep.name: ep for ep in entry_points(group="docs_mcp.commands")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._plugins()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in (plugins := self._plugins()):
            command = plugins[cmd_name].load()
        return command


@click.group(cls=_PluginGroup,
             context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "DOCS_MCP"})
@click.version_option(__version__, prog_name="docs-mcp")
def main() -> None:
    """Index Markdown docs for AI coding agents and serve them over MCP.

    Every option can also be set with an environment variable DOCS_MCP_<COMMAND>_<OPTION>,
    e.g. DOCS_MCP_BUILD_OUT=./index.
    """


@main.command()
@click.option("--docs-dir", required=True, type=DOCS_DIR, help="Folder of Markdown files to check.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Output as `path:line: severity: message` lines, or one JSON document.")
@_fail_cleanly
def validate(docs_dir: Path, fmt: str) -> None:
    """Check manifests, frontmatter, hints and taxonomy; exit 1 if there is any error."""
    from .build import analyze_corpus

    chunkset = analyze_corpus(docs_dir)
    files = len(chunkset.files) + sum(d.message.startswith("not valid UTF-8") for d in chunkset.diagnostics)
    render = format_json if fmt == "json" else format_text
    click.echo(render(chunkset.diagnostics, files))
    sys.exit(1 if has_errors(chunkset.diagnostics) else 0)


def embedding_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Provider options shared by commands that embed; each also reads DOCS_MCP_<CMD>_<OPTION>."""
    from .embedding import PROVIDERS

    options = [
        click.option("--embedding-provider", type=click.Choice(list(PROVIDERS)), default="none", show_default=True,
                     help="none: full-text only; hash: deterministic offline vectors for tests; "
                          "openai: OpenAI or any OpenAI-compatible endpoint (key from OPENAI_API_KEY); "
                          "local (alias sentence-transformers): an offline model, needs docs-mcp[local]."),
        click.option("--embedding-model", default=None,
                     help="Model name or folder (openai default: text-embedding-3-small; "
                          "local default: sentence-transformers/all-MiniLM-L6-v2)."),
        click.option("--embedding-dimensions", type=click.IntRange(min=1), default=None,
                     help="Vector size (hash default 256; openai: the model's size, or a smaller one for text-embedding-3)."),
        click.option("--embedding-base-url", default=None,
                     help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1 for Ollama."),
        click.option("--embedding-batch-size", type=click.IntRange(min=1), default=None,
                     help="Inputs per embedding request (openai default 128)."),
        click.option("--embedding-concurrency", type=click.IntRange(min=1), default=None,
                     help="Embedding requests in flight at once (openai default 4)."),
        click.option("--embedding-max-retries", type=click.IntRange(min=0), default=None,
                     help="Retries per request on 429, 5xx and connection errors (openai default 5)."),
        click.option("--embedding-device", default=None,
                     help="Torch device for the local provider: cpu (default), cuda, cuda:1, mps."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def provider_settings(kwargs: dict[str, Any]) -> Any:
    from .embedding import ProviderSettings

    return ProviderSettings(
        provider=kwargs.pop("embedding_provider"),
        model=kwargs.pop("embedding_model"),
        dimensions=kwargs.pop("embedding_dimensions"),
        base_url=kwargs.pop("embedding_base_url"),
        batch_size=kwargs.pop("embedding_batch_size"),
        concurrency=kwargs.pop("embedding_concurrency"),
        max_retries=kwargs.pop("embedding_max_retries"),
        device=kwargs.pop("embedding_device"),
    )


@main.command()
@click.option("--docs-dir", required=True, type=DOCS_DIR, help="Folder of Markdown files to index.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: .lancedb/, chunks.json, metadata.json.")
@click.option("--description", default=None, help="Corpus description shown to agents in the search_docs tool.")
@click.option("--source-commit", default=None, help="Commit the docs came from, recorded in metadata.json.")
@embedding_options
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Embedding cache folder (default OUT/.embedding-cache); keep one per corpus.")
@click.option("--rebuild-cache", is_flag=True, help="Re-embed every chunk and write a fresh embedding cache.")
@click.option("-q", "--quiet", is_flag=True, help="Only warnings and errors on stderr.")
@_fail_cleanly
def build(docs_dir: Path, out: Path, description: str | None, source_commit: str | None, cache_dir: Path | None,
          rebuild_cache: bool, quiet: bool, **embedding: Any) -> None:
    """Build the index. Nothing is written if validation fails; publishing is atomic."""
    from .build import build as run_build
    from .embedding import make_provider
    from .progress import StderrReporter

    reporter = StderrReporter(quiet=quiet)
    provider = make_provider(provider_settings(embedding))
    try:
        summary = run_build(docs_dir, out, provider, description=description, source_commit=source_commit,
                            cache_dir=cache_dir, rebuild_cache=rebuild_cache, reporter=reporter)
    finally:
        provider.close()
    reporter.info(f"done: {summary.files} files ({summary.reused_files} unchanged), {summary.chunks} chunks, "
                  f"{summary.embedded.stats.embedded} embedded, table version {summary.index.version}, "
                  f"{summary.seconds:.1f}s")


def weight_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Fusion weights, shared by `search` and `serve` (defaults: search.Weights, tuned by benchmarks/tune.py)."""
    from .weights import Weights

    default = Weights()
    options = [
        click.option("--rrf-text-weight", type=float, default=default.text, show_default=True,
                     help="Weight of the full-text (BM25) ranking in the fusion."),
        click.option("--rrf-phrase-weight", type=float, default=default.phrase, show_default=True,
                     help="Weight of the exact-phrase ranking."),
        click.option("--rrf-vector-weight", type=float, default=default.vector, show_default=True,
                     help="Weight of the vector-similarity ranking (indexes with vectors)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def make_weights(kwargs: dict[str, Any]) -> Any:
    from .search import Weights

    return Weights(text=kwargs.pop("rrf_text_weight"), phrase=kwargs.pop("rrf_phrase_weight"),
                   vector=kwargs.pop("rrf_vector_weight"))


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder of a build.")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="Number of hits.")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", help="Taxonomy filter; repeatable.")
@click.option("--text-only", is_flag=True, help="Rank by text alone, even if the index has vectors.")
@click.option("--json", "as_json", is_flag=True, help="Print the search_docs result JSON.")
@weight_options
@_fail_cleanly
def search(index_dir: Path, query: str, limit: int, filters: tuple[str, ...], text_only: bool, as_json: bool,
           **weights: Any) -> None:
    """Search a built index from the shell, exactly as search_docs does."""
    from .search import run_search

    parsed: dict[str, str] = {}
    for item in filters:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise DocsMcpError(f"--filter {item!r} must look like key=value")
        parsed[key.strip()] = value.strip()
    page = run_search(index_dir, query, limit=limit, filters=parsed, hybrid=not text_only, weights=make_weights(weights))
    if as_json:
        click.echo(json.dumps(page.to_json(), indent=2, ensure_ascii=False))
        return
    if not page.hits:
        click.echo(f"no results. {page.hint['message'] if page.hint else ''}".strip())
        for key, values in (page.hint or {}).get("suggested_filters", {}).items():
            click.echo(f"  try --filter {key}={' or '.join(values)}")
    for rank, hit in enumerate(page.hits, start=1):
        click.echo(f"{rank:>2}. {hit['chunk_id']}  ({hit['score']:.4f})")
        click.echo(f"    {hit['breadcrumb']}")
        click.echo(f"    {hit['snippet']}")


@main.command()
@click.option("--index", "index_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder of a build (the server follows new builds published there).")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio for a local MCP client; http for streamable HTTP on /mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="HTTP bind address. Anything but localhost should come with --auth-token-env.")
@click.option("--port", type=click.IntRange(0, 65535), default=20310, show_default=True, help="HTTP port.")
@click.option("--auth-token-env", metavar="VAR", default=None,
              help="Require 'Authorization: Bearer <token>' on /mcp, the token read from environment variable VAR.")
@click.option("--stateless", is_flag=True, help="HTTP without sessions, for load-balanced replicas.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="HOST[:PORT]",
              help="Extra Host header to accept over HTTP (DNS-rebinding protection); repeatable.")
@click.option("--allowed-origin", "allowed_origins", multiple=True, metavar="ORIGIN",
              help="Extra Origin header to accept over HTTP; repeatable.")
@click.option("--tool-prefix", default=None, help="Name tools {prefix}_search_docs and {prefix}_get_doc.")
@click.option("--preload", is_flag=True,
              help="Load the query embedding model before serving (default: serve at once, text-only until loaded).")
@weight_options
@_fail_cleanly
def serve(index_dir: Path, transport: str, host: str, port: int, auth_token_env: str | None, stateless: bool,
          allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...], tool_prefix: str | None, preload: bool,
          **weights: Any) -> None:
    """Serve an index over MCP: search_docs, get_doc and the corpus's prompts."""
    import anyio

    from .server import create_server, serve_stdio

    token = None
    if auth_token_env:
        token = os.environ.get(auth_token_env, "")
        if not token:
            raise DocsMcpError(f"--auth-token-env {auth_token_env}: that environment variable is empty or unset")
    docs = create_server(index_dir, tool_prefix=tool_prefix, weights=make_weights(weights), preload=preload)
    if transport == "stdio":
        anyio.run(serve_stdio, docs)
        return
    from .server.http import serve_http

    serve_http(docs, host=host, port=port, token=token, stateless=stateless, allowed_hosts=list(allowed_hosts),
               allowed_origins=list(allowed_origins))


@main.command()
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder of a build.")
@click.option("--sql", default=None,
              help="Read-only SQL over the tables `builds` and `chunk_events` (default: the last build's summary).")
@_fail_cleanly
def audit(out: Path, sql: str | None) -> None:
    """What each build paid for: hits, misses and pruned vectors, per build and per chunk."""
    from .audit import format_table, last_build_summary, query

    if sql:
        click.echo(format_table(*query(out, sql)))
        return
    columns, rows = last_build_summary(out)
    if not rows:
        click.echo("no builds recorded yet")
        return
    width = max(len(c) for c in columns)
    for column, value in zip(columns, rows[0]):
        click.echo(f"{column.ljust(width)}  {value}")
    _, counts = query(out, f"SELECT status, count(*) FROM chunk_events WHERE build_id = '{rows[0][0]}' "
                           "GROUP BY status ORDER BY status")
    click.echo("chunk events".ljust(width) + "  " + (", ".join(f"{n} {status}" for status, n in counts) or "none"))


if __name__ == "__main__":
    main()
