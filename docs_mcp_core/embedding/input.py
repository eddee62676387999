"""The one function that builds what a provider embeds; fingerprints hash the same text."""

from __future__ import annotations

from ..models import Chunk


def to_embedding_input(chunk: Chunk) -> str:
    return f"Context: {chunk.breadcrumb}\n\nContent:\n{chunk.content_text}"
