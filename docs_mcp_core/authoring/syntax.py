"""validate's syntax table: per docs-dialect construct, how often it occurs, what it became, an example."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..corpus.dialects import construct_status

# Components of each framework's own library (and React's Fragment): their text children are kept, as for
# any component; the others are reported once per name as unknown (their props are not read).
KNOWN_COMPONENTS = {
    "Starlight": {
        "Tabs", "TabItem", "Aside", "Card", "CardGrid", "LinkCard", "LinkButton", "Steps", "FileTree", "Badge",
        "Icon", "Code",
    },
    "Docusaurus": {"Tabs", "TabItem", "Admonition", "CodeBlock", "Details", "TOCInline", "DocCardList"},
    "VitePress": {
        "Badge", "Content", "ClientOnly", "Home", "VPTeamPage", "VPTeamPageTitle", "VPTeamPageSection",
        "VPTeamMembers", "VPSponsors",
    },
    "Mintlify": {
        "Note", "Tip", "Warning", "Info", "Check", "CodeGroup", "Frame", "Expandable", "ParamField",
        "ResponseField", "Accordion", "AccordionGroup", "Card", "CardGroup", "Tabs", "Tab", "Steps", "Step",
    },
}  # fmt: skip
ANY_FRAMEWORK = {"Fragment"} | set().union(*KNOWN_COMPONENTS.values())  # without a framework: any of these


@dataclass
class SyntaxReport:
    framework: str | None
    rows: list[dict[str, Any]] = field(default_factory=list)  # construct, count, status, example
    stub_pages: list[str] = field(default_factory=list)  # pages that are API stubs and nothing else
    notes: list[str] = field(default_factory=list)  # about the framework's config (keys not read)
    unknown_components: list[dict[str, Any]] = field(default_factory=list)  # name, count, example: once per name

    def lines(self) -> list[str]:
        out = [
            f"framework: {self.framework or 'none found (plain Markdown rules; includes resolve in the docs folder)'}"
        ]
        out += [f"note: {note}" for note in self.notes]
        if self.rows:
            width = max(len(r["construct"]) for r in self.rows)
            out.append(f"syntax: {'construct':<{width}}  {'count':>5}  {'became':<18}  example")
            out += [
                f"        {r['construct']:<{width}}  {r['count']:>5}  {r['status']:<18}  {r['example']}"
                for r in self.rows
            ]
        if self.unknown_components:
            shown = ", ".join(
                f"<{c['name']}> ({c['count']}, e.g. {c['example']})" for c in self.unknown_components[:8]
            ) + (f" and {len(self.unknown_components) - 8} more" if len(self.unknown_components) > 8 else "")
            out.append(
                f"note: {len(self.unknown_components)} component(s) are not the docs framework's own: {shown}; "
                "their text children are indexed, their props (data, options) are not"
            )
        if self.stub_pages:
            shown = ", ".join(self.stub_pages[:3]) + (
                f" and {len(self.stub_pages) - 3} more" if len(self.stub_pages) > 3 else ""
            )
            out.append(
                f"note: {len(self.stub_pages)} page(s) are only API stubs (mkdocstrings `:::`, autodoc), whose text comes "
                f"from the code when the site is built: nothing of them is indexed ({shown}); to index the API "
                "reference, build from the rendered site with --url"
            )
        return out


def _status(construct: str, known: set[str]) -> str:
    if construct.startswith("component <"):
        name = construct[len("component <") : -1]
        return "text kept" if name in known else "unknown: text kept"
    if "unresolved" in construct:
        return "left out"
    return construct_status(construct)


def syntax_report(chunkset: Any) -> SyntaxReport:
    """Constructs grouped across the corpus (never a line per occurrence), most frequent first."""
    counts: dict[str, list[Any]] = {}
    stubs = []
    for record in chunkset.files:
        kinds = set()
        for construct, line in record.constructs:
            entry = counts.setdefault(construct, [0, f"{record.relpath}:{line}"])
            entry[0] += 1
            kinds.add(construct)
        if record.chunks == 0 and any(k.startswith(("API stub", "Sphinx directive auto")) for k in kinds):
            stubs.append(record.relpath)
    framework = (chunkset.framework or "").split(" (")[0]
    known = {"Fragment"} | KNOWN_COMPONENTS[framework] if framework in KNOWN_COMPONENTS else ANY_FRAMEWORK
    rows = [
        {"construct": c, "count": n, "status": _status(c, known), "example": example}
        for c, (n, example) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ]
    unknown = [
        {"name": r["construct"][len("component <") : -1], "count": r["count"], "example": r["example"]}
        for r in rows
        if r["status"] == "unknown: text kept"
    ]
    return SyntaxReport(chunkset.framework, rows, sorted(stubs), list(chunkset.notes), unknown)
