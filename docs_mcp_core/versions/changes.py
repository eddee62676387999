"""What changed between two indexed versions of a corpus: sections added, removed, changed and renamed.

A pure function of two chunk lists (chunks.json records). Sections are compared by ID and by content
digest (derived_fields.content_digest: the text a reader sees, whatever the markup), so rewriting an HTML
link as a Markdown link is no change. A section whose ID is gone is matched to a new one first by equal
digest, then by word-shingle similarity: a page moved or a heading renamed is one change, not a removal
and an addition. A section whose ID changed with its heading and text unchanged (a renamed parent
heading, a moved file) is `moved`: counted, not listed as a change.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .sections import Section, sections
from .similarity import best_pairs, shingles, words

Kind = Literal["changed", "renamed", "added", "removed"]
RENAME_THRESHOLD = 0.5  # shingle Jaccard from which a gone section and a new one are the same, renamed
KINDS: tuple[Kind, ...] = ("changed", "renamed", "added", "removed")
_IN_PLACE: tuple[Kind, ...] = ("changed", "renamed", "removed", "added")  # at one position: what went, then what came
_STOP = frozenset(
    "a an and are as at be by can do does for from how i in is it my of on or the to what when with".split()
)


@dataclass
class Change:
    kind: Kind
    old: Section | None
    new: Section | None
    similarity: float | None = None  # renamed: shingle Jaccard of the two texts (1.0: the same text)
    score: float = 0.0  # relevance to the query (0 without one)

    @property
    def section(self) -> Section:
        """The section as it is now (as it was, for a removed one)."""
        found = self.new or self.old
        assert found is not None
        return found

    @property
    def chunk_id(self) -> str:
        return self.section.chunk_id

    @property
    def old_chunk_id(self) -> str | None:
        """The ID in the older version when it differs (renamed)."""
        if self.old is not None and self.new is not None and self.old.chunk_id != self.new.chunk_id:
            return self.old.chunk_id
        return None

    def changed_text(self) -> str:
        """What a query is matched against: the headings and the lines that differ (all lines of a section
        added or removed)."""
        if self.old is None or self.new is None:
            return self.section.text
        old_lines, new_lines = set(self.old.text.splitlines()), set(self.new.text.splitlines())
        return "\n".join(sorted(old_lines ^ new_lines))


@dataclass
class VersionDiff:
    changes: list[Change]
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old ID, new ID): same heading and text
    unchanged: int = 0
    old_sections: int = 0
    new_sections: int = 0
    query: str | None = None

    def counts(self) -> dict[str, int]:
        found = Counter(c.kind for c in self.changes)
        return {**{k: found.get(k, 0) for k in KINDS}, "moved": len(self.moved), "unchanged": self.unchanged}


Ranker = Callable[[str, list[Change]], list[float]]


def what_changed(
    old_chunks: Iterable[Mapping[str, Any]],
    new_chunks: Iterable[Mapping[str, Any]],
    query: str | None = None,
    *,
    rank: Ranker | None = None,
    threshold: float = RENAME_THRESHOLD,
) -> VersionDiff:
    """Sections added, removed, changed and renamed from `old_chunks` to `new_chunks`.

    Without a query the changes come in document order (file, then position); with one, by `rank`
    (default: lexical_scores), most relevant first, ties in document order.
    """
    old, new = sections(old_chunks), sections(new_chunks)
    diff = VersionDiff([], old_sections=len(old), new_sections=len(new), query=query or None)
    for cid in sorted(old.keys() & new.keys()):
        if old[cid].digest == new[cid].digest:
            diff.unchanged += 1
        else:
            diff.changes.append(Change("changed", old[cid], new[cid]))
    gone = {cid: old[cid] for cid in sorted(old.keys() - new.keys())}
    fresh = {cid: new[cid] for cid in sorted(new.keys() - old.keys())}
    for o, n in _same_digest(gone, fresh):
        if _plain(o.heading) == _plain(n.heading):
            diff.moved.append((o.chunk_id, n.chunk_id))
        else:
            diff.changes.append(Change("renamed", o, n, similarity=1.0))
        del gone[o.chunk_id], fresh[n.chunk_id]
    pairs = best_pairs(
        {cid: shingles(f"{s.heading}\n{s.text}") for cid, s in gone.items()},
        {cid: shingles(f"{s.heading}\n{s.text}") for cid, s in fresh.items()},
        threshold,
        prefer=lambda a, b: gone[a].filepath == fresh[b].filepath,
    )
    for a, b, sim in pairs:
        diff.changes.append(Change("renamed", gone.pop(a), fresh.pop(b), similarity=round(sim, 3)))
    diff.changes += [Change("removed", s, None) for s in gone.values()]
    diff.changes += [Change("added", None, s) for s in fresh.values()]
    diff.changes.sort(key=_document_order)
    diff.moved.sort()
    if diff.query:
        scores = (rank or lexical_scores)(diff.query, diff.changes)
        for change, score in zip(diff.changes, scores):
            change.score = round(float(score), 4)
        diff.changes.sort(key=lambda c: -c.score)  # stable: ties stay in document order
    return diff


def _plain(text: str) -> str:
    return " ".join(words(text))


def _document_order(change: Change) -> tuple[str, int, int, str]:
    s = change.section
    return (s.filepath, s.position, _IN_PLACE.index(change.kind), s.chunk_id)


def _same_digest(gone: dict[str, Section], fresh: dict[str, Section]) -> list[tuple[Section, Section]]:
    """Gone and new sections with equal digests, paired one to one: same heading first, then same file,
    then in ID order."""
    by_digest: dict[str, list[Section]] = {}
    for s in fresh.values():
        by_digest.setdefault(s.digest, []).append(s)
    pairs = []
    for o in gone.values():
        options = by_digest.get(o.digest)
        if not options:
            continue
        best = min(
            options, key=lambda n: (_plain(n.heading) != _plain(o.heading), n.filepath != o.filepath, n.chunk_id)
        )
        options.remove(best)
        pairs.append((o, best))
    return pairs


def lexical_scores(query: str, changes: list[Change]) -> list[float]:
    """BM25-like: each query word's idf over the changes, times its saturated count in what changed,
    plus twice that for a word of the heading."""
    terms = [t for t in dict.fromkeys(words(query)) if t not in _STOP] or list(dict.fromkeys(words(query)))
    docs = []
    for change in changes:
        headings = {*words(change.section.heading), *(words(change.old.heading) if change.old else [])}
        docs.append((headings, Counter(words(change.changed_text()))))
    n = len(docs)
    idf = {}
    for t in terms:
        df = sum(1 for h, c in docs if t in h or t in c)
        idf[t] = math.log(1 + (n - df + 0.5) / (df + 0.5))
    scores = []
    for headings, counts in docs:
        tf = {t: counts.get(t, 0) for t in terms}
        scores.append(sum(idf[t] * (2.0 * (t in headings) + tf[t] / (tf[t] + 1.2)) for t in terms))
    return scores
