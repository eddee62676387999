"""Connecting agents to an index: MCP client configuration (printed, or merged into the client's file)
and an agent skill that uses the command line instead. Light on imports: the CLI loads it to list clients."""
