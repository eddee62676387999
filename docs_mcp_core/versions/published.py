"""The chunks of a built index (a folder or an s3:// URL), as `docs-mcp diff` compares them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DocsMcpError
from ..output.layout import CHUNKS, OutputLayout
from ..output.metadata import require_metadata
from ..output.objectstore import RemoteOutput, is_remote


def read_chunks(index: Path | str) -> list[dict[str, Any]]:
    """chunks.json of a published index; a path that is no index is the reading commands' one-line error
    (with the build command that makes one)."""
    if is_remote(index):
        remote = RemoteOutput.parse(str(index))
        remote.require_metadata()
        data = remote.read(CHUNKS)
        where: str = f"{str(index).rstrip('/')}/{CHUNKS}"
    else:
        require_metadata(Path(index))
        path = OutputLayout(index).chunks
        where = str(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = None
    if data is None:
        raise DocsMcpError(f"{where} is missing; rebuild the index")
    try:
        chunks = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise DocsMcpError(f"{where} is not valid JSON ({exc}); rebuild the index") from None
    if not isinstance(chunks, list) or not all(
        isinstance(c, dict) and isinstance(c.get("chunk_id"), str) for c in chunks
    ):
        raise DocsMcpError(f"{where} is not a list of chunks; rebuild the index")
    return chunks
