-- Schema v5: full-text search over every comment, docstring and string literal.
--
-- code_text holds one row per element; code_text_fts is an FTS5 index over it (external
-- content), read through code_text_view so that file_path and language are stored once per file.
-- id = files.id * 1048576 + ordinal, so one file's rows are one id range.
CREATE TABLE code_text (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line_number INTEGER NOT NULL,       -- 1-based line where the element starts
    end_line INTEGER NOT NULL,
    element_type INTEGER NOT NULL,      -- 1 comment, 2 docstring, 3 string_literal (as text in the view)
    symbol_name TEXT,                   -- documented symbol (docstrings), enclosing symbol (others)
    content TEXT NOT NULL,              -- the text without delimiters
    subwords TEXT NOT NULL              -- identifier parts: ConnectionPool -> "connection pool"
);

CREATE VIEW code_text_view AS
SELECT t.id AS id, f.path AS file_path, t.line_number AS line_number,
       CASE t.element_type WHEN 1 THEN 'comment' WHEN 2 THEN 'docstring' ELSE 'string_literal' END
           AS element_type,
       t.symbol_name AS symbol_name, t.content AS content, t.subwords AS subwords,
       t.end_line AS end_line, f.language AS language
FROM code_text t JOIN files f ON f.id = t.file_id;

-- The public contract: these five columns, in this order, with this tokenizer.
CREATE VIRTUAL TABLE code_text_fts USING fts5(
    file_path UNINDEXED, line_number UNINDEXED, element_type UNINDEXED,
    symbol_name UNINDEXED, content,
    subwords, end_line UNINDEXED, language UNINDEXED,
    content='code_text_view', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');

-- Files indexed before v5 have no text rows yet: 0 makes the next `repomap index` read them.
ALTER TABLE files ADD COLUMN text_indexed INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 5;
