from pathlib import Path

import pytest
import yaml


def write_config(path: Path, corpora: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"corpora": corpora}))
    return path


@pytest.fixture
def example_config(tmp_path: Path, example_docs: Path) -> Path:
    return write_config(
        tmp_path / "docs-mcp.yaml",
        [
            {
                "name": "example",
                "description": "Parcelly docs",
                "source": {"path": str(example_docs)},
                "out": str(tmp_path / "indexes" / "example"),
                "embedding": {"provider": "hash", "dimensions": 64},
            }
        ],
    )
