"""A digest of what an index holds, without its ids: to show that a speed-up left the content
of a cold index as it was.

    PYTHONHASHSEED=0 repomap index ROOT --db A.db      # the code before (its own install)
    PYTHONHASHSEED=0 repomap index ROOT --db B.db      # the code after
    python bench/same_content.py A.db ROOT --dump a.txt > a.digest
    python bench/same_content.py B.db ROOT --dump b.txt > b.digest
    diff a.digest b.digest                              # a part that differs: diff its dump

Every table row by row, sorted, with each id replaced by what it points at (a file's path, a
row's ordinal in its file, a symbol's ordinal among its file's symbols), since file ids follow
the order files are written in; the answers of the text, chunk, docs and trigram indexes to a
fixed set of queries; and the JSON answers of `repomap search --mode lexical`, `symbols`,
`search-text` and `search-docs` (timings removed). Left out: timestamps, the ranking's digests
and its arrays' bytes (they follow the ids). Prints one digest per part and a total.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3  # noqa: TID251 - reads every table of an index as it is, shadow tables aside
import subprocess
import sys
from collections.abc import Callable
from typing import Any

R = 1 << 20  # store.writer.ROWS_PER_FILE
QUERIES = [
    "model", "queryset filter", "cache backend", "migration", "template render", "TODO",
    "deprecated", "password", "database connection", "middleware", "http response", "timezone",
    "signal", "unicode",
]  # fmt: skip
LITERALS = ["self.assert", "utf-8", "Http404", "__init__", "%s", "ab", "django.db.models"]
COMMANDS = (
    [["search", "--mode", "lexical", q] for q in
     ["how is a queryset filtered", "parse http headers", "password hashing",
      "migration autodetector", "cache key"]]
    + [["symbols", name] for name in ["QuerySet", "filter", "get_or_create", "render", "Field"]]
    + [["search-text", q] for q in ["deprecated", "TODO", "database"]]
    + [["search-text", "--literal", q] for q in ["self.assertEqual(", "utf-8"]]
    + [["search-docs", q] for q in ["middleware", "queryset"]]
)  # fmt: skip


class Ids:
    """What the ids of one index point at."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.files = dict(conn.execute("SELECT id, path FROM files"))
        self.docs = dict(conn.execute("SELECT id, path FROM doc_files"))
        self.data = dict(conn.execute("SELECT id, path FROM data_files"))
        self.first_symbol = dict(
            conn.execute("SELECT file_id, min(id) FROM symbols GROUP BY file_id")
        )
        self.symbol_file = dict(conn.execute("SELECT id, file_id FROM symbols"))

    def symbol(self, symbol_id: int | None) -> tuple[str, int] | None:
        if symbol_id is None:
            return None
        file_id = self.symbol_file[symbol_id]
        return self.files[file_id], symbol_id - self.first_symbol[file_id]

    def text(self, row_id: int | None) -> tuple[str, int] | None:
        if row_id is None:
            return None
        return self.files.get(row_id // R, f"?{row_id // R}"), row_id % R

    def chunk(self, chunk_id: int) -> tuple[Any, ...]:
        if chunk_id < 0:
            return "doc", self.docs.get(-chunk_id // R), -chunk_id % R
        if chunk_id >= 1 << 60:
            return "commit", chunk_id - (1 << 60)
        if chunk_id >= 1 << 56:
            rest = chunk_id - (1 << 56)
            return "data", self.data.get(rest // R), rest % R
        return "code", self.files.get(chunk_id // R), chunk_id % R


def tables(conn: sqlite3.Connection, ids: Ids) -> dict[str, list[str]]:
    parts: dict[str, list[str]] = {}

    def table(name: str, sql: str, row: Callable[[tuple], tuple]) -> None:
        parts[name] = sorted(repr(row(values)) for values in conn.execute(sql))

    table("files", """SELECT path, language, size, mtime_ns, hash, line_count, status, note,
        text_indexed FROM files""", lambda r: r)  # fmt: skip
    table(
        "symbols",
        """SELECT id, file_id, name, qualified_name, kind, start_line, end_line, start_col,
        end_col, start_byte, end_byte, signature, parent_id, doc, is_definition,
        declaration_id, doc_text FROM symbols""",
        lambda r: (ids.symbol(r[0]), ids.files[r[1]], *r[2:12], ids.symbol(r[12]), r[13],
                   r[14], ids.symbol(r[15]), ids.text(r[16])),
    )  # fmt: skip
    table("refs", "SELECT file_id, line, name, symbol_id FROM refs",
          lambda r: (ids.files[r[0]], r[1], r[2], ids.symbol(r[3])))  # fmt: skip
    table(
        "code_text",
        """SELECT id, file_id, line_number, end_line, element_type, symbol_name, content,
        subwords, symbol_id FROM code_text""",
        lambda r: (ids.text(r[0]), ids.files[r[1]], *r[2:8], ids.symbol(r[8])),
    )
    table(
        "chunks",
        """SELECT id, file_id, doc_id, data_id, commit_id, kind, start_line, end_line, is_test
        FROM chunks""",
        lambda r: (ids.chunk(r[0]), ids.files.get(r[1]), ids.docs.get(r[2]),
                   ids.data.get(r[3]), r[4], *r[5:]),
    )  # fmt: skip
    table("chunk_texts", "SELECT id, texts FROM chunk_texts",
          lambda r: (ids.chunk(r[0]), hashlib.sha1(r[1]).hexdigest()))  # fmt: skip
    table("sections", "SELECT rowid, file, section, content, start_line, end_line FROM sections",
          lambda r: (r[0] % R, *r[1:]))  # fmt: skip
    table("headings", "SELECT id, file, text, level, start_line, end_line FROM headings",
          lambda r: (r[0] % R, *r[1:]))  # fmt: skip
    table("doc_files", "SELECT path, format, size, mtime_ns, hash, line_count FROM doc_files",
          lambda r: r)  # fmt: skip
    table("data_files", """SELECT path, format, size, mtime_ns, hash, records, note
        FROM data_files""", lambda r: r)  # fmt: skip
    table("data_values", "SELECT file_id, record, key, field, value, line FROM data_values",
          lambda r: (ids.data[r[0]], *r[1:]))  # fmt: skip
    table("symbol_ranks", "SELECT symbol_id, rank FROM symbol_ranks",
          lambda r: (ids.symbol(r[0]), round(r[1], 12)))  # fmt: skip
    table("file_ranks", "SELECT file_id, rank FROM file_ranks",
          lambda r: (ids.files[r[0]], round(r[1], 12)))  # fmt: skip
    table("name_stats", "SELECT * FROM name_stats", lambda r: r)
    table("meta", """SELECT key, value FROM meta WHERE key NOT IN
        ('indexed_at', 'index_seconds', 'rank_digests', 'rank_fingerprint')""", lambda r: r)  # fmt: skip
    table("rank_arrays", "SELECT name, dtype FROM rank_arrays", lambda r: r)
    return parts


def answers(conn: sqlite3.Connection, ids: Ids) -> dict[str, list[str]]:
    parts: dict[str, list[str]] = {}
    for query in QUERIES:
        match = " ".join(f'"{word}"' for word in query.split())
        for table, limit, key in (
            ("code_text_fts", 200, ids.text),
            ("chunks_fts", 200, ids.chunk),
            ("sections", 100, lambda rowid: rowid % R),
        ):
            # Every match, ties at the LIMIT broken by what the rowid points at, not by the
            # rowid: ids follow the order files are written in, which a change may move.
            sql = f"SELECT rowid, rank FROM {table} WHERE {table} MATCH ?"
            found = sorted(
                (round(rank, 9), repr(key(rowid))) for rowid, rank in conn.execute(sql, (match,))
            )
            parts[f"{table}:{query}"] = sorted(f"({at}, {rank!r})" for rank, at in found[:limit])
    for literal in LITERALS:
        parts[f"code_text_literal:{literal}"] = sorted(
            repr(ids.text(rowid))
            for (rowid,) in conn.execute(
                "SELECT rowid FROM code_text_literal WHERE content LIKE ?", (f"%{literal}%",)
            )
        )
    return parts


def commands(db: str, root: str) -> dict[str, list[str]]:
    parts: dict[str, list[str]] = {}
    for args in COMMANDS:
        run = subprocess.run(
            [sys.executable, "-m", "repomap", *args, "--json", "--no-refresh", "--db", db,
             "--root", root, "--limit", "50"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        try:
            answer = json.loads(run.stdout)
        except ValueError:
            parts["cli:" + " ".join(args)] = [run.stdout + run.stderr]
            continue
        answer.pop("took_ms", None)
        answer.get("meta", {}).pop("timings_ms", None)
        parts["cli:" + " ".join(args)] = [json.dumps(answer, sort_keys=True)]
    return parts


def digest_index() -> None:
    """The command (not `main`: `bench/run.py --all` runs each main() without arguments)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db")
    parser.add_argument("root", help="the indexed tree (for the CLI's answers)")
    parser.add_argument("--dump", help="write every row compared to this file")
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    ids = Ids(conn)
    parts = tables(conn, ids) | answers(conn, ids) | commands(args.db, args.root)
    total = hashlib.sha256()
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115
    for name, rows in parts.items():
        digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]
        total.update(digest.encode())
        print(f"{name:50s} {len(rows):8d} {digest}")
        if dump:
            dump.writelines(f"{name}\t{row}\n" for row in rows)
    if dump:
        dump.close()
    print("total", total.hexdigest()[:16])


if __name__ == "__main__":
    digest_index()
