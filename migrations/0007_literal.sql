-- Schema v7: what search_text needs to be fast (repomap/query.py explains the measurements).
--
-- 1. code_text_literal: a trigram index over code_text.content for literal (exact substring)
--    search. It only proposes candidates, which are then checked with instr(), so it keeps no
--    positions (detail='none') and no sizes (columnsize=0): about 0.15 bytes per byte of text.
--    Its rowids are code_text ids, like code_text_fts.
CREATE VIRTUAL TABLE code_text_literal USING fts5(
    content,
    content='code_text', content_rowid='id',
    tokenize='trigram', detail='none', columnsize=0);

INSERT INTO code_text_literal(code_text_literal) VALUES ('rebuild');

-- 2. code_text_fts again, with the same columns and tokenizer plus an index of 3-character
--    prefixes: without it `con*` merges the lists of every word starting with "con" at each
--    query (tens of milliseconds on a large index); with it, one list.
DROP TABLE code_text_fts;

CREATE VIRTUAL TABLE code_text_fts USING fts5(
    file_path UNINDEXED, line_number UNINDEXED, element_type UNINDEXED,
    symbol_name UNINDEXED, content,
    subwords, end_line UNINDEXED, language UNINDEXED,
    content='code_text_view', content_rowid='id',
    tokenize='unicode61 remove_diacritics 2', prefix='3');

INSERT INTO code_text_fts(code_text_fts) VALUES ('rebuild');

PRAGMA user_version = 7;
