"""Checks of the folders a command is pointed at, so a wrong path is one `error:` line, not a traceback."""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from .errors import DocsMcpError

MARKDOWN_SUFFIXES = (
    ".md",
    ".markdown",
    ".mdx",
    ".rst",
)  # what a docs folder's walk indexes (MDX: corpus.markdown.blank_mdx_syntax; reST: corpus.rst)
KIND_NAMES = {".md": "Markdown", ".markdown": "Markdown", ".mdx": "MDX", ".rst": "reStructuredText"}


def user_cache(*parts: str) -> Path:
    """A folder of docs-mcp's per-user cache: $XDG_CACHE_HOME/docs-mcp/PARTS, else ~/.cache/docs-mcp/PARTS."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "docs-mcp", *parts)


def counted_files(paths: Iterable[str]) -> str:
    """ "3 Markdown file(s)", or "5 file(s) (3 Markdown, 2 reStructuredText)": a summary names what it read."""
    kinds = Counter(KIND_NAMES.get(posixpath.splitext(p)[1].lower(), "other") for p in paths)
    total = sum(kinds.values())
    if len(kinds) == 1:
        return f"{total} {next(iter(kinds))} file(s)"
    listed = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{total} file(s) ({listed})" if listed else f"{total} file(s)"


def check_docs_dir(path: Path, option: str = "docs directory") -> Path:
    """The docs folder must exist and be a folder (a file or a missing path is a usage error)."""
    path = Path(path)
    if not path.exists():
        raise DocsMcpError(f"{option} {path} does not exist; point it at the folder that holds your Markdown files")
    if not path.is_dir():
        raise DocsMcpError(
            f"{option} {path} is a file, not a folder; point it at the folder that holds your Markdown files"
        )
    return path


def check_writable_dir(path: Path, option: str = "--index") -> Path:
    """The folder exists and takes new files, or can be created: checked without creating anything.

    The probe is a temporary file in the folder itself, or in its nearest existing parent
    (where the first mkdir would happen), so concurrent builds never see each other's probes
    as a problem and a failed build leaves nothing behind.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise DocsMcpError(f"{option} {path} is a file, not a folder; choose a folder (it is created if missing)")
    nearest = next(p for p in [path, *path.parents] if p.exists() or p.is_symlink())
    try:
        if not nearest.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{nearest} is not a folder")
        fd, probe = tempfile.mkstemp(prefix=".docs-mcp-probe-", dir=nearest)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise DocsMcpError(
            f"{option} {path}: cannot write there ({exc.strerror}); choose a folder you can write to"
        ) from None
    return path


_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_type(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; refuses anything but a regular file without ever blocking (a FIFO would)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "a folder" if stat.S_ISDIR(mode) else file_type(mode), str(path))
        return fh.read()
