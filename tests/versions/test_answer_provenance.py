"""What every search_docs and get_doc answer says of itself, over real stdio sessions: where its docs come
from (one line per corpus and version in the answer, the fields per hit in the structured content), how
old they are against a configured max_age, and, first, that the locked version is not the one served."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from docs_mcp_core.output.freshness import freshness, parse_max_age, show_age

from ..conftest import EXAMPLE_DOCS
from ..fakes.docs_site import DocsSite, copy_site
from ..reliability.clitools import docs_mcp
from ..server.conftest import build_index, stdio_client
from .test_versioned_serving import handbook, project  # noqa: F401 - the module's fixture, shared

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def age(path: Path, days: int) -> None:
    """Make metadata.json say the index was built `days` ago (the build writes `indexed_at` as now)."""
    meta = json.loads(path.read_text())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - days * 86400))
    meta["stats"]["indexed_at"] = stamp
    path.write_text(json.dumps(meta))


@pytest.fixture(scope="module")
def git_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example docs built from a git repository, once: metadata.json records the commit."""
    tmp_path = tmp_path_factory.mktemp("git-index")
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE_DOCS, repo)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "docs"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    result = docs_mcp("build", "--git", repo, "--index", tmp_path / "index", "--embedding-provider", "none")
    assert result.returncode == 0, result.stderr
    return tmp_path / "index"


@pytest.fixture
def git_index(git_built: Path, tmp_path: Path) -> Path:
    """A test's own copy of that index: a test may age its metadata.json."""
    return shutil.copytree(git_built, tmp_path / "index")


async def test_hits_carry_provenance_and_the_answer_one_line_per_source(git_index: Path) -> None:
    commit = json.loads((git_index / "metadata.json").read_text())["stats"]["source_commit"]
    indexed_at = json.loads((git_index / "metadata.json").read_text())["stats"]["indexed_at"]
    assert commit and indexed_at
    async with stdio_client(git_index) as client:
        result = await client.call_tool("search_docs", {"query": "retries"})
        doc = await client.call_tool("get_doc", {"chunk_id": json.loads(result.content[0].text)["hits"][0]["chunk_id"]})
    text = json.loads(result.content[0].text)
    assert list(text)[0] == "sources"  # the header comes before the hits
    assert text["sources"] == {"index": f"commit {commit[:12]}, indexed {indexed_at}"}
    assert all("source_commit" not in hit and "indexed_at" not in hit for hit in text["hits"])  # not per hit
    structured = result.structured_content
    assert structured is not None and len(structured["hits"]) == len(text["hits"])
    assert all(
        h["corpus"] == "index" and h["source_commit"] == commit and h["indexed_at"] == indexed_at
        for h in structured["hits"]
    )
    assert doc.content[0].text.startswith("--- Chunk: ")  # no notes: the chunk, as before; its source is structured
    assert doc.structured_content == {"corpus": "index", "source_commit": commit, "indexed_at": indexed_at}


async def test_a_versioned_hit_names_its_version_and_the_version_s_date(handbook: Path) -> None:  # noqa: F811
    async with stdio_client(handbook) as client:
        result = await client.call_tool("search_docs", {"query": "flag usage"})
    entry = json.loads((handbook / "versions.json").read_text())["versions"][0]
    assert entry["label"] == "2.0"
    sources = json.loads(result.content[0].text)["sources"]
    assert sources == {"handbook 2.0": f"docs as of {entry['source_date'][:10]}, indexed {entry['indexed_at']}"}
    hit = result.structured_content["hits"][0]
    assert hit["corpus"] == "handbook" and hit["version"] == "2.0"
    assert hit["source_date"] == entry["source_date"] and hit["indexed_at"] == entry["indexed_at"]


async def test_max_age_flags_an_old_index_in_the_description_resource_and_answers(git_index: Path) -> None:
    age(git_index / "metadata.json", 40)
    async with stdio_client(git_index, "--max-age", "30d") as client:
        description = {t.name: t.description for t in (await client.list_tools()).tools}["search_docs"] or ""
        result = await client.call_tool("search_docs", {"query": "retries"})
        chunk = json.loads(result.content[0].text)["hits"][0]["chunk_id"]
        doc = (await client.call_tool("get_doc", {"chunk_id": chunk})).content[0].text
        (corpus,) = json.loads((await client.read_resource("docs-mcp://corpora")).contents[0].text)["corpora"]
    note = "index was last indexed 20"
    assert "Note: index was last indexed" in description and "more than its max_age of 30d" in description
    notes = json.loads(result.content[0].text)["notes"]
    assert len(notes) == 1 and notes[0].startswith(note) and ", 40 days ago, more than its max_age of 30d" in notes[0]
    assert list(json.loads(result.content[0].text))[0] == "notes"
    assert doc.splitlines()[0] == notes[0]
    assert corpus["stale"] is True and corpus["max_age"] == "30d" and corpus["age_days"] >= 40
    async with stdio_client(git_index, "--max-age", "60d") as client:  # young enough: nothing said
        fresh = json.loads((await client.call_tool("search_docs", {"query": "retries"})).content[0].text)
        (corpus,) = json.loads((await client.read_resource("docs-mcp://corpora")).contents[0].text)["corpora"]
    assert "notes" not in fresh and corpus["stale"] is False


async def test_max_age_from_docs_mcp_yaml(git_index: Path, tmp_path: Path) -> None:
    age(git_index / "metadata.json", 3)
    config = tmp_path / "docs-mcp.yaml"
    config.write_text(
        f"corpora:\n  - name: example\n    source: {{path: docs}}\n    out: {git_index}\n    max_age: 2d\n"
    )
    async with stdio_client(None, "--config", str(config)) as client:  # type: ignore[arg-type]
        notes = json.loads((await client.call_tool("search_docs", {"query": "retries"})).content[0].text)["notes"]
    assert notes[0].startswith("example was last indexed") and "max_age of 2d" in notes[0]


def test_a_bad_max_age_is_one_line(git_index: Path, tmp_path: Path) -> None:
    result = docs_mcp("serve", "--index", git_index, "--max-age", "30x")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: --max-age '30x' is not an age: give a whole number and a unit: m (minutes), h (hours), "
        "d (days) or w (weeks), e.g. 30d"
    ]
    config = tmp_path / "docs-mcp.yaml"
    config.write_text("corpora:\n  - name: example\n    source: {path: docs}\n    max_age: soon\n")
    result = docs_mcp("serve", "--config", config)
    assert result.returncode == 1 and "corpora[0].max_age" in result.stderr and "'soon' is not an age" in result.stderr
    assert "Traceback" not in result.stderr


async def test_the_pin_notice_opens_every_answer_from_the_pinned_corpus(handbook: Path, tmp_path: Path) -> None:  # noqa: F811
    app = project(tmp_path, "1.0.5")
    notice = (
        "handbook 1.0.5 is locked; indexed versions are 1.0, 2.0; answering from 1.0 "
        "(the nearest lower release of 1.0.x)"
    )
    async with stdio_client(handbook, "--project", str(app)) as client:
        search = (await client.call_tool("search_docs", {"query": "flag usage"})).content[0].text
        chunk = json.loads(search)["hits"][0]["chunk_id"]
        doc = (await client.call_tool("get_doc", {"chunk_id": chunk})).content[0].text
        asked = json.loads((await client.call_tool("search_docs", {"query": "flag", "version": "2.0"})).content[0].text)
    assert search.startswith(json.dumps({"notes": [notice]})[:-2])  # the first thing the agent reads
    assert doc.splitlines()[0] == notice and "old flag" in doc
    assert "notes" not in asked  # a version asked for by name is not the pinned one: no notice
    (tmp_path / "exact").mkdir()
    async with stdio_client(handbook, "--project", str(project(tmp_path / "exact", "1.0"))) as client:
        exact = json.loads((await client.call_tool("search_docs", {"query": "flag usage"})).content[0].text)
    assert "notes" not in exact


async def test_an_unversioned_index_without_a_commit_still_says_when_it_was_indexed(tmp_path: Path) -> None:
    index = build_index(EXAMPLE_DOCS, tmp_path / "plain")
    indexed_at = json.loads((index / "metadata.json").read_text())["stats"]["indexed_at"]
    async with stdio_client(index) as client:
        result = await client.call_tool("search_docs", {"query": "retries"})
    assert json.loads(result.content[0].text)["sources"] == {"plain": f"indexed {indexed_at}"}


@pytest.mark.slow
async def test_website_hits_carry_their_page_s_last_modified_and_etag(tmp_path: Path) -> None:
    """From the build's page fetch state: each page's validators as the site sent them."""
    with DocsSite(copy_site(tmp_path / "site", ("", "async"))) as site:
        result = docs_mcp("build", "--url", site.url, "--index", tmp_path / "web", "--embedding-provider", "none")
    assert result.returncode == 0, result.stderr
    pages = json.loads((tmp_path / "web" / ".docs-mcp" / "staged" / "pages.json").read_text())["pages"]
    async with stdio_client(tmp_path / "web") as client:
        found = await client.call_tool("search_docs", {"query": "async client"})
        first = found.structured_content["hits"][0]
        doc = (await client.call_tool("get_doc", {"chunk_id": first["chunk_id"]})).content[0].text
    for hit in found.structured_content["hits"]:
        page = pages[hit["filepath"]]
        stamp = email.utils.parsedate_to_datetime(page["last_modified"]).strftime("%Y-%m-%dT%H:%M:%SZ")
        assert hit["etag"] == page["etag"] and hit["last_modified"] == stamp and hit["source_url"]
    newest = max(email.utils.parsedate_to_datetime(p["last_modified"]) for p in pages.values()).isoformat()
    assert f"docs as of {newest[:10]}" in json.loads(found.content[0].text)["sources"]["web"]
    assert doc.startswith("--- Chunk: ") and f"Source: {first['source_url']}" in doc


def test_freshness_is_reckoned_against_max_age() -> None:
    now = dt.datetime(2026, 11, 28, 12, 0, tzinfo=dt.UTC)
    old = freshness("2026-10-19T12:00:00Z", parse_max_age("30d"), now)
    assert old.stale and old.days() == 40.0
    assert old.note("docs") == (
        "docs was last indexed 2026-10-19, 40 days ago, more than its max_age of 30d: its docs may be out of date"
    )
    assert not freshness("2026-11-28T11:00:00Z", parse_max_age("2h"), now).stale
    assert freshness("2026-11-28T11:57:00Z", parse_max_age("1m"), now).note("x") == (
        "x was last indexed 2026-11-28, 3 minutes ago, more than its max_age of 1m: its docs may be out of date"
    )
    unknown = freshness(None, parse_max_age("1d"), now)
    assert not unknown.stale and unknown.note("x") is None  # no date: nothing to flag
    assert [show_age(parse_max_age(a)) for a in ("2w", "14d", "36h", "90m")] == ["2w", "2w", "36h", "90m"]
