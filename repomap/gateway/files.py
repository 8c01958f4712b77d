"""The gateway: find your way around ROOT without reading whole files.

Python API (the CLI and the MCP server call these; each returns dataclasses, nothing prints):

- `resolve_path(root, path)`: the one check every path argument goes through. Relative paths,
  `..` and absolute paths are accepted only while they stay inside ROOT, symbolic links
  included; anything else raises OutsideRoot.
- `open_file(root, path, max_lines=None, lines=None)`: a file's text (or bytes), or a line range
  of it (`parse_line_range('10:20')`), optionally cut to `max_lines`.
- `sources(root, directory=None, depth=None, pattern=None, limit=100)`: the tree of files
  (ignore rules applied), directories first, collapsed below `depth`.
- `find_files(root, query, limit=100, ignore_case=False)`: paths containing a literal substring.
- `outline(db, root, path=None, level=None)`: headings of Markdown files and symbols of code
  files from the index (never by re-parsing), as one tree per file, files in path order.
- `truncate(text, max_lines)`: the `--max-lines` rule shared by every command.

Paths in results are relative to ROOT with `/` separators. Ordering is by code point, which for
UTF-8 paths is also their bytewise order.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import groupby, islice
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from repomap import config, paths, store, textfile
from repomap.errors import BadArgument, OutsideRoot, PathNotFound, StaleIndex
from repomap.index.discover import read_file
from repomap.index.readable import indexed_source
from repomap.index.secrets import is_secret_file
from repomap.index.signatures import impl_header, specialized_name
from repomap.languages import language_of
from repomap.limits import check_limit

if TYPE_CHECKING:
    from repomap.store import Store

DEFAULT_LIMIT = 100


def more_lines(count: int) -> str:
    """`... (N more lines)`, the marker of lines left out (`1 more line`)."""
    return f"... ({count} more line{'' if count == 1 else 's'})"


# --- paths -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InsidePath:
    """A path checked to lie inside ROOT."""

    path: Path  # absolute, symbolic links resolved: what to read
    rel_path: str  # relative to ROOT as given (`..` folded, links kept), "" for ROOT itself
    real_rel_path: str  # relative to ROOT after resolving links


def resolve_path(root: Path, raw: str | os.PathLike[str]) -> InsidePath:
    """`raw` (relative to ROOT, or absolute) checked to stay inside ROOT, links followed."""
    text = os.fspath(raw)
    if "\0" in text:
        raise BadArgument(f"{text!r} is not a valid path")
    root = root.resolve()
    joined = root / text  # an absolute `text` replaces root
    folded = Path(os.path.normpath(joined))
    if not _is_inside(folded, root):
        raise OutsideRoot(
            f"{text} is outside the repository root {root}; give a path inside it, relative to it"
        )
    try:
        real = joined.resolve()
    except (OSError, RuntimeError) as error:  # a symbolic link loop
        raise BadArgument(f"{text} cannot be resolved ({error})") from None
    if not _is_inside(real, root):
        raise OutsideRoot(
            f"{text} leads through a symbolic link to {real}, outside the repository root {root}; "
            "repomap only reads files inside the root"
        )
    return InsidePath(real, _relative(folded, root), _relative(real, root))


def _is_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _relative(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return "" if rel == "." else rel


def existing_file(root: Path, raw: str) -> InsidePath:
    """resolve_path() for a path that must name a regular file."""
    inside = resolve_path(root, raw)
    found = _stat(inside, raw)
    if found is not None and stat.S_ISDIR(found.st_mode):
        if not inside.rel_path:  # `.`, `""`: the root itself
            raise BadArgument("the root is a directory; `repomap sources` lists what is in it")
        raise BadArgument(
            f"{raw} is a directory; `repomap sources --dir {raw}` lists what is in it"
        )
    if found is None:
        raise PathNotFound(
            f"{raw} does not exist under {root.resolve()}; "
            f"`repomap files {Path(raw).name}` searches file names"
        )
    if not stat.S_ISREG(found.st_mode):  # a FIFO or a device would block or never end
        raise BadArgument(f"{raw} is not a regular file")
    if is_secret_file(inside.rel_path) or is_secret_file(inside.real_rel_path):
        raise BadArgument(
            f"{raw} is a credentials file (.env, a key or a credential store); "
            "repomap never indexes or serves those"
        )
    return inside


def existing_dir(root: Path, raw: str) -> InsidePath:
    """resolve_path() for a path that must name a directory."""
    inside = resolve_path(root, raw)
    found = _stat(inside, raw)
    if found is None:
        raise PathNotFound(f"{raw} does not exist under {root.resolve()}")
    if not stat.S_ISDIR(found.st_mode):
        raise BadArgument(f"{raw} is a file, not a directory; `repomap open {raw}` shows it")
    return inside


def _stat(inside: InsidePath, raw: str) -> os.stat_result | None:
    """What lies at a path (links followed), None when nothing does; a name the system cannot
    look up (a part over 255 bytes: Path.is_dir() raised it) is a clear error."""
    try:
        return inside.path.stat()
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise BadArgument(f"{raw[:200]} cannot be read: {error.strerror}") from None


# --- truncation ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Truncated:
    text: str  # the first max_lines lines, then `... (N more lines)` when any were cut
    more_lines: int  # lines left out


def truncate(text: str, max_lines: int | None) -> Truncated:
    """Keep `max_lines` lines of `text` and append `... (N more lines)` for the rest."""
    if max_lines is None:
        return Truncated(text, 0)
    lines = text.split("\n")  # \n only, as every line number in the index counts them
    if lines[-1] == "":
        lines.pop()
    more = len(lines) - max_lines
    if more <= 0:
        return Truncated(text, 0)
    shown = "".join(line + "\n" for line in lines[:max_lines])
    return Truncated(f"{shown}{more_lines(more)}\n", more)


# --- open ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineRange:
    """Lines `first` to `last` (1-based, inclusive); `last` None: to the end of the file."""

    first: int
    last: int | None = None


_LINE_RANGE = re.compile(r"(\d*)(?:(:)(\d*))?")


def parse_line_range(text: str) -> LineRange:
    """`A:B`, `A:` (to the end), `:B` (from the start) or `A` (that line), as `--lines` takes."""
    match = _LINE_RANGE.fullmatch(text.strip())
    first, colon, last = match.groups() if match else ("", None, None)
    numbers = [int(number) for number in (first, last) if number]
    if not numbers or 0 in numbers:
        raise BadArgument(
            f"--lines takes A:B, A: or :B with line numbers from 1 (e.g. 10:20), not {text!r}"
        )
    lines = LineRange(int(first or 1), int(last) if last else (None if colon else int(first)))
    if lines.last is not None and lines.last < lines.first:
        raise BadArgument(f"--lines {text.strip()} ends before it starts")
    return lines


@dataclass(frozen=True, slots=True)
class FileView:
    path: str  # relative to ROOT
    content: bytes  # UTF-8 if the file is text (textfile.decode), else as on disk; maybe cut
    line_count: int  # the whole file's
    more_lines: int  # lines (of the range, if one was asked for) left out by max_lines
    first_line: int = 1  # the line `content` starts at

    @property
    def text(self) -> str:
        """The content as text (invalid UTF-8 replaced), with the truncation marker if any."""
        text = self.content.decode("utf-8", errors="replace")
        return text + (f"{more_lines(self.more_lines)}\n" if self.more_lines else "")


READ_CHUNK = 1 << 20


def open_file(
    root: Path, path: str, max_lines: int | None = None, lines: LineRange | None = None
) -> FileView:
    """A file inside ROOT, or its `lines`, optionally cut to `max_lines` lines: its text in
    UTF-8 when textfile's rule reads it (BOMs, UTF-16, a PEP 263 encoding line), else its bytes.

    With `max_lines`, only those lines are kept in memory; the rest is streamed to count it.
    """
    inside = existing_file(root, path)
    try:
        with open(inside.path, "rb") as file:
            if lines is not None:
                return _line_range(file, inside.rel_path, lines, max_lines)
            if max_lines is None:
                content = _as_text(file.read())
                return FileView(inside.rel_path, content, textfile.line_count(content), 0)
            # Ends at EOF (a count of readline() calls grew a list of b"" to gigabytes).
            shown = list(islice(file, min(max_lines, sys.maxsize)))
            content = _as_text(b"".join(shown))
            more, complete = 0, True  # complete: the rest so far ends at a line end
            while chunk := file.read(READ_CHUNK):
                more += chunk.count(b"\n")
                complete = chunk.endswith(b"\n")
            more += not complete
    except OSError as error:
        raise PathNotFound(f"cannot read {path}: {error.strerror or error}") from None
    return FileView(inside.rel_path, content, textfile.line_count(content) + more, more)


HEAD_BYTES = 4096  # what decides a file's encoding: a BOM, a PEP 263 line in its first two


def _line_range(file: BinaryIO, rel_path: str, lines: LineRange, max_lines: int | None) -> FileView:
    """`lines` of an open file, at most `max_lines` of them; every line is counted."""
    head = file.read(HEAD_BYTES)
    file.seek(0)
    last = lines.last or sys.maxsize
    keep = last - lines.first + 1 if max_lines is None else min(max_lines, last - lines.first + 1)
    shown: list[bytes] = []
    total = 0
    for total, line in enumerate(file, 1):  # a last line without a newline counts too
        if lines.first <= total <= last and len(shown) < keep:
            shown.append(line)
    if lines.first > max(total, 1):
        raise BadArgument(f"line {lines.first} is past the end of {rel_path} ({total} lines)")
    more = min(last, total) - lines.first + 1 - len(shown)
    content = _as_text(b"".join(shown), head)
    return FileView(rel_path, content, total, max(more, 0), lines.first)


def _as_text(raw: bytes, head: bytes | None = None) -> bytes:
    """UTF-8 as the index reads the file; bytes no rule reads (binary) as they are."""
    source, _ = textfile.decode(raw, head)
    return raw if source is None else source


# --- sources ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SourceEntry:
    path: str  # relative to ROOT; directories end with "/"
    name: str
    kind: str  # dir | file
    depth: int  # 1 for the entries directly in the listed directory
    files: int  # files under a directory (recursively, after --pattern); 1 for a file
    expanded: bool  # a directory whose entries follow; False: shown as `name/ (N files)`


@dataclass(frozen=True, slots=True)
class SourceTree:
    directory: str  # the listed directory, relative to ROOT ("" for ROOT)
    depth: int  # how many levels are shown
    entries: list[SourceEntry]
    more: int  # entries cut by the limit
    total_files: int

    @property
    def truncated(self) -> bool:
        return self.more > 0


@dataclass(slots=True)
class _Dir:
    dirs: dict[str, _Dir] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    count: int = 0


def sources(
    root: Path,
    directory: str | None = None,
    depth: int | None = None,
    pattern: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> SourceTree:
    """The files under ROOT (or `directory`), ignore rules applied, as a tree.

    Directories come before files at each level, each group in bytewise order. Directories
    deeper than `depth` are collapsed to `name/ (N files)`. Without `depth`, the deepest level
    whose whole tree fits in `limit` entries is shown. `pattern` keeps the files it matches, a
    path filter in repomap's one dialect (paths.py): a glob, a folder, a file or a path tail.
    """
    check_limit(limit, maximum=None)
    from repomap.index.discover import walk  # pathspec is loaded only by the commands that walk

    base = existing_dir(root, directory).real_rel_path if directory else ""
    prefix = f"{base}/" if base else ""
    wanted = paths.parse(pattern, root)
    tree = _Dir()
    under = [found.rel_path for found in walk(root).files if found.rel_path.startswith(prefix)]
    for rel_path in paths.select(wanted, under):
        _add(tree, rel_path[len(prefix) :].split("/"))
    if depth is None:
        depth = _fitting_depth(tree, limit)
    entries: list[SourceEntry] = []
    _list(tree, prefix, 1, depth, entries)
    return SourceTree(base, depth, entries[:limit], max(0, len(entries) - limit), tree.count)


def _add(tree: _Dir, parts: list[str]) -> None:
    node = tree
    node.count += 1
    for part in parts[:-1]:
        node = node.dirs.setdefault(part, _Dir())
        node.count += 1
    node.files.append(parts[-1])


def _count_entries(node: _Dir, depth: int) -> int:
    count = len(node.dirs) + len(node.files)
    if depth > 1:
        count += sum(_count_entries(child, depth - 1) for child in node.dirs.values())
    return count


def _max_depth(node: _Dir) -> int:
    return 1 + max((_max_depth(child) for child in node.dirs.values()), default=0)


def _fitting_depth(tree: _Dir, limit: int) -> int:
    depth = 1
    deepest = _max_depth(tree)
    while depth < deepest and _count_entries(tree, depth + 1) <= limit:
        depth += 1
    return depth


def _list(node: _Dir, prefix: str, level: int, depth: int, out: list[SourceEntry]) -> None:
    for name in sorted(node.dirs):
        child = node.dirs[name]
        expanded = level < depth
        out.append(SourceEntry(f"{prefix}{name}/", name, "dir", level, child.count, expanded))
        if expanded:
            _list(child, f"{prefix}{name}/", level + 1, depth, out)
    for name in sorted(node.files):
        out.append(SourceEntry(f"{prefix}{name}", name, "file", level, 1, False))


# --- files -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileMatches:
    query: str
    paths: list[str]
    total: int  # matches before the limit
    by_folder: bool = False  # no file's name held the query: the files of folders that do

    @property
    def truncated(self) -> bool:
        return self.total > len(self.paths)


FOLDER_NOTE = "no file name holds {!r}: these are the files of the folders whose name holds it"


def find_files(
    root: Path,
    query: str,
    limit: int = DEFAULT_LIMIT,
    ignore_case: bool = False,
    path: str | None = None,
) -> FileMatches:
    """Files under ROOT (ignore rules applied) whose name contains `query`, in path order.

    The match is a literal substring on code points (no Unicode normalization); a query
    containing `/` is matched against the whole path relative to ROOT. A query with `*`, `?`
    or `[` also matches as a glob, as `--path` reads one (`*.rs`, `src/**/test_*.py`): `*.c`
    found nothing, and said so. `path` keeps only the files under a path filter (paths.py).
    """
    if not query:
        raise BadArgument("the query is empty; give part of a file name")
    check_limit(limit, maximum=None)
    from repomap.index.discover import walk

    needle = query.casefold() if ignore_case else query
    wanted = paths.parse(path, root)
    candidates = paths.select(wanted, (found.rel_path for found in walk(root).files))
    globbed: set[str] = set()
    if paths.is_glob(query) and not query.lstrip().startswith("!"):
        pattern = paths.parse(needle)
        folded: dict[str, list[str]] = {}  # `Main.C` and `main.c` fold alike: both kept
        for candidate in candidates:
            folded.setdefault(candidate.casefold() if ignore_case else candidate, []).append(
                candidate
            )
        globbed = {path for key in paths.select(pattern, folded) for path in folded[key]}
    matches = []
    for rel_path in candidates:
        subject = rel_path if "/" in query else rel_path.rsplit("/", 1)[-1]
        if rel_path in globbed or needle in (subject.casefold() if ignore_case else subject):
            matches.append(rel_path)
    by_folder = not matches and "/" not in query and not globbed
    if by_folder:
        # `files debian` found nothing though debian/ holds 40 files (a search user): a name
        # no file holds may be a folder's, whose files are then the answer (said so)
        for rel_path in candidates:
            folders = rel_path.rsplit("/", 1)[0] if "/" in rel_path else ""
            if needle in (folders.casefold() if ignore_case else folders):
                matches.append(rel_path)
    matches.sort()
    return FileMatches(query, matches[:limit], len(matches), by_folder and bool(matches))


# --- outline ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    depth: int  # 1 for top-level symbols and for headings without a parent heading
    kind: str  # "heading", or the symbol kind (class, function, method, ...)
    name: str
    level: int  # heading level 1-6; for symbols, equal to depth
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class FileOutline:
    path: str
    language: str  # markdown | text | python | rust | c | cpp; a data file's format (json, csv...)
    entries: list[OutlineEntry]


@dataclass(frozen=True, slots=True)
class Outline:
    files: list[FileOutline]
    changed: list[str]  # files whose size or mtime differ from the index: run `repomap index`


OUTLINE_FILES_FILTER = "IN (SELECT value FROM json_each(:paths))"


def outline_symbols_sql(filtered: bool) -> str:
    """Symbols in file and line order; `filtered`: only the files listed in :paths (JSON)."""
    where = f"WHERE f.path {OUTLINE_FILES_FILTER}" if filtered else ""
    # A Rust impl by its header's names; a C++ `namespace a::b` as written, not as `b`.
    return f"""SELECT f.path, s.id, s.parent_id, s.kind,
        CASE WHEN s.kind = 'impl' THEN s.qualified_name
             WHEN s.kind = 'namespace' AND s.signature GLOB 'namespace *::*'
             THEN substr(s.signature, 11) ELSE s.name END, s.start_line, s.end_line,
        s.start_byte, s.end_byte, s.signature
        FROM files f JOIN symbols s ON s.file_id = f.id {where}
        ORDER BY f.path, s.start_line, s.end_line DESC, s.id"""


def outline_headings_sql(filtered: bool) -> str:
    where = f"WHERE file {OUTLINE_FILES_FILTER}" if filtered else ""
    return f"""SELECT file, text, level, start_line, end_line FROM headings {where}
        ORDER BY file, start_line"""


OUTLINE_FILES_SQL = """SELECT path, language, size, mtime_ns FROM files
    UNION ALL SELECT path, format, size, mtime_ns FROM doc_files"""
OUTLINE_DATA_FILE_SQL = "SELECT path, format, size, mtime_ns FROM data_files WHERE path = ?"
# A data file's records in file order: its key paths (JSON, TOML, YAML) or fields (CSV rows,
# JSON-lines objects), and the line each starts on when the parser tells (YAML, CSV, JSON lines).
OUTLINE_DATA_SQL = """SELECT v.key, v.field, v.line FROM data_values v
    JOIN data_files f ON f.id = v.file_id WHERE f.path = ? ORDER BY v.id"""
_ROW_FORMATS = frozenset({"csv", "tsv", "jsonl"})  # a record's structure is in `field`
# The parts of a key path as the indexer writes it: `.name`, `[3]`, `["a name.with dots"]`.
_KEY_PART = re.compile(r'\.?([^.\["]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


class _Indexed(NamedTuple):
    """What the index holds of a file, code or docs (OUTLINE_FILES_SQL but the path)."""

    language: str  # the format of a doc file: markdown | text
    size: int
    mtime_ns: int


# An outline_symbols_sql() row: path, id, parent_id, kind, name, start_line, end_line,
# start_byte, end_byte, signature.
_SymbolRow = tuple[str, int, int | None, str, str, int, int, int, int, str]
# An outline_headings_sql() row: file, text, level, start_line, end_line.
_HeadingRow = tuple[str, str, int, int, int]


def _symbol_file(row: _SymbolRow) -> str:
    file_path = row[0]
    return file_path


def _heading_file(row: _HeadingRow) -> str:
    file_path, _, _, _, _ = row
    return file_path


def outline(db: Store, root: Path, path: str | None = None, level: int | None = None) -> Outline:
    """Headings and symbols per file under `path` (a file, a directory, or all of ROOT)."""
    if level is not None and level < 1:
        raise BadArgument("the outline level must be at least 1")
    data = _data_file(db, root, path)
    if data is not None:
        keys = _data_entries(db.conn.execute(OUTLINE_DATA_SQL, (data[0],)), data[1], level)
        one = {data[0]: _Indexed(*data[1:])}
        return Outline([FileOutline(data[0], data[1], keys)], _changed(root, [data[0]], one))
    indexed = {
        file_path: _Indexed(language, size, mtime_ns)
        for file_path, language, size, mtime_ns in db.conn.execute(OUTLINE_FILES_SQL)
    }
    wanted, single = _outline_scope(db, root, path, indexed)
    filtered = path is not None
    params = {"paths": json.dumps(sorted(wanted))} if filtered else {}
    entries: dict[str, list[OutlineEntry]] = {p: [] for p in wanted}
    symbols = db.conn.execute(outline_symbols_sql(filtered), params)
    for file_path, rows in groupby(symbols, key=_symbol_file):
        entries[file_path] = _symbol_entries(list(rows), level)
    headings = db.conn.execute(outline_headings_sql(filtered), params)
    for file_path, rows in groupby(headings, key=_heading_file):
        entries[file_path] = _heading_entries(rows, level)
    files = [
        FileOutline(p, indexed[p].language, entries[p])
        for p in sorted(entries)
        if entries[p] or single
    ]
    return Outline(files, _changed(root, [f.path for f in files], indexed))


def _data_file(db: Store, root: Path, path: str | None) -> tuple[str, str, int, int] | None:
    """(path, format, size, mtime_ns) when `path` names one indexed data file, else None."""
    if path is None:
        return None
    inside = resolve_path(root, path)
    if inside is None or not inside.path.is_file():
        return None
    for candidate in (inside.rel_path, inside.real_rel_path):
        row = db.conn.execute(OUTLINE_DATA_FILE_SQL, (candidate,)).fetchone()
        if row is not None:
            return row[0], row[1], row[2], row[3]
    return None


def _data_entries(
    rows: Iterable[tuple[str, str, int | None]], data_format: str, max_depth: int | None
) -> list[OutlineEntry]:
    """A data file's shape: each key path once, array positions folded (`steps[].run`), nested
    under its parents in the order first met: `object`s, `array`s (`steps[]`) and leaves, each a
    `key` (a `column` in CSV). Lines are the first and last record under it (0: not known, as
    in JSON and TOML)."""
    spans: dict[tuple[str, ...], list[int]] = {}
    leaves: set[tuple[str, ...]] = set()
    parents: set[tuple[str, ...]] = set()
    for key, column, line in rows:
        if data_format in ("csv", "tsv"):
            steps: tuple[str, ...] = (column,)  # a column's name is not a path
        else:
            steps = _key_steps(column if data_format in _ROW_FORMATS else key)
        leaves.add(steps)
        parents.update(steps[:end] for end in range(1, len(steps)))
        for end in range(1, len(steps) + 1):
            span = spans.setdefault(steps[:end], [line or 0, line or 0])
            if line:
                span[0] = span[0] or line
                span[1] = max(span[1], line)
    entries = []
    for steps, (start, end) in spans.items():
        if max_depth is not None and len(steps) > max_depth:
            continue
        if steps[-1].endswith("[]"):
            kind = "array"
        elif steps in leaves and steps not in parents:
            kind = "column" if data_format in ("csv", "tsv") else "key"
        else:
            kind = "object"
        entries.append(OutlineEntry(len(steps), kind, steps[-1], len(steps), start, end))
    return entries


def _key_steps(path: str) -> tuple[str, ...]:
    """`jobs.test.steps[2].run` -> ('jobs', 'test', 'steps[]', 'run'): positions folded into
    the step they index; a quoted key stays quoted; text that is not a key path is one step."""
    steps: list[str] = []
    at = 0
    while at < len(path):
        part = _KEY_PART.match(path, at)
        if part is None:
            return (path,)
        name, _position, quoted = part.groups()
        if name is not None or quoted is not None:
            steps.append(name if name is not None else f"[{quoted}]")
        elif steps:
            steps[-1] += "[]"
        else:
            steps.append("[]")
        at = part.end()
    return tuple(steps) or (path,)


def _outline_scope(
    db: Store, root: Path, path: str | None, indexed: dict[str, _Indexed]
) -> tuple[set[str], bool]:
    """The indexed files to outline, and whether one file was asked for."""
    path_filter = paths.parse(path, root)
    if path is None or path_filter is None:
        return set(indexed), False
    inside = None if path_filter.glob else resolve_path(root, path)
    if inside is not None and inside.path.is_file():
        for candidate in (inside.rel_path, inside.real_rel_path):
            if candidate in indexed:
                return {candidate}, True
    filters = [path_filter]
    if inside is not None and inside.path.is_dir() and inside.real_rel_path != inside.rel_path:
        filters.append(
            paths.PathFilter(inside.real_rel_path, False, True, False)
        )  # a link's target
    matched = {p for f in filters for p in f.select(indexed)}
    if matched or (inside is not None and inside.path.is_dir()) or path_filter.glob:
        return matched, False
    if inside is not None and not inside.path.exists():
        raise PathNotFound(
            f"no file or folder matches {path} (a file, a folder, a path tail or a glob); "
            "`repomap files NAME` finds files by name"
        )
    if inside is not None and (skipped := skipped_because(inside.path, root, size_limit(db, root))):
        raise StaleIndex(
            f"{path} is not in the index: `repomap index` skips it ({skipped}); "
            f"`repomap open {path}` shows it"
        )
    raise StaleIndex(
        f"{path} is not in the index: outline covers Markdown (.md), text (.txt, .rst), Python, "
        "Rust, C and C++ files, and one data file (.json, .jsonl, .toml, .yaml, .csv, .tsv) "
        "by its path; if it is one, run `repomap index` to add it, "
        f"otherwise `repomap open {path}` shows it"
    )


def size_limit(db: Store, root: Path) -> int:
    """The file size limit the index's runs apply: one a run was given (kept in the index's
    meta), else the configured one (repomap.toml, REPOMAP_MAX_FILE_SIZE, the default)."""
    kept = store.kept_size_limit(db)
    return kept if kept is not None else int(config.setting(root, "index.max_file_size"))


def skipped_because(path: Path, root: Path, limit: int) -> str | None:
    """Why `repomap index` leaves out this file, by the workers' own rules (read_file's and
    index/readable.py's: larger than `limit`, not text, not UTF-8 but in C or C++, a noindex
    marker), or None: an outline of a Latin-1 .py said "run `repomap index` to add it", which
    skipped it again (an MCP agent user's report)."""
    raw, problem = read_file(path, root, limit)
    if raw is None:
        return problem or "unreadable"
    return indexed_source(raw, language_of(path.name)).skipped


def _symbol_entries(rows: list[_SymbolRow], max_depth: int | None) -> list[OutlineEntry]:
    enclosing = _enclosing(rows)  # for a symbol whose parent is not in this file
    parents = {
        symbol_id: parent_id if parent_id is not None else enclosing.get(symbol_id)
        for _, symbol_id, parent_id, _, _, _, _, _, _, _ in rows
    }
    depths: dict[int, int] = {}

    def depth_of(symbol_id: int) -> int:
        if symbol_id not in depths:
            parent = parents.get(symbol_id)
            depths[symbol_id] = (
                1 if parent is None or parent not in parents else depth_of(parent) + 1
            )
        return depths[symbol_id]

    entries = []
    for path, symbol_id, _, kind, name, start, end, _, _, signature in rows:
        depth = depth_of(symbol_id)
        if max_depth is None or depth <= max_depth:
            if kind == "impl":
                shown = _impl_name(name, signature)
            else:  # a C++ specialization with its arguments: `struct convert<bool>`
                shown = specialized_name(name, kind, signature, language_of(path) or "")
            entries.append(OutlineEntry(depth, kind, shown, depth, start, end))
    return entries


def _enclosing(rows: list[_SymbolRow]) -> dict[int, int]:
    """Each symbol's innermost enclosing symbol of the file by byte span. An outline nests a
    symbol with no parent in the file under it: a C++ method defined out of its class inside
    `namespace ui { ... }` has its class elsewhere, and shown at the top with the namespace's
    next function indented below it, that function read as the method's child."""
    enclosing: dict[int, int] = {}
    open_spans: list[tuple[int, int, int]] = []  # (end, start, id) of the symbols around it
    for _, symbol_id, _, _, _, _, _, start, end, _ in sorted(
        rows, key=lambda row: (row[7], -row[8])
    ):
        while open_spans and open_spans[-1][0] <= start:  # ended before this one starts
            open_spans.pop()
        if open_spans and end <= open_spans[-1][0] and (end, start) != open_spans[-1][:2]:
            enclosing[symbol_id] = open_spans[-1][2]  # around it, not the same span again
        open_spans.append((end, start, symbol_id))
    return enclosing


def _impl_name(qualified_name: str, signature: str) -> str:
    """A Rust impl as its header names it, so a type's impls tell apart: `Iterator for Memchr`
    (from `memchr::iter::Iterator for Memchr`), `Memchr` for the inherent one, with the type
    arguments its header gives (`From<DateTime<Utc>> for DateTime<Local>`)."""
    header = impl_header(signature)
    if header is not None:
        return header
    trait, sep, self_type = qualified_name.partition(" for ")
    return trait.rsplit("::", 1)[-1] + sep + self_type


def _heading_entries(rows: Iterable[_HeadingRow], max_level: int | None) -> list[OutlineEntry]:
    entries = []
    open_levels: list[int] = []  # levels of the enclosing headings
    for _, text, level, start, end in rows:
        while open_levels and open_levels[-1] >= level:
            open_levels.pop()
        open_levels.append(level)
        if max_level is None or level <= max_level:
            entries.append(OutlineEntry(len(open_levels), "heading", text, level, start, end))
    return entries


_CODE_STATES_SQL = """SELECT path, language, size, mtime_ns FROM files
WHERE path IN (SELECT value FROM json_each(?))"""


def changed_since_indexed(db: Store, root: Path, paths: Iterable[str]) -> list[str]:
    """Of `paths` (code files an answer names), those whose size or mtime on disk is not what
    the index holds (a stat each): their line numbers may be off. A server told not to
    refresh answered search_text and find_references with the old lines, and said nothing."""
    asked = sorted(set(paths))
    if not asked:
        return []
    indexed = {
        path: _Indexed(language, size, mtime_ns)
        for path, language, size, mtime_ns in db.conn.execute(
            _CODE_STATES_SQL, (json.dumps(asked),)
        )
    }
    return _changed(root, [path for path in asked if path in indexed], indexed)


def _changed(root: Path, paths: list[str], indexed: dict[str, _Indexed]) -> list[str]:
    """Files whose size or mtime no longer match the index (a cheap stat, no reading)."""
    changed = []
    for path in paths:
        try:
            on_disk = (root / path).stat()
        except OSError:
            changed.append(path)
            continue
        if (on_disk.st_size, on_disk.st_mtime_ns) != (indexed[path].size, indexed[path].mtime_ns):
            changed.append(path)
    return changed
