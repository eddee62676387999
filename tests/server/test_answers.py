"""Answers that fit: max_chars on get_doc and search_docs, cut at block boundaries with a pointer to the rest."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from mcp import Client

from docs_mcp_core.search.answers import CONTEXT_CHARS
from docs_mcp_core.server import create_server

from ..conftest import EXAMPLE_DOCS, write
from .conftest import build_index

pytestmark = pytest.mark.anyio
NOTE = re.compile(r"\n\n\[trimmed: (\d+) more characters of this chunk; next: get_doc (\{.*\})\]$")
BIG = "longreads/big.md#big-guide/setup"


def big_guide() -> str:
    """A guide whose Setup section (one chunk) has paragraphs, a list and a 40-line code block."""
    para = (
        "The client keeps one connection pool per process and reuses it for every request, so create it "
        "once at start-up and pass it around rather than building a new one per call. "
    )
    items = "\n".join(
        f"- Step {i}: set `option_{i}` before the first request; it cannot change later." for i in range(8)
    )
    code = "\n".join(
        f"client.configure(option_{i}={i}, retries={i % 3})  # line {i} of the setup script" for i in range(40)
    )
    before = "Intro paragraph: what the parcel SDK needs before it can send requests.\n\n## Next"
    return (
        f"# Big guide\n\n{before}\n\nA short neighbour before the big section.\n\n## Setup\n\n{para * 3}\n\n"
        f"{items}\n\n```python\n{code}\n```\n\n{para * 2}\n\n## Teardown\n\n{para * 50}\n"
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("answers")
    docs = root / "docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    write(docs, "longreads/.docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h2", "max_chunk_size": 20000}}')
    write(docs, "longreads/big.md", big_guide())
    return build_index(docs, root / "index")


@pytest.fixture
def client(index: Path) -> Client:
    return Client(create_server(index).server)


async def text_of(client: Client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.startswith("```")) % 2 == 0


async def test_trimmed_get_doc_reads_on_block_by_block_to_the_end(client: Client) -> None:
    async with client:
        whole = (await text_of(client, "get_doc", chunk_id=BIG)).split("\n", 1)[1]
        assert len(whole) > 3000 and "[trimmed" not in whole
        pieces, arguments, reads = [], {"chunk_id": BIG, "max_chars": 1200}, 0
        while arguments and reads < 20:
            answer = await text_of(client, "get_doc", **arguments)
            reads += 1
            assert len(answer) <= 1200, answer
            assert fences_balanced(answer), answer
            note = NOTE.search(answer)
            body = answer[: note.start()] if note else answer
            pieces.append(body.split("\n", 1)[1])
            if note:
                arguments = json.loads(note.group(2))
                assert arguments["chunk_id"] == BIG and arguments["max_chars"] == 1200
                end = arguments["offset"]
                assert int(note.group(1)) == len(whole) - end
                following = whole[end:].split("\n", 1)[0]  # the rest starts a block, or a line inside the fence
                assert whole[end - 1] == "\n" and (
                    whole[end - 2] == "\n" or following.startswith(("- ", "```")) or "client.configure" in following
                ), following
            else:
                arguments = None
        assert 3 <= reads < 20
        assert pieces[0].startswith("## Setup") and pieces[0].endswith("it cannot change later.")  # between list items
        assert "- Step 7" not in pieces[0] and any(p.startswith("```python\n") for p in pieces[1:])

        # every line of the chunk is shown once, in order (re-opened/closed fences and blank lines aside)
        def lines(text: str) -> list[str]:
            return [line for line in text.splitlines() if line.strip() and not line.startswith("```")]

        assert [line for piece in pieces for line in lines(piece)] == lines(whole)


async def test_a_trimmed_code_block_is_closed_and_reopened(client: Client) -> None:
    async with client:
        whole = (await text_of(client, "get_doc", chunk_id=BIG)).split("\n", 1)[1]
        inside = whole.index("client.configure(option_20")
        answer = await text_of(client, "get_doc", chunk_id=BIG, offset=inside, max_chars=800)
        assert answer.split("\n", 2)[1] == "```python"  # the fence it starts inside is re-opened
        assert fences_balanced(answer) and len(answer) <= 800
        assert answer.splitlines()[0].endswith(f"(from character {inside} of {len(whole)}) ---")


async def test_context_neighbours_left_out_name_the_next_call(client: Client) -> None:
    async with client:
        answer = await text_of(client, "get_doc", chunk_id="longreads/big.md#big-guide/next", context=1, max_chars=600)
        assert len(answer) <= 600
        assert answer.count("--- Chunk:") == 2  # the target and the short preamble before it
        assert answer.endswith(
            f'[trimmed: 1 more context chunk left out ({BIG}); next: get_doc {{"chunk_id": "{BIG}"}}]'
        )
        default = await text_of(
            client, "get_doc", chunk_id=BIG, context=2
        )  # no max_chars: neighbours share CONTEXT_CHARS
        assert "big-guide/teardown (Chunk" not in default and "big-guide/next (Chunk" in default
        assert default.endswith('next: get_doc {"chunk_id": "longreads/big.md#big-guide/teardown"}]')
        assert len(default) - len((await text_of(client, "get_doc", chunk_id=BIG)).rstrip()) < CONTEXT_CHARS + 200


async def test_hits_carry_chars_and_a_budget_drops_hits_with_a_cursor(client: Client) -> None:
    async with client:
        full = json.loads(await text_of(client, "search_docs", query="retries", limit=10))
        assert "trimmed" not in full and len(full["hits"]) == 10
        top = full["hits"][0]
        assert top["chars"] == len((await text_of(client, "get_doc", chunk_id=top["chunk_id"])).split("\n", 1)[1])
        small = await text_of(client, "search_docs", query="retries", limit=10, max_chars=1500)
        page = json.loads(small)
        assert len(small) <= 1500 and 1 <= len(page["hits"]) < 10
        assert page["hits"] == full["hits"][: len(page["hits"])]
        assert page["trimmed"]["dropped_hits"] == 10 - len(page["hits"])
        rest = json.loads(await text_of(client, "search_docs", query="retries", limit=10, cursor=page["next_cursor"]))
        assert rest["hits"][0]["chunk_id"] == full["hits"][len(page["hits"])]["chunk_id"]
        tiny = json.loads(await text_of(client, "search_docs", query="retries", limit=3, max_chars=500))
        assert len(tiny["hits"]) == 1 and tiny["trimmed"]["dropped_hits"] == 2


async def test_a_chunk_that_fits_the_budget_whole_is_not_trimmed(client: Client) -> None:
    chunk_id = "guides/retries.md#retries-and-timeouts/exponential-backoff-with-jitter"
    async with client:
        whole = await text_of(client, "get_doc", chunk_id=chunk_id)
        budget = len(whole) + 20  # room for the answer, not for a trimmed note as well
        assert await text_of(client, "get_doc", chunk_id=chunk_id, max_chars=budget) == whole
