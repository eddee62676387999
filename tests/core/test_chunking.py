import re

import pytest

from docs_mcp_core.chunking.chunker import chunk_markdown
from docs_mcp_core.corpus.manifest import Strategy
from docs_mcp_core.corpus.markdown import parser

H2 = Strategy(chunk_by="h2")


def chunks(body: str, strategy: Strategy = H2, path: str = "doc.md"):
    return chunk_markdown(path, body, strategy, {"k": "v"})


def test_fields_of_a_simple_file() -> None:
    body = "# Links\n\nIntro with **bold** and a [link](https://x.example).\n\n## Create\n\nMake one.\n\n### Options\n\nMore.\n"
    pre, create = chunks(body)
    assert pre.chunk_id == "doc.md#_preamble"
    assert (pre.heading, pre.heading_level, pre.breadcrumb) == ("Links", 1, "doc.md > Links")
    assert pre.content == "# Links\n\nIntro with **bold** and a [link](https://x.example)."
    assert pre.content_text == "Links\n\nIntro with bold and a link."
    assert create.chunk_id == "doc.md#links/create"
    assert (create.heading, create.heading_level, create.breadcrumb) == ("Create", 2, "doc.md > Links > Create")
    assert create.content == "## Create\n\nMake one.\n\n### Options\n\nMore."
    assert [pre.chunk_index, create.chunk_index] == [0, 1]
    assert create.metadata == {"k": "v"}


def test_content_is_the_source_as_written() -> None:
    body = "## A\n\n* one\n* two\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n[ref]: https://example.com\n\n## B\n\ntext\n"
    a, b = chunks(body)
    assert a.content in body and b.content in body
    assert "[ref]: https://example.com" in a.content  # link definitions are never dropped


def test_headings_in_code_html_quotes_and_lists_do_not_split() -> None:
    body = (
        "## Real\n\n```md\n## not a heading\n```\n\n    ## indented code\n\n"
        "<div>\n\n## inside html? no: a blank line ends the html block\n\n</div>\n\n"
        "> ## quoted heading\n\n- ## list heading\n\n<details>\n## html heading\n</details>\n"
    )
    got = [c.chunk_id for c in chunks(body)]
    # The heading after a blank line inside <div> is real CommonMark; the others are not.
    assert got == ["doc.md#real", "doc.md#inside-html-no-a-blank-line-ends-the-html-block"]


def test_setext_headings_split() -> None:
    body = "Title\n=====\n\nintro\n\nSection One\n-----------\n\nbody\n"
    got = chunks(body)
    assert [c.chunk_id for c in got] == ["doc.md#_preamble", "doc.md#title/section-one"]
    assert got[1].heading == "Section One"


def test_empty_and_blank_files_have_no_chunks() -> None:
    assert chunks("") == []
    assert chunks("\n\n   \n") == []


def test_file_without_split_heading_is_one_preamble_chunk() -> None:
    (only,) = chunks("# Usage\n\nSome text.\n\n### Deep\n\nmore\n")
    assert only.chunk_id == "doc.md#_preamble"
    assert only.breadcrumb == "doc.md > Usage"


@pytest.mark.parametrize(
    "chunk_by, expected",
    [
        ("h1", ["doc.md#_preamble", "doc.md#a", "doc.md#b"]),
        ("h2", ["doc.md#_preamble", "doc.md#a/a1", "doc.md#b/b1"]),
        ("h3", ["doc.md#_preamble", "doc.md#a/a1/deep", "doc.md#b/b1/deep"]),
        ("file", ["doc.md"]),
    ],
)
def test_chunk_by_levels(chunk_by: str, expected: list[str]) -> None:
    body = "intro\n\n# A\n\n## A1\n\n### Deep\n\nx\n\n# B\n\n## B1\n\n### Deep\n\ny\n"
    assert [c.chunk_id for c in chunks(body, Strategy(chunk_by=chunk_by))] == expected


def test_shallower_heading_with_text_starts_its_own_chunk() -> None:
    body = (
        "# Webhooks\n\nintro\n\n## Verifying\n\n### Header\n\nsig\n\n### Replay\n\nold events\n\n"
        "## Testing locally\n\nuse the CLI\n\n## Bare\n\n### Under bare\n\nx\n"
    )
    got = {c.chunk_id: c for c in chunks(body, Strategy(chunk_by="h3"))}
    assert list(got) == [
        "doc.md#_preamble",
        "doc.md#webhooks/verifying/header",
        "doc.md#webhooks/verifying/replay",
        "doc.md#webhooks/testing-locally",
        "doc.md#webhooks/bare/under-bare",
    ]
    testing = got["doc.md#webhooks/testing-locally"]
    assert (testing.heading, testing.heading_level, testing.breadcrumb) == (
        "Testing locally",
        2,
        "doc.md > Webhooks > Testing locally",
    )
    assert "use the CLI" not in got["doc.md#webhooks/verifying/replay"].content
    assert got["doc.md#webhooks/verifying/replay"].content.endswith("## Bare") is False
    # A bare shallower heading (no text before the next split-level heading) stays with the chunk before it,
    # as in the reference, so dub-ts IDs are unchanged.
    assert got["doc.md#webhooks/testing-locally"].content.endswith("## Bare")


def test_chunk_by_file_uses_the_title() -> None:
    (only,) = chunk_markdown("m/user.md", "# User\n\n## Fields\n\nx\n", Strategy(chunk_by="file"), title="The User")
    assert (only.chunk_id, only.heading, only.breadcrumb) == ("m/user.md", "The User", "m/user.md > The User")


def _assert_valid_parts(parts, limit: int) -> None:
    for part in parts:
        assert len(part.content) <= limit, (part.chunk_id, len(part.content))
        fences = re.findall(r"^```", part.content, flags=re.MULTILINE)
        assert len(fences) % 2 == 0, f"unbalanced fence in {part.chunk_id}"


def test_oversized_section_splits_at_next_heading_level_first() -> None:
    sub = "\n\n".join(f"### Sub {i}\n\n" + ("word " * 60).strip() for i in range(8))
    body = "## Big\n\nintro\n\n" + sub + "\n"
    parts = chunks(body, Strategy(chunk_by="h2", max_chunk_size=1000))
    assert [p.chunk_id for p in parts][:2] == ["doc.md#big", "doc.md#big-part-2"]
    _assert_valid_parts(parts, 1000)
    for part in parts[1:]:
        assert part.content.startswith("### Sub "), part.content[:40]
        assert part.breadcrumb.startswith("doc.md > Big > Sub ")
        assert part.heading == "Big"
    assert "".join(p.content for p in parts).count("### Sub") == 8


def test_huge_code_block_is_split_with_fences_reopened() -> None:
    code = "\n".join(f"line_{i} = compute({i})  # comment" for i in range(400))
    body = f"## Code\n\n```python\n{code}\n```\n\nafter\n"
    parts = chunks(body, Strategy(chunk_by="h2", max_chunk_size=2000))
    assert len(parts) > 5
    _assert_valid_parts(parts, 2000)
    for part in parts:
        assert part.content.count("```python") == 1 or "after" in part.content
        tokens = parser().parse(part.content)
        assert any(t.type == "fence" for t in tokens)
    joined = "\n".join(p.content for p in parts)
    assert all(f"line_{i} = compute({i})" in joined for i in range(400))
    assert "line_0 = compute(0)" in parts[0].content_text and "```" not in parts[1].content_text


def test_huge_table_repeats_its_header() -> None:
    rows = "\n".join(f"| field_{i} | string | description of field {i} |" for i in range(300))
    body = f"## Fields\n\n| Name | Type | Description |\n|---|---|---|\n{rows}\n"
    parts = chunks(body, Strategy(chunk_by="h2", max_chunk_size=3000))
    assert len(parts) > 3
    _assert_valid_parts(parts, 3000)
    for part in parts[1:]:
        assert part.content.startswith("| Name | Type | Description |\n|---|---|---|")
        assert any(t.type == "table_open" for t in parser().parse(part.content))
    sizes = [len(p.content) for p in parts]
    assert max(sizes) - min(sizes) < 600  # parts are balanced, no tiny tail


def test_huge_list_splits_between_items() -> None:
    items = "\n".join(f"- item {i}: " + "x" * 50 for i in range(200))
    parts = chunks(f"## List\n\n{items}\n", Strategy(chunk_by="h2", max_chunk_size=1500))
    assert len(parts) > 1
    _assert_valid_parts(parts, 1500)
    for part in parts[1:]:
        assert part.content.startswith("- item ")


def test_single_enormous_line_still_respects_the_bound() -> None:
    body = "## Wall\n\n" + " ".join(["lorem"] * 3000) + "\n"
    parts = chunks(body, Strategy(chunk_by="h2", max_chunk_size=1000))
    assert len(parts) > 1
    _assert_valid_parts(parts, 1000)
    assert sum(p.content.count("lorem") for p in parts) == 3000


def test_min_chunk_size_evens_out_a_tiny_part() -> None:
    body = "## S\n\n" + "intro " * 20 + "\n\n### A\n\n" + "\n\n".join("a" * 170 for _ in range(5)) + "\n\n### B\n\nb\n"
    plain = chunks(body, Strategy(chunk_by="h2", max_chunk_size=1000))
    assert [len(p.content) < 300 for p in plain] == [True, False]  # heading-level cut leaves a tiny part
    even = chunks(body, Strategy(chunk_by="h2", max_chunk_size=1000, min_chunk_size=300))
    assert len(even) == 2
    assert all(300 <= len(p.content) <= 1000 for p in even)
    assert "\n\n".join(p.content for p in even).count("a" * 170) == 5


def test_parts_are_the_fewest_possible_so_no_tail_could_merge_back() -> None:
    body = "## S\n\n" + "\n\n".join(f"para {i} " + "y" * (37 * i % 300) for i in range(60)) + "\n"
    parts = chunks(body, Strategy(chunk_by="h2", max_chunk_size=1200))
    assert len(parts) > 1
    _assert_valid_parts(parts, 1200)
    for a, b in zip(parts, parts[1:]):
        assert len(a.content) + 2 + len(b.content) > 1200


def test_chunking_is_deterministic() -> None:
    body = "# T\n\n" + "\n\n".join(f"## S{i}\n\n" + "text " * (i * 40) for i in range(20))
    first = [c.to_dict() for c in chunks(body, Strategy(chunk_by="h2", max_chunk_size=800))]
    second = [c.to_dict() for c in chunks(body, Strategy(chunk_by="h2", max_chunk_size=800))]
    assert first == second
