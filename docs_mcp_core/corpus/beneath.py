"""Read a corpus file without ever leaving its docs folder, even when the folder changes during a build.

The walk checks each entry (a regular file, or a symlink to one inside the docs folder), but
between that check and the read, anyone who can write to the folder can swap a file for a
symlink to anything. So a file is opened one path component at a time, relative to the folder
already opened and never letting the kernel follow a link (`O_NOFOLLOW` with `dir_fd`): a
symlink met on the way is read and resolved here, inside the docs folder only, as the walk's
check resolves it. What was opened is then checked (`fstat`): only a regular file is read.
"""

from __future__ import annotations

import contextlib
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


def realpath_or_none(path: str | Path) -> str | None:
    """os.path.realpath, or None when a link on the way is replaced while it reads it (it raises then)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return None


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


class WriteRefusedError(Exception):
    """Why a file in the docs folder is left as it is instead of being replaced."""


def replace_beneath(root: str | Path, relpath: str, data: bytes) -> None:
    """Replace the file `relpath` under `root` with `data` (or create it), atomically, keeping its mode.

    Written files are the user's own (manifests `fix --write` proposes): a symlink is never
    written through nor replaced (it may lead out of the docs folder, or be shared on purpose),
    and a read-only file stays read-only and unchanged; both raise WriteRefusedError. No link is
    followed on the way either, and the temp file is made in the file's folder, opened by
    descriptor, so the rename cannot land anywhere else.
    """
    *folders, name = relpath.split("/")
    at = _open_folder(root, folders)
    try:
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=at, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise WriteRefusedError(
                    f"it is a symlink (to {os.readlink(name, dir_fd=at)}), which fix never replaces"
                )
            if not stat.S_ISREG(st.st_mode):
                raise WriteRefusedError(f"it is {file_type(st.st_mode)}")
            if not st.st_mode & stat.S_IWUSR or not os.access(name, os.W_OK, dir_fd=at):
                raise WriteRefusedError("it is read-only")
        tmp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=at)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                if st is not None:  # the file's own mode and, where allowed, owner; a new file gets the umask's
                    os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
                    with contextlib.suppress(PermissionError):
                        os.fchown(fh.fileno(), st.st_uid, st.st_gid)
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=at, dst_dir_fd=at)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=at)
            raise
    finally:
        os.close(at)


def _open_folder(root: str | Path, folders: list[str]) -> int:
    """A descriptor of the folder `folders` names under `root`, opened without following any link."""
    at = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for i, name in enumerate(folders):
        if name in ("", ".", ".."):
            os.close(at)
            raise WriteRefusedError(f"its path has a {name!r} part")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=at)
        except OSError as exc:
            os.close(at)
            if exc.errno in _IS_LINK or exc.errno == errno.ENOTDIR:
                where = "/".join(folders[: i + 1])
                raise WriteRefusedError(f"{where} is not a plain folder (a symlink, or a file)") from None
            raise
        os.close(at)
        at = fd
    return at
