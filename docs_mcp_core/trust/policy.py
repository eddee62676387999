"""A corpus's trust policy: the rules each file is scanned with and the findings its manifest allows.

A file follows its nearest manifest, as every manifest setting does (DESIGN.md §3): the
built-in rules, plus the manifest's `rules_file` and a rules file given by the build's
configuration, minus the rules it disables; findings matching one of its `allow` entries
are let through, with the entry's reason. This is what a build and `docs-mcp validate` call:

    trust, diagnostics = load_trust(root, manifests)      # once per build
    verdict = trust.check(chunk.content, chunk.filepath)  # per chunk
    verdict.quarantined, verdict.findings, verdict.allowed
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.globs import glob_match
from ..corpus.json_locations import line_of
from ..corpus.manifest import LoadedManifest, format_loc, nearest_manifest
from ..corpus.trust_settings import CorpusTrustSettings
from ..diagnostics import Diagnostic, error
from .rules import Anchors, RuleSet, builtin_rules, load_rules_file
from .scan import Finding, scan_removed
from .views import Removed


@dataclass(frozen=True)
class Allowance:
    path: str | None  # glob relative to the manifest's folder (the docs folder: `root`); None: every file
    rule: str | None  # None: every rule
    reason: str
    manifest: str  # where it is written
    root: bool = False  # from the build's configuration: `path` is relative to the docs folder


@dataclass(frozen=True)
class CorpusTrust:
    """A corpus's trust settings from the build's configuration (docs-mcp.yaml), for every file: a rules file,
    rules disabled and findings allowed (`path` relative to the docs folder), each with a reason."""

    source: str  # where they are written, for messages: "docs-mcp.yaml: corpora[0].trust"
    rules_file: Path | None = None
    disable: tuple[tuple[str, str], ...] = ()  # (rule, reason)
    allow: tuple[Allowance, ...] = ()

    @classmethod
    def of(cls, settings: CorpusTrustSettings, source: str, rules_file: Path | None) -> CorpusTrust:
        allow = tuple(Allowance(a.path, a.rule, a.reason, source, root=True) for a in settings.allow)
        return cls(source, rules_file, tuple((d.rule, d.reason) for d in settings.disable), allow)


@dataclass(frozen=True)
class Policy:
    rules: RuleSet
    folder: str = ""  # the manifest's folder ("" for the root or no manifest)
    allow: tuple[Allowance, ...] = ()

    def allowance(self, relpath: str, finding: Finding) -> Allowance | None:
        local = relpath[len(self.folder) + 1 :] if self.folder else relpath
        for entry in self.allow:
            if entry.rule is not None and entry.rule != finding.rule:
                continue
            if entry.path is not None and not glob_match(entry.path, relpath if entry.root else local):
                continue
            return entry
        return None


@dataclass(frozen=True)
class Verdict:
    findings: list[Finding]  # not allowed: what validate reports
    allowed: list[tuple[Finding, Allowance]] = field(default_factory=list)
    removed: Removed | None = None  # what the sanitizer takes out of the chunk, when the scan learnt it (scan.py)

    @property
    def quarantined(self) -> bool:
        """A finding of an `error` rule that no allow entry covers: the chunk must not be served."""
        return any(f.severity == "error" for f in self.findings)


@dataclass
class Trust:
    default: Policy
    by_folder: dict[str, Policy] = field(default_factory=dict)  # manifest folder -> its policy
    manifests: dict[str, LoadedManifest] = field(default_factory=dict)
    _keys: dict[int, str] = field(default_factory=dict, repr=False, compare=False)

    def policy_for(self, relpath: str) -> Policy:
        loaded = nearest_manifest(relpath, self.manifests)
        return self.by_folder.get(loaded.folder, self.default) if loaded else self.default

    def key(self, relpath: str) -> str:
        """Changes when the rules or allow entries `relpath` is checked with change: a build reuses a file's
        verdicts only under the same key."""
        policy = self.policy_for(relpath)
        found = self._keys.get(id(policy))
        if found is None:
            found = self._keys[id(policy)] = _policy_key(policy)
        return found

    def check(self, content: str, relpath: str, policy: Policy | None = None) -> Verdict:
        """Scan one chunk (its Markdown as written) of file `relpath` (relative to the docs root); `policy`:
        the file's (policy_for), when the caller scans several of its chunks."""
        policy = policy or self.policy_for(relpath)
        findings, allowed = [], []
        found, removed = scan_removed(content, policy.rules)
        for finding in found:
            entry = policy.allowance(relpath, finding)
            if entry is None:
                findings.append(finding)
            else:
                allowed.append((finding, entry))
        return Verdict(findings, allowed, removed)


def _anchors(anchors: Anchors) -> list[Any]:
    return [sorted(anchors.words), list(anchors.prefixes), [_anchors(a) for a in anchors.also]]


def _policy_key(policy: Policy) -> str:
    rules = [
        [
            r.id,
            r.severity,
            r.source,
            list(r.views),
            [p.pattern for p in r.patterns],
            [sorted(a) for a in r.anchors],
            [_anchors(a) for a in r.pattern_anchors],
            sorted(r.not_after),
            list(r.unless),
            r.check,
        ]
        for r in policy.rules.rules
    ]
    allow = [[a.path, a.rule, a.reason, *([True] if a.root else [])] for a in policy.allow]
    data = json.dumps([rules, sorted(policy.rules.terms.items()), policy.folder, allow], default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def load_trust(
    root: Path, manifests: dict[str, LoadedManifest], corpus: CorpusTrust | None = None
) -> tuple[Trust, list[Diagnostic]]:
    """Each manifest's policy, and diagnostics for settings that cannot be used (unknown rule IDs,
    rules files that are missing or invalid). `corpus` (the build's configuration) adds its rules,
    disabled rules and allow entries for every file; a manifest's own rules file, disabled rules and
    allow entries add to them for the files it governs."""
    diags: list[Diagnostic] = []
    base = builtin_rules()
    disabled_everywhere: set[str] = set()
    allowed_everywhere: tuple[Allowance, ...] = ()
    if corpus is not None:
        if corpus.rules_file is not None:
            extra, problems = load_rules_file(corpus.rules_file, str(corpus.rules_file), base)
            diags.extend(problems)
            if extra is not None:
                base = base.plus(extra.rules)
        known = base.ids()
        for i, (rule, _) in enumerate(corpus.disable):
            if rule not in known:
                diags.append(_unknown_config_rule(corpus, f"disable[{i}].rule", rule, known))
            disabled_everywhere.add(rule)
        for i, allowed in enumerate(corpus.allow):
            if allowed.rule is not None and allowed.rule not in known:
                diags.append(_unknown_config_rule(corpus, f"allow[{i}].rule", allowed.rule, known))
        allowed_everywhere = corpus.allow
    trust = Trust(Policy(base.without(disabled_everywhere), "", allowed_everywhere), manifests=manifests)
    for folder, loaded in sorted(manifests.items()):
        settings = loaded.manifest.trust
        if settings is None:
            continue
        rules = base
        if settings.rules_file is not None:
            rules, problems = _manifest_rules(root, loaded, settings.rules_file, rules)
            diags.extend(problems)
        known = rules.ids()
        disabled = set(disabled_everywhere)
        for i, entry in enumerate(settings.disable):
            if entry.rule not in known:
                diags.append(_unknown_rule(loaded, ("trust", "disable", i, "rule"), entry.rule, known))
            disabled.add(entry.rule)
        allow = []
        for i, item in enumerate(settings.allow):
            if item.rule is not None and item.rule not in known:
                diags.append(_unknown_rule(loaded, ("trust", "allow", i, "rule"), item.rule, known))
            allow.append(Allowance(item.path, item.rule, item.reason, loaded.relpath))
        trust.by_folder[folder] = Policy(rules.without(disabled), folder, (*allow, *allowed_everywhere))
    return trust, diags


def _unknown_config_rule(corpus: CorpusTrust, field_name: str, rule: str, known: set[str]) -> Diagnostic:
    path, _, where = corpus.source.partition(": ")
    msg = f"{where}.{field_name}: unknown rule {rule!r}; the rules are {', '.join(sorted(known))}"
    return error(path, 1, msg, "config-invalid")


def _manifest_rules(root: Path, loaded: LoadedManifest, name: str, base: RuleSet) -> tuple[RuleSet, list[Diagnostic]]:
    relpath = f"{loaded.folder}/{name}" if loaded.folder else name
    path = root / relpath
    line = loaded.lines.get(("trust", "rules_file"), 1)
    if not path.resolve().is_relative_to(root.resolve()):
        msg = f"trust.rules_file: {name!r} is outside the docs folder; keep the rules file with the docs"
        return base, [error(loaded.relpath, line, msg, "manifest-invalid")]
    if not path.is_file():
        msg = f"trust.rules_file: {relpath} does not exist (the path is relative to the manifest's folder)"
        return base, [error(loaded.relpath, line, msg, "manifest-invalid")]
    extra, problems = load_rules_file(path, relpath, base)
    return (base.plus(extra.rules) if extra else base), problems


def _unknown_rule(loaded: LoadedManifest, where: tuple[str | int, ...], rule: str, known: set[str]) -> Diagnostic:
    msg = f"{format_loc(where)}: unknown rule {rule!r}; the rules are {', '.join(sorted(known))}"
    return error(loaded.relpath, line_of(loaded.lines, where), msg, "manifest-invalid")
