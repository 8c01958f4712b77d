-- Schema v8: the docs index. Markdown files (.md, .markdown) split into sections by heading and
-- .txt files as one section, beside the code.
--
-- Doc files have their own table rather than rows in `files`: symbols, refs, code_text and
-- everything that ranks or counts code join through `files` and expect a programming language
-- there. doc_files.id * 1048576 + ordinal is the rowid of a file's sections (ordinal 0: the text
-- before the first heading) and the id of its headings (ordinal n: the n-th heading), so one
-- file's rows are one id range and a heading's id is its section's rowid.
CREATE TABLE doc_files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- relative to ROOT, '/' separators
    format TEXT NOT NULL,               -- markdown | text
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,                 -- blake2b-128 hex of the bytes on disk, as files.hash
    line_count INTEGER NOT NULL,
    indexed_at TEXT NOT NULL
);

CREATE TABLE headings (
    id INTEGER PRIMARY KEY,             -- = rowid of the heading's row in `sections`
    file TEXT NOT NULL,                 -- doc_files.path
    text TEXT NOT NULL,                 -- without `#` marks or setext underline
    level INTEGER NOT NULL,             -- 1-6
    start_line INTEGER NOT NULL,        -- the heading's line
    end_line INTEGER NOT NULL           -- the section's last line (before the next heading of the same or a higher level)
);
CREATE INDEX headings_text ON headings(text COLLATE NOCASE);
CREATE INDEX headings_file ON headings(file, start_line);

-- The contract is the first three columns; the line range lets a hit be opened without parsing.
-- Where SQLite lacks the porter tokenizer, the migration runner retries with `unicode61` alone.
CREATE VIRTUAL TABLE sections USING fts5(
    file UNINDEXED, section, content,
    start_line UNINDEXED, end_line UNINDEXED,
    tokenize='porter unicode61');

-- Record the tokenizer the table was actually created with (read back from its definition).
INSERT INTO meta(key, value)
SELECT 'docs_tokenizer', substr(rest, 1, instr(rest, '''') - 1)
FROM (SELECT substr(sql, instr(sql, 'tokenize=''') + 10) AS rest
      FROM sqlite_master WHERE name = 'sections') WHERE true
ON CONFLICT(key) DO UPDATE SET value = excluded.value;

PRAGMA user_version = 8;
