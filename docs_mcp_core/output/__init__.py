"""The on-disk format of an output, in one place: what a build writes and a server reads.

layout          every path under an output folder (OutputLayout)
metadata        metadata.json: one model for writing and reading it, schema_version, the table version it pins
chunk           the chunk record of chunks.json and the table
table_schema    the chunks table's columns; derived_fields computes the derived ones
vector_index    when the table gets an ANN index and how it is probed
table_files     a table version's files, read without LanceDB; table_checksums their recorded checksums
build_state     .docs-mcp/files.json, what the next build reuses
lock            the build lock
objectstore     outputs on S3-compatible storage
signature       metadata.json's Ed25519 signature; signed_files the table files it covers; verify `--verify`
"""
