-- Schema v6: what the repo map ranks by, computed at the end of every `repomap index` run that
-- changed the index (repomap/symbols.py refresh_ranks, repomap/rank.py), so a map is a lookup.

-- PageRank of each file over the graph "file A uses a name that file B defines".
CREATE TABLE file_ranks (
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    rank REAL NOT NULL                  -- sums to 1 over all files
);

-- The share of rank that reaches each definition through references from other files.
CREATE TABLE symbol_ranks (
    symbol_id INTEGER PRIMARY KEY REFERENCES symbols(id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    rank REAL NOT NULL
);
CREATE INDEX symbol_ranks_rank ON symbol_ranks(rank DESC, file_id, symbol_id);  -- the map's order

-- How many files use each defined name (search_symbols ranks "used from more files" first).
CREATE TABLE name_stats (
    name TEXT PRIMARY KEY,
    ref_files INTEGER NOT NULL,         -- files with at least one reference to the name
    def_files INTEGER NOT NULL          -- files defining a symbol of that name
) WITHOUT ROWID;

-- The weighted graph itself, as packed little-endian arrays, so a personalized map (--focus,
-- --mention) re-runs PageRank in milliseconds without reading `refs`. Private to repomap:
-- its layout is versioned by meta 'rank_format'.
CREATE TABLE rank_arrays (
    name TEXT PRIMARY KEY,
    dtype TEXT NOT NULL,                -- numpy dtype string, e.g. '<f8'
    data BLOB NOT NULL
);

PRAGMA user_version = 6;
