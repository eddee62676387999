"""The corpora a library serves, and what it serves at one moment: each corpus with the published index
requests use now."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SearchError
from ..output.metadata import PublishedMetadata, TaxonomyKey
from .engine import SearchEngine
from .filters import fits
from .published import PublishedIndex


@dataclass
class Corpus:
    """One served corpus: its name (the chunk ID prefix when several are served) and engine."""

    name: str
    engine: SearchEngine
    description: str | None = None  # from docs-mcp.yaml's serve section; else the index's own
    version: str | None = None  # one version of a versioned corpus output: its label
    max_age: dt.timedelta | None = None  # older indexes are flagged (output/freshness.py)
    notice: str | None = None  # the pinning rule's line when the locked version is not the one served
    # a versioned corpus served at the version a project pins (or its default), re-pinned when
    # versions.json or the project's lockfiles change: the corpus output and the project folder
    versions_out: Path | None = None
    project: Path | None = None

    @property
    def out(self) -> Path | str:
        """Its output folder (or s3:// URL)."""
        return self.engine.out

    def describe(self, index: PublishedIndex) -> str:
        text = self.description or index.metadata.corpus_description or f"the {self.name} documentation"
        return text.strip().rstrip(".").rstrip()


@dataclass(frozen=True)
class Served:
    """The published index of every corpus that requests use now.

    A corpus that cannot be read is still listed, with the last index it had (its metadata.json gives
    the tool schemas their corpus and taxonomy values), and in `unavailable` with the reason.
    """

    pairs: tuple[tuple[Corpus, PublishedIndex], ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)  # corpus name -> why it cannot be read now

    @property
    def several(self) -> bool:
        return len(self.pairs) > 1

    def same(self, other: Served | None) -> bool:
        return (
            other is not None
            and len(other.pairs) == len(self.pairs)
            and all(a[1] is b[1] for a, b in zip(self.pairs, other.pairs))
        )

    def key(self, scope: list[tuple[Corpus, PublishedIndex]]) -> str:
        """What a cursor is bound to: the indexes it pages through. A republish of a corpus it
        searched makes it stale; one of a corpus it did not search (other filters, `corpus`) does not."""
        if not self.several:
            return self.pairs[0][1].key
        return "|".join(f"{corpus.name}={index.key}" for corpus, index in scope)

    @property
    def taxonomy(self) -> dict[str, TaxonomyKey]:
        """Every corpus's taxonomy keys, each with the values of all corpora (first corpus's description)."""
        if not self.several:
            return self.pairs[0][1].taxonomy
        union: dict[str, TaxonomyKey] = {}
        for _, index in self.pairs:
            for key, spec in index.taxonomy.items():
                if key not in union:
                    union[key] = spec.model_copy(update={"values": list(spec.values)})
                else:
                    union[key].values += [v for v in spec.values if v not in union[key].values]
        return union

    @property
    def by_corpus(self) -> dict[str, dict[str, list[str]]]:
        """Key -> corpus -> its values, for the keys whose values are not the same in every corpus."""
        if not self.several:
            return {}
        spread: dict[str, dict[str, list[str]]] = {}
        for key in self.taxonomy:
            spread[key] = {c.name: list(i.taxonomy[key].values) if key in i.taxonomy else [] for c, i in self.pairs}
        return {k: v for k, v in spread.items() if len({tuple(sorted(values)) for values in v.values()}) > 1}

    @property
    def hybrid(self) -> bool:
        return any(index.embedding is not None for _, index in self.pairs)

    @property
    def metadata(self) -> PublishedMetadata:
        """What the tool description reads: the lone index's metadata, or a summary of all of them."""
        if not self.several:
            return self.pairs[0][1].metadata
        parts = "; ".join(f"{corpus.name}: {corpus.describe(index)}" for corpus, index in self.pairs)
        return PublishedMetadata(
            corpus_description=f"documentation of {len(self.pairs)} corpora ({parts})", taxonomy=self.taxonomy
        )

    def corpora(self) -> list[tuple[str, str]]:
        return [(corpus.name, corpus.describe(index)) for corpus, index in self.pairs]

    def missing(
        self, name: str | None, filters: dict[str, str], failed: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """The corpora a search would cover but cannot read now (`unavailable`, or `failed` during the
        request), each with the reason."""
        down = {**self.unavailable, **(failed or {})}
        return {
            c.name: down[c.name]
            for c, i in self.pairs
            if c.name in down and (name is None or c.name == name) and fits(i.taxonomy, filters)
        }

    def scope(
        self, name: str | None, filters: dict[str, str], failed: Mapping[str, str] | None = None
    ) -> list[tuple[Corpus, PublishedIndex]]:
        """The corpora a search runs in: the one named, else every corpus where each filter value exists,
        leaving out those that cannot be read now (see `missing`)."""
        names = [corpus.name for corpus, _ in self.pairs]
        if name is not None and name not in names:
            raise SearchError(f"Unknown corpus '{name}'. Served corpora: {', '.join(names)}.")
        chosen = [(c, i) for c, i in self.pairs if name is None or c.name == name]
        missing = self.missing(name, filters, failed)
        scope = [(c, i) for c, i in chosen if fits(i.taxonomy, filters) and c.name not in missing]
        if not scope and missing:
            why = "; ".join(f"corpus '{n}': {reason}" for n, reason in missing.items())
            raise SearchError(f"No corpus this search covers can be read now ({why}).")
        if not scope:
            wanted = ", ".join(f"{k}='{v}'" for k, v in sorted(filters.items()))
            where = f"corpus '{name}'" if name is not None else "any one corpus"
            have = "; ".join(
                f"{c.name}: "
                + ", ".join(
                    f"{k} in ({', '.join(i.taxonomy[k].values if k in i.taxonomy else [])})" for k in sorted(filters)
                )
                for c, i in chosen
            )
            raise SearchError(
                f"No match for filters {wanted} in {where}: each corpus has its own values ({have}). "
                "Drop a filter or pick values of one corpus."
            )
        return scope
