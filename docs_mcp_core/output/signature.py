"""A signed index: metadata.json carries an Ed25519 signature of itself, checked by verifying readers.

metadata.json names everything a server serves: the table and its version, the table's content
hash, the SHA-256 of chunks.json, the taxonomy, prompts and server instructions. The signature
is a field of metadata.json (`signature`), over the rest of the file in a canonical form (keys
sorted, no spaces, UTF-8), so the signed document and its signature are published together in
one atomic write (one conditional PUT on object storage): a reader never sees one without the
other. Keys are PEM files as OpenSSL writes them (`openssl genpkey -algorithm ed25519`;
`docs-mcp keygen` writes the same), read with the `cryptography` library.

A reader asked to verify (`serve --verify`, `search --verify`) registers the public key for the
index's location; every later read of that location's metadata.json (including a server's
switch to a newly published build) is checked, and one that does not verify is refused with
one line, before anything of it is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DocsMcpError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

FIELD = "signature"
ALGORITHM = "ed25519"
_REQUIRED: dict[str, Ed25519PublicKey] = {}  # location of a metadata.json -> the key it must be signed with


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ModuleNotFoundError:
        raise DocsMcpError(
            "signing and verifying need the `cryptography` package: pip install 'docs-mcp[sign]'"
        ) from None
    return serialization


def canonical(document: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the document without its signature, keys sorted, compact, UTF-8."""
    rest = {k: v for k, v in document.items() if k != FIELD}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def key_id(public: Ed25519PublicKey) -> str:
    """A short name for a public key (the start of the SHA-256 of its raw bytes): says which key signed."""
    serialization = _crypto()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _read_key_file(path: Path, what: str, option: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise DocsMcpError(f"{option} {path}: cannot read the {what} ({exc.strerror or exc})") from None


def load_private_key(path: Path, option: str = "--sign") -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM file (PKCS#8, unencrypted: keep it in the CI's secret store)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    serialization = _crypto()
    data = _read_key_file(path, "private key", option)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise DocsMcpError(
            f"{option} {path}: not an unencrypted PEM private key ({str(exc).splitlines()[0]}); make one with "
            "`docs-mcp keygen` or `openssl genpkey -algorithm ed25519 -out key.pem`"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise DocsMcpError(f"{option} {path}: an Ed25519 key is needed, not {type(key).__name__.removeprefix('_')}")
    return key


def load_public_key(path: Path, option: str = "--verify") -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM file (`openssl pkey -in key.pem -pubout`)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    serialization = _crypto()
    data = _read_key_file(path, "public key", option)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise DocsMcpError(
            f"{option} {path}: not a PEM public key ({str(exc).splitlines()[0]}); write it from the private key "
            "with `openssl pkey -in key.pem -pubout -out key.pub.pem`"
        ) from None
    if not isinstance(key, Ed25519PublicKey):
        raise DocsMcpError(f"{option} {path}: an Ed25519 key is needed, not {type(key).__name__.removeprefix('_')}")
    return key


def sign_document(document: dict[str, Any], private: Ed25519PrivateKey) -> dict[str, Any]:
    """`document` with its `signature` field (any earlier one replaced)."""
    value = base64.b64encode(private.sign(canonical(document))).decode()
    signature = {"algorithm": ALGORITHM, "key_id": key_id(private.public_key()), "value": value}
    return {**{k: v for k, v in document.items() if k != FIELD}, FIELD: signature}


def problem(data: bytes, public: Ed25519PublicKey) -> str | None:
    """Why metadata.json's bytes do not carry a valid signature by `public`, or None when they do."""
    from cryptography.exceptions import InvalidSignature

    try:
        document = json.loads(data)
    except ValueError:
        return "it is not valid JSON"
    if not isinstance(document, dict):
        return "it is not a JSON object"
    signature = document.get(FIELD)
    if signature is None:
        return "it is not signed (build it with `docs-mcp build --sign KEYFILE`)"
    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        return f"its signature is not an {ALGORITHM} signature"
    expected = key_id(public)
    if signature.get("key_id") != expected:
        return f"it is signed by key {signature.get('key_id')!r}, not by the key given ({expected})"
    try:
        value = base64.b64decode(str(signature.get("value", "")), validate=True)
        public.verify(value, canonical(document))
    except (InvalidSignature, binascii.Error, ValueError):
        return "its signature does not match its content (it was changed after signing)"
    return None


def _where(location: Path | str) -> str:
    text = str(location)
    return text.rstrip("/") if "://" in text else os.path.abspath(text)


def require(location: Path | str, public: Ed25519PublicKey) -> None:
    """From now on, every read of this index's metadata.json in this process must verify with `public`."""
    _REQUIRED[_where(location)] = public


def required(location: Path | str) -> bool:
    """Whether this process verifies the index at `location`."""
    return _where(location) in _REQUIRED


def check_read(metadata_path: Path | str, data: bytes) -> None:
    """Refuse (DocsMcpError, one line) metadata.json bytes read from `metadata_path` that do not verify
    with the key required for its index; nothing to do for an index no key was required for."""
    if not _REQUIRED:
        return
    text = str(metadata_path)
    index = text.rsplit("/", 1)[0] if "://" in text else os.path.dirname(os.path.abspath(text))
    public = _REQUIRED.get(_where(index))
    if public is None:
        return
    found = problem(data, public)
    if found:
        raise DocsMcpError(f"refusing the index at {index}: its metadata.json does not verify: {found}")


def generate(private_path: Path, public_path: Path) -> str:
    """A new Ed25519 key pair as PEM files (the private one readable by its owner only); returns its key ID."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    serialization = _crypto()
    for path in (private_path, public_path):
        if Path(path).exists():
            raise DocsMcpError(f"{path} exists; keygen never overwrites a key (move it away first)")
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = private.public_key()
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        Path(public_path).write_bytes(
            public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
    except OSError as exc:
        raise DocsMcpError(f"cannot write the key pair at {private_path}: {exc.strerror or exc}") from None
    return key_id(public)
