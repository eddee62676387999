"""Recall and false positives of the trust scan on its test corpus, through the build's parse and chunk step.

tests/fixtures/trust/injected/RULE.FORM.md: each page hides one attempt at the agent; it must
be flagged by RULE. tests/fixtures/trust/benign/: pages about prompts, models, agents, tokens,
secrets and commands written for people, and prompt-injection examples quoted in code; none may
be flagged. The counts are the figures the docs report.
"""

from collections import defaultdict
from pathlib import Path

import pytest

from docs_mcp_core.indexing.chunks import analyze_corpus
from docs_mcp_core.indexing.quarantine import trust_diagnostics
from docs_mcp_core.trust.rules import builtin_rules

from ..conftest import EXAMPLE_DOCS, FIXTURES

INJECTED = FIXTURES / "trust" / "injected"
BENIGN = FIXTURES / "trust" / "benign"
INTENT_RULES = (
    "ignore-instructions",
    "role-play",
    "call-tools",
    "run-command",
    "reveal-secrets",
    "conceal-from-user",
    "steer-answers",
)
FORMS = ("plain", "case", "spacing", "lookalike", "split", "hidden")


def flagged(root: Path) -> tuple[dict[str, set[str]], list[str], list]:
    """Rules flagged per file, the files scanned, and the diagnostics, as `docs-mcp validate` reports them."""
    chunkset = analyze_corpus(root)
    diagnostics = trust_diagnostics(chunkset.flags())
    rules: dict[str, set[str]] = defaultdict(set)
    for d in diagnostics:
        rules[d.path].add(d.code.removeprefix("trust-"))
    return rules, sorted(f.relpath for f in chunkset.files), diagnostics


def test_every_injected_page_is_flagged_by_the_rule_it_targets() -> None:
    rules, files, _ = flagged(INJECTED)
    assert len(files) == len(list(INJECTED.glob("*.md"))) >= 40
    missed = [f for f in files if f.split(".")[0] not in rules[f]]
    assert missed == []  # recall 74/74


def test_the_injected_corpus_covers_every_rule_and_every_form() -> None:
    names = [p.name for p in INJECTED.glob("*.md")]
    targeted = {n.split(".")[0] for n in names}
    assert targeted == {r.id for r in builtin_rules().rules}
    for rule in INTENT_RULES:
        assert {n.split(".")[1] for n in names if n.startswith(rule + ".")} >= set(FORMS), rule


def test_no_benign_page_is_flagged() -> None:
    rules, files, diagnostics = flagged(BENIGN)
    assert len(files) >= 40
    assert [d.format() for d in diagnostics] == []  # false positives 0/46


def test_findings_point_at_the_line_with_the_text() -> None:
    _, _, diagnostics = flagged(INJECTED)
    assert diagnostics
    for d in diagnostics:
        lines = (INJECTED / d.path).read_text(encoding="utf-8").split("\n")
        excerpt = d.message.split("“", 1)[1].split("”", 1)[0]
        around = " ".join(" ".join(lines[d.line - 2 : d.line + 1]).split())
        probe = excerpt.replace("<U+", "\x00").split("\x00")[0][:12]  # before any shown invisible character
        assert probe in around, (d.format(), around)


def test_the_shipped_example_corpus_has_no_findings() -> None:
    _, files, diagnostics = flagged(EXAMPLE_DOCS)
    assert files and diagnostics == []


@pytest.mark.slow
def test_the_dub_ts_fixture_has_no_findings(dub_ts_docs: Path) -> None:
    _, files, diagnostics = flagged(dub_ts_docs)
    assert len(files) > 400 and diagnostics == []
