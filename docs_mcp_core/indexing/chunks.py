"""The `chunks` asset: every file parsed, checked and chunked; unchanged files reuse the previous
build's chunks (file_reuse.py)."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..corpus.prompts import load_prompts
from ..corpus.site import pages_site_name
from ..corpus.taxonomy import build_taxonomy, check_taxonomy_limits, server_instructions
from ..corpus.walk import decode_text, manifest_rules, read_hashed, scan_corpus
from ..diagnostics import Diagnostic, error, has_errors
from ..errors import DocsMcpError, ValidationFailed
from ..fsutil import file_stat
from ..output.chunk import Chunk
from ..output.layout import OutputLayout
from ..paths import MARKDOWN_SUFFIXES, counted_files
from ..progress import NullReporter, Reporter, Timer, counted
from .chunk_lines import Spill
from .contract import ChunkSet, FileRecord
from .description import readme_summary
from .file_reuse import (
    PreviousChunks,
    file_key,
    load_previous,
)
from .parsing import Parsed, ParseJob, Parser
from .quarantine import quarantine_line

if TYPE_CHECKING:
    from ..trust.policy import CorpusTrust


def _titles(chunks: list[Chunk]) -> list[str]:
    return [c.heading for c in chunks if c.heading_level == 1 and c.heading]


# What a config key that could not be read costs, for the note that says so.
UNREAD = {
    "title": "the corpus description names the site otherwise",
    "site": "pages get no source_url",
    "routeBasePath": "pages get no source_url",
    "srcExclude": "pages it leaves out are indexed",
}


def analyze_corpus(
    docs_dir: Path,
    reporter: Reporter | None = None,
    previous: PreviousChunks | None = None,
    *,
    workers: int | None = None,
    spill_dir: Path | None = None,
    trust_settings: CorpusTrust | None = None,
) -> ChunkSet:
    """Parse, check and chunk every file, reusing unchanged files' chunks from `previous`; `trust_settings`: the
    corpus's trust settings from docs-mcp.yaml (trust/policy.py).

    Files that need parsing go to `workers` processes (default: one per core) when there are
    enough of them to pay for it (indexing/parsing.py); the result does not depend on it.
    Their chunks go to a spill file in `spill_dir` (default: the system's temporary folder).
    """
    reporter = reporter or NullReporter()
    timer = Timer()
    scanned_ns = time.time_ns()
    scan = scan_corpus(Path(docs_dir))
    diags = list(scan.diagnostics)
    files: list[FileRecord] = []
    spill = Spill(spill_dir)
    seen_ids: set[str] = set()
    waiting: deque[FileRecord] = deque()  # files sent to the parser, in order, awaiting their result
    includes = scan.includes
    context = scan.context_key
    from ..trust.policy import load_trust

    trust, trust_diags = load_trust(scan.root, scan.manifests, trust_settings)
    diags.extend(trust_diags)
    parser = Parser(scan.manifests, workers, includes=includes, site=scan.site, trust=trust)
    hashed = 0

    def take(results: Iterator[Parsed]) -> None:
        for result in results:
            record = waiting.popleft()
            record.chunks, record.diagnostics, record.metadata = len(result.chunks), result.diagnostics, result.metadata
            record.titles = _titles(result.chunks)
            record.included, record.constructs, record.flags = result.included, result.constructs, result.flags
            if result.chunks:
                diags.extend(_duplicate_ids(result.chunks, seen_ids))
                spill.add(record.relpath, result.chunks)

    root = os.path.join(str(scan.root), "")  # ends with the separator: a path per file is one concatenation
    try:
        for n, rel in enumerate(scan.markdown, start=1):
            path = root + rel  # a str: a Path per file shows in a no-op build of a big corpus
            stat = file_stat(path)
            rules = manifest_rules(rel, scan.manifests)
            checked = context + "\0" + trust.key(rel)  # the trust policy decides what a file's chunks are too
            # as git trusts its index: a settled file with its recorded stat is not read again
            trusted = previous.trusted_sha256(rel, stat) if previous else None
            key = file_key(rel, trusted, rules, checked) if trusted else ""
            hit = previous.match(rel, key, includes.project_root) if previous and trusted else None
            if hit is not None:
                data, digest, problem = None, trusted or "", None
            else:
                data, digest, problem = read_hashed(scan.root, rel)
                hashed += 1
                key = file_key(rel, digest, rules, checked)
                # the same bytes decoded before: a reused file is not decoded again
                hit = previous.match(rel, key, includes.project_root) if previous and data is not None else None
            text = None
            if hit is None and data is not None:
                text, problem = decode_text(data, rel)
            if problem:
                diags.append(problem)
                continue
            if hit is not None:
                count, file_diags, metadata, titles, included, flags = hit
                files.append(
                    FileRecord(
                        rel,
                        digest,
                        count,
                        key,
                        metadata,
                        file_diags,
                        titles,
                        reused=True,
                        stat=stat,
                        included=included,
                        flags=flags,
                    )
                )
            else:
                record = FileRecord(rel, digest, 0, key, stat=stat)
                files.append(record)
                waiting.append(record)
                take(parser.feed(ParseJob(rel, text or "", digest, rules)))
            reporter.progress("parsing", n, len(scan.markdown))
        take(parser.finish())
    finally:
        parser.close()
    for record in files:
        diags.extend(record.diagnostics)
    reused = sum(f.reused for f in files)
    diags.extend(check_taxonomy_limits([(f.relpath, f.metadata) for f in files]))
    prompts, prompt_diags = load_prompts(scan.root, scan.templates)
    diags.extend(prompt_diags)
    taxonomy, tax_diags = build_taxonomy((f.metadata for f in files if f.chunks), scan.manifests)
    diags.extend(tax_diags)
    instructions, instr_diags = server_instructions(scan.manifests)
    diags.extend(instr_diags)
    chunkset = ChunkSet(
        str(scan.root),
        files,
        taxonomy,
        instructions,
        prompts,
        sorted(set(diags)),
        reparsed=len(files) - reused,
        reused=reused,
        seconds=timer.seconds,
        workers=parser.used_workers,
        hashed=hashed,
        scanned_ns=scanned_ns,
    )
    if previous is not None:  # what a table update has to replace (indexing/table.py update_table)
        kept = {f.relpath for f in files if f.reused}
        chunkset.base_sha256 = previous.chunks_sha256
        chunkset.changed_files = sorted(set(previous.files) - kept | {f.relpath for f in files if not f.reused})
        chunkset.replaced_rows = sum(int(previous.files.get(p, {}).get("chunks", 0)) for p in chunkset.changed_files)
    chunkset._spill, chunkset._previous = spill, previous if reused else None
    if scan.framework is not None:
        chunkset.framework = scan.framework.shown(scan.root)
        for key in scan.framework.unreadable:  # the framework's config, not the docs: a note, not a warning
            chunkset.notes.append(
                f"{scan.framework.name} config {os.path.relpath(scan.framework.config, scan.root)}: '{key}' is not "
                f"a plain value (computed, or a template string) and was not read ({UNREAD.get(key, 'not used')}); "
                "docs-mcp reads configs as data and never runs them"
            )
        chunkset.site_name, chunkset.site_description = scan.framework.site_name, scan.framework.description
    if not chunkset.site_name:  # pages staged from a website name their site (og:site_name, <title>)
        chunkset.site_name = pages_site_name(scan.root, [f.relpath for f in files])
    if not chunkset.site_name:
        chunkset.site_name, readme_text = readme_summary(scan.root, files)
        chunkset.site_description = chunkset.site_description or readme_text
    if previous is not None and reused == len(files) and [f.relpath for f in files] == list(previous.files):
        chunkset.unchanged_sha256 = previous.chunks_sha256  # nothing parsed, nothing gone: its chunks.json as is
    return chunkset


def _duplicate_ids(chunks: Iterable[Chunk], seen: set[str]) -> list[Diagnostic]:
    diags = []
    for c in chunks:
        if c.chunk_id in seen:
            diags.append(
                error(
                    c.filepath,
                    1,
                    f"two chunks get the ID '{c.chunk_id}'; rename one of the headings",
                    "duplicate-chunk-id",
                )
            )
        seen.add(c.chunk_id)
    return diags


def chunk_corpus(
    docs_dir: Path,
    reporter: Reporter | None = None,
    *,
    reuse_from: Path | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    spill_dir: Path | None = None,
    trust_settings: CorpusTrust | None = None,
) -> ChunkSet:
    """The chunk step: validation errors stop the build; unchanged files reuse `reuse_from`'s chunks.

    Parsed chunks wait for the later steps in an unnamed file in `spill_dir` (default:
    `reuse_from`'s state folder, else the system's temporary folder).

    A corpus with no chunks is refused unless `allow_empty`: an empty index is almost always a
    wrong --docs-dir, and publishing it would silently replace a good one.
    """
    reporter = reporter or NullReporter()
    previous, why_not = load_previous(reuse_from)
    if why_not:
        reporter.info(f"re-parsing every file: {why_not}")
    if spill_dir is None and reuse_from is not None:
        spill_dir = OutputLayout(reuse_from).state
    chunkset = analyze_corpus(
        docs_dir, reporter, previous, workers=workers, spill_dir=spill_dir, trust_settings=trust_settings
    )
    if has_errors(chunkset.diagnostics):
        raise ValidationFailed(chunkset.diagnostics, str(docs_dir))
    if not chunkset.chunk_count and not allow_empty:
        found = (
            f"the trust scan quarantined every chunk ({sum(chunkset.quarantined.values())}); see `docs-mcp validate`"
            if chunkset.quarantined
            else f"its {counted_files(f.relpath for f in chunkset.files)} have no content"
            if chunkset.files
            else f"it has no Markdown files ({', '.join('*' + s for s in MARKDOWN_SUFFIXES)}, outside dot-folders "
            "and node_modules)"
        )
        raise DocsMcpError(
            f"nothing to index in {docs_dir}: {found}; check the docs folder, or pass --allow-empty "
            "(allow_empty: true in docs-mcp.yaml) to publish an empty index"
        )
    for d in chunkset.warnings:
        if d.code != "no-strategy":
            reporter.warn(d.located())
    defaults = sum(d.code == "no-strategy" for d in chunkset.warnings)
    if defaults:
        reporter.warn(
            f"{defaults} file(s) have no explicit chunking strategy; the default chunk_by: h2 applies "
            "(run `docs-mcp validate` for the list)"
        )
    if chunkset.quarantined:
        quarantined = chunkset.quarantined
        reporter.warn(quarantine_line(sum(quarantined.values()), len(quarantined), str(docs_dir)))
    if chunkset.framework:
        reporter.info(f"docs framework: {chunkset.framework}")
    for note in chunkset.notes:
        reporter.info(f"note: {note}")
    reporter.info(chunk_summary(chunkset))
    return chunkset


def chunk_summary(chunkset: ChunkSet) -> str:
    """The chunk step's line: the files parsed and those reused unchanged add up to all of them."""
    files, chunks = counted(len(chunkset.files), "file"), counted(chunkset.chunk_count, "chunk")
    workers = [f"{chunkset.workers} worker processes"] if chunkset.workers > 1 else []
    if not chunkset.reused:
        notes = f" ({workers[0]})" if workers else ""
        return f"parsed {files} into {chunks} in {chunkset.seconds:.1f}s{notes}"
    # the reused files not read were trusted by their recorded size and times
    reused = [f"{counted(chunkset.reused, 'unchanged file')} reused, {counted(chunkset.hashed, 'file')} read", *workers]
    return f"parsed {chunkset.reparsed} of {files} ({'; '.join(reused)}): {chunks} in {chunkset.seconds:.1f}s"
