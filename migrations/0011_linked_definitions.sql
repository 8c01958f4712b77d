-- Schema v11: the C++ definitions linked to a declaration, listed without reading every symbol.
--
-- The repo map's ranking leaves out each out-of-line definition that has an in-class
-- declaration (the declaration stands for both). Ranking keeps the other definitions of each
-- file between runs, keyed by the file's rows, but a link can change while its file does not
-- (a header gains or loses the declaration): each run reads the linked ones from this index,
-- which is small (about 1,800 of the 68,000 symbols of LLVM's headers). It also finds the
-- definitions of a declaration.
CREATE INDEX symbols_declaration ON symbols(declaration_id) WHERE declaration_id IS NOT NULL;

PRAGMA user_version = 11;
