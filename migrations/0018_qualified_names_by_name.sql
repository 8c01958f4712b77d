-- Schema v18: qualified names found through the name index, and symbol_ranks without the file
-- id (issue 20: the database within 1.5 MB per 10,000 lines, C++ enumerators included).
--
-- A qualified name is the name itself or ends with `::` or `.` and the name (`Foo::get`,
-- `QuerySet.filter`), so the rows whose qualified name is a query are among the rows named
-- like the query or a part of it after a separator, which symbols_name finds; the index on
-- the whole qualified name (3.8 MB of LLVM's headers, 2.3 MB of Django and Rust std) is gone.
-- The rows that break the rule (a Rust trait impl: `fmt::Display for Pool`, named `Pool`)
-- keep an index of their own. A query finds them by repeating this condition word for word
-- (repomap/search/symbols.py UNSUFFIXED_SQL), as SQLite uses a partial index only then.
DROP INDEX symbols_qualified_name;
CREATE INDEX symbols_unsuffixed ON symbols(qualified_name COLLATE NOCASE)
    WHERE qualified_name <> name
      AND substr(qualified_name, length(qualified_name) - length(name) - 1) <> '::' || name
      AND substr(qualified_name, length(qualified_name) - length(name)) <> '.' || name;

-- A ranked symbol's file is its symbols row's: symbol_ranks keeps the id and the rank only
-- (0.21 MB of LLVM's headers). Rewritten in id order, so its pages are full. (Copied twice,
-- through a table of the main database: after ALTER TABLE ... RENAME, or with a TEMP table,
-- the connection's next `PRAGMA wal_checkpoint` fails with "database table is locked".)
CREATE TABLE symbol_ranks_v17 AS SELECT symbol_id, rank FROM symbol_ranks;
DROP TABLE symbol_ranks;
CREATE TABLE symbol_ranks (
    symbol_id INTEGER PRIMARY KEY REFERENCES symbols(id) ON DELETE CASCADE,
    rank REAL NOT NULL
);
INSERT INTO symbol_ranks (symbol_id, rank)
    SELECT symbol_id, rank FROM symbol_ranks_v17 ORDER BY symbol_id;
DROP TABLE symbol_ranks_v17;

-- A signature that is the name alone (a C or C++ enumerator without a value: 15,000 of LLVM's
-- headers, 0.27 MB) is kept as '': read CASE signature WHEN '' THEN name ELSE signature END.
UPDATE symbols SET signature = '' WHERE signature = name;

PRAGMA user_version = 18;
