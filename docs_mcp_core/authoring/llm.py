"""Optional LLM help for `docs-mcp fix --llm`: descriptions and server instructions from a corpus summary.

Any OpenAI-compatible chat endpoint works, with the embedding provider's conventions: key
from OPENAI_API_KEY, base URL from --llm-base-url (or OPENAI_BASE_URL). Only a bounded
summary is sent (folder names, headings, a few opening lines: fix.corpus_summary). The
model only fills what the offline pass left empty, so a second run still proposes nothing.

The answer is untrusted input that ends up in manifests, metadata.json and every agent's
tool descriptions: it is read within a total deadline and a size bound, parsed here (not by
the client library, so that a broken answer is one error line), checked against a schema,
and each text is written only if it is printable, within its length and not an attempt to
override an agent's instructions; a refused text is named in a note, with the reason.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import unicodedata
from typing import Any

from pydantic import BaseModel, StrictStr, ValidationError

from ..errors import DocsMcpError
from ..http_deadline import AnswerTooLargeError, DeadlineTransport
from .fix import FixReport, _dump

MAX_DESCRIPTION = 300
MAX_INSTRUCTIONS = 1_500
MAX_ANSWER_BYTES = 1_000_000  # a whole chat answer; this one is a few KB
DEFAULT_TIMEOUT = 120  # seconds one request may take in all
MAX_RETRIES = 2

SYSTEM = (
    "You write configuration for a documentation search server used by AI coding agents. "
    "Given a summary of a documentation corpus, reply with one JSON object only: "
    '{"taxonomy": {"<key>": "<one-sentence description of what the key means and its values>"}, '
    '"mcpServerInstructions": "<3-6 sentences telling an agent what these docs cover and how to search them>"}. '
    "Describe only the taxonomy keys you are given."
)
# Text that addresses the agent reading it over its own instructions: what a configuration
# describing docs never needs to say, and what prompt injection does.
_OVERRIDE = re.compile(
    r"\b(?:system\s+(?:override|prompt|message)|(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?"
    r"(?:previous|prior|above|earlier|other)\s+(?:instructions|rules|messages)|you\s+are\s+now\b|"
    r"developer\s+mode|jailbreak)|<\|[a-z_]+\|>|\[/?INST\]|</?system>",
    re.IGNORECASE,
)
_UNPRINTABLE = {"Cc", "Cf", "Co", "Cs", "Cn"}  # controls, format (bidi, zero-width), private use, unassigned


class _Message(BaseModel):
    content: StrictStr | None = None


class _Choice(BaseModel):
    message: _Message


class _ChatAnswer(BaseModel):
    """The part of a chat completion we read; anything else in it is ignored."""

    choices: list[_Choice]


class _Suggestions(BaseModel):
    """What the model is asked to reply with."""

    taxonomy: dict[StrictStr, StrictStr] | None = None
    instructions: StrictStr | None = None

    @classmethod
    def read(cls, data: dict[str, Any]) -> _Suggestions:
        return cls.model_validate({"taxonomy": data.get("taxonomy"), "instructions": data.get("mcpServerInstructions")})


def _failed(what: str) -> DocsMcpError:
    return DocsMcpError(f"the --llm answer {what}; try another --llm-model, or run without --llm")


def _client(base_url: str | None, timeout: float) -> Any:
    import httpx2
    from openai import AsyncOpenAI

    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        raise DocsMcpError("--llm needs an API key in OPENAI_API_KEY (any value for a local server that ignores it)")
    transport = DeadlineTransport(timeout, max_bytes=MAX_ANSWER_BYTES)
    return AsyncOpenAI(
        api_key=key,
        base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
        max_retries=MAX_RETRIES,
        timeout=timeout,
        http_client=httpx2.AsyncClient(transport=transport, timeout=timeout, follow_redirects=True),
    )


async def _ask(client: Any, model: str, messages: list[dict[str, str]]) -> bytes:
    """The raw answer body: parsed here, so that a broken answer is an error line, not a traceback."""
    try:
        raw = await client.chat.completions.with_raw_response.create(model=model, temperature=0, messages=messages)
        return bytes(raw.http_response.content)
    finally:
        await client.close()


def answer_content(body: bytes) -> str:
    """The model's text from a chat completion body, or one error naming what is wrong with it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _failed(f"is not UTF-8 (byte offset {exc.start})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise _failed("is nested too deeply to be a chat completion") from None
    except ValueError as exc:
        raise _failed(f"is not JSON ({str(exc).splitlines()[0][:120]})") from None
    try:
        answer = _ChatAnswer.model_validate(data)
    except (ValidationError, RecursionError):
        raise _failed('is not a chat completion (no "choices" list of messages)') from None
    if not answer.choices:
        raise _failed('has no choices ("choices" is empty)')
    return answer.choices[0].message.content or ""


def _parse(content: str) -> dict[str, Any]:
    text = content.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        raise DocsMcpError(
            "the --llm model did not answer with a JSON object; try another --llm-model, or run without --llm"
        )
    return data


def checked_text(text: str, limit: int) -> tuple[str | None, str | None]:
    """(the text to write, None) or (None, why it is refused): one line, printable, within `limit`."""
    clean = " ".join(text.split())  # line breaks, tabs and runs of spaces become one space
    bad = next((c for c in clean if unicodedata.category(c) in _UNPRINTABLE), None)
    if bad is not None:
        return (
            None,
            f"it contains U+{ord(bad):04X} ({unicodedata.name(bad, 'a control character')}): printable text only",
        )
    if not clean:
        return None, "it is empty"
    if len(clean) > limit:
        return None, f"it is {len(clean)} characters long, over the {limit} allowed"
    if override := _OVERRIDE.search(clean):
        return None, f"it reads as an instruction to override an agent's own ({override.group(0)!r})"
    return clean, None


def _suggestions(base_url: str | None, model: str, timeout: float, messages: list[dict[str, str]]) -> _Suggestions:
    """The model's answer, checked against the schema; every way it can fail is one DocsMcpError."""
    import openai

    try:
        body = asyncio.run(_ask(_client(base_url, timeout), model, messages))
    except AnswerTooLargeError as exc:
        raise _failed(str(exc)) from None
    except openai.APITimeoutError:
        raise DocsMcpError(
            f"--llm: no complete answer within {timeout:g} s, {MAX_RETRIES + 1} time(s); raise --llm-timeout "
            "if the model is only slow, check --llm-base-url, or run without --llm"
        ) from None
    except openai.OpenAIError as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, Exception) and str(exc.__cause__) else exc
        raise DocsMcpError(
            f"--llm request failed ({type(cause).__name__}: {str(cause)[:300]}); check --llm-base-url, "
            "--llm-model and OPENAI_API_KEY, or run without --llm"
        ) from None
    try:
        return _Suggestions.read(_parse(answer_content(body)))
    except ValidationError as exc:
        where = ".".join(str(p) for p in exc.errors()[0]["loc"]).replace("instructions", "mcpServerInstructions")
        raise _failed(f"has a {where} that is not text") from None


def improve_with_llm(report: FixReport, *, base_url: str | None, model: str, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Fill empty taxonomy descriptions and mcpServerInstructions of the root proposal from the model's answer.

    What is written is listed, quoted, in the proposal's reasons; what is refused, in the notes.
    """
    root = next((p for p in report.proposals if "/" not in p.path), None)
    if root is None:
        return
    manifest = json.loads(root.new)
    keys = sorted(manifest.get("taxonomy") or {})
    user = json.dumps(
        {"taxonomy_keys": keys, "metadata": manifest.get("metadata", {}), "corpus": report.summary}, ensure_ascii=False
    )
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    suggested = _suggestions(base_url, model, timeout, messages)
    written: list[str] = []
    described = suggested.taxonomy or {}
    for key in keys:
        if key not in described:
            continue
        text, why = checked_text(described[key], MAX_DESCRIPTION)
        field = f"taxonomy.{key}.description"
        if text is None:
            report.notes.append(f"--llm: {model}'s {field} was not written: {why}")
            continue
        manifest["taxonomy"][key] = {**manifest["taxonomy"][key], "description": text}
        written.append(f"{field} = {json.dumps(text, ensure_ascii=False)}")
    if suggested.instructions is not None and not manifest.get("mcpServerInstructions"):
        text, why = checked_text(suggested.instructions, MAX_INSTRUCTIONS)
        if text is None:
            report.notes.append(f"--llm: {model}'s mcpServerInstructions were not written: {why}")
        else:
            manifest["mcpServerInstructions"] = text
            written.append(f"mcpServerInstructions = {json.dumps(text, ensure_ascii=False)}")
    if written:
        root.new = _dump(manifest)
        root.reasons.append(
            f"written by {model} from a {len(user)}-character corpus summary (model output: review it): "
            + "; ".join(written)
        )
