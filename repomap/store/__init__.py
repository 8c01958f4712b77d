"""The index database, and the only package that opens one.

`from repomap import store` gives the store's interface: the one connection type (`Store`),
opened for one query (`reading`), kept by a server (`KeptReader`) or as the writer of a run
(`open_index`, `writing`); the schema (`SCHEMA_VERSION`, `migrate`); the writer (`Writer` and
the rows it takes); and the reads of `files`, `doc_files` and `meta`. Each table has one owning
module here (docs/architecture.md lists them). Nothing in this package imports repomap above it.
"""

from repomap.store.chunk_texts import texts as chunk_words
from repomap.store.connection import (
    NOT_UNICODE,
    SQLITE_HEADER,
    KeptReader,
    Store,
    chunks,
    has_sqlite_header,
    move_aside,
    open_index,
    prepare_folder,
    reading,
    schema_version,
    write_errors,
    writing,
)
from repomap.store.files import (
    IndexedFile,
    changed_since_indexing,
    counts,
    filtered_ids,
    holds_no_language,
    ids_matching,
    indexed_docs,
    indexed_files,
    names_nothing,
    some_paths,
)
from repomap.store.literal import literal_indexed
from repomap.store.meta import (
    EMBEDDING_MODEL_META,
    MAX_FILE_SIZE_META,
    VECTOR_STORE_META,
    embedding_model,
    get_meta,
    has_vectors,
    indexed_root,
    kept_size_limit,
    set_meta,
)
from repomap.store.migrate import MIGRATION_NAMES, SCHEMA_VERSION, first_migration_after, migrate
from repomap.store.records import (
    CommitRow,
    DataRows,
    data_totals,
    delete_commits,
    delete_data_file,
    indexed_commits,
    indexed_data,
    insert_commits,
    replace_data_file,
    touch_data_file,
)
from repomap.store.writer import (
    ELEMENT_TYPE_CODES,
    ROW_COUNTS_META,
    ROWS_PER_FILE,
    SYMBOL_FIELDS,
    DocRows,
    FileRows,
    Writer,
    clear_vector_checks,
    counts_meta,
)

__all__ = [
    "EMBEDDING_MODEL_META", "ELEMENT_TYPE_CODES", "ROW_COUNTS_META", "MIGRATION_NAMES", "NOT_UNICODE", "ROWS_PER_FILE", "SCHEMA_VERSION",
    "MAX_FILE_SIZE_META", "SQLITE_HEADER", "SYMBOL_FIELDS", "VECTOR_STORE_META", "CommitRow", "DataRows", "DocRows", "FileRows", "IndexedFile", "KeptReader", "Store",
    "Writer", "changed_since_indexing", "chunk_words", "data_totals", "delete_commits", "delete_data_file",
    "indexed_commits", "literal_indexed", "indexed_data", "insert_commits", "replace_data_file", "touch_data_file", "chunks", "clear_vector_checks", "counts", "counts_meta", "embedding_model", "filtered_ids", "first_migration_after", "get_meta", "has_sqlite_header", "has_vectors", "holds_no_language", "ids_matching", "indexed_docs", "kept_size_limit",
    "indexed_files", "indexed_root", "migrate", "move_aside", "names_nothing", "open_index", "prepare_folder",
    "reading", "schema_version", "set_meta", "some_paths", "write_errors", "writing",
]  # fmt: skip
