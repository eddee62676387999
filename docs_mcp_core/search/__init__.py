"""The read path's request API: `Library` (search, get_doc, paging, hints over the corpora served) and
the shapes of its answers. The server, the CLI and the eval harness import from here only; the
modules under it (engine, published index, ranking, filters) are the library's own.

Names load on first use, so a command that only shows `Weights` defaults does not import the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from ..errors import SearchError
    from .answers import CONTEXT_CHARS, MAX_MAX_CHARS, MIN_MAX_CHARS
    from .cursor import MIN_SECRET_CHARS
    from .filters import match_case
    from .hits import SearchHit, SearchPage, TrimNote, ZeroResultHint
    from .library import Library, run_get_doc, run_search
    from .limits import DEFAULT_LIMIT, MAX_CONTEXT, MAX_LIMIT
    from .served import Corpus, Served
    from .weights import Weights

_HOMES = {
    "SearchError": "..errors",
    "CONTEXT_CHARS": ".answers",
    "MAX_MAX_CHARS": ".answers",
    "MIN_MAX_CHARS": ".answers",
    "MIN_SECRET_CHARS": ".cursor",
    "match_case": ".filters",
    "SearchHit": ".hits",
    "SearchPage": ".hits",
    "TrimNote": ".hits",
    "ZeroResultHint": ".hits",
    "Library": ".library",
    "run_get_doc": ".library",
    "run_search": ".library",
    "DEFAULT_LIMIT": ".limits",
    "MAX_CONTEXT": ".limits",
    "MAX_LIMIT": ".limits",
    "Corpus": ".served",
    "Served": ".served",
    "Weights": ".weights",
}
__all__ = [
    "CONTEXT_CHARS",
    "Corpus",
    "DEFAULT_LIMIT",
    "Library",
    "MAX_CONTEXT",
    "MAX_LIMIT",
    "MAX_MAX_CHARS",
    "MIN_MAX_CHARS",
    "MIN_SECRET_CHARS",
    "SearchError",
    "SearchHit",
    "SearchPage",
    "Served",
    "TrimNote",
    "Weights",
    "ZeroResultHint",
    "match_case",
    "run_get_doc",
    "run_search",
]
__getattr__ = lazy(__name__, _HOMES)
