"""`.docs-mcp.json` schema and the rules that resolve a file's strategy and metadata."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from ..diagnostics import Diagnostic, error
from .globs import GlobError, check_globs, compile_glob, glob_match
from .json_locations import json_line_map, line_of
from .trust_settings import TrustSettings

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

MANIFEST_NAME = ".docs-mcp.json"
DEFAULT_MAX_CHUNK_SIZE = 20_000
MIN_MAX_CHUNK_SIZE = 200
MAX_TAXONOMY_KEYS = 64
MAX_TAXONOMY_VALUES = 512
MAX_VALUE_CHARS = 128
MAX_KEY_CHARS = 64
RESERVED_KEYS = frozenset({"query", "limit", "cursor", "chunk_id", "context"})
TOO_DEEP = "nested too deeply (arrays or objects hundreds of levels inside each other); flatten it"
_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def check_metadata_key(key: str) -> str:
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(f"metadata key {key!r} is longer than {MAX_KEY_CHARS} characters")
    if not _KEY.match(key):
        raise ValueError(f"metadata key {key!r} must start with a letter and use only letters, digits and '_'")
    if key in RESERVED_KEYS:
        raise ValueError(f"metadata key {key!r} is reserved (it is a search_docs/get_doc parameter); rename it")
    return key


def check_metadata_value(key: str, value: str) -> str:
    if not value.strip():
        raise ValueError(f"metadata value for {key!r} is empty")
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"metadata value for {key!r} is longer than {MAX_VALUE_CHARS} characters")
    return value.strip()


def _check_metadata(value: dict[str, str] | None) -> dict[str, str] | None:
    if value is None:
        return None
    return {check_metadata_key(k): check_metadata_value(k, v) for k, v in value.items()}


class Strategy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_by: Literal["h1", "h2", "h3", "file"]
    max_chunk_size: Annotated[StrictInt, Field(ge=MIN_MAX_CHUNK_SIZE)] | None = None
    min_chunk_size: Annotated[StrictInt, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _min_below_max(self) -> Strategy:
        if self.min_chunk_size is not None and self.min_chunk_size >= self.max_size:
            raise ValueError(
                f"min_chunk_size ({self.min_chunk_size}) must be smaller than max_chunk_size ({self.max_size})"
            )
        return self

    @property
    def max_size(self) -> int:
        return self.max_chunk_size or DEFAULT_MAX_CHUNK_SIZE

    @property
    def min_size(self) -> int:
        return self.min_chunk_size or 0

    def key(self) -> str:
        return self.model_dump_json(exclude_none=True)


DEFAULT_STRATEGY = Strategy(chunk_by="h2")

MetadataMap = dict[StrictStr, StrictStr]


class TaxonomyFieldConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: StrictStr | None = None
    vector_collapse: StrictBool = False


class Override(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: StrictStr
    strategy: Strategy | None = None
    metadata: MetadataMap | None = None

    @field_validator("pattern")
    @classmethod
    def _valid_glob(cls, value: str) -> str:
        try:
            compile_glob(value)
        except GlobError as exc:
            raise ValueError(str(exc)) from None
        return value

    _meta = field_validator("metadata")(classmethod(lambda cls, v: _check_metadata(v)))


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal["1"]
    strategy: Strategy | None = None
    metadata: MetadataMap = Field(default_factory=dict)
    taxonomy: dict[StrictStr, TaxonomyFieldConfig] = Field(default_factory=dict)
    mcpServerInstructions: StrictStr | None = None  # noqa: N815 - the manifest's JSON field name (reference contract)
    overrides: list[Override] = Field(default_factory=list)
    exclude: list[StrictStr] = Field(default_factory=list)  # globs relative to this folder; files left out
    trust: TrustSettings | None = None  # rules file, disabled rules and allow-list of the trust scan

    _meta = field_validator("metadata")(classmethod(lambda cls, v: _check_metadata(v)))

    @field_validator("exclude")
    @classmethod
    def _valid_globs(cls, value: list[str]) -> list[str]:
        return check_globs(value)

    @field_validator("taxonomy")
    @classmethod
    def _taxonomy_keys(cls, value: dict[str, TaxonomyFieldConfig]) -> dict[str, TaxonomyFieldConfig]:
        for key in value:
            check_metadata_key(key)
        return value


@dataclass
class LoadedManifest:
    relpath: str  # path of the manifest file, relative to the docs root
    folder: str  # its folder relative to the docs root ("" for the root)
    manifest: Manifest
    lines: dict[Any, int] = field(default_factory=dict)


def format_loc(path: tuple[Any, ...]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(p for p in loc if not (isinstance(p, str) and p.startswith("function-")))


def _friendly(err: ErrorDetails) -> str:
    loc = format_loc(_clean_loc(err["loc"]))
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        return f"unknown field '{loc}'; remove it or check its spelling"
    if kind == "missing":
        return f"'{loc}' is required"
    if kind == "literal_error" and loc == "version":
        return "'version' must be the string \"1\""
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return f"{loc}: {msg}" if loc else msg


def parse_manifest(text: str, relpath: str) -> tuple[LoadedManifest | None, list[Diagnostic]]:
    """Parse manifest text; on failure return precise diagnostics (file, line, field)."""
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict):
            return None, [error(relpath, 1, "a manifest must be a JSON object", "manifest-invalid")]
        lines = json_line_map(text)
        manifest = Manifest.model_validate(raw)
    except json.JSONDecodeError as exc:
        return None, [error(relpath, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})", "manifest-invalid")]
    except RecursionError:
        return None, [error(relpath, 1, f"manifest is {TOO_DEEP}", "manifest-invalid")]
    except ValidationError as exc:
        diags = []
        for err in exc.errors():
            path = _clean_loc(err["loc"])
            diags.append(error(relpath, line_of(lines, path), _friendly(err), "manifest-invalid"))
        return None, diags
    folder = relpath.rsplit("/", 1)[0] if "/" in relpath else ""
    return LoadedManifest(relpath, folder, manifest, lines), []


@dataclass(frozen=True)
class Resolution:
    """What governs one file, and where each choice came from (for messages)."""

    strategy: Strategy
    metadata: dict[str, str]
    strategy_source: str  # "default", or the manifest/override/hint that set it
    manifest: str | None  # relpath of the governing manifest


def nearest_manifest(relpath: str, manifests: dict[str, LoadedManifest]) -> LoadedManifest | None:
    """The manifest in the file's folder or its nearest ancestor; it governs exclusively."""
    folder = relpath.rsplit("/", 1)[0] if "/" in relpath else ""
    while True:
        if folder in manifests:
            return manifests[folder]
        if not folder:
            return None
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""


def resolve_manifest_rules(relpath: str, loaded: LoadedManifest | None) -> Resolution:
    """Baseline, then overrides top to bottom (last match wins); in-file hints come later."""
    if loaded is None:
        return Resolution(DEFAULT_STRATEGY, {}, "default", None)
    m = loaded.manifest
    strategy, source = (m.strategy, loaded.relpath) if m.strategy else (DEFAULT_STRATEGY, "default")
    metadata = dict(m.metadata)
    local = relpath[len(loaded.folder) + 1 :] if loaded.folder else relpath
    for i, override in enumerate(m.overrides):
        if not glob_match(override.pattern, local):
            continue
        if override.metadata:
            metadata.update(override.metadata)
        if override.strategy:
            strategy, source = override.strategy, f"{loaded.relpath} overrides[{i}]"
    return Resolution(strategy, metadata, source, loaded.relpath)
