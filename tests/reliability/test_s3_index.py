"""Indexes on S3-compatible storage, against a real moto server on 127.0.0.1: build to and
search from s3:// with the CLI, a reader on the published version keeps working while a new
one is published, and `docs-mcp serve` over stdio reads an s3:// index."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("moto")

from docs_mcp_core.output.objectstore import RemoteOutput
from docs_mcp_core.search import Corpus, Library, Weights
from docs_mcp_core.search.engine import SearchEngine

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "parcelly-docs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_env() -> Iterator[dict[str, str]]:
    """A moto S3 server in its own process, and the AWS variables that point at it (with a bucket)."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        env = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing-key-id",
            "AWS_SECRET_ACCESS_KEY": "testing-secret-value",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
            "LANCEDB_LOG": "error",
            "DOCS_MCP_S3_POLL_SECONDS": "0",
        }
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/docs", method="PUT"), timeout=5)  # the bucket
        yield env
    finally:
        server.terminate()
        server.wait(timeout=10)


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
    )


@pytest.mark.slow
def test_build_to_and_search_from_s3(s3_env: dict[str, str], tmp_path: Path) -> None:
    url = "s3://docs/corpora/parcelly"
    state = tmp_path / "state"
    built = _cli(
        s3_env,
        "build",
        "--docs-dir",
        str(EXAMPLE),
        "--out",
        url,
        "--state-dir",
        str(state),
        "--embedding-provider",
        "hash",
    )
    assert built.returncode == 0, built.stderr
    assert f"published to {url}" in built.stderr
    assert "testing-secret-value" not in built.stderr + built.stdout
    found = _cli(s3_env, "search", "--index", url, "--json", "retry with backoff")
    assert found.returncode == 0, found.stderr
    page = json.loads(found.stdout)
    assert page["hits"] and page["mode"] == "hybrid"
    same = _cli(s3_env, "diff", "--from", url, "--to", str(state), "--json")  # the bucket against its mirror
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["changes"] == [] and json.loads(same.stdout)["counts"]["unchanged"] > 0

    noop = _cli(
        s3_env,
        "build",
        "--docs-dir",
        str(EXAMPLE),
        "--out",
        url,
        "--state-dir",
        str(state),
        "--embedding-provider",
        "hash",
    )
    assert noop.returncode == 0 and "published to" in noop.stderr, noop.stderr
    assert "index unchanged: the published table version is kept" in noop.stderr  # nothing rewritten
    assert f"0 chunks embedded; the index at {url} is unchanged" in noop.stderr

    fresh = tmp_path / "other-machine"  # a new state dir starts from what is published, not from scratch
    again = _cli(
        s3_env,
        "build",
        "--docs-dir",
        str(EXAMPLE),
        "--out",
        url,
        "--state-dir",
        str(fresh),
        "--embedding-provider",
        "hash",
    )
    assert again.returncode == 0 and "brought up to date" in again.stderr, again.stderr

    missing = _cli(s3_env, "search", "--index", "s3://docs/nothing-here", "retry")
    assert missing.returncode == 1 and missing.stderr.startswith("error: no index at s3://docs/nothing-here")
    missing = _cli(s3_env, "diff", "--from", "s3://docs/nothing-here", "--to", url)
    assert missing.returncode == 1 and missing.stderr.startswith("error: no index at s3://docs/nothing-here")
    no_bucket = _cli(s3_env, "build", "--docs-dir", str(EXAMPLE), "--out", "s3://")
    assert (
        no_bucket.returncode == 1
        and no_bucket.stderr == "error: s3:// names no bucket: give an s3://BUCKET/PREFIX location\n"
    )


@pytest.mark.slow
def test_reader_keeps_its_version_while_a_new_one_is_published(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    url = "s3://docs/corpora/atomic"
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLE, docs)
    state = tmp_path / "state"
    assert (
        _cli(
            s3_env,
            "build",
            "--docs-dir",
            str(docs),
            "--out",
            url,
            "--state-dir",
            str(state),
            "--embedding-provider",
            "hash",
        ).returncode
        == 0
    )

    async def scenario() -> None:
        engine = SearchEngine(url, Weights())
        first = await engine.index()
        before = await Library([Corpus("", engine)]).search("webhook signature", limit=5)
        version = first.version
        page = next(p for p in sorted(docs.rglob("*.md")))
        page.write_text(page.read_text() + "\n\n## Zanzibar quokka\n\nA brand-new section about quokkas.\n")
        rebuilt = _cli(
            s3_env,
            "build",
            "--docs-dir",
            str(docs),
            "--out",
            url,
            "--state-dir",
            str(state),
            "--embedding-provider",
            "hash",
        )  # publishes a new version; the one before is kept
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert "deleted" in rebuilt.stderr
        # the old handle still answers from its pinned version...
        rows = await first.table.query().select(["chunk_id"]).limit(5000).to_arrow()
        assert rows.num_rows == len(first.info)
        assert await engine.texts(first, [before.hits[0]["chunk_id"]])
        # ...and the engine switches to the newly published one on the next request
        after = await Library([Corpus("", engine)]).search("Zanzibar quokka", limit=3)
        assert engine.current.version != version
        assert "quokka" in after.hits[0]["heading"].lower()
        engine.close()

    asyncio.run(scenario())
    published = json.loads(RemoteOutput.parse(url).read("metadata.json") or b"{}")
    assert published["index"]["version"] > 0


@pytest.mark.slow
def test_serve_stdio_reads_an_s3_index(s3_env: dict[str, str], tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    url = "s3://docs/corpora/served"
    assert (
        _cli(
            s3_env,
            "build",
            "--docs-dir",
            str(EXAMPLE),
            "--out",
            url,
            "--state-dir",
            str(tmp_path / "state"),
            "--embedding-provider",
            "hash",
        ).returncode
        == 0
    )
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "docs_mcp_core.cli", "serve", "--index", url], env={**os.environ, **s3_env}
    )

    async def call() -> dict:
        async with Client(params) as client:
            result = await client.call_tool("search_docs", {"query": "cancel a shipment", "limit": 3})
            return json.loads(result.content[0].text)

    result = asyncio.run(call())
    assert result["hits"], result


@pytest.mark.slow
def test_pipeline_publishes_to_an_s3_out(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`out: s3://…` in docs-mcp.yaml: the Dagster assets build in `state_dir` and publish to the bucket."""
    dg = pytest.importorskip("dagster")
    import yaml

    from docs_mcp_pipeline import build_definitions

    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    url = "s3://docs/pipeline/example"
    config = tmp_path / "docs-mcp.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "corpora": [
                    {
                        "name": "example",
                        "source": {"path": str(EXAMPLE)},
                        "out": url,
                        "state_dir": str(tmp_path / "mirror"),
                        "embedding": {"provider": "hash", "dimensions": 64},
                    }
                ]
            }
        )
    )
    defs = build_definitions(str(config))
    result = dg.materialize(
        [*(defs.assets or []), *(defs.asset_checks or [])],
        partition_key="example",
        instance=dg.DagsterInstance.ephemeral(),
        resources=defs.resources,
    )
    assert result.success
    published = json.loads(RemoteOutput.parse(url).read("metadata.json") or b"{}")
    assert (
        published["index"]["version"]
        == json.loads((tmp_path / "mirror" / "metadata.json").read_text())["index"]["version"]
    )
    found = _cli(s3_env, "search", "--index", url, "--json", "cancel a shipment")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
    # The UI's `path` is where readers find the index (the bucket), the local mirror beside it.
    paths = {
        m.asset_key.to_user_string(): (m.metadata["path"].value, m.metadata.get("state_path"))
        for m in result.get_asset_materialization_events()
        for m in [m.materialization]
    }
    assert paths["lancedb_index"][0] == f"{url}/.lancedb"
    assert paths["metadata"][0] == f"{url}/metadata.json"
    assert paths["metadata"][1].value == str(tmp_path / "mirror" / "metadata.json")


def _build(
    env: dict[str, str], docs: Path, url: str, state: Path, *extra: str, pause: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """`docs-mcp build` to `url` from the mirror `state`, started (with failpoint variables in `pause`)."""
    args = ["build", "--docs-dir", str(docs), "--out", url, "--state-dir", str(state), "--embedding-provider", "none"]
    return subprocess.Popen(
        [sys.executable, "-m", "docs_mcp_core.cli", *args, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env, **(pause or {})},
    )


def _finish(build: subprocess.Popen[str]) -> tuple[int, str]:
    _, stderr = build.communicate(timeout=180)
    return build.returncode, stderr


def _put_metadata(url: str, data: bytes) -> None:
    import boto3

    remote = RemoteOutput.parse(url)
    boto3.client("s3").put_object(Bucket=remote.bucket, Key=f"{remote.prefix}/metadata.json", Body=data)


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage", [b"{not json", b"[1,2]", b"[" * 200_000 + b"]" * 200_000], ids=["not-json", "array", "nested"]
)
def test_a_damaged_published_metadata_json_is_rebuilt_and_published_over(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: bytes
) -> None:
    """Treated like a damaged local metadata.json: readers get one line; a build (with or without
    --force) warns, rebuilds and publishes over it, with no one deleting the object by hand."""
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    url = f"s3://docs/damaged-{len(damage)}"
    assert _finish(_build(s3_env, EXAMPLE, url, tmp_path / "state"))[0] == 0
    for extra in ([], ["--force"]):
        _put_metadata(url, damage)
        found = _cli(s3_env, "search", "--index", url, "cancel a shipment")
        assert found.returncode == 1 and len(found.stderr.strip().splitlines()) == 1, found.stderr
        assert f"{url}/metadata.json" in found.stderr and "Traceback" not in found.stderr

        code, stderr = _finish(_build(s3_env, EXAMPLE, url, tmp_path / "state", *extra))
        assert code == 0, stderr
        assert f"warn: ignoring the index published at {url} and rebuilding it" in stderr
        assert "Traceback" not in stderr
        found = _cli(s3_env, "search", "--index", url, "--json", "cancel a shipment")
        assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr


@pytest.mark.slow
def test_a_missing_bucket_is_refused_before_anything_is_built(s3_env: dict[str, str], tmp_path: Path) -> None:
    code, stderr = _finish(_build(s3_env, EXAMPLE, "s3://no-such-bucket/p", tmp_path / "state"))
    assert code == 1
    assert stderr == (
        "error: bucket 'no-such-bucket' does not exist (s3://no-such-bucket/p); create it first, "
        "or check AWS_ENDPOINT_URL and the bucket name\n"
    )
    assert not (tmp_path / "state" / "chunks.json").exists() and not (tmp_path / "state" / ".lancedb").exists()


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["written", "s3-upload", "s3-publish"])
def test_two_state_dirs_publishing_to_one_prefix_never_both_win(
    s3_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, phase: str
) -> None:
    """Build A starts from the published index and stops (before it publishes, after its check that
    nothing was published meanwhile, or between its uploads and its metadata.json); build B, from
    another state dir, publishes meanwhile. A must then fail with one line and B's index stay
    published, whole, instead of both exiting 0 and B's content being lost or mixed with A's."""
    for key, value in s3_env.items():
        monkeypatch.setenv(key, value)
    url = f"s3://docs/race-{phase}"
    base = tmp_path / "base"
    shutil.copytree(EXAMPLE, base)
    assert _finish(_build(s3_env, base, url, tmp_path / "state-0"))[0] == 0
    docs_a, docs_b = tmp_path / "a", tmp_path / "b"
    for docs, word in ((docs_a, "Aardvarkian"), (docs_b, "Bumblebeeish")):
        shutil.copytree(base, docs)
        (docs / "only-here.md").write_text(f"# {word} page\n\n## {word} section\n\nText about {word} things.\n")

    release, paused = tmp_path / "release", tmp_path / "paused"
    paused.mkdir()
    failpoint = {
        "DOCS_MCP_TEST_PAUSE_AT": phase,
        "DOCS_MCP_TEST_RELEASE": str(release),
        "DOCS_MCP_TEST_PAUSED_DIR": str(paused),
    }
    build_a = _build(s3_env, docs_a, url, tmp_path / "state-a", pause=failpoint)
    try:
        for _ in range(1200):
            if any(paused.iterdir()) or build_a.poll() is not None:
                break
            time.sleep(0.1)
        assert any(paused.iterdir()), build_a.communicate()[1]
        code_b, stderr_b = _finish(_build(s3_env, docs_b, url, tmp_path / "state-b"))
        assert code_b == 0, stderr_b
    finally:
        release.touch()
    code_a, stderr_a = _finish(build_a)

    assert code_a == 1, stderr_a
    last = stderr_a.strip().splitlines()[-1]
    assert last.startswith(f"error: another build published to {url} while this one ran"), stderr_a
    assert "Traceback" not in stderr_a
    found = _cli(s3_env, "search", "--index", url, "--json", "Bumblebeeish section")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["filepath"] == "only-here.md"
    assert "Bumblebeeish" in json.loads(found.stdout)["hits"][0]["heading"]
    other = _cli(s3_env, "search", "--index", url, "--json", "Aardvarkian section")
    assert not any("Aardvarkian" in hit["heading"] for hit in json.loads(other.stdout)["hits"])
    chunks = RemoteOutput.parse(url).read("chunks.json") or b""
    assert b"Bumblebeeish" in chunks and b"Aardvarkian" not in chunks
