"""Queries new to the server: a pool drawn from an index's own chunks and the shipped suites' questions.

The engine remembers recent answers and query vectors, keyed by the query's text, so a benchmark
that sends a query twice to one server times the cache the second time. A pool never hands out
a query twice, and two queries that differ only in case or spacing count as one (a cache keyed
on a normalised form would otherwise answer the second): every server of a run can be sent the
same sequence, and none of them sees any query of it twice. That defeats the result cache by
construction, whatever form its key takes, without a server flag.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from pathlib import Path

SUITES = Path(__file__).resolve().parent / "suites"
VERBS = ["create", "list", "delete", "update", "retrieve", "configure", "handle", "find", "set", "use"]
ASKS = ["how do I {}", "what is {}", "{} example", "how to use {}", "{} options", "when should I use {}"]


def normalized(query: str) -> str:
    """The form two queries must differ in to be two queries: case and spacing folded."""
    return " ".join(query.casefold().split())


class UnseenQueries:
    """A deterministic sequence of distinct queries; `take` hands each one out once."""

    def __init__(self, queries: Iterable[str]) -> None:
        seen: set[str] = set()
        self.queries: list[str] = []
        for query in queries:
            key = normalized(query)
            if key and key not in seen:
                seen.add(key)
                self.queries.append(" ".join(query.split()))
        self.taken = 0

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def left(self) -> int:
        return len(self.queries) - self.taken

    def take(self, n: int) -> list[str]:
        """The next n queries of the pool; a SystemExit when the pool has fewer left (never a repeat)."""
        if n > self.left:
            raise SystemExit(
                f"error: the pool of unseen queries has {self.left} left of {len(self.queries)}, {n} were asked "
                "for: measure fewer searches, or use a bigger corpus"
            )
        out = self.queries[self.taken : self.taken + n]
        self.taken += n
        return out

    def __iter__(self) -> Iterator[str]:
        while True:
            yield self.take(1)[0]

    @classmethod
    def for_index(cls, index: Path, seed: int = 7) -> UnseenQueries:
        """The pool of an index folder: its chunks.json and the suites that ask about its chunks."""
        chunks = json.loads((index / "chunks.json").read_text())
        return cls(pool(chunks, suite_questions(chunks), seed))


def suite_questions(chunks: list[dict], suites: Path = SUITES) -> list[str]:
    """The questions (and follow-ups) of every shipped suite case whose answer is a chunk of this index,
    also as a copy of the corpus under a folder (dub-ts ×10's copy03/README.md#retries)."""
    ids = {c["chunk_id"] for c in chunks}
    ids |= {cid.split("/", 1)[1] for cid in ids if "/" in cid.split("#", 1)[0]}
    out = []
    for path in sorted(suites.glob("*.json")):
        for case in json.loads(path.read_text()).get("cases", []):
            if case.get("expectedChunkId") in ids:
                out += [q for q in (case.get("query"), case.get("followUp")) if q]
    return out


def pool(chunks: list[dict], questions: list[str], seed: int = 7) -> list[str]:
    """Every kind of query an agent sends, interleaved so any stretch of the pool mixes them: the suites'
    questions, headings as written, questions about a heading, heading with its parent, a few words
    lifted from a chunk, two words of the corpus, and "how do I <verb> <word>"."""
    rng = random.Random(seed)
    headings = sorted({c["heading"].strip() for c in chunks if c.get("heading", "").strip()})
    trails = sorted(
        {
            " ".join(parts[-2:])
            for c in chunks
            if len(parts := [p.strip() for p in c.get("breadcrumb", "").split(">")][1:]) >= 2
        }
    )
    words = sorted({w for c in chunks for w in c["content_text"].split() if w.isalpha() and 4 <= len(w) <= 12})
    phrases = []
    for chunk in chunks:
        text = chunk["content_text"].split()
        if len(text) >= 4:
            start = rng.randrange(len(text) - 3)
            phrases.append(" ".join(text[start : start + rng.choice((3, 4, 5))]))
    asked = [rng.choice(ASKS).format(h.lower()) for h in headings]
    pairs = [" ".join(rng.sample(words, 2)) for _ in range(len(chunks))] if len(words) >= 2 else []
    hows = [f"how do I {rng.choice(VERBS)} {rng.choice(words).lower()}" for _ in range(len(chunks))] if words else []
    kinds = [list(questions), headings, asked, trails, phrases, pairs, hows]
    for kind in kinds[1:]:
        rng.shuffle(kind)
    out = []
    for i in range(max(map(len, kinds))):
        out += [kind[i] for kind in kinds if i < len(kind)]
    return out
