"""Prompt templates (`*.template.md`, `*.template.yaml`) discovered at build into metadata.json."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from ..diagnostics import Diagnostic, error
from .manifest import format_loc
from .markdown import split_frontmatter
from .walk import read_text

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class PromptArgument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: StrictStr = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    title: StrictStr | None = None
    description: StrictStr | None = None
    required: StrictBool = False


class PromptMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: StrictStr = Field(min_length=1)


class PromptFrontmatter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: StrictStr | None = None
    title: StrictStr | None = None
    description: StrictStr | None = None
    arguments: list[PromptArgument] = Field(default_factory=list)


class PromptFile(PromptFrontmatter):
    messages: list[PromptMessage] = Field(min_length=1)


def _default_name(relpath: str) -> str:
    base = relpath.rsplit("/", 1)[-1]
    for suffix in (".template.md", ".template.yaml", ".template.yml"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _errors(relpath: str, exc: ValidationError, line: int = 1) -> list[Diagnostic]:
    return [
        error(
            relpath,
            line,
            f"prompt {format_loc(tuple(e['loc']))}: {e['msg'].removeprefix('Value error, ')}",
            "prompt-invalid",
        )
        for e in exc.errors()
    ]


def load_prompt(root: Path, relpath: str) -> tuple[dict[str, Any] | None, list[Diagnostic]]:
    import yaml  # a corpus without prompt templates never needs it

    text, _, problem = read_text(root, relpath)  # inside the docs folder only, newlines normalized
    if text is None:
        return None, [problem] if problem else []
    try:
        if relpath.endswith(".template.md"):
            doc = split_frontmatter(text)
            raw = yaml.safe_load(doc.frontmatter) if doc.frontmatter else {}
            meta = PromptFrontmatter.model_validate(raw or {})
            body = doc.body.strip()
            if not body:
                return None, [
                    error(
                        relpath,
                        doc.body_line + 1,
                        "prompt template has no body; write the message after the frontmatter",
                        "prompt-invalid",
                    )
                ]
            messages = [{"role": "user", "content": body}]
        else:
            raw = yaml.safe_load(text)
            meta = PromptFile.model_validate(raw if isinstance(raw, dict) else {"messages": raw})
            messages = [m.model_dump() for m in meta.messages]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return None, [
            error(
                relpath,
                (mark.line + 1) if mark else 1,
                f"invalid YAML: {getattr(exc, 'problem', exc)}",
                "prompt-invalid",
            )
        ]
    except ValidationError as exc:
        return None, _errors(relpath, exc)
    name = meta.name or _default_name(relpath)
    if not _NAME.match(name):
        return None, [
            error(relpath, 1, f"prompt name {name!r} may use only letters, digits, '_', '-' and '.'", "prompt-invalid")
        ]
    prompt: dict[str, Any] = {"name": name}
    if meta.title:
        prompt["title"] = meta.title
    if meta.description:
        prompt["description"] = meta.description
    prompt["arguments"] = [a.model_dump(exclude_none=True) for a in meta.arguments]
    prompt["messages"] = messages
    prompt["source"] = relpath
    return prompt, []


def load_prompts(root: Path, relpaths: list[str]) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    prompts: list[dict[str, Any]] = []
    diags: list[Diagnostic] = []
    seen: dict[str, str] = {}
    for rel in relpaths:
        prompt, problems = load_prompt(root, rel)
        diags.extend(problems)
        if prompt is None:
            continue
        if prompt["name"] in seen:
            diags.append(
                error(
                    rel,
                    1,
                    f"prompt name '{prompt['name']}' is already used by {seen[prompt['name']]}; set a unique 'name'",
                    "prompt-duplicate",
                )
            )
            continue
        seen[prompt["name"]] = rel
        prompts.append(prompt)
    return sorted(prompts, key=lambda p: p["name"]), diags
