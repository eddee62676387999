"""Where docs come from: the docs-mcp.yaml config, and staging a folder or a git commit."""
