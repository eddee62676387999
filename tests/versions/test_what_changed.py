"""what_changed over chunk lists: by ID and content digest (not markup), renames matched by digest or
shingle similarity, size-split parts as one section, ranked by a query, within a size budget."""

from __future__ import annotations

import json
import random
from typing import Any

from docs_mcp_core.versions.changes import what_changed
from docs_mcp_core.versions.report import Budget, to_json, to_text

BODY = (
    "Create an engine once for the whole application and pass it to every session you open. "
    "The engine holds the connection pool, so creating one per request would waste connections."
)


def chunk(cid: str, heading: str, text: str, index: int = 0, content: str | None = None) -> dict[str, Any]:
    filepath = cid.split("#")[0]
    return {
        "chunk_id": cid,
        "filepath": filepath,
        "heading": heading,
        "heading_level": 2,
        "breadcrumb": f"{filepath} > {heading}",
        "content": content if content is not None else f"## {heading}\n\n{text}",
        "content_text": f"{heading}\n\n{text}",
        "chunk_index": index,
        "metadata": {},
    }


def kinds(found: Any) -> list[tuple[str, str]]:
    return [(c.kind, c.chunk_id) for c in found.changes]


def test_markup_is_no_change_and_text_is() -> None:
    old = [
        chunk(
            "a.md#guide/links", "Links", "Read the Python docs.", 0, "## Links\n\nRead the <a href='x'>Python docs</a>."
        ),
        chunk("a.md#guide/engine", "Engine", BODY, 1),
    ]
    new = [
        chunk("a.md#guide/links", "Links", "Read the Python docs.", 0, "## Links\n\nRead the [Python docs](x)."),
        chunk("a.md#guide/engine", "Engine", BODY.replace("once", "exactly once"), 1),
    ]
    found = what_changed(old, new)
    assert kinds(found) == [("changed", "a.md#guide/engine")]
    assert found.counts() == {"changed": 1, "renamed": 0, "added": 0, "removed": 0, "moved": 0, "unchanged": 1}
    entry = to_json(found, "1.0", "1.1")["changes"][0]
    assert entry["diff"].splitlines() == ["@@", " ", f"-{BODY}", f"+{BODY.replace('once', 'exactly once')}"]


def test_a_renamed_heading_and_a_moved_section() -> None:
    old = [
        chunk("a.md#old-title/engine", "Engine", BODY, 0),
        chunk("a.md#old-title/sessions", "Sessions", BODY + " Sessions.", 1),
    ]
    new = [
        chunk("a.md#new-title/engines", "Engines", BODY, 0),  # heading renamed, same text
        chunk("a.md#new-title/sessions", "Sessions", BODY + " Sessions.", 1),  # only its parent heading changed
    ]
    found = what_changed(old, new)
    assert kinds(found) == [("renamed", "a.md#new-title/engines")]
    change = found.changes[0]
    assert (change.old_chunk_id, change.similarity) == ("a.md#old-title/engine", 1.0)
    assert found.moved == [("a.md#old-title/sessions", "a.md#new-title/sessions")]
    text = to_text(found, "1.0", "2.0")
    assert "renamed  a.md#old-title/engine → a.md#new-title/engines, similarity 1.00" in text
    assert "    -Engine\n    +Engines" in text
    assert "moved (same heading and text, new ID):\n  a.md#old-title/sessions → a.md#new-title/sessions" in text


def test_similar_text_under_a_new_id_is_a_rename_and_different_text_is_not() -> None:
    edited = BODY.replace("whole application", "app")
    old = [chunk("a.md#engine", "Engine", BODY), chunk("b.md#pool", "Pool", "Connections are pooled per engine.")]
    new = [
        chunk("guide/a.md#the-engine", "The engine", edited),
        chunk("b.md#limits", "Limits", "Rate limits apply to every key."),
    ]
    found = what_changed(old, new)
    assert kinds(found) == [("removed", "b.md#pool"), ("added", "b.md#limits"), ("renamed", "guide/a.md#the-engine")]
    renamed = found.changes[2]
    assert renamed.old_chunk_id == "a.md#engine" and renamed.similarity is not None and 0.5 <= renamed.similarity < 1
    assert what_changed(old, new, threshold=0.99).counts()["renamed"] == 0


def test_size_split_parts_are_one_section() -> None:
    words = [f"word{i}" for i in range(60)]
    old = [
        chunk("a.md#big", "Big", " ".join(words[:30]), 0),
        chunk("a.md#big-part-2", "Big", " ".join(words[30:]), 1),
        chunk("a.md#tutorial-part-2", "Tutorial Part 2", BODY, 2),  # a heading whose slug ends in -part-2
    ]
    new = [  # one word added to part 1 pushes the split: both parts differ, the section changed once
        chunk("a.md#big", "Big", " ".join(["new", *words[:29]]), 0),
        chunk("a.md#big-part-2", "Big", " ".join(words[29:]), 1),
        chunk("a.md#tutorial-part-2", "Tutorial Part 2", BODY, 2),
    ]
    found = what_changed(old, new)
    assert kinds(found) == [("changed", "a.md#big")]
    assert found.unchanged == 1 and found.old_sections == 2


def test_a_query_ranks_the_changes() -> None:
    old = [chunk("a.md#engine", "Engine", BODY, 0), chunk("b.md#auth", "Auth", "Send the key in a header.", 0)]
    new = [
        chunk("a.md#engine", "Engine", BODY + " Dispose of the engine at shutdown.", 0),
        chunk("b.md#auth", "Auth", "Send the key in the Authorization header.", 0),
        chunk("c.md#webhooks", "Webhooks", "Webhooks are signed with the endpoint secret.", 0),
    ]
    plain = what_changed(old, new)
    assert [c.chunk_id for c in plain.changes] == ["a.md#engine", "b.md#auth", "c.md#webhooks"]
    ranked = what_changed(old, new, "authorization header")
    assert [c.chunk_id for c in ranked.changes][0] == "b.md#auth"
    assert ranked.changes[0].score > 0 and ranked.changes[-1].score == 0
    assert [c.chunk_id for c in what_changed(old, new, "webhook signing secret").changes][0] == "c.md#webhooks"
    assert (
        what_changed(old, new, "engine", rank=lambda q, cs: [float(len(cs) - i) for i in range(len(cs))])
        .changes[0]
        .score
        == 3
    )


def test_the_budget_cuts_diffs_and_then_lists_ids_only() -> None:
    long_code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(200)) + "\n```"
    old = [chunk(f"f{i}.md#s", "S", BODY + f" v{i}", 0) for i in range(5)]
    new = [chunk(f"f{i}.md#s", "S", BODY + f" w{i}", 0) for i in range(5)]
    new.append(chunk("g.md#code", "Code", "code", 0, content="## Code\n\n" + long_code))
    found = what_changed(old, new)
    doc = to_json(found, "1", "2", Budget(per_change=600, total=1300))
    detailed = [c for c in doc["changes"] if "diff" in c or "text" in c]
    assert 0 < len(detailed) < len(doc["changes"]) == 6
    assert all(c.get("detail_left_out") for c in doc["changes"][len(detailed) :])
    assert sum(len(c.get("diff", c.get("text", ""))) for c in doc["changes"]) <= 1300
    code = to_json(found, "1", "2", Budget(per_change=500, total=10_000))["changes"][-1]
    assert code["kind"] == "added" and len(code["text"]) <= 520 and code["lines_left_out"] > 150
    assert code["text"].count("```") == 2  # the cut code block is closed
    text = to_text(found, "1", "2", Budget(per_change=500, total=1300), read_more="docs-mcp get --index NEW {chunk_id}")
    assert "change(s) listed without their diff: the answer's size budget is spent" in text


def test_the_same_chunks_in_any_order_give_the_same_answer() -> None:
    old = [chunk(f"d{i % 3}.md#s{i}", f"S{i}", f"{BODY} {i}", i) for i in range(12)]
    new = [chunk(f"d{i % 3}.md#s{i}", f"S{i}", f"{BODY} {i * (i % 2)}", i) for i in range(2, 14)]
    first = json.dumps(to_json(what_changed(old, new, "engine pool"), "a", "b"))
    for seed in range(3):
        random.Random(seed).shuffle(old)
        random.Random(seed + 1).shuffle(new)
        assert json.dumps(to_json(what_changed(old, new, "engine pool"), "a", "b")) == first
