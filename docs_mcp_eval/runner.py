"""Run a suite against any MCP docs server started as a command, over stdio with the SDK client."""

from __future__ import annotations

import datetime as dt
import json
import os
import shlex
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from docs_mcp_core import __version__
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.progress import NullReporter, Reporter

from . import metrics
from .agent import AgentOptions, bare_id, run_agent
from .cases import Case, Suite

CALL_TIMEOUT = 60.0


@dataclass
class CaseResult:
    name: str
    category: str
    query: str
    relevant: list[str]
    filters: dict[str, str]
    ranked: list[str] = field(default_factory=list)
    rank: int | None = None
    reciprocal_rank: float = 0.0
    ndcg: float = 0.0
    recall: float = 0.0
    rounds: int | None = None  # page on which a relevant chunk first appeared, within maxRounds
    facet_precision: float | None = None
    search_ms: float | None = None
    get_doc_ms: float | None = None
    error: str | None = None
    agent_rounds: int | None = None  # --agent: tool calls until the scripted agent read a relevant chunk
    chars_read: int | None = None  # --agent: characters of every answer it received on the way
    agent_calls: list[str] | None = None  # --agent: its calls, e.g. "search_docs", "get_doc README.md#retries"
    # What an agent reads, from search_docs at its default limit (metrics.chars_to_answer):
    answer_rank: int | None = None  # rank of the first relevant hit in that answer; None: not in it
    chars_to_answer: int | None = None  # snippets above it plus its chars
    follow_up: str | None = None
    follow_up_rank: int | None = None  # the same, in the follow-up's answer (searched only after a miss)
    found_within_two: bool | None = None  # None: the case has no follow-up
    chars_within_two: int | None = None  # after a miss: the first answer's snippets plus the follow-up's reading


@dataclass
class RunResult:
    suite: str
    server_command: list[str]
    started_at: str
    cases: list[CaseResult] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    build_command: list[str] | None = None
    build_seconds: float | None = None
    peak_rss_mb: float | None = None
    warmup: int = 0
    aborted: str | None = None
    search_ms: list[float] = field(default_factory=list)
    get_doc_ms: list[float] = field(default_factory=list)
    agent: dict[str, Any] | None = None  # the scripted agent's options, when it ran

    def summary(self) -> dict[str, Any]:
        return {**self._retrieval(), **self._reading(), **(self._agent() if self.agent is not None else {})}

    def _reading(self) -> dict[str, Any]:
        """Characters over the answered cases only (a miss is counted, not averaged in as zero);
        the two-search shares over the cases that have a follow-up."""
        answered = [c for c in self.cases if c.answer_rank is not None]
        follow = [c for c in self.cases if c.found_within_two is not None]
        return {
            "answered_cases": len(answered),
            "unanswered_cases": sum(1 for c in self.cases if c.answer_rank is None and not c.error),
            "chars_to_answer_mean": metrics.mean(c.chars_to_answer for c in answered),
            "chars_to_answer_median": metrics.median(c.chars_to_answer for c in answered),
            "follow_up_cases": len(follow),
            "found_first_search": metrics.mean(1.0 if c.answer_rank is not None else 0.0 for c in follow),
            "found_within_two_searches": metrics.mean(1.0 if c.found_within_two else 0.0 for c in follow),
            "chars_within_two_mean": metrics.mean(c.chars_within_two for c in follow if c.found_within_two),
        }

    def _agent(self) -> dict[str, Any]:
        """Rounds over the cases the agent solved; characters read over every case (a miss reads too)."""
        rounds = [c.agent_rounds for c in self.cases if c.agent_rounds is not None]
        chars = [c.chars_read for c in self.cases if c.chars_read is not None]
        return {
            "agent_found": metrics.mean(1.0 if c.agent_rounds else 0.0 for c in self.cases),
            "agent_rounds_mean": metrics.mean(rounds),
            "agent_rounds_median": metrics.median(rounds),
            "chars_read_mean": metrics.mean(chars),
            "chars_read_median": metrics.median(chars),
        }

    def _retrieval(self) -> dict[str, Any]:
        return {
            "cases": len(self.cases),
            "not_run": len(self.not_run),
            "errors": sum(1 for c in self.cases if c.error),
            "mrr@5": metrics.mean(c.reciprocal_rank for c in self.cases),
            "ndcg@5": metrics.mean(c.ndcg for c in self.cases),
            "recall@5": metrics.mean(c.recall for c in self.cases),
            "avg_rounds": metrics.mean(c.rounds for c in self.cases),
            "found_within_rounds": metrics.mean(1.0 if c.rounds else 0.0 for c in self.cases),
            "facet_precision": metrics.mean(c.facet_precision for c in self.cases),
            "search_p50_ms": metrics.percentile(self.search_ms, 50),
            "search_p95_ms": metrics.percentile(self.search_ms, 95),
            "get_doc_p50_ms": metrics.percentile(self.get_doc_ms, 50),
            "peak_rss_mb": self.peak_rss_mb,
            "build_seconds": self.build_seconds,
        }

    def by_category(self) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[CaseResult]] = {}
        for case in self.cases:
            groups.setdefault(case.category, []).append(case)
        return {
            name: {
                "cases": len(items),
                "mrr@5": metrics.mean(c.reciprocal_rank for c in items),
                "ndcg@5": metrics.mean(c.ndcg for c in items),
                "recall@5": metrics.mean(c.recall for c in items),
            }
            for name, items in sorted(groups.items())
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "harness": f"docs-mcp {__version__}",
            "suite": self.suite,
            "server_command": self.server_command,
            "build_command": self.build_command,
            "started_at": self.started_at,
            "warmup": self.warmup,
            "aborted": self.aborted,
            "summary": self.summary(),
            "by_category": self.by_category(),
            "cases": [asdict(c) for c in self.cases],
            "not_run": self.not_run,
            **({"agent": self.agent} if self.agent is not None else {}),
        }


def split_command(command: str | list[str]) -> list[str]:
    parts = shlex.split(command) if isinstance(command, str) else list(command)
    if not parts:
        raise DocsMcpError("the server command is empty")
    return parts


def run_build(command: list[str]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise DocsMcpError(f"the build command failed with exit code {proc.returncode}:\n" + "\n".join(tail))
    return time.perf_counter() - started


# -- process tree, for peak RSS ---------------------------------------------------------------
def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(stat.parent.name))
    return tree


def descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def tree_peak_rss_mb(pids: set[int]) -> float | None:
    """Sum of each process's own peak (VmHWM): an upper bound for the tree's peak."""
    total, seen = 0, False
    for pid in pids | {d for p in pids for d in descendants(p)}:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
                    seen = True
        except OSError:
            continue
    return round(total / 1024, 1) if seen else None


# -- running ----------------------------------------------------------------------------------
def _tool(names: list[str], suffix: str) -> str:
    for name in sorted(names, key=len):
        if name.endswith(suffix):  # search_docs, or a prefixed name such as acme_search_docs
            return name
    raise DocsMcpError(f"the server has no {suffix} tool (it offers: {', '.join(names) or 'none'})")


def _payload(result: Any) -> dict[str, Any]:
    text = result.content[0].text if result.content else ""
    if result.is_error:
        raise ValueError(text or "the tool returned an error")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError(f"search_docs did not return JSON: {text[:120]!r}") from None
    return data if isinstance(data, dict) else {"hits": data}


async def _run_case(client: Any, search: str, get_doc: str, case: Case, result: RunResult) -> CaseResult:
    out = CaseResult(case.name, case.category, case.query, case.relevant, case.filters)
    arguments: dict[str, Any] = {"query": case.query, "limit": case.limit, **case.filters}
    cursor = None
    for page in range(1, case.max_rounds + 1):
        started = time.perf_counter()
        response = await client.call_tool(search, {**arguments, **({"cursor": cursor} if cursor else {})})
        elapsed = (time.perf_counter() - started) * 1000
        try:
            data = _payload(response)
        except ValueError as exc:
            out.error = str(exc)
            return out
        hits = data.get("hits") or []
        ids = [bare_id(str(h.get("chunk_id")), case.relevant) for h in hits]  # a several-corpora server prefixes IDs
        if page == 1:
            out.search_ms = elapsed
            result.search_ms.append(elapsed)
            out.ranked = ids
            out.rank = metrics.first_rank(ids, case.relevant)
            out.reciprocal_rank = metrics.reciprocal_rank(ids, case.relevant)
            out.ndcg = metrics.ndcg(ids, case.relevant)
            out.recall = metrics.recall(ids, case.relevant)
            out.facet_precision = metrics.facet_precision(hits, case.filters)
            if ids:
                started = time.perf_counter()
                await client.call_tool(get_doc, {"chunk_id": hits[0].get("chunk_id")})
                out.get_doc_ms = (time.perf_counter() - started) * 1000
                result.get_doc_ms.append(out.get_doc_ms)
        if any(i in case.relevant for i in ids):
            out.rounds = page
            break
        cursor = data.get("next_cursor")
        if not cursor:
            break
    try:
        await _reading(client, search, case, out)
    except ValueError as exc:
        out.error = str(exc)
    return out


async def _answer(client: Any, search: str, query: str, case: Case) -> tuple[list[dict[str, Any]], list[str]]:
    """search_docs as an agent calls it: the query and the case's filters, no limit (the server's default)."""
    hits = _payload(await client.call_tool(search, {"query": query, **case.filters})).get("hits") or []
    return hits, [bare_id(str(h.get("chunk_id")), case.relevant) for h in hits]


async def _reading(client: Any, search: str, case: Case, out: CaseResult) -> None:
    """Characters to the answer in the first search; with a follow-up, whether two searches find it.

    Runs after the measured searches, so its repeats of a query never warm a measured one."""
    first_hits, first_ids = await _answer(client, search, case.query, case)
    out.answer_rank = metrics.first_rank(first_ids, case.relevant, k=len(first_ids))
    out.chars_to_answer = metrics.chars_to_answer(first_ids, first_hits, case.relevant)
    if case.follow_up is None:
        return
    out.follow_up = case.follow_up
    if out.answer_rank is not None:  # answered: the agent has no reason to search again
        out.found_within_two, out.chars_within_two = True, out.chars_to_answer
        return
    hits, ids = await _answer(client, search, case.follow_up, case)
    out.follow_up_rank = metrics.first_rank(ids, case.relevant, k=len(ids))
    out.found_within_two = out.follow_up_rank is not None
    then = metrics.chars_to_answer(ids, hits, case.relevant)
    out.chars_within_two = None if then is None else metrics.snippet_chars(first_hits) + then


async def run_suite(
    command: list[str],
    suite: Suite,
    *,
    warmup: int = 3,
    reporter: Reporter | None = None,
    timeout: float = CALL_TIMEOUT,
    agent: AgentOptions | None = None,
) -> RunResult:
    """Every case, in order (with `agent`, the scripted agent of agent.py plays each case too);
    a server that dies or hangs ends the run with a partial result."""
    with tempfile.TemporaryFile("w+") as server_log:
        result = await _run(command, suite, warmup, reporter or NullReporter(), timeout, server_log, agent)
        if result.aborted:
            server_log.seek(0)
            tail = [line.rstrip() for line in server_log.read().splitlines() if line.strip()][-5:]
            if tail:
                result.aborted += "\nthe server's last words on stderr:\n  " + "\n  ".join(tail)
    return result


async def _run(
    command: list[str],
    suite: Suite,
    warmup: int,
    reporter: Reporter,
    timeout: float,
    server_log: TextIO,
    agent: AgentOptions | None = None,
) -> RunResult:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    result = RunResult(
        suite.name,
        command,
        dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        warmup=warmup,
        agent=asdict(agent) if agent else None,
    )
    before = descendants(os.getpid())
    server_tree: set[int] = set()
    pending = list(suite.cases)
    try:
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        async with Client(stdio_client(params, errlog=server_log), read_timeout_seconds=timeout) as client:
            server_tree = descendants(os.getpid()) - before
            names = [t.name for t in (await client.list_tools()).tools]
            search, get_doc = _tool(names, "search_docs"), _tool(names, "get_doc")
            for case in suite.cases[:warmup]:
                await client.call_tool(search, {"query": case.query, "limit": case.limit, **case.filters})
            for done, case in enumerate(suite.cases, start=1):
                pending = suite.cases[done:]
                try:
                    outcome = await _run_case(client, search, get_doc, case, result)
                    if agent is not None:
                        played = await run_agent(client, search, get_doc, case, agent)
                        outcome.agent_rounds, outcome.chars_read = played.rounds, played.chars_read
                        outcome.agent_calls = [
                            f"{c['tool']} {c['arguments'].get('chunk_id', '')}".strip() for c in played.calls
                        ]
                    result.cases.append(outcome)
                except Exception as exc:  # noqa: BLE001 - the server stopped answering: keep what we have
                    result.cases.append(
                        CaseResult(
                            case.name,
                            case.category,
                            case.query,
                            case.relevant,
                            case.filters,
                            error=f"{type(exc).__name__}: {exc}",
                        )
                    )
                    result.aborted = (
                        f"the server stopped answering during case '{case.name}' "
                        f"({done} of {len(suite.cases)}): {type(exc).__name__}: {exc}"
                    )
                    break
                reporter.progress("eval", done, len(suite.cases))
            result.peak_rss_mb = tree_peak_rss_mb(server_tree)
    except Exception as exc:  # noqa: BLE001 - could not start, or the connection broke while closing
        if result.aborted is None:
            result.aborted = f"could not run the suite against `{shlex.join(command)}`: {type(exc).__name__}: {exc}"
    result.not_run = [c.name for c in pending]
    return result
