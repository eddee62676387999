"""Query vectors for hybrid search, from the provider the index was built with.

Search never waits for or fails on this: while a model loads, after a provider error,
or when the index has no vectors, search is text-only, and says so once on stderr.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from ..failpoints import pause
from . import hooks
from .base import EmbeddingProvider
from .registry import make_provider, settings_from_metadata

RETRY_AFTER_FAILURE = 30.0  # seconds to stay text-only after a failed query embedding
RECENT_QUERIES = 256  # query vectors kept: an agent repeats and pages through its queries


def _stderr(message: str) -> None:
    print(f"docs-mcp: {message}", file=sys.stderr, flush=True)


class QueryEmbedder:
    """status: none (no vectors), loading, ready, or unavailable (with a reason)."""

    def __init__(self, embedding: dict[str, Any] | None, *, log: Callable[[str], None] = _stderr) -> None:
        self.log = log
        self.expected = embedding
        self.provider: EmbeddingProvider | None = None
        self.reason: str | None = None
        self._warned = False
        self._retry_at = 0.0
        self._ready = threading.Event()
        # query -> its vector, or the task computing it: corpora served with the same model share this
        # embedder, and a search of all of them at once embeds the query once
        self._recent: OrderedDict[str, np.ndarray | asyncio.Future[np.ndarray | None] | None] = OrderedDict()
        self.status = "none" if not embedding else "loading"
        if embedding:
            threading.Thread(target=self._load, name="query-embedder", daemon=True).start()

    def _load(self) -> None:
        assert self.expected is not None
        try:
            provider = make_provider(settings_from_metadata(self.expected))
            digest = self.expected.get("model_sha256")
            made = (provider.describe() or {}).get("model_sha256")
            if digest and made is not None and made != digest:
                raise RuntimeError(f"the model {provider.model} here differs from the one the index was built with")
            if provider.dimensions != self.expected.get("dimensions"):
                raise RuntimeError(
                    f"the provider makes {provider.dimensions}-dimension vectors, the index has "
                    f"{self.expected.get('dimensions')}"
                )
            hooks.tune_for_queries(provider)
            slow = hooks.slow_to_load(provider)
            if slow:
                pause("query-model-load")  # a failpoint: tests hold the model back to see text-only answers
            hooks.load(provider)  # seconds for local models: this is why it runs in the background
            self.provider = provider
            self.status = "ready"
            if slow or self._warned:
                note = f" ({hooks.query_note(provider)})" if hooks.query_note(provider) else ""
                self.log(f"query embedding model {provider.model} is ready{note}: search is hybrid")
        except Exception as exc:  # noqa: BLE001 - any failure means: text-only, with the reason
            self.status = "unavailable"
            self.reason = str(exc).splitlines()[0][:300]
            self.log(f"vector search is off, text-only search continues: {self.reason}")
            self._warned = True
        finally:
            self._ready.set()

    @property
    def inline(self) -> bool:
        """Cheap enough to run on the event loop: no network, a millisecond or so of CPU (hooks.inline_queries)."""
        return self.provider is not None and hooks.inline_queries(self.provider)

    def wait(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def embed(self, query: str) -> np.ndarray | None:
        """A query vector, or None: callers then rank by text alone."""
        if self.provider is None:
            if self.status == "loading" and not self._warned:
                self.log("the query embedding model is still loading: text-only search until it is ready")
                self._warned = True
            return None
        if time.monotonic() < self._retry_at:
            return None
        try:
            vector: np.ndarray = self.provider.embed([query])[0]
        except Exception as exc:  # noqa: BLE001 - any provider failure: text-only for a while
            self._retry_at = time.monotonic() + RETRY_AFTER_FAILURE
            if self.status != "degraded":
                self.log(f"query embedding failed, falling back to text-only search: {str(exc).splitlines()[0][:300]}")
            self.status = "degraded"
            return None
        if self.status == "degraded":
            self.status = "ready"
            self.log("query embedding works again: hybrid search resumed")
        return vector

    async def vector_for(self, query: str) -> np.ndarray | None:
        """embed(query), remembered for RECENT_QUERIES queries; asked again while it is being computed
        (by another corpus's search), the same computation answers. None (model loading, provider
        failing) is not remembered."""
        entry = self._recent.get(query)
        if isinstance(entry, asyncio.Future) and entry.get_loop() is not asyncio.get_running_loop():
            entry = None  # computed for another event loop (a caller that runs one per search): ask again
        if entry is None:
            if self.inline:  # a millisecond of work at most: a thread's hops and GIL waits would cost more
                entry = self.embed(query)
            else:
                # the thread starts now, not when this coroutine next yields: the caller's work meanwhile overlaps it
                entry = asyncio.get_running_loop().run_in_executor(None, self.embed, query)
            self._recent[query] = entry
            while len(self._recent) > RECENT_QUERIES:
                self._recent.popitem(last=False)
        else:
            self._recent.move_to_end(query)
        vector = await asyncio.shield(entry) if isinstance(entry, asyncio.Future) else entry
        if vector is None:
            if self._recent.get(query) is entry:
                del self._recent[query]
        elif query in self._recent:
            self._recent[query] = vector
        return vector

    def close(self) -> None:
        if self.provider is not None:
            self.provider.close()
