"""The Dagster staging leaves out what build and validate leave out: config, manifest and .gitignore excludes."""

import json
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_pipeline import build_definitions

from ..conftest import git, write
from .conftest import write_config

PAGE = "# {0}\n\n## Section\n\nText about {0}.\n"


@pytest.mark.slow
def test_staging_skips_excluded_files_for_local_and_git_sources(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(
        repo,
        "docs/.docs-mcp.json",
        json.dumps({"version": "1", "strategy": {"chunk_by": "h2"}, "exclude": ["vendor/**"]}),
    )
    write(repo, "docs/.gitignore", "generated/\n")
    for rel in ("guide.md", "vendor/lib.md", "generated/api.md", "drafts/wip.md"):
        write(repo, f"docs/{rel}", PAGE.format(rel))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "add", "-f", "docs/generated/api.md")  # committed although ignored: still left out, as locally
    git(repo, "commit", "-qm", "docs")
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "local",
                "source": {"path": str(repo / "docs")},
                "out": str(tmp_path / "a"),
                "exclude": ["drafts/**"],
                "embedding": {"provider": "none"},
            },
            {
                "name": "git",
                "source": {"git": str(repo), "subdir": "docs"},
                "out": str(tmp_path / "b"),
                "exclude": ["drafts/**"],
                "embedding": {"provider": "none"},
            },
        ],
    )
    defs = build_definitions(str(config))
    instance = dg.DagsterInstance.ephemeral()
    for name, out in (("local", "a"), ("git", "b")):
        dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            partition_key=name,
            instance=instance,
            resources=defs.resources,
        )
        chunks = json.loads((tmp_path / out / "chunks.json").read_text())
        assert sorted({c["filepath"] for c in chunks}) == ["guide.md"], name
