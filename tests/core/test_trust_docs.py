"""The Trust page lists the built-in rules as rules.yaml defines them."""

from pathlib import Path

from docs_mcp_core.trust.rules import builtin_rules

PAGE = Path(__file__).resolve().parents[2] / "docs" / "trust.md"


def test_the_docs_list_every_builtin_rule_with_its_severity() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for rule in builtin_rules().rules:
        assert f"| `{rule.id}` | {rule.severity} | {rule.what} | {rule.reason} |" in page, rule.id
