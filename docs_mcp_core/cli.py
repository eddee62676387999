"""`docs-mcp` command line: validate, build, search, serve and audit; `eval` joins from docs_mcp_eval."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import click

from . import __version__
from .command import (
    DOCS_DIR,
    INDEX_DIR,
    fail_cleanly,
    git_options,
    index_option,
    one_source,
    stage_repo,
    web_options,
)
from .diagnostics import format_json, format_text, has_errors, warning
from .embedding_options import ProviderCommand, embedding_options, provider_settings
from .errors import DocsMcpError
from .gc_freeze import settle
from .process import own_process

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from .output.vector_index import VectorIndexPolicy
    from .progress import Reporter
    from .trust.policy import CorpusTrust


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
            try:
                command = plugins[cmd_name].load()
            except ModuleNotFoundError as exc:  # its extra is not installed (`docs-mcp pipeline` without dagster)
                return _missing_extra(cmd_name, plugins[cmd_name].extras, exc)
        return command


def _missing_extra(name: str, extras: list[str], exc: ModuleNotFoundError) -> click.Command:
    """A stand-in for a command whose packages are missing: one `error:` line naming the extra to install."""
    install = f"pip install 'docs-mcp[{','.join(extras)}]'" if extras else "install the package that provides it"
    message = f"`docs-mcp {name}` needs {exc.name or 'a package that is not installed'}: {install}"

    @click.command(name, help=f"(not installed: {install})", context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def unavailable(args: tuple[str, ...]) -> None:
        click.echo(f"error: {message}", err=True)
        sys.exit(1)

    return unavailable


@click.group(
    cls=_PluginGroup, context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "DOCS_MCP"}
)
@click.version_option(__version__, prog_name="docs-mcp")
def main() -> None:
    """Index Markdown docs for AI coding agents and serve them over MCP.

    Every option can also be set with an environment variable DOCS_MCP_<COMMAND>_<OPTION>,
    e.g. DOCS_MCP_BUILD_INDEX=./index.
    """


@main.command()
@click.option("--docs-dir", default=None, type=DOCS_DIR, help="Folder of Markdown files to check.")
@web_options
@git_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output as `path:line: severity: message` lines (repeated warnings grouped), or one JSON "
    "document with every finding and its code.",
)
@click.option(
    "--list-files",
    is_flag=True,
    help="Also list what would be indexed, and each skipped file or folder with the reason.",
)
@click.option(
    "--corpus",
    "config_corpus",
    default=None,
    help="Scan with this corpus's `trust` settings in docs-mcp.yaml (its rules file, disabled rules and allow "
    "entries), as its build does.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="With --corpus: the docs-mcp.yaml to read (default: found as `build --config` finds it).",
)
@fail_cleanly
def validate(
    docs_dir: Path | None,
    fmt: str,
    list_files: bool,
    config_corpus: str | None,
    config_path: Path | None,
    **source: Any,
) -> None:
    """Check manifests, frontmatter, hints and taxonomy (of a folder, or of a website's pages or a
    repository's files as they would be staged); exit 1 if there is any error."""
    import tempfile

    web, repo = one_source(docs_dir, source)
    trust = _corpus_trust(config_path, config_corpus)
    if web is None and repo is None:
        assert docs_dir is not None
        _validate(docs_dir, fmt, list_files, trust)
        return
    from .progress import StderrReporter

    with tempfile.TemporaryDirectory(prefix="docs-mcp-validate-") as tmp:
        dest = Path(tmp) / "staged" / "docs"
        if repo is not None:
            staged = stage_repo(repo, dest, StderrReporter())
        else:
            from .sources.web.stage import stage_url

            staged = stage_url(web, dest, StderrReporter())
        _validate(Path(staged.path), fmt, list_files, trust)


def _corpus_trust(config_path: Path | None, name: str | None) -> CorpusTrust | None:
    """`validate --corpus NAME`: that corpus's trust settings in docs-mcp.yaml, as its build reads them."""
    if name is None:
        if config_path is not None:
            raise DocsMcpError(
                "--config goes with --corpus NAME (the corpus of docs-mcp.yaml whose trust settings apply)"
            )
        return None
    from .sources.config import load_config

    return load_config(config_path).trust(name)


def _validate(docs_dir: Path, fmt: str, list_files: bool, trust: CorpusTrust | None = None) -> None:
    from .indexing.chunks import analyze_corpus
    from .indexing.quarantine import trust_diagnostics
    from .paths import check_docs_dir

    chunkset = analyze_corpus(check_docs_dir(docs_dir, "--docs-dir"), trust_settings=trust)
    chunkset.diagnostics.extend(trust_diagnostics(chunkset.flags()))
    quarantined = sum(chunkset.quarantined.values())
    paths = [r.relpath for r in chunkset.files] + [d.path for d in chunkset.diagnostics if d.code == "not-utf8"]
    if not chunkset.chunk_count and not has_errors(chunkset.diagnostics):
        chunkset.diagnostics.append(
            warning(
                ".",
                1,
                "nothing to index: no Markdown file with content; `docs-mcp build` refuses this unless --allow-empty",
                "nothing-to-index",
            )
        )
    listing = _listing(docs_dir) if list_files else None
    from .authoring.syntax import syntax_report

    syntax = syntax_report(chunkset)
    if fmt == "json":
        doc = json.loads(format_json(chunkset.diagnostics, len(paths)))
        if listing is not None:
            doc["listing"] = listing
        doc["framework"] = chunkset.framework
        doc["syntax"] = syntax.rows
        doc["notes"] = syntax.notes
        doc["unknown_components"] = syntax.unknown_components
        click.echo(json.dumps(doc, indent=2))
    else:
        for entry in listing or []:
            why = f"  ({entry['reason']})" if entry.get("reason") else ""
            click.echo(f"{entry['status']:<9}{entry['path']}{why}")
        for line in syntax.lines():
            click.echo(line)
        click.echo(format_text(chunkset.diagnostics, paths, str(docs_dir)))
        if quarantined:
            click.echo(
                f"trust: {quarantined} chunk(s) have text addressed to an AI agent or hidden from readers; "
                "a build will not serve them. If a page is legitimate (a page about prompt injection), "
                'allow it in .docs-mcp.json: "trust": {"allow": [{"path": …, "rule": …, "reason": …}]}'
            )
    sys.exit(1 if has_errors(chunkset.diagnostics) else 0)


@main.command()
@click.option("--docs-dir", required=True, type=DOCS_DIR, help="Folder of Markdown files to analyse.")
@click.option("--write", is_flag=True, help="Write the proposed manifests (default: only show them).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="A unified diff per manifest with the reasons, or one JSON document.",
)
@click.option(
    "--llm",
    is_flag=True,
    help="Ask an OpenAI-compatible chat model for taxonomy descriptions and mcpServerInstructions "
    "(key from OPENAI_API_KEY); only a bounded summary of the corpus is sent.",
)
@click.option("--llm-base-url", default=None, help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1.")
@click.option("--llm-model", default="gpt-4o-mini", show_default=True, help="Chat model name.")
@click.option(
    "--llm-timeout",
    type=click.IntRange(min=1),
    default=120,
    show_default=True,
    help="Seconds one --llm request may take in all, from connecting to the last byte of the answer "
    "(2 retries after a timeout).",
)
@fail_cleanly
def fix(
    docs_dir: Path, write: bool, fmt: str, llm: bool, llm_base_url: str | None, llm_model: str, llm_timeout: int
) -> None:
    """Propose .docs-mcp.json manifests: chunking level, max_chunk_size, taxonomy; repairs oversized files.

    Running it again after --write proposes nothing.
    """
    from .authoring.fix import propose, write_proposals
    from .corpus.walk import show_path
    from .paths import check_docs_dir

    report, _ = propose(check_docs_dir(docs_dir, "--docs-dir"))
    if llm:
        from .authoring.llm import improve_with_llm

        improve_with_llm(report, base_url=llm_base_url, model=llm_model, timeout=llm_timeout)
    written, refused = write_proposals(docs_dir, report) if write else ([], [])
    for path, why in refused:
        click.echo(f"warning: {show_path(path)} not written: {why}; apply its proposal by hand", err=True)
    if fmt == "json":
        doc = report.to_json()
        doc["written"] = written
        doc["not_written"] = [{"path": path, "reason": why} for path, why in refused]
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        for proposal in report.proposals:
            for reason in proposal.reasons:
                click.echo(f"# {proposal.path}: {reason}")
            click.echo(proposal.diff(), nl=False)
        for note in report.notes:
            click.echo(f"note: {note}")
        if not report.proposals:
            click.echo("nothing to propose: the manifests already fit the corpus")
        elif written:
            click.echo(f"wrote {', '.join(written)}; check them with `docs-mcp validate --docs-dir {docs_dir}`")
        elif not refused:
            click.echo(f"{len(report.proposals)} manifest(s) proposed; run again with --write to write them")
    if refused:
        sys.exit(1)  # --write did not do all it was asked: scripts must notice


def _listing(docs_dir: Path) -> list[dict[str, str]]:
    """Every file the walk considered: indexed (Markdown), manifest, template, or skipped and why."""
    from .corpus.framework import detect_framework
    from .corpus.walk import list_tree

    tree = list_tree(docs_dir, framework=detect_framework(docs_dir))
    entries = [{"path": p, "status": "indexed"} for p in tree.markdown]
    entries += [{"path": p, "status": "manifest"} for p in tree.manifests]
    entries += [{"path": p, "status": "template"} for p in tree.templates]
    entries += [{"path": p, "status": "skipped", "code": code, "reason": why} for p, code, why in tree.skipped]
    entries += [
        {"path": d.path, "status": "skipped", "code": d.code, "reason": d.message.removeprefix("skipped: ")}
        for d in tree.diagnostics
        if d.severity == "warning"
    ]
    return sorted(entries, key=lambda e: (e["path"], e["status"]))


class _BuildOptions(TypedDict, total=False):
    """The keyword arguments `build` takes from the build command (`build_remote` passes them on)."""

    description: str | None
    source_commit: str | None
    cache_dir: Path | None
    rebuild_cache: bool
    force: bool
    reporter: Reporter
    allow_empty: bool
    vector_index: VectorIndexPolicy
    workers: int | None
    pages: list[dict[str, Any]] | None
    corpus: str | None
    signer: Ed25519PrivateKey | None


@main.command(cls=ProviderCommand)
@click.option("--docs-dir", default=None, type=DOCS_DIR, help="Folder of Markdown files to index.")
@web_options
@git_options
@index_option(
    "build",
    help="The index folder to write (.lancedb/, chunks.json, metadata.json), or s3://BUCKET/PREFIX "
    "(with --config: the corpus's `out`).",
    required=False,
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Build a corpus of this docs-mcp.yaml (with --corpus): every version of a versioned corpus.",
)
@click.option("--corpus", "config_corpus", default=None, help="With --config: the corpus to build.")
@click.option(
    "--version-label",
    default=None,
    help="Build this version of a versioned corpus: into INDEX/versions/LABEL, listed in INDEX/versions.json "
    "(with --config: only this one of the corpus's versions).",
)
@click.option("--description", default=None, help="Corpus description shown to agents in the search_docs tool.")
@click.option(
    "--source-commit",
    default=None,
    help="Commit the docs came from, recorded in metadata.json (a --git build records the commit it staged).",
)
@embedding_options
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Embedding cache folder (default INDEX/.embedding-cache); keep one per corpus.",
)
@click.option("--rebuild-cache", is_flag=True, help="Re-embed every chunk and write a fresh embedding cache.")
@click.option("--force", is_flag=True, help="Rewrite everything: re-parse, re-embed, write a new table version.")
@click.option("--allow-empty", is_flag=True, help="Publish an index even if the docs folder has nothing to index.")
@click.option(
    "--vector-index",
    type=click.Choice(["auto", "none", "always"]),
    default="auto",
    show_default=True,
    help="ANN index on the vectors: auto (when they outgrow the 128 MB a server ranks exactly in memory, "
    "or from --vector-index-min-rows rows), none (exact search only), always.",
)
@click.option(
    "--vector-index-min-rows",
    type=click.IntRange(min=1),
    default=None,
    help="With --vector-index auto: add the ANN index to tables of at least this many rows.",
)
@click.option(
    "--state-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="With --index s3://…: the local folder for the build's mirror, embedding cache and reuse state "
    "[default: ~/.cache/docs-mcp/s3/BUCKET/PREFIX].",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes that parse and chunk changed files (default: one per CPU core, used only when at "
    "least 800 files need parsing); 1 parses in the build process.",
)
@click.option(
    "--sign",
    "sign_key",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="KEYFILE",
    help="Sign metadata.json with this Ed25519 private key (PEM; `docs-mcp keygen` makes one), so that "
    "`serve --verify` and `search --verify` accept the index.",
)
@click.option("-q", "--quiet", is_flag=True, help="Only warnings and errors on stderr.")
@fail_cleanly
def build(
    docs_dir: Path | None,
    index: Path | str | None,
    config_path: Path | None,
    config_corpus: str | None,
    version_label: str | None,
    description: str | None,
    source_commit: str | None,
    cache_dir: Path | None,
    rebuild_cache: bool,
    force: bool,
    allow_empty: bool,
    vector_index: str,
    vector_index_min_rows: int | None,
    state_dir: Path | None,
    workers: int | None,
    sign_key: Path | None,
    quiet: bool,
    **embedding: Any,
) -> None:
    """Build the index from a folder (--docs-dir), a docs website (--url) or a git repository (--git).
    Nothing is written if validation fails; publishing is atomic."""
    from .embedding import make_provider, makes_vectors
    from .indexing.build import build as run_build
    from .indexing.build import build_remote
    from .output.lock import build_lock
    from .output.objectstore import RemoteOutput, is_remote
    from .output.vector_index import VectorIndexPolicy
    from .paths import check_docs_dir, check_writable_dir
    from .progress import StderrReporter, Timer

    settle()
    timer = Timer()

    if config_path is not None or config_corpus is not None:
        build_from_config(config_path, config_corpus, version_label, index, docs_dir, embedding, quiet, force, workers)
        return
    if index is None:
        raise DocsMcpError("give --index PATH (the index folder to write), or --config docs-mcp.yaml --corpus NAME")
    if version_label is not None:
        from .versions.spec import check_label

        try:
            check_label(version_label, "--version-label")
        except ValueError as exc:
            raise DocsMcpError(str(exc)) from None
        if is_remote(index):
            raise DocsMcpError(
                "--version-label builds into a local --index folder; s3:// outputs are not versioned yet"
            )
    web, repo = one_source(docs_dir, embedding)
    if repo is not None and source_commit:
        raise DocsMcpError("--source-commit goes with --docs-dir or --url: a --git build records the commit it staged")
    if docs_dir is not None:
        check_docs_dir(docs_dir, "--docs-dir")
    remote = RemoteOutput.parse(str(index)) if is_remote(index) else None
    if remote is None:
        if state_dir:
            raise DocsMcpError(
                "--state-dir goes with --index s3://… (a local --index keeps its state in INDEX/.docs-mcp)"
            )
        local = check_writable_dir(Path(index), "--index")
    else:  # built in a local mirror, then published to the bucket (objectstore.py)
        local = check_writable_dir(state_dir or remote.default_state_dir(), "--state-dir")
        remote.check_bucket()  # before anything is staged, parsed or embedded
    if cache_dir:
        check_writable_dir(cache_dir, "--cache-dir")
    signer = None
    if sign_key is not None:  # before anything is parsed or paid for
        from .output.signature import load_private_key

        signer = load_private_key(sign_key)

    reporter = StderrReporter(quiet=quiet)
    provider = make_provider(provider_settings(embedding, reporter))
    if force:
        again = "parsed and embedded again" if makes_vectors(provider) else "parsed again"
        reporter.info(f"--force: every file is {again}, and a new table version written")
    options: _BuildOptions = {
        "description": description,
        "source_commit": source_commit,
        "cache_dir": cache_dir,
        "rebuild_cache": rebuild_cache,
        "force": force,
        "reporter": reporter,
        "allow_empty": allow_empty,
        "vector_index": VectorIndexPolicy(vector_index, vector_index_min_rows),
        "workers": workers,
        "signer": signer,
    }
    try:
        with build_lock(local):  # staging a website or a repository writes under --index too: one build at a time
            from .output.layout import OutputLayout

            pages = None
            corpus = None
            staging = OutputLayout(local).version_staged(version_label) if version_label else OutputLayout(local).staged
            if web is not None:
                from .sources.web.stage import corpus_name, stage_url

                staged = stage_url(web, staging, reporter, force=force)
                docs_dir, pages, corpus = (
                    Path(staged.path),
                    staged.crawl.get("events"),
                    corpus_name(web.url, Path(staged.path)),
                )
            elif repo is not None:
                from .sources.git import repo_name

                staged = stage_repo(repo, staging, reporter)
                docs_dir, corpus = Path(staged.path), repo_name(repo[0])
                options["source_commit"] = staged.source_commit
            assert docs_dir is not None
            options["pages"], options["corpus"] = pages, corpus
            if remote is not None:
                summary = build_remote(docs_dir, remote.url, provider, state_dir=local, **options)
            elif version_label is not None:
                from .indexing.versioned import build_version

                source_url = web.url if web is not None else None
                ref = repo[1] if repo is not None else None
                opts: dict[str, Any] = {k: v for k, v in options.items() if k not in ("cache_dir", "reporter")}
                if cache_dir:
                    raise DocsMcpError(
                        "--cache-dir does not go with --version-label: the versions share INDEX/.embedding-cache"
                    )
                summary = build_version(
                    docs_dir, local, version_label, provider, ref=ref, source_url=source_url, reporter=reporter, **opts
                )
            else:
                summary = run_build(docs_dir, local, provider, **options)
    finally:
        provider.close()
    reporter.info(done_line(summary, provider, timer.seconds))


def build_from_config(
    config_path: Path | None,
    name: str | None,
    label: str | None,
    index: Path | str | None,
    docs_dir: Path | None,
    embedding: dict[str, Any],
    quiet: bool,
    force: bool,
    workers: int | None,
) -> None:
    """`build --config FILE --corpus NAME`: every version of a versioned corpus (or `label`), each a line;
    an unversioned corpus as the pipeline builds it. Exits 1 when a version failed (the others are built)."""
    from .embedding import make_provider
    from .output.layout import OutputLayout
    from .progress import StderrReporter, Timer
    from .sources.config import load_config

    if name is None:
        raise DocsMcpError("--config goes with --corpus NAME (the corpus of docs-mcp.yaml to build)")
    if index is not None or docs_dir is not None or embedding.get("url") or embedding.get("git_repo"):
        raise DocsMcpError("--config --corpus builds the corpus's source into its `out`: drop --index and the source")
    config = load_config(config_path)
    corpus = config.get(name)
    reporter = StderrReporter(quiet=quiet)
    provider = make_provider(corpus.embedding.settings())  # the corpus's embedding block, as the pipeline's
    timer = Timer()
    try:
        if corpus.versions is None:
            if label is not None:
                raise DocsMcpError(f"corpus {name!r} has no 'versions' in {config.path}; drop --version-label")
            from .indexing.build import build as run_build
            from .output.lock import build_lock
            from .sources.staged_docs import stage_corpus

            out = config.out_dir(name)
            with build_lock(out):
                staged = stage_corpus(config, name, OutputLayout(out).staged, reporter=reporter)
                summary = run_build(
                    Path(staged.path),
                    out,
                    provider,
                    corpus=name,
                    description=corpus.description,
                    source_commit=staged.source_commit,
                    reporter=reporter,
                    force=force,
                    workers=workers,
                    trust=config.trust(name),
                )
            reporter.info(done_line(summary, provider, timer.seconds))
            return
        from .sources.versioned_build import build_versions

        result = build_versions(
            config, name, provider, labels=[label] if label else None, reporter=reporter, force=force, workers=workers
        )
    finally:
        provider.close()
    for built_label, summary in result.built.items():
        reporter.info(f"version {built_label}: " + done_line(summary, provider, summary.seconds))
    if result.failed:
        raise DocsMcpError(
            f"{len(result.failed)} of {len(result.failed) + len(result.built)} version(s) of {name!r} failed "
            f"({', '.join(result.failed)}); the others are built"
        )


def done_line(summary: Any, provider: Any, seconds: float) -> str:
    """The build's last line: what it made of the corpus and whether the published index changed."""
    from .embedding import makes_vectors, multivector

    embedded = summary.embedded.stats.embedded
    noun = "passage" if multivector(provider) else "chunk"  # as the embedding cache's lines say
    what = f"{embedded} {noun if embedded == 1 else noun + 's'} embedded" if makes_vectors(provider) else "text-only"
    where = (
        f"the index at {summary.out} is unchanged" if summary.index.made == "kept" else f"published to {summary.out}"
    )
    return (
        f"done in {seconds:.1f}s: {summary.files} files ({summary.reused_files} unchanged), {summary.chunks} chunks, "
        f"{what}; {where}"
    )


def weight_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Fusion weights, shared by `search` and `serve` (defaults: search.Weights, tuned by benchmarks/tune.py)."""
    from .search import Weights

    default = Weights()
    options = [
        click.option(
            "--rrf-text-weight",
            type=float,
            default=default.text,
            show_default=True,
            help="Weight of the full-text (BM25) ranking in the fusion.",
        ),
        click.option(
            "--rrf-phrase-weight",
            type=float,
            default=default.phrase,
            show_default=True,
            help="Weight of the exact-phrase ranking.",
        ),
        click.option(
            "--rrf-vector-weight",
            type=float,
            default=default.vector,
            show_default=True,
            help="Weight of the vector-similarity ranking (indexes with vectors).",
        ),
        click.option(
            "--proximity-weight",
            type=click.FloatRange(min=0),
            default=default.proximity,
            show_default=True,
            help="Weight of each pair of neighbouring query words found near each other in a chunk's text, "
            "added to its full-text score (0 turns it off).",
        ),
        click.option(
            "--hybrid-fusion",
            type=click.Choice(["scores", "rrf"]),
            default=default.hybrid,
            show_default=True,
            help="How the vector ranking joins the full-text ones: each list's scores scaled to 0..1 and "
            "summed by weight (scores), or reciprocal rank fusion (rrf, as full text alone).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def make_weights(kwargs: dict[str, Any]) -> Any:
    """Weights from weight_options; a non-finite one (nan, inf) is refused: it would put NaN or
    Infinity into every score, and JSON answers cannot carry them."""
    import math

    from .search import Weights

    for name in ("rrf_text_weight", "rrf_phrase_weight", "rrf_vector_weight", "proximity_weight"):
        if not math.isfinite(kwargs[name]):
            option = "--" + name.replace("_", "-")
            raise DocsMcpError(f"{option} {kwargs[name]} is not a finite number; give a number such as 1.5")
    return Weights(
        text=kwargs.pop("rrf_text_weight"),
        phrase=kwargs.pop("rrf_phrase_weight"),
        vector=kwargs.pop("rrf_vector_weight"),
        hybrid=kwargs.pop("hybrid_fusion"),
        proximity=kwargs.pop("proximity_weight"),
    )


VERIFY_OPTION: dict[str, Any] = dict(
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="PUBKEY",
    help="Refuse an index whose metadata.json is not signed by the private key of this Ed25519 public "
    "key (PEM), at start and at every newly published build.",
)


@main.command()
@index_option("search", help="The index folder a build wrote (or s3://BUCKET/PREFIX).")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True, help="Number of hits.")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", help="Taxonomy filter; repeatable.")
@click.option("--text-only", is_flag=True, help="Rank by text alone, even if the index has vectors.")
@click.option("--json", "as_json", is_flag=True, help="Print the search_docs result JSON.")
@click.option("--verify", "verify_key", **VERIFY_OPTION)
@weight_options
@fail_cleanly
def search(
    index: Path,
    query: str,
    limit: int,
    filters: tuple[str, ...],
    text_only: bool,
    as_json: bool,
    verify_key: Path | None,
    **weights: Any,
) -> None:
    """Search a built index from the shell, exactly as search_docs does."""
    from .search import run_search

    if verify_key is not None:
        from .output.verify import verify_index

        verify_index(index, verify_key)

    parsed: dict[str, str] = {}
    for item in filters:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise DocsMcpError(f"--filter {item!r} must look like key=value")
        parsed[key.strip()] = value.strip()
    page = run_search(index, query, limit=limit, filters=parsed, hybrid=not text_only, weights=make_weights(weights))
    if as_json:
        click.echo(json.dumps(page.to_json(), indent=2, ensure_ascii=False))
        return
    if not page.hits:
        click.echo(f"no results. {page.hint['message'] if page.hint else ''}".strip())
        for key, values in (page.hint["suggested_filters"] if page.hint else {}).items():
            click.echo(f"  try --filter {key}={' or '.join(values)}")
    for rank, hit in enumerate(page.hits, start=1):
        click.echo(f"{rank:>2}. {hit['chunk_id']}  ({hit['score']:.4f})")
        click.echo(f"    {hit['breadcrumb']}")
        click.echo(f"    {hit['snippet']}")


def served_corpora(
    index_dirs: tuple[str, ...], config_file: Path | None, project: Path | None = None, max_age: Any = None
) -> list[Any]:
    """`--index [NAME=]PATH` values, or docs-mcp.yaml's serve section (with --config, or when no --index is given
    and ./docs-mcp.yaml or DOCS_MCP_CONFIG names a config with a serve section). A versioned corpus output
    is served at the version `project` locks, else its default (versions/serving.py). `max_age` (serve
    --max-age) applies to every corpus; without it, each corpus's `max_age` in docs-mcp.yaml."""
    corpora = [_one_version(corpus, project) for corpus in _served_corpora(index_dirs, config_file)]
    if max_age is not None:
        corpora = [dataclasses.replace(corpus, max_age=max_age) for corpus in corpora]
    return corpora


def _one_version(corpus: Any, project: Path | None) -> Any:
    """The corpus, or for a versioned output its served version (named after the corpus); each note is a line."""
    from .server import ServedCorpus
    from .versions.serving import served_version

    if isinstance(corpus.out, str) or not Path(corpus.out).is_dir():
        return corpus
    chosen = served_version(Path(corpus.out), project)
    for note in chosen.notes:
        click.echo(f"docs-mcp: {note}", err=True)
    if chosen.label is None:
        return corpus
    name = corpus.name or chosen.corpus or Path(os.path.abspath(corpus.out)).name
    return ServedCorpus(
        chosen.index, name, corpus.description, chosen.notice, corpus.max_age, Path(corpus.out), project
    )


def _max_age(value: str | None) -> Any:
    """serve --max-age as a duration; a bad one is one error line."""
    if value is None:
        return None
    from .output.freshness import parse_max_age

    try:
        return parse_max_age(value)
    except ValueError as exc:
        raise DocsMcpError(f"--max-age {exc}") from None


def _served_corpora(index_dirs: tuple[str, ...], config_file: Path | None) -> list[Any]:
    from .output.objectstore import location
    from .server import CORPUS_NAME, ServedCorpus

    if index_dirs and config_file:
        raise DocsMcpError("give --index (repeatable) or --config, not both")
    if not index_dirs:  # only then: the config's model imports every built-in provider (and its HTTP client)
        from .sources.config import CONFIG_ENV, find_config, load_config

        path = find_config(config_file)
        if config_file is None and not path.is_file():
            raise DocsMcpError(
                f"no index to serve: pass --index PATH (repeatable), or --config docs-mcp.yaml with a "
                f"serve section (none at {path}, and {CONFIG_ENV} is unset)"
            )
        config = load_config(path)
        listed = config.served()
        for name, out, _ in listed:
            if name in config.names and out == config.out_dir(name) and not Path(out).exists():
                raise DocsMcpError(
                    f"{config.path}: corpus {name!r} is not built yet (no folder {out}); build it with "
                    f"`docs-mcp build --config {shlex.quote(str(config.path))} --corpus {name}`"
                )
        return [ServedCorpus(out, name, description, max_age=config.max_age(name)) for name, out, description in listed]
    served = []
    for value in index_dirs:
        name, sep, rest = value.partition("=")
        if sep and rest and CORPUS_NAME.match(name) and "://" not in name and not Path(value).exists():
            served.append(ServedCorpus(location(rest), name))
        else:
            served.append(ServedCorpus(location(value)))
    return served


@main.command()
@index_option(
    "serve",
    help="An index folder a build wrote (the server follows new builds published there). Repeat it to serve "
    "several corpora from one server, each named after its folder or NAME.",
    required=False,
    multiple=True,
    type=str,
    metavar="[NAME=]PATH",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Serve the corpora named in this docs-mcp.yaml's serve section (instead of --index).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a local MCP client; http for streamable HTTP on /mcp.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="HTTP bind address. Anything but localhost should come with --auth-token-env.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=20310,
    show_default=True,
    help="HTTP port; 0 takes a free one, which the 'serving on' line shows.",
)
@click.option(
    "--auth-token-env",
    metavar="VAR",
    default=None,
    help="Require 'Authorization: Bearer <token>' on /mcp, the token (32 characters or more) read from "
    "environment variable VAR.",
)
@click.option("--stateless", is_flag=True, help="HTTP without sessions, for load-balanced replicas.")
@click.option(
    "--header-timeout",
    type=float,
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    help="HTTP: a request's header must arrive within this many seconds of its first byte, else 408 "
    "and the connection is closed.",
)
@click.option(
    "--body-timeout",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="HTTP: a request's body must arrive within this many seconds of its header, else the connection is closed.",
)
@click.option(
    "--session-idle-timeout",
    type=float,
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="HTTP: a session with no request in flight (and no open event stream) for this long ends; its "
    "client gets 404 and initializes again.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="HTTP: sessions open at once; while that many are open, a new one is refused with 503.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="HOST[:PORT]",
    help="Extra Host header to accept over HTTP (DNS-rebinding protection); repeatable.",
)
@click.option(
    "--allowed-origin",
    "allowed_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Extra Origin header to accept over HTTP; repeatable.",
)
@click.option("--tool-prefix", default=None, help="Name tools {prefix}_search_docs and {prefix}_get_doc.")
@click.option(
    "--preload",
    is_flag=True,
    help="Load the query embedding model before serving (default: serve at once, text-only until loaded).",
)
@click.option("--verify", "verify_key", **VERIFY_OPTION)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A project folder: a versioned corpus is served at the version its lockfile pins (uv.lock, "
    "poetry.lock, package-lock.json, go.mod, Cargo.lock, …) instead of its default; a line says when "
    "that version is not indexed and which one answers.",
)
@click.option(
    "--max-age",
    metavar="AGE",
    help="Flag a corpus whose index is older than AGE (30d, 12h, 2w) in the search_docs description, the "
    "corpora resource and its answers [default: each corpus's max_age in docs-mcp.yaml; else none].",
)
@click.option(
    "--shared",
    is_flag=True,
    help="stdio: hand this session to a resident server for the same index and options (started on first "
    "use, forking a process per session after its imports), so sessions start at once and share memory.",
)
@click.option(
    "--shared-idle-timeout",
    type=float,
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="With --shared: a resident server this command starts exits after this long without a session.",
)
@weight_options
@fail_cleanly
def serve(
    index: tuple[str, ...],
    config_file: Path | None,
    transport: str,
    host: str,
    port: int,
    auth_token_env: str | None,
    stateless: bool,
    header_timeout: float,
    body_timeout: float,
    session_idle_timeout: float,
    max_sessions: int,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    tool_prefix: str | None,
    preload: bool,
    verify_key: Path | None,
    project: Path | None,
    max_age: Any,
    shared: bool,
    shared_idle_timeout: float,
    **weights: Any,
) -> None:
    """Serve one index, or several corpora together, over MCP: search_docs, get_doc and the corpora's prompts."""
    import math

    if shared:  # reached through `python -m docs_mcp_core.cli`; the console script attaches before importing this
        from .shared_session import main as attach

        if "serve" not in sys.argv:
            raise DocsMcpError("--shared: run the `docs-mcp serve` command (it hands its stdin and stdout over)")
        attach(sys.argv[sys.argv.index("serve") :])

    import anyio

    from .heap import limit_arenas
    from .server import create_server, serve_stdio, serve_then_exit

    limit_arenas()  # before the server's threads start allocating: one arena each otherwise
    seconds = {
        "--header-timeout": header_timeout,
        "--body-timeout": body_timeout,
        "--session-idle-timeout": session_idle_timeout,
    }
    for option, value in seconds.items():
        if not (math.isfinite(value) and value > 0):
            raise DocsMcpError(f"{option} {value}: give a number of seconds above 0")
    token = None
    if auth_token_env:
        from .server import check_token

        token = os.environ.get(auth_token_env, "")
        if not token:
            raise DocsMcpError(f"--auth-token-env {auth_token_env}: that environment variable is empty or unset")
        check_token(auth_token_env, token)
    corpora = served_corpora(index, config_file, project, _max_age(max_age))
    if verify_key is not None:  # every corpus, before anything of it is served
        from .output.verify import verify_index

        for corpus in corpora:
            verify_index(corpus.out, verify_key)
    docs = create_server(corpora, tool_prefix=tool_prefix, weights=make_weights(weights))

    def run() -> None:
        if preload:
            docs.library.wait_for_query_models()
        if transport == "stdio":
            anyio.run(serve_stdio, docs)
            return
        from .server import HttpLimits, serve_http

        serve_http(
            docs,
            host=host,
            port=port,
            token=token,
            stateless=stateless,
            allowed_hosts=list(allowed_hosts),
            allowed_origins=list(allowed_origins),
            limits=HttpLimits(header_timeout, body_timeout, session_idle_timeout, max_sessions),
        )

    serve_then_exit(run)  # background threads are running from here: see serve_then_exit for why


CLIENT_NAMES = ("claude-code", "claude-desktop", "cursor", "vscode", "windsurf", "zed", "codex", "gemini")


def index_options(command: str, several: str, alias: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--index [NAME=]PATH` (repeatable) and `--config`, read as `serve` reads them (served_corpora);
    `several` says what repeating --index gives."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(_index_options(command, several, alias)):
            fn = option(fn)
        return fn

    return decorate


def _index_options(command: str, several: str, alias: bool) -> list[Callable[..., Any]]:
    return [
        index_option(
            command,
            help=f"A built index, as `serve --index` takes it; repeat it for several corpora ({several}).",
            dest="index_dirs",
            alias=alias,
            required=False,
            multiple=True,
            type=str,
            metavar="[NAME=]PATH",
        ),
        click.option(
            "--config",
            "config_file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="The corpora of this docs-mcp.yaml's serve section, as `serve --config` serves them.",
        ),
    ]


def checked_corpora(
    index_dirs: tuple[str, ...], config_file: Path | None, what: str, project: Path | None = None
) -> tuple[list[tuple[Any, Any]], Path | None]:
    """The corpora `serve` would serve for these options (served_corpora: one parser), each with its
    published metadata (a path that is no index is refused here, not in a client later), and the
    docs-mcp.yaml they came from (None for --index)."""
    from .output.metadata import require_metadata
    from .output.objectstore import RemoteOutput
    from .server import check_corpora
    from .sources.config import CONFIG_ENV, find_config

    config = None
    if not index_dirs:
        config = find_config(config_file)
        if config_file is None and not config.is_file():
            raise DocsMcpError(
                f"nothing to {what}: pass --index [NAME=]PATH (repeatable) or --config docs-mcp.yaml (none at "
                f"{config}, and {CONFIG_ENV} is unset)"
            )
    corpora = served_corpora(index_dirs, config_file if index_dirs else config, project)
    check_corpora(corpora)
    checked = []
    for corpus in corpora:
        remote = isinstance(corpus.out, str)
        checked.append(
            (corpus, RemoteOutput.parse(corpus.out).require_metadata() if remote else require_metadata(corpus.out))
        )
    return checked, config


def _absolute(out: Path | str) -> str:
    return out if isinstance(out, str) else os.path.abspath(out)


@main.command("mcp-config")
@click.option("--client", required=True, type=click.Choice(CLIENT_NAMES), help="The MCP client to configure.")
@index_options("mcp-config", "one server serves them all")
@click.option(
    "--url",
    default=None,
    metavar="URL",
    help="A running `docs-mcp serve --transport http` endpoint instead of a local index, e.g. "
    "https://docs.example.com/mcp.",
)
@click.option(
    "--token-env",
    metavar="VAR",
    default=None,
    help="With --url: the environment variable holding the bearer token (referenced, never printed).",
)
@click.option(
    "--name",
    default=None,
    help="Server name in the client [default: CORPUS-docs for one corpus, docs for several, HOST-docs for --url].",
)
@click.option(
    "--write",
    is_flag=True,
    help="Merge the entry into the client's config file (backed up first; other servers and settings kept) "
    "instead of printing it.",
)
@click.option(
    "--path",
    "write_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --write: the file to merge into [default: the client's project file in this folder, or its "
    "user file if it has no project file].",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Serve versioned corpora at the version this project folder's lockfile pins (`serve --project`).",
)
@click.option(
    "--shared",
    is_flag=True,
    help="Start the server with `serve --shared`: each session the client opens is forked from one resident "
    "server (Linux; a faster first answer, less memory for several sessions).",
)
@fail_cleanly
def mcp_config(
    client: str,
    index_dirs: tuple[str, ...],
    config_file: Path | None,
    url: str | None,
    token_env: str | None,
    name: str | None,
    write: bool,
    write_path: Path | None,
    project: Path | None,
    shared: bool,
) -> None:
    """Configure an MCP client for this install: the entry on stdout (JSON, or TOML for Codex), where it
    goes on stderr; or, with --write, merged into the client's file."""
    from .connect.clients import CLIENTS, Launch, check_server_name, docs_mcp_command, server_name, snippet, url_host

    if write_path is not None and not write:
        raise DocsMcpError("--path goes with --write (it names the file to merge into)")
    if url is not None:
        if project is not None:
            raise DocsMcpError("--project goes with a local index (--index/--config): a --url server pins its own")
        if shared:
            raise DocsMcpError("--shared goes with a local index (--index/--config): a --url server is already shared")
        if index_dirs or config_file:
            raise DocsMcpError("give --url (an HTTP server) or a local index (--index/--config), not both")
        if not url.startswith(("http://", "https://")):
            raise DocsMcpError(f"--url must start with http:// or https:// (got {url!r})")
        launch, default_name, served = Launch(url=url, token_env=token_env), server_name(url_host(url)), []
    else:
        if token_env:
            raise DocsMcpError("--token-env goes with --url (a local stdio server needs no token)")
        from .versions.serving import corpus_output

        checked, config = checked_corpora(index_dirs, config_file, "configure", project)
        corpora = [corpus for corpus, _ in checked]
        args = ["serve"]
        if config is not None:
            args += ["--config", str(config)]
        if project is not None:
            args += ["--project", os.path.abspath(project)]
        if shared:
            args.append("--shared")
        for corpus in corpora if config is None else []:
            path = _absolute(corpus.out if isinstance(corpus.out, str) else corpus_output(corpus.out))
            args += ["--index", f"{corpus.name}={path}" if corpus.name else path]
        launch = Launch(command=[*docs_mcp_command(), *args])
        default_name = server_name(corpora[0].corpus_name) if len(corpora) == 1 else "docs"
        served = [f"{c.corpus_name} ({_absolute(c.out)})" for c in corpora]
    result = snippet(client, check_server_name(name) if name else default_name, launch)
    info = CLIENTS[client]
    what = "1 corpus" if len(served) == 1 else f"{len(served)} corpora from one server"
    serves = f"# serves {what}: {', '.join(served)}" if served else f"# reaches {url}"
    if write:
        from .connect.client_files import write_snippet

        done = write_snippet(result, write_path or info.default_path(Path.cwd()))
        if done.status == "unchanged":
            click.echo(f"{done.path}: server '{result.name}' is already there as configured; nothing written", err=True)
            return
        backup = f" (backup: {done.backup})" if done.backup else ""
        click.echo(f"{done.path}: {done.status} server '{result.name}' for {info.title}{backup}", err=True)
        click.echo(serves, err=True)
        return
    click.echo(result.text(), nl=False)
    click.echo(serves, err=True)
    where = info.default_path(Path.cwd())
    click.echo(f"# put this in {where} ({info.note}), or write it there with --write", err=True)
    if client == "claude-code":
        click.echo("# or add it with Claude Code's own command:", err=True)
        click.echo(result.add_json_command(), err=True)


@main.command()
@index_option("get", help="The index folder a build wrote (or s3://BUCKET/PREFIX).", dest="index_dir")
@click.argument("chunk_id")
@click.option(
    "--context",
    type=click.IntRange(0, 5),
    default=0,
    show_default=True,
    help="Neighbouring chunks of the same file to add on each side.",
)
@click.option(
    "--max-chars",
    type=click.IntRange(500, 200_000),
    default=None,
    help="Largest answer, in characters; a cut answer ends with a [trimmed: …] note saying how to read on "
    "(with --offset).",
)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Character position in the chunk to read on from, as a [trimmed: …] note gives it.",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"chunk_id": …, "text": …} instead of the Markdown.')
@fail_cleanly
def get(index_dir: Path, chunk_id: str, context: int, max_chars: int | None, offset: int, as_json: bool) -> None:
    """Read a chunk by its ID from the shell, exactly as get_doc does (a file path reads its first chunk)."""
    from .search import run_get_doc

    text = run_get_doc(index_dir, chunk_id, context=context, max_chars=max_chars, offset=offset)
    if as_json:
        click.echo(json.dumps({"chunk_id": chunk_id, "text": text}, indent=2, ensure_ascii=False))
        return
    click.echo(text)


@main.command()
@click.option(
    "--from", "old_index", required=True, type=INDEX_DIR, help="The built index of the older version (or its label)."
)
@click.option(
    "--to", "new_index", required=True, type=INDEX_DIR, help="The built index of the newer version (or its label)."
)
@click.option(
    "--index",
    "corpus_out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A versioned corpus output (versions.json): --from and --to are then two of its version labels.",
)
@click.option("--query", default=None, help="Rank the changes by relevance to this (most relevant first).")
@click.option(
    "--max-chars",
    type=click.IntRange(1000, 1_000_000),
    default=24000,
    show_default=True,
    help="Characters of diffs and new text in the whole answer (at most 1500 a change); later changes are "
    "listed by ID and heading only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the changes as one JSON document.")
@fail_cleanly
def diff(
    old_index: Path | str,
    new_index: Path | str,
    corpus_out: Path | None,
    query: str | None,
    max_chars: int,
    as_json: bool,
) -> None:
    """What changed between two built indexes of a corpus (two versions of its docs): sections changed,
    renamed, added and removed, each with a short diff or its new text."""
    from .versions.changes import what_changed
    from .versions.published import read_chunks
    from .versions.report import Budget, to_json, to_text
    from .versions.serving import served_version

    if corpus_out is not None:  # labels of one versioned corpus
        old_index, new_index = (served_version(corpus_out, label=str(v)).index for v in (old_index, new_index))
    old_chunks, new_chunks = read_chunks(old_index), read_chunks(new_index)
    found = what_changed(old_chunks, new_chunks, query)
    budget = Budget(per_change=min(Budget.per_change, max_chars), total=max_chars)
    if as_json:
        click.echo(json.dumps(to_json(found, str(old_index), str(new_index), budget), indent=2, ensure_ascii=False))
        return
    read_more = f"docs-mcp get --index {shlex.quote(str(new_index))} {{chunk_id}}"
    click.echo(to_text(found, str(old_index), str(new_index), budget, read_more=read_more))


@main.command()
@index_options("skill", "a section each", alias=False)  # its --out is the SKILL.md folder
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write OUT/NAME/SKILL.md (e.g. --out .claude/skills) instead of printing it.",
)
@click.option("--name", default=None, help="The skill's name (and folder) [default: CORPUS-docs, or docs for several].")
@fail_cleanly
def skill(index_dirs: tuple[str, ...], config_file: Path | None, out_dir: Path | None, name: str | None) -> None:
    """An agent skill (SKILL.md) that searches and reads these docs with `docs-mcp search --json` and
    `docs-mcp get`, for agents that prefer a command line to MCP."""
    from .connect.clients import docs_mcp_command
    from .connect.skill import SkillCorpus, check_skill_name, render_skill, skill_name
    from .fsutil import write_atomic

    checked, _ = checked_corpora(index_dirs, config_file, "describe")
    described = [SkillCorpus(c.corpus_name, _absolute(c.out), metadata, c.description) for c, metadata in checked]
    chosen = check_skill_name(name) if name else skill_name(described)
    text = render_skill(chosen, described, docs_mcp_command())
    if out_dir is None:
        click.echo(text, nl=False)
        return
    path = out_dir / chosen / "SKILL.md"
    existed = path.exists()
    write_atomic(path, text.encode("utf-8"))
    click.echo(f"{'replaced' if existed else 'wrote'} {path}", err=True)


@main.command()
@click.option(
    "--out",
    "prefix",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("docs-mcp-signing"),
    show_default=True,
    help="Write the private key to PREFIX.pem (owner-readable only) and the public key to PREFIX.pub.pem.",
)
@fail_cleanly
def keygen(prefix: Path) -> None:
    """Make an Ed25519 key pair for `build --sign` (the private key, for CI) and `--verify` (the public key)."""
    from .output.signature import generate

    private, public = Path(f"{prefix}.pem"), Path(f"{prefix}.pub.pem")
    key = generate(private, public)
    click.echo(f"wrote {private} (private: keep it in CI's secret store) and {public} (public: key ID {key})")


@main.command()
@index_option(
    "audit",
    help="The index folder a build wrote (or s3://BUCKET/PREFIX); a versioned corpus output (with versions.json) "
    "shows what each version embedded and reused from which other version.",
)
@click.option(
    "--sql",
    default=None,
    help="Read-only SQL over the tables `builds`, `chunk_events`, `trust_findings` and `page_events` (website "
    "corpora) (default: the last build's summary).",
)
@fail_cleanly
def audit(index: Path, sql: str | None) -> None:
    """What each build paid for: hits, misses and pruned vectors, per build and per chunk (per version, for a
    versioned corpus output)."""
    from .indexing.cache_audit import format_table, last_build_summary, query

    out = index

    if isinstance(out, str):  # s3://…: the audit is kept with the build's default state dir
        from .output.objectstore import RemoteOutput

        out = RemoteOutput.parse(out).default_state_dir()
    from .output.versions_manifest import read_manifest

    if Path(out).is_dir() and read_manifest(out) is not None:  # a versioned output: what each version reused
        _audit_versions(out, sql)
        return
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
    _, counts = query(
        out,
        f"SELECT status, count(*) FROM chunk_events WHERE build_id = '{rows[0][0]}' GROUP BY status ORDER BY status",
    )
    click.echo("chunk events".ljust(width) + "  " + (", ".join(f"{n} {status}" for status, n in counts) or "none"))
    _, tables = query(out, "SELECT table_name FROM information_schema.tables WHERE table_name = 'page_events'")
    pages = (
        query(
            out,
            f"SELECT event, count(*) FROM page_events WHERE build_id = '{rows[0][0]}' GROUP BY event ORDER BY event",
        )[1]
        if tables
        else []
    )  # audit files older than website sources lack it
    if pages:  # a website corpus: what its crawl did
        click.echo("page events".ljust(width) + "  " + ", ".join(f"{n} {event}" for event, n in pages))


def _audit_versions(out: Path, sql: str | None) -> None:
    from .indexing.cache_audit import format_table
    from .indexing.version_audit import reuse_table, version_reuse
    from .output.layout import OutputLayout

    if sql:
        raise DocsMcpError(
            f"{out} is a versioned output: --sql reads one version's audit; give --index "
            f"{OutputLayout(out).version('LABEL')}"
        )
    reuse = version_reuse(out)
    if not reuse:
        click.echo("no version has recorded a build with vectors yet")
        return
    click.echo(
        f"{out}: each version's last build, in vectors (distinct fingerprints): embedded by it, or reused "
        "from the version that first paid for them"
    )
    click.echo(format_table(*reuse_table(reuse)))


def entry() -> None:
    """The `docs-mcp` console script: `main` in a process of its own (see process.py)."""
    own_process()
    main()


if __name__ == "__main__":
    entry()
