from docs_mcp_core.chunking.chunker import chunk_markdown
from docs_mcp_core.chunking.ids import SlugRegistry, slugify
from docs_mcp_core.corpus.manifest import Strategy

H2 = Strategy(chunk_by="h2")


def ids(body: str, strategy: Strategy = H2, path: str = "doc.md") -> list[str]:
    return [c.chunk_id for c in chunk_markdown(path, body, strategy)]


def test_slug_rules() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Spaces   and--hyphens  ") == "spaces-and-hyphens"
    assert slugify("C++ & Rust: a (short) guide") == "c-rust-a-short-guide"
    assert slugify("__private_thing") == "privatething"
    assert slugify("Ünïcödé café") == "ncd-caf"  # non-ASCII letters are dropped, as in the reference
    assert slugify("日本語") == "section"
    assert slugify("-trim-") == "trim"


def test_slug_of_inline_code_and_links_uses_their_text() -> None:
    body = "# Top\n\n## The `createLink()` method\n\n## See [the docs](https://x.example/a?b=c)\n\n## ![logo](l.png) Brand\n"
    assert ids(body) == [
        "doc.md#_preamble",
        "doc.md#top/the-createlink-method",
        "doc.md#top/see-the-docs",
        "doc.md#top/logo-brand",
    ]


def test_html_in_heading_is_not_part_of_the_slug() -> None:
    assert ids("## Last <b>bold</b> &amp; done\n") == ["doc.md#last-bold-done"]


def test_leading_underscore_cannot_collide_with_preamble() -> None:
    assert ids("intro\n\n## _preamble\n") == ["doc.md#_preamble", "doc.md#preamble"]


def test_duplicates_are_numbered_per_parent() -> None:
    body = "# A\n## Examples\n## Examples\n## Examples\n# B\n## Examples\n"
    assert ids(body) == [
        "doc.md#_preamble",
        "doc.md#a/examples",
        "doc.md#a/examples-2",
        "doc.md#a/examples-3",
        "doc.md#b/examples",
    ]


def test_duplicate_parent_headings_keep_children_apart() -> None:
    body = "# Guide\n## Setup\n# Guide\n## Setup\n"
    assert ids(body) == ["doc.md#_preamble", "doc.md#guide/setup", "doc.md#guide-2/setup"]


def test_suffix_never_collides_with_a_real_heading() -> None:
    registry = SlugRegistry()
    assert [registry.claim((), s) for s in ["foo", "foo", "foo-2", "foo"]] == ["foo", "foo-2", "foo-2-2", "foo-3"]


def test_h2_before_any_h1_stands_alone() -> None:
    assert ids("## Install\n\ntext\n\n# Title\n\n## Use\n") == ["doc.md#install", "doc.md#title/use"]


def test_empty_heading_gets_a_placeholder_slug() -> None:
    assert ids("## \n\ntext\n") == ["doc.md#section"]
