-- Schema v4: the symbol index. One row per indexed file, its definitions and the identifiers it uses.
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- relative to ROOT, '/' separators
    language TEXT NOT NULL,             -- python | rust | cpp
    size INTEGER NOT NULL,              -- bytes on disk
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,                 -- blake2b-128 hex of the bytes on disk
    line_count INTEGER NOT NULL,
    status TEXT NOT NULL,               -- ok | fallback (a second parser read it)
    note TEXT,                          -- why a fallback parser was used
    indexed_at TEXT NOT NULL            -- UTC ISO-8601
);

CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    qualified_name TEXT NOT NULL,
    kind TEXT NOT NULL,                 -- class function method struct enum union trait impl ...
    start_line INTEGER NOT NULL,        -- 1-based, inclusive
    end_line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,         -- 0-based, in bytes
    end_col INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    signature TEXT NOT NULL,            -- declaration header, no body
    parent_id INTEGER REFERENCES symbols(id) ON DELETE SET NULL,
    doc TEXT,                           -- docstring or doc comment
    is_definition INTEGER NOT NULL DEFAULT 1,  -- 0: a C++ in-class declaration without body
    declaration_id INTEGER REFERENCES symbols(id) ON DELETE SET NULL  -- C++ out-of-line def -> decl
);
CREATE INDEX symbols_file ON symbols(file_id, start_line);
CREATE INDEX symbols_name ON symbols(name COLLATE NOCASE);
CREATE INDEX symbols_qualified_name ON symbols(qualified_name COLLATE NOCASE);

-- One row per (file, line, identifier) where a name is first used inside its enclosing symbol:
-- enough to rank files by what they use, small enough to keep. Clustered by file for cheap
-- replacement of one file's rows.
CREATE TABLE refs (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line INTEGER NOT NULL,
    name TEXT NOT NULL,
    symbol_id INTEGER REFERENCES symbols(id) ON DELETE SET NULL,  -- enclosing symbol, NULL at top level
    PRIMARY KEY (file_id, line, name)
) WITHOUT ROWID;

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

PRAGMA user_version = 4;
