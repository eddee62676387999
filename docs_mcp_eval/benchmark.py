"""`docs-mcp eval benchmark`: one index per embedding provider, the same suite against each."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from docs_mcp_core.embedding import ProviderSettings, make_provider
from docs_mcp_core.errors import DocsMcpError
from docs_mcp_core.fsutil import dir_size
from docs_mcp_core.indexing.build import build
from docs_mcp_core.output.layout import OutputLayout
from docs_mcp_core.progress import Reporter

from .cases import Suite
from .runner import run_suite


def parse_spec(spec: str, base_url: str | None) -> ProviderSettings:
    """`none`, `hash`, `local[:onnx|:torch][/PATH-OR-NAME]`, `openai`, `openai/MODEL`."""
    provider, _, model = spec.strip().partition("/")
    provider, _, backend = provider.partition(":")
    if provider not in ("none", "hash", "openai", "local", "sentence-transformers") or (
        backend and (provider not in ("local", "sentence-transformers") or backend not in ("onnx", "torch"))
    ):
        raise DocsMcpError(
            f"unknown provider spec {spec!r}; use none, hash, local[:onnx|:torch][/MODEL] or openai[/MODEL]"
        )
    return ProviderSettings(
        provider, model=model or None, base_url=base_url if provider == "openai" else None, backend=backend or None
    )


async def benchmark(
    suite: Suite,
    docs_dir: Path,
    specs: list[str],
    work: Path,
    *,
    warmup: int,
    base_url: str | None,
    reporter: Reporter,
    server_args: list[str] | None = None,
) -> list[dict[str, Any]]:
    import lancedb  # noqa: F401 - imported once up front, so no provider's build time pays for it

    rows = []
    for spec in specs:
        settings = parse_spec(spec, base_url)
        out = Path(work) / re.sub(r"[^A-Za-z0-9._-]+", "-", spec)
        if out.exists():
            shutil.rmtree(out)  # a cold build every time, so build times compare
        provider = make_provider(settings)
        reporter.info(f"== {spec}: building {docs_dir} into {out}")
        started = time.perf_counter()
        try:
            build(docs_dir, out, provider, reporter=reporter)
        finally:
            provider.close()
        seconds = time.perf_counter() - started
        # --preload: measure hybrid search, not the seconds while a local model is still loading
        command = [
            sys.executable,
            "-m",
            "docs_mcp_core.cli",
            "serve",
            "--index",
            str(out),
            "--preload",
            *(server_args or []),
        ]
        reporter.info(f"== {spec}: running {len(suite.cases)} cases")
        result = await run_suite(command, suite, warmup=warmup, reporter=reporter)
        result.build_seconds = seconds
        rows.append(
            {"provider": spec, "index_mb": dir_size(OutputLayout(out).lancedb) / 2**20, "result": result.to_json()}
        )
    return rows
