-- Schema v9: a text element names its symbol by id, not by a copy of the qualified name.
--
-- code_text.symbol_name repeated the enclosing symbol's qualified name on every comment and
-- string inside it: 5.3 MB of Django's 13 MB of text rows, more than the text itself.
-- symbol_id points at the symbol of the same file with that qualified name; symbol_name stays
-- only for a name no symbol row has (a module docstring names its module, a Rust inner doc
-- comment its crate). code_text_view (and so code_text_fts) still shows the name.
ALTER TABLE code_text ADD COLUMN symbol_id INTEGER;  -- symbols.id, same file; NULL: see symbol_name

UPDATE code_text SET symbol_id = (
    SELECT s.id FROM symbols s
    WHERE s.file_id = code_text.file_id AND s.qualified_name = code_text.symbol_name
    ORDER BY s.start_byte, s.end_byte DESC, s.id LIMIT 1)
WHERE symbol_name IS NOT NULL;

UPDATE code_text SET symbol_name = NULL WHERE symbol_id IS NOT NULL;

DROP VIEW code_text_view;

CREATE VIEW code_text_view AS
SELECT t.id AS id, f.path AS file_path, t.line_number AS line_number,
       CASE t.element_type WHEN 1 THEN 'comment' WHEN 2 THEN 'docstring' ELSE 'string_literal' END
           AS element_type,
       coalesce(t.symbol_name, s.qualified_name) AS symbol_name, t.content AS content,
       t.subwords AS subwords, t.end_line AS end_line, f.language AS language
FROM code_text t JOIN files f ON f.id = t.file_id LEFT JOIN symbols s ON s.id = t.symbol_id;

PRAGMA user_version = 9;
