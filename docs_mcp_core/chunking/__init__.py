"""Markdown tokens to chunks: the chunker, the max_chunk_size splitting, slugs and chunk IDs."""
