-- Schema v16: the retrieval chunks' words kept compressed, 16 chunks to a blob; `chunks_fts`
-- contentless; a symbol's doc kept once, in code_text (issue 20: the database within 1.5 MB
-- per 10,000 indexed lines).
--
-- v13 kept each chunk's title, place, head and body as plain text in `chunks` (the external
-- content of `chunks_fts`) with its name and its content hash as 64 hex characters: on Django
-- 36.8 MB of a 108.8 MB index. BM25 reads only the full-text index, so `chunks_fts` now keeps no content
-- (content=''); the words it was given are kept in `chunk_texts`, a zlib-compressed JSON list
-- per 16 chunks of a file (store/chunk_texts.py), for FTS5's 'delete', snippets and the
-- embedding text. Same words, same tokenizer, same columns: every BM25 score and answer is
-- unchanged.
DROP TABLE chunks_fts;
DROP TABLE chunks;

CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,     -- files.id * 1048576 + ordinal; docs, data, commits: see v13, v15
    file_id INTEGER REFERENCES files(id) ON DELETE CASCADE,
    doc_id INTEGER REFERENCES doc_files(id) ON DELETE CASCADE,
    data_id INTEGER REFERENCES data_files(id) ON DELETE CASCADE,
    commit_id INTEGER REFERENCES commits(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,         -- the symbol's kind; 'module'; 'section'; 'data'; 'commit'
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    is_test INTEGER NOT NULL    -- 1: a test, example, benchmark or vendored file (demoted)
);
-- Gone from v13's row: the name (qualified name, heading path...: now in chunk_texts beside the
-- words) and the hash (sha256 of the embedding text: computed from the words when embedding,
-- store/chunk_texts.py `hashes`). Gone too: the indexes chunks_file and chunks_doc, which no
-- query used (a search reaches chunks from chunks_fts by id; files' rows are deleted by id
-- range; foreign keys are not enforced).

-- One row per 16 chunks of a file (ordinals 0-15, 16-31, ...; a commit's one chunk): id = the
-- group's first chunk id (files.id * 1048576 + ordinal; docs -(doc_files.id * 1048576 +
-- ordinal); 2**56 + data_files.id * 1048576 + ordinal; 2**60 + commits.id), texts =
-- zlib(JSON [[title, place, head, body, name], ...]) in ordinal order (docs' ids count down).
CREATE TABLE chunk_texts (
    id INTEGER PRIMARY KEY,
    texts BLOB NOT NULL
);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    title, place, head, body,
    content='',
    tokenize='porter unicode61 remove_diacritics 2');

-- A symbol's docstring or doc comment is also a code_text row of its file (the LLVM headers:
-- every one of 21,575 docs, 3.3 MB). A doc that is exactly such a row's content names the row
-- in doc_text and keeps '' in doc (still NOT NULL: "has a doc" reads the same); readers take
-- coalesce((SELECT content FROM code_text WHERE id = doc_text), doc). Rows written before v16
-- keep their doc (doc_text NULL) until their file is written again (the next run, below).
ALTER TABLE symbols ADD COLUMN doc_text INTEGER;  -- code_text.id of the doc's text, or NULL

-- code_text_fts again, with the same columns, content and tokenizer, without v7's 3-character
-- prefix index: it was 3.9 MB of the LLVM headers' 9.5 MB text index (2.7 of Django's 6.8) and
-- saved a ranked prefix query ~2 ms at most (`get*` 2.7 ms against 4.9, `con*` and `ret*` no
-- faster: ranking the matches is the cost). Prefix queries merge the words' lists instead;
-- the rows they match and their BM25 scores are the same.
DROP TABLE code_text_fts;

CREATE VIRTUAL TABLE code_text_fts USING fts5(
    file_path UNINDEXED, line_number UNINDEXED, element_type UNINDEXED,
    symbol_name UNINDEXED, content,
    subwords, end_line UNINDEXED, language UNINDEXED,
    content='code_text_view', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2');

INSERT INTO code_text_fts(code_text_fts) VALUES ('rebuild');

-- Every chunk is made again by the next `repomap index`: code files, doc files and data files
-- are read again (as v13 did), and the commit history is read again from git.
UPDATE files SET text_indexed = 0;
UPDATE doc_files SET size = -1, hash = '';
UPDATE data_files SET size = -1, hash = '';
INSERT INTO commits_fts(commits_fts) VALUES ('delete-all');
INSERT INTO commits_literal(commits_literal) VALUES ('delete-all');
DELETE FROM commit_paths;
DELETE FROM commits;
UPDATE meta SET value = '' WHERE key IN ('history_head', 'history_settings');

PRAGMA user_version = 16;
