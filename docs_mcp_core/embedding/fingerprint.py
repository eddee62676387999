"""A chunk's embedding fingerprint: what decides whether a cached vector can be reused (seed 000)."""

from __future__ import annotations

import hashlib

from ..models import Chunk
from .input import to_embedding_input

# Bump when to_embedding_input changes: every cached vector becomes invalid.
EMBEDDING_FORMAT_VERSION = "2"  # 2: heading path first, code blocks after the prose


def compute_fingerprint(chunk: Chunk, config_fingerprint: str) -> str:
    payload = "\0".join([EMBEDDING_FORMAT_VERSION, config_fingerprint, to_embedding_input(chunk)])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def config_fingerprint(**fields: object) -> str:
    """Stable sha256 of the settings that change vector output (keys sorted, None kept)."""
    text = "\0".join(f"{k}={fields[k]}" for k in sorted(fields))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
