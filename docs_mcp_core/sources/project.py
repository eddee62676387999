"""What a docs folder needs from its project besides its pages, so that a staged copy builds as the folder does.

A docs framework's config (mkdocs.yml and the file it INHERITs, conf.py, .vitepress/config.*, …) often sits
beside or above the docs folder, and includes read files next to it (`docs_src/` beside `docs/`, a `.yaml`
next to a page). Staging (sources/local.py, sources/git.py) copies those too, laid out as in the project,
and only those: the config, and every file an include of a page (or of an included Markdown file) names,
looked up as the include would look it up, inside the project root only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..corpus.beneath import read_beneath
from ..corpus.framework import Framework
from ..corpus.includes import MAX_BYTES, MAX_DEPTH, IncludeContext, candidate_paths, include_targets

_MARKDOWN = (".md", ".markdown", ".mdx")


def project_root(docs: Path, framework: Framework | None) -> Path:
    """The folder a staged copy mirrors: the framework config's (when the docs folder is inside it), else the docs folder."""
    docs = Path(os.path.realpath(docs))
    if framework is None:
        return docs
    root = Path(os.path.realpath(framework.project_root))
    return root if docs == root or root in docs.parents else docs


def config_files(framework: Framework | None) -> list[Path]:
    """The framework's config file, and the files it reads (mkdocs.yml INHERIT)."""
    return [framework.config, *framework.read] if framework is not None else []


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def project_files(
    docs: Path,
    pages: list[str],
    framework: Framework | None,
    exists: Callable[[str], bool] | None = None,
) -> set[str]:
    """Root-relative paths (see project_root) of the config and of every file the pages' includes read,
    followed through included Markdown. `exists(path)` says whether a root-relative path is a file of the
    project (default: a regular file on disk); a file not on disk yet is named but not followed."""
    docs = Path(os.path.realpath(docs))
    root = project_root(docs, framework)
    real_root = str(root)
    ctx = IncludeContext(
        str(docs),
        real_root,
        tuple(os.path.realpath(b) for b in (framework.include_bases if framework else [docs])),
        framework.name if framework else None,
        framework.rst_suffixes if framework else (".rst",),
    )

    def rel(path: str) -> str:
        return os.path.relpath(path, real_root).replace(os.sep, "/")

    def is_file(path: str) -> bool:
        if exists is not None:
            return exists(rel(path))
        return os.path.isfile(path) and _inside(os.path.realpath(path), real_root)

    # a file the config names but the project lacks (an INHERIT of a file kept out of the repository) is not staged
    found = {
        rel(str(p)) for p in config_files(framework) if _inside(os.path.realpath(p), real_root) and is_file(str(p))
    }
    queue = [(str(docs / page), 0) for page in pages]
    seen: set[str] = set()
    while queue:
        page, depth = queue.pop()
        if page in seen or depth > MAX_DEPTH:
            continue
        seen.add(page)
        try:
            data = read_beneath(real_root, rel(page))  # never out of the project, even through a swapped link
        except OSError:
            continue  # not on disk yet (a git source extracts it in its next round), or unreadable
        if len(data) > MAX_BYTES:
            continue
        text = data.decode("utf-8", errors="replace")
        for target, prefer_root in include_targets(text, rst=page.endswith(ctx.rst_suffixes)):
            for candidate in candidate_paths(ctx, target, os.path.dirname(page), prefer_root):
                candidate = os.path.normpath(candidate)
                if not _inside(candidate, real_root) or not is_file(candidate):
                    continue
                found.add(rel(candidate))
                if candidate.endswith(_MARKDOWN):
                    queue.append((candidate, depth + 1))
                break
    return found
