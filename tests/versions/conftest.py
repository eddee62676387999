"""The sqlmodel docs at five release tags (tests/fixtures/sqlmodel-docs-versions: a git bundle), cloned once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ..conftest import FIXTURES

BUNDLE = FIXTURES / "sqlmodel-docs-versions" / "sqlmodel-docs.bundle"
TAGS = ["0.0.14", "0.0.20", "0.0.24", "0.0.31", "0.0.39"]


@pytest.fixture(scope="session")
def sqlmodel_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("sqlmodel") / "repo"
    subprocess.run(["git", "clone", "--quiet", str(BUNDLE), str(repo)], check=True, capture_output=True)
    return repo
