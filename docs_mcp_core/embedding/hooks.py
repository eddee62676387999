"""Optional hooks: what a provider defines only when it needs it. The build, the embedding cache and
query embedding call them through these functions, which do the default for a provider without them.

    load()                  get ready to embed (import a runtime, load a model): takes time, so a build
                            starts it early in a thread and a server in the background
    passage_window()        (tokenizer.json, word pieces the model reads) of a model that reads only the
                            start of a long input: long chunks then get passages (input.passages)
    embedding_order(texts)  the order to embed texts in, the one this provider runs fastest
    tune_for_queries()      set up for one short query at a time (a server's query embedder)
    inline_queries          True when a query vector takes about a millisecond of CPU and no I/O: a
                            server computes it on its event loop instead of in a thread
    prepare_queries()       make ahead of time what tune_for_queries will open (a build that embedded calls it)
    query_note              after tune_for_queries and load: what computes query vectors, when it matters
    usage()                 tokens, estimated cost and truncated inputs so far (a Usage)
    create(settings)        a classmethod making the provider from its settings model, when `cls(**settings)`
                            is not enough (the local provider picks its backend)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import EmbeddingProvider, Usage
from .settings import SettingsModel


def slow_to_load(provider: EmbeddingProvider) -> bool:
    """A provider with a `load` hook takes seconds to get ready: load it off the event loop, and early."""
    return callable(getattr(provider, "load", None))


def load(provider: EmbeddingProvider) -> None:
    if slow_to_load(provider):
        provider.load()  # type: ignore[attr-defined]


def passage_window(provider: EmbeddingProvider) -> tuple[Path, int] | None:
    hook = getattr(provider, "passage_window", None)
    return hook() if callable(hook) else None


def embedding_order(provider: EmbeddingProvider, texts: Sequence[str]) -> list[int]:
    """The order to embed `texts` in (indexes); vectors must not depend on it (default: as given)."""
    hook = getattr(provider, "embedding_order", None)
    return hook(texts) if callable(hook) else list(range(len(texts)))


def tune_for_queries(provider: EmbeddingProvider) -> None:
    hook = getattr(provider, "tune_for_queries", None)
    if callable(hook):
        hook()


def inline_queries(provider: EmbeddingProvider) -> bool:
    """Whether to embed a query on the event loop: a thread's hop there and back, and its wait for the GIL
    while the loop computes the full-text lists, cost more than a sub-millisecond embedding
    (docs/decisions/0039-full-text-scores-in-memory.md, its last section)."""
    return getattr(provider, "inline_queries", False) is True


def prepare_queries(provider: EmbeddingProvider) -> None:
    hook = getattr(provider, "prepare_queries", None)
    if callable(hook):
        hook()


def query_note(provider: EmbeddingProvider) -> str | None:
    note = getattr(provider, "query_note", None)
    return note if isinstance(note, str) else None


def usage(provider: EmbeddingProvider) -> Usage:
    """Tokens, estimated cost and truncated inputs so far; free local providers report nothing."""
    hook = getattr(provider, "usage", None)
    return hook() if callable(hook) else Usage()


def create(cls: type[EmbeddingProvider], settings: SettingsModel) -> EmbeddingProvider:
    """The provider of these settings: its `create` hook, else its constructor with them."""
    hook: Any = getattr(cls, "create", None)
    return hook(settings) if callable(hook) else cls(**dict(settings))
