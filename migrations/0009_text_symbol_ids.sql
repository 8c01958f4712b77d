-- Schema v9: a text element names its symbol by id, not by a copy of the qualified name.
--
-- code_text.symbol_name repeated the enclosing symbol's qualified name on every comment and
-- string inside it: 5.3 MB of Django's 13 MB of text rows, more than the text itself.
-- symbol_id points at the symbol of the same file with that qualified name; symbol_name stays
-- only for a name no symbol row has (a module docstring names its module, a Rust inner doc
-- comment its crate). code_text_view (and so code_text_fts) still shows the name.
ALTER TABLE code_text ADD COLUMN symbol_id INTEGER;  -- symbols.id, same file; NULL: see symbol_name

-- Of the symbols of that name in the file (a C++ declaration and its definition, overloads,
-- a Python name redefined): the innermost one holding the element's lines, else the nearest one
-- starting after them (a doc comment above its item), else the first. As db.py's _symbol_at.
UPDATE code_text SET symbol_id = (
    SELECT id FROM (
        SELECT s.id AS id, s.start_line AS start_line, s.start_byte AS start_byte,
               s.end_byte AS end_byte,
               (s.start_line <= code_text.line_number AND code_text.end_line <= s.end_line)
                   AS holds,
               (s.start_line >= code_text.end_line) AS after
        FROM symbols s
        WHERE s.file_id = code_text.file_id AND s.qualified_name = code_text.symbol_name)
    ORDER BY holds DESC,
             CASE WHEN holds THEN -start_byte END, CASE WHEN holds THEN end_byte END,
             CASE WHEN holds THEN -id END,
             after DESC, CASE WHEN after THEN start_line END, id
    LIMIT 1)
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
