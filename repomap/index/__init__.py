"""Building the index: discover files, extract them in worker processes, write them through
the store, rank the result; keep it fresh while a server runs."""
