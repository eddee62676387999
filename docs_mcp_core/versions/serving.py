"""Which version of a versioned corpus output a server answers from: the one a project's lockfile pins
(by the pinning rule), else the corpus's default; and the one line that says so when they differ."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..output.freshness import age_fields
from ..output.layout import OutputLayout
from ..output.versions_manifest import read_manifest


@dataclass
class ServedVersion:
    index: Path  # the index folder to serve: the version's, or the output itself when it is not versioned
    label: str | None = None  # None: an unversioned output
    labels: list[str] = field(default_factory=list)  # every published version, newest first
    notes: list[str] = field(default_factory=list)  # one line each: lockfiles not read, locked X served Y
    corpus: str | None = None  # the corpus name versions.json records
    notice: str | None = None  # the pinning rule's notice: the locked version is not the one served


def served_version(out: Path, project: Path | None = None, label: str | None = None) -> ServedVersion:
    """The version of `out` to serve: `label` if given, else the one `project` locks (when versions.json names
    the corpus's package), else the default. An output that is not versioned is served as it is."""
    out = Path(out)
    manifest = read_manifest(out)
    if manifest is None:
        if label is not None:
            raise DocsMcpError(f"{out} is not a versioned corpus output (no versions.json); drop the version")
        return ServedVersion(out)
    labels = [v["label"] for v in manifest["versions"]]
    if not labels:
        raise DocsMcpError(f"{OutputLayout(out).versions_manifest} lists no version; build one first")
    notes: list[str] = []
    notice = None
    if label is not None:
        if label not in labels:
            raise DocsMcpError(f"{out} has no version {label!r}; it has: {', '.join(labels)}")
        chosen = label
    else:
        chosen = manifest.get("default") or labels[0]
        package = manifest.get("package")
        if project is not None and package:
            from .lockfiles import find_locked  # lockfile readers (yaml, packaging): a versioned corpus's only
            from .pinning import pin_version

            lookup = find_locked(Path(project), package["name"], package["ecosystem"])
            notes += lookup.notes
            locked = lookup.locked.version if lookup.locked else None
            pin = pin_version(package["name"], locked, labels, manifest.get("default"))
            chosen = pin.label or chosen
            if pin.notice:
                notes.append(pin.notice)
                notice = pin.notice
    return ServedVersion(OutputLayout(out).version(chosen), chosen, labels, notes, manifest.get("corpus"), notice)


def corpus_output(index: Path) -> Path:
    """The corpus output a served version folder belongs to (OUT/versions/LABEL → OUT), else `index` itself."""
    index = Path(index)
    root = index.parent.parent
    if index.parent.name == "versions" and OutputLayout(root).versions_manifest.is_file():
        return root
    return index


def corpus_record(
    name: str, index: Path | str, description: str, stats: dict[str, Any], max_age: dt.timedelta | None = None
) -> dict[str, Any]:
    """What the corpora resource says of one served corpus: where its answers come from and how fresh
    they are (with `max_age`: its age and whether it is older); for a version of a versioned output, which
    version and which others are indexed."""
    record: dict[str, Any] = {"name": name, "description": description, **stats}
    if max_age is not None:
        record.update(_age(stats.get("indexed_at"), max_age))
    if isinstance(index, str):
        return record
    out = corpus_output(Path(index))
    manifest = read_manifest(out) if out != Path(index) else None
    if manifest is not None:
        record["version"] = Path(index).name
        record["default_version"] = manifest.get("default")
        record["versions"] = [
            {k: v.get(k) for k in ("label", "ref", "source_commit", "source_url", "source_date", "indexed_at")}
            | (_age(v.get("indexed_at"), max_age) if max_age is not None else {})
            for v in manifest["versions"]
        ]
    return record


def _age(indexed_at: str | None, max_age: dt.timedelta) -> dict[str, Any]:
    return age_fields(indexed_at, max_age)


def indexed_labels(index: Path | str) -> list[str]:
    """Every indexed version of the versioned corpus output `index` is one version of (newest first); none
    for an index that is not such a version."""
    if isinstance(index, str):
        return []
    out = corpus_output(Path(index))
    manifest = read_manifest(out) if out != Path(index) else None
    return [v["label"] for v in manifest["versions"]] if manifest else []


def changes_between(index: Path, old: str, new: str, query: str | None = None, *, served: str | None = None) -> str:
    """What changed from version `old` to `new` of the corpus `index` is a version of, as `docs-mcp diff`
    prints it; a section of the served version can be read with get_doc, the others are shown in full."""
    from .changes import what_changed
    from .published import read_chunks
    from .report import to_text

    out = corpus_output(Path(index))
    old_dir, new_dir = (served_version(out, label=label).index for label in (old, new))
    found = what_changed(read_chunks(old_dir), read_chunks(new_dir), query)
    read_more = (
        'get_doc {{"chunk_id": "{chunk_id}"}}' if new == served else f"docs-mcp get --index {new_dir} {{chunk_id}}"
    )
    return to_text(found, old, new, read_more=read_more)


def version_note(served: list[tuple[str, Path | str]]) -> str:
    """One sentence for the search tool's description naming the version each versioned corpus is served
    at, when its docs last changed, and the other indexed versions; empty when none is versioned."""
    parts = []
    for name, index in served:
        if isinstance(index, str):
            continue
        out = corpus_output(Path(index))
        manifest = read_manifest(out) if out != Path(index) else None
        if manifest is None:
            continue
        label = Path(index).name
        entry: dict[str, Any] = next((v for v in manifest["versions"] if v["label"] == label), {})
        date = f", docs as of {entry['source_date'][:10]}" if entry.get("source_date") else ""
        others = [v["label"] for v in manifest["versions"] if v["label"] != label]
        also = f"; also indexed: {', '.join(others)} (what_changed compares them)" if others else ""
        parts.append(f"{name} {label}{date}{also}")
    return f" Version served: {'; '.join(parts)}." if parts else ""
