"""docs-mcp core: chunking, embedding, indexing and search of Markdown docs.

This package must never import dagster: the MCP server depends on it alone.
"""

import os

# LanceDB's Rust logger reads this once, at import: keep its chatter out of our stderr.
os.environ.setdefault("LANCEDB_LOG", "error")

from .lazy_imports import install as _defer_namespace_client

_defer_namespace_client()  # ~0.4 s off `import lancedb` (lazy_imports.py)

__version__ = "0.1.0"
