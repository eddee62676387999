"""`docs-mcp audit`: the DuckDB record of what each CLI build paid for."""

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from docs_mcp_core.output.layout import OutputLayout

from ..conftest import EXAMPLE_CHUNKS


@pytest.mark.slow
def test_audit_after_cli_builds(example_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    build = ["build", "--docs-dir", str(example_docs), "--out", str(out), "--embedding-provider", "hash", "-q"]
    assert runner.invoke(main, build).exit_code == 0
    page = example_docs / "guides" / "retries.md"
    page.write_text(page.read_text() + "\nOne more line about retries.\n")
    assert runner.invoke(main, build).exit_code == 0

    summary = runner.invoke(main, ["audit", "--out", str(out)])
    assert summary.exit_code == 0, summary.output
    lines = dict(
        line.split(None, 1)
        for line in summary.output.splitlines()
        if line.strip() and not line.startswith("chunk events")
    )
    assert (
        lines["corpus"] == "out" and lines["chunks"] == str(EXAMPLE_CHUNKS) and lines["hits"] == str(EXAMPLE_CHUNKS - 1)
    )
    assert lines["misses"] == "1" and lines["embedded"] == "1" and lines["pruned"] == "1"
    assert summary.output.splitlines()[-1].split(None, 2)[-1] == f"{EXAMPLE_CHUNKS - 1} hit, 1 miss, 1 pruned"

    sql = runner.invoke(
        main,
        [
            "audit",
            "--out",
            str(out),
            "--sql",
            "SELECT status, count(*) AS n FROM chunk_events GROUP BY status ORDER BY status",
        ],
    )
    assert sql.exit_code == 0
    assert sql.output.splitlines()[2:] == [
        f"hit     {EXAMPLE_CHUNKS - 1}",
        f"miss    {EXAMPLE_CHUNKS + 1}",
        "pruned  1 ",
        "(3 rows)",
    ]
    with duckdb.connect(str(OutputLayout(out).audit), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM builds").fetchone() == (2,)


def test_audit_errors_are_clear(example_docs: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["audit", "--out", str(tmp_path / "nope")])
    assert (
        missing.exit_code == 1
        and "no index at" in missing.output
        and "docs-mcp build --docs-dir DOCS --index" in missing.output
    )
    assert not (tmp_path / "nope").exists()
    out = tmp_path / "out"
    runner.invoke(
        main, ["build", "--docs-dir", str(example_docs), "--out", str(out), "-q", "--embedding-provider", "none"]
    )
    bad = runner.invoke(main, ["audit", "--out", str(out), "--sql", "SELECT nope FROM builds"])
    assert bad.exit_code == 1 and bad.output.startswith("error: audit query failed:") and "Traceback" not in bad.output
    write = runner.invoke(main, ["audit", "--out", str(out), "--sql", "DELETE FROM builds"])
    assert write.exit_code == 1 and "read-only" in write.output


OLD_BUILDS = """CREATE TABLE builds (build_id VARCHAR PRIMARY KEY, corpus VARCHAR, finished_at TIMESTAMPTZ,
    source_commit VARCHAR, files INTEGER, files_reparsed INTEGER, chunks INTEGER, hits INTEGER, misses INTEGER,
    embedded INTEGER, pruned INTEGER, provider VARCHAR, model VARCHAR, table_version INTEGER, seconds DOUBLE)"""


def test_an_audit_file_from_before_backends_gains_the_columns_and_keeps_its_rows(
    example_docs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    OutputLayout(out).audit.parent.mkdir(parents=True)
    with duckdb.connect(str(OutputLayout(out).audit)) as con:
        con.execute(OLD_BUILDS)
        con.execute(
            "INSERT INTO builds VALUES ('old', 'out', now(), NULL, 1, 1, 1, 0, 1, 1, 0, 'hash', 'hash-v1', 1, 0.1)"
        )
    build = ["build", "--docs-dir", str(example_docs), "--out", str(out), "--embedding-provider", "hash", "-q"]
    assert CliRunner().invoke(main, build).exit_code == 0
    with duckdb.connect(str(OutputLayout(out).audit), read_only=True) as con:
        rows = con.execute(
            "SELECT build_id = 'old', provider, backend, model_sha256, length(config_fingerprint) "
            "FROM builds ORDER BY finished_at"
        ).fetchall()
    assert rows == [(True, "hash", None, None, None), (False, "hash", None, None, 64)]
