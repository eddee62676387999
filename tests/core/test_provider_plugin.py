"""A provider from another package joins through its `docs_mcp.providers` entry point: installed from
tests/fixtures/provider_plugin (a package of its own), it builds and searches an index with no edit to
docs_mcp_core, and its settings are options of `docs-mcp build` and keys of docs-mcp.yaml."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..reliability.clitools import docs_mcp

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "provider_plugin"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose Python path holds the plugin package, installed offline from a copy of the fixture."""
    root = tmp_path_factory.mktemp("plugin")
    source, target = root / "source", root / "site"
    shutil.copytree(PLUGIN, source)  # pip builds in the source folder: keep the fixture clean
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation"]
        + ["--target", str(target), str(source)],
        check=True,
        capture_output=True,
        text=True,
    )
    path = os.pathsep.join(p for p in (str(target), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


@pytest.mark.slow
def test_a_provider_from_another_package_builds_and_searches_an_index(
    plugin_env: dict[str, str], example_docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    build = docs_mcp(
        "build", "--docs-dir", example_docs, "--out", out, "--embedding-provider", "tiny",
        "--embedding-salt", "pepper", env=plugin_env,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr
    assert "via tiny" in build.stderr
    embedding = json.loads((out / "metadata.json").read_text())["embedding"]
    assert embedding == {"provider": "tiny", "model": "tiny-v1", "dimensions": 32, "salt": "pepper"}

    found = docs_mcp("search", "--index", out, "retry backoff", "--json", env=plugin_env)
    assert found.returncode == 0, found.stderr
    page = json.loads(found.stdout)
    assert page["mode"] == "hybrid" and page["hits"]  # the query was embedded by the plugin, recreated by name

    again = docs_mcp(
        "build", "--docs-dir", example_docs, "--out", out, "--embedding-provider", "tiny",
        "--embedding-salt", "pepper", env=plugin_env,
    )  # fmt: skip
    assert again.returncode == 0 and re.search(r"embedding cache: \d+ hits, 0 misses", again.stderr), again.stderr
    salted = docs_mcp(
        "build", "--docs-dir", example_docs, "--out", out, "--embedding-provider", "tiny",
        "--embedding-salt", "salt", env=plugin_env,
    )  # fmt: skip
    assert salted.returncode == 0 and "config_fingerprint mismatch" in salted.stderr  # its fingerprint keys the cache


@pytest.mark.slow
def test_its_settings_are_build_options_and_docs_mcp_yaml_keys(plugin_env: dict[str, str], tmp_path: Path) -> None:
    shown = docs_mcp("build", "--help", env=plugin_env)
    assert shown.returncode == 0 and "--embedding-salt" in shown.stdout and "tiny: Salted hashes" in shown.stdout
    config = tmp_path / "docs-mcp.yaml"
    config.write_text(
        "corpora:\n  - name: docs\n    source: {path: docs}\n    embedding: {provider: tiny, salt: pepper}\n"
        "  - name: typo\n    source: {path: docs}\n    embedding: {provider: tiny, sugar: 1}\n"
    )
    probe = (
        "import sys; from docs_mcp_core.sources.config import load_config\n"
        "try:\n    load_config(sys.argv[1])\nexcept Exception as exc:\n    print(exc)\n"
    )
    refused = subprocess.run([sys.executable, "-c", probe, str(config)], env=plugin_env, capture_output=True, text=True)
    assert "corpora[1].embedding: unknown setting sugar for provider tiny" in refused.stdout
    config.write_text(
        "corpora:\n  - name: docs\n    source: {path: docs}\n    embedding: {provider: tiny, salt: pepper}\n"
    )
    probe = (
        "import sys; from docs_mcp_core.sources.config import load_config\n"
        "print(load_config(sys.argv[1]).get('docs').embedding.settings())\n"
    )
    read = subprocess.run([sys.executable, "-c", probe, str(config)], env=plugin_env, capture_output=True, text=True)
    assert read.stdout.strip() == "ProviderSettings('tiny', salt='pepper')", read.stderr


def test_without_the_package_the_name_is_refused_with_the_providers_there_are(tmp_path: Path) -> None:
    refused = docs_mcp("build", "--docs-dir", tmp_path, "--out", tmp_path / "out", "--embedding-provider", "tiny")
    assert refused.returncode == 2
    assert "'tiny' is not one of 'none', 'hash', 'openai', 'local', 'sentence-transformers'" in refused.stderr


# A fresh interpreter: which modules are imported, and whether installed packages were scanned, is per process.
OURS_ONLY = """
import json, sys
from click.testing import CliRunner
from docs_mcp_core import cli
settings_at_import = "docs_mcp_core.embedding.settings" in sys.modules
args = ["build", "--docs-dir", sys.argv[1], "--out", sys.argv[2], "--embedding-provider", "hash", "-q"]
built = CliRunner().invoke(cli.main, args).exit_code
from docs_mcp_core.embedding import registry
from docs_mcp_core.search import run_search
mode = run_search(sys.argv[2], "retry backoff").mode
print(json.dumps({"settings_at_import": settings_at_import, "built": built, "mode": mode,
                  "scanned": registry.plugins.cache_info().currsize}))
"""


@pytest.mark.slow
def test_our_providers_build_and_search_without_scanning_the_installed_packages(
    example_docs: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", OURS_ONLY, str(example_docs), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"settings_at_import": False, "built": 0, "mode": "hybrid", "scanned": 0}
