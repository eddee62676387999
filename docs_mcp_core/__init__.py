"""docs-mcp core: chunking, embedding, indexing and search of Markdown docs.

This package must never import dagster: the MCP server depends on it alone. Importing it changes
nothing in the importing process; docs-mcp's own processes set themselves up (process.py).
"""

__version__ = "0.1.0"
