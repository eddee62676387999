"""The eval harness: retrieval quality and speed of any MCP docs server with search_docs/get_doc."""
