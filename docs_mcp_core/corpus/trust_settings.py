"""The `trust` field of `.docs-mcp.json`: a team's rules file, rules it disables, and findings it allows.

Every entry needs a reason: a page let through or a rule turned off is a decision someone
reviews. Rule IDs are checked against the rules in trust/policy.py, which knows them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictStr, field_validator, model_validator

from .globs import GlobError, compile_glob


def _reason(value: str) -> str:
    if not value.strip():
        raise ValueError("'reason' must say why (it is shown with the finding it allows)")
    return value.strip()


class TrustAllow(BaseModel):
    """Findings to let through: of `rule` (any rule when absent) in files matching `path` (any file when absent)."""

    model_config = ConfigDict(extra="forbid")

    path: StrictStr | None = None  # a glob relative to the manifest's folder, as in `overrides`
    rule: StrictStr | None = None
    reason: StrictStr

    _why = field_validator("reason")(classmethod(lambda cls, v: _reason(v)))

    @field_validator("path")
    @classmethod
    def _valid_glob(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                compile_glob(value)
            except GlobError as exc:
                raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _something(self) -> TrustAllow:
        if self.path is None and self.rule is None:
            raise ValueError(
                "an allow entry needs 'path', 'rule' or both (to turn a rule off everywhere, use 'disable')"
            )
        return self


class TrustDisable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule: StrictStr
    reason: StrictStr

    _why = field_validator("reason")(classmethod(lambda cls, v: _reason(v)))


class TrustSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules_file: StrictStr | None = None  # YAML or JSON, relative to the manifest's folder
    disable: list[TrustDisable] = []
    allow: list[TrustAllow] = []

    @field_validator("rules_file")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or value.startswith("/") or "\\" in value):
            raise ValueError("must be a path relative to the manifest's folder, with '/' between folders")
        return value


class CorpusTrustSettings(BaseModel):
    """A corpus's `trust` in docs-mcp.yaml: the same settings for every file of the corpus (a manifest adds its
    own). `rules_file` is relative to docs-mcp.yaml's folder, `allow` paths to the docs folder."""

    model_config = ConfigDict(extra="forbid")

    rules_file: StrictStr | None = None
    disable: list[TrustDisable] = []
    allow: list[TrustAllow] = []

    @field_validator("rules_file")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must name a rules file (YAML or JSON), relative to docs-mcp.yaml's folder")
        return value
