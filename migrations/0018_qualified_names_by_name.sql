-- Schema v18: qualified names found through the name index (issue 20: the database within
-- 1.5 MB per 10,000 lines, C++ enumerators included).
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

PRAGMA user_version = 18;
