"""Walk a docs tree and resolve, for every Markdown file, the rules that govern it."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import unicodedata
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, error, warning
from ..paths import MARKDOWN_SUFFIXES, check_docs_dir, file_type
from .beneath import LinkOutsideError, read_beneath, realpath_or_none
from .dialects import syntax_constructs, tab_languages
from .directives import FileHints, read_directives, read_frontmatter
from .exclude import GITIGNORE, Rules
from .framework import DOCUSAURUS, SPHINX, STARLIGHT, Framework, detect_framework
from .includes import IncludeContext, expand_includes
from .manifest import (
    MANIFEST_NAME,
    LoadedManifest,
    Resolution,
    Strategy,
    nearest_manifest,
    parse_manifest,
    resolve_manifest_rules,
)
from .markdown import (
    MAX_HEADING_CHARS,
    SplitDocument,
    blank_mdx_syntax,
    mdx_mode,
    normalize_newlines,
    parser,
    split_frontmatter,
)
from .site import SiteContext, site_context

if TYPE_CHECKING:  # markdown_it is imported when a file is parsed, not to walk a tree
    from markdown_it.token import Token

TEMPLATE_SUFFIXES = (".template.md", ".template.yaml", ".template.yml")
DRAFTS = (DOCUSAURUS, STARLIGHT)  # frameworks that leave `draft: true` pages out of the published site


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
    source_url: str | None = None  # frontmatter source_url (files staged from a website)
    source_anchors: list[tuple[str, str]] = field(default_factory=list)
    included: dict[str, str] = field(default_factory=dict)  # files its includes read (project-relative) -> sha256
    constructs: list[tuple[str, int]] = field(default_factory=list)  # (dialect construct, file line)
    page: dict[str, Any] = field(default_factory=dict)  # framework frontmatter: slug, id, draft, unlisted
    left_out: str | None = None  # why the page is not indexed although it was read (a draft)


@dataclass
class CorpusScan:
    """The tree's layout and manifests, before any Markdown is parsed."""

    root: Path
    markdown: list[str] = field(default_factory=list)
    manifests: dict[str, LoadedManifest] = field(default_factory=dict)  # folder -> manifest
    templates: list[str] = field(default_factory=list)  # relpaths of prompt templates
    diagnostics: list[Diagnostic] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # see Tree.skipped
    framework: Framework | None = None

    @property
    def includes(self) -> IncludeContext:
        """Where this corpus's includes resolve: the framework's project root, else the docs folder."""
        docs = os.path.realpath(self.root)
        if self.framework is None:
            return IncludeContext(docs, docs, (docs,))
        bases = tuple(dict.fromkeys(os.path.realpath(b) for b in self.framework.include_bases))
        return IncludeContext(
            docs,
            os.path.realpath(self.framework.project_root),
            bases,
            self.framework.name,
            self.framework.rst_suffixes,
        )

    @cached_property
    def site(self) -> SiteContext | None:
        """Where the pages are published and their navigation (corpus/site.py), from the framework's config."""
        if self.framework is None:
            return None
        prefix = self.framework.prefix_of(self.root) or ""
        index_pages = [
            p[len(prefix) :]
            for p in self.framework.nav
            if p.startswith(prefix) and PurePosixPath(p).stem.lower() in ("index", "readme")
        ]
        titles = {rel: title for rel in index_pages if (title := page_title(self.root, rel))}
        return site_context(self.framework, os.path.realpath(self.root), titles)

    @property
    def context_key(self) -> str:
        """What in the framework changes a page's chunks: part of the per-file reuse key."""
        if self.framework is None:
            return ""
        return self.framework.key() + "\0" + repr(self.site)


_ATX_H1 = re.compile(r"^# +(.+?)(?: +#+)?\s*$", re.MULTILINE)
_FM_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)


def page_title(root: Path, relpath: str) -> str | None:
    """A page's title for naming its nav section: frontmatter `title`, else its first `# ` heading."""
    try:
        text = read_beneath(root, relpath)[:20_000].decode("utf-8", errors="replace")
    except OSError:
        return None
    doc = split_frontmatter(normalize_newlines(text))
    found = _FM_TITLE.search(doc.frontmatter or "") or _ATX_H1.search(doc.body)
    return found.group(1).strip().strip("\"'").strip() or None if found else None


def _kind(name: str, pages: tuple[str, ...] = MARKDOWN_SUFFIXES) -> str | None:
    """What an entry with this name is to docs-mcp, or None if the walk ignores it."""
    if name == MANIFEST_NAME:
        return "manifest"
    if name.endswith(TEMPLATE_SUFFIXES):
        return "template"
    if name.endswith(pages):
        return "markdown"
    return None


def _skipped_folder(name: str) -> bool:
    return name.startswith(".") or name == "node_modules"


def _folder_skip_reason(name: str) -> str:
    return "node_modules folder" if name == "node_modules" else "dot-folder"


def show_path(relpath: str) -> str:
    """A relpath printable on one line: control characters and bad bytes escaped."""
    return "".join(
        c if c.isprintable() else (repr(c)[1:-1] if ord(c) < 0xD800 or ord(c) > 0xDFFF else f"\\x{ord(c) - 0xDC00:02x}")
        for c in relpath
    )


def bad_name(relpath: str) -> str | None:
    """Why a path cannot become a chunk ID that get_doc accepts, or None.

    IDs are `{relative_filepath}#{heading_path}`: a '#' in the path would make the ID
    ambiguous, control characters and line breaks do not survive tool output, and bytes
    that are not UTF-8 cannot be written to JSON.
    """
    if "#" in relpath:
        return "contains '#', which separates the file path from the heading path in chunk IDs"
    if relpath.isascii() and relpath.isprintable():  # the common case, without a lookup per character
        return "starts with whitespace" if relpath[:1].isspace() else None
    for c in relpath:
        category = unicodedata.category(c)
        if category == "Cs":
            return "is not valid UTF-8"
        if category in ("Cc", "Zl", "Zp"):
            return f"contains the control character or line break {repr(c)[1:-1]}"
    if relpath[:1].isspace():
        return "starts with whitespace"
    return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass
class Tree:
    """The indexable files under a docs folder, and what the walk skipped (as warnings)."""

    markdown: list[str] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # what the walk left out on purpose: (relpath, code, why); folders end with "/"
    skipped: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, kind: str, relpath: str) -> None:
        problem = bad_name(relpath)
        if problem:
            self.diagnostics.append(
                error(
                    show_path(relpath),
                    1,
                    f"the path {problem}; rename the file or folder "
                    "(chunk IDs are built from paths and must work in get_doc)",
                    "bad-path",
                )
            )
            return
        {"markdown": self.markdown, "manifest": self.manifests, "template": self.templates}[kind].append(relpath)


def list_tree(root: Path, exclude: list[str] | tuple[str, ...] = (), framework: Framework | None = None) -> Tree:
    """Every page (`*.md`, `*.markdown`, `*.mdx`, `*.rst`, and `*.txt` when Sphinx's source_suffix says so),
    manifest and template, sorted; the walk never leaves `root`.

    Dot-folders and node_modules are skipped, and so is what `exclude` (globs relative to
    `root`, from docs-mcp.yaml), a manifest's `exclude`, a `.gitignore` or the docs `framework`'s
    config leaves out (docs_mcp_core/corpus/exclude.py); each is recorded in `Tree.skipped` with the rule.
    Only regular files are read: FIFOs, sockets and devices are skipped with a warning (reading a FIFO would block forever). Symlinks:
    folder symlinks are never followed; a file symlink is followed only if its target is a
    regular file inside the docs folder, and a Markdown file is indexed once, under its own
    path (a link to a file the walk lists anyway is skipped). Loops, dangling links and
    links leading outside are skipped with a warning naming the link.
    """
    real_root = os.path.realpath(root)
    tree = Tree()
    rules = Rules(config=list(exclude))
    pages: tuple[str, ...] = MARKDOWN_SUFFIXES
    if framework is not None:
        prefix = framework.prefix_of(root)
        for label, matcher, patterns in framework.excludes if prefix is not None else []:
            rules.add_framework(label, matcher, patterns, prefix or "")
        if framework.name == SPHINX:
            pages = tuple(dict.fromkeys([*MARKDOWN_SUFFIXES, *framework.rst_suffixes]))
    links: list[tuple[str, str]] = []  # (relpath, name) of symlinks, resolved after the walk
    folders = [("", str(root))]
    while folders:
        rel_dir, path = folders.pop()
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            unreadable = f"folder skipped: cannot read it ({exc.strerror})"
            tree.diagnostics.append(warning(show_path(rel_dir or "."), 1, unreadable, "folder-unreadable"))
            continue
        _read_rules(root, rules, rel_dir, entries)
        subfolders = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_symlink():
                links.append((rel, entry.name))
            elif entry.is_dir(follow_symlinks=False):
                if _skipped_folder(entry.name):
                    tree.skipped.append((rel + "/", "skipped-folder", _folder_skip_reason(entry.name)))
                elif why := rules.why_excluded(rel, is_dir=True):
                    tree.skipped.append((rel + "/", "excluded", why))
                else:
                    subfolders.append((rel, entry.path))
            elif (kind := _kind(entry.name, pages)) is None:
                continue
            elif kind != "manifest" and (why := rules.why_excluded(rel, is_dir=False)):
                tree.skipped.append((rel, "excluded", why))
            elif not entry.is_file(follow_symlinks=False):
                try:
                    what = file_type(entry.stat(follow_symlinks=False).st_mode)
                except OSError:
                    continue  # vanished while walking
                tree.diagnostics.append(
                    warning(show_path(rel), 1, f"skipped: {what}, not a regular file", "not-regular-file")
                )
            else:
                tree.add(kind, rel)
        folders.extend(reversed(subfolders))
    # real path -> relpath of every Markdown file listed (no folder on the way is a symlink, so it is
    # the root's real path joined), for the links; made only when there are links (a join per file)
    listed = {os.path.join(real_root, *rel.split("/")): rel for rel in tree.markdown} if links else {}
    for rel, name in sorted(links):
        if _kind(name, pages) not in (None, "manifest") and (why := rules.why_excluded(rel, is_dir=False)):
            tree.skipped.append((rel, "excluded", why))
            continue
        _follow_link(root, real_root, rel, name, tree, listed, pages)
    tree.markdown.sort()
    tree.skipped.sort()
    tree.manifests.sort()
    tree.templates.sort()
    tree.diagnostics.sort()
    return tree


def _read_rules(root: Path, rules: Rules, rel_dir: str, entries: list[os.DirEntry[str]]) -> None:
    """A folder's manifest `exclude` and `.gitignore`, read before anything in the folder is listed."""
    for entry in entries:
        if entry.name not in (MANIFEST_NAME, GITIGNORE) or not entry.is_file(follow_symlinks=False):
            continue
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            text = read_beneath(root, rel).decode("utf-8", errors="replace")
        except OSError:
            continue  # an unreadable manifest is reported by load_manifests; an unreadable .gitignore ignores nothing
        if entry.name == MANIFEST_NAME:
            rules.add_manifest(rel_dir, rel, text)
        else:
            rules.add_gitignore(rel_dir, rel, text)


def _follow_link(
    root: Path,
    real_root: str,
    rel: str,
    name: str,
    tree: Tree,
    listed: dict[str, str],
    pages: tuple[str, ...] = MARKDOWN_SUFFIXES,
) -> None:
    kind = _kind(name, pages)
    shown = show_path(rel)
    path = os.path.join(root, rel)
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if kind is None:
            return  # a broken link the walk would not have read anyway
        if exc.errno == errno.ELOOP:
            why = "symlink loop"
        elif exc.errno == errno.ENOENT:
            why = f"dangling symlink (its target {_link_target(path)!r} does not exist)"
        else:
            why = f"symlink cannot be followed ({exc.strerror})"
        tree.diagnostics.append(warning(shown, 1, f"skipped: {why}", "symlink-broken"))
        return
    target = realpath_or_none(path)
    if target is None:
        why = "skipped: symlink changed while the docs folder was walked; build again"
        tree.diagnostics.append(warning(shown, 1, why, "symlink-broken"))
        return
    inside = _inside(target, real_root)
    where = show_path(os.path.relpath(target, real_root).replace(os.sep, "/")) if inside else show_path(target)
    if stat.S_ISDIR(mode):
        if _skipped_folder(name):
            return
        if inside:
            why = f"symlink to the folder {where} is not followed (files are indexed under their real paths only)"
        else:
            why = f"symlink to the folder {where}, outside the docs folder; not followed"
        tree.diagnostics.append(warning(shown, 1, f"skipped: {why}", "symlink-folder"))
        return
    if kind is None:
        return
    if not inside:
        tree.diagnostics.append(outside_warning(rel, where))
    elif not stat.S_ISREG(mode):
        tree.diagnostics.append(
            warning(shown, 1, f"skipped: symlink to {file_type(mode)}, not a regular file", "not-regular-file")
        )
    elif kind == "markdown" and target in listed:
        tree.diagnostics.append(
            warning(
                shown,
                1,
                f"skipped: symlink to {show_path(listed[target])}, which is "
                "indexed under its own path (each file is indexed once)",
                "symlink-duplicate",
            )
        )
    else:
        tree.add(kind, rel)
        if kind == "markdown":
            listed[target] = rel


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"  # no longer a link


def outside_warning(relpath: str, target: str) -> Diagnostic:
    """The warning for a symlink leading outside the docs folder: from the walk, or found at read time."""
    return warning(
        show_path(relpath),
        1,
        f"skipped: symlink to {show_path(target)}, outside the docs folder; "
        "copy the file into the docs folder if it belongs there",
        "symlink-outside",
    )


def read_text(root: Path, relpath: str) -> tuple[str | None, str, Diagnostic | None]:
    """UTF-8 text with normalized newlines, its sha256, or an error naming the bad byte."""
    data, digest, problem = read_hashed(root, relpath)
    if problem or data is None:
        return None, digest, problem
    text, problem = decode_text(data, relpath)
    return text, digest, problem


def read_hashed(root: str | Path, relpath: str) -> tuple[bytes | None, str, Diagnostic | None]:
    """A file's bytes and sha256 (all a build needs of a file it can reuse), or why it cannot be read.

    Read through read_beneath: what is read is a regular file inside `root`, whatever the folder
    became since the walk; a file that became a link leading out is skipped as the walk skips one.
    """
    try:
        data = read_beneath(root, relpath)
    except LinkOutsideError as exc:
        return None, "", outside_warning(relpath, exc.target)
    except OSError as exc:
        return (
            None,
            "",
            error(
                show_path(relpath), 1, f"cannot read this file ({exc.strerror}); fix or remove it", "file-unreadable"
            ),
        )
    return data, hashlib.sha256(data).hexdigest(), None


def decode_text(data: bytes, relpath: str) -> tuple[str | None, Diagnostic | None]:
    """UTF-8 text with normalized newlines, or an error naming the bad byte."""
    try:
        return normalize_newlines(data.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, error(
            show_path(relpath),
            line,
            f"not valid UTF-8 (byte offset {exc.start}); re-save the file as UTF-8",
            "not-utf8",
        )


def load_manifests(root: Path, relpaths: list[str], diagnostics: list[Diagnostic]) -> dict[str, LoadedManifest]:
    manifests: dict[str, LoadedManifest] = {}
    for rel in relpaths:
        text, _, problem = read_text(root, rel)
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


def resolve_file(
    relpath: str,
    text: str,
    sha256: str,
    manifests: dict[str, LoadedManifest],
    rules: Resolution | None = None,
    includes: IncludeContext | None = None,
) -> tuple[SourceFile, list[Diagnostic]]:
    """Manifest baseline and overrides, then inline hints, then frontmatter (which wins).

    Includes are resolved first (corpus/includes.py, with `includes` saying where), an MDX file's
    ESM lines blanked, a reST file turned into Markdown (corpus/rst.py)."""
    loaded = nearest_manifest(relpath, manifests)
    rules = rules or resolve_manifest_rules(relpath, loaded)
    early: list[Diagnostic] = []
    included: dict[str, str] = {}
    constructs: list[tuple[str, int]] = []
    line_map: list[int] | None = None
    mdx = relpath.endswith(".mdx")
    rst = relpath.endswith(includes.rst_suffixes if includes is not None else (".rst",))
    written = False
    if rst:
        written = bool(text.strip())  # only autodoc stubs, say: not an empty file
        from .rst import rst_to_markdown

        converted = rst_to_markdown(text, relpath, includes)
        doc = SplitDocument(None, converted.markdown, 0)
        early, included, constructs = converted.diagnostics, converted.included, converted.constructs
    else:
        doc = split_frontmatter(text)
        written = bool(doc.body.strip())  # a page of includes that all failed is not an empty file
        expanded = expand_includes(doc.body, relpath, includes)
        if expanded.included or expanded.diagnostics or expanded.constructs:
            doc = replace(doc, body=expanded.body)
            line_map = expanded.line_map
        early, included = expanded.diagnostics, expanded.included
        constructs = [(c, line + doc.body_line) for c, line in expanded.constructs]
        if mdx:
            blanked = blank_mdx_syntax(doc.body)
            constructs.extend(_mdx_constructs(doc.body, blanked, doc.body_line))
            doc = replace(doc, body=blanked)
    hints = FileHints()
    if doc.frontmatter is not None:
        # a framework reads its own frontmatter keys (sidebar, slug, layout…): only unknown mcp_ keys are news
        read_frontmatter(doc.frontmatter, relpath, hints, framework=includes.framework if includes else None)
    has_fm_hint = hints.strategy is not None
    with mdx_mode(mdx):
        tokens = parser().parse(doc.body)
    if not rst:
        lines = doc.body.split("\n")
        for line in tab_languages(tokens, lines):
            line = line_map[line] if line_map is not None and line < len(line_map) else line
            constructs.append(("code language from its tab label", line + doc.body_line + 1))
        doc = replace(doc, body="\n".join(lines))
        read_directives(tokens, relpath, doc.body_line, hints, has_fm_hint, line_map)
        for construct, line in syntax_constructs(tokens, mdx):
            line = line_map[line] if line_map is not None and line < len(line_map) else line
            constructs.append((construct, line + doc.body_line + 1))
        hints.diagnostics.extend(_long_headings(tokens, relpath, doc.body_line, line_map))
    strategy, source = (
        (hints.strategy, hints.strategy_source or "") if hints.strategy else (rules.strategy, rules.strategy_source)
    )
    metadata = {**rules.metadata, **hints.metadata}
    diags = early + list(hints.diagnostics)
    if source == "default":
        where = f"its manifest {loaded.relpath} sets no strategy" if loaded else f"no {MANIFEST_NAME} governs it"
        diags.append(
            warning(
                relpath, 1, f"no explicit chunking strategy ({where}); the default chunk_by: h2 applies", "no-strategy"
            )
        )
    left_out = None
    if hints.page.get("draft") is True and includes is not None and includes.framework in DRAFTS:
        left_out = "a draft (draft: true in its frontmatter): the site does not publish it"
        line = next((i for i, ln in enumerate(text.split("\n")[: doc.body_line], 1) if ln.startswith("draft:")), 1)
        constructs.append(("draft page (frontmatter draft: true)", line))
    elif not doc.body.strip() and not written:
        diags.append(
            warning(relpath, 1, "file has no content after frontmatter; nothing from it is indexed", "empty-file")
        )
    source_file = SourceFile(
        relpath,
        sha256,
        doc.body,
        doc.body_line,
        strategy,
        source,
        metadata,
        hints.title,
        rules.manifest,
        tokens,
        hints.source_url,
        hints.source_anchors,
        included,
        sorted(constructs, key=lambda c: c[1]),
        hints.page,
        left_out,
    )
    return source_file, diags


def _mdx_constructs(body: str, blanked: str, body_line: int) -> list[tuple[str, int]]:
    """MDX ESM lines and comments (blanked before parsing): counted for validate's syntax table."""
    found = []
    for i, (was, now) in enumerate(zip(body.split("\n"), blanked.split("\n"))):
        if was != now and was.strip():
            kind = "MDX comment {/* */}" if was.lstrip().startswith("{/*") else "MDX import/export"
            if kind.startswith("MDX import") and not was.startswith(("import", "export")):
                continue  # a continuation line of a multi-line import
            found.append((kind, i + body_line + 1))
    return found


def _long_headings(tokens: list[Token], relpath: str, body_line: int, line_map: list[int] | None) -> list[Diagnostic]:
    """A warning per heading longer than chunks carry (markdown.MAX_HEADING_CHARS)."""
    found = []
    for tok, inline in zip(tokens, tokens[1:]):
        if tok.type == "heading_open" and len(inline.content) > MAX_HEADING_CHARS:
            line = tok.map[0] if tok.map else 0
            line = line_map[line] if line_map is not None and line < len(line_map) else line
            line += body_line + 1
            found.append(
                warning(
                    relpath,
                    line,
                    f"heading of {len(inline.content):,} characters: its chunks' heading, breadcrumb and ID "
                    f"use its first {MAX_HEADING_CHARS}; shorten it, or make the rest a paragraph",
                    "long-heading",
                )
            )
    return found


def scan_corpus(root: Path, exclude: list[str] | tuple[str, ...] = ()) -> CorpusScan:
    root = Path(root)
    check_docs_dir(root)
    framework = detect_framework(root)
    tree = list_tree(root, exclude, framework)
    scan = CorpusScan(
        root=root,
        markdown=tree.markdown,
        templates=tree.templates,
        diagnostics=list(tree.diagnostics),
        skipped=tree.skipped,
    )
    scan.manifests = load_manifests(root, tree.manifests, scan.diagnostics)
    scan.framework = framework
    return scan


def read_source(scan: CorpusScan, relpath: str) -> tuple[SourceFile | None, list[Diagnostic]]:
    """One file read and resolved against its manifests (None, with the problem, when it cannot be read)."""
    text, digest, problem = read_text(scan.root, relpath)
    if problem:
        return None, [problem]
    return resolve_file(relpath, text or "", digest, scan.manifests, includes=scan.includes)
