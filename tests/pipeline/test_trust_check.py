"""The Dagster asset check on quarantined chunks: a warning that lets the rest publish, or blocking by configuration."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from docs_mcp_pipeline import build_definitions

from ..core.untrusted import QUARANTINED_ID, write_untrusted
from .conftest import write_config
from .test_pipeline import materialize


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["warning", "blocking"])
def test_the_quarantine_check_warns_or_blocks_by_configuration(tmp_path: Path, mode: str) -> None:
    docs = write_untrusted(tmp_path / "docs")
    out = tmp_path / "out"
    corpus = {"name": "untrusted", "source": {"path": str(docs)}, "out": str(out), "trust_check": mode}
    corpus["embedding"] = {"provider": "hash", "dimensions": 32}
    defs = build_definitions(str(write_config(tmp_path / "docs-mcp.yaml", [corpus])))
    result = materialize(defs, "untrusted", dg.DagsterInstance.ephemeral(), raise_on_error=False)
    evaluations = {
        e.event_specific_data.check_name: e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    }
    check = evaluations["no_quarantined_chunks"]
    assert check.passed is False
    assert "1 chunk(s) in 1 file(s) quarantined" in check.description and "e.g. attack.md:" in check.description
    assert check.severity == (dg.AssetCheckSeverity.ERROR if mode == "blocking" else dg.AssetCheckSeverity.WARN)
    succeeded = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"}
    if mode == "blocking":
        assert "metadata" not in succeeded and not (out / "metadata.json").exists()
    else:
        assert result.success and "metadata" in succeeded
        ids = {c["chunk_id"] for c in json.loads((out / "chunks.json").read_text())}
        assert QUARANTINED_ID not in ids and "attack.md#troubleshooting/timeouts" in ids


@pytest.mark.slow
def test_a_corpus_with_a_sign_key_publishes_a_signed_index(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from docs_mcp_core.errors import DocsMcpError
    from docs_mcp_core.output.signature import generate
    from docs_mcp_core.output.verify import verify_index

    generate(tmp_path / "ci.pem", tmp_path / "ci.pub.pem")
    generate(tmp_path / "other.pem", tmp_path / "other.pub.pem")
    docs, out = write_untrusted(tmp_path / "docs"), tmp_path / "out"
    corpus = {"name": "signed", "source": {"path": str(docs)}, "out": str(out), "sign_key": "ci.pem"}
    corpus["embedding"] = {"provider": "hash", "dimensions": 32}
    defs = build_definitions(str(write_config(tmp_path / "docs-mcp.yaml", [corpus])))
    assert materialize(defs, "signed", dg.DagsterInstance.ephemeral()).success
    verify_index(out, tmp_path / "ci.pub.pem")
    with pytest.raises(DocsMcpError, match="signed by key"):
        verify_index(out, tmp_path / "other.pub.pem")
