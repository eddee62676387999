"""Resources: the corpora config, and a reporter that writes to the Dagster run log."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from docs_mcp_core.config import Corpora, load_config
from docs_mcp_core.embedding import EmbeddingProvider, make_provider
from docs_mcp_core.embedding_cache import CACHE_DIR


class DocsMcpConfig(dg.ConfigurableResource):
    """Points at docs-mcp.yaml (empty: $DOCS_MCP_CONFIG, else ./docs-mcp.yaml)."""

    config_path: str = ""

    def corpora(self) -> Corpora:
        return load_config(self.config_path or None)

    def out_dir(self, corpus: str) -> Path:
        return self.corpora().out_dir(corpus)

    def cache_dir(self, corpus: str) -> Path:
        corpora = self.corpora()
        configured = corpora.get(corpus).cache_dir
        return corpora.resolve(configured) if configured else corpora.out_dir(corpus) / CACHE_DIR

    def provider(self, corpus: str) -> EmbeddingProvider:
        return make_provider(self.corpora().get(corpus).embedding.settings())


class DagsterReporter:
    """Core progress/status lines, sent to the run's log instead of stderr."""

    def __init__(self, context: dg.AssetExecutionContext) -> None:
        self.log = context.log
        self._last: tuple[str, int] = ("", -1)

    def info(self, message: str) -> None:
        self.log.info(message)

    def warn(self, message: str) -> None:
        self.log.warning(message)

    def progress(self, label: str, done: int, total: int) -> None:
        step = int(10 * done / total) if total else 10
        if (label, step) != self._last:
            self._last = (label, step)
            self.log.debug(f"{label}: {done}/{total}")
