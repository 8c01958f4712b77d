"""FTS5's bm25() over `chunks_fts`, computed with numpy from postings held in memory.

A long-running server (a `KeptReader`, so `Store.state` is set) reads the chunks' postings
once per index content (store/postings.py: ~1.5 s and ~23 MB of arrays on Django's 47,912
chunks, in a background thread while SQLite answers) and answers each question's lexical
candidates from them, instead of FTS5 scoring every chunk that holds any of the question's
words (7-15 ms on Django; ~0.5 ms from memory). The arithmetic is bm25()'s own
(sqlite/ext/fts5/fts5_aux.c: k1 1.2, b 0.75, the IDF floor 1e-6, the column weights summed per
instance, each phrase's term added in the question's order), so each score is the double SQLite
computes, and the order is the same: best first, ties by ascending rowid (the order FTS5 visits
rows in, which SQLite's sorter keeps). bench/bm25_parity.py checks it on the seven relevance
indexes. A one-query connection (the CLI) asks SQLite: reading the postings costs more than one
question saves.

A question's word that FTS5's tokenizer makes into more than one token (a phrase) is left to
SQLite: `scores` returns None and the caller runs the SQL.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from repomap import store
from repomap.errors import RepomapError
from repomap.languages import DATA_FORMATS, DOC_FORMATS
from repomap.store import ROWS_PER_FILE, Store
from repomap.store.chunk_texts import COMMIT_BASE, DATA_BASE
from repomap.store.postings import Postings, fingerprint, read_postings, tokenizer

if TYPE_CHECKING:
    from repomap.search.filters import Filters

TABLE = "chunks_fts"
K1 = 1.2  # bm25()'s constants
B = 0.75
IDF_FLOOR = 1e-6

_TRAITS_SQL = """SELECT id, coalesce(file_id, -1), coalesce(doc_id, -1), kind, is_test
FROM chunks ORDER BY id"""
_FILES_OF_LANGUAGE_SQL = "SELECT id FROM files WHERE language = ?"
_DOCS_OF_FORMAT_SQL = "SELECT id FROM doc_files WHERE format = ?"
_DATA_OF_FORMAT_SQL = "SELECT id FROM data_files WHERE format = ?"


@dataclass
class Prepared:
    """One index state's postings and, per posting row, what the filters and priors read."""

    postings: Postings
    norms: np.ndarray  # per row: k1 * (1 - b + b * D / avgdl), bm25()'s denominator part
    known: np.ndarray  # per row: a row of `chunks` (FTS5 rows without one are never answered)
    file_ids: np.ndarray  # per row: chunks.file_id, -1 for none
    doc_ids: np.ndarray  # per row: chunks.doc_id, -1 for none
    kinds: np.ndarray  # per row: index into kind_names
    kind_names: list[str]
    is_test: np.ndarray  # per row, bool
    weights: tuple[float, ...]
    seconds: float  # to read and prepare

    @property
    def nbytes(self) -> int:
        arrays = (self.norms, self.known, self.file_ids, self.doc_ids, self.kinds, self.is_test)
        return self.postings.nbytes + sum(array.nbytes for array in arrays)

    def save(self, path: Path, fingerprint: bytes) -> None:
        """Everything in one uncompressed .npz (what a build process hands its server)."""
        postings = self.postings
        encoded = [term.encode("utf-8", "surrogatepass") for term in postings.terms]
        spans = np.array(list(postings.terms.values()), dtype=np.int64).reshape(-1, 2)
        header = {
            "fingerprint": fingerprint.decode("ascii"), "kind_names": self.kind_names,
            "weights": self.weights, "total_rows": postings.total_rows,
            "total_tokens": postings.total_tokens, "tokenize": postings.tokenize,
            "seconds": self.seconds,
        }  # fmt: skip
        with open(path, "wb") as out:
            np.savez(
                out, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                names=np.frombuffer(b"".join(encoded), dtype=np.uint8),
                name_sizes=np.array([len(name) for name in encoded], dtype=np.int64), spans=spans,
                rowids=postings.rowids, sizes=postings.sizes, rows=postings.rows,
                counts=postings.counts, norms=self.norms, known=self.known,
                file_ids=self.file_ids, doc_ids=self.doc_ids, kinds=self.kinds,
                is_test=self.is_test,
            )  # fmt: skip

    @staticmethod
    def load(path: Path) -> tuple[bytes, Prepared]:
        """(the fingerprint of the content it was read from, the postings) from save()'s file."""
        with np.load(path, allow_pickle=False) as saved:
            header = json.loads(saved["header"].tobytes().decode())
            joined = saved["names"].tobytes()
            ends = np.cumsum(saved["name_sizes"]).tolist()
            names = [
                joined[start:end].decode("utf-8", "surrogatepass")
                for start, end in zip([0, *ends[:-1]], ends, strict=True)
            ]  # any token, whatever characters the tokenizer keeps in it
            spans = saved["spans"].tolist()
            terms = dict(zip(names, map(tuple, spans), strict=True))
            postings = Postings(
                rowids=saved["rowids"], sizes=saved["sizes"], terms=terms, rows=saved["rows"],
                counts=saved["counts"], total_rows=header["total_rows"],
                total_tokens=header["total_tokens"], tokenize=header["tokenize"],
            )  # fmt: skip
            made = Prepared(
                postings=postings, norms=saved["norms"], known=saved["known"],
                file_ids=saved["file_ids"], doc_ids=saved["doc_ids"], kinds=saved["kinds"],
                kind_names=header["kind_names"], is_test=saved["is_test"],
                weights=tuple(header["weights"]), seconds=header["seconds"],
            )  # fmt: skip
        return header["fingerprint"].encode("ascii"), made


def prepare(db: Store, weights: Sequence[float]) -> Prepared | None:
    """`db`'s postings and chunk traits, read in its snapshot; None when the table is missing."""
    started = time.perf_counter()
    postings = read_postings(db, TABLE)
    if postings is None or postings.total_rows <= 0:
        return None
    avgdl = float(postings.total_tokens) / float(postings.total_rows)
    norms = K1 * (1 - B + B * postings.sizes / avgdl)
    rows = db.conn.execute(_TRAITS_SQL).fetchall()
    if not rows:
        return None
    chunk_ids = np.array([row[0] for row in rows], dtype=np.int64)
    kind_names = sorted({row[3] for row in rows})
    code_of = {name: code for code, name in enumerate(kind_names)}
    at = np.minimum(np.searchsorted(chunk_ids, postings.rowids), len(chunk_ids) - 1)
    known = chunk_ids[at] == postings.rowids

    def column(index: int, dtype: type) -> np.ndarray:
        values: np.ndarray = np.array([row[index] for row in rows], dtype=dtype)
        return values[at]

    return Prepared(
        postings=postings,
        norms=norms,
        known=known,
        file_ids=column(1, np.int64),
        doc_ids=column(2, np.int64),
        kinds=np.array([code_of.get(row[3], 0) for row in rows], dtype=np.int32)[at],
        kind_names=kind_names,
        is_test=column(4, np.int64).astype(bool),
        weights=tuple(float(w) for w in weights),
        seconds=time.perf_counter() - started,
    )


def scores(
    db: Store, prepared: Prepared, terms: Sequence[str], filters: Filters, candidates: int
) -> dict[int, tuple[float, bool, str, int | None]] | None:
    """chunk id -> (BM25 score, is_test, kind, file id or None) of the best `candidates` chunks
    holding any of `terms`, as the SQL of search/code.py returns them; None when a term is a
    phrase to FTS5."""
    postings = prepared.postings
    phrases = _single_tokens(postings, terms)
    if phrases is None:
        return None
    if not phrases:
        return {}
    total = len(postings.rowids)
    score = np.zeros(total, dtype=np.float64)
    matched = np.zeros(total, dtype=bool)
    weights = np.asarray(prepared.weights[: postings.counts.shape[1]], dtype=np.float64)
    if len(weights) < postings.counts.shape[1]:  # bm25() weighs a column without a weight 1.0
        weights = np.append(weights, [1.0] * (postings.counts.shape[1] - len(weights)))
    for phrase in phrases:
        start, end = postings.terms.get(phrase, (0, 0))
        hits = end - start
        if not hits:
            continue
        weighed = idf(postings.total_rows, hits)
        rows = postings.rows[start:end]
        freq = postings.counts[start:end] @ weights  # exact: the weights are small integers
        score[rows] += weighed * ((freq * (K1 + 1.0)) / (freq + prepared.norms[rows]))
        matched[rows] = True
    found = np.flatnonzero(matched & prepared.known)
    found = found[_allowed(db, prepared, found, filters)]
    if len(found) > candidates:
        # The best `candidates`; of those tied with the last, the lowest rowids (FTS5's order).
        values = score[found]
        cut = np.partition(values, len(values) - candidates)[len(values) - candidates]
        above = found[values > cut]
        tied = found[values == cut][: candidates - len(above)]
        found = np.concatenate([above, tied])
    found = found[np.lexsort((postings.rowids[found], -score[found]))]
    return {
        chunk_id: (value, *trait)
        for chunk_id, value, trait in zip(
            postings.rowids[found].tolist(),
            score[found].tolist(),
            _traits_at(prepared, found),
            strict=True,
        )
    }


def traits(prepared: Prepared, chunk_ids: Sequence[int]) -> dict[int, tuple[bool, str, int | None]]:
    """chunk id -> (is_test, kind, file id or None) of those of `chunk_ids` the postings know
    (a chunk with a row in `chunks`): what search/code.py's SQL reads for the semantic
    candidates, from memory (~0.5 ms a question on Django)."""
    rowids = prepared.postings.rowids
    if not len(chunk_ids) or not len(rowids):
        return {}
    wanted = np.asarray(chunk_ids, dtype=np.int64)
    at = np.minimum(np.searchsorted(rowids, wanted), len(rowids) - 1)
    held = np.flatnonzero((rowids[at] == wanted) & prepared.known[at])
    return dict(zip(wanted[held].tolist(), _traits_at(prepared, at[held]), strict=True))


def _traits_at(prepared: Prepared, rows: np.ndarray) -> list[tuple[bool, str, int | None]]:
    """(is_test, kind, file id or None) of posting rows `rows`, as search/code.py's SQL reads
    them from `chunks`."""
    kind_names = prepared.kind_names
    return [
        (test, kind_names[code], None if file_id < 0 else file_id)
        for test, code, file_id in zip(
            prepared.is_test[rows].tolist(),
            prepared.kinds[rows].tolist(),
            prepared.file_ids[rows].tolist(),
            strict=True,
        )
    ]


def _single_tokens(postings: Postings, terms: Sequence[str]) -> list[str] | None:
    """Each term as the one token the index's tokenizer makes of it; None when one makes
    several (FTS5 then reads it as a phrase, which the postings cannot answer)."""
    split = tokenizer(postings.tokenize)
    phrases: list[str] = []
    for term in terms:
        tokens = split.tokens(term)
        if len(tokens) != 1:
            return None
        phrases.append(tokens[0])
    return phrases


def idf(total_rows: int, hits: int) -> float:
    """bm25()'s IDF of a phrase held by `hits` of `total_rows` rows, floored as bm25() does."""
    value = math.log((total_rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def coverage(
    prepared: Prepared, terms: Sequence[str], chunk_ids: Sequence[int]
) -> list[float] | None:
    """Per chunk of `chunk_ids`, the share of `terms` it holds, each term weighed by its IDF
    (search/code.py `word_coverage`, which asks SQLite the same); None when a term is a phrase
    to FTS5."""
    postings = prepared.postings
    phrases = _single_tokens(postings, terms)
    if phrases is None:
        return None
    ids = np.asarray(chunk_ids, dtype=np.int64)
    at = np.minimum(np.searchsorted(postings.rowids, ids), max(len(postings.rowids) - 1, 0))
    known = postings.rowids[at] == ids if len(postings.rowids) else np.zeros(len(ids), bool)
    held = np.zeros(len(ids), dtype=np.float64)
    weight = 0.0
    for phrase in phrases:
        start, end = postings.terms.get(phrase, (0, 0))
        value = idf(postings.total_rows, end - start)
        weight += value
        if end == start:
            continue
        rows = postings.rows[start:end]  # ascending
        place = np.minimum(np.searchsorted(rows, at), len(rows) - 1)
        held += value * ((rows[place] == at) & known)
    return (held / (weight or 1.0)).tolist()


def _allowed(db: Store, prepared: Prepared, rows: np.ndarray, filters: Filters) -> np.ndarray:
    """A mask over `rows` of the chunks the filters let through."""
    mask = np.ones(len(rows), dtype=bool)
    if filters.kinds is not None:
        codes = [code for code, name in enumerate(prepared.kind_names) if name in filters.kinds]
        mask &= np.isin(prepared.kinds[rows], codes)
    if filters.file_ids is not None or filters.doc_ids is not None:
        mask &= (
            np.isin(prepared.file_ids[rows], filters.file_ids or [])
            | np.isin(prepared.doc_ids[rows], filters.doc_ids or [])
            | np.isin(_data_ids(prepared, rows), filters.data_ids or [])
        )
    if filters.language is not None:
        if filters.language in DOC_FORMATS.values():
            ids = [i for (i,) in db.conn.execute(_DOCS_OF_FORMAT_SQL, (filters.language,))]
            mask &= np.isin(prepared.doc_ids[rows], ids)
        elif filters.language in DATA_FORMATS.values():
            ids = [i for (i,) in db.conn.execute(_DATA_OF_FORMAT_SQL, (filters.language,))]
            mask &= np.isin(_data_ids(prepared, rows), ids)
        else:
            ids = [i for (i,) in db.conn.execute(_FILES_OF_LANGUAGE_SQL, (filters.language,))]
            mask &= np.isin(prepared.file_ids[rows], ids)
    return mask


# --- one Prepared per index, the newest, made in the background for a server ------------------

_PREPARED: dict[tuple[Path, tuple[float, ...]], tuple[bytes, Prepared | None]] = {}
_BUILDING: dict[tuple[Path, tuple[float, ...]], threading.Thread] = {}
# A server whose index changed under it starts preparing the new content only once that
# content has lasted this long (as search/symbols.py: under `repomap serve --watch` each batch a
# re-index commits is new content, and preparing each would cost more than it saves).
SETTLE_SECONDS = 1.0
_SEEN: dict[Path, tuple[bytes, float]] = {}  # index -> (its newest fingerprint, first seen)
_LOCK = threading.Lock()
BUILD_TIMEOUT = 600.0  # seconds: a build process past this is stopped; SQLite answers
BUILD_PYTHON = sys.executable  # the interpreter of the build process: this one


def _data_ids(prepared: Prepared, rows: np.ndarray) -> np.ndarray:
    """Per posting row of `rows`, the data file its chunk is a record of (-1 for others): the
    chunk ids of data file n are DATA_BASE + n * ROWS_PER_FILE + ordinal (schema v15)."""
    ids = prepared.postings.rowids[rows]
    data = (ids >= DATA_BASE) & (ids < COMMIT_BASE)
    return np.where(data, (ids - DATA_BASE) // ROWS_PER_FILE, -1)


def prepared(
    db: Store, weights: Sequence[float], *, wait: bool = False, start: bool = True
) -> Prepared | None:
    """The postings of the index content `db`'s snapshot shows, or None while they are being
    read (by a process of its own, started and waited for by a thread: the caller asks SQLite
    meanwhile, ~1.5-2 s on Django), for a one-query connection (no `Store.state`: reading them
    costs more than one query saves), and when they could not be read for this content (an
    index without chunks; a failed read is not tried again until the content changes). `wait`
    waits for a read already running or started now (tests, benchmarks); without `start`, no
    read is started (a semantic search uses them if they are there, and needs none).

    Postings are matched to a snapshot by the FTS5 index's fingerprint (store/postings.py),
    read in that snapshot: any write to the index changes it, so stale postings never answer.
    """
    if db.state is None:
        return None
    print_now = db.per_content(f"{TABLE} fingerprint", lambda: fingerprint(db, TABLE))
    if print_now is None:
        return None
    key = (db.path, tuple(float(w) for w in weights))
    with _LOCK:
        held = _PREPARED.get(key)
        if held is not None and held[0] == print_now:
            return held[1]
        if not start:
            return None
        now = time.monotonic()
        seen, since = _SEEN.get(db.path, (print_now, now))
        if seen != print_now:
            since = now
        _SEEN[db.path] = (print_now, since)
        thread = _BUILDING.get(key)
        settled = held is None or now - since >= SETTLE_SECONDS
        if thread is None and settled:
            thread = threading.Thread(
                target=_build, args=(key, print_now), name="repomap-bm25-postings", daemon=True
            )
            _BUILDING[key] = thread
            thread.start()
    if wait and thread is not None:
        thread.join()
        with _LOCK:
            held = _PREPARED.get(key)
        if held is not None and held[0] == print_now:
            return held[1]
    return None


def _build(key: tuple[Path, tuple[float, ...]], asked: bytes) -> None:
    """Read the postings of the index at key's path as it is now, in a process of its own, and
    keep them. In a thread of the server, the reading held the GIL often enough to make each
    search meanwhile 3-6x slower (every SQLite call gives the GIL up and waits to get it back);
    a process costs ~0.2 s more CPU (Python and numpy start) and leaves the server's GIL alone.
    A read that fails is kept as None for the content it was `asked` for, so that it is not
    tried again at every search."""
    path, weights = key
    made: tuple[bytes, Prepared | None] = (asked, None)
    with tempfile.TemporaryDirectory(prefix="repomap-bm25-") as folder:
        out = Path(folder) / "postings.npz"
        command = [BUILD_PYTHON, "-m", "repomap.search.bm25", str(path), str(out),
                   *map(str, weights)]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, timeout=BUILD_TIMEOUT, check=False)
            if done.returncode == 0:
                made = Prepared.load(out)
        except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
            pass  # SQLite answers, as it does for an index without chunks
    with _LOCK:
        _PREPARED[key] = made  # replaces the older content's
        _BUILDING.pop(key, None)


def _main(argv: list[str]) -> int:
    """`python -m repomap.search.bm25 DB OUT WEIGHT...`: the postings of DB's chunks as they are
    now, saved to OUT; exit 1 when there are none (no chunks, or a table FTS5 cannot read)."""
    db_path, out, *weights = argv
    try:
        with store.reading(Path(db_path)) as db:
            found = fingerprint(db, TABLE)  # in the read's own snapshot
            made = prepare(db, [float(w) for w in weights]) if found is not None else None
    except RepomapError as error:
        sys.stderr.write(f"{error}\n")
        return 2
    if made is None or found is None:
        return 1
    made.save(Path(out), found)
    return 0


def forget() -> None:
    """Drop every prepared index, after any build running finishes (tests, benchmarks)."""
    with _LOCK:
        running = list(_BUILDING.values())
    for thread in running:
        thread.join()
    with _LOCK:
        _PREPARED.clear()
        _SEEN.clear()


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
