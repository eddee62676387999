"""The cache audit: a DuckDB database with one row per build and one per chunk per build.

It answers "what did each build pay for, and why?" with plain SQL, in `docs-mcp audit`
or the duckdb CLI.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

from ..output.layout import OutputLayout

SCHEMA = """
CREATE TABLE IF NOT EXISTS builds (
    build_id VARCHAR PRIMARY KEY,
    corpus VARCHAR,
    finished_at TIMESTAMPTZ,
    source_commit VARCHAR,
    files INTEGER,
    files_reparsed INTEGER,
    chunks INTEGER,
    hits INTEGER,
    misses INTEGER,
    embedded INTEGER,
    pruned INTEGER,
    provider VARCHAR,
    model VARCHAR,
    table_version INTEGER,
    seconds DOUBLE
);
CREATE TABLE IF NOT EXISTS chunk_events (
    build_id VARCHAR,
    chunk_id VARCHAR,
    fingerprint VARCHAR,
    status VARCHAR  -- hit | miss | pruned
);
CREATE TABLE IF NOT EXISTS trust_findings (  -- the trust scan's findings in each build (docs/trust.md)
    build_id VARCHAR,
    filepath VARCHAR,
    line INTEGER,         -- in the file
    chunk_id VARCHAR,
    rule VARCHAR,
    severity VARCHAR,     -- error | warning
    status VARCHAR,       -- quarantined (not served) | warning (served, visible text only) | allowed
    found_in VARCHAR,     -- text | HTML comment | hidden element | image alt text | link title | link target | characters
    excerpt VARCHAR,
    allowed_by VARCHAR    -- the manifest and reason of the allow entry, for allowed
);
CREATE TABLE IF NOT EXISTS page_events (  -- website corpora: what each build's crawl did per page
    build_id VARCHAR,
    path VARCHAR,         -- the staged file
    url VARCHAR,
    event VARCHAR,        -- added | changed | not_modified | unchanged | removed | kept | failed | skipped
    http_status INTEGER,  -- 0 when no answer (network error, no longer discovered)
    detail VARCHAR
);
"""

# Columns added after the first release, appended so older audit files migrate in place.
MIGRATIONS = (
    "ALTER TABLE builds ADD COLUMN IF NOT EXISTS backend VARCHAR",  # onnx | torch for the local provider
    "ALTER TABLE builds ADD COLUMN IF NOT EXISTS model_sha256 VARCHAR",  # what made the vectors, as in metadata.json
    "ALTER TABLE builds ADD COLUMN IF NOT EXISTS config_fingerprint VARCHAR",  # as in the embedding cache
    "ALTER TABLE builds ADD COLUMN IF NOT EXISTS quarantined INTEGER",  # chunks the trust scan kept from serving
)
BUILD_COLUMNS = (
    "build_id",
    "corpus",
    "finished_at",
    "source_commit",
    "files",
    "files_reparsed",
    "chunks",
    "hits",
    "misses",
    "embedded",
    "pruned",
    "provider",
    "model",
    "table_version",
    "seconds",
    "backend",
    "model_sha256",
    "config_fingerprint",
    "quarantined",
)


def migrate(con: Any) -> None:
    """Create the tables, and add the columns an audit file from an older docs-mcp lacks."""
    con.execute(SCHEMA)
    for statement in MIGRATIONS:
        con.execute(statement)


PENDING_FOLD_BYTES = 64 * 1024  # a deferred build moves the pending rows into the database beyond this


def new_build_id() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ-") + uuid.uuid4().hex[:8]


def record_build(
    out: Path,
    *,
    build_id: str,
    corpus: str,
    source_commit: str | None,
    chunkset: Any,  # build.ChunkSet
    fingerprints: list[str],
    embedded: Any,  # embedding_cache.EmbedResult
    provider: Any,
    table_version: int,
    seconds: float,
    pages: list[dict[str, Any]] | None = None,
    defer: bool = False,
) -> None:
    """Append this build's summary, per-chunk events and (website corpora) per-page crawl events;
    history from earlier builds stays.

    With `defer`, a build with no chunk or page events (a text-only or unchanged build) appends
    its row to the pending file (OutputLayout.audit_pending) instead of loading DuckDB, once the
    database exists; the next build that writes the database (or the one that finds more than
    PENDING_FOLD_BYTES pending) moves the pending rows in first, and `query` reads them meanwhile.
    """
    stats = embedded.stats
    described = provider.describe() or {}
    events = embedded.fingerprint_events
    rows = (
        [(cid, fp, events.get(fp)) for cid, fp in zip(embedded.chunk_ids, fingerprints) if events.get(fp)]
        if events
        else []
    )
    rows += [(cid, fp, "pruned") for fp, cid in embedded.pruned]
    build = [
        build_id,
        corpus,
        dt.datetime.now(dt.UTC),
        source_commit,
        len(chunkset.files),
        chunkset.reparsed,
        chunkset.chunk_count,
        stats.hits,
        stats.misses,
        stats.embedded,
        stats.pruned,
        provider.name,
        provider.model,
        table_version,
        round(seconds, 3),
        described.get("backend"),
        described.get("model_sha256"),
        provider.config_fingerprint,
        sum(chunkset.quarantined.values()),
    ]
    findings = [
        (build_id, path, f.line, f.chunk_id, f.rule, f.severity, f.status, f.where, f.excerpt, f.allowed_by)
        for path, f in chunkset.flags()
    ]
    layout = OutputLayout(out)
    layout.state.mkdir(parents=True, exist_ok=True)
    if defer and not rows and not pages and not findings and layout.audit.is_file():
        line = json.dumps(dict(zip(BUILD_COLUMNS, build)), default=str) + "\n"
        with open(layout.audit_pending, "a", encoding="utf-8") as fh:  # one append per build, under its lock
            fh.write(line)
        if layout.audit_pending.stat().st_size <= PENDING_FOLD_BYTES:
            return
        build = []  # too many pending rows: move them in now
    import duckdb

    with duckdb.connect(str(layout.audit)) as con:
        migrate(con)
        con.execute("BEGIN TRANSACTION")
        _insert_builds(con, "builds", pending_builds(out), ignore_existing=True)
        if build:
            _insert_builds(con, "builds", [build])
        if rows:  # three lists unnested side by side: half the time of an Arrow table, and no pyarrow import
            con.execute(
                "INSERT INTO chunk_events SELECT $1, unnest($2::VARCHAR[]), unnest($3::VARCHAR[]), "
                "unnest($4::VARCHAR[])",
                [build_id, *(list(column) for column in zip(*rows))],
            )
        if findings:
            con.executemany("INSERT INTO trust_findings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", findings)
        if pages:
            con.executemany(
                "INSERT INTO page_events VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (build_id, p.get("path"), p.get("url"), p.get("event"), p.get("status") or 0, p.get("detail") or "")
                    for p in pages
                ],
            )
        con.execute("COMMIT")
    layout.audit_pending.unlink(missing_ok=True)  # moved in (a crash before this only re-offers rows already in)


def pending_builds(out: Path) -> list[list[Any]]:
    """The deferred build rows, oldest first, as BUILD_COLUMNS values (a torn last line is skipped)."""
    try:
        text = OutputLayout(out).audit_pending.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("build_id"):
            values = [row.get(c) for c in BUILD_COLUMNS]
            values[2] = dt.datetime.fromisoformat(values[2]) if isinstance(values[2], str) else None
            found.append(values)
    return found


def _insert_builds(con: Any, table: str, builds: list[list[Any]], *, ignore_existing: bool = False) -> None:
    if builds:
        verb = "INSERT OR IGNORE" if ignore_existing else "INSERT"
        con.executemany(
            f"{verb} INTO {table} ({', '.join(BUILD_COLUMNS)}) VALUES ({', '.join('?' * len(BUILD_COLUMNS))})", builds
        )


# Audit SQL may read the audit database and nothing else: no COPY ... TO, no ATTACH, no file
# functions, no extensions, no spilling to a temp folder, and no SET that would undo this.
READ_ONLY_CONFIG: dict[str, str | bool] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "temp_directory": "",
    "lock_configuration": True,
}


def query(out: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run SQL against the audit database, which it can read and nothing else (see READ_ONLY_CONFIG)."""
    import duckdb

    from ..errors import DocsMcpError
    from ..output.metadata import require_metadata

    require_metadata(out)  # a reading command: a folder that is not an index gets the build command, nothing else
    path = OutputLayout(out).audit
    if not path.is_file():
        raise DocsMcpError(
            f"no audit database at {path}; it is written by every `docs-mcp build --index {out}` "
            "since audits were added: build the index again"
        )
    try:
        with duckdb.connect(str(path), read_only=True, config=dict(READ_ONLY_CONFIG)) as con:
            pending = pending_builds(out)
            reading = all(st.type == duckdb.StatementType.SELECT for st in con.extract_statements(sql))
            if pending and reading:  # builds recorded without DuckDB: `builds` shows them too (a temporary view)
                con.execute("CREATE TEMP TABLE pending_builds AS SELECT * FROM builds WHERE false")
                _insert_builds(con, "temp.main.pending_builds", pending)
                row = con.execute("SELECT current_database()").fetchone()
                assert row is not None  # a SELECT without FROM returns one row
                catalog = row[0]
                con.execute(
                    f'CREATE TEMP VIEW builds AS SELECT * FROM "{catalog}".main.builds UNION ALL BY NAME '
                    "SELECT * FROM temp.main.pending_builds WHERE build_id NOT IN "
                    f'(SELECT build_id FROM "{catalog}".main.builds)'
                )
            cursor = con.execute(sql)
            columns = [d[0] for d in cursor.description or []]
            return columns, cursor.fetchall()
    except duckdb.PermissionException:
        raise DocsMcpError(
            "audit SQL can only read the audit tables (builds, chunk_events, page_events, trust_findings): files, COPY ... TO, "
            "ATTACH and extensions are disabled"
        ) from None
    except duckdb.Error as exc:
        raise DocsMcpError(f"audit query failed: {str(exc).splitlines()[0]}") from None


def last_build_summary(out: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    return query(out, "SELECT * FROM builds ORDER BY finished_at DESC LIMIT 1")


def format_table(columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    cells = [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    body = ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "\n".join(
        [line, "  ".join("-" * w for w in widths), *body, f"({len(rows)} row{'s' if len(rows) != 1 else ''})"]
    )
