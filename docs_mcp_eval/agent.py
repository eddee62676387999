"""A scripted agent: what an agent that follows the tools' own hints does, measured in tool calls and
characters read, so a change to answer sizes is measured rather than guessed.

Per case it searches with the case's query and filters, reads the hits in rank order with
get_doc until it reads a relevant chunk, pages on with next_cursor when a page is used up, and on
zero results refines with a filter value the answer's hint suggests (as the hint text tells an
agent to). It never rewords the query: a real agent could, so the rounds here are an upper bound
for the same reading strategy. Every tool answer counts towards the characters read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .cases import Case

DEFAULT_ROUNDS = 6


@dataclass(frozen=True)
class AgentOptions:
    rounds: int = DEFAULT_ROUNDS  # tool calls allowed per case
    max_chars: int | None = None  # passed to search_docs and get_doc; None: the server's defaults
    context: int = 0  # get_doc context, as an agent that wants the surrounding sections would raise it


@dataclass
class AgentRun:
    rounds: int | None = None  # tool calls until get_doc returned a relevant chunk; None: not within the limit
    chars_read: int = 0  # characters of every tool answer the agent received
    calls: list[dict[str, Any]] = field(default_factory=list)  # tool, arguments, chars of the answer
    error: str | None = None


def bare_id(chunk_id: str, relevant: list[str]) -> str:
    """The chunk ID a suite names: with several corpora served, hits carry a `corpus:` prefix."""
    if chunk_id in relevant:
        return chunk_id
    _, sep, rest = chunk_id.partition(":")
    return rest if sep and "#" not in chunk_id.split(":", 1)[0] else chunk_id


async def run_agent(client: Any, search: str, get_doc: str, case: Case, options: AgentOptions) -> AgentRun:
    run = AgentRun()
    filters = dict(case.filters)
    tried: set[tuple[str, str]] = set(filters.items())
    budget = {"max_chars": options.max_chars} if options.max_chars else {}
    queue: list[str] = []
    read: set[str] = set()
    cursor: str | None = None
    more = True  # another search page may have unread hits

    async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        result = await client.call_tool(tool, arguments)
        text = result.content[0].text if result.content else ""
        run.chars_read += len(text)
        run.calls.append({"tool": tool, "arguments": arguments, "chars": len(text), "error": bool(result.is_error)})
        return bool(result.is_error), text

    while len(run.calls) < options.rounds:
        if not queue:
            if not more:
                return run  # every hit read, no page left: a real agent would reword; this one stops
            arguments = {
                "query": case.query,
                "limit": case.limit,
                **filters,
                **budget,
                **({"cursor": cursor} if cursor else {}),
            }
            failed, text = await call(search, arguments)
            if failed:
                run.error = text[:200]
                return run
            page = json.loads(text)
            hits = [h["chunk_id"] for h in page.get("hits") or []]
            if not hits and cursor is None:
                suggested = ((page.get("hint") or {}).get("suggested_filters") or {}).items()
                refine = next(((k, v) for k, values in suggested for v in values if (k, v) not in tried), None)
                if refine is None:
                    return run  # the hint has nothing to try: a real agent would reword; this one stops
                filters[refine[0]] = refine[1]
                tried.add(refine)
                continue
            queue = [h for h in hits if h not in read]
            cursor = page.get("next_cursor")
            more = cursor is not None
            continue
        chunk_id = queue.pop(0)
        read.add(chunk_id)
        failed, _ = await call(
            get_doc, {"chunk_id": chunk_id, **({"context": options.context} if options.context else {}), **budget}
        )
        if not failed and bare_id(chunk_id, case.relevant) in case.relevant:
            run.rounds = len(run.calls)
            return run
    return run
