"""Read a corpus file without ever leaving its docs folder, even when the folder changes during a build.

The walk checks each entry (a regular file, or a symlink to one inside the docs folder), but
between that check and the read, anyone who can write to the folder can swap a file for a
symlink to anything. So a file is opened one path component at a time, relative to the folder
already opened and never letting the kernel follow a link (`O_NOFOLLOW` with `dir_fd`): a
symlink met on the way is read and resolved here, inside the docs folder only, as the walk's
check resolves it. What was opened is then checked (`fstat`): only a regular file is read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..paths import file_type

MAX_LINKS = 40  # symlinks followed for one path, as the kernel's own limit (ELOOP)
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not block the open
_IS_LINK = {errno.ELOOP, errno.EMLINK}  # O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD)


class LinkOutsideError(OSError):
    """A symlink on the way to the file leads outside the docs folder (`target` is what it says)."""

    def __init__(self, target: str) -> None:
        super().__init__(errno.EXDEV, "symlink leads outside the docs folder", target)
        self.target = target


def read_beneath(root: str | Path, relpath: str) -> bytes:
    """The bytes of the regular file `relpath` names under `root` (see the module docstring).

    Raises LinkOutsideError for a link that leads out, OSError for anything else that is not a
    regular file under `root` (a folder, a FIFO, a loop, a missing file).
    """
    fd = open_beneath(root, relpath)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def open_beneath(root: str | Path, relpath: str) -> int:
    """A read-only descriptor of the regular file `relpath` names under `root`; the caller closes it."""
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    folders: list[int] = []  # descriptors of the folders opened below root, outermost first
    todo = relpath.split("/")[::-1]  # components still to open, the next one last
    links, target = 0, ""
    try:
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if folders:
                    os.close(folders.pop())
                    continue
                # climbing out of the docs folder: only a path that comes straight back in is followed
                lexical = os.path.join(os.path.dirname(os.path.realpath(root)), *todo[::-1])
                todo = _back_inside(root, lexical, target)
                continue
            at = folders[-1] if folders else root_fd
            try:
                fd = os.open(name, _OPEN, dir_fd=at)
            except OSError as exc:
                if exc.errno not in _IS_LINK:
                    raise
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "symlink loop", relpath) from None
                try:
                    target = os.readlink(name, dir_fd=at)
                except OSError as again:
                    if again.errno == errno.EINVAL:  # no longer a link: swapped back; open it again
                        todo.append(name)
                        continue
                    raise
                if os.path.isabs(target):
                    for folder in folders:
                        os.close(folder)
                    folders.clear()
                    todo.extend(_back_inside(root, target, target))
                else:
                    todo.extend(target.split("/")[::-1])
                continue
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode):
                folders.append(fd)
                continue
            if any(part not in ("", ".") for part in todo):  # a file where a folder should be
                os.close(fd)
                raise OSError(errno.ENOTDIR, "not a folder", relpath)
            if not stat.S_ISREG(mode):
                os.close(fd)
                raise OSError(errno.EINVAL, file_type(mode), relpath)
            return fd
        raise OSError(errno.EISDIR, "a folder", relpath)
    finally:
        for folder in folders:
            os.close(folder)
        os.close(root_fd)


def _back_inside(root: str | Path, path: str, target: str) -> list[str]:
    """The components (next one last) of absolute `path` below `root`, or LinkOutsideError(target)."""
    path = os.path.normpath(path)
    for base in {os.path.abspath(root), os.path.realpath(root)}:
        if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
            return path[len(base) :].split(os.sep)[::-1]
    raise LinkOutsideError(target or path)
