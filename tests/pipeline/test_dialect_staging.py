"""Staging keeps what a docs framework needs beside the pages: its config and the files includes read.

The sqlmodel docs include their examples from docs_src/ beside docs/, resolved from the folder of
mkdocs.yml; a staged copy (a folder or a git commit, through the Dagster assets) must build the very
chunks a build of the folder itself makes, and stage nothing else of the project.
"""

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.sources.git import stage_git
from docs_mcp_core.sources.local import stage_local
from docs_mcp_pipeline import build_definitions

from ..conftest import git, write
from .conftest import write_config

SQLMODEL = Path(__file__).parents[1] / "fixtures" / "sqlmodel-docs"
VITE = Path(__file__).parents[1] / "fixtures" / "vite-docs"


def chunks(out: Path) -> list[dict]:
    return [
        {k: c[k] for k in ("chunk_id", "content", "breadcrumb", "source_url")}
        for c in json.loads((out / "chunks.json").read_text())
    ]


def project(tmp_path: Path) -> Path:
    """A copy of the sqlmodel project with things staging must leave alone: code, images, another site."""
    repo = tmp_path / "repo"
    shutil.copytree(SQLMODEL, repo)
    write(repo, "sqlmodel/main.py", "print('library code')\n")
    write(repo, "docs/img/logo.svg", "<svg/>\n")
    write(repo, "site/index.md", "# Built site\n")
    return repo


@pytest.mark.slow
def test_local_staging_of_a_framework_project_builds_the_folders_chunks(tmp_path: Path) -> None:
    repo = project(tmp_path)
    build(repo / "docs", tmp_path / "direct", make_provider(ProviderSettings("none")))
    staged = stage_local(repo / "docs", tmp_path / "stage" / "docs")
    assert Path(staged.path) == tmp_path / "stage" / "docs" / "docs"  # the project mirrored, docs inside it
    assert "../mkdocs.yml" in staged.files and "../mkdocs.env.yml" in staged.files
    assert "../docs_src/tutorial/update/tutorial002_py310.py" in staged.files  # read by an include
    assert not any(k.startswith(("../sqlmodel/", "../site/", "img/")) for k in staged.files)
    build(Path(staged.path), tmp_path / "staged-out", make_provider(ProviderSettings("none")))
    assert chunks(tmp_path / "staged-out") == chunks(tmp_path / "direct")
    # an included file that changes changes the staged data version, so the pipeline rebuilds
    before = staged.data_version
    included = repo / "docs_src/tutorial/update/tutorial002_py310.py"
    included.write_text(included.read_text() + "\n# changed\n")
    again = stage_local(repo / "docs", tmp_path / "stage" / "docs")
    assert again.data_version != before and again.changed == ["../docs_src/tutorial/update/tutorial002_py310.py"]


@pytest.mark.slow
def test_a_vitepress_config_and_snippet_inside_the_docs_folder_are_staged(tmp_path: Path) -> None:
    staged = stage_local(VITE / "docs", tmp_path / "stage" / "docs")
    assert Path(staged.path) == tmp_path / "stage" / "docs"
    assert ".vitepress/config.ts" in staged.files and "guide/static-deploy-github-pages.yaml" in staged.files
    build(Path(staged.path), tmp_path / "out", make_provider(ProviderSettings("none")))
    deploy = next(
        c
        for c in chunks(tmp_path / "out")
        if c["chunk_id"].endswith("static-deploy.md#deploying-a-static-site/github-pages")
    )
    assert "```yaml [.github/workflows/deploy.yml]" in deploy["content"]
    assert deploy["source_url"] == "https://vite.dev/guide/static-deploy#github-pages"


@pytest.mark.slow
def test_git_and_folder_sources_through_dagster_build_sqlmodel_with_its_includes(tmp_path: Path) -> None:
    repo = project(tmp_path)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    build(repo / "docs", tmp_path / "direct", make_provider(ProviderSettings("none")))
    config = write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {"name": "local", "source": {"path": str(repo / "docs")}, "out": str(tmp_path / "a")},
            {"name": "git", "source": {"git": str(repo), "subdir": "docs"}, "out": str(tmp_path / "b")},
        ],
    )
    text = config.read_text().replace("out:", "embedding: {provider: none}\n  out:")
    config.write_text(text)
    defs = build_definitions(str(config))
    instance = dg.DagsterInstance.ephemeral()
    for name, out in (("local", "a"), ("git", "b")):
        result = dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],
            partition_key=name,
            instance=instance,
            resources=defs.resources,
        )
        assert result.success, name
        assert chunks(tmp_path / out) == chunks(tmp_path / "direct"), name
        staged = OutputLayout(tmp_path / out).staged
        assert (staged / "mkdocs.yml").is_file() and (staged / "docs_src").is_dir(), name
        assert not (staged / "sqlmodel").exists() and not (staged / "site").exists(), name
    update = next(
        c for c in chunks(tmp_path / "b") if c["chunk_id"] == "tutorial/update.md#update-data-update/multiple-updates"
    )
    assert "hero_1.age = 16" in update["content"]  # code from docs_src/, included with {! !} / {* *}


@pytest.mark.slow
def test_git_staging_fetches_only_the_files_the_includes_read(tmp_path: Path) -> None:
    repo = project(tmp_path)
    write(repo, "snippets/shared.md", '--8<-- "snippets/deeper.md"\n')
    write(repo, "snippets/deeper.md", "Deeper text.\n")
    write(repo, "docs/snippet-page.md", '# Snippets\n\n--8<-- "snippets/shared.md"\n')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    staged = stage_git(str(repo), "main", "docs", tmp_path / "out" / "staged" / "docs")
    assert {"../snippets/shared.md", "../snippets/deeper.md", "../mkdocs.yml"} <= set(staged.files)
    assert not any(k.startswith(("../sqlmodel/", "../site/")) for k in staged.files)
    build(Path(staged.path), tmp_path / "idx", make_provider(ProviderSettings("none")))
    page = next(c for c in chunks(tmp_path / "idx") if c["chunk_id"].startswith("snippet-page.md"))
    assert "Deeper text." in page["content"]
