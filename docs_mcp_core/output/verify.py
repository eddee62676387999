"""`--verify PUBKEY`: check a published index's signature and the table files it covers now, and require
it on every later read (signature.py, signed_files.py)."""

from __future__ import annotations

from pathlib import Path

from ..errors import DocsMcpError
from . import signed_files
from .layout import METADATA, OutputLayout
from .metadata import parse_metadata
from .objectstore import RemoteOutput, is_remote
from .signature import check_read, key_id, load_public_key, require


def verify_index(location: Path | str, public_key: Path) -> str:
    """Check the published metadata.json of `location` (a folder or s3:// URL) now and on every later read;
    returns the verified key's ID. Raises DocsMcpError (one line) when it does not verify."""
    public = load_public_key(public_key)
    if is_remote(location):
        remote = RemoteOutput.parse(str(location))
        path: Path | str = f"{remote.url}/{METADATA}"
        data = remote.read(METADATA)
    else:
        path = OutputLayout(Path(location)).metadata
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = None
    if data is None:
        raise DocsMcpError(f"refusing the index at {location}: it has no metadata.json to verify")
    require(location, public)
    check_read(path, data)
    signed_files.check(location, parse_metadata(data, path).index)
    return key_id(public)
