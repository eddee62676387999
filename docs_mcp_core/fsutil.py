"""Write-temp-then-rename, and a lock so two builds never write one output at once."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from .errors import DocsMcpError
from .testhook import pause


def write_atomic(path: Path, data: bytes) -> None:
    """Readers see the old file or the new one, never a partial write."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        pause(f"replace-{path.name}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


@contextmanager
def build_lock(out: Path) -> Iterator[None]:
    """Exclusive, non-blocking: a second build of the same output fails fast and says why."""
    state = out / ".docs-mcp"
    state.mkdir(parents=True, exist_ok=True)
    fh = open(state / "build.lock", "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DocsMcpError(
                f"another docs-mcp build is writing to {out}; wait for it to finish or build into another --out"
            ) from None
        yield
    finally:
        fh.close()


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0
