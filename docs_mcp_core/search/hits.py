"""What search_docs returns: a page of hits, and its JSON shapes typed (one hit, the zero-result hint,
the trim note)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict


class SearchHit(TypedDict):
    """One search_docs hit, as JSON: what an agent decides from before it calls get_doc."""

    chunk_id: str  # `corpus:` first when several corpora are served
    corpus: NotRequired[str]  # only when several corpora are served
    version: NotRequired[str]  # only for a version of a versioned corpus: its label
    score: float
    heading: str
    breadcrumb: str
    snippet: str
    filepath: str
    metadata: dict[str, str]
    chars: int  # size of the chunk's Markdown, what get_doc returns for it
    source_url: NotRequired[str]  # website corpora: the page (and heading anchor) to cite


class ZeroResultHint(TypedDict):
    """Why a first page is empty, and which filter values would have matched."""

    message: str
    suggested_filters: dict[str, list[str]]


class TrimNote(TypedDict):
    """Hits left out of a page to fit max_chars; next_cursor continues at the first of them."""

    dropped_hits: int
    message: str


@dataclass
class SearchPage:
    """One page of a search: its hits, the cursor to the next page, and what the answer says about itself."""

    hits: list[SearchHit]
    next_cursor: str | None
    hint: ZeroResultHint | None = None
    mode: str = "text"  # "hybrid" when a query vector took part
    trimmed: TrimNote | None = None  # hits left out to fit max_chars, and how to get them
    modes: dict[str, str] | None = None  # each corpus's mode, when several are served
    unavailable: dict[str, str] | None = None  # corpora the search covers that cannot be read now, and why
    notes: list[str] | None = None  # one line each, read first: a locked version not served, a stale index
    sources: dict[str, str] | None = None  # `corpus version` -> where its docs come from, when indexed
    hit_sources: list[str] | None = None  # the `sources` key of each hit (kept hits are a prefix)
    provenance: list[dict[str, Any]] | None = None  # each hit's provenance fields (structured content)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"notes": self.notes} if self.notes else {}
        if self.sources and self.hit_sources:
            shown = dict.fromkeys(self.hit_sources[: len(self.hits)])
            out["sources"] = {key: self.sources[key] for key in shown}
        out.update({"hits": self.hits, "next_cursor": self.next_cursor, "hint": self.hint, "mode": self.mode})
        if self.modes:
            out["modes"] = self.modes
        if self.unavailable:
            out["unavailable"] = self.unavailable
        if self.trimmed:
            out["trimmed"] = self.trimmed
        return out

    def structured(self) -> dict[str, Any]:
        """to_json with each hit's provenance fields: what the tool's structured content carries."""
        out = self.to_json()
        if self.provenance:
            out["hits"] = [{**hit, **fields} for hit, fields in zip(self.hits, self.provenance)]
        return out
