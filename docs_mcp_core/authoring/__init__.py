"""Tools for docs authors: `docs-mcp fix` proposes and repairs manifests, optionally with an LLM."""
