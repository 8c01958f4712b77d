-- Schema v17: each cached vector as 384 int8 values (scaled per vector), not 384 float16.
--
-- A vector is unit length and only its direction is used (a cosine), so each row is scaled on
-- its own to put its largest component at +-127 and rounded (store/vectors.py `int8_rows`); its
-- length comes back exactly from the integers (`inverse_norms`). 384 bytes a vector instead of
-- 768: with the vector file beside the index (now the same int8 rows) the bytes a semantic
-- search needs fell from ~2.6 KB to under 1 KB per chunk on Django (bench/README.md).
--
-- The float16 rows are converted here, without the model: repomap_int8_vector() is the same
-- quantization, registered on the connection by store/migrate.py for this migration. A row
-- that is not a vector (zero, not finite, a wrong length) converts to NULL and is dropped: its
-- chunk is embedded again by the next `repomap index --force` (`repomap doctor` reports it).
-- The rows are written again in id order (through a copy) rather than updated in place, so
-- the table's pages are full (an update would leave each page half empty), and the key is built
-- again from sorted keys; the freed pages go back to the file system after the migration when
-- the index is incremental auto-vacuum (made so since v4). Not through ALTER TABLE ... RENAME
-- nor a TEMP table: either left the migrating connection unable to checkpoint its WAL
-- ("database table is locked").
CREATE TABLE embedding_cache_v17 (
    id INTEGER PRIMARY KEY,
    model INTEGER NOT NULL,
    hash BLOB NOT NULL,
    vector BLOB NOT NULL
);

INSERT INTO embedding_cache_v17 (id, model, hash, vector)
SELECT id, model, hash, vector FROM (
    SELECT id, model, hash, repomap_int8_vector(vector) AS vector FROM main.embedding_cache
) WHERE vector IS NOT NULL ORDER BY id;

DROP INDEX main.embedding_cache_key;
DELETE FROM main.embedding_cache;
INSERT INTO main.embedding_cache (id, model, hash, vector)
SELECT id, model, hash, vector FROM embedding_cache_v17 ORDER BY id;
DROP TABLE embedding_cache_v17;
CREATE UNIQUE INDEX main.embedding_cache_key ON embedding_cache(model, hash);

-- Every scope's vectors changed: a new data version, so no kept matrix, vector file or HNSW
-- sidecar of the old one is used (those files also changed format and would be refused).
UPDATE vector_scopes SET version = abs(random() % 4611686018427387904);

PRAGMA user_version = 17;
