"""Eval cases: the JSON format shared with other harnesses for this design."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from docs_mcp_core.corpus.manifest import format_loc
from docs_mcp_core.errors import DocsMcpError


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: StrictStr
    category: StrictStr = "uncategorized"
    query: StrictStr = Field(min_length=1)
    expected: StrictStr = Field(alias="expectedChunkId", min_length=1)
    also_relevant: list[StrictStr] = Field(default_factory=list, alias="alsoRelevant")
    filters: dict[StrictStr, StrictStr] = Field(default_factory=dict)
    limit: int = Field(default=5, ge=1, le=50)
    max_rounds: int = Field(default=3, ge=1, le=20, alias="maxRounds")
    # What an agent would search next after a first answer without the right chunk.
    follow_up: StrictStr | None = Field(default=None, alias="followUp", min_length=1)

    @property
    def relevant(self) -> list[str]:
        return [self.expected, *(r for r in self.also_relevant if r != self.expected)]


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: StrictStr = "suite"
    description: StrictStr = ""
    cases: list[Case] = Field(min_length=1)


def load_suite(path: Path) -> Suite:
    """A suite file: {"cases": [...]} (with optional name, description) or a bare list of cases."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DocsMcpError(f"cases file {path} not found") from None
    except json.JSONDecodeError as exc:
        raise DocsMcpError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if isinstance(raw, list):
        raw = {"name": path.stem, "cases": raw}
    try:
        suite = Suite.model_validate(raw)
    except ValidationError as exc:
        problems = [f"{path}: {format_loc(tuple(e['loc']))}: {e['msg']}" for e in exc.errors()[:10]]
        raise DocsMcpError("invalid cases file:\n" + "\n".join(problems)) from None
    names = [c.name for c in suite.cases]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise DocsMcpError(f"{path}: case names must be unique; repeated: {', '.join(dupes)}")
    return suite
