-- Schema v15: data files and commit history as records (`repomap search-data`,
-- `repomap search-commits`, `repomap history`).
--
-- A data file (.csv, .tsv, .json, .jsonl, .ndjson, .toml, .yaml, .yml) is read into records:
-- a CSV/TSV row or a JSON Lines line is one record whose fields are its columns (its object's
-- leaves); a JSON, TOML or YAML document gives one record per leaf value, keyed by its path
-- (`tool.ruff.lint.select[0]`) with one field, `value`. `data_values` holds one row per field
-- of a record. id = data_files.id * 1048576 + ordinal, so one file's rows are one id range.
CREATE TABLE data_files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,          -- relative to ROOT, '/' separators
    format TEXT NOT NULL,               -- csv | tsv | json | jsonl | toml | yaml
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,                 -- blake2b-128 hex of the bytes on disk, as files.hash
    records INTEGER NOT NULL,           -- records read (at most the per-file cap)
    note TEXT,                          -- why the file was only partly read, else NULL
    indexed_at TEXT NOT NULL
);

CREATE TABLE data_values (
    id INTEGER PRIMARY KEY,             -- data_files.id * 1048576 + ordinal (file order)
    file_id INTEGER NOT NULL REFERENCES data_files(id) ON DELETE CASCADE,
    record INTEGER NOT NULL,            -- the record's ordinal in its file, from 1
    key TEXT NOT NULL,                  -- the record's key: a key path, or a row / line number
    field TEXT NOT NULL,                -- 'value' for a leaf; the column for a row
    value TEXT NOT NULL,                -- as text, credentials redacted, long values cut
    line INTEGER                        -- where the record starts, when the parser tells
);
CREATE INDEX data_values_file ON data_values(file_id, record);

-- Ranked search (--ranked): words of the key and of the value, BM25. Contentless: a file's
-- rows are removed with FTS5's 'delete' command and the values they were indexed with.
CREATE VIRTUAL TABLE data_fts USING fts5(
    key, value, content='', tokenize='unicode61 remove_diacritics 2');

-- Commits of HEAD's history, read from `git log` (index/history.py). id is the commit's
-- position in the order first read; `hash` is its identity.
CREATE TABLE commits (
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,          -- the full object name
    parents TEXT NOT NULL,              -- parents' hashes, space-separated ('' for a root)
    author_name TEXT NOT NULL,
    author_email TEXT NOT NULL,
    committer_name TEXT NOT NULL,
    committer_email TEXT NOT NULL,
    author_time TEXT NOT NULL,          -- ISO 8601 UTC with milliseconds: 2024-05-01T12:00:00.000Z
    commit_time TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,                 -- the message after the subject ('' when there is none)
    paths TEXT NOT NULL                 -- changed paths, one a line (a rename: old and new)
);
CREATE INDEX commits_time ON commits(commit_time DESC, hash);

CREATE TABLE commit_paths (
    path TEXT NOT NULL,
    commit_id INTEGER NOT NULL REFERENCES commits(id) ON DELETE CASCADE,
    PRIMARY KEY (path, commit_id)
) WITHOUT ROWID;
CREATE INDEX commit_paths_commit ON commit_paths(commit_id);

CREATE VIRTUAL TABLE commits_fts USING fts5(
    author, subject, body, paths, content='', tokenize='unicode61 remove_diacritics 2');

-- Literal search's candidates: the trigrams of each commit's searched text (subject, body,
-- `name <email>`, paths), case-sensitive, without positions; a query's trigrams ANDed give a
-- superset that instr() confirms. A string found nowhere is answered without a scan.
CREATE VIRTUAL TABLE commits_literal USING fts5(
    text, content='', tokenize='trigram case_sensitive 1', detail='none');

-- Records are retrieval chunks too (`repomap search` finds a commit message or a data file's
-- records by words and meaning): a data file's chunks name it in data_id (ids from 2**56 +
-- data_files.id * 1048576), a commit's in commit_id (id 2**60 + commits.id).
ALTER TABLE chunks ADD COLUMN data_id INTEGER REFERENCES data_files(id) ON DELETE CASCADE;
ALTER TABLE chunks ADD COLUMN commit_id INTEGER REFERENCES commits(id) ON DELETE CASCADE;

PRAGMA user_version = 15;
