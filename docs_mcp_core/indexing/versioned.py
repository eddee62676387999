"""Building one version of a versioned corpus: today's build into `OUT/versions/<label>`, one shared
embedding cache, then versions.json; and removing the versions that left the config.

Every version of a corpus embeds into `OUT/.embedding-cache`. The cache's fingerprint carries no path
or version, so the same text in two versions is one entry already; what sharing needs is that pruning
after one version's build keeps what the other published versions use (read from their build state,
which records each chunk's passage fingerprints). The corpus-level build lock (`OUT/.docs-mcp/build.lock`)
is held for the whole build, so versions of one corpus build one after another.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ..embedding import EmbeddingProvider, makes_vectors
from ..embedding.fingerprint import passages_key
from ..output.build_state import read_state
from ..output.layout import OutputLayout
from ..output.lock import build_lock
from ..output.metadata import PublishedMetadata
from ..output.versions_manifest import manifest_entries, read_manifest, write_manifest
from ..progress import NullReporter, Reporter
from ..versions.ordering import default_label, parse_version, serving_order
from ..versions.spec import check_label
from .build import BuildSummary, build


def version_fingerprints(version_out: Path, key: str) -> set[str]:
    """The passage fingerprints a published version's chunks use (its build state records them), when
    they were made under the passages key `key` (the same embedding config); else none."""
    state = read_state(OutputLayout(version_out).file_state)
    if not state or state.get("passages_key") != key:
        return set()
    found: set[str] = set()
    for record in (state.get("files") or {}).values():
        for chunk in record.get("passages") or []:
            found.update(chunk[1:])
    return found


def other_versions_vectors(out: Path, label: str, provider: EmbeddingProvider) -> set[str]:
    """What every published version but `label` uses from the shared cache: the cache keeps the union."""
    if not makes_vectors(provider):
        return set()
    key = passages_key(provider.config_fingerprint)
    layout = OutputLayout(out)
    found: set[str] = set()
    for entry in manifest_entries(out):
        if entry.get("label") != label:
            found |= version_fingerprints(layout.version(entry["label"]), key)
    return found


def build_version(
    docs_dir: Path,
    out: Path,
    label: str,
    provider: EmbeddingProvider,
    *,
    ref: str | None = None,
    source_url: str | None = None,
    source_date: str | None = None,
    configured_default: str | None = None,
    package: dict[str, str] | None = None,
    reporter: Reporter | None = None,
    **options: Any,
) -> BuildSummary:
    """Build version `label` of the corpus whose output is `out`, then list it in versions.json.

    `options` are `build`'s (corpus, source_commit, description, force, …); `cache_dir` (default
    OUT/.embedding-cache) is shared by every version of the corpus.
    """
    check_label(label, "version label")
    out = Path(out)
    layout = OutputLayout(out)
    reporter = reporter or NullReporter()
    with build_lock(out):
        keep = other_versions_vectors(out, label, provider)
        summary = build(
            docs_dir,
            layout.version(label),
            provider,
            cache_dir=options.pop("cache_dir", None) or layout.embedding_cache,
            keep_vectors=keep,
            reporter=reporter,
            **options,
        )
        if summary.embedded.shared:
            reporter.info(
                f"version {label}: {summary.embedded.shared} cached vector(s) shared with other versions of the corpus"
            )
        list_version(
            out,
            label,
            summary.metadata,
            corpus=options.get("corpus") or out.resolve().name,
            ref=ref,
            source_url=source_url,
            source_date=source_date,
            configured_default=configured_default,
            package=package,
        )
    return summary


def list_version(
    out: Path,
    label: str,
    metadata: PublishedMetadata,
    *,
    corpus: str,
    ref: str | None = None,
    source_url: str | None = None,
    source_date: str | None = None,
    configured_default: str | None = None,
    package: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Add (or update) version `label`, just published, in versions.json: the server's reload marker."""
    stats = metadata.stats
    parsed = parse_version(label)
    entry = {
        "label": label,
        "version": str(parsed) if parsed is not None else None,
        "path": OutputLayout(out).version(label).relative_to(out).as_posix(),
        "ref": ref,
        "source_commit": stats.source_commit,
        "source_url": source_url,
        "source_date": source_date,
        "indexed_at": stats.indexed_at,
        "chunks": stats.total_chunks,
    }
    entries = [e for e in manifest_entries(out) if e.get("label") != label] + [entry]
    return publish_manifest(out, corpus, entries, configured_default, package)


def publish_manifest(
    out: Path,
    corpus: str,
    entries: list[dict[str, Any]],
    configured_default: str | None = None,
    package: dict[str, str] | None = None,
) -> dict[str, Any]:
    """versions.json with `entries` newest first and the default (the configured one if built, else the newest)."""
    by_label = {e["label"]: e for e in entries}
    order = serving_order(by_label)
    if configured_default is None:  # a later single-version build keeps the default the config set
        configured_default = (read_manifest(out) or {}).get("configured_default")
    default = default_label(order, configured_default)
    return write_manifest(out, corpus, [by_label[label] for label in order], default, package, configured_default)


def remove_versions(out: Path, labels: set[str], reporter: Reporter | None = None) -> list[str]:
    """Take `labels` out of versions.json, then delete their folders (a server reads only listed versions).

    Their vectors leave the shared cache at the next version's build (its pruning keeps only what the
    listed versions use). Returns the labels removed.
    """
    out = Path(out)
    layout = OutputLayout(out)
    with build_lock(out):
        manifest = read_manifest(out)
        if manifest is None:
            return []
        listed = [e["label"] for e in manifest["versions"]]
        gone = [label for label in listed if label in labels]
        if not gone:
            return []
        kept = [e for e in manifest["versions"] if e["label"] not in labels]
        publish_manifest(out, manifest.get("corpus") or out.resolve().name, kept, None, manifest.get("package"))
        for label in gone:
            shutil.rmtree(layout.version(label), ignore_errors=True)
            shutil.rmtree(layout.version_staged(label).parent, ignore_errors=True)
            (reporter or NullReporter()).info(f"version {label} removed from {out} (no longer in the config)")
    return gone
