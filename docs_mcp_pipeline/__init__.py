"""Dagster pipeline for docs-mcp: one partition per corpus in docs-mcp.yaml.

Load with `dagster asset materialize -m docs_mcp_pipeline ...` or via workspace.yaml.
"""

from .definitions import build_definitions, defs

__all__ = ["build_definitions", "defs"]
