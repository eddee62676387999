"""docs-mcp.yaml's `versions:` and `package:` blocks: which versions of a corpus to index, and which
package of which ecosystem the corpus documents (what a project's lockfile is searched for)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, field_validator, model_validator

LABEL = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._+-]{0,62}$")  # '...' is no Dagster partition key
LABEL_RULE = "letters, digits, '.', '_', '+' and '-', starting with a letter or digit, no '..', at most 63 characters"
ECOSYSTEMS = ("pypi", "npm", "go", "cargo")
GLOB_CHARS = "*?["
DEFAULT_KEEP = 5

SourceKind = Literal["path", "git", "url"]
# What each kind of source takes: one of these blocks.
KIND_FIELDS: dict[str, tuple[str, ...]] = {"git": ("refs", "tags"), "url": ("urls",), "path": ("paths",)}
_ALL = ("refs", "tags", "urls", "paths")
_TAG_ONLY = ("keep", "prereleases")


def check_label(label: str, what: str) -> str:
    """A version label becomes a folder name, a Dagster partition key and an enum value: keep it plain."""
    if not LABEL.match(label):
        raise ValueError(f"{what} {label!r} cannot label a version: use {LABEL_RULE}")
    return label


class PackageConfig(BaseModel):
    """The package the corpus documents, as lockfiles name it: `{name: sqlmodel, ecosystem: pypi}`."""

    model_config = ConfigDict(extra="forbid")
    name: Annotated[StrictStr, Field(min_length=1)]
    ecosystem: Literal["pypi", "npm", "go", "cargo"]


class VersionsConfig(BaseModel):
    """Exactly one of `refs` or `tags` (git), `urls` (a website) or `paths` (folders)."""

    model_config = ConfigDict(extra="forbid")
    refs: list[StrictStr] | dict[StrictStr, StrictStr] | None = None  # refs, or {label: ref}
    tags: StrictStr | None = None  # a glob over tag names, as `git tag -l PATTERN`
    keep: Annotated[int, Field(ge=1, le=100, strict=True)] = DEFAULT_KEEP  # the newest N matching tags
    prereleases: StrictBool = False  # let a tag pattern pick pre-releases (rc, beta, dev)
    urls: dict[StrictStr, StrictStr] | None = None  # {label: URL}, relative to the source's url
    paths: dict[StrictStr, StrictStr] | None = None  # {label: folder}, relative to the source's path
    default: StrictStr | None = None  # the version served when nothing pins one [default: the newest]

    @field_validator("refs")
    @classmethod
    def _refs(cls, value: list[str] | dict[str, str] | None) -> list[str] | dict[str, str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("list at least one ref")
        if isinstance(value, list):
            dupes = sorted({r for r in value if value.count(r) > 1})
            if dupes:
                raise ValueError(f"each ref once; repeated: {', '.join(dupes)}")
            for ref in value:
                if not LABEL.match(ref):
                    raise ValueError(
                        f"ref {ref!r} cannot label a version ({LABEL_RULE}); give it a label: refs: {{LABEL: {ref}}}"
                    )
            return value
        for label, ref in value.items():
            check_label(label, "label")
            if not ref.strip():
                raise ValueError(f"version {label!r}: the ref is empty")
        return value

    @field_validator("urls", "paths")
    @classmethod
    def _labelled(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("give at least one version: {LABEL: LOCATION}")
        for label, where in value.items():
            check_label(label, "label")
            if not where.strip():
                raise ValueError(f"version {label!r}: the location is empty")
        return value

    @field_validator("tags")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError('the tag pattern is empty; e.g. tags: "v*"')
        return value

    @model_validator(mode="after")
    def _one_block(self) -> VersionsConfig:
        given = [f for f in _ALL if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError(
                "set exactly one of 'refs' or 'tags' (a git source), 'urls' (a website) or 'paths' (folders)"
                + (f"; got {', '.join(given)}" if given else "")
            )
        extra = [f for f in _TAG_ONLY if f in self.model_fields_set]
        if extra and self.tags is None:
            raise ValueError(f"{', '.join(extra)} go with 'tags' (a tag pattern)")
        if self.default is not None and self.tags is None and self.default not in self.labels():
            raise ValueError(f"default {self.default!r} is none of the versions: {', '.join(self.labels())}")
        return self

    @property
    def block(self) -> str:
        return next(f for f in _ALL if getattr(self, f) is not None)

    def labels(self) -> list[str]:
        """The labels the config names (a tag pattern's are known only once its repository is read)."""
        if isinstance(self.refs, list):
            return list(self.refs)
        return list(self.refs or self.urls or self.paths or {})

    def locations(self) -> dict[str, str]:
        """{label: ref, URL or folder} as written (not for a tag pattern)."""
        if isinstance(self.refs, list):
            return {r: r for r in self.refs}
        return dict(self.refs or self.urls or self.paths or {})


def check_versions(versions: VersionsConfig | None, kind: SourceKind, ref_set: bool) -> None:
    """The versions block fits the source: refs or tags for git, urls for a website, paths for folders."""
    if versions is None:
        return
    allowed = KIND_FIELDS[kind]
    if versions.block not in allowed:
        what = {"git": "a git source", "url": "a website (url) source", "path": "a folder (path) source"}[kind]
        takes = " or ".join(f"versions.{f}" for f in allowed)
        raise ValueError(f"versions.{versions.block} does not apply to {what}; it takes {takes}")
    if ref_set:
        raise ValueError("set the versions to build in 'versions', not 'source.ref' (remove source.ref)")
