"""Every path under an output folder, named in one place.

The published part (what a server reads) is `metadata.json`, `chunks.json` and `.lancedb/`;
`.embedding-cache/` and `.docs-mcp/` hold what the next build reuses. No other module joins
these names onto an output folder: it asks an `OutputLayout`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

METADATA = "metadata.json"
CHUNKS = "chunks.json"
LANCEDB = ".lancedb"
EMBEDDING_CACHE = ".embedding-cache"
STATE = ".docs-mcp"
BUILD_LOCK = "build.lock"
FILE_STATE = "files.json"
WRITTEN = "written.json"
WRITING_MARKER = "index-writing"
TABLE_FILES = "table-files.json"
STAGED_LISTING = "staged-files.json"
PAGE_STATE = "pages.json"
VERSIONS_MANIFEST = "versions.json"
VERSIONS = "versions"


@dataclass(frozen=True)
class OutputLayout:
    """The files and folders of one index folder (`--index`), published and private."""

    root: Path

    def __init__(self, out: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "root", Path(out))

    # Published: what `docs-mcp serve` reads.
    @property
    def metadata(self) -> Path:
        """The publish marker: the server reloads when it changes."""
        return self.root / METADATA

    @property
    def chunks(self) -> Path:
        return self.root / CHUNKS

    @property
    def lancedb(self) -> Path:
        return self.root / LANCEDB

    def table(self, name: str) -> Path:
        return self.lancedb / f"{name}.lance"

    # Kept for the next build.
    @property
    def embedding_cache(self) -> Path:
        """The default cache folder (`--cache-dir` may put it elsewhere)."""
        return self.root / EMBEDDING_CACHE

    @property
    def state(self) -> Path:
        return self.root / STATE

    @property
    def build_lock(self) -> Path:
        return self.state / BUILD_LOCK

    @property
    def build_lease(self) -> Path:
        """The Dagster run that last held the lock (multiprocess executor)."""
        return self.state / "build-run.json"

    @property
    def file_state(self) -> Path:
        """The build state: what each staged file was chunked from (output/build_state.py)."""
        return self.state / FILE_STATE

    @property
    def pending(self) -> Path:
        """chunks.json and the file state of a build not yet published."""
        return self.state / "pending"

    @property
    def pending_chunks(self) -> Path:
        return self.pending / CHUNKS

    @property
    def pending_file_state(self) -> Path:
        return self.pending / FILE_STATE

    @property
    def written(self) -> Path:
        """The table version a build wrote, before it is published."""
        return self.state / WRITTEN

    @property
    def writing_marker(self) -> Path:
        """Present while a table write is in progress: a crash leaves it behind."""
        return self.state / WRITING_MARKER

    @property
    def table_files(self) -> Path:
        """The files each kept table version was written with (Lance names them randomly, so they
        live here rather than in metadata.json, which stays the same for the same corpus)."""
        return self.state / TABLE_FILES

    @property
    def remote_base(self) -> Path:
        """With an s3:// out: the ETag of the published metadata.json this mirror was last brought up
        to date with, which the publish's conditional write requires to be still in place."""
        return self.state / "remote-base.json"

    @property
    def audit(self) -> Path:
        return self.state / "audit.duckdb"

    @property
    def audit_pending(self) -> Path:
        """Build rows not yet moved into audit.duckdb (JSON lines), so a build with no chunk or page
        events need not load DuckDB; `docs-mcp audit` reads them with the database."""
        return self.state / "audit-pending.jsonl"

    @property
    def cursor_secret(self) -> Path:
        return self.state / "cursor-secret"

    @property
    def staged(self) -> Path:
        """Where a pipeline stages the corpus's source files before chunking."""
        return self.state / "staged" / "docs"

    # A versioned corpus: one complete output per version under one corpus folder, one embedding cache.
    @property
    def versions_manifest(self) -> Path:
        """The published versions of a versioned corpus (output/versions_manifest.py); written last."""
        return self.root / VERSIONS_MANIFEST

    def version(self, label: str) -> Path:
        """The output folder of one version: laid out as an unversioned output."""
        return self.root / VERSIONS / label

    def version_staged(self, label: str) -> Path:
        """Where one version's source files are staged (its own listing and page state beside them)."""
        return self.state / "staged" / label / "docs"

    @property
    def mirror(self) -> Path:
        """The bare git mirror every version of a git corpus is staged from."""
        return self.state / "mirror.git"


def staged_listing(staged: str | os.PathLike[str]) -> Path:
    """The listing a staging step writes beside the folder it fills (OUT/.docs-mcp/staged/ for a pipeline)."""
    return Path(staged).parent / STAGED_LISTING


def page_state(staged: str | os.PathLike[str]) -> Path:
    """A website's per-page fetch state (URL, ETag, Last-Modified, hashes), beside the folder of staged pages."""
    return Path(staged).parent / PAGE_STATE
