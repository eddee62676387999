"""`docs-mcp skill`: a SKILL.md in the Agent Skills format whose commands, run as written, search and read
the index."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from docs_mcp_core.cli import main

from ..conftest import write
from .conftest import build_index

# The Agent Skills format (https://agentskills.io/specification; Anthropic's "Agent Skills" overview
# and best practices): YAML frontmatter with `name` (1-64 characters, lowercase letters, digits and
# single hyphens, not starting or ending with one, equal to the skill's folder name; Anthropic
# refuses "anthropic" and "claude" in it) and `description` (1-1024 characters, no XML tags), then
# Markdown instructions.
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def skill(*args: str) -> tuple[int, str, str]:
    done = CliRunner().invoke(main, ["skill", *args], catch_exceptions=False)
    return done.exit_code, done.stdout, done.stderr


def frontmatter(text: str) -> tuple[dict, str]:
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def check_format(text: str, folder: str | None = None) -> dict:
    meta, body = frontmatter(text)
    assert set(meta) == {"name", "description"}
    assert NAME.match(meta["name"]) and len(meta["name"]) <= 64
    assert "anthropic" not in meta["name"] and "claude" not in meta["name"]
    assert 1 <= len(meta["description"]) <= 1024 and not re.search(r"<[^>]*>", meta["description"])
    if folder is not None:
        assert meta["name"] == folder
    assert body.strip()
    return meta


def commands(text: str) -> list[list[str]]:
    """Every command line in the file's ```bash blocks, split as a shell would split it."""
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [shlex.split(line) for block in blocks for line in block.splitlines() if line.strip()]


def run(argv: list[str], **placeholders: str) -> subprocess.CompletedProcess:
    filled = [placeholders.get(arg, arg) for arg in argv]
    assert not [a for a in filled if re.fullmatch(r"<[a-z_]+>", a)], filled  # every placeholder filled
    return subprocess.run(filled, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_the_commands_the_skill_names_search_and_read_the_index(tmp_path: Path, example_index: Path) -> None:
    code, _, err = skill("--index", f"parcelly={example_index}", "--out", str(tmp_path / ".claude" / "skills"))
    assert code == 0, err
    path = tmp_path / ".claude" / "skills" / "parcelly-docs" / "SKILL.md"
    assert f"wrote {path}" in err
    text = path.read_text()
    meta = check_format(text, folder=path.parent.name)
    assert "Parcelly shipping API docs" in meta["description"]  # the corpus description the build was given
    assert str(example_index) in text and "`language`" in text and "`scope`" in text  # taxonomy filters

    search, read = commands(text)
    assert Path(search[0]).is_absolute() and search[1:3] == ["search", "--index"]
    done = run(search, **{"<query>": "exponential backoff with jitter"})
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits and hits[0]["chunk_id"].startswith("guides/retries.md#")

    assert read[1:3] == ["get", "--index"]
    done = run(read, **{"<chunk_id>": hits[0]["chunk_id"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"--- Chunk: {hits[0]['chunk_id']} ")

    # the filter the skill shows as an example narrows the same search
    example = re.search(r"e\.g\. `--filter (\S+)`", text).group(1)
    done = run([*search, "--filter", example], **{"<query>": "create a label"})
    assert done.returncode == 0, done.stderr
    key, value = example.split("=")
    hits = json.loads(done.stdout)["hits"]
    assert hits and all(hit["metadata"].get(key) in (value, None) for hit in hits)  # None: a global guide


@pytest.mark.slow
def test_several_corpora_get_a_section_each(tmp_path: Path, example_index: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "boarding.md", "# Boarding passes\n\n## Issue a pass\n\nCall `passes.issue(booking_id)`.\n")
    second = build_index(docs, tmp_path / "fjordline")
    code, out, err = skill("--index", f"parcelly={example_index}", "--index", f"fjordline={second}")
    assert code == 0, err
    meta = check_format(out)
    assert meta["name"] == "docs"
    argv = commands(out)
    indexes = [a[a.index("--index") + 1] for a in argv]
    assert indexes == [str(example_index), str(example_index), str(second), str(second)]
    done = run(argv[2], **{"<query>": "issue a boarding pass"})
    assert done.returncode == 0 and json.loads(done.stdout)["hits"][0]["chunk_id"].startswith("boarding.md#")


def test_bad_names_and_missing_indexes_are_one_error_line(tmp_path: Path, example_index: Path) -> None:
    for args in (
        ("--index", str(example_index), "--name", "Claude-Docs"),
        ("--index", str(example_index), "--name", "my-claude-docs"),
        ("--index", str(tmp_path / "nope")),
    ):
        code, out, err = skill(*args)
        assert code == 1 and err.startswith("error: ") and err.count("\n") == 1 and out == "", (args, err)
