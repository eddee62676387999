"""The servers a serving benchmark starts, and what their processes hold in memory.

A server is this checkout's `docs-mcp serve`, another checkout's (its docs_mcp_core on PYTHONPATH,
with this environment's packages), or any command that serves an index over stdio (`--reference
CMD`, e.g. the TypeScript reference implementation), with `{index}` in CMD standing for the index.
Memory is read from /proc: peak RSS (VmHWM), RSS, and PSS from smaps_rollup (each shared page
counted once across the processes that map it), summed over the server and its child processes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters, types

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Server:
    """How to start one kind of server on an index."""

    name: str
    command: tuple[str, ...]  # with "{index}" where the index folder goes
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = REPO
    indexes: Mapping[str, Path] | None = None  # its own index per mode ("text", "hybrid"), when not ours
    shared: Path | None = None  # `serve --shared`: the folder of its residents' sockets and logs

    def index_for(self, mode: str, ours: Path) -> Path | None:
        """The index this server serves for a mode, given ours; None when it has none for that mode."""
        return ours if self.indexes is None else self.indexes.get(mode)

    def params(self, index: Path) -> StdioServerParameters:
        args = [part.replace("{index}", str(index)) for part in self.command]
        return StdioServerParameters(command=args[0], args=args[1:], env=dict(self.env), cwd=str(self.cwd))


def checkout(name: str, code: Path | None = None) -> Server:
    """`docs-mcp serve` of this checkout, or of `code` (another checkout) with this environment's packages.
    `python -m`, not the console script: it names the checkout's own entry point."""
    env = {**os.environ, "PYTHONPATH": str(code)} if code else dict(os.environ)
    command = (sys.executable, "-m", "docs_mcp_core.cli", "serve", "--index", "{index}")
    return Server(name, command, env, code or REPO)


def shared_checkout(name: str, folder: Path, env: Mapping[str, str] | None = None) -> Server:
    """`docs-mcp serve --shared` of this checkout, through the console script's module (console.py: the
    launcher imports no CLI), its residents' sockets and logs in `folder`."""
    env = {**os.environ, **(env or {}), "DOCS_MCP_SHARED_DIR": str(folder)}
    command = (sys.executable, "-m", "docs_mcp_core.console", "serve", "--index", "{index}", "--shared")
    return Server(name, command, env, REPO, shared=folder)


def _logged(folder: Path, pattern: str) -> list[int]:
    found: list[int] = []
    for log in sorted(folder.glob("*.log")):
        found += [int(pid) for pid in re.findall(pattern, log.read_text())]
    return found


def residents(folder: Path) -> list[int]:
    """The residents that started serving in a shared server's folder, oldest first, gone ones included."""
    return _logged(folder, r"docs-mcp resident (\d+): serving ")


def forked_sessions(folder: Path) -> list[int]:
    """The session processes residents forked in that folder, oldest first."""
    return _logged(folder, r"session (\d+) started")


def session_child(folder: Path, before: list[int], wait: float = 30.0) -> int:
    """The session a resident forked since `before` was read (its log line may follow the fork by a moment)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        new = [pid for pid in forked_sessions(folder) if pid not in before]
        if new:
            return new[0]
        time.sleep(0.01)
    raise SystemExit(f"error: no session forked in {folder} within {wait:.0f} s (see its log)")


def parent(pid: int) -> int:
    """A process's parent (a forked session's: its resident)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def alive(pids: list[int]) -> list[int]:
    """Those of the processes still running (not gone, not zombies)."""
    found = []
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(pid)
        except OSError:
            continue
    return found


def stop_residents(folder: Path) -> None:
    """SIGTERM to every resident still running in the folder (they leave their sessions serving)."""
    for pid in alive(residents(folder)):
        os.kill(pid, signal.SIGTERM)
        for _ in range(500):
            if not alive([pid]):
                break
            time.sleep(0.01)


def reference(command: str, text_index: Path | None, hybrid_index: Path | None) -> Server:
    """Any stdio MCP server command serving its own indexes (`{index}` in the command); it must answer
    search_docs {query} like ours (the reference implementation's contract)."""
    parts = tuple(shlex.split(command))
    if not any("{index}" in part for part in parts):
        raise SystemExit(f"error: --reference {command!r}: put {{index}} where the index folder goes")
    indexes = {mode: path.resolve() for mode, path in (("text", text_index), ("hybrid", hybrid_index)) if path}
    return Server("reference", parts, dict(os.environ), Path.cwd(), indexes)


def children() -> set[int]:
    """This process's child processes."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found |= {int(pid) for pid in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """pid and every process below it (a server started through a shell or npx is a tree)."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                todo += [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                continue
    return out


@dataclass
class Memory:
    """MB, summed over a process tree: peak RSS, RSS now, PSS now, and PSS's private-anonymous part."""

    peak_rss: float = 0.0
    rss: float = 0.0
    pss: float = 0.0
    pss_anon: float = 0.0
    pss_file: float = 0.0

    def __add__(self, other: Memory) -> Memory:
        return Memory(*(a + b for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple[float, ...]:
        return (self.peak_rss, self.rss, self.pss, self.pss_anon, self.pss_file)


def _kb(lines: list[str], key: str) -> float:
    return next((int(line.split()[1]) for line in lines if line.startswith(key + ":")), 0) / 1024


def memory(pid: int, tree: bool = True) -> Memory:
    """The memory of a process and its children, or with `tree` False of the process alone (a resident,
    whose children are sessions counted on their own); all zero for a process that has gone."""
    total = Memory()
    for member in descendants(pid) if tree else [pid]:
        try:
            status = Path(f"/proc/{member}/status").read_text().splitlines()
            rollup = Path(f"/proc/{member}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        total += Memory(
            _kb(status, "VmHWM"),
            _kb(status, "VmRSS"),
            _kb(rollup, "Pss"),
            _kb(rollup, "Pss_Anon"),
            _kb(rollup, "Pss_File"),
        )
    return total


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process tree so far, its finished threads included (10 ms resolution)."""
    total = 0.0
    for member in descendants(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def search_request(query: str, limit: int = 10) -> types.CallToolRequest:
    return types.CallToolRequest(
        params=types.CallToolRequestParams(name="search_docs", arguments={"query": query, "limit": limit})
    )


async def search(session: Any, query: str, limit: int = 10) -> tuple[types.CallToolResult, dict[str, Any]]:
    """One search_docs request and its answer. Sent as a plain tools/call through the SDK's session, so
    the time is the request's alone (the SDK's call_tool lists the tools after a tool's first answer, to
    validate it)."""
    result = await session.send_request(search_request(query, limit), types.CallToolResult)
    if result.is_error:
        raise RuntimeError(f"search_docs {query!r} failed: {result.content[0].text}")
    text = result.content[0].text if result.content else "{}"
    try:
        answer = json.loads(text)
    except ValueError:  # a server that answers in another shape: it has no mode to report
        answer = {}
    return result, answer if isinstance(answer, dict) else {}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


@contextmanager
def servers_stderr() -> Iterator[Any]:
    """A file the servers write their stderr to, whose tail is printed if the measurement fails."""
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            yield errlog
        except BaseException:
            errlog.seek(0)
            print(errlog.read()[-4000:], file=sys.stderr)
            raise
