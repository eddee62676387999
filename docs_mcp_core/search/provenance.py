"""Where a served index's answers come from and how fresh they are: the commit (git), the page and its
Last-Modified/ETag (a website), when the docs last changed and when they were indexed. One line per
corpus and version heads an answer; the fields per hit go into the structured content.

Read from what the build recorded: metadata.json (`indexed_at`, `source_commit`), versions.json for a
version of a versioned corpus (its ref, commit or URL and `source_date`), and a website's page fetch
state (`pages.json`, beside the staged pages) for each page's validators.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..fsutil import read_json
from ..output.freshness import freshness
from ..output.layout import OutputLayout, page_state
from ..output.versions_manifest import read_manifest
from .published import PublishedIndex
from .served import Corpus


@dataclass(frozen=True)
class Provenance:
    corpus: str
    version: str | None
    indexed_at: str | None
    source_commit: str | None = None
    source_url: str | None = None  # a website version's URL
    source_date: str | None = None  # when the docs last changed (versions.json, or the newest page)
    pages: dict[str, dict[str, str]] = field(default_factory=dict)  # filepath -> last_modified, etag

    @property
    def name(self) -> str:
        """`corpus version`, or the corpus alone: what the answer's header keys its line by."""
        return f"{self.corpus} {self.version}" if self.version else self.corpus

    def line(self) -> str:
        """One line: where the docs come from and when they were indexed."""
        parts = []
        if self.source_commit:
            parts.append(f"commit {self.source_commit[:12]}")
        if self.source_url:
            parts.append(self.source_url)
        if self.source_date:
            parts.append(f"docs as of {self.source_date[:10]}")
        parts.append(f"indexed {self.indexed_at or 'at an unrecorded time'}")
        return ", ".join(parts)

    def hit(self, filepath: str) -> dict[str, Any]:
        """The fields one hit (or one get_doc answer) carries in the structured content."""
        fields: dict[str, Any] = {"corpus": self.corpus}
        if self.version:
            fields["version"] = self.version
        if self.source_commit:
            fields["source_commit"] = self.source_commit
        page = self.pages.get(filepath)
        if page:
            fields.update(page)
        elif self.source_date:
            fields["source_date"] = self.source_date
        fields["indexed_at"] = self.indexed_at
        return fields

    def stale_note(self, max_age: dt.timedelta | None) -> str | None:
        """One line when the index is older than `max_age` (checked now, not when it was opened)."""
        return freshness(self.indexed_at, max_age).note(self.name) if max_age else None


def _date(http_date: str) -> str | None:
    try:
        moment = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _pages(staged: Path) -> dict[str, dict[str, str]]:
    """filepath -> the page's Last-Modified (as UTC ISO 8601) and ETag, from a website build's fetch state."""
    try:
        state = read_json(page_state(staged)) or {}
    except (OSError, ValueError):
        return {}
    pages: dict[str, dict[str, str]] = {}
    for rel, page in (state.get("pages") or {}).items() if isinstance(state, dict) else ():
        if not isinstance(page, dict):
            continue
        found = {}
        if isinstance(page.get("last_modified"), str) and (date := _date(page["last_modified"])):
            found["last_modified"] = date
        if isinstance(page.get("etag"), str):
            found["etag"] = page["etag"]
        if found:
            pages[str(rel)] = found
    return pages


def provenance(corpus: Corpus, index: PublishedIndex) -> Provenance:
    """What the build recorded of where `index` (served as `corpus`) came from and when."""
    stats = index.metadata.stats
    commit, url, date = stats.source_commit, None, None
    pages: dict[str, dict[str, str]] = {}
    if isinstance(index.out, Path) or (isinstance(index.out, str) and "://" not in index.out):
        out = Path(index.out)
        web = any(info.source_url for info in index.info.values())
        if corpus.version is not None:
            try:
                manifest = read_manifest(out.parent.parent) or {}
            except DocsMcpError:  # being rewritten, or damaged: the answer goes on without its dates
                manifest = {}
            entry: dict[str, Any] = next(
                (v for v in manifest.get("versions", []) if v.get("label") == corpus.version), {}
            )
            commit, url, date = entry.get("source_commit") or commit, entry.get("source_url"), entry.get("source_date")
            staged = OutputLayout(out.parent.parent).version_staged(corpus.version)
        else:
            staged = OutputLayout(out).staged
        if web:
            pages = _pages(staged)
            dates = [p["last_modified"] for p in pages.values() if "last_modified" in p]
            date = date or (max(dates) if dates else None)
    return Provenance(corpus.name, corpus.version, stats.indexed_at, commit, url, date, pages)
