"""A chunk's embedding fingerprint: what decides whether a cached vector can be reused (seed 000)."""

from __future__ import annotations

import hashlib

# Bump when the embedding input or its passages change (embedding/input.py): every cached vector becomes invalid.
# 2: heading path first, code blocks after the prose; 3: passages (a vector per window of a long chunk)
EMBEDDING_FORMAT_VERSION = "3"


def passage_fingerprint(text: str, config_fingerprint: str) -> str:
    """The cache key of one passage: the exact text the provider embeds, under its config."""
    payload = "\0".join([EMBEDDING_FORMAT_VERSION, config_fingerprint, text])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def passages_key(config_fingerprint: str) -> str:
    """Names what a build state's recorded passage fingerprints were made under: the same key, the same
    fingerprints for the same chunk (a file reused unchanged keeps its chunks byte for byte)."""
    return hashlib.sha256(f"passages\0{EMBEDDING_FORMAT_VERSION}\0{config_fingerprint}".encode()).hexdigest()


def config_fingerprint(**fields: object) -> str:
    """Stable sha256 of the settings that change vector output (keys sorted, None kept)."""
    text = "\0".join(f"{k}={fields[k]}" for k in sorted(fields))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
