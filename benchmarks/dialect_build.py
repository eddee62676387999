"""Build speed on the docs dialects, side by side with plain Markdown of the same size.

For each dialect corpus (MkDocs Material with includes, VitePress, MDX, reStructuredText, older
Material), a plain-CommonMark twin is written: the same pages (same paths, `.md`), each made of its
own headings, text and fenced code as docs-mcp reads them, repeated or cut to the bytes the page has
as indexed (its source plus the files its includes read). Then, per corpus and twin:

- parse + chunk: every page through the build's own parse step (`indexing.parsing.parse_one`) in this
  process, after one warm-up pass, CPU seconds, best of --runs;
- build: `docs-mcp build` text-only in a fresh process, CPU seconds of the build and its workers (from
  wait4), median of --runs, the corpus and its twin alternating.

CPU seconds, not wall time: on a busy machine they move far less. The ratio is dialect / twin.

    .venv/bin/python benchmarks/dialect_build.py [--runs 5] [--corpora sqlmodel-docs,requests-docs]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from docs_mcp_core.corpus.markdown import mdx_mode, parser, tokens_text, top_level_blocks  # noqa: E402
from docs_mcp_core.corpus.walk import manifest_rules, read_text, scan_corpus  # noqa: E402
from docs_mcp_core.indexing.parsing import ParseJob, parse_one  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"
CORPORA = {
    "sqlmodel-docs": FIXTURES / "sqlmodel-docs/docs",
    "vite-docs": FIXTURES / "vite-docs/docs",
    "starlight-docs": FIXTURES / "starlight-docs/docs/src/content/docs",
    "requests-docs": FIXTURES / "requests-docs/docs",
    "uv-docs": FIXTURES / "uv-docs",
}


def _jobs(docs: Path) -> tuple[list[ParseJob], object, object]:
    scan = scan_corpus(docs)
    jobs = []
    for rel in scan.markdown:
        text, digest, _ = read_text(docs / rel, rel)
        jobs.append(ParseJob(rel, text or "", digest, manifest_rules(rel, scan.manifests)))
    return jobs, scan.manifests, scan.includes


def _blocks(job: ParseJob, manifests: object, includes: object) -> tuple[list[str], int]:
    """A page as plain CommonMark blocks (headings, paragraphs with their inline Markdown, fenced code), and
    its indexed bytes."""
    parsed = parse_one(job, manifests, includes)  # type: ignore[arg-type]
    blocks: list[str] = []
    for chunk in parsed.chunks:
        with mdx_mode(job.relpath.endswith(".mdx")):
            tokens = parser().parse(chunk.content)
        for block in top_level_blocks(tokens):
            first = block.first
            if block.heading_level:
                blocks.append("#" * block.heading_level + " " + block.heading_text)
            elif first.type == "fence" or first.type == "code_block":
                lang = first.info.strip().split()[0].strip("{}.") if first.info.strip() else ""
                blocks.append(f"```{lang}\n{first.content.rstrip()}\n```")
            else:  # the inline Markdown of the block (links, code spans, emphasis kept), nested code fenced
                for tok in block.tokens:
                    if tok.type == "inline" and tok.content.strip():
                        blocks.append(tok.content)
                    elif tok.type in ("fence", "code_block"):
                        blocks.append(f"```\n{tok.content.rstrip()}\n```")
                    elif tok.type == "html_block" and (text := tokens_text([tok])):
                        blocks.append(text)
                    elif (label := (tok.meta or {}).get("label")) and tok.nesting == 1:
                        blocks.append(label)
    size = len(job.text.encode()) + sum(
        (includes.project_root and os.path.getsize(os.path.join(includes.project_root, rel)))  # type: ignore[attr-defined]
        for rel in parsed.included
    )
    return blocks or [job.relpath], size


def _twin_page(blocks: list[str], size: int) -> str:
    """The blocks in order, then again from the second on, until the page has `size` bytes."""
    out: list[str] = []
    total = 0
    cycle = blocks[1:] if len(blocks) > 1 else blocks
    order = blocks + cycle * (size // max(1, sum(len(b) + 2 for b in cycle)) + 2)
    for block in order:
        need = size - total
        if need <= 0:
            break
        encoded = len(block.encode()) + 2
        if encoded > need:
            if block.startswith(("#", "```")):
                block = "filler " * max(1, need // 7)
            block = block.encode()[: max(1, need - 2)].decode(errors="ignore")
        out.append(block)
        total += len(block.encode()) + 2
    return "\n\n".join(out) + "\n"


def make_twin(docs: Path, dest: Path) -> tuple[int, int]:
    """Write the plain twin of `docs` into `dest`; (dialect bytes as indexed, twin bytes)."""
    jobs, manifests, includes = _jobs(docs)
    want = got = 0
    for job in jobs:
        blocks, size = _blocks(job, manifests, includes)
        page = _twin_page(blocks, size)
        target = dest / (job.relpath.rsplit(".", 1)[0] + ".md")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
        want, got = want + size, got + len(page.encode())
    return want, got


def parse_cpu(docs: Path, runs: int) -> float:
    jobs, manifests, includes = _jobs(docs)
    for job in jobs:  # warm-up: imports, compiled patterns, caches
        parse_one(job, manifests, includes)  # type: ignore[arg-type]
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        for job in jobs:
            parse_one(job, manifests, includes)  # type: ignore[arg-type]
        best = min(best, time.process_time() - started)
    return best


def build_cpu(docs: Path, out: Path) -> float:
    """One text-only `docs-mcp build` in a fresh process: CPU seconds of it and its workers."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "docs_mcp_core.cli", "build", "--docs-dir", str(docs), "--out", str(out)]
    cmd += ["--embedding-provider", "none"]
    env = {**os.environ, "LANCEDB_LOG": "error"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=str(REPO))
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"build of {docs} failed:\n{proc.stderr.read().decode() if proc.stderr else ''}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--no-build", action="store_true", help="parse + chunk only")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="dialect-build-") as tmp:
        for name in args.corpora.split(","):
            docs = CORPORA[name]
            twin = Path(tmp) / "twin" / name
            want, got = make_twin(docs, twin)
            parse = (parse_cpu(docs, args.runs), parse_cpu(twin, args.runs))
            builds: tuple[list[float], list[float]] = ([], [])
            for _ in range(0 if args.no_build else args.runs):
                builds[0].append(build_cpu(docs, Path(tmp) / "out"))
                builds[1].append(build_cpu(twin, Path(tmp) / "out"))
            rows.append((name, want, got, parse, tuple(statistics.median(b) if b else 0.0 for b in builds)))
    print(
        "CPU seconds, dialect corpus / plain-Markdown twin of the same size (machine load: "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
    )
    print(f"{'corpus':<16} {'KB':>6} {'twin KB':>8}  {'parse+chunk':>20} {'ratio':>6}  {'build':>16} {'ratio':>6}")
    for name, want, got, (p, pt), (b, bt) in rows:
        build = f"{b:.2f} / {bt:.2f}" if b else "-"
        ratio = f"{b / bt:.2f}" if b and bt else "-"
        print(
            f"{name:<16} {want / 1024:>6.0f} {got / 1024:>8.0f}  {p:>9.3f} / {pt:>7.3f} {p / pt:>6.2f}  {build:>16} {ratio:>6}"
        )


if __name__ == "__main__":
    main()
