"""`docs-mcp fix`: proposals from the corpus, --write, idempotence, repairs, and the --llm path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from docs_mcp_core.cli import main
from tests.conftest import FIXTURES, write
from tests.fakes.chat_server import FakeChatServer

FENCE = {"python": "python", "typescript": "typescript", "go": "go"}


def method(lang: str, name: str) -> str:
    """An SDK method: a description, then an h3 example that is a code fence, then parameters."""
    code = "\n".join(f"result = client.{name}(arg{i})  # step {i}" for i in range(90))
    rows = "\n".join(f"| field_{i} | string | what field {i} means |" for i in range(110))
    return (
        f"## {name}\n\nThe {name} method does {name} things for your account and returns a result.\n\n"
        f"### Example Usage\n\n```{FENCE[lang]}\n{code}\n```\n\n"
        f"### Parameters\n\n| name | type | meaning |\n|---|---|---|\n{rows}\n\n"
    )


def sdk_corpus(root: Path) -> Path:
    for lang in ("python", "typescript", "go"):
        for page in ("links", "domains"):
            body = "".join(method(lang, f"{page}_{verb}") for verb in ("list", "create", "delete"))
            write(root, f"sdks/{lang}/{page}.md", f"# {page.title()} ({lang})\n\nIntro.\n\n{body}")
    for page in ("authentication", "errors", "pagination"):
        sections = "".join(
            f"## {page} topic {i}\n\n" + ("Plain prose about the concept. " * 30) + "\n\n" for i in range(4)
        )
        write(root, f"guides/{page}.md", f"# {page.title()}\n\n{sections}")
    return root


def fix(runner: CliRunner, docs: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = runner.invoke(main, ["fix", "--docs-dir", str(docs), *args], env=env)
    return result.exit_code, result.output


def validate(runner: CliRunner, docs: Path) -> str:
    result = runner.invoke(main, ["validate", "--docs-dir", str(docs)])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_fix_proposes_level_and_language_taxonomy(tmp_path: Path, runner: CliRunner) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    code, out = fix(runner, docs, "--format", "json")
    assert code == 0, out
    [proposal] = json.loads(out)["proposals"]
    assert proposal["path"] == ".docs-mcp.json" and proposal["action"] == "create"
    manifest = proposal["content"]
    # h3 would cut each method's Example Usage fence off its description: h2 keeps them together
    assert manifest["strategy"]["chunk_by"] == "h2"
    assert manifest["strategy"]["max_chunk_size"] >= 4000
    assert manifest["metadata"] == {"scope": "global-guide"}
    languages = {o["pattern"]: o["metadata"] for o in manifest["overrides"] if "metadata" in o}
    assert languages == {
        f"sdks/{lang}/**": {"language": lang, "scope": "sdk-specific"} for lang in ("go", "python", "typescript")
    }
    assert set(manifest["taxonomy"]) == {"language", "scope"}
    assert all(entry["description"] for entry in manifest["taxonomy"].values())
    assert not (docs / ".docs-mcp.json").exists()  # without --write nothing is written


@pytest.mark.slow
def test_write_then_validate_clean_and_second_fix_proposes_nothing(tmp_path: Path, runner: CliRunner) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    before = validate(runner, docs)
    assert "warning: 9 files: no explicit chunking strategy [no-strategy]" in before
    code, out = fix(runner, docs)
    assert code == 0 and "+++ b/.docs-mcp.json" in out and '"chunk_by": "h2"' in out
    code, out = fix(runner, docs, "--write")
    assert code == 0 and "wrote .docs-mcp.json" in out
    assert validate(runner, docs).strip().endswith("0 error(s), 0 warning(s)")
    code, out = fix(runner, docs)
    assert code == 0 and "nothing to propose" in out and "+++" not in out
    code, out = fix(runner, docs, "--format", "json")
    assert json.loads(out)["proposals"] == []
    # the taxonomy reaches the index
    index = tmp_path / "index"
    result = runner.invoke(
        main, ["build", "--docs-dir", str(docs), "--out", str(index), "-q", "--embedding-provider", "none"]
    )
    assert result.exit_code == 0, result.output
    taxonomy = json.loads((index / "metadata.json").read_text())["taxonomy"]
    assert taxonomy["language"]["values"] == ["go", "python", "typescript"]
    assert taxonomy["scope"]["values"] == ["global-guide", "sdk-specific"]


def test_repair_oversized_section_and_unmatched_override(tmp_path: Path, runner: CliRunner) -> None:
    docs = tmp_path / "docs"
    write(
        docs,
        ".docs-mcp.json",
        json.dumps(
            {
                "version": "1",
                "strategy": {"chunk_by": "h2", "max_chunk_size": 1000},
                "overrides": [{"pattern": "nothing-here/**", "strategy": {"chunk_by": "h1"}}],
            }
        ),
    )
    small = "## Small\n\nShort section.\n\n"
    big = "## Big\n\nIntro.\n\n" + "".join(f"### Part {i}\n\n" + "words " * 100 + "\n\n" for i in range(5))
    write(docs, "big.md", "# Big page\n\n" + small + big)
    write(docs, "fine.md", "# Fine\n\n" + small)
    code, out = fix(runner, docs, "--format", "json")
    assert code == 0, out
    report = json.loads(out)
    [proposal] = report["proposals"]
    assert proposal["action"] == "update"
    added = proposal["content"]["overrides"][-1]
    assert added == {"pattern": "big.md", "strategy": {"chunk_by": "h3", "max_chunk_size": 1000}}
    assert any("big.md" in r and "over max_chunk_size 1000" in r for r in proposal["reasons"])
    assert any("overrides[0] pattern 'nothing-here/**' matches no file" in n for n in report["notes"])
    code, out = fix(runner, docs, "--write")
    assert code == 0
    assert validate(runner, docs).strip().endswith("0 error(s), 0 warning(s)")
    assert json.loads(fix(runner, docs, "--format", "json")[1])["proposals"] == []


def test_fix_refuses_a_corpus_whose_manifest_is_broken(tmp_path: Path, runner: CliRunner) -> None:
    docs = tmp_path / "docs"
    write(docs, ".docs-mcp.json", '{"version": "1", "strategy": {"chunk_by": "h9"}}')
    write(docs, "a.md", "# A\n")
    code, out = fix(runner, docs)
    assert code == 1
    assert "error: .docs-mcp.json:1: error:" in out and "Traceback" not in out


LLM_REPLY = json.dumps(
    {
        "taxonomy": {"language": "SDK language: python, typescript or go.", "scope": "Whether a page is for one SDK."},
        "mcpServerInstructions": "Docs for the Links and Domains APIs across three SDKs. Filter by language.",
    }
)


@pytest.mark.slow
def test_llm_writes_descriptions_and_instructions(tmp_path: Path, runner: CliRunner) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    with FakeChatServer(reply=f"Here you go:\n```json\n{LLM_REPLY}\n```") as server:
        code, out = fix(
            runner,
            docs,
            "--llm",
            "--llm-base-url",
            server.url,
            "--llm-model",
            "tiny-chat",
            "--write",
            env={"OPENAI_API_KEY": "sk-test"},
        )
        assert code == 0, out
        assert len(server.bodies) == 1 and server.auth == ["Bearer sk-test"]
        body = server.bodies[0]
        assert body["model"] == "tiny-chat"
        sent = body["messages"][-1]["content"]
        assert "sdks/python" in sent and "links_create" in sent  # folders and headings of the corpus
        assert server.raw_sizes[0] < 12_000  # a bounded summary, not the corpus
        manifest = json.loads((docs / ".docs-mcp.json").read_text())
        assert manifest["taxonomy"]["language"]["description"] == "SDK language: python, typescript or go."
        assert manifest["mcpServerInstructions"].startswith("Docs for the Links and Domains APIs")
        assert validate(runner, docs).strip().endswith("0 error(s), 0 warning(s)")
        # the model only fills what is empty: a second run proposes nothing and asks nothing
        code, out = fix(runner, docs, "--llm", "--llm-base-url", server.url, env={"OPENAI_API_KEY": "sk-test"})
        assert code == 0 and "nothing to propose" in out
        assert len(server.bodies) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    "status,reply,expected",
    [
        (200, "I cannot help with that.", "did not answer with a JSON object"),
        (400, "{}", "--llm request failed"),
    ],
)
def test_llm_failures_are_one_error_line(
    tmp_path: Path, runner: CliRunner, status: int, reply: str, expected: str
) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    with FakeChatServer(reply=reply, status=status) as server:
        code, out = fix(
            runner, docs, "--llm", "--llm-base-url", server.url, "--write", env={"OPENAI_API_KEY": "sk-test"}
        )
    assert code == 1 and expected in out and "Traceback" not in out
    assert not (docs / ".docs-mcp.json").exists()


@pytest.mark.slow
def test_llm_without_key_is_a_clear_error(tmp_path: Path, runner: CliRunner) -> None:
    docs = sdk_corpus(tmp_path / "docs")
    code, out = fix(runner, docs, "--llm", "--llm-base-url", "http://127.0.0.1:9/v1", env={"OPENAI_API_KEY": ""})
    assert code == 1 and "OPENAI_API_KEY" in out


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["dub-ts", "uv-docs"])
def test_real_corpora_fix_write_validate_clean(tmp_path: Path, runner: CliRunner, corpus: str) -> None:
    """The bundled real trees, without a manifest: fix --write leaves validate with nothing to say."""
    docs = tmp_path / corpus
    shutil.copytree(FIXTURES / corpus, docs, ignore=shutil.ignore_patterns(".docs-mcp.json"))
    assert "no explicit chunking strategy [no-strategy]" in validate(runner, docs)
    code, out = fix(runner, docs, "--write")
    assert code == 0, out
    manifest = json.loads((docs / ".docs-mcp.json").read_text())
    assert manifest["strategy"]["chunk_by"] == "h2"  # what their suites were written against
    assert validate(runner, docs).strip().endswith("0 error(s), 0 warning(s)")
    assert json.loads(fix(runner, docs, "--format", "json")[1])["proposals"] == []


def test_fix_excludes_pages_a_framework_leaves_empty_and_notes_language_tabs(tmp_path: Path) -> None:
    """Under a docs framework: stub-only, empty and heading-only pages are excluded, with the reason."""
    write(tmp_path, "mkdocs.yml", "site_name: W\n")
    docs = tmp_path / "docs"
    write(docs, "api.md", "# API reference\n\n::: widgets.api\n\n::: widgets.models\n")
    write(docs, "soon.md", "# Alternatives\n\nComing soon...\n")
    write(docs, "blank.md", "---\ntitle: Blank\n---\n")
    body = "Widgets spin and stop when you ask them to, in every language the SDK supports.\n\n"
    tabs = '=== "Python"\n\n    ```\n    w.spin()\n    ```\n\n=== "Go"\n\n    ```\n    w.Spin()\n    ```\n\n'
    for page in ("guide", "usage", "faq"):
        write(docs, f"{page}.md", f"# {page.title()}\n\n## Spin\n\n{body}{tabs}## Stop\n\n{body}")
    result = CliRunner().invoke(main, ["fix", "--docs-dir", str(docs), "--write"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((docs / ".docs-mcp.json").read_text())
    assert manifest["exclude"] == ["api.md", "blank.md", "soon.md"]
    assert "exclude api.md: it is only API stubs" in result.output
    assert "exclude soon.md: it has 14 characters of text besides its headings" in result.output
    assert "tabs show code in several languages: go (3 tabs), python (3 tabs)" in result.output
    validate = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs)])
    assert validate.exit_code == 0 and "0 error(s), 0 warning(s)" in validate.output, validate.output
    assert "nothing to propose" in CliRunner().invoke(main, ["fix", "--docs-dir", str(docs)]).output
    # without a framework nothing says a short page is not meant to be read
    (tmp_path / "mkdocs.yml").unlink()
    (docs / ".docs-mcp.json").unlink()
    CliRunner().invoke(main, ["fix", "--docs-dir", str(docs), "--write"])
    assert "exclude" not in json.loads((docs / ".docs-mcp.json").read_text())


DIALECT_CORPORA = {
    "sqlmodel-docs": ("sqlmodel-docs/docs", []),
    "vite-docs": ("vite-docs/docs", []),
    "starlight-docs": ("starlight-docs/docs/src/content/docs", []),
    # HISTORY.md sits at the repository root, outside the copied docs/ folder: a real finding fix cannot repair
    "requests-docs": ("requests-docs/docs", ["community/updates.rst:18: warning: include '../../HISTORY.md'"]),
    "uv-docs": ("uv-docs", []),
}


@pytest.mark.slow
@pytest.mark.parametrize("corpus", sorted(DIALECT_CORPORA))
def test_fix_write_then_validate_is_clean_on_the_dialect_corpora(corpus: str, tmp_path: Path) -> None:
    rel, expected = DIALECT_CORPORA[corpus]
    shutil.copytree(FIXTURES / corpus, tmp_path / corpus)
    docs = tmp_path / rel
    assert CliRunner().invoke(main, ["fix", "--docs-dir", str(docs), "--write"]).exit_code == 0
    result = CliRunner().invoke(main, ["validate", "--docs-dir", str(docs)])
    assert result.exit_code == 0, result.output
    findings = [ln for ln in result.output.splitlines() if ": warning: " in ln or ": error: " in ln]
    assert len(findings) == len(expected) and all(f.startswith(e) for f, e in zip(findings, expected)), findings
    assert "nothing to propose" in CliRunner().invoke(main, ["fix", "--docs-dir", str(docs)]).output
