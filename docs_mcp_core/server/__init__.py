"""The docs-mcp MCP server: search_docs, get_doc and prompts over stdio or streamable HTTP.

Names load on first use: a stdio server never imports the HTTP transport.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..exports import lazy

if TYPE_CHECKING:
    from .app import CORPUS_NAME, DocsServer, ServedCorpus, check_corpora, create_server, serve_stdio, serve_then_exit
    from .http import HttpLimits, check_token, serve_http

_HOMES = {
    "CORPUS_NAME": ".app",
    "DocsServer": ".app",
    "ServedCorpus": ".app",
    "check_corpora": ".app",
    "create_server": ".app",
    "serve_stdio": ".app",
    "serve_then_exit": ".app",
    "HttpLimits": ".http",
    "check_token": ".http",
    "serve_http": ".http",
}
__all__ = [
    "CORPUS_NAME",
    "DocsServer",
    "HttpLimits",
    "ServedCorpus",
    "check_corpora",
    "check_token",
    "create_server",
    "serve_http",
    "serve_stdio",
    "serve_then_exit",
]
__getattr__ = lazy(__name__, _HOMES)
