-- Schema v12: the map's order is kept as an array, not as an index on symbol_ranks.
--
-- symbol_ranks_rank (rank DESC, file_id, symbol_id) served one query, the repo map's pages of
-- the best definitions. Every run that changed the index rebuilt it: ~40-55 ms of a one-file
-- run on LLVM's headers, and 1.5 MB of its database. The ranking now stores the same order as
-- the `map_order` row of rank_arrays (symbol ids, best first), written with the ranks.
-- symbol_ranks keeps its rows and meaning; ORDER BY rank still works, by sorting.
DROP INDEX IF EXISTS symbol_ranks_rank;

-- The order is written by the next run's ranking: until then the map falls back to sorting.
PRAGMA user_version = 12;
