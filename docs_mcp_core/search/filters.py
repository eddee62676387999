"""Taxonomy filters: checked against the index's values, then applied as a prefilter built from those
values (never from raw input): as SQL to LanceDB's queries, and to the chunks' metadata for the lists
computed in memory, with the same result; and the zero-result hint that names other values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import SearchError
from ..output.chunk import meta_column, sql_literal
from ..output.metadata import TaxonomyKey
from .hits import ZeroResultHint


def match_case(filters: dict[str, Any], taxonomy: dict[str, TaxonomyKey]) -> dict[str, Any]:
    """Taxonomy values as indexed when they differ only in letter case from exactly one (`Python` -> `python`).

    search_docs and `docs-mcp search` both go through this, so they accept the same values.
    """
    fixed = dict(filters)
    for key, value in filters.items():
        allowed = taxonomy[key].values if key in taxonomy else []
        if isinstance(value, str) and value not in allowed:
            same = [v for v in allowed if v.casefold() == value.casefold()]
            if len(same) == 1:
                fixed[key] = same[0]
    return fixed


def validate_filters(filters: dict[str, Any], taxonomy: dict[str, TaxonomyKey]) -> dict[str, str]:
    """Every key a taxonomy key, every value one of its indexed values; else a SearchError listing them."""
    clean: dict[str, str] = {}
    for key, value in filters.items():
        if key not in taxonomy:
            known = ", ".join(sorted(taxonomy)) or "none (this index has no taxonomy)"
            raise SearchError(f"Unknown filter '{key}'. Filterable keys: {known}.")
        allowed = taxonomy[key].values
        if not isinstance(value, str) or value not in allowed:
            raise SearchError(f"Invalid taxonomy value for '{key}': '{value}'. Allowed values: {', '.join(allowed)}")
        clean[key] = value
    return clean


def fits(taxonomy: dict[str, TaxonomyKey], filters: dict[str, str]) -> bool:
    """Whether every filter value is one of the taxonomy's values."""
    return all(key in taxonomy and value in taxonomy[key].values for key, value in filters.items())


SCOPES = ("sdk-specific", "global-guide")


@dataclass(frozen=True)
class Prefilter:
    """Validated filters, as LanceDB's SQL (`sql`) and as a test of a chunk's metadata (`passes`) that
    decides as that SQL does: a key a chunk lacks is NULL there, equal to no value."""

    filters: tuple[tuple[str, str], ...]
    sql: str
    auto_include: bool  # `language` without `scope`: global guides pass too (where_clause)

    def passes(self, metadata: dict[str, str]) -> bool:
        for key, value in self.filters:
            if self.auto_include and key == "language":
                scope, language = metadata.get("scope"), metadata.get("language")
                if not (
                    (scope == "sdk-specific" and language == value)
                    or scope == "global-guide"
                    or (scope not in SCOPES and language in (None, value))
                ):
                    return False
            elif metadata.get(key) != value:
                return False
        return True


def prefilter(filters: dict[str, str], taxonomy: dict[str, TaxonomyKey]) -> Prefilter | None:
    """The prefilter of validated filters, None without any."""
    sql = where_clause(filters, taxonomy)
    if sql is None:
        return None
    return Prefilter(tuple(sorted(filters.items())), sql, auto_include(filters, taxonomy))


def auto_include(filters: dict[str, str], taxonomy: dict[str, TaxonomyKey]) -> bool:
    return "language" in filters and "scope" not in filters and "scope" in taxonomy


def where_clause(filters: dict[str, str], taxonomy: dict[str, TaxonomyKey]) -> str | None:
    """A prefilter from validated values. `language` without `scope` also admits global guides."""
    auto = auto_include(filters, taxonomy)
    clauses = [
        f"{meta_column(k)} = {sql_literal(v)}" for k, v in sorted(filters.items()) if not (auto and k == "language")
    ]
    if auto:
        lang, scope, language = sql_literal(filters["language"]), meta_column("scope"), meta_column("language")
        clauses.append(
            f"(({scope} = 'sdk-specific' AND {language} = {lang}) OR {scope} = 'global-guide' OR "
            f"(({scope} IS NULL OR {scope} NOT IN ('sdk-specific', 'global-guide')) AND "
            f"({language} IS NULL OR {language} = {lang})))"
        )
    return " AND ".join(clauses) or None


def hint_for(query: str, filters: dict[str, str], suggestions: dict[str, list[str]]) -> ZeroResultHint:
    """The zero-result hint: which values of the active filters would have matched."""
    summary = ", ".join(f"{k}='{v}'" for k, v in sorted(filters.items()))
    if suggestions:
        tips = "; ".join(f"{k}: {', '.join(v)}" for k, v in suggestions.items())
        message = (
            f"0 results found for query '{query}' with filters {summary}. It does match with other values ({tips})."
        )
    elif filters:
        message = f"0 results found for query '{query}' with filters {summary}, nor without them. Try other words."
    else:
        message = f"0 results found for query '{query}'. Try other words, an identifier, or a shorter query."
    return {"message": message, "suggested_filters": suggestions}
