"""Indexes on S3-compatible object storage (`--index s3://bucket/prefix`).

A build works on a local mirror of the published index (the state dir: by default
~/.cache/docs-mcp/s3/BUCKET/PREFIX), which also keeps the embedding cache and the reuse
state, so every local step, check and prune runs unchanged. Publishing then copies the
mirror up: the table's new files first (Lance names data and index files uniquely and never
rewrites them), then chunks.json, then metadata.json with one PUT, which is the publish
marker naming the table version. Files only pruned versions used are deleted last, so the
version published before stays readable for servers still on it. Before building, a mirror
that differs from what is published (another machine built, or the state dir is new) is
brought down to match it.

Two builds publishing to one location from different state dirs or machines must not both
win: the build remembers the ETag of the metadata.json its mirror was brought up to date with
(or that there was none), checks it is still the published one before uploading anything, and
writes metadata.json with a conditional PUT (If-Match, or If-None-Match: * for the first
publish). The second build fails with one line; its files are orphans the next publish removes.
Conditional PUTs need boto3 (`docs-mcp[s3]`); readers do not.

Servers read metadata.json and open the table at the version it names straight from the
bucket; they poll metadata.json (every DOCS_MCP_S3_POLL_SECONDS, default 2) to follow new
publishes. Endpoint and credentials come from the standard AWS environment variables
(AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION or
AWS_DEFAULT_REGION, AWS_ALLOW_HTTP), read by pyarrow and LanceDB themselves; nothing here
prints them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlparse

from ..errors import DocsMcpError
from ..failpoints import pause
from ..fsutil import loads_json, read_json, write_atomic, write_json_atomic
from ..paths import user_cache
from .layout import CHUNKS, LANCEDB, METADATA, OutputLayout

if TYPE_CHECKING:  # pydantic's import waits until metadata is read
    from .metadata import PublishedMetadata

SCHEME = "s3://"
POLL_ENV = "DOCS_MCP_S3_POLL_SECONDS"
_CHUNK = 8 * 2**20
DEFAULT_POLL_SECONDS = 2.0


def is_remote(location: object) -> TypeGuard[str]:
    return isinstance(location, str) and location.startswith(SCHEME)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def location(value: str | os.PathLike[str]) -> str | Path:
    """An `s3://` URL stays a string (Path would fold its `//`); a local path is a Path; any other URL
    (gs://, az://, file://, https://…) is refused in one line rather than made a folder named `gs:`."""
    text = os.fspath(value)
    if not text.startswith(SCHEME):
        if _URL.match(text):
            raise DocsMcpError(
                f"{text}: an index location is a local folder or s3://BUCKET/PREFIX "
                "(S3 and S3-compatible storage); other URLs are not supported"
            )
        return Path(text)
    return text.rstrip("/") if len(text.rstrip("/")) > len(SCHEME) else text  # a bare s3:// is refused by parse


def _s3_error(what: str, url: str, exc: BaseException) -> DocsMcpError:
    reason = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    return DocsMcpError(
        f"cannot {what} {url} ({reason}); check AWS_ENDPOINT_URL, the bucket and the credentials "
        "in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
    )


def _endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def _region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


@functools.lru_cache(maxsize=4)
def _client(endpoint: str | None, region: str | None) -> Any:
    """boto3's S3 client: the one that sends conditional PUTs (If-Match / If-None-Match)."""
    try:
        import boto3
    except ImportError:
        raise DocsMcpError(
            "publishing to s3:// needs boto3 (its conditional writes keep two builds from overwriting "
            "each other): pip install 'docs-mcp[s3]'"
        ) from None
    return boto3.client("s3", endpoint_url=endpoint, region_name=region)


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None) or {}
    return str((response.get("Error") or {}).get("Code") or response.get("ResponseMetadata", {}).get("HTTPStatusCode"))


_NOT_FOUND = {"404", "NoSuchKey", "NoSuchBucket", "NotFound"}
_PRECONDITION = {"412", "PreconditionFailed", "409", "ConditionalRequestConflict"}


@functools.lru_cache(maxsize=4)
def _filesystem(endpoint: str | None, region: str | None) -> Any:
    from pyarrow import fs

    options: dict[str, Any] = {}
    if endpoint:
        parsed = urlparse(endpoint)
        options["endpoint_override"] = parsed.netloc or parsed.path
        options["scheme"] = parsed.scheme or "https"
    if region:
        options["region"] = region
    return fs.S3FileSystem(**options)


@dataclass(frozen=True)
class RemoteOutput:
    """One published index under s3://BUCKET/PREFIX (the same names as a local output folder)."""

    url: str

    @classmethod
    def parse(cls, url: str) -> RemoteOutput:
        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc:
            raise DocsMcpError(f"{url} names no bucket: give an s3://BUCKET/PREFIX location")
        return cls(f"s3://{parsed.netloc}{parsed.path}".rstrip("/"))

    @property
    def bucket(self) -> str:
        return urlparse(self.url).netloc

    @property
    def prefix(self) -> str:
        return urlparse(self.url).path.strip("/")

    def key(self, rel: str) -> str:
        return "/".join(p for p in (self.bucket, self.prefix, rel) if p)

    @property
    def lancedb_uri(self) -> str:
        return f"{self.url}/{LANCEDB}"

    def default_state_dir(self) -> Path:
        """Where builds keep the mirror, the embedding cache and the build state for this location."""
        return user_cache("s3", self.bucket, self.prefix or "_root")

    @property
    def fs(self) -> Any:
        return _filesystem(_endpoint(), _region())

    @property
    def client(self) -> Any:
        return _client(_endpoint(), _region())

    def object_key(self, rel: str) -> str:
        """The object's key in the bucket (boto3's Key: without the bucket)."""
        return "/".join(p for p in (self.prefix, rel) if p)

    # -- building: checks and conditional writes (boto3) -------------------------------------------
    def check_bucket(self) -> None:
        """Before anything is built: the bucket exists and these credentials reach it (a HEAD request)."""
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception as exc:  # noqa: BLE001 - botocore's errors: missing bucket, no access, no endpoint
            if _code(exc) in _NOT_FOUND:
                raise DocsMcpError(
                    f"bucket {self.bucket!r} does not exist ({self.url}); create it first, or check "
                    "AWS_ENDPOINT_URL and the bucket name"
                ) from None
            raise _s3_error("reach the bucket of", self.url, exc) from None

    def read_tagged(self, rel: str) -> tuple[bytes | None, str | None]:
        """The object's bytes and its ETag, from one GET (they belong together); (None, None) when absent."""
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.object_key(rel))
            return answer["Body"].read(), answer["ETag"]
        except Exception as exc:  # noqa: BLE001 - botocore's errors
            if _code(exc) in _NOT_FOUND:
                return None, None
            raise _s3_error("read", f"{self.url}/{rel}", exc) from None

    def etag(self, rel: str) -> str | None:
        try:
            etag: str = self.client.head_object(Bucket=self.bucket, Key=self.object_key(rel))["ETag"]
            return etag
        except Exception as exc:  # noqa: BLE001 - botocore's errors
            if _code(exc) in _NOT_FOUND:
                return None
            raise _s3_error("read", f"{self.url}/{rel}", exc) from None

    def put_if(self, rel: str, data: bytes | IO[bytes], etag: str | None) -> str | None:
        """PUT the object only if it still has `etag` (None: only if there is none); its new ETag, or
        None when the condition failed (someone else wrote it)."""
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            new: str = self.client.put_object(Bucket=self.bucket, Key=self.object_key(rel), Body=data, **condition)[
                "ETag"
            ]
            return new
        except Exception as exc:  # noqa: BLE001 - botocore's errors
            if _code(exc) in _PRECONDITION or (etag and _code(exc) in _NOT_FOUND):
                return None
            raise _s3_error("write", f"{self.url}/{rel}", exc) from None

    def upload_if(self, rel: str, path: Path, etag: str | None) -> str | None:
        """put_if with a local file's bytes, streamed (one PUT: up to 5 GB)."""
        with open(path, "rb") as body:
            return self.put_if(rel, body, etag)

    def listing(self, folder: str) -> dict[str, tuple[int, str]]:
        """Every object under `folder` (paths relative to the index root) -> (size, ETag)."""
        root = self.object_key("")
        start = f"{root}/" if root else ""
        found: dict[str, tuple[int, str]] = {}
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.object_key(folder) + "/"
            ):
                for item in page.get("Contents", []):
                    found[item["Key"][len(start) :]] = (item["Size"], item["ETag"])
        except Exception as exc:  # noqa: BLE001 - botocore's errors
            raise _s3_error("list", f"{self.url}/{folder}", exc) from None
        return found

    # -- objects ----------------------------------------------------------------------------
    def read(self, rel: str) -> bytes | None:
        """The object's bytes, or None when it does not exist."""
        try:
            with self.fs.open_input_stream(self.key(rel)) as stream:
                data: bytes = stream.read()
                return data
        except FileNotFoundError:
            return None
        except OSError as exc:
            if "NoSuchKey" in str(exc) or "not found" in str(exc).lower():
                return None
            raise _s3_error("read", f"{self.url}/{rel}", exc) from None

    def size(self, rel: str) -> int | None:
        from pyarrow import fs

        try:
            info = self.fs.get_file_info(self.key(rel))
        except OSError as exc:
            raise _s3_error("read", f"{self.url}/{rel}", exc) from None
        return info.size if info.type == fs.FileType.File else None

    def put(self, rel: str, data: bytes) -> None:
        """One object, written whole: readers see the old object or the new one (S3 PUTs are atomic)."""
        try:
            with self.fs.open_output_stream(self.key(rel)) as stream:
                stream.write(data)
        except OSError as exc:
            raise _s3_error("write", f"{self.url}/{rel}", exc) from None

    def upload(self, rel: str, path: Path) -> int:
        """Stream a local file up as one object (multipart for big files: still all or nothing)."""
        try:
            with open(path, "rb") as src, self.fs.open_output_stream(self.key(rel)) as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
        except OSError as exc:
            raise _s3_error("write", f"{self.url}/{rel}", exc) from None
        return path.stat().st_size

    def download(self, rel: str, path: Path) -> None:
        """Stream an object down to `path`, which appears complete or not at all."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.download.tmp")
        try:
            with self.fs.open_input_stream(self.key(rel)) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, _CHUNK)
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise _s3_error("read", f"{self.url}/{rel}", exc) from None

    def sizes(self, folder: str) -> dict[str, int]:
        """Every object under `folder` (paths relative to the index root) -> size."""
        from pyarrow import fs

        base = self.key("")
        try:
            infos = self.fs.get_file_info(fs.FileSelector(self.key(folder), recursive=True, allow_not_found=True))
        except OSError as exc:
            raise _s3_error("list", f"{self.url}/{folder}", exc) from None
        return {i.path[len(base) + 1 :]: i.size for i in infos if i.type == fs.FileType.File}

    def delete(self, rels: list[str]) -> None:
        for rel in rels:
            try:
                self.fs.delete_file(self.key(rel))
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise _s3_error("delete", f"{self.url}/{rel}", exc) from None

    # -- reading a published index ------------------------------------------------------------
    def require_metadata(self) -> PublishedMetadata:
        """The published metadata.json; one clear error (with the build command) when there is none."""
        from .metadata import parse_metadata

        data = self.read(METADATA)
        if data is None:
            raise DocsMcpError(
                f"no index at {self.url} ({METADATA} is missing); build one with "
                f"`docs-mcp build --docs-dir DOCS --index {self.url}`"
            )
        return parse_metadata(data, f"{self.url}/{METADATA}")


_polls: dict[str, tuple[float, tuple[str] | None]] = {}
_poll_lock = threading.Lock()


def remote_signature(url: str) -> tuple[str] | None:
    """What identifies the published metadata.json (its content hash), read at most once per poll interval."""
    interval = float(os.environ.get(POLL_ENV) or DEFAULT_POLL_SECONDS)
    now = time.monotonic()
    with _poll_lock:
        seen = _polls.get(url)
        if seen is not None and now - seen[0] < interval:
            return seen[1]
    try:
        data = RemoteOutput.parse(url).read(METADATA)
    except DocsMcpError:
        data = None
    signature = (hashlib.sha256(data).hexdigest(),) if data is not None else None
    with _poll_lock:
        _polls[url] = (now, signature)
    return signature


# -- the build's mirror -----------------------------------------------------------------------
def _local_sizes(root: Path) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for dirpath, _, names in os.walk(root / LANCEDB):
        for name in names:
            if name.startswith(".") and name.endswith(".tmp"):
                continue
            path = Path(dirpath) / name
            sizes[path.relative_to(root).as_posix()] = path.stat().st_size
    return sizes


def _is_manifest(rel: str) -> bool:
    return "/_versions/" in rel


def _published_problem(data: bytes, remote: RemoteOutput) -> str | None:
    """Why the published metadata.json cannot be built upon (not JSON, not an object, fields out of range), or None."""
    from .metadata import parse_metadata

    try:
        parse_metadata(data, f"{remote.url}/{METADATA}")
    except DocsMcpError as exc:
        return str(exc).removesuffix("; rebuild the index")
    return None


def _base(layout: OutputLayout, remote: RemoteOutput) -> tuple[str | None] | None:
    """The ETag of the metadata.json the mirror was last brought up to date with ((None,): there was none),
    as pull recorded it; None when it did not record one for this location."""
    try:
        data = read_json(layout.remote_base)
    except (ValueError, OSError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("url") != remote.url
        or not isinstance(data.get("etag"), (str, type(None)))
    ):
        return None
    return (data["etag"],)


def _remember_base(layout: OutputLayout, remote: RemoteOutput, etag: str | None) -> None:
    write_json_atomic(layout.remote_base, {"url": remote.url, "etag": etag})


def _record_mirrored(layout: OutputLayout, metadata: bytes) -> None:
    """Checksums of the table files just mirrored, recorded for the published version (table_checksums):
    the next build verifies the mirror against what was downloaded instead of rewriting an unrecorded table."""
    from . import table_checksums
    from .metadata import parse_metadata

    index = parse_metadata(metadata, layout.metadata).index
    if index is None:
        return
    root = layout.table(index.table)
    entries: dict[str, dict[str, Any]] = {}
    for sub in ("data", "_indices", "_deletions"):
        for path in sorted((root / sub).rglob("*")):
            if path.is_file() and (found := table_checksums.entry(path)) is not None:
                entries[path.relative_to(root).as_posix()] = found
    for name in (f"{2**64 - 1 - index.version:020d}.manifest", f"{index.version}.manifest"):
        if (root / "_versions" / name).is_file() and (found := table_checksums.entry(root / "_versions" / name)):
            entries[f"_versions/{name}"] = found
    table_checksums.Records(layout.table_files, {f"{index.table}:{index.version}": entries}).save()


def pull(remote: RemoteOutput, local: Path, warn: Callable[[str], None] | None = None) -> bool:
    """Make the mirror in `local` match what is published at `remote`, if it does not already, and
    remember which metadata.json that was (its ETag: push publishes only over that one).

    A published metadata.json that is damaged is treated as a damaged local one: `warn`, and the
    build starts as if nothing were published (then publishes over it). Call with the build lock
    on `local` held. Returns True when the mirror changed.
    """
    layout = OutputLayout(local)
    before = _base(layout, remote)
    published, etag = remote.read_tagged(METADATA)
    _remember_base(layout, remote, etag)
    if published is None:
        return False
    try:
        mirrored = layout.metadata.read_bytes()
    except FileNotFoundError:
        mirrored = None
    if mirrored == published:
        return False
    problem = _published_problem(published, remote)
    if problem is not None:
        if mirrored is None and before == (etag,):  # seen and dealt with earlier in this build
            return False
        if warn is not None:
            warn(f"ignoring the index published at {remote.url} and rebuilding it: {problem}")
        for stale in (layout.metadata, layout.table_files, layout.file_state, layout.written):
            stale.unlink(missing_ok=True)
        return True
    remote_files = remote.sizes(LANCEDB)
    local_files = _local_sizes(local)
    for rel in sorted(remote_files, key=_is_manifest):
        if local_files.get(rel) != remote_files[rel]:
            remote.download(rel, local / rel)
    for rel in set(local_files) - set(remote_files):
        (local / rel).unlink(missing_ok=True)
    if remote.size(CHUNKS) is not None:
        remote.download(CHUNKS, layout.chunks)
    for stale in (layout.table_files, layout.file_state, layout.written):  # they described the old mirror
        stale.unlink(missing_ok=True)
    _record_mirrored(layout, published)
    write_atomic(layout.metadata, published)
    return True


@dataclass
class PushStats:
    uploaded: int = 0
    uploaded_bytes: int = 0
    deleted: int = 0


def push(local: Path, remote: RemoteOutput) -> PushStats:
    """Publish the mirror: new table files, then chunks.json, then metadata.json, then deletions.

    Only over the metadata.json this build started from (pull recorded its ETag): checked before
    anything is uploaded, and the objects with fixed names another build also writes (version
    manifests, chunks.json, metadata.json) are written with conditional PUTs against what the
    listing then showed, so a build publishing meanwhile makes this one stop before it overwrites
    any of that build's objects. Data and index files have unique names. Call with the build lock
    on `local` held, after the local build published.
    """
    layout = OutputLayout(local)
    stats = PushStats()
    base = _base(layout, remote)
    if base is None:
        raise DocsMcpError(
            f"{layout.remote_base} is missing or damaged; run the build again to publish to {remote.url}"
        )
    if remote.etag(METADATA) != base[0]:  # before anything is uploaded
        raise _conflict(remote)
    chunks_etag = remote.etag(CHUNKS)
    local_files = _local_sizes(local)
    listed = remote.listing(LANCEDB)  # rel -> (size, ETag)
    pause("s3-upload")
    for rel in sorted(local_files, key=lambda r: (_is_manifest(r), r)):  # a manifest never before its files
        size, etag = listed.get(rel, (None, None))
        if _is_manifest(rel):
            # Re-sent every time (a few small files): a version number reused after a failed publish must
            # not keep the stale manifest an earlier upload left; conditional: another build's is never replaced.
            if remote.upload_if(rel, local / rel, etag) is None:
                raise _conflict(remote)
        elif size != local_files[rel]:
            remote.upload(rel, local / rel)
        else:
            continue
        stats.uploaded_bytes += local_files[rel]
        stats.uploaded += 1
    metadata = layout.metadata.read_bytes()
    published = remote.read(METADATA)
    if published != metadata:
        old_sha, new_sha = _chunks_sha256(published), _chunks_sha256(metadata)
        if layout.chunks.is_file() and (old_sha != new_sha or not new_sha):
            if remote.upload_if(CHUNKS, layout.chunks, chunks_etag) is None:
                raise _conflict(remote)
        pause("s3-publish")
        etag = remote.put_if(METADATA, metadata, base[0])
        if etag is None:
            raise _conflict(remote)
        _remember_base(layout, remote, etag)
    doomed = sorted(set(listed) - set(local_files))
    remote.delete(doomed)
    stats.deleted = len(doomed)
    return stats


def _chunks_sha256(metadata: bytes | None) -> str | None:
    """index.chunks_sha256 of a metadata.json, None when it has none or is damaged."""
    try:
        data = loads_json(metadata) if metadata else None
    except ValueError:
        return None
    index = data.get("index") if isinstance(data, dict) else None
    sha = index.get("chunks_sha256") if isinstance(index, dict) else None
    return sha if isinstance(sha, str) else None


def _conflict(remote: RemoteOutput) -> DocsMcpError:
    return DocsMcpError(
        f"another build published to {remote.url} while this one ran (its {METADATA} is not the one this "
        "build started from); this build published nothing and the other one's index stays: run it again "
        "to build on what is published now"
    )
