"""Several corpora in one server: the corpus enum, fused hits, prefixed chunk IDs, per-corpus filters,
cursors across corpora, per-corpus hot reload, /healthz, and the docs-mcp.yaml serve section."""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from docs_mcp_core.cli import main
from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.indexing.build import build
from docs_mcp_core.server import ServedCorpus, create_server
from docs_mcp_core.sources.config import load_config

from ..conftest import EXAMPLE_CHUNKS, EXAMPLE_DOCS, FIXTURES, write
from ..fakes.openai_server import FakeEmbeddingServer
from .conftest import build_index, http_server
from .test_notifications import is_list_changed

pytestmark = pytest.mark.anyio
UV_MANIFEST = {
    "version": "1",
    "metadata": {"scope": "uv-guide"},
    "taxonomy": {"scope": {"description": "Kind of page."}},
}
UV_DESCRIPTION = "uv getting-started guides"


def uv_docs(root: Path) -> Path:
    """A small uv corpus (hybrid, `hash` vectors) sharing the `scope` key with Parcelly but not its values,
    and one file path (overview.md) with it."""
    docs = root / "uv-docs"
    shutil.copytree(FIXTURES / "uv-docs" / "getting-started", docs)
    write(docs, ".docs-mcp.json", json.dumps(UV_MANIFEST))
    write(docs, "overview.md", "# Overview\n\nuv is a fast Python package manager written in Rust.\n")
    return docs


def build_uv(docs: Path, out: Path) -> Path:
    build(docs, out, make_provider(ProviderSettings("hash")), description=UV_DESCRIPTION)
    return out


def two_corpora(root: Path) -> tuple[Path, Path, Path]:
    """(parcelly index, uv index, uv docs): indexes named after their folders."""
    parcelly_docs = root / "parcelly-docs"
    shutil.copytree(EXAMPLE_DOCS, parcelly_docs)
    docs = uv_docs(root)
    return build_index(parcelly_docs, root / "parcelly"), build_uv(docs, root / "uv"), docs


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return two_corpora(tmp_path_factory.mktemp("multi"))


@pytest.fixture
def client(indexes: tuple[Path, Path, Path]) -> Client:
    return Client(create_server([ServedCorpus(indexes[0]), ServedCorpus(indexes[1])]).server)


async def search(client: Client, **arguments) -> dict:
    result = await client.call_tool("search_docs", arguments)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def text_of(client: Client, tool: str, *, error: bool = False, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error == error, result.content[0].text
    return result.content[0].text


async def test_the_schema_names_each_corpus_with_its_description_and_unites_the_taxonomies(client: Client) -> None:
    async with client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        properties = tools["search_docs"].input_schema["properties"]
        assert properties["corpus"]["enum"] == ["parcelly", "uv"]
        assert "'parcelly': Parcelly shipping API docs" in properties["corpus"]["description"]
        assert f"'uv': {UV_DESCRIPTION}" in properties["corpus"]["description"]
        assert set(properties["scope"]["enum"]) == {"global-guide", "sdk-specific", "api-reference", "uv-guide"}
        assert "uv: uv-guide" in properties["scope"]["description"]
        assert {"go", "python", "typescript"} <= set(properties["language"]["enum"])
        assert "2 corpora" in tools["search_docs"].description


async def test_hits_come_from_both_corpora_and_get_doc_reads_each(client: Client) -> None:
    async with client:
        page = await search(client, query="install", limit=10)
        assert {h["corpus"] for h in page["hits"]} == {"parcelly", "uv"}
        assert all(h["chunk_id"].startswith(h["corpus"] + ":") for h in page["hits"])
        assert page["modes"] == {"parcelly": "text", "uv": "hybrid"} and page["mode"] == "text"
        scores = [h["score"] for h in page["hits"]]
        assert scores == sorted(scores, reverse=True)
        for name in ("parcelly", "uv"):
            hit = next(h for h in page["hits"] if h["corpus"] == name)
            doc = await text_of(client, "get_doc", chunk_id=hit["chunk_id"])
            assert doc.startswith(f"--- Chunk: {hit['chunk_id']} (")
        # a bare ID is accepted when one corpus has it; the answer names it with its prefix
        uv_hit = next(h for h in page["hits"] if h["corpus"] == "uv")
        bare = uv_hit["chunk_id"].removeprefix("uv:")
        assert (await text_of(client, "get_doc", chunk_id=bare)).startswith(f"--- Chunk: {uv_hit['chunk_id']} (")
        # a trimmed answer's continuation pointer carries the prefix too
        big = max((h for h in page["hits"] if h["corpus"] == "uv"), key=lambda h: h["chars"])
        assert big["chars"] > 600
        trimmed = await text_of(client, "get_doc", chunk_id=big["chunk_id"], max_chars=500)
        assert f'next: get_doc {{"chunk_id": "{big["chunk_id"]}", "offset": ' in trimmed
        listing = await text_of(client, "get_doc", chunk_id="uv:installation.md")
        assert "[uv:installation.md has 6 chunks: uv:installation.md#_preamble, uv:installation.md#" in listing
        both = await text_of(client, "get_doc", error=True, chunk_id="overview.md")
        assert "parcelly:overview.md" in both and "uv:overview.md" in both
        assert "not found in any corpus" in await text_of(client, "get_doc", error=True, chunk_id="nope.md#missing")
        assert "That file has" in await text_of(client, "get_doc", error=True, chunk_id="uv:overview.md#missing")


async def test_a_filter_searches_only_the_corpora_that_have_its_value(client: Client) -> None:
    async with client:
        go = await search(client, query="create a shipment", language="go")
        assert go["hits"] and {h["corpus"] for h in go["hits"]} == {"parcelly"}
        uv = await search(client, query="install", scope="UV-Guide")  # case-insensitive, as with one corpus
        assert uv["hits"] and {h["corpus"] for h in uv["hits"]} == {"uv"}
        only = await search(client, query="install", corpus="uv")
        assert only["hits"] and {h["corpus"] for h in only["hits"]} == {"uv"} and only["modes"] == {"uv": "hybrid"}
        problem = await text_of(client, "search_docs", error=True, query="install", corpus="uv", language="go")
        assert "No match for filters language='go' in corpus 'uv'" in problem


async def test_cursors_walk_the_fused_list_of_all_corpora(client: Client) -> None:
    async with client:
        whole = [h["chunk_id"] for h in (await search(client, query="install", limit=9))["hits"]]
        first = await search(client, query="install", limit=4)
        second = await search(client, query="install", limit=5, cursor=first["next_cursor"])
        assert [h["chunk_id"] for h in first["hits"] + second["hits"]] == whole
        fitted = await search(client, query="install", limit=9, max_chars=1500)
        kept = len(fitted["hits"])
        assert fitted["trimmed"] and 0 < kept < 9
        rest = await search(client, query="install", limit=9 - kept, max_chars=100_000, cursor=fitted["next_cursor"])
        assert [h["chunk_id"] for h in fitted["hits"] + rest["hits"]] == whole
        wrong = await text_of(
            client, "search_docs", error=True, query="install", corpus="uv", cursor=first["next_cursor"]
        )
        assert "different query or filters" in wrong


async def test_many_weak_hits_in_one_corpus_do_not_drown_a_strong_hit_in_another(tmp_path: Path) -> None:
    many = tmp_path / "many-docs"
    for n in range(12):
        write(
            many,
            f"page{n}.md",
            f"# Page {n}\n\nThis page mentions widgets once, among other things like "
            f"shipping and billing {n}. Later it says frobnicate, in passing.\n",
        )
    one = tmp_path / "one-docs"
    write(one, "frob.md", "# Frobnicate widgets\n\nTo frobnicate widgets, call frobnicate on the widgets list.\n")
    servers = [ServedCorpus(build_index(many, tmp_path / "many")), ServedCorpus(build_index(one, tmp_path / "one"))]
    async with Client(create_server(servers).server) as client:
        hits = (await search(client, query="frobnicate widgets"))["hits"]
        assert hits[0]["corpus"] == "one" and hits[0]["filepath"] == "frob.md"
        assert len(hits) == 10 and sum(h["corpus"] == "many" for h in hits) == 9


async def test_a_corpus_with_nothing_close_to_the_question_sinks_below_the_one_that_has_it(
    indexes: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    docs = tmp_path / "parcelly-docs"
    shutil.copytree(EXAMPLE_DOCS, docs)
    parcelly = build_index(docs, tmp_path / "parcelly", provider="hash")  # the same model as the uv corpus
    async with Client(create_server([ServedCorpus(parcelly), ServedCorpus(indexes[1])]).server) as client:
        hits = (await search(client, query="first steps with uv", limit=5))["hits"]
        assert hits[0]["chunk_id"] == "uv:first-steps.md#_preamble"
        assert [h["corpus"] for h in hits[:3]] == ["uv", "uv", "uv"]  # by ranks alone, a Parcelly page came third


async def test_a_republished_corpus_reloads_while_the_other_keeps_its_index(tmp_path: Path) -> None:
    parcelly, uv, docs = two_corpora(tmp_path)
    served = create_server([ServedCorpus(parcelly), ServedCorpus(uv)])
    async with Client(served.server) as client:
        await search(client, query="install")
        kept, old = (c.engine.current for c in served.library.corpora)
        assert "zebrafication" not in json.dumps(await search(client, query="zebrafication"))
        only_parcelly = await search(client, query="shipment", corpus="parcelly", limit=2)
        everywhere = await search(client, query="install", limit=2)
        write(docs, "overview.md", "# Overview\n\nuv supports zebrafication of lockfiles.\n")
        await anyio.to_thread.run_sync(lambda: build_uv(docs, uv))
        top = (await search(client, query="zebrafication"))["hits"][0]
        assert top["corpus"] == "uv" and "zebrafication" in top["snippet"]
        # a cursor pages on unless a corpus it searched was republished
        assert (
            await search(client, query="shipment", corpus="parcelly", limit=2, cursor=only_parcelly["next_cursor"])
        )["hits"]
        stale = await text_of(
            client, "search_docs", error=True, query="install", limit=2, cursor=everywhere["next_cursor"]
        )
        assert "cursor is stale" in stale
        now = [c.engine.current for c in served.library.corpora]
        assert now[0] is kept and now[1] is not old and now[1].version != old.version


@pytest.mark.slow
async def test_two_corpora_over_stdio_with_list_changed_when_one_gains_a_taxonomy_value(tmp_path: Path) -> None:
    parcelly, uv, docs = two_corpora(tmp_path)
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if is_list_changed(message):
            changed.set()

    args = ["-m", "docs_mcp_core.cli", "serve", "--index", f"shipping={parcelly}", "--index", f"uv={uv}"]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["search_docs"].input_schema["properties"]["corpus"]["enum"] == ["shipping", "uv"]
        hits = (await search(client, query="install", limit=10))["hits"]
        assert {h["corpus"] for h in hits} == {"shipping", "uv"}
        for name in ("shipping", "uv"):
            chunk_id = next(h["chunk_id"] for h in hits if h["corpus"] == name)
            assert (await text_of(client, "get_doc", chunk_id=chunk_id)).startswith(f"--- Chunk: {chunk_id} (")
        write(docs, "reference/.docs-mcp.json", '{"version": "1", "metadata": {"scope": "uv-reference"}}')
        write(docs, "reference/cli.md", "# uv CLI\n\nThe uv sync command updates the environment.\n")
        await anyio.to_thread.run_sync(lambda: build_uv(docs, uv))
        with anyio.fail_after(15):
            await changed.wait()
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "uv-reference" in tools["search_docs"].input_schema["properties"]["scope"]["enum"]
        page = await search(client, query="uv sync command", scope="uv-reference")
        assert [h["chunk_id"] for h in page["hits"]] == ["uv:reference/cli.md#_preamble"]
        assert (await search(client, query="create a shipment", language="go"))["hits"]


@pytest.mark.slow
async def test_two_corpora_over_http_from_the_config_serve_section(tmp_path: Path) -> None:
    parcelly, uv, docs = two_corpora(tmp_path)
    config = write(
        tmp_path,
        "docs-mcp.yaml",
        (
            "corpora:\n"
            "  - name: parcelly\n    source: {path: parcelly-docs}\n    out: parcelly\n"
            "serve:\n"
            "  corpora:\n"
            "    - parcelly\n"
            f"    - {{name: uv, index: uv, description: {UV_DESCRIPTION} (configured)}}\n"
        ),
    )

    def health(base: str) -> dict:
        with urllib.request.urlopen(f"{base}/healthz") as response:
            return json.loads(response.read())

    with http_server(None, "--config", str(config)) as base:
        before = health(base)
        assert before["status"] == "ok"
        assert [(c["name"], c["chunks"], c["mode"]) for c in before["corpora"]] == [
            ("parcelly", EXAMPLE_CHUNKS, "text"),
            ("uv", 25, "hybrid"),
        ]
        async with Client(f"{base}/mcp") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert (
                f"{UV_DESCRIPTION} (configured)"
                in tools["search_docs"].input_schema["properties"]["corpus"]["description"]
            )
            hits = (await search(client, query="install", limit=10))["hits"]
            for name in ("parcelly", "uv"):
                chunk_id = next(h["chunk_id"] for h in hits if h["corpus"] == name)
                assert (await text_of(client, "get_doc", chunk_id=chunk_id)).startswith(f"--- Chunk: {chunk_id} (")
            write(docs, "overview.md", "# Overview\n\nuv supports zebrafication of lockfiles.\n")
            await anyio.to_thread.run_sync(lambda: build_uv(docs, uv))
            top = (await search(client, query="zebrafication"))["hits"][0]
            assert top["corpus"] == "uv" and "zebrafication" in top["snippet"]
        after = {c["name"]: c for c in health(base)["corpora"]}
        versions = {c["name"]: c["index_version"] for c in before["corpora"]}
        assert after["parcelly"]["index_version"] == versions["parcelly"]
        assert after["uv"]["index_version"] > versions["uv"]


def test_corpora_built_with_one_model_share_its_query_embedder(indexes: tuple[Path, Path, Path]) -> None:
    served = create_server([ServedCorpus(indexes[1], "a"), ServedCorpus(indexes[1], "b"), ServedCorpus(indexes[0])])
    first, second, text_only = (c.engine.embedder for c in served.library.corpora)
    assert first is not None and first is second and text_only is None


@pytest.mark.slow
async def test_a_search_of_corpora_sharing_a_model_embeds_the_query_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Corpora are searched at once, and those built with one model share its query vector: one
    embedding request per query, not one per corpus (and a repeated query, none)."""
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    with FakeEmbeddingServer(dims=32) as embeddings:
        settings = {"model": "fake-embed", "dimensions": 32, "base_url": embeddings.url}
        parcelly = build_index(EXAMPLE_DOCS, tmp_path / "parcelly", "openai", **settings)
        uv = build_index(uv_docs(tmp_path), tmp_path / "uv", "openai", **settings)
        served = create_server([ServedCorpus(parcelly), ServedCorpus(uv)])
        for corpus in served.library.corpora:
            assert corpus.engine.embedder is not None and corpus.engine.embedder.wait(30)
        embeddings.reset_counts()
        async with Client(served.server) as client:
            for query in ("install a package", "verify a webhook signature", "install a package"):
                page = json.loads((await client.call_tool("search_docs", {"query": query})).content[0].text)
                assert page["mode"] == "hybrid" and page["hits"]
        assert embeddings.inputs == ["install a package", "verify a webhook signature"]


def test_corpus_names_must_differ(indexes: tuple[Path, Path, Path], runner) -> None:
    result = runner.invoke(main, ["serve", "--index", str(indexes[0]), "--index", f"parcelly={indexes[1]}"])
    assert result.exit_code == 1
    assert "error: two indexes would both be served as corpus 'parcelly'" in result.output


def test_the_serve_section_is_checked_with_file_line_and_field(tmp_path: Path) -> None:
    head = "corpora:\n  - name: docs\n    source: {path: docs}\n"
    unknown = write(tmp_path, "a.yaml", head + "serve:\n  corpora:\n    - docs\n    - elsewhere\n")
    with pytest.raises(DocsMcpError, match=r"a\.yaml:7: serve\.corpora\[1\]: no corpus named 'elsewhere'"):
        load_config(unknown)
    twice = write(tmp_path, "b.yaml", head + "serve:\n  corpora: [docs, {name: docs, index: other}]\n")
    with pytest.raises(DocsMcpError, match=r"b\.yaml:5: serve\.corpora: .*repeated: docs"):
        load_config(twice)
    served = load_config(write(tmp_path, "c.yaml", head + "serve:\n  corpora: [{name: ext, index: /srv/ext}, docs]\n"))
    assert served.served() == [("ext", Path("/srv/ext"), None), ("docs", tmp_path / "indexes" / "docs", None)]


def test_cli_search_matches_filter_values_case_insensitively_like_the_tool(
    indexes: tuple[Path, Path, Path], runner
) -> None:
    result = runner.invoke(
        main, ["search", "--index", str(indexes[0]), "create a shipment", "--filter", "language=Go", "--json"]
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)["hits"]
    assert hits and all(h["metadata"].get("language") in ("go", None) for h in hits)
