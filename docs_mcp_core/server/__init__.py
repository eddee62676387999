"""The docs-mcp MCP server: search_docs, get_doc and prompts over stdio or streamable HTTP."""

from .app import DocsServer, ServedCorpus, create_server, serve_stdio, serve_then_exit

__all__ = ["DocsServer", "ServedCorpus", "create_server", "serve_stdio", "serve_then_exit"]
