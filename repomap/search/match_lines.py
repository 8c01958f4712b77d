"""The lines of a search result that hold the question's words, as rg prints a matching line.

A result's snippet is its chunk's head (signature, docstring): what the chunk is, not why it
matched. A reader (or an agent deciding which result to open) wants the line that does the
thing: `delay = min(cap, base * 2 ** attempt)` for "where is the retry backoff computed". So
each result carries up to MAX_LINES lines of its range that hold the most of the question's
distinct words, by the index's own tokenizer (porter-stemmed: "parsing" holds `parse`), with
identifiers split into their words (`parseHeaderLines` holds "header").

A result's own text only: a module's lines outside the definitions in it (those are results
of their own), a class's or an impl's outside its members' bodies (their signatures are its
text). Lines the snippet shows already add nothing; two lines of the same text are one.

Read from the file on disk at search time (the index keeps a chunk's words, not its lines),
and only when the file's bytes are those indexed: a changed file would show wrong lines, so it
shows none (as `repomap show` refuses it) and is named among `changed`, for the answer to say
so. Commits have no file; a result found by meaning alone may hold none of the words: both have
no lines.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from repomap import store, textfile
from repomap.search import morphology
from repomap.store import ROWS_PER_FILE
from repomap.store.chunk_texts import DATA_BASE
from repomap.store.postings import Tokenizer, chunks_tokenizer
from repomap.subwords import split_identifier

if TYPE_CHECKING:
    from repomap.store import Store


class Result(Protocol):
    """What this module reads of a search result (search/code.py's CodeHit)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def chunk_id(self) -> int: ...


Wanted = tuple[list[frozenset[str]], tuple[str, ...]] | None

_RUN = re.compile(r"[A-Za-z0-9]+")
_ENDS = re.compile(r"^\W+|\W+$")
_WHOLE_KINDS = frozenset({"module", "section", "data"})  # chunks that are no definition
# Chunks whose members are chunks of their own: a module's definitions are not its text at all,
# a record's members are but for their signatures.
_CONTAINERS = frozenset(
    {"class", "struct", "union", "enum", "trait", "impl", "interface", "namespace", "protocol"}
)
_NESTED_SQL = """SELECT start_line, end_line FROM chunks
    WHERE id >= :first AND id < :last AND id != :id AND start_line >= :start AND end_line <= :end"""

MAX_LINES = 2  # per result: the best line, and a second for a question of several words
SCANNED = 2_000  # lines of one result read at most (a long module or section's start)
WIDTH = 200  # characters of a line shown, its indentation dropped
_INDEXED_SQL = """SELECT hash, size, mtime_ns FROM files WHERE path = :path
    UNION ALL SELECT hash, size, mtime_ns FROM doc_files WHERE path = :path
    UNION ALL SELECT hash, size, mtime_ns FROM data_files WHERE path = :path LIMIT 1"""


@dataclass(frozen=True)
class MatchLine:
    line: int  # 1-based, in the file
    text: str

    def as_dict(self) -> dict[str, int | str]:
        return {"line": self.line, "text": self.text}


@dataclass(frozen=True)
class Found:
    lines: list[tuple[MatchLine, ...]]  # per result, in the order given
    changed: list[str]  # results' files changed since they were indexed: no lines shown


def match_lines(db: Store, hits: Sequence[Result], words: Sequence[str]) -> Found:
    """For each of `hits`, the lines of its range that hold the most of the question's `words`
    (query_terms: identifiers split, stop words dropped)."""
    nothing = Found([() for _ in hits], [])
    if not hits or not words:
        return nothing
    split = chunks_tokenizer(db)
    wanted = _word_tokens(split, words)
    if wanted is None:
        return nothing
    groups, prefixes = wanted
    root = store.indexed_root(db, Path("."))
    files: dict[str, list[str] | None] = {}
    changed: dict[str, None] = {}
    held: dict[int, dict[int, int]] = {}  # hit -> line number -> question words it holds
    for place, hit in enumerate(hits):
        if hit.kind == "commit" or not hit.start_line:
            continue
        if hit.path not in files:
            files[hit.path] = _indexed_lines(db, root, hit.path)
        lines = files[hit.path]
        if lines is None:
            if (root / hit.path).is_file():
                changed[hit.path] = None
            continue
        # a definition's first line is its signature, which the snippet shows already
        first = hit.start_line + (hit.kind not in _WHOLE_KINDS)
        last = min(hit.end_line, len(lines), hit.start_line + SCANNED - 1)
        others = _members(db, hit)
        for number in _lines_holding(lines, first, last, prefixes) if first <= last else ():
            if number in others:
                continue
            tokens = _tokens(lines[number - 1], prefixes, split)
            if count := sum(1 for group in groups if not group.isdisjoint(tokens)):
                held.setdefault(place, {})[number] = count
    shown = [
        _best(files[hit.path], held[place], hit.snippet, prefixes) if place in held else ()
        for place, hit in enumerate(hits)
    ]
    return Found(shown, list(changed))


def _members(db: Store, hit: Result) -> set[int]:
    """The lines of a module's or a record's range that are another chunk's own: a module's
    definitions, a record's members' bodies (their first lines, signatures, are its text)."""
    if hit.kind != "module" and hit.kind not in _CONTAINERS:
        return set()
    if not 0 <= hit.chunk_id < DATA_BASE:  # a code file's chunk
        return set()
    first = hit.chunk_id - hit.chunk_id % ROWS_PER_FILE
    nested = db.conn.execute(
        _NESTED_SQL,
        {"first": first, "last": first + ROWS_PER_FILE, "id": hit.chunk_id,
         "start": hit.start_line, "end": hit.end_line},
    )  # fmt: skip
    lines: set[int] = set()
    skip_signature = hit.kind != "module"
    for start, end in nested:
        lines.update(range(start + skip_signature, end + 1))
    return lines


def _lines_holding(lines: list[str], start: int, last: int, prefixes: tuple[str, ...]) -> list[int]:
    """The numbers of the lines in [start, last] that hold one of `prefixes` (any case), by one
    scan of their text per prefix."""
    block = "\n".join(lines[start - 1 : last]).lower()
    found: set[int] = set()
    for prefix in prefixes:
        number, counted = start, 0  # the line number at offset `counted`
        at = block.find(prefix)
        while at >= 0:
            number += block.count("\n", counted, at)
            counted = at
            found.add(number)
            after = block.find("\n", at)
            at = -1 if after < 0 else block.find(prefix, after + 1)
    return sorted(found)


def _tokens(line: str, prefixes: tuple[str, ...], split: Tokenizer) -> set[str]:
    """The index's tokens of the line's words that start with one of `prefixes`: each run of
    letters and digits in lower case (`rfc3339`, `parseheaderlines`) and a mixed-case
    identifier's words (`parseHeaderLines` -> parse, header, lines), as the index has them."""
    tokens: set[str] = set()
    for run in _RUN.findall(line):
        lower = run.lower()
        if lower.startswith(prefixes):
            tokens.update(split.tokens(lower))
        if not run.islower() and not run.isdigit():
            for part in split_identifier(run):
                if part.startswith(prefixes):
                    tokens.update(split.tokens(part))
    return tokens


def _word_tokens(split: Tokenizer, words: Sequence[str]) -> Wanted:
    """Per question word, the tokens that stand for it (its own and its related forms'); and
    the prefixes a word must start with to stand for one: a porter stem but its last letter
    starts every word that stems to it (`retry` -> `retri`)."""
    groups = []
    prefixes: set[str] = set()
    for word in words:
        if word.isdigit() and len(word) < 3:
            continue  # `0` of "1.0": every other line holds one
        forms = [word, *morphology.related_forms(word)]
        tokens = frozenset(token for form in forms for token in split.tokens(form))
        if tokens:
            groups.append(tokens)
            # a stem's last letter may differ from the word's (`retry` -> `retri`)
            prefixes.update(token[:-1] if len(token) > 3 else token for token in tokens)
    if not groups:
        return None
    return groups, tuple(sorted(prefixes))


def _indexed_lines(db: Store, root: Path, path: str) -> list[str] | None:
    """The file's lines, if its bytes are the ones indexed; else None. A file whose size and
    modification time are those indexed is taken as unchanged (the index's own rule) and its
    lines are kept for the next search (a server's answers often share files)."""
    row = db.conn.execute(_INDEXED_SQL, {"path": path}).fetchone()
    if row is None:
        return None
    indexed, size, mtime_ns = row
    file = root / path
    try:
        stat = file.stat()
    except OSError:
        return None
    if (stat.st_size, stat.st_mtime_ns) == (size, mtime_ns):
        return _lines_of(str(file), size, mtime_ns, indexed)
    return read_lines(file, indexed)


@functools.lru_cache(maxsize=256)
def _lines_of(file: str, size: int, mtime_ns: int, indexed: str) -> list[str] | None:
    """The lines of a file whose size and modification time are those indexed: unchanged by
    the index's own rule, so not hashed again (a quarter of the reading's time), and kept by
    what identifies that content. `indexed` keys a re-indexed file's new content apart."""
    return read_lines(Path(file), None)


def read_lines(file: Path, indexed: str | None) -> list[str] | None:
    """The file's lines as the index decodes it (a BOM, UTF-16, a PEP 263 coding line), if its
    hash is `indexed` (None: taken as unchanged); None when it is gone or changed."""
    try:
        raw = file.read_bytes()
    except OSError:
        return None
    if indexed is not None and textfile.content_hash(raw) != indexed:
        return None
    return textfile.text(raw).split("\n")  # a line's \r is dropped when shown


def _best(
    lines: list[str] | None, held: dict[int, int], snippet: str, prefixes: tuple[str, ...]
) -> tuple[MatchLine, ...]:
    """The lines holding the most question words, at most MAX_LINES, in file order; ties go to
    the earlier line. A line the snippet shows already (a signature's or docstring's) adds
    nothing, nor one of the same text as a line taken: left out."""
    assert lines is not None  # a hit's lines were tokenized only when its file was read
    shown = snippet.removesuffix("…")
    best: dict[str, int] = {}
    for number in sorted(held, key=lambda number: (-held[number], number)):
        text = lines[number - 1].strip()
        if text not in best and _words(text) not in shown:
            best[text] = number
            if len(best) == MAX_LINES:
                break
    return tuple(
        MatchLine(number, _shown(text, prefixes))
        for text, number in sorted(best.items(), key=lambda item: item[1])
    )


def _words(line: str) -> str:
    """The line as the snippet has it: spaces collapsed, without the comment or docstring
    marks and punctuation at its ends (`/// Returns x.` -> `Returns x`)."""
    return _ENDS.sub("", " ".join(line.split()))


def _shown(text: str, prefixes: tuple[str, ...]) -> str:
    """The line without its indentation, at most WIDTH characters: a long one around its first
    question word, so the word that matched is shown."""
    if len(text) <= WIDTH:
        return text
    lower = text.lower()
    at = min((found for p in prefixes if (found := lower.find(p)) >= 0), default=0)
    start = max(0, min(at - WIDTH // 4, len(text) - (WIDTH - 2)))
    window = text[start : start + WIDTH - 2 if start else WIDTH - 1]
    return ("…" if start else "") + window + ("…" if start + len(window) < len(text) else "")
