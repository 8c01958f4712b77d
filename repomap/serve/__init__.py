"""Serving repomap to other programs: the MCP server (stdio and streamable HTTP)."""
