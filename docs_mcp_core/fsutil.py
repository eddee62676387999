"""Write-temp-then-rename, file stats a later build trusts, and JSON read with damage as a ValueError."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .failpoints import pause


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Readers see the old file or the new one, never a partial write. `mode` defaults to what
    the umask gives a new file (pass the old file's mode to keep it when replacing one)."""
    write_atomic_pieces(path, (data,), mode)


def write_atomic_pieces(path: Path, pieces: Iterable[bytes], mode: int | None = None) -> str:
    """write_atomic for output made piece by piece (never held whole in memory); returns its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    digest = hashlib.sha256()
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb", buffering=1 << 20) as fh:
            for piece in pieces:
                digest.update(piece)
                fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        pause(f"replace-{path.name}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest.hexdigest()


# A file whose recorded mtime is this close to (or after) the moment its build began scanning is
# "racy" (git's word): an edit in the same timestamp tick could keep its size and mtime, so it is
# hashed again however its stat looks. 2 s covers the coarsest common filesystem clocks (FAT).
RACY_NS = 2_000_000_000


def file_stat(path: str | Path) -> list[int] | None:
    """What a later build compares to trust a file without reading it: size, mtime, ctime, inode.

    ctime cannot be set back by tools that preserve mtime (cp -p, rsync -t, tar), so an edit
    that keeps the size and restores the mtime still changes it.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def file_sha256(path: Path) -> str:
    with Path(path).open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def remove_temp_files(folder: Path, names: list[str]) -> int:
    """Delete write_atomic's temp files for `names` in `folder`, left by a process killed mid-write.

    Only files a build writes under its lock are named, so no other writer's temp file goes.
    """
    removed = 0
    for name in names:
        for tmp in Path(folder).glob(f".{name}.*.tmp"):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def dump_json(obj: Any) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write_json_atomic(path: Path, obj: Any) -> None:
    write_atomic(path, dump_json(obj))


def loads_json(text: str | bytes) -> Any:
    """json.loads, but a document nested too deeply for the parser (200,000 brackets) is a ValueError,
    like any other damage, instead of a RecursionError. The parser's own guard (the interpreter's
    recursion limit) is the depth limit: it costs nothing, where a scan for a lower limit would
    read every byte of the big state files (files.json) again in Python."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def read_json(path: Path) -> Any | None:
    """The JSON file's value, or None when it does not exist; damage (nesting too deep included) is a ValueError."""
    try:
        return loads_json(path.read_bytes())
    except FileNotFoundError:
        return None


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0
