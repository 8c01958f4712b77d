-- Schema v19: a small tree's index keeps no trigram index for literal search (issue 20: the
-- database within 1.5 MB per 10,000 lines; repomap/store/literal.py says when it is kept).
-- meta 'literal_index' says whether code_text_literal holds the text rows ('1') or none ('0'):
-- an index from before holds them all, unless it has no text row at all.
INSERT OR IGNORE INTO meta (key, value)
    SELECT 'literal_index', CASE WHEN EXISTS (SELECT 1 FROM code_text) THEN '1' ELSE '0' END;

PRAGMA user_version = 19;
