"""Data files as records: CSV/TSV rows, JSON Lines lines, and the leaves of JSON, TOML and YAML.

`parse(fmt, text) -> Parsed` reads one file's text with the parser made for it (stdlib `csv`,
`json`, `tomllib`, PyYAML's C safe loader) and returns its records; `update_data(writer, files,
max_file_size, force, indexed_at, redact)` brings the `data_files` and `data_values` tables up to
date with the walked files (a file whose size and mtime are unchanged is not read; one whose
bytes hash the same is not parsed), like index/docs.py does for Markdown.

- A CSV/TSV row is one record keyed by its row number (the header row is not one), its fields
  the header's names; a JSON Lines line is one record keyed by its line number, its fields the
  key paths of the line's leaves. JSON, TOML and YAML give one record per leaf value, keyed by
  its path from the document's root (`tool.ruff.lint.select[0]`, `jobs.test.steps[2].run`;
  a key that is not a plain name is quoted: `["a.b"]`), with one field, `value`.
- Bounded: the index's size limit per file; at most MAX_RECORDS records and MAX_VALUES fields a
  file (the rest left out, said in the file's note); YAML aliases are followed, but at most
  MAX_NODES nodes are visited, so an alias bomb (billion laughs) stops there; nesting deeper than
  MAX_DEPTH becomes one value; a value longer than MAX_VALUE_CHARS is cut.
- A file that does not parse is skipped and named, with the parser's reason, in the summary.
- Credentials are redacted as in code text (index/secrets.py): the key names the value.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from repomap import store, textfile
from repomap.config import toml_module
from repomap.index import changes, secrets
from repomap.index.chunks import data_chunks
from repomap.index.record_keys import json_lines, key_path, toml_lines, valid_text
from repomap.languages import data_format

if TYPE_CHECKING:
    from repomap.index.discover import FoundFile

# Bump when parsing changes what is stored: every data file is then re-read once.
DATA_PARSER_VERSION = "2"
BATCH_FILES = 200
MAX_RECORDS = 20_000  # records a file gives; the rest are left out (the note says so)
MAX_VALUES = 100_000  # fields (rows of data_values) a file gives
MAX_NODES = 200_000  # YAML/JSON/TOML nodes visited: YAML aliases can multiply a small file
MAX_DEPTH = 32  # nesting below this is kept as one value, its JSON text
MAX_VALUE_CHARS = 2000  # a longer value is cut, then CUT_MARK
CUT_MARK = "…"


class DataError(Exception):
    """A data file that cannot be read as its format; the message is the summary's reason."""


@dataclass(frozen=True, slots=True)
class Record:
    key: str
    fields: list[tuple[str, str]]  # (name, value) in file order
    line: int | None  # where the record starts, when the parser tells


@dataclass(slots=True)
class Parsed:
    records: list[Record] = field(default_factory=list)
    values: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return len(self.records) >= MAX_RECORDS or self.values >= MAX_VALUES

    def add(self, record: Record) -> bool:
        """Keep `record`; False once the caps are reached (the caller stops reading)."""
        if self.full:
            return False
        fields = record.fields[: MAX_VALUES - self.values]
        self.values += len(fields)
        self.records.append(Record(record.key, fields, record.line))
        if self.full:
            self.notes.append(
                f"only the first {len(self.records)} records ({self.values} values) were read"
            )
            return False
        return True


def parse(fmt: str, text: str) -> Parsed:
    """The records of a data file's text; raises DataError when it is not that format."""
    try:
        if fmt in ("csv", "tsv"):
            return _table(text, "\t" if fmt == "tsv" else ",")
        if fmt == "jsonl":
            return _json_lines(text)
        if fmt == "json":
            return _tree([(json.loads(text), None)], multi=False, lines=json_lines(text))
        if fmt == "toml":
            return _tree([(toml_module().loads(text), None)], multi=False, lines=toml_lines(text))
        if fmt == "yaml":
            return _yaml(text)
    except RecursionError:
        raise DataError("nested too deeply to parse") from None
    except (ValueError, csv.Error) as error:  # JSONDecodeError and TOMLDecodeError too
        raise DataError(f"not valid {fmt.upper()} ({_first_line(error)})") from None
    raise AssertionError(f"unknown data format {fmt!r}")


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:200]


# --- rows --------------------------------------------------------------------------------------


def _table(text: str, delimiter: str) -> Parsed:
    parsed = Parsed()
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    number = 0
    line = 1
    for row in reader:
        start, line = line, reader.line_num + 1
        if header is None:
            header = [name.strip() or f"column {i}" for i, name in enumerate(row, 1)]
            continue
        number += 1
        names = header + [f"column {i}" for i in range(len(header) + 1, len(row) + 1)]
        fields = [(name, _cut(value)) for name, value in zip(names, row, strict=False) if value]
        if fields and not parsed.add(Record(str(number), fields, start)):
            break
    return parsed


def _json_lines(text: str) -> Parsed:
    parsed = Parsed()
    bad: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            bad.append(number)
            continue
        fields = [(key or "value", leaf) for key, leaf, _ in _leaves(value, None, Budget(), "", {})]
        if fields and not parsed.add(Record(str(number), fields, number)):
            break
    if bad and len(bad) == sum(1 for line in text.splitlines() if line.strip()):
        raise DataError(f"not valid JSON Lines (line {bad[0]} is not JSON)")
    if bad:
        parsed.notes.append(f"{len(bad)} lines are not JSON (first: line {bad[0]})")
    return parsed


# --- trees -------------------------------------------------------------------------------------


class Budget:
    """Nodes a file may still visit (aliases can make a small YAML file a huge tree)."""

    def __init__(self, nodes: int = MAX_NODES) -> None:
        self.nodes = nodes

    def spend(self) -> bool:
        self.nodes -= 1
        return self.nodes >= 0


def _tree(
    documents: list[tuple[Any, int | None]], multi: bool, lines: dict[str, int] | None = None
) -> Parsed:
    """The leaves of `documents` as records; `lines` places the paths a parser does not
    (record_keys.py), a leaf on its own path's line, else on its nearest ancestor's."""
    parsed = Parsed()
    budget = Budget()
    for number, (document, line) in enumerate(documents):
        prefix = f"[{number}]" if multi else ""
        for key, leaf, at in _leaves(document, line, budget, prefix, lines or {}):
            if not parsed.add(Record(key or "value", [("value", leaf)], at)):
                return parsed
        if budget.nodes < 0:
            parsed.notes.append(f"stopped after {MAX_NODES} nodes (aliases expand too far)")
            return parsed
    return parsed


def _leaves(
    root: Any, line: int | None, budget: Budget, prefix: str, lines: dict[str, int]
) -> Iterator[tuple[str, str, int | None]]:
    """(key path, value as text, line) of every leaf under `root`, in document order; walked
    with a stack (no recursion), at most MAX_DEPTH deep and within `budget`."""
    stack: list[tuple[str, Any, int | None, int]] = [(prefix, root, lines.get(prefix, line), 0)]
    while stack:
        if not budget.spend():
            return
        path, node, at, depth = stack.pop()
        if isinstance(node, _Node):
            at, node = node.line, node.value
        if isinstance(node, dict) and node and depth < MAX_DEPTH:
            items = [
                (child, value, lines.get(child, at), depth + 1)
                for child, value in (
                    (key_path(path, _text(key)), value) for key, value in node.items()
                )
            ]
            stack.extend(reversed(items))
        elif isinstance(node, list) and node and depth < MAX_DEPTH:
            items = [
                (child, value, lines.get(child, at), depth + 1)
                for child, value in ((f"{path}[{i}]", value) for i, value in enumerate(node))
            ]
            stack.extend(reversed(items))
        else:
            yield path, _cut(_text(node)), at


def _text(value: Any) -> str:
    if isinstance(value, str):
        return valid_text(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (dict, list)):  # empty, or below MAX_DEPTH
        return _cut(json.dumps(_plain(value, MAX_NODES), ensure_ascii=False, default=str))
    return str(value)


def _plain(value: Any, budget: int) -> Any:
    """`value` without _Node wrappers (YAML), at most `budget` nodes deep and wide."""
    if budget <= 0:
        return CUT_MARK
    if isinstance(value, _Node):
        return _plain(value.value, budget - 1)
    if isinstance(value, dict):
        return {_text(k): _plain(v, budget // 8) for k, v in list(value.items())[:8]}
    if isinstance(value, list):
        return [_plain(v, budget // 8) for v in value[:8]]
    return valid_text(value) if isinstance(value, str) else value


def _cut(text: str) -> str:
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS] + CUT_MARK


# --- YAML --------------------------------------------------------------------------------------


class _Node(NamedTuple):
    """A YAML node's value with the line it starts on (a mapping's value is a dict by key text)."""

    line: int
    value: Any


def _yaml(text: str) -> Parsed:
    """YAML through libyaml's composer (no object is constructed, so no tag runs code), walked
    by us: an alias is the same node again, so a bomb costs nodes visited, capped by Budget."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        nodes = list(yaml.compose_all(text, Loader=loader))
    except yaml.YAMLError as error:
        raise DataError(f"not valid YAML ({_first_line(error)})") from None
    nodes = [node for node in nodes if node is not None]
    converted = _Converter()
    documents = [(converted(node), node.start_mark.line + 1) for node in nodes]
    return _tree(documents, multi=len(documents) > 1)


MERGE_TAG = "tag:yaml.org,2002:merge"


class _Converter:
    """YAML nodes to dicts, lists and _Node leaves; an alias (the same node object) is converted
    once and shared, so the result is as small as the file and a cycle stays a cycle. Merge
    keys (`<<: *defaults`) add the merged mapping's keys the mapping does not set itself."""

    def __init__(self) -> None:
        self.done: dict[int, Any] = {}

    def __call__(self, root: Any) -> Any:
        import yaml

        if id(root) in self.done:
            return self.done[id(root)]
        pending = [root]
        order = []
        while pending:  # every distinct node once, parents before children
            node = pending.pop()
            if id(node) in self.done:
                continue
            line = node.start_mark.line + 1
            if isinstance(node, yaml.MappingNode):
                self.done[id(node)] = _Node(line, {})
                pending.extend(v for pair in node.value for v in pair)
            elif isinstance(node, yaml.SequenceNode):
                self.done[id(node)] = _Node(line, [])
                pending.extend(node.value)
            else:
                self.done[id(node)] = _Node(line, node.value)
            order.append(node)
        merges: list[tuple[dict[str, Any], Any]] = []
        for node in order:  # then fill the containers in, children already made
            if isinstance(node, yaml.MappingNode):
                mapping = self.done[id(node)].value
                for key, value in node.value:
                    if key.tag == MERGE_TAG:  # `<<: *defaults`: after the mapping's own keys
                        merges.append((mapping, value))
                        continue
                    name = key.value if isinstance(key, yaml.ScalarNode) else f"<{key.id}>"
                    mapping.setdefault(name, self.done[id(value)])
            elif isinstance(node, yaml.SequenceNode):
                self.done[id(node)].value.extend(self.done[id(child)] for child in node.value)
        for mapping, value in merges:
            sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for source in sources:
                merged = self.done[id(source)].value
                if isinstance(merged, dict):
                    for name, item in list(merged.items()):
                        mapping.setdefault(name, item)
        return self.done[id(root)]


# --- rows for the index ------------------------------------------------------------------------


def data_rows(
    rel_path: str, fmt: str, raw: bytes, mtime_ns: int, redact: bool = True
) -> store.DataRows | str:
    """One data file's rows, or why it cannot be indexed; credentials redacted."""
    source, problem = textfile.decode(raw)
    if source is None:
        return problem or "not text"
    try:
        parsed = parse(fmt, source.decode("utf-8"))
    except DataError as error:
        return str(error)
    values = []
    shown_records = []
    for number, record in enumerate(parsed.records, 1):
        name = record.key.rsplit(".", 1)[-1]
        fields = []
        for field_name, value in record.fields:
            shown = _redacted(name if field_name == "value" else field_name, value, redact)
            values.append((number, record.key, field_name, shown, record.line))
            fields.append((field_name, shown))
        shown_records.append((record.key, fields, record.line))
    return store.DataRows(
        rel_path,
        fmt,
        len(raw),
        mtime_ns,
        textfile.content_hash(raw),
        len(parsed.records),
        "; ".join(parsed.notes) or None,
        values,
        data_chunks(rel_path, shown_records),
    )


def _redacted(name: str, value: str, redact: bool) -> str:
    if not redact:
        return value
    # The line a source file would hold, so a random value under a secret name goes too.
    line = f'{name} = "{value}"' if secrets.could_be_assigned_secret(value) else None
    return secrets.redact(value, line)


@dataclass(slots=True)
class DataSummary:
    scanned: int = 0
    unchanged: int = 0
    added: int = 0
    modified: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, reason)
    partial: list[tuple[str, str]] = field(default_factory=list)  # (rel_path, note)
    files: int = 0  # data files in the index after the run
    records: int = 0

    def as_dict(self) -> dict[str, Any]:
        keys = ("scanned", "unchanged", "added", "modified", "removed", "files", "records")
        counts: dict[str, Any] = {key: getattr(self, key) for key in keys}
        counts["partial_files"] = [{"path": p, "note": n} for p, n in self.partial]
        return counts


def update_data(
    writer: store.Writer,
    files: Iterable[FoundFile],
    max_file_size: int,
    force: bool,
    indexed_at: str,
    redact: bool = True,
    root: Path | None = None,
) -> DataSummary:
    """Index new and changed data files, drop removed ones; one transaction per batch. With
    `root`, a file swapped for a link leading outside it since the walk is not read."""
    from repomap.index.discover import read_file  # pathspec: only when indexing

    db = writer.db
    force = force or store.get_meta(db, "data_parser_version") != DATA_PARSER_VERSION
    existing = store.indexed_data(db)
    summary = DataSummary()
    todo = changes.plan(files, data_format, existing, max_file_size, force)
    summary.scanned, summary.unchanged = todo.scanned, todo.unchanged
    summary.skipped.extend(todo.skipped)
    pending = todo.pending
    with writer.batch():
        for path in todo.dropped(existing):
            store.delete_data_file(writer, existing[path].id)
            summary.removed += path not in todo.present
    for start in range(0, len(pending), BATCH_FILES):
        with writer.batch():
            for found, fmt in pending[start : start + BATCH_FILES]:
                old = existing.get(found.rel_path)
                raw, problem = read_file(found.path, root, max_file_size)
                if raw is None:
                    summary.skipped.append((found.rel_path, problem or "unreadable"))
                    if old is not None:
                        store.delete_data_file(writer, old.id)
                    continue
                if old is not None and not force and textfile.content_hash(raw) == old.hash:
                    summary.unchanged += 1
                    store.touch_data_file(writer, old.id, len(raw), found.mtime_ns)
                    continue
                rows = data_rows(found.rel_path, fmt, raw, found.mtime_ns, redact)
                if isinstance(rows, str):
                    summary.skipped.append((found.rel_path, rows))
                    if old is not None:
                        store.delete_data_file(writer, old.id)
                    continue
                store.replace_data_file(writer, rows, old.id if old else None, indexed_at)
                if rows.note:
                    summary.partial.append((found.rel_path, rows.note))
                if old is None:
                    summary.added += 1
                else:
                    summary.modified += 1
    with writer.batch():
        store.set_meta(db, {"data_parser_version": DATA_PARSER_VERSION})
    summary.files, summary.records = store.data_totals(db)
    return summary
