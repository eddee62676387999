"""reST parsing reuses docutils' nested list state machines (corpus/rst.py) without changing a page's Markdown."""

from pathlib import Path

import pytest

from docs_mcp_core.corpus import rst
from docs_mcp_core.corpus.walk import scan_corpus

REQUESTS = Path(__file__).parents[1] / "fixtures" / "requests-docs" / "docs"
LISTS = """Lists
=====

- one

  - nested, with a ``literal``

    1. deeper
    2. and deeper

- two

term
   its definition

   - a list inside it

:field: a field list
:other: - with a list

| a line block
|    indented

#. auto-numbered
#. again

(a) lettered
(b) too
"""


def pages() -> list[tuple[str, str]]:
    return [("lists.rst", LISTS)] + [
        (p.relative_to(REQUESTS).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(REQUESTS.rglob("*.rst"))
    ]


def markdown_of(items: list[tuple[str, str]]) -> list[str]:
    includes = scan_corpus(REQUESTS).includes
    return [rst.rst_to_markdown(text, rel, includes).markdown for rel, text in items]


def test_reused_list_machines_give_the_same_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    from docutils.parsers.rst import states

    items = pages()
    pooled = markdown_of(items) + markdown_of(items)  # the second pass runs on machines reused from the first
    assert getattr(states.RSTState.nested_list_parse, "_docs_mcp_pooled", False)
    original = states.RSTState.nested_list_parse.__wrapped__  # type: ignore[attr-defined]
    monkeypatch.setattr(states.RSTState, "nested_list_parse", original)
    fresh = markdown_of(items)
    assert pooled[: len(items)] == fresh and pooled[len(items) :] == fresh
    assert "1. deeper" in fresh[0] and "**term**" in fresh[0]


def test_a_second_parse_makes_no_new_nested_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    from docutils.parsers.rst import states

    markdown_of([("lists.rst", LISTS)])  # fills the pools
    made: list[object] = []
    init = states.NestedStateMachine.__init__

    def counting(self: object, *args: object, **kwargs: object) -> None:
        made.append(self)
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(states.NestedStateMachine, "__init__", counting)
    markdown_of([("lists.rst", LISTS)])
    assert made == []  # docutils alone makes one per list, definition list, field list and line block
