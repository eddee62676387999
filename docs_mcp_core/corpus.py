"""Walk a docs tree and resolve, for every Markdown file, the rules that govern it."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it.token import Token

from .diagnostics import Diagnostic, error, warning
from .errors import DocsMcpError
from .hints import FileHints, read_directives, read_frontmatter
from .manifest import (
    MANIFEST_NAME,
    LoadedManifest,
    Resolution,
    Strategy,
    nearest_manifest,
    parse_manifest,
    resolve_manifest_rules,
)
from .markdown import normalize_newlines, parser, split_frontmatter

TEMPLATE_SUFFIXES = (".template.md", ".template.yaml", ".template.yml")


@dataclass
class SourceFile:
    """One Markdown file as indexed: body without frontmatter, resolved rules, hashes."""

    relpath: str
    sha256: str
    body: str
    body_line: int  # 0-based line of the body within the file
    strategy: Strategy
    strategy_source: str
    metadata: dict[str, str]
    title: str | None
    manifest: str | None
    tokens: list[Token] = field(default_factory=list, repr=False, compare=False)


@dataclass
class CorpusScan:
    """The tree's layout and manifests, before any Markdown is parsed."""

    root: Path
    markdown: list[str] = field(default_factory=list)
    manifests: dict[str, LoadedManifest] = field(default_factory=dict)  # folder -> manifest
    templates: list[str] = field(default_factory=list)  # relpaths of prompt templates
    diagnostics: list[Diagnostic] = field(default_factory=list)


def list_tree(root: Path) -> tuple[list[str], list[str], list[str]]:
    """Sorted relpaths of markdown files, manifests and templates; dot-folders are skipped."""
    md, manifests, templates = [], [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "node_modules")
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if name == MANIFEST_NAME:
                manifests.append(rel)
            elif name.endswith(TEMPLATE_SUFFIXES):
                templates.append(rel)
            elif name.endswith(".md"):
                md.append(rel)
    return sorted(md), sorted(manifests), sorted(templates)


def read_text(path: Path, relpath: str) -> tuple[str | None, str, Diagnostic | None]:
    """UTF-8 text with normalized newlines, its sha256, or an error naming the bad byte."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    try:
        return normalize_newlines(data.decode("utf-8")), digest, None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, digest, error(relpath, line, f"not valid UTF-8 (byte offset {exc.start}); re-save the file as UTF-8")


def load_manifests(root: Path, relpaths: list[str], diagnostics: list[Diagnostic]) -> dict[str, LoadedManifest]:
    manifests: dict[str, LoadedManifest] = {}
    for rel in relpaths:
        text, _, problem = read_text(root / rel, rel)
        if problem:
            diagnostics.append(problem)
            continue
        loaded, diags = parse_manifest(text or "", rel)
        diagnostics.extend(diags)
        if loaded:
            manifests[loaded.folder] = loaded
    return manifests


def manifest_rules(relpath: str, manifests: dict[str, LoadedManifest]) -> Resolution:
    return resolve_manifest_rules(relpath, nearest_manifest(relpath, manifests))


def resolve_file(relpath: str, text: str, sha256: str, manifests: dict[str, LoadedManifest],
                 rules: Resolution | None = None) -> tuple[SourceFile, list[Diagnostic]]:
    """Manifest baseline and overrides, then inline hints, then frontmatter (which wins)."""
    loaded = nearest_manifest(relpath, manifests)
    rules = rules or resolve_manifest_rules(relpath, loaded)
    doc = split_frontmatter(text)
    hints = FileHints()
    if doc.frontmatter is not None:
        read_frontmatter(doc.frontmatter, relpath, hints)
    has_fm_hint = hints.strategy is not None
    tokens = parser().parse(doc.body)
    read_directives(tokens, relpath, doc.body_line, hints, has_fm_hint)
    strategy, source = (hints.strategy, hints.strategy_source or "") if hints.strategy else (rules.strategy, rules.strategy_source)
    metadata = {**rules.metadata, **hints.metadata}
    diags = list(hints.diagnostics)
    if source == "default":
        where = f"its manifest {loaded.relpath} sets no strategy" if loaded else f"no {MANIFEST_NAME} governs it"
        diags.append(
            warning(relpath, 1, f"no explicit chunking strategy ({where}); the default chunk_by: h2 applies")
        )
    if not doc.body.strip():
        diags.append(warning(relpath, 1, "file has no content after frontmatter; nothing from it is indexed"))
    source_file = SourceFile(
        relpath, sha256, doc.body, doc.body_line, strategy, source, metadata, hints.title, rules.manifest, tokens
    )
    return source_file, diags


def scan_corpus(root: Path) -> CorpusScan:
    root = Path(root)
    if not root.is_dir():
        raise DocsMcpError(f"docs directory {root} does not exist or is not a directory")
    md, manifest_paths, templates = list_tree(root)
    scan = CorpusScan(root=root, markdown=md, templates=templates)
    scan.manifests = load_manifests(root, manifest_paths, scan.diagnostics)
    return scan


def read_source(scan: CorpusScan, relpath: str) -> tuple[SourceFile | None, list[Diagnostic]]:
    text, digest, problem = read_text(scan.root / relpath, relpath)
    if problem:
        return None, [problem]
    return resolve_file(relpath, text or "", digest, scan.manifests)
