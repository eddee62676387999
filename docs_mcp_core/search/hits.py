"""The JSON shapes search_docs returns, typed: one hit, the zero-result hint, the trim note."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class SearchHit(TypedDict):
    """One search_docs hit, as JSON: what an agent decides from before it calls get_doc."""

    chunk_id: str  # `corpus:` first when several corpora are served
    corpus: NotRequired[str]  # only when several corpora are served
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
