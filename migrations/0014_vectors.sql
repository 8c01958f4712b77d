-- Schema v14: chunk vectors for `repomap search` by meaning, each text embedded once.
--
-- Embedding is the slow stage (tens of chunks per second), so a vector is kept once per
-- (model, text) in `embedding_cache`, keyed by the chunk's content hash (chunks.hash): a text
-- that was embedded once is never embedded again, across re-index, renames, --force and scopes.
-- A scope (the working tree, a branch) maps its chunks to cache entries in `vectors`, with the
-- path, language and kind a query filters on before ranking. Written by store/vectors.py only.
--
-- Sizes (bench/embed.py): a vector is 384 float16 (768 bytes); hashes are 32-byte blobs, not
-- 64-character hex; the cache is a rowid table appended in order (full pages; a table keyed by
-- the random hash would split pages to two-thirds full), found by a unique index; paths are
-- stored once per file. About 900 bytes per chunk in all, under the 1 KB target.
CREATE TABLE embedding_models (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE       -- e.g. 'all-MiniLM-L6-v2-onnx-int8-w256' (model and window)
);

CREATE TABLE embedding_cache (
    id INTEGER PRIMARY KEY,
    model INTEGER NOT NULL REFERENCES embedding_models(id),
    hash BLOB NOT NULL,             -- the chunk's content hash (sha256), 32 bytes
    vector BLOB NOT NULL            -- little-endian float16 x dimensions, L2-normalized
);
CREATE UNIQUE INDEX embedding_cache_key ON embedding_cache(model, hash);

CREATE TABLE vector_scopes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,      -- 'main' for the working tree; a branch or worktree name
    model INTEGER NOT NULL REFERENCES embedding_models(id),  -- one model per scope
    version INTEGER NOT NULL        -- random, new at each write: the key under which a
                                    -- long-running reader keeps the scope's decoded matrix
);

CREATE TABLE vector_paths (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE       -- a file path (relative to ROOT, '/'-separated)
);

CREATE TABLE vectors (
    scope INTEGER NOT NULL REFERENCES vector_scopes(id),
    chunk_id INTEGER NOT NULL,      -- chunks.id
    entry INTEGER NOT NULL REFERENCES embedding_cache(id),  -- its text's vector (and hash)
    path INTEGER NOT NULL REFERENCES vector_paths(id),
    language TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (scope, chunk_id)
) WITHOUT ROWID;

PRAGMA user_version = 14;
