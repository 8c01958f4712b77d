"""Data records' key paths, and the lines JSON and TOML write them on.

A leaf's key is its path from the document's root, `tool.ruff.lint.select[0]` (`key_path`; a
key that is not a plain name is quoted: `["a.b"]`). `json` and `tomllib` say nothing of where a
value is written, so `json_lines` and `toml_lines` scan the text for it: path -> line for every
value the scan places, keyed as `key_path` keys. index/records.py gives each leaf the line of its
own path, else of its nearest ancestor's (a TOML array or inline table is placed by the line of
its key; a leaf past the scan's budget by its container's).

- JSON: every value, scalar or container, where it starts; a key written twice is placed where
  its last value is (the one `json` keeps).
- TOML: table headers (`[a.b]`; `[[a.b]]` as `a.b[n]`, and a later header's prefix that is an
  array of tables as its last table, as TOML reads it) and every `key = value` statement, at
  the statement's first line (a multi-line array or string is skipped to its end).
"""

from __future__ import annotations

import json
import re

MAX_SCANNED = 200_000  # JSON tokens or TOML lines a scan reads; what is past it keeps no line

PLAIN_KEY = re.compile(r"[A-Za-z0-9_$@-][A-Za-z0-9_$@:/+-]*\Z")

# A UTF-16 surrogate alone: JSON's and YAML's escapes can write one ("\\ud800"), their parsers
# return it in a str, and SQLite cannot store it (the whole run stopped with a traceback at
# httpx's tests/models/whatwg.json). A pair is one character by then, never matched here.
_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, as an invalid byte in a source file is read."""
    return _SURROGATE.sub("\ufffd", text)  # the same str back when there is none


def key_path(path: str, name: str) -> str:
    """The path of key `name` under `path`."""
    name = valid_text(name)
    if not PLAIN_KEY.match(name):
        return f"{path}[{json.dumps(name, ensure_ascii=False)}]"
    return f"{path}.{name}" if path else name


# --- JSON --------------------------------------------------------------------------------------

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+')


def json_lines(text: str) -> dict[str, int]:
    """Path -> line of every JSON value the scan reaches (text `json` has already parsed)."""
    lines: dict[str, int] = {}
    frames: list[list] = []  # per open container: [its path, is an object, key or index]
    line, seen = 1, 0
    expecting_key = False
    for number, token in enumerate(_JSON_TOKEN.finditer(text)):
        if number >= MAX_SCANNED:
            break
        line += text.count("\n", seen, token.start())
        seen = token.start()
        value = token.group()
        if value in (",", ":"):
            if value == "," and frames:
                if frames[-1][1]:
                    expecting_key = True
                else:
                    frames[-1][2] += 1
            continue
        if value in ("}", "]"):
            if frames:
                frames.pop()
            expecting_key = False
            continue
        if expecting_key:  # an object's key (a string; `json` has checked the text)
            frames[-1][2] = json.loads(value)
            expecting_key = False
            continue
        if not frames:
            path = ""
        elif frames[-1][1]:
            path = key_path(frames[-1][0], frames[-1][2])
        else:
            path = f"{frames[-1][0]}[{frames[-1][2]}]"
        lines[path] = line
        if value in ("{", "["):
            frames.append([path, value == "{", None if value == "{" else 0])
            expecting_key = value == "{"
    return lines


# --- TOML --------------------------------------------------------------------------------------

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\n]*'")


def toml_lines(text: str) -> dict[str, int]:
    """Path -> line of every table header and `key = value` statement (text `tomllib` has
    already parsed)."""
    lines: dict[str, int] = {}
    tables: dict[str, int] = {}  # an array of tables' path -> its tables so far
    table: str | None = ""  # None: under a header whose key could not be read
    rows = text.splitlines()
    number = 0
    while number < min(len(rows), MAX_SCANNED):
        row = rows[number].lstrip()
        number += 1
        if not row or row[0] == "#":
            continue
        if row[0] == "[":
            many = row.startswith("[[")
            keys, _ = _key(row, 2 if many else 1)
            # A header whose key cannot be read places nothing until the next one.
            table = _table_path(keys, tables, many) if keys is not None else None
            if table is not None:
                lines[table] = number
            continue
        keys, end = _key(row, 0)
        if not row[end:].lstrip().startswith("="):
            continue
        if keys is not None and table is not None:
            path = table
            for name in keys:
                path = key_path(path, name)
            lines[path] = number
        number = _value_end(rows, number - 1, row[end:].lstrip()[1:])  # read or not
    return lines


def _table_path(keys: tuple[str, ...], tables: dict[str, int], many: bool) -> str:
    """A header's path; `many`: a `[[...]]` header, one more table of its array. Each prefix
    that is an array of tables is its last table so far (an array inside one counts apart
    for each: `[[a.b]]` after a second `[[a]]` starts `a[1].b[0]`)."""
    path = ""
    for end, name in enumerate(keys, 1):
        path = key_path(path, name)
        if many and end == len(keys):
            tables[path] = tables.get(path, 0) + 1
        if path in tables:
            path += f"[{tables[path] - 1}]"
    return path


def _key(row: str, at: int) -> tuple[tuple[str, ...] | None, int]:
    """The dotted key starting at `row[at]` and where it ends; None when there is none, or
    when one of its quoted names has an escape JSON lacks (an 8-digit `U` escape, an `e`:
    where the key ends is still given, so its value is skipped)."""
    names: list[str] = []
    readable = True
    while True:
        while at < len(row) and row[at] in " \t":
            at += 1
        found = _BARE.match(row, at) or _BASIC.match(row, at) or _LITERAL.match(row, at)
        if found is None:
            return None, at
        token = found.group()
        if token[0] == '"':
            try:
                token = json.loads(token)
            except ValueError:
                readable = False
        elif token[0] == "'":
            token = token[1:-1]
        names.append(token)
        at = found.end()
        while at < len(row) and row[at] in " \t":
            at += 1
        if at < len(row) and row[at] == ".":
            at += 1
            continue
        return (tuple(names) if readable else None), at


def _value_end(rows: list[str], index: int, rest: str) -> int:
    """The number of the row after the value that starts with `rest` on rows[index] (its
    brackets closed, its multi-line string ended, comments and strings skipped)."""
    depth, quote = 0, ""
    text = rest
    while True:
        at = 0
        while at < len(text):
            if quote:
                end = text.find(quote, at)
                if end < 0:
                    at = len(text)
                    break
                if quote == '"""' and _escaped(text, end):
                    at = end + 1
                    continue
                at, quote = end + len(quote), ""
                continue
            char = text[at]
            if char == "#":
                break
            if text.startswith(('"""', "'''"), at):
                quote = text[at : at + 3]
                at += 3
            elif char in "\"'":
                found = (_BASIC if char == '"' else _LITERAL).match(text, at)
                at = found.end() if found else len(text)
            else:
                depth += char in "[{"
                depth -= char in "]}"
                at += 1
        index += 1
        if (depth <= 0 and not quote) or index >= len(rows):
            return index
        text = rows[index]


def _escaped(text: str, at: int) -> bool:
    """Whether the quote at `text[at]` follows an odd run of backslashes."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1
