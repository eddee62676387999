"""The `local` provider's torch backend: any sentence-transformers model (the `docs-mcp[local]` extra).

Torch is imported only when the first text is embedded, so fingerprints and no-op builds stay fast.

Vectors are bit-for-bit reproducible however texts are batched: each text is padded to a
length bucket that depends on its own token count only, and only same-bucket texts share
a batch. So a chunk embedded alone in an incremental build gets exactly the vector a cold
build gives it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where vectors are made: a no-op build (fingerprints only) never needs numpy
    import numpy as np

from ..errors import DocsMcpError
from .fingerprint import config_fingerprint
from .local_models import DEFAULT_MODEL, LocalModel, max_seq_length, model_digest, model_dimensions, resolve_model_dir

PADDING_SCHEME = "bucketed-pow2-v1"  # part of the fingerprint: changing it changes vectors


def _bucket(length: int, limit: int) -> int:
    size = 16
    while size < length:
        size *= 2
    return min(size, limit)


class TorchProvider(LocalModel):
    """The local provider on torch (sentence-transformers): any model, GPUs."""

    backend = "torch"

    def __init__(
        self,
        model: str | None = None,
        *,
        device: str | None = None,
        batch_size: int | None = None,
        dimensions: int | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self.folder = resolve_model_dir(self.model)
        self.digest = model_digest(self.folder)
        self.dimensions = model_dimensions(self.folder, self.model, dimensions)
        self.max_tokens = max_seq_length(self.folder, self.model)
        self.device = device or "cpu"
        self.batch_size = batch_size or 32
        self.concurrency = 1  # one model instance; torch uses every core itself
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def config_fingerprint(self) -> str:
        return config_fingerprint(
            provider=self.name,
            backend=self.backend,
            model_sha256=self.digest,
            dimensions=self.dimensions,
            normalize=self.normalize,
            max_tokens=self.max_tokens,
            padding=PADDING_SCHEME,
        )

    def load(self) -> Any:
        """Import torch and load the model (seconds); safe to call from a background thread."""
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub at run time
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                except ImportError:
                    raise DocsMcpError(
                        "the local embedding provider needs the extra: pip install 'docs-mcp[local]'"
                    ) from None
                try:
                    self._model = SentenceTransformer(str(self.folder), device=self.device, local_files_only=True)
                except Exception as exc:  # noqa: BLE001 - any load failure is the same problem for the user
                    raise DocsMcpError(f"could not load the embedding model from {self.folder}: {exc}") from None
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        import torch

        model = self.load()
        tokenizer = model.tokenizer
        lengths = [len(ids) for ids in tokenizer(list(texts), truncation=True, max_length=self.max_tokens)["input_ids"]]
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        groups: dict[int, list[int]] = {}
        for i, n in enumerate(lengths):
            groups.setdefault(_bucket(n, self.max_tokens), []).append(i)
        for bucket, indexes in sorted(groups.items()):
            for start in range(0, len(indexes), self.batch_size):
                batch = indexes[start : start + self.batch_size]
                features = tokenizer(
                    [texts[i] for i in batch],
                    padding="max_length",
                    truncation=True,
                    max_length=bucket,
                    return_tensors="pt",
                )
                features = {k: v.to(self.device) for k, v in features.items()}
                with torch.inference_mode():
                    vectors = model(features)["sentence_embedding"]
                    if self.normalize:
                        vectors = torch.nn.functional.normalize(vectors, dim=1)
                out[batch] = vectors.float().cpu().numpy()
        return out

    def close(self) -> None:
        self._model = None
