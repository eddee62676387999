"""`source: {url: ...}` in docs-mcp.yaml: crawl settings are checked like every other field."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.sources.config import load_config


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "docs-mcp.yaml"
    path.write_text(f"corpora:\n  - name: site\n    source: {source}\n")
    return path


def test_url_source_with_crawl_settings(tmp_path: Path) -> None:
    corpora = load_config(
        write(
            tmp_path,
            "{url: 'https://docs.example.com/guide/', max_pages: 50, "
            "llms_txt: txt, concurrency: 2, retries: 1, path_prefix: /guide/}",
        )
    )
    web = corpora.web_source("site")
    assert (web.url, web.max_pages, web.llms_txt, web.path_prefix) == (
        "https://docs.example.com/guide/",
        50,
        "txt",
        "/guide/",
    )
    assert (web.politeness.concurrency, web.politeness.retries) == (2, 1)


@pytest.mark.parametrize(
    "source, message",
    [
        ("{path: docs, max_pages: 5}", "max_pages apply to url sources only"),
        ("{url: 'docs.example.com'}", "url 'docs.example.com' must start with http:// or https://"),
        ("{url: 'http://[::1'}", "url 'http://[::1' is not a valid URL (Invalid IPv6 URL); give an http:// or"),
        ("{url: 'http://127.0.0.1:99999/'}", "is not a valid URL (Port out of range 0-65535)"),
        ("{url: 'https://x.org/', llms_txt: maybe}", "source.llms_txt: Input should be 'off', 'txt' or 'full'"),
        (
            "{url: 'https://x.org/', git: repo}",
            "set exactly one of 'path' (a local folder), 'git' (a repository) or 'url'",
        ),
    ],
)
def test_bad_url_source_is_one_clear_error(tmp_path: Path, source: str, message: str) -> None:
    with pytest.raises(DocsMcpError) as err:
        load_config(write(tmp_path, source))
    assert message in str(err.value)
