"""`docs-mcp.yaml`: the named corpora a pipeline builds (one Dagster partition each)."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from ..corpus.globs import check_globs
from ..corpus.manifest import format_loc
from ..corpus.trust_settings import CorpusTrustSettings
from ..embedding import ProviderSettings, provider_names, resolve_settings, setting_specs
from ..embedding.registry import provider_class
from ..errors import DocsMcpError
from ..paths import read_bytes
from ..versions.spec import PackageConfig, SourceKind, VersionsConfig, check_versions

if TYPE_CHECKING:
    from ..output.objectstore import RemoteOutput
    from ..trust.policy import CorpusTrust

CONFIG_FILE = "docs-mcp.yaml"
CONFIG_ENV = "DOCS_MCP_CONFIG"


WEB_FIELDS = (
    "path_prefix",
    "max_pages",
    "llms_txt",
    "concurrency",
    "per_host",
    "timeout_seconds",
    "retries",
    "max_page_bytes",
)


class SourceConfig(BaseModel):
    """Exactly one of `path` (a local folder), `git` (a repository path or URL) or `url` (a docs website).

    A website is refreshed with conditional requests (sources/web/stage.py); the other fields
    bound the crawl and how hard it presses the site.
    """

    model_config = ConfigDict(extra="forbid")
    path: StrictStr | None = None
    git: StrictStr | None = None
    url: StrictStr | None = None
    ref: StrictStr = "HEAD"
    subdir: StrictStr | None = None
    path_prefix: StrictStr | None = None  # only pages under this path (default: the start URL's folder)
    max_pages: Annotated[int, Field(ge=1, strict=True)] = 500
    llms_txt: Literal["off", "txt", "full"] = "off"  # txt: the pages llms.txt links; full: llms-full.txt
    concurrency: Annotated[int, Field(ge=1, le=32, strict=True)] = 4
    per_host: Annotated[int, Field(ge=1, le=32, strict=True)] = 2
    timeout_seconds: Annotated[float, Field(gt=0, le=600)] = 30.0  # per request, connecting to the last byte
    retries: Annotated[int, Field(ge=0, le=10, strict=True)] = 3
    max_page_bytes: Annotated[int, Field(ge=1024, strict=True)] = 5 * 2**20

    @model_validator(mode="after")
    def _one_kind(self) -> SourceConfig:
        if sum(bool(v) for v in (self.path, self.git, self.url)) != 1:
            raise ValueError(
                "set exactly one of 'path' (a local folder), 'git' (a repository) or 'url' (a docs website)"
            )
        if not self.git and (self.subdir or self.ref != "HEAD"):
            raise ValueError("'ref' and 'subdir' apply to git sources only")
        if not self.url and (set(WEB_FIELDS) & self.model_fields_set):
            raise ValueError(f"{', '.join(sorted(set(WEB_FIELDS) & self.model_fields_set))} apply to url sources only")
        if self.url:
            from .web.urls import ACCEPTED, url_problem

            if (problem := url_problem(self.url.strip())) and problem.startswith("the scheme"):
                raise ValueError(f"url {self.url!r} must start with http:// or https://")
            if problem:
                raise ValueError(f"url {self.url!r} is not a valid URL ({problem}); give {ACCEPTED}")
        return self


class _EmbeddingBlock(BaseModel):
    """A corpus's provider; without `provider`, the build default (local/onnx where installed, else none).

    Its keys are our providers' settings; a provider another package adds (registry.py) brings its own,
    checked against its settings model once the block names it."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="after")
    def _known(self) -> _EmbeddingBlock:
        extra = sorted(self.model_extra or {})
        values = self.model_dump(exclude=set(extra))
        ours = setting_specs(with_plugins=False)
        for spec in ours:
            value, choices = values[spec.name], spec.choices or ()
            if value is None or not choices or value in choices:
                continue
            if spec.name == "provider" and value in provider_names():
                continue  # a provider another package adds
            raise ValueError(
                f"unknown {spec.name} {value!r}; choose one of: {', '.join(provider_names() if spec.name == 'provider' else choices)}"
            )
        provider = values["provider"]
        builtin = provider is None or provider in provider_names(with_plugins=False)
        theirs = {} if builtin else provider_class(provider).Settings.model_fields
        unknown = [key for key in extra if key not in theirs]
        if unknown:
            raise ValueError(
                f"unknown setting{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for provider "
                f"{provider or '(the default)'}; the settings are: {', '.join(sorted({*(s.name for s in ours), *theirs}))}"
            )
        return self

    def settings(self) -> ProviderSettings:
        values = self.model_dump()
        provider = values.pop("provider")
        return resolve_settings(ProviderSettings(**values), provider)[0]


def _embedding_fields() -> dict[str, Any]:
    """Our providers' settings (registry.setting_specs), typed and bounded as the CLI options are; each may
    be left out."""
    fields: dict[str, Any] = {}
    for spec in setting_specs(with_plugins=False):
        kind: Any = (
            Annotated[int, Field(ge=spec.min, le=spec.max)] if spec.min is not None else Annotated[spec.kind, Strict()]
        )
        fields[spec.name] = (kind | None, None)
    return fields


# docs-mcp.yaml's `embedding:` block: the provider settings, made from the providers' settings models.
# A type checker cannot see a model made at run time: it checks uses against the base, which has
# the methods (the fields are read through model_dump and settings()).
if TYPE_CHECKING:
    EmbeddingConfig = _EmbeddingBlock
else:
    EmbeddingConfig = create_model("EmbeddingConfig", __base__=_EmbeddingBlock, **_embedding_fields())


class CorpusConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: StrictStr
    description: StrictStr | None = None
    source: SourceConfig
    out: StrictStr | None = None  # a folder, or s3://BUCKET/PREFIX (built in state_dir, then published there)
    state_dir: StrictStr | None = None  # with an s3:// out: the local mirror [default: ~/.cache/docs-mcp/s3/...]
    cache_dir: StrictStr | None = None
    allow_empty: StrictBool = False  # publish even if the source has nothing to index (build --allow-empty)
    workers: Annotated[StrictInt, Field(ge=1)] | None = None  # processes that parse changed files (build --workers)
    # the Dagster check on chunks the trust scan quarantined: "warning" publishes the rest, "blocking" publishes nothing
    trust_check: Literal["warning", "blocking"] = "warning"
    trust: CorpusTrustSettings | None = None  # rules file, disabled rules and allow entries for every file
    sign_key: StrictStr | None = None  # an Ed25519 private key (PEM) metadata.json is signed with (build --sign)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    exclude: list[StrictStr] = Field(default_factory=list)  # globs relative to the docs folder; never staged
    package: PackageConfig | None = None  # what a project's lockfile is searched for (versions/lockfiles)
    versions: VersionsConfig | None = None  # none: one unversioned index, as before
    # an index older than this is flagged as stale by the server and in Dagster metadata (output/freshness.py)
    max_age: StrictStr | None = None

    @field_validator("max_age")
    @classmethod
    def _an_age(cls, value: str | None) -> str | None:
        if value is not None:
            from ..output.freshness import parse_max_age

            parse_max_age(value)  # its ValueError says how to write one
        return value

    @model_validator(mode="after")
    def _versions_fit_source(self) -> CorpusConfig:
        kind: SourceKind = "git" if self.source.git else "url" if self.source.url else "path"
        check_versions(self.versions, kind, "ref" in self.source.model_fields_set)
        return self

    @field_validator("exclude")
    @classmethod
    def _valid_globs(cls, value: list[str]) -> list[str]:
        return check_globs(value, "exclude ")

    @field_validator("name")
    @classmethod
    def _partition_key(cls, value: str) -> str:
        if not re.match(r"^[a-z0-9][a-z0-9_-]{0,62}$", value):
            raise ValueError(
                f"{value!r} is not a valid corpus name: use lowercase letters, digits, '-' and '_' "
                "(it becomes the Dagster partition key)"
            )
        return value


class RefreshConfig(BaseModel):
    """A schedule for corpora the sensor cannot watch (local folders, docs websites); off unless enabled."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = False
    cron: StrictStr = "0 3 * * *"
    timezone: StrictStr = "UTC"


class ServedCorpusConfig(BaseModel):
    """One corpus `docs-mcp serve` serves: a corpus above by name (its `out`), or any index by path."""

    model_config = ConfigDict(extra="forbid")
    name: StrictStr
    index: StrictStr | None = None  # default: the `out` folder of the corpus of that name above
    description: StrictStr | None = None  # default: that corpus's description, else the index's own

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$", value):
            raise ValueError(
                f"{value!r} is not a valid corpus name: use letters, digits, '.', '_' and '-' (it prefixes chunk IDs)"
            )
        return value


class ServeConfig(BaseModel):
    """`serve:`: the corpora one `docs-mcp serve` process serves together (default: every corpus above)."""

    model_config = ConfigDict(extra="forbid")
    corpora: list[ServedCorpusConfig] = Field(min_length=1)

    @field_validator("corpora")
    @classmethod
    def _unique(cls, value: list[ServedCorpusConfig]) -> list[ServedCorpusConfig]:
        names = [c.name for c in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"each served corpus needs its own name; repeated: {', '.join(dupes)}")
        return value


class Config(BaseModel):
    """docs-mcp.yaml, loaded: the corpora, how the pipeline watches and refreshes them, and what `serve`
    serves; paths in it resolve against the file's folder."""

    model_config = ConfigDict(extra="forbid")
    corpora: list[CorpusConfig] = Field(min_length=1)
    sensor_interval_seconds: Annotated[int, Field(ge=10)] = 60
    # How long a pipeline run waits for another build of its output (another version of the corpus)
    # before it fails; 0 fails at once, as `docs-mcp build` does.
    lock_wait_seconds: Annotated[int, Field(ge=0)] = 3600
    refresh: RefreshConfig = Field(default_factory=RefreshConfig)
    serve: ServeConfig | None = None
    _path: Path = PrivateAttr(default=Path(CONFIG_FILE))

    @model_validator(mode="after")
    def _unique(self) -> Config:
        names = [c.name for c in self.corpora]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"corpus names must be unique; repeated: {', '.join(dupes)}")
        return self

    @property
    def path(self) -> Path:
        """The docs-mcp.yaml it was loaded from."""
        return self._path

    @property
    def base(self) -> Path:
        return self._path.parent

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.corpora]

    def get(self, name: str) -> CorpusConfig:
        for corpus in self.corpora:
            if corpus.name == name:
                return corpus
        raise DocsMcpError(f"no corpus named {name!r} in {self.path}; known: {', '.join(self.names)}")

    def resolve(self, value: str) -> Path:
        p = Path(os.path.expanduser(value))
        return p if p.is_absolute() else (self.base / p).resolve()

    def out_dir(self, name: str) -> Path:
        """Where the corpus is built: its `out` folder, or for an s3:// `out` the local mirror (objectstore.py)."""
        corpus = self.get(name)
        remote = self.remote(name)
        if remote is not None:
            return self.resolve(corpus.state_dir) if corpus.state_dir else remote.default_state_dir()
        return self.resolve(corpus.out or f"indexes/{name}")

    def signer(self, name: str) -> Any:
        """The corpus's signing key (`sign_key`, relative to this file), loaded; None when it signs nothing."""
        key = self.get(name).sign_key
        if key is None:
            return None
        from ..output.signature import load_private_key

        return load_private_key(self.resolve(key), f"{self.path}: corpus {name!r}: sign_key")

    def trust(self, name: str) -> CorpusTrust | None:
        """The corpus's `trust` settings for the build (trust/policy.py), its rules file resolved."""
        settings = self.get(name).trust
        index = self.names.index(name)
        if settings is None:
            return None
        from ..trust.policy import CorpusTrust

        return CorpusTrust.of(settings, f"{self.path}: corpora[{index}].trust", self.resolve_rules(settings))

    def resolve_rules(self, settings: CorpusTrustSettings) -> Path | None:
        return self.resolve(settings.rules_file) if settings.rules_file else None

    def remote(self, name: str) -> RemoteOutput | None:
        """The s3:// location the corpus is published to, if its `out` is one."""
        from ..output.objectstore import RemoteOutput, is_remote, location

        out = self.get(name).out
        if out is None or not is_remote(location(out)):  # location refuses other URLs (gs://…) in one line
            return None
        return RemoteOutput.parse(out)

    def source_path(self, name: str) -> Path:
        corpus = self.get(name)
        if corpus.source.path is None:
            raise DocsMcpError(f"corpus {name!r} has a {'git' if corpus.source.git else 'url'} source, not a folder")
        return self.resolve(corpus.source.path)

    def served(self) -> list[tuple[str, Path | str, str | None]]:
        """(name, index folder or s3:// URL, description) of each corpus the serve section names;
        every corpus when there is no serve section."""

        def index_of(name: str) -> Path | str:
            corpus = self.get(name)
            return corpus.out.rstrip("/") if self.remote(name) is not None and corpus.out else self.out_dir(name)

        if self.serve is None:
            return [(c.name, index_of(c.name), c.description) for c in self.corpora]
        served: list[tuple[str, Path | str, str | None]] = []
        for entry in self.serve.corpora:
            known = entry.name in self.names
            if entry.index:
                out: Path | str = entry.index.rstrip("/") if "://" in entry.index else self.resolve(entry.index)
            else:
                out = index_of(entry.name)
            served.append((entry.name, out, entry.description or (self.get(entry.name).description if known else None)))
        return served

    def max_age(self, name: str) -> dt.timedelta | None:
        """The corpus's `max_age`, when docs-mcp.yaml has a corpus of that name and gives it one."""
        from ..output.freshness import parse_max_age

        spec = self.get(name).max_age if name in self.names else None
        return parse_max_age(spec) if spec else None

    def web_source(self, name: str) -> Any:
        """A url corpus's crawl settings (sources.web.stage.WebSource), or None for folders and git."""
        source = self.get(name).source
        if source.url is None:
            return None
        from .web.fetch import Politeness
        from .web.stage import WebSource

        politeness = Politeness(
            concurrency=source.concurrency,
            per_host=source.per_host,
            timeout=source.timeout_seconds,
            retries=source.retries,
            max_bytes=source.max_page_bytes,
        )
        return WebSource(source.url, source.path_prefix, source.max_pages, source.llms_txt, politeness)

    def git_source(self, name: str) -> str | None:
        """The repository to clone for a git corpus: a URL as written, a local path resolved."""
        from .git import is_url

        git = self.get(name).source.git
        if git is None:
            return None
        return git if is_url(git) else str(self.resolve(git))


def find_config(explicit: str | Path | None = None) -> Path:
    if explicit:
        return Path(explicit).resolve()
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]).resolve()
    return (Path.cwd() / CONFIG_FILE).resolve()


def load_config(path: str | Path | None = None) -> Config:
    """Load and check the config; every problem is one clear DocsMcpError naming file and field."""
    path = find_config(path)
    try:
        text = read_bytes(path).decode("utf-8")
        raw = yaml.safe_load(text)
        config = Config.model_validate(raw if raw is not None else {})
    except FileNotFoundError:
        raise DocsMcpError(
            f"corpora config {path} not found; create it, or point {CONFIG_ENV} at your docs-mcp.yaml"
        ) from None
    except OSError as exc:
        raise DocsMcpError(
            f"corpora config {path} cannot be read ({exc.strerror}); point {CONFIG_ENV} at a readable docs-mcp.yaml"
        ) from None
    except UnicodeDecodeError as exc:
        raise DocsMcpError(f"{path}: not valid UTF-8 (byte offset {exc.start}); re-save it as UTF-8") from None
    except RecursionError:
        raise DocsMcpError(f"{path}: nested too deeply (hundreds of levels); flatten it") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise DocsMcpError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    except ValidationError as exc:
        problems = [
            f"{path}{_line_of(text, tuple(e['loc']))}: {format_loc(tuple(e['loc'])) or '(top level)'}: "
            f"{e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        ]
        raise DocsMcpError("invalid corpora config:\n" + "\n".join(problems)) from None
    config._path = path
    for n, corpus in enumerate(config.corpora):
        rules = config.resolve_rules(corpus.trust) if corpus.trust else None
        if rules is not None and not rules.is_file():
            line = _line_of(text, ("corpora", n, "trust", "rules_file"))
            raise DocsMcpError(
                f"{path}{line}: corpora[{n}].trust.rules_file: {rules} does not exist (a path is relative to "
                f"{path.parent}); write the rules file there or correct the path"
            )
    for n, entry in enumerate(config.serve.corpora if config.serve else []):
        if entry.index is None and entry.name not in config.names:
            line = _line_of(text, ("serve", "corpora", n))
            raise DocsMcpError(
                f"{path}{line}: serve.corpora[{n}]: no corpus named {entry.name!r} above (known: "
                f"{', '.join(config.names)}); add `index: PATH` to serve another index under that name"
            )
    return config


def _line_of(text: str, loc: tuple[Any, ...]) -> str:
    """':LINE' of a value in the YAML text (yaml.safe_load keeps no marks: the text is composed again)."""
    try:
        node = yaml.compose(text)
        for part in loc:
            if node is None:  # an empty text
                break
            if isinstance(part, int):
                node = node.value[part]
            else:
                node = next(v for k, v in node.value if k.value == part)
        return f":{node.start_mark.line + 1}" if node is not None else ""
    except Exception:  # noqa: BLE001 - a line number is a courtesy; the field path is still given
        return ""
