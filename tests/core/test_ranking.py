"""Ranking quality on real LanceDB indexes: identifier sub-words, language, duplicates, priors, determinism."""

from pathlib import Path

import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import SearchError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.derived_fields import code_languages, content_digest, navigation_share, subwords
from docs_mcp_core.search import Weights, run_search

SDK_PAGE = """# Links

## linksCreate

Call `linksCreate` with a destination URL. It returns the new `LinkSchema`.

```typescript
const result = await dub.linksCreate({ url: "https://example.com" });
```

## linksDelete

Call `linksDelete` with the ID of the link to remove. It returns the deleted ID; deleting an ID that
does not exist raises `NotFound`.
"""

GUIDE_PAGE = """# Working with links

## Links and create permissions

Links belong to a workspace. To create links you need the links create permission;
links you create are visible to the workspace. Create links from the dashboard or the API:
the API is described on the links reference page, and links can create analytics events.
"""

README = """# Acme SDK

## Installation

Install the Acme SDK with your package manager and import the client to begin sending requests.
The client reads its API key from the ACME_API_KEY environment variable.
"""

GUIDES_INDEX = """# Guides

- [Retry failed requests](retries.md): retry failed requests with backoff
- [Verify webhook signatures](webhooks.md): check that an event really comes from us
- [Paginate list results](pagination.md): walk through long lists page by page
- [Upload large files](uploads.md): send files in parts and resume an upload
"""

RETRIES_GUIDE = """# Retries

## Exponential backoff

When a request fails with a network error or a 5xx status, the client sends it again, up to three
times, waiting longer before each attempt. Set `max_retries` on the client to change how often to
retry; a request rejected as invalid is never sent again, since it would fail the same way.
"""

LIMITS_PAGE = """# Limits

## Rate limits

Rate limits are per API key. See the rate limits guide for rate limits per plan.

## Handling rate limits

When a client sends too many requests in a minute, the API answers 429 Too Many Requests with a
`Retry-After` header that says how many seconds to wait. Back off for that long, then send the request
again; the rate limits reset every minute, and a workspace can ask for higher rate limits.
"""

INSTALL_GUIDE = """# Installing

## Installation options

Installation of the Acme SDK works offline too: download the archive and install it from the file.
"""


def _build(docs: Path, out: Path) -> Path:
    build(docs, out, make_provider(ProviderSettings("none")))
    return out


def _write_docs(docs: Path, pages: dict[str, str]) -> Path:
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text)
    return docs


def _same_on_two_builds(docs: Path, out: Path, again: Path, *queries: str) -> None:
    """Two builds of the same docs rank every query alike, to the score, and a repeated search (warm) as the first."""
    first, second = _build(docs, out), _build(docs, again)
    for query in queries:
        hits = run_search(first, query, limit=20, hybrid=False).hits
        assert [(h["chunk_id"], h["score"]) for h in hits] == [
            (h["chunk_id"], h["score"]) for h in run_search(second, query, limit=20, hybrid=False).hits
        ]
        assert hits == run_search(first, query, limit=20, hybrid=False).hits


def _ids(
    out: Path, query: str, filters: dict | None = None, limit: int = 10, weights: Weights | None = None
) -> list[str]:
    return [
        h["chunk_id"] for h in run_search(out, query, filters=filters, limit=limit, hybrid=False, weights=weights).hits
    ]


def _drop_columns(out: Path, names: list[str]) -> None:
    """Drop columns from a built table and pin that version: a table without what its schema_version promises."""
    import json

    import lancedb

    table = lancedb.connect(str(out / ".lancedb")).open_table("chunks")
    table.drop_columns(names)
    meta_file = out / "metadata.json"
    meta = json.loads(meta_file.read_text())
    meta["index"]["version"] = table.version
    meta_file.write_text(json.dumps(meta))


@pytest.fixture
def sdk_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sdks").mkdir(parents=True)
    (docs / "guides").mkdir()
    (docs / "sdks" / "links.md").write_text(SDK_PAGE)
    (docs / "guides" / "links.md").write_text(GUIDE_PAGE)
    return docs


def test_fields_split_identifiers_and_normalize_fence_languages() -> None:
    assert (
        subwords("call linksCreate or CreateLinkRequestBody; see HTTPClient, sha256 and SDKs")
        == "links Create Create Link Request Body HTTP Client"
    )
    assert code_languages("```py\nx\n```\n  ```TS title=a.ts\ny\n```\n~~~golang\nz\n~~~\n```bash\n```\n```\n```") == [
        "go",
        "python",
        "shell",
        "typescript",
    ]


def test_plain_words_find_a_camel_case_identifier(sdk_docs: Path, tmp_path: Path) -> None:
    out = _build(sdk_docs, tmp_path / "out")
    # "create link" shares no whole token with `linksCreate`: only the sub-word field connects them
    for query in ("create link", "create a link", "links create"):
        ids = _ids(out, query)
        assert "sdks/links.md#links/linkscreate" in ids[:2], (query, ids)
        assert ids.index("sdks/links.md#links/linkscreate") < ids.index("sdks/links.md#links/linksdelete")


def test_exact_identifier_query_ranks_the_exact_match_first(sdk_docs: Path, tmp_path: Path) -> None:
    out = _build(sdk_docs, tmp_path / "out")
    # the guide says "links" and "create" many times; the exact identifier still wins
    assert _ids(out, "linksCreate")[0] == "sdks/links.md#links/linkscreate"
    assert _ids(out, "linksDelete")[0] == "sdks/links.md#links/linksdelete"
    # the other way: an identifier the docs never spell finds its sub-words as plain words
    assert "sdks/links.md#links/linksdelete" in _ids(out, "linkRemove")


def test_language_filter_puts_the_languages_own_section_above_global_guides(example_docs: Path, tmp_path: Path) -> None:
    out = _build(example_docs, tmp_path / "out")
    go = _ids(out, "how do I retry a failed request", {"language": "go"}, limit=10)
    retries = go.index("sdks/go/README.md#parcelly-go-sdk/configuring-retries-and-timeouts")
    assert retries < 3 and all(not i.startswith("guides/") for i in go[:retries]), go
    assert any(i.startswith("guides/retries.md") for i in go)  # auto-include keeps the guides reachable
    python = _ids(out, "verify webhook signature", {"language": "python"}, limit=5)
    assert python[0] == "sdks/python/webhooks.md#webhooks-in-python/verify-and-parse-an-event"


def test_duplicated_pages_take_one_place_in_the_top_five(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for folder in ("packages/acme", "docs/sdk"):
        (docs / folder).mkdir(parents=True)
        (docs / folder / "README.md").write_text(README)
    (docs / "install.md").write_text(INSTALL_GUIDE)
    out = _build(docs, tmp_path / "out")
    top = _ids(out, "install the Acme SDK", limit=5)
    readmes = [i for i in top if i.endswith("README.md#acme-sdk/installation")]
    assert len(readmes) == 1, top
    assert "install.md#installing/installation-options" in top


USAGE_BODY = """Create a client with your API key, then call `shipments.create` with the parcel's weight and
the destination address. The call returns the shipment with its tracking number.
"""


def test_the_same_text_under_other_headings_takes_one_place_in_the_top_five(tmp_path: Path) -> None:
    # a generated README embeds USAGE.md under a heading of its own; to a reader they are one text
    docs = _write_docs(
        tmp_path / "docs",
        {
            "README.md": f"# Acme SDK\n\n## SDK Example Usage\n\n{USAGE_BODY}",
            "USAGE.md": USAGE_BODY,
            "install.md": INSTALL_GUIDE,
        },
    )
    out = _build(docs, tmp_path / "out")
    top = _ids(out, "create a shipment with a tracking number", limit=5)
    copies = [i for i in top if i in ("README.md#acme-sdk/sdk-example-usage", "USAGE.md#_preamble")]
    assert len(copies) == 1, top


def test_content_digest_ignores_headings_only_when_the_text_says_enough() -> None:
    body = "The unique IDs of the tags assigned to the short link, in the order given."
    assert content_digest("TagIds", f"# TagIds\n\n{body}", f"TagIds\n\n{body}") == content_digest(
        "UpsertLinkTagIds", f"# `UpsertLinkTagIds`\n\n{body}", f"UpsertLinkTagIds\n\n{body.upper()}  "
    )
    short = "Coming soon."
    assert content_digest("Python", f"## Python\n\n{short}", f"Python\n\n{short}") != content_digest(
        "Go", f"## Go\n\n{short}", f"Go\n\n{short}"
    )
    assert content_digest("Python", f"## Python\n\n{short}", f"Python\n\n{short}") == content_digest(
        "Python", f"## Python\n\n{short}", f"python\n {short}"
    )
    assert content_digest("A", f"# A\n\n{body}", f"A\n\n{body}") != content_digest(
        "A", f"# A\n\n{body}x", f"A\n\n{body}x"
    )
    # a sub-heading's markup is not in content_text: `retryConfig` there reads retryConfig
    assert content_digest(
        "Retries",
        f"## Retries\n\n### `retryConfig` in [the client](client.md)\n\n{body}",
        f"Retries\n\nretryConfig in the client\n\n{body}",
    ) == content_digest("Retry", f"## Retry\n\n{body}", f"Retry\n\n{body}")


@pytest.mark.slow
def test_ranking_is_identical_on_two_separate_builds(example_docs: Path, tmp_path: Path) -> None:
    first, second = _build(example_docs, tmp_path / "a"), _build(example_docs, tmp_path / "b")
    queries = [
        ("create a shipment", None),
        ("how do I retry a failed request", {"language": "go"}),
        ("WithMaxRetries", None),
        ("verify webhook signature", {"language": "python"}),
    ]
    for query, filters in queries:
        a = run_search(first, query, filters=filters, limit=20, hybrid=False).hits
        b = run_search(second, query, filters=filters, limit=20, hybrid=False).hits
        assert [(h["chunk_id"], h["score"]) for h in a] == [(h["chunk_id"], h["score"]) for h in b]
        assert a == run_search(first, query, filters=filters, limit=20, hybrid=False).hits  # warm = cold


def test_a_table_without_the_derived_fields_is_refused_naming_the_rebuild(sdk_docs: Path, tmp_path: Path) -> None:
    """Every table of one schema_version has the derived columns: one without them is damaged, not older."""
    out = _build(sdk_docs, tmp_path / "out")
    _drop_columns(out, ["content_subwords", "code_languages", "content_digest", "content_chars"])
    with pytest.raises(SearchError, match=f"cannot be read .*`docs-mcp build --docs-dir DOCS --index {out}`"):
        _ids(out, "linksCreate")


def test_navigation_share_measures_link_led_list_items() -> None:
    assert navigation_share(GUIDES_INDEX) > 0.8
    assert navigation_share(RETRIES_GUIDE) == 0.0
    # links inside prose, a list of plain items, links in a code block: not navigation
    assert navigation_share("See [retries](retries.md) for [backoff](b.md).\n\n- one item\n- [two](t.md) items") < 0.3
    assert navigation_share("```md\n- [a](a.md)\n- [b](b.md)\n```\n") == 0.0
    # nested links under a plain label, and links inside emphasis, count; the label does not
    assert navigation_share("- Guides\n  - [Retries](r.md)\n  - **[Webhooks](w.md)**\n") > 0.6


@pytest.fixture
def guide_docs(tmp_path: Path) -> Path:
    return _write_docs(
        tmp_path / "docs", {"index.md": GUIDES_INDEX, "retries.md": RETRIES_GUIDE, "limits.md": LIMITS_PAGE}
    )


RETRY_SECTION = "retries.md#retries/exponential-backoff"


def test_a_list_of_links_ranks_below_the_page_it_links_to(guide_docs: Path, tmp_path: Path) -> None:
    out = _build(guide_docs, tmp_path / "out")
    # the index repeats the query word for word in a short line: without the prior it ranks first
    assert _ids(out, "retry failed requests", weights=Weights(navigation=0.0))[0] == "index.md#_preamble"
    ranked = _ids(out, "retry failed requests")
    assert ranked[0] == RETRY_SECTION and "index.md#_preamble" in ranked, ranked  # lower, still found


def test_a_very_short_chunk_does_not_outrank_a_fuller_section(guide_docs: Path, tmp_path: Path) -> None:
    out = _build(guide_docs, tmp_path / "out")
    # "Rate limits" says the words three times in 80 characters: BM25 alone puts it first
    assert _ids(out, "rate limits", weights=Weights(text_short=0))[0] == "limits.md#limits/rate-limits"
    assert _ids(out, "rate limits")[0] == "limits.md#limits/handling-rate-limits"


def test_the_priors_are_deterministic(guide_docs: Path, tmp_path: Path) -> None:
    _same_on_two_builds(
        guide_docs, tmp_path / "a", tmp_path / "b", "retry failed requests", "rate limits", "webhook signatures"
    )


def test_a_table_without_the_navigation_column_is_refused_naming_the_rebuild(guide_docs: Path, tmp_path: Path) -> None:
    out = _build(guide_docs, tmp_path / "out")
    _drop_columns(out, ["navigation"])
    with pytest.raises(SearchError, match=f"cannot be read .*`docs-mcp build --docs-dir DOCS --index {out}`"):
        _ids(out, "retry failed requests")
