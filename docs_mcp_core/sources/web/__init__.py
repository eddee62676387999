"""Docs websites as sources: discovery (sitemap, llms.txt, crawl), polite conditional fetching,
HTML to Markdown, and staging each page as a Markdown file with its source URL."""

from ...errors import DocsMcpError


def require_web_extra() -> None:
    """A clear error, not a traceback, when the `web` extra (HTML to Markdown) is not installed."""
    try:
        import bs4  # noqa: F401
        import markdownify  # noqa: F401
    except ImportError as exc:
        raise DocsMcpError(
            f"website sources need the `web` extra ({exc.name} is not installed): pip install 'docs-mcp[web]'"
        ) from None
