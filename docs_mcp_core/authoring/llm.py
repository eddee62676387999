"""Optional LLM help for `docs-mcp fix --llm`: descriptions and server instructions from a corpus summary.

Any OpenAI-compatible chat endpoint works, with the embedding provider's conventions: key
from OPENAI_API_KEY, base URL from --llm-base-url (or OPENAI_BASE_URL). Only a bounded
summary is sent (folder names, headings, a few opening lines: fix.corpus_summary). The
model only fills what the offline pass left empty, so a second run still proposes nothing.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..errors import DocsMcpError
from .fix import FixReport, _dump

MAX_DESCRIPTION = 300
MAX_INSTRUCTIONS = 1_500

SYSTEM = (
    "You write configuration for a documentation search server used by AI coding agents. "
    "Given a summary of a documentation corpus, reply with one JSON object only: "
    '{"taxonomy": {"<key>": "<one-sentence description of what the key means and its values>"}, '
    '"mcpServerInstructions": "<3-6 sentences telling an agent what these docs cover and how to search them>"}. '
    "Describe only the taxonomy keys you are given."
)


def _client(base_url: str | None) -> Any:
    from openai import OpenAI

    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        raise DocsMcpError("--llm needs an API key in OPENAI_API_KEY (any value for a local server that ignores it)")
    return OpenAI(
        api_key=key, base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None, max_retries=2, timeout=120
    )


def _parse(content: str) -> dict[str, Any]:
    text = content.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    try:
        data = json.loads(text[start : end + 1]) if start >= 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise DocsMcpError(
            "the --llm model did not answer with a JSON object; try another --llm-model, or run without --llm"
        )
    return data


def improve_with_llm(report: FixReport, *, base_url: str | None, model: str) -> None:
    """Fill empty taxonomy descriptions and mcpServerInstructions of the root proposal from the model's answer."""
    import openai

    root = next((p for p in report.proposals if "/" not in p.path), None)
    if root is None:
        return
    manifest = json.loads(root.new)
    keys = sorted(manifest.get("taxonomy") or {})
    user = json.dumps(
        {"taxonomy_keys": keys, "metadata": manifest.get("metadata", {}), "corpus": report.summary}, ensure_ascii=False
    )
    try:
        reply = _client(base_url).chat.completions.create(
            model=model,
            temperature=0,
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
        )
    except openai.OpenAIError as exc:
        raise DocsMcpError(
            f"--llm request failed ({type(exc).__name__}: {exc}); check --llm-base-url, "
            "--llm-model and OPENAI_API_KEY, or run without --llm"
        ) from None
    data = _parse(reply.choices[0].message.content or "")
    described = data.get("taxonomy") if isinstance(data.get("taxonomy"), dict) else {}
    changed = False
    for key in keys:
        text = described.get(key)
        if isinstance(text, str) and text.strip():
            manifest["taxonomy"][key] = {**manifest["taxonomy"][key], "description": text.strip()[:MAX_DESCRIPTION]}
            changed = True
    instructions = data.get("mcpServerInstructions")
    if isinstance(instructions, str) and instructions.strip() and not manifest.get("mcpServerInstructions"):
        manifest["mcpServerInstructions"] = instructions.strip()[:MAX_INSTRUCTIONS]
        changed = True
    if changed:
        root.new = _dump(manifest)
        root.reasons.append(
            f"taxonomy descriptions and mcpServerInstructions written by {model} from a "
            f"{len(user)}-character corpus summary"
        )
