"""`docs-mcp get CHUNK_ID`: the get_doc tool from the shell, answer for answer."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from docs_mcp_core.cli import main
from docs_mcp_core.server import create_server
from docs_mcp_core.server.tools import get_doc_schema

from ..reliability.clitools import docs_mcp

CHUNK = "guides/retries.md#retries-and-timeouts/exponential-backoff-with-jitter"
CASES = [
    {"chunk_id": CHUNK},
    {"chunk_id": CHUNK, "context": 2},
    {"chunk_id": CHUNK, "context": 1, "max_chars": 600},
    {"chunk_id": "guides/retries.md"},  # a file path: its first chunk and the list of its IDs
]


def get(index: Path, arguments: dict) -> tuple[int, str, str]:
    args = ["get", "--index", str(index), arguments["chunk_id"]]
    for name in ("context", "max_chars", "offset"):
        if name in arguments:
            args += [f"--{name.replace('_', '-')}", str(arguments[name])]
    done = CliRunner().invoke(main, args, catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def tool_answers(index: Path, calls: list[dict]) -> list[tuple[bool, str]]:
    """(is_error, text) of each get_doc call, through an MCP session with the server `serve` runs."""

    async def ask() -> list[tuple[bool, str]]:
        async with Client(create_server(index).server) as client:
            return [(r.is_error, r.content[0].text) for r in [await client.call_tool("get_doc", c) for c in calls]]

    return anyio.run(ask)


def test_get_prints_what_get_doc_returns(example_index: Path) -> None:
    answers = tool_answers(example_index, CASES)
    for arguments, (is_error, text) in zip(CASES, answers):
        assert not is_error, text
        code, out, err = get(example_index, arguments)
        assert code == 0, err
        assert out == text + "\n", arguments
    # read on where a [trimmed: …] note says, as the tool would
    pointer = json.loads(answers[2][1].rsplit("next: get_doc ", 1)[1].strip().removesuffix("]"))
    [(_, text)] = tool_answers(example_index, [pointer])
    assert get(example_index, pointer)[1] == text + "\n"


def test_an_unknown_chunk_is_the_tools_sentence_on_one_error_line(example_index: Path) -> None:
    arguments = {"chunk_id": "guides/retries.md#retries-and-timeouts/no-such-heading"}
    [(is_error, text)] = tool_answers(example_index, [arguments])
    assert is_error
    code, out, err = get(example_index, arguments)
    assert code == 1 and out == "" and err == f"error: {text}\n"


@pytest.mark.slow
def test_json_output_and_a_real_process(example_index: Path) -> None:
    done = docs_mcp("get", "--index", example_index, CHUNK, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["chunk_id"] == CHUNK
    assert answer["text"].startswith(f"--- Chunk: {CHUNK}")


def test_option_ranges_are_the_tools(example_index: Path) -> None:
    """The CLI's bounds are get_doc's schema bounds: a value the tool refuses, the CLI refuses too."""
    schema = get_doc_schema()["properties"]
    command = main.get_command(None, "get")  # type: ignore[arg-type]
    ranges = {p.name: p.type for p in command.params if p.name in ("context", "max_chars", "offset")}
    for name, kind in ranges.items():
        assert kind.min == schema[name]["minimum"] and kind.max == schema[name].get("maximum"), name
    code, _, err = get(example_index, {"chunk_id": "guides/retries.md", "max_chars": 499})
    assert code == 2 and "499" in err


def test_a_folder_that_is_no_index_is_one_error_line(tmp_path: Path) -> None:
    code, out, err = get(tmp_path / "nope", {"chunk_id": "a.md"})
    assert code == 1 and err.startswith("error: no index at") and err.count("\n") == 1
    assert not (tmp_path / "nope").exists()
