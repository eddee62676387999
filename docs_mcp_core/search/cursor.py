"""Stateless pagination cursors: opaque, signed with HMAC-SHA256, bound to query, filters and index.

The secret comes from DOCS_MCP_CURSOR_SECRET or is generated once per output folder and
kept beside the index (never in metadata.json), so cursors survive restarts and every
replica serving the same output folder accepts them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from ..errors import DocsMcpError, SearchError
from ..output.layout import OutputLayout

SECRET_ENV = "DOCS_MCP_CURSOR_SECRET"
MIN_SECRET_CHARS = 32  # the floor for every secret; a generated one is 64 hex characters (32 random bytes)


class CursorError(SearchError):
    """A cursor that cannot be used, with what to do instead."""


def _new_secret() -> str:
    return secrets.token_hex(32)


def load_secret(out: Path | str, *, log: Callable[[str], None] | None = None) -> bytes:
    """The signing key: from the environment, else kept beside a published index (mode 0600).

    Only a folder with metadata.json gets a secret file. A folder that cannot be written
    (a read-only mount) gets a secret for this process only, with a warning, rather than
    a refusal: search works, cursors just do not outlive the process.
    """
    given = os.environ.get(SECRET_ENV)
    if given:
        if len(given) < MIN_SECRET_CHARS:
            raise DocsMcpError(
                f"{SECRET_ENV} is {len(given)} characters; use at least {MIN_SECRET_CHARS} random "
                'characters, e.g. the output of `python -c "import secrets; print(secrets.token_hex(32))"`'
            )
        return given.encode()
    if isinstance(out, str) and out.startswith("s3://"):  # nothing local to keep a secret beside
        if log:
            log(
                f"cursors are signed with a key for this process only; set {SECRET_ENV} to share one across "
                "restarts and replicas of an s3:// index"
            )
        return _new_secret().encode()
    layout = OutputLayout(out)
    if not layout.metadata.is_file():
        raise DocsMcpError(f"no index at {out} ({layout.metadata.name} is missing): no cursor secret is created there")
    path = layout.cursor_secret
    if not path.is_file():
        try:
            _create_secret_file(path)
        except OSError as exc:
            if not path.is_file():  # not a race lost to another server: this folder cannot hold a secret
                if log:
                    log(
                        f"warning: cannot write the cursor secret {path} ({exc.strerror or exc}); using one for "
                        f"this process only, so cursors will not survive a restart. Set {SECRET_ENV} to share one."
                    )
                return _new_secret().encode()
    try:
        secret = path.read_text().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise DocsMcpError(
            f"cannot read the cursor secret {path} ({exc}); fix it or delete it, or set {SECRET_ENV}"
        ) from None
    if len(secret) < MIN_SECRET_CHARS:
        raise DocsMcpError(
            f"{path} holds no usable cursor secret (under {MIN_SECRET_CHARS} characters); delete it and start again"
        )
    return secret.encode()


def _create_secret_file(path: Path) -> None:
    """Write a new secret, mode 0600, appearing complete or not at all (link fails if one exists)."""
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(_new_secret())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another server process created it first: use theirs
    finally:
        tmp.unlink(missing_ok=True)


def request_key(query: str, filters: dict[str, str]) -> str:
    raw = json.dumps({"q": " ".join(query.split()), "f": sorted(filters.items())}, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(secret: bytes, *, offset: int, query: str, filters: dict[str, str], index: str) -> str:
    payload = json.dumps({"o": offset, "k": request_key(query, filters), "i": index}, separators=(",", ":")).encode()
    signature = hmac.new(secret, payload, hashlib.sha256).digest()
    return f"{_b64(payload)}.{_b64(signature)}"


MAX_CURSOR_CHARS = 1024  # an issued cursor is about 150 characters


def _malformed() -> CursorError:
    return CursorError(
        "cursor is malformed; pass the next_cursor value exactly as returned, or search again without a cursor"
    )


def _no_floats(text: str) -> float:
    raise ValueError("a cursor holds no fractions")


def _payload(payload: bytes) -> tuple[int, object, object]:
    """(offset, request key, index key) from a payload this server signed; a CursorError if it is not
    the flat object encode() writes (a secret that leaked could sign anything)."""
    try:
        data = json.loads(payload, parse_float=_no_floats, parse_constant=_no_floats)
    except (ValueError, RecursionError):
        raise _malformed() from None
    offset = data.get("o") if isinstance(data, dict) else None
    if type(offset) is not int or not 0 <= offset < 2**31:
        raise _malformed()
    return offset, data.get("k"), data.get("i")


def decode(secret: bytes, cursor: str, *, query: str, filters: dict[str, str], index: str) -> int:
    """The offset a cursor stands for, or a CursorError saying why it cannot be used.

    The signature is checked before anything in the payload is parsed: a forged cursor never reaches
    the JSON parser, however deep or large the numbers it holds.
    """
    if not isinstance(cursor, str) or len(cursor) > MAX_CURSOR_CHARS:
        raise _malformed()
    try:
        payload_text, signature_text = cursor.strip().split(".")
        payload, signature = _unb64(payload_text), _unb64(signature_text)
    except ValueError:
        raise _malformed() from None
    expected = hmac.new(secret, payload, hashlib.sha256).digest()
    if not hmac.compare_digest(signature, expected):
        raise CursorError(
            "cursor signature is invalid (it was altered or comes from another server); search again without a cursor"
        )
    offset, request, issued_for = _payload(payload)
    if request != request_key(query, filters):  # first: another query searches other corpora
        raise CursorError(
            "cursor belongs to a different query or filters; repeat the original query and "
            "filters with it, or search again without a cursor"
        )
    if issued_for != index:
        raise CursorError(
            "cursor is stale: the index was rebuilt since it was issued; "
            "search again without a cursor to get fresh results"
        )
    return offset
