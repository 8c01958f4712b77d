"""The index database: the one connection type, PRAGMAs, the schema and its migrations, the
writer, and the reads each table's owner answers. Imports nothing of repomap above it."""
