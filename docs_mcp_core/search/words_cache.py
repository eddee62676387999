"""The word positions a server builds for a serving snapshot (chunk_words.py), kept in a per-user cache
folder, so that the next server on the same snapshot maps them from disk instead of building them.

Built at open, they cost a few hundred milliseconds of CPU on a corpus of 1,600 chunks (about a second on
16,000), which a plain server's first search waits for, and every session held its own copy. They cannot
be written with the snapshot at build time: the build may not import the read path, and what they hold
depends on this Python's Unicode database and stemmer. An entry is a folder of `.npy` files, opened
memory-mapped read-only (the sessions on one index share their pages), and words.json (the vocabulary,
the flags, each file's length and checksum), named by a hash of everything the positions depend on.
An entry that does not check out is removed and built again; a folder that cannot be written costs only
the build, as before.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np

from ..paths import user_cache
from .chunk_words import ChunkWords

FORMAT = 1  # of an entry; bump when what ChunkWords holds changes shape
ENV = "DOCS_MCP_WORDS_CACHE"  # another folder, or `off`
META = "words.json"
KEEP = 8  # entries kept, the most recently used first
UNUSED_DAYS = 30  # an entry no server has loaded for this long is removed
_STALE_TMP = 3600  # seconds: a half-written entry left by a killed server
_ARRAYS = ("words", "at", "starts", "chunk_starts", "lengths", "df")
CONTENT = "content_text"


def root() -> Path | None:
    """$DOCS_MCP_WORDS_CACHE, else $XDG_CACHE_HOME/docs-mcp/words (~/.cache/docs-mcp/words); None when `off`."""
    value = os.environ.get(ENV, "")
    if value.strip().lower() == "off":
        return None
    return Path(value) if value else user_cache("words")


def _ours(folder: Path) -> bool:
    """A folder of this user's that no other user can write to: entries planted by another would be
    trusted answers."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    uid = os.getuid() if hasattr(os, "getuid") else info.st_uid
    return stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o022


def key(snapshot_digest: str) -> str | None:
    """The entry's name: the snapshot's identity, this entry format, the code that builds the positions,
    the Unicode database and the stemmer; None when the code cannot be read (nothing is cached)."""
    code = _code_digest()
    if code is None:
        return None
    what = [FORMAT, snapshot_digest, code, unicodedata.unidata_version, list(sys.version_info[:2]), np.__version__]
    return hashlib.sha256(json.dumps(what).encode()).hexdigest()[:40]


@functools.lru_cache(maxsize=1)
def _code_digest() -> str | None:
    """The bytes of the modules whose code decides the positions (docs-mcp's version string does not change
    with every edit), and of the stemmer's."""
    from . import repeats

    here = Path(__file__).parent
    files = [here / name for name in ("chunk_words.py", "proximity.py", "repeats.py", "published.py", "words_cache.py")]
    stemmer = sys.modules.get(type(repeats._STEMMER).__module__)
    files.append(Path(getattr(stemmer, "__file__", None) or here))  # no file: not cached
    digest = hashlib.sha256()
    try:
        for file in files:
            digest.update(file.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def _checksum(data: bytes) -> str:
    import xxhash

    return xxhash.xxh3_128_hexdigest(data)


def _body_digest(body: dict[str, Any]) -> str:
    return _checksum(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())


def save(entry: str, words: ChunkWords, fields: dict[str, ChunkWords]) -> bool:
    """Keep the positions of one snapshot (content_text's and the other fields'); False when the folder
    cannot be used or written (another process may have written the same entry meanwhile: theirs is kept)."""
    base = root()
    if base is None:
        return False
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    if not _ours(base) or (base / entry).exists():
        return False
    tmp: Path | None = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=base))
        parts = {}
        for n, (name, part) in enumerate({CONTENT: words, **fields}.items()):
            arrays = {}
            for field in _ARRAYS:
                buffer = io.BytesIO()
                array = np.ascontiguousarray(getattr(part, field))
                np.save(buffer, array, allow_pickle=False)
                data = buffer.getvalue()
                file = f"{n}-{field}.npy"
                (tmp / file).write_bytes(data)
                arrays[field] = {"file": file, "dtype": array.dtype.str, "length": len(array), "xxh3": _checksum(data)}
            parts[name] = {
                "ids": list(part.ids),  # in the order of their ids, 0 up
                "anything": part.anything,
                "exact": part.exact,
                "folds": part.folds.pattern if part.folds is not None else None,
                "docs": part.docs,
                "average": float(part.average),
                "arrays": arrays,
            }
        body = {"format": FORMAT, "key": entry, "parts": parts}
        (tmp / META).write_text(json.dumps({"body": body, "xxh3": _body_digest(body)}))
        os.rename(tmp, base / entry)  # whole or not at all; a folder there already (another server's) is kept
    except OSError:
        return False
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    prune(base, entry)
    return True


def load(entry: str, chunks: int) -> tuple[ChunkWords, dict[str, ChunkWords]] | None:
    """The positions kept for one snapshot of `chunks` chunks, mapped read-only; None when there are none or
    they do not check out (a damaged entry is removed: the caller builds them and keeps them again)."""
    base = root()
    if base is None or not _ours(base):
        return None
    folder = base / entry
    try:
        raw = (folder / META).read_bytes()
    except OSError:
        return None
    try:
        parts = _parts(folder, raw, entry, chunks)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    try:
        os.utime(folder / META)  # used: kept by `prune`
    except OSError:
        pass
    words = parts.pop(CONTENT)
    return words, parts


def _parts(folder: Path, raw: bytes, entry: str, chunks: int) -> dict[str, ChunkWords]:
    kept = json.loads(raw)
    body = kept["body"]
    if kept["xxh3"] != _body_digest(body) or body["format"] != FORMAT or body["key"] != entry:
        raise ValueError(f"{folder / META} is not this entry")
    parts = {name: _part(folder, value, chunks) for name, value in body["parts"].items()}
    if CONTENT not in parts:
        raise KeyError(CONTENT)
    return parts


def _part(folder: Path, kept: dict[str, Any], chunks: int) -> ChunkWords:
    """One field's positions, each array checked against its recorded dtype, length and checksum."""
    ids = {str(word): n for n, word in enumerate(kept["ids"])}
    if len(ids) != len(kept["ids"]):
        raise ValueError("a stem is listed twice")
    arrays = {}
    for field in _ARRAYS:
        recorded = kept["arrays"][field]
        path = folder / recorded["file"]
        if "/" in recorded["file"] or _checksum(path.read_bytes()) != recorded["xxh3"]:
            raise ValueError(f"{path} changed since it was written")
        length = int(recorded["length"])
        array = np.load(path, mmap_mode="r" if length else None, allow_pickle=False)
        if array.ndim != 1 or len(array) != length or array.dtype.str != recorded["dtype"]:
            raise ValueError(f"{path} is not the array it was written as")
        arrays[field] = np.asarray(array)  # a plain view of the mapped pages
    anything = bool(kept["anything"])
    sizes = len(arrays["chunk_starts"]), len(arrays["lengths"])
    if (
        len(arrays["at"]) != len(arrays["words"])
        or len(arrays["starts"]) != len(ids) + 2
        or len(arrays["df"]) != len(ids)
        or int(arrays["starts"][-1]) != len(arrays["at"])
        or (sizes != (chunks, chunks) if not anything else sizes[0] > chunks)
    ):
        raise ValueError("the arrays do not fit together")
    return ChunkWords(
        ids,
        arrays["words"],
        arrays["at"],
        arrays["starts"],
        anything,
        arrays["chunk_starts"],
        arrays["lengths"],
        bool(kept["exact"]),
        re.compile(kept["folds"]) if kept["folds"] is not None else None,
        int(kept["docs"]),
        np.float32(kept["average"]),
        arrays["df"],
    )


def prune(base: Path, keep: str) -> None:
    """Remove entries beyond the KEEP most recently used and those unused for UNUSED_DAYS (never `keep`),
    and half-written ones a killed server left. A server still using a removed entry keeps its mapping."""
    now = time.time()
    entries = []
    for child in base.iterdir():
        try:
            if child.name.startswith(".tmp-"):
                if child.stat().st_mtime < now - _STALE_TMP:
                    shutil.rmtree(child, ignore_errors=True)
            elif child.name != keep and child.is_dir():
                meta = child / META
                entries.append(((meta if meta.exists() else child).stat().st_mtime, child))
        except OSError:  # removed meanwhile
            continue
    entries.sort(reverse=True)
    for n, (used, child) in enumerate(entries):
        if n >= KEEP - 1 or used < now - UNUSED_DAYS * 86400:
            shutil.rmtree(child, ignore_errors=True)
