"""metadata.json: what the server needs to build its tools, and the publish marker it watches.

One model for writing and reading it. `schema_version` says which layout of the output (the table's
columns, the fields readers rely on) the build wrote; a reader refuses any other in one line that names
the rebuild command, and a build warns and rebuilds over it, so no reader carries branches for older
layouts.
"""

from __future__ import annotations

import datetime as dt
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from .. import __version__
from ..errors import DocsMcpError
from ..fsutil import loads_json, write_json_atomic
from ..paths import MARKDOWN_SUFFIXES
from .layout import METADATA, OutputLayout
from .signature import check_read
from .vector_index import MAX_DIMENSIONS
from .versions_manifest import read_manifest, version_label

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

METADATA_VERSION = "1.0.0"  # the contract shared with the reference implementation
SUPPORTED_MAJOR = 1
# The layout of the output, this docs-mcp's own: bump it when the table gains or changes columns, or a field
# of metadata.json that readers rely on changes. It is also hashed into the table's content hash.
SCHEMA_VERSION = 6
_I64 = 2**63 - 1  # Lance numbers versions with 64-bit integers; counts fit them too

# Numbers readers pass on to LanceDB or numpy: out of range is damage, said as such, not an OverflowError later.
Version = Annotated[StrictInt, Field(ge=1, le=_I64)]
Count = Annotated[StrictInt, Field(ge=0, le=_I64)]
Dimensions = Annotated[StrictInt, Field(ge=1, le=MAX_DIMENSIONS)]


class _Published(BaseModel):
    """Strict types for what readers rely on; unknown fields are kept (a newer 1.x may add some)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """The JSON object as written: fields that were set, in declaration order."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class FileDigest(_Published):
    """A table file as a signed build read it (output/signed_files.py)."""

    size: Count
    sha256: StrictStr


class TableVersion(_Published):
    """The table version metadata.json pins (its `index`): what a server opens, and what a build writes,
    republishes or updates."""

    table: StrictStr
    version: Version
    rows: Count
    content_hash: StrictStr
    chunks_sha256: StrictStr | None = None  # the chunks.json this version was built with
    previous_version: Version | None = None  # the version published before it (kept for readers still on it)
    passages_key: StrictStr | None = None  # its vectors' fingerprints were made under it: a small edit may update them
    vectors: Count | None = None  # vectors in the table, passages included (None: none)
    # Signed builds: every file of this version (relative to the table folder) with its size and SHA-256,
    # so the signature covers the bytes a server reads (output/signed_files.py).
    file_digests: dict[StrictStr, FileDigest] | None = None
    # The data and index files the build wrote for it (relative path -> size, output.table_files records their
    # checksums): the build's own, never in metadata.json.
    files: dict[str, int] = Field(default_factory=dict, exclude=True)
    made: str = Field(default="written", exclude=True)  # by this build: written | updated | kept (the published one)

    def to_json(self) -> dict[str, Any]:
        """As metadata.json's `index` holds it: the optional fields only when they say something."""
        return {k: v for k, v in super().to_json().items() if k in _REQUIRED or v not in (None, "", 0)}


_REQUIRED = ("table", "version", "rows", "content_hash")


class Stats(_Published):
    total_chunks: Count = 0
    total_files: Count = 0
    indexed_at: StrictStr | None = None
    source_commit: StrictStr | None = None


class EmbeddingInfo(_Published):
    """What made the vectors; a server embeds queries with the same provider and model."""

    provider: StrictStr
    model: StrictStr
    dimensions: Dimensions


class TaxonomyKey(_Published):
    description: StrictStr | None = None
    values: list[StrictStr] = []
    vector_collapse: StrictBool = False


class PromptArgument(_Published):
    name: StrictStr
    title: StrictStr | None = None
    description: StrictStr | None = None
    required: StrictBool = False


class PromptMessage(_Published):
    role: StrictStr
    content: StrictStr


class Prompt(_Published):
    name: StrictStr
    title: StrictStr | None = None
    description: StrictStr | None = None
    arguments: list[PromptArgument] = []
    messages: list[PromptMessage] = []
    source: StrictStr | None = None


class PublishedMetadata(_Published):
    """metadata.json, parsed once: build, checks, search, server and pipeline read these fields."""

    metadata_version: StrictStr = METADATA_VERSION
    schema_version: StrictInt = SCHEMA_VERSION
    corpus_description: StrictStr = ""
    taxonomy: dict[str, TaxonomyKey] = {}
    stats: Stats = Stats()
    embedding: EmbeddingInfo | None = None
    prompts: list[Prompt] = []
    instructions: StrictStr | None = Field(default=None, alias="mcpServerInstructions")
    index: TableVersion | None = None
    build: dict[str, Any] = {}
    # Chunks the trust scan withheld: ID -> its rules and where (never their text), so get_doc can say why;
    # the first ones in ID order, and how many there are in all (more than listed: the list was cut).
    quarantined: dict[str, StrictStr] = {}
    quarantined_count: Count = 0

    def unlisted(self, chunk_id: str) -> bool:
        """Whether `chunk_id` (or, for a bare file path, one of its chunks) may be a quarantined chunk past the
        cut of `quarantined`: the list holds the first IDs in order, so only one after its last can be."""
        if self.quarantined_count <= len(self.quarantined):
            return False
        last = max(self.quarantined, default="")
        return (chunk_id if "#" in chunk_id else f"{chunk_id}#\U0010ffff") > last


def build_metadata(
    *,
    description: str,
    taxonomy: dict[str, Any],
    total_chunks: int,
    total_files: int,
    source_commit: str | None,
    embedding: dict[str, Any] | None,
    prompts: list[dict[str, Any]],
    instructions: str | None,
    index: dict[str, Any],
    chunker_version: str,
    quarantined: dict[str, str] | None = None,
    quarantined_count: int = 0,
) -> PublishedMetadata:
    return PublishedMetadata.model_validate(
        {
            **({"quarantined": quarantined} if quarantined else {}),
            **({"quarantined_count": quarantined_count} if quarantined_count else {}),
            "metadata_version": METADATA_VERSION,
            "schema_version": SCHEMA_VERSION,
            "corpus_description": description,
            "taxonomy": taxonomy,
            "stats": {
                "total_chunks": total_chunks,
                "total_files": total_files,
                "indexed_at": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
                "source_commit": source_commit,
            },
            "embedding": embedding,
            "prompts": prompts,
            "mcpServerInstructions": instructions,
            "index": index,
            "build": {"docs_mcp_version": __version__, "chunker_version": chunker_version},
        }
    )


def write_metadata(out: Path, metadata: PublishedMetadata, signer: Ed25519PrivateKey | None = None) -> Path:
    """Write metadata.json atomically; with `signer`, carrying its signature (output/signature.py)."""
    path = OutputLayout(out).metadata
    document = metadata.to_json()
    if signer is not None:
        from .signature import sign_document

        document = sign_document(document, signer)
    write_json_atomic(path, document)
    return path


_JSON_NAMES = {
    "dict_type": "an object",
    "model_type": "an object",
    "list_type": "an array",
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "a boolean",
    "missing": None,
}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    kinds = {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), type(value).__name__)


def _field_problem(exc: ValidationError) -> str:
    """The first problem, worded for a person: field 'index.version' must be an integer (got a string)."""
    err = exc.errors()[0]
    loc = ".".join(str(part) for part in err["loc"])
    if err["type"] == "missing":
        return f"field '{loc}' is missing"
    want = _JSON_NAMES.get(err["type"]) or err["msg"].lower().removeprefix("input should be ")
    value = err.get("input")
    got = str(value) if isinstance(value, int) and not isinstance(value, bool) else _json_type(value)
    return f"field '{loc}' must be {want} (got {got})"


def read_metadata(out: Path) -> PublishedMetadata | None:
    """The published metadata, or None if nothing was published; a broken file is a one-line error."""
    path = OutputLayout(out).metadata
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DocsMcpError(f"cannot read {path} ({exc.strerror or exc}); rebuild the index") from None
    return parse_metadata(raw, path)


def parse_metadata(data: bytes, path: Any) -> PublishedMetadata:
    """metadata.json's bytes (from `path`, a file or an s3:// URL), parsed and checked; a one-line error otherwise.
    A reader that requires a signature for that index checks it first (output/signature.py)."""
    check_read(path, data)
    try:
        parsed = loads_json(data)
    except ValueError as exc:
        raise DocsMcpError(f"{path} is not valid JSON ({exc}); rebuild the index") from None
    return check_metadata(parsed, path)


def check_metadata(data: Any, path: Any) -> PublishedMetadata:
    """Parsed metadata.json (from `path`, a file or an s3:// URL) as readers need it; a one-line error otherwise."""
    if not isinstance(data, dict):
        raise DocsMcpError(f"{path} holds {_json_type(data)}, not a JSON object; rebuild the index")
    version = str(data.get("metadata_version", ""))
    if not version.split(".")[0].isdigit() or int(version.split(".")[0]) != SUPPORTED_MAJOR:
        raise DocsMcpError(
            f"{path} has metadata_version {version!r}; this docs-mcp reads {SUPPORTED_MAJOR}.x.x — rebuild the index"
        )
    schema = data.get("schema_version")
    if type(schema) is not int or schema != SCHEMA_VERSION:
        found = "no schema_version (an older docs-mcp wrote it)" if schema is None else f"schema_version {schema!r}"
        raise DocsMcpError(
            f"{path} has {found}; this docs-mcp reads schema_version {SCHEMA_VERSION}: rebuild the index with "
            f"`{rebuild_command(path)}`"
        )
    try:
        return PublishedMetadata.model_validate(data)
    except ValidationError as exc:
        raise DocsMcpError(f"{path}: {_field_problem(exc)}; rebuild the index") from None


def rebuild_command(metadata_path: Any) -> str:
    """The build that rewrites the index whose metadata.json is at `metadata_path` (a file or an s3:// URL)."""
    text = str(metadata_path)
    out = text.removesuffix("/" + METADATA) if "://" in text else str(Path(text).parent)
    if version_label(out) is not None:  # one version of a versioned corpus: its config builds every version
        try:
            corpus = (read_manifest(Path(out).parent.parent) or {}).get("corpus")
        except DocsMcpError:
            corpus = None
        return f"docs-mcp build --config docs-mcp.yaml --corpus {shlex.quote(str(corpus or 'NAME'))}"
    return f"docs-mcp build --docs-dir DOCS --index {shlex.quote(out)}"


def no_index_message(out: Path) -> str:
    """Why `out` is not an index, and the complete command that makes one (for every reading command)."""
    out = Path(out)
    where = shlex.quote(str(out))
    if not out.exists():
        return f"no index at {out} (the folder does not exist); build one with `docs-mcp build --docs-dir DOCS --index {where}`"
    if not out.is_dir():
        return (
            f"{out} is a file, not an index folder; build an index with `docs-mcp build --docs-dir DOCS --index INDEX`"
        )
    docs_files = any(next(out.glob(f"*{suffix}"), None) for suffix in MARKDOWN_SUFFIXES)
    if docs_files or (out / ".docs-mcp.json").is_file():
        return (
            f"{out} looks like a docs folder, not an index ({METADATA} is missing); build one with "
            f"`docs-mcp build --docs-dir {where} --index INDEX` and pass INDEX instead"
        )
    return f"no index at {out} ({METADATA} is missing); build one with `docs-mcp build --docs-dir DOCS --index {where}`"


def require_metadata(out: Path) -> PublishedMetadata:
    """The published metadata of a valid index; a DocsMcpError with a complete build command otherwise."""
    path = OutputLayout(out).metadata
    if not path.is_file():
        raise DocsMcpError(no_index_message(out))
    try:
        data = read_metadata(out)
    except OSError as exc:
        raise DocsMcpError(
            f"cannot read {path} ({exc.strerror or exc}); check its permissions, or rebuild the index"
        ) from None
    if data is None:
        raise DocsMcpError(no_index_message(out))
    return data
