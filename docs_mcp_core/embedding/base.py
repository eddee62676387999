"""The provider interface: identity for fingerprints, and one method that embeds a batch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..output.vector_index import MAX_DIMENSIONS
from .input import PassageSplitter

if TYPE_CHECKING:  # numpy loads with the provider that makes vectors: a text-only build never imports it
    import numpy as np


PROVIDERS = ("none", "hash", "openai", "local", "sentence-transformers")
BACKENDS = ("onnx", "torch")  # of the local provider


@dataclass(frozen=True)
class Setting:
    """How a provider setting shows outside Python: `--embedding-<name>` (and its environment
    variable), the `embedding:` key in docs-mcp.yaml, and whether metadata.json records it."""

    help: str
    choices: tuple[str, ...] | None = None
    min: int | None = None  # for integers
    max: int | None = None
    in_index: bool = False  # in metadata.json's embedding block: query embedding recreates it from there


def _setting(help: str, *, default: Any = None, **kwargs: Any) -> Any:
    return field(default=default, metadata={"setting": Setting(help, **kwargs)})


@dataclass(frozen=True)
class ProviderSettings:
    """Everything a build or server needs to recreate a provider (the API key is never here).

    The one list of provider settings: the CLI options, docs-mcp.yaml's `embedding:` block
    (and so the Dagster resource) and `settings_from_metadata` are all made from these fields.
    """

    provider: str = _setting(
        "Default: local with the bundled model when docs-mcp[semantic] is installed, else none. "
        "none: full-text only; hash: deterministic offline vectors for tests; "
        "openai: OpenAI or any OpenAI-compatible endpoint (key from OPENAI_API_KEY); "
        "local: an offline model, needs docs-mcp[semantic] (or docs-mcp[local] for torch; "
        "the alias sentence-transformers picks the torch backend).",
        default="none",
        choices=PROVIDERS,
        in_index=True,
    )
    model: str | None = _setting(
        "Model name or folder (openai default: text-embedding-3-small; "
        "local default: sentence-transformers/all-MiniLM-L6-v2).",
        in_index=True,
    )
    dimensions: int | None = _setting(
        "Vector size (hash default 256; openai: the model's size, or a smaller one for text-embedding-3).",
        min=1,
        max=MAX_DIMENSIONS,
        in_index=True,
    )
    base_url: str | None = _setting(
        "OpenAI-compatible base URL, e.g. http://localhost:11434/v1 for Ollama.", in_index=True
    )
    batch_size: int | None = _setting("Inputs per embedding request (openai default 128).", min=1)
    concurrency: int | None = _setting("Embedding requests in flight at once (openai default 4).", min=1)
    max_retries: int | None = _setting(
        "Retries per request on 429, 5xx and connection errors (openai default 5).", min=0
    )
    timeout: int | None = _setting(
        "Seconds one embedding request may take in all, from connecting to the last byte of the answer "
        "(openai default 120); a request over it is abandoned and retried like a failed one.",
        min=1,
    )
    device: str | None = _setting("Torch device for the local provider: cpu (default), cuda, cuda:1, mps.")
    backend: str | None = _setting(  # None: onnx when it can run the model
        "How the local provider runs its model: onnx (ONNX Runtime, no torch; the default when "
        "docs-mcp[semantic] is installed and the model has an ONNX file) or torch "
        "(sentence-transformers: any model, GPUs). Each gives its own vectors.",
        choices=BACKENDS,
        in_index=True,
    )


def provider_setting_fields() -> list[tuple[Field[Any], Setting]]:
    """Each ProviderSettings field with its Setting, in declaration order."""
    return [(f, f.metadata["setting"]) for f in fields(ProviderSettings)]


@dataclass(frozen=True)
class Usage:
    """What a provider's requests have cost so far, for the build summary and its warnings."""

    tokens: int = 0
    cost: float = 0.0  # estimated, in USD
    truncated: tuple[int, ...] = ()  # lengths of inputs cut to the model's limit


class EmbeddingProvider(ABC):
    """Implement `embed`; set name, model and dimensions; list what changes vectors in config_fingerprint.

    Everything else callers use has a default here: override it when a provider differs.
    """

    name: str
    model: str
    dimensions: int
    batch_size: int = 64  # texts per `embed` call
    concurrency: int = 1  # `embed` calls in flight at once (threads)
    cost_per_million_tokens: float = 0.0
    digest: str | None = None  # sha256 of the model's files when they are local: its identity beyond a name
    slow_to_load: bool = False  # `load` takes seconds (a model in memory): run it off the event loop
    backend: str | None = None  # the runtime that computes the vectors (local: onnx or torch), for the audit
    query_note: str | None = None  # after tune_for_queries and load: what computes query vectors, when it matters

    @property
    @abstractmethod
    def config_fingerprint(self) -> str: ...

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for `texts`, shape (len(texts), dimensions), float32, in input order."""

    @property
    def produces_vectors(self) -> bool:
        return self.dimensions > 0

    def describe(self) -> dict[str, object] | None:
        """The `embedding` block of metadata.json (None when there are no vectors)."""
        if not self.produces_vectors:
            return None
        return {"provider": self.name, "model": self.model, "dimensions": self.dimensions}

    def load(self) -> None:  # noqa: B027 - an optional hook; the default does nothing
        """Get ready to embed (import libraries, load a model); `embed` calls it when needed."""

    def passages(self, text: str, heading: str, end: int | None = None) -> list[str]:
        """The texts embedded for one chunk's input (`heading`: its heading path; `end`: where its code
        blocks start): the input itself, then, for a model that reads only a window of word pieces,
        the heading path with each next window (embedding/input.py PassageSplitter)."""
        splitter = self._passage_splitter()
        return splitter(text, heading, end) if splitter else [text]

    @property
    def multivector(self) -> bool:
        """Whether chunks can have more than one passage (the table then stores a list of vectors per row)."""
        return self._passage_splitter() is not None

    def passage_window(self) -> tuple[Path, int] | None:
        """(tokenizer.json, word pieces the model reads) for a model that reads only the start of a long
        input: long chunks then get passages. Default: None, one vector per chunk."""
        return None

    def _passage_splitter(self) -> PassageSplitter | None:
        """Made once, from the tokenizer file only (never the model): a no-op build's fingerprints need it."""
        if not hasattr(self, "_splitter"):
            window = self.passage_window()
            self._splitter = PassageSplitter(*window) if window else None
        return self._splitter

    def embedding_order(self, texts: Sequence[str]) -> list[int]:
        """The order to embed `texts` in (indexes): the one this provider runs fastest. Vectors must not
        depend on it (default: as given)."""
        return list(range(len(texts)))

    def tune_for_queries(self) -> None:  # noqa: B027 - an optional hook; the default does nothing
        """Set up for embedding one short query at a time (a server's query embedder); default: as built."""

    def prepare_queries(self) -> None:  # noqa: B027 - an optional hook; the default does nothing
        """Make ahead of time what `tune_for_queries` will open, so a server's first start does not (a build
        that embedded something calls it: the model is loaded then); default: nothing to make."""

    def usage(self) -> Usage:
        """Tokens, estimated cost and truncated inputs so far; free local providers report nothing."""
        return Usage()

    def close(self) -> None:  # noqa: B027 - an optional hook; the default does nothing
        """Release clients or models; the default has nothing to release."""
