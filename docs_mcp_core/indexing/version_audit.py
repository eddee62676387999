"""What each version of a versioned corpus reused from which: one DuckDB query over every version's audit.

Each version keeps its own audit (`OUT/versions/LABEL/.docs-mcp/audit.duckdb`), whose chunk events say,
per passage fingerprint, whether a build found its vector in the shared cache (hit) or embedded it
(miss). The version that paid for a vector is the one whose audit has the earliest miss of its
fingerprint, so attaching every version's audit to one connection says, for each version's last build,
what it embedded itself and whose vectors it reused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..output.layout import OutputLayout
from ..output.versions_manifest import manifest_entries


@dataclass(frozen=True)
class VersionReuse:
    """One version's last build with audited vectors: distinct passage fingerprints (`vectors`), those it
    embedded, and those it reused, by the version that first paid for them."""

    label: str
    build_id: str
    vectors: int
    embedded: int
    reused_from: dict[str, int] = field(default_factory=dict)  # another version's label -> vectors
    from_earlier_builds: int = 0  # paid for by an earlier build of this version
    unrecorded: int = 0  # in the cache before any listed version's audit recorded paying for it

    @property
    def reused(self) -> int:
        return sum(self.reused_from.values()) + self.from_earlier_builds + self.unrecorded


def version_reuse(out: Path) -> list[VersionReuse]:
    """Per published version of the versioned output `out` (oldest first), what its last build embedded
    and reused from which version. Versions without an audit (text-only, or not built yet) are left out."""
    import duckdb

    labels = [e["label"] for e in reversed(manifest_entries(out))]  # versions.json lists newest first
    audits = [(label, OutputLayout(OutputLayout(out).version(label)).audit) for label in labels]
    audits = [(label, path) for label, path in audits if path.is_file()]
    if not audits:
        return []
    try:
        with duckdb.connect(":memory:") as con:
            for i, (_, path) in enumerate(audits):
                con.execute(f"ATTACH {_literal(str(path))} AS v{i} (READ_ONLY)")
            union = " UNION ALL ".join(
                f"SELECT {_literal(label)} AS version, e.fingerprint, e.status, b.finished_at, e.build_id "
                f"FROM v{i}.chunk_events e JOIN v{i}.builds b USING (build_id) WHERE e.status IN ('hit', 'miss')"
                for i, (label, _) in enumerate(audits)
            )
            rows = con.execute(
                f"""
                WITH events AS ({union}),
                last AS (SELECT version, arg_max(build_id, finished_at) AS build_id FROM events GROUP BY version),
                current AS (
                    SELECT DISTINCT e.version, e.build_id, e.fingerprint, e.status
                    FROM events e JOIN last USING (version, build_id)
                ),
                payer AS (
                    SELECT fingerprint, arg_min(version, finished_at) AS paid_by
                    FROM events WHERE status = 'miss' GROUP BY fingerprint
                )
                SELECT c.version, c.build_id, c.status, p.paid_by, count(*)
                FROM current c LEFT JOIN payer p USING (fingerprint)
                GROUP BY ALL ORDER BY ALL
                """
            ).fetchall()
    except duckdb.IOException as exc:
        raise DocsMcpError(
            f"cannot read the audits of {out} ({str(exc).splitlines()[0]}); a build may be writing one: try again"
        ) from None
    return _per_version(rows, [label for label, _ in audits])


def _per_version(rows: list[tuple[Any, ...]], order: list[str]) -> list[VersionReuse]:
    found: dict[str, dict[str, Any]] = {}
    for version, build_id, status, paid_by, count in rows:
        row = found.setdefault(
            version,
            {"build_id": build_id, "embedded": 0, "reused_from": {}, "from_earlier_builds": 0, "unrecorded": 0},
        )
        if status == "miss":
            row["embedded"] += count
        elif paid_by is None:
            row["unrecorded"] += count
        elif paid_by == version:
            row["from_earlier_builds"] += count
        else:
            row["reused_from"][paid_by] = row["reused_from"].get(paid_by, 0) + count
    result = []
    for label in order:
        if label in found:
            row = found[label]
            row["reused_from"] = {k: row["reused_from"][k] for k in order if k in row["reused_from"]}
            vectors = (
                row["embedded"] + sum(row["reused_from"].values()) + row["from_earlier_builds"] + row["unrecorded"]
            )
            result.append(VersionReuse(label=label, vectors=vectors, **row))
    return result


def reuse_table(reuse: list[VersionReuse]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The joined view as a table: one row per version, a `from LABEL` column per version paid from."""
    payers = [r.label for r in reuse if any(r.label in other.reused_from for other in reuse)]
    extra = {
        "from earlier builds": [r.from_earlier_builds for r in reuse],
        "unrecorded": [r.unrecorded for r in reuse],
    }
    extra = {name: values for name, values in extra.items() if any(values)}
    columns = ["version", "vectors", "embedded", "reused", *(f"from {p}" for p in payers), *extra]
    rows = [
        (
            r.label,
            r.vectors,
            r.embedded,
            r.reused,
            *(r.reused_from.get(p, 0) for p in payers),
            *(values[i] for values in extra.values()),
        )
        for i, r in enumerate(reuse)
    ]
    return columns, rows


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
