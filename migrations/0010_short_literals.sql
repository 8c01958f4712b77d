-- Schema v10: 2-character literal search through the trigram index.
--
-- A trigram index holds no 2-character strings, so a 2-character literal query scanned every
-- row. With a sentinel (U+E000, a private-use character) after each element's text, every
-- 2-character substring of the text begins one of its trigrams, including one at the very end.
-- code_text_literal_terms lists the index's trigrams: a query reads those in the range that
-- begins with its two characters and matches their OR. The sentinel is only in the index:
-- candidates are checked against code_text.content as before.
CREATE VIEW code_text_literal_source AS
SELECT id, content || char(57344) AS content FROM code_text;

DROP TABLE code_text_literal;

CREATE VIRTUAL TABLE code_text_literal USING fts5(
    content,
    content='code_text_literal_source', content_rowid='id',
    tokenize='trigram', detail='none', columnsize=0);

INSERT INTO code_text_literal(code_text_literal) VALUES ('rebuild');

CREATE VIRTUAL TABLE code_text_literal_terms USING fts5vocab(code_text_literal, 'row');

PRAGMA user_version = 10;
