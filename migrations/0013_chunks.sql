-- Schema v13: retrieval chunks for `repomap search` (finding code by what it does).
--
-- A chunk is one definition (function, method, class, struct, impl, ...), the module-level code
-- of a file, or a piece of a Markdown section or .txt file. `chunks_fts` ranks them by BM25
-- over words in four columns weighed apart: identifiers split into their parts and English words stemmed (porter), so
-- "parsing headers" meets `parse_header_lines`. id = files.id * 1048576 + ordinal for code,
-- -(doc_files.id * 1048576 + ordinal) for docs: one file's chunks are one id range.
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER REFERENCES files(id) ON DELETE CASCADE,      -- a code chunk's file
    doc_id INTEGER REFERENCES doc_files(id) ON DELETE CASCADE,   -- a docs chunk's file
    kind TEXT NOT NULL,         -- the symbol's kind; 'module' (code between definitions); 'section'
    name TEXT NOT NULL,         -- qualified name; for docs the heading path ('Intro > Install')
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    is_test INTEGER NOT NULL,   -- 1: a test, example, benchmark or vendored file (demoted)
    hash TEXT NOT NULL,         -- sha256 hex of the embedding text (the embedding cache's key)
    title TEXT NOT NULL,        -- the name and its words (`QuerySet.filter query set filter`)
    place TEXT NOT NULL,        -- the path's words
    head TEXT NOT NULL,         -- signature and docstring / doc comment
    body TEXT NOT NULL          -- the body's words (identifiers split), each once, in order
);
CREATE INDEX chunks_file ON chunks(file_id) WHERE file_id IS NOT NULL;
CREATE INDEX chunks_doc ON chunks(doc_id) WHERE doc_id IS NOT NULL;

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, place, head, body,
    content='chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2');

-- Files indexed before v13 have no chunks: 0 makes the next `repomap index` read them again.
UPDATE files SET text_indexed = 0;
UPDATE doc_files SET size = -1, hash = '';

PRAGMA user_version = 13;
