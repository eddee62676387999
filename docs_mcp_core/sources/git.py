"""Git sources: resolve a ref to a commit, keep a mirror, and stage one commit's docs.

Everything goes through the `git` command line, so any URL git understands works
(https, ssh, file paths), with the user's own credentials setup.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Literal, overload

from ..corpus.exclude import GITIGNORE
from ..corpus.framework import LEVELS_UP, config_names, detect_framework
from ..corpus.includes import MAX_DEPTH
from ..corpus.manifest import MANIFEST_NAME
from ..corpus.walk import TEMPLATE_SUFFIXES, list_tree, show_path
from ..diagnostics import warning
from ..errors import DocsMcpError
from ..paths import MARKDOWN_SUFFIXES
from .local import StagedDocs, stage_local
from .project import project_files, project_root

_SHA = re.compile(r"^[0-9a-f]{40}$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://|^[^/\s]+@[^/\s]+:")


def is_url(source: str) -> bool:
    return bool(_URL.match(source))


@overload
def git(*args: str, cwd: Path | None = None, binary: Literal[False] = False, timeout: float = 600) -> str: ...
@overload
def git(*args: str, cwd: Path | None = None, binary: Literal[True], timeout: float = 600) -> bytes: ...
def git(*args: str, cwd: Path | None = None, binary: bool = False, timeout: float = 600) -> str | bytes:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env, timeout=timeout)
    except FileNotFoundError:
        raise DocsMcpError("git is not installed or not on PATH; git sources need it") from None
    except subprocess.TimeoutExpired:
        raise DocsMcpError(f"`git {' '.join(args[:2])}` timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise DocsMcpError(f"`git {' '.join(args)}` failed: {message[-1] if message else proc.returncode}")
    return proc.stdout if binary else proc.stdout.decode()


def remote_commit(source: str, ref: str) -> str:
    """The commit `ref` points at in `source` now, without fetching (what the sensor polls)."""
    if _SHA.match(ref):
        return ref
    if not is_url(source):
        return git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=Path(source)).strip()
    out = git("ls-remote", source, ref, f"refs/heads/{ref}", f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}")
    refs = {name: sha for sha, tab, name in (line.partition("\t") for line in out.splitlines()) if tab}
    for name in (f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}", f"refs/tags/{ref}", ref):
        if name in refs:
            return refs[name]
    raise DocsMcpError(f"ref {ref!r} was not found in {source}")


def sync_mirror(source: str, mirror: Path) -> Path:
    """A bare mirror of `source`: cloned once, then fetched (prune, force) on every sync."""
    if mirror.exists():
        try:
            url = git("config", "--get", "remote.origin.url", cwd=mirror).strip()
        except DocsMcpError:
            url = ""
        if url != source:
            shutil.rmtree(mirror)
    if not mirror.exists():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "--quiet", "--mirror", source, str(mirror))
    else:
        git("fetch", "--quiet", "--prune", "--force", "origin", cwd=mirror)
    return mirror


def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    pages = (*MARKDOWN_SUFFIXES, ".txt")  # .txt: Sphinx pages when conf.py says so (the walk decides)
    return base in (MANIFEST_NAME, GITIGNORE) or base.endswith(pages) or base.endswith(TEMPLATE_SUFFIXES)


def stage_git(
    source: str,
    ref: str,
    subdir: str | None,
    dest: Path,
    *,
    commit: str | None = None,
    mirror: Path | None = None,
    exclude: list[str] | tuple[str, ...] = (),
) -> StagedDocs:
    """Stage the docs of one exact commit (the ref's, or `commit` if given) into `dest`."""
    mirror = sync_mirror(source, mirror or dest.parent / "mirror.git")
    try:
        resolved = commit or git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=mirror).strip()
    except DocsMcpError:  # --quiet: git says nothing, only exits 1
        resolved = ""
    if not resolved:
        raise DocsMcpError(f"ref {ref!r} was not found in {source}; give a branch, tag or commit it has")
    prefix = (subdir or "").strip("/")
    if prefix and " tree " not in git("ls-tree", resolved, "--", prefix, cwd=mirror):
        raise DocsMcpError(f"subdir {prefix!r} is not a folder at commit {resolved[:12]} of {source}")
    archive = git("archive", "--format=tar", resolved, *([prefix] if prefix else []), cwd=mirror, binary=True)
    with tempfile.TemporaryDirectory(prefix="docs-mcp-git-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            members, skipped = _members(tar.getmembers(), prefix)
            for member in members:
                try:
                    tar.extract(member, tmp, filter="data")
                except tarfile.FilterError as exc:  # a link the data filter finds unsafe: skip it, say so
                    shown = show_path(member.name[len(prefix) + 1 :] if prefix else member.name)
                    skipped.append(warning(shown, 1, f"skipped: {exc}", "unsafe-link").located())
        root = Path(tmp) / prefix if prefix else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        _extract_project(mirror, resolved, prefix, Path(tmp), exclude)
        staged = stage_local(root, dest, source_commit=resolved, exclude=exclude, boundary=Path(tmp))
    staged.warnings = sorted(skipped + staged.warnings)
    return staged


def _blobs(mirror: Path, commit: str) -> set[str]:
    """The regular files of a commit (no symlinks, no submodules), by repository path."""
    out = git("ls-tree", "-r", "-z", "--full-tree", commit, cwd=mirror, binary=True)
    files: set[str] = set()
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if meta.startswith((b"100644 blob", b"100755 blob")):
            files.add(name.decode("utf-8", errors="surrogateescape"))
    return files


def _extract_project(mirror: Path, commit: str, prefix: str, tmp: Path, exclude: list[str] | tuple[str, ...]) -> None:
    """Extract into `tmp` what the docs folder needs from its project besides its pages: the docs framework's
    config (looked for where detection looks: the folder and up to LEVELS_UP above it) and, once the
    framework is known, the files the pages' includes read (sources/project.py), round by round as
    included Markdown names more."""
    blobs = _blobs(mirror, commit)
    folders = [prefix]
    while folders[-1] and len(folders) <= LEVELS_UP:
        folders.append(posixpath.dirname(folders[-1]))
    wanted = [posixpath.join(f, name) if f else name for f in folders for name in config_names()]
    extracted: set[str] = set()
    docs = tmp / prefix if prefix else tmp
    for _ in range(MAX_DEPTH + 2):
        missing = sorted(p for p in wanted if p in blobs and p not in extracted)
        if not missing:
            return
        archive = git("archive", "--format=tar", commit, "--", *missing, cwd=mirror, binary=True)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    tar.extract(member, tmp, filter="data")
        extracted.update(missing)
        framework = detect_framework(docs, boundary=tmp)
        root = project_root(docs, framework)
        base = os.path.relpath(root, os.path.realpath(tmp)).replace(os.sep, "/")
        base = "" if base == "." else base + "/"
        pages = list_tree(docs, exclude, framework).markdown

        def exists(rel: str, base: str = base) -> bool:
            return base + rel in blobs

        needed = project_files(docs, pages, framework, exists=exists)
        wanted = [base + rel for rel in needed]


def _members(members: list[tarfile.TarInfo], prefix: str) -> tuple[list[tarfile.TarInfo], list[str]]:
    """Wanted files, plus symlinks that stay inside the docs folder (and the files they lead to).

    The staged copy is then walked like a local folder, so symlinks follow the same rules;
    a symlink leading outside the docs folder is never extracted, only reported.
    """
    by_name = {m.name: m for m in members}
    keep = {m.name for m in members if m.isfile() and _wanted(m.name)}
    skipped: list[str] = []
    for link in (m for m in members if m.issym()):
        name, hops = link.name, 0
        while name in by_name and by_name[name].issym() and hops < 40:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), by_name[name].linkname))
            if by_name[name].linkname.startswith("/") or not _inside(target, prefix):
                shown = show_path(link.name[len(prefix) + 1 :] if prefix else link.name)
                skipped.append(
                    warning(
                        shown,
                        1,
                        f"skipped: symlink to {show_path(by_name[name].linkname)}, outside the docs folder",
                        "symlink-outside",
                    ).located()
                )
                break
            keep.add(name)
            name, hops = target, hops + 1
        else:
            if name in by_name and by_name[name].isfile():
                keep.add(name)
    return [m for m in members if m.name in keep], skipped


def _inside(path: str, prefix: str) -> bool:
    if path == ".." or path.startswith("../"):
        return False
    return not prefix or path == prefix or path.startswith(prefix + "/")


def repo_name(source: str) -> str:
    """What a repository corpus is called when it has no name (the default description, the audit): its folder."""
    name = source.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    return name.removesuffix(".git") or "repository"


def staged_line(staged: StagedDocs, source: str, ref: str, subdir: str | None) -> str:
    """What stage_git staged, from where, at which commit: the first line of a git build."""
    markdown = sum(path.endswith(MARKDOWN_SUFFIXES) for path in staged.files)
    others = len(staged.files) - markdown
    also = f" and {others} manifest and template file{'s' if others != 1 else ''}" if others else ""
    where = f", subdir {subdir}" if subdir else ""
    return (
        f"staged {markdown} Markdown file{'s' if markdown != 1 else ''}{also} from {source} "
        f"at commit {(staged.source_commit or '')[:12]} (ref {ref}{where})"
    )
