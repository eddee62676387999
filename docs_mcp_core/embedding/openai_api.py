"""OpenAI and any OpenAI-compatible embeddings endpoint (Ollama, vLLM, TEI, LM Studio).

Retries are the openai client's own: exponential backoff with jitter, `Retry-After`
honoured, 408/409/429/5xx, connection errors and timeouts retried, up to `max_retries` times.
Each request (each attempt) has a total deadline, `timeout` seconds from connecting to the
last byte of the answer (http_deadline.py): a server that answers a byte at a time is given up
on like one that does not answer. Requests run on the async client, on a loop thread of the
provider's own, so that the deadline can interrupt a read.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import DocsMcpError
from ..http_deadline import DeadlineTransport, LoopThread
from ..output.vector_index import MAX_DIMENSIONS
from .base import EmbeddingProvider, Usage
from .fingerprint import config_fingerprint
from .settings import SettingsModel, setting

if TYPE_CHECKING:  # imported where vectors are made: naming the provider (the CLI's options) needs no numpy
    import numpy as np

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"
API_KEY_ENV = "OPENAI_API_KEY"
# Known models: default dimensions, USD per 1M input tokens, input limit in tokens.
KNOWN_MODELS: dict[str, tuple[int, float, int]] = {
    "text-embedding-3-small": (1536, 0.02, 8191),
    "text-embedding-3-large": (3072, 0.13, 8191),
    "text-embedding-ada-002": (1536, 0.10, 8191),
    "nomic-embed-text": (768, 0.0, 8192),
    "mxbai-embed-large": (1024, 0.0, 512),
    "all-minilm": (384, 0.0, 256),
    "bge-m3": (1024, 0.0, 8192),
}
CHARS_PER_TOKEN = 3  # conservative for prose and code; inputs longer than limit*3 chars are cut
DEFAULT_TIMEOUT = 120  # seconds one request may take in all; a batch is usually answered in a few
QUERY_TIMEOUT = 15  # seconds one query-embedding request may take in all (a server's): then text-only


def normalize_base_url(url: str | None) -> str:
    return (url or DEFAULT_BASE_URL).rstrip("/")


class OpenAISettings(SettingsModel):
    model: str | None = setting(help=f"Model name (default {DEFAULT_MODEL}).")
    dimensions: int | None = setting(
        help="Vector size: the model's, or a smaller one for text-embedding-3 (needed for a model docs-mcp does "
        "not know).",
        ge=1,
        le=MAX_DIMENSIONS,
    )
    base_url: str | None = setting(help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1 for Ollama.")
    batch_size: int | None = setting(help="Inputs per embedding request (default 128).", ge=1)
    concurrency: int | None = setting(help="Embedding requests in flight at once (default 4).", ge=1)
    max_retries: int | None = setting(help="Retries per request on 429, 5xx and connection errors (default 5).", ge=0)
    timeout: int | None = setting(
        help=f"Seconds one embedding request may take in all, from connecting to the last byte of the answer "
        f"(default {DEFAULT_TIMEOUT}); a request over it is abandoned and retried like a failed one.",
        ge=1,
    )


class OpenAIProvider(EmbeddingProvider):
    """OpenAI or any OpenAI-compatible endpoint (key from OPENAI_API_KEY)."""

    name = "openai"
    Settings = OpenAISettings

    def __init__(
        self,
        model: str | None = None,
        dimensions: int | None = None,
        base_url: str | None = None,
        *,
        batch_size: int | None = None,
        concurrency: int | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self.base_url = normalize_base_url(base_url)
        known = KNOWN_MODELS.get(self.model)
        if dimensions is None and known is None:
            raise DocsMcpError(
                f"unknown embedding model {self.model!r}: pass --embedding-dimensions with its vector size"
            )
        self.dimensions = dimensions or known[0]  # type: ignore[index]
        # Only text-embedding-3 models accept a requested size; others must match it.
        self._send_dimensions = dimensions is not None and self.model.startswith("text-embedding-3")
        self.cost_per_million_tokens = known[1] if known else 0.0
        self.max_input_chars = (known[2] if known else 8192) * CHARS_PER_TOKEN
        self.batch_size = batch_size or 128
        self.concurrency = concurrency or 4
        self.max_retries = 5 if max_retries is None else max_retries
        self.timeout = timeout or DEFAULT_TIMEOUT
        self.tokens_used = 0
        self.truncated: list[int] = []  # lengths of inputs that were cut, for one warning
        self._lock = threading.Lock()
        self._client: Any = None
        self._loop = LoopThread("openai-embeddings")

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(
            provider=self.name, model=self.model, dimensions=self.dimensions, base_url=self.base_url
        )

    def describe(self) -> dict[str, object] | None:
        described = super().describe() or {}
        if self.base_url != DEFAULT_BASE_URL:
            described["base_url"] = self.base_url
        return described

    def tune_for_queries(self) -> None:
        """A query should fail fast (the server answers text-only meanwhile), not retry for minutes; called
        before the first request."""
        self.max_retries, self.timeout = 1, QUERY_TIMEOUT

    def client(self) -> Any:
        """The async openai client, made once (its connections are reused on the provider's loop thread)."""
        with self._lock:
            if self._client is None:
                import httpx2
                from openai import AsyncOpenAI

                key = os.environ.get(API_KEY_ENV)
                if not key:
                    if self.base_url == DEFAULT_BASE_URL:
                        raise DocsMcpError(f"set {API_KEY_ENV} to use the openai embedding provider")
                    key = "unused"  # local OpenAI-compatible servers usually need no key
                self._client = AsyncOpenAI(
                    api_key=key,
                    base_url=self.base_url,
                    max_retries=self.max_retries,
                    timeout=self.timeout,
                    http_client=httpx2.AsyncClient(
                        transport=DeadlineTransport(self.timeout), timeout=self.timeout, follow_redirects=True
                    ),
                )
            return self._client

    def _prepare(self, text: str) -> str:
        if len(text) <= self.max_input_chars:
            return text
        with self._lock:
            self.truncated.append(len(text))
        return text[: self.max_input_chars]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        import openai

        kwargs = {"dimensions": self.dimensions} if self._send_dimensions else {}
        create = self.client().embeddings.create
        try:
            response = self._loop.run(create(model=self.model, input=[self._prepare(t) for t in texts], **kwargs))
        except openai.APITimeoutError:
            raise DocsMcpError(
                f"the embedding endpoint {self.base_url} did not answer completely within {self.timeout:g} s, "
                f"{self.max_retries + 1} time(s); raise --embedding-timeout if it is only slow"
            ) from None
        except openai.APIStatusError as exc:
            raise DocsMcpError(
                f"embedding request to {self.base_url} failed with HTTP {exc.status_code} after "
                f"{self.max_retries} retries: {_short(exc.message)}"
            ) from None
        except openai.APIConnectionError as exc:
            raise DocsMcpError(
                f"could not reach the embedding endpoint {self.base_url} after {self.max_retries} retries ({_short(str(exc))})"
            ) from None
        data = sorted(response.data, key=lambda d: d.index)
        vectors = np.asarray([d.embedding for d in data], dtype=np.float32)
        if vectors.shape != (len(texts), self.dimensions):
            raise DocsMcpError(
                f"{self.base_url} returned vectors of shape {vectors.shape} for {len(texts)} inputs; expected "
                f"{self.dimensions} dimensions (set --embedding-dimensions to the model's size)"
            )
        usage = getattr(response, "usage", None)
        with self._lock:
            self.tokens_used += int(getattr(usage, "prompt_tokens", 0) or 0)
        return vectors

    def usage(self) -> Usage:
        with self._lock:
            return Usage(
                self.tokens_used, self.tokens_used * self.cost_per_million_tokens / 1_000_000, tuple(self.truncated)
            )

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            self._loop.run(client.close())
        self._loop.close()


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "…"
