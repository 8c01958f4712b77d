"""A symbol's source, read from disk at call time and located through the index.

`get_symbol_content(settings, name, file=None, max_lines=None, context=False)` finds the best
symbol for `name` (`symbols.find_symbol`), checks that its file still has the bytes that were
indexed (blake2b, as `files.hash`), and returns its lines. A file changed since indexing is
re-indexed (an incremental `repomap index`) and the lookup retried, so line numbers are never
stale; when re-indexing is impossible (another run holds the lock) the error says so.

`context=True` adds what an agent would otherwise re-read the file for: the comments and
decorators or attributes just above the symbol, the headers of the classes, impls and namespaces
around it, the imports its body uses (for C and C++ the `#include`s above it), and for a C++
out-of-line definition the in-class declaration it defines.
"""

from __future__ import annotations

import io
import re
import textwrap
import tokenize
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repomap import config, store, textfile
from repomap.errors import RepomapError
from repomap.gateway.files import more_lines
from repomap.languages import leading_start
from repomap.search import symbols

if TYPE_CHECKING:
    from repomap.store import Store

MAX_OTHERS = 10  # other matches listed in the warning

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_OPENERS = "([{"
_CLOSERS = ")]}"
_PY_IMPORT = re.compile(r"^(?:import|from)\s")
_RS_IMPORT = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:use\s|extern\s+crate\s)")
_INCLUDED = re.compile(r'#\s*(?:include|import)\s*[<"]([^>"]+)[>"]')
# A call an include may declare: not a member's (`want_.insert(`, `node->path(`), which its
# object's type brings (ninja's Plan::AddSubTarget listed <sys/termios.h> and <stdio.h> for them).
_CALL = re.compile(r"(?<![\w.>])([A-Za-z_]\w*)\s*\(")
_NOT_CALLS = frozenset(  # keywords and operators that take parentheses
    """if for while switch return sizeof alignof alignas decltype defined catch typeid noexcept
    static_assert static_cast dynamic_cast const_cast reinterpret_cast""".split()  # noqa: SIM905
)
_CPP_IMPORT = re.compile(r"^\s*(?:#\s*(?:include|import)\b|using\s+namespace\s)")


@dataclass(frozen=True, slots=True)
class SymbolContent:
    """A symbol's source lines, and with `context` what surrounds it."""

    name: str
    qualified_name: str
    kind: str
    language: str
    file_path: str
    line_number: int
    end_line: int
    signature: str
    content: str  # the lines line_number..end_line (or fewer, see truncated_lines)
    truncated_lines: int = 0  # lines left out by max_lines
    leading: str | None = None  # comments and decorators/attributes just above (context)
    leading_line: int | None = None  # where `leading` starts
    truncated_leading_lines: int = 0  # its lines farthest from the symbol left out by max_lines
    parents: list[str] = field(default_factory=list)  # "290: class QuerySet(AltersData)" (context)
    imports: list[str] = field(default_factory=list)  # import statements the body uses (context)
    other_imports: int = 0  # import statements of the file it does not use (context)
    declaration: str | None = None  # C++: "include/foo.h:12: int add(int a)" (context)
    # The declaration's doc comment, when the definition has none above it: a C library
    # documents its API in the header (nghttp2: an agent's second call to read it)
    declaration_doc: str | None = None
    warning: str | None = None  # when several symbols matched
    others: list[str] = field(
        default_factory=list
    )  # "method Model.save django/db/models/base.py:767"

    def as_dict(self) -> dict:
        return asdict(self)

    def as_text(self) -> str:
        """For people and agents: a location line, the context, the numbered source."""
        out = [
            f"{self.file_path}:{self.line_number}-{self.end_line}  {self.kind} {self.qualified_name}"
        ]
        if self.declaration:
            out.append(f"declared at {self.declaration}")
        if self.declaration_doc:
            doc_lines = self.declaration_doc.splitlines()
            out.extend(f"  {line}".rstrip() for line in doc_lines[:DECLARATION_DOC_LINES])
            if len(doc_lines) > DECLARATION_DOC_LINES:
                out.append(f"  … {len(doc_lines) - DECLARATION_DOC_LINES} more lines of its doc")
        if self.imports:
            if self.language in ("c", "cpp"):  # an include names a file, not what it brings
                more = f" (+{self.other_imports} more that do not)" if self.other_imports else ""
                out.append(f"includes that may declare what it uses{more}:")
            else:
                more = (
                    f" (+{self.other_imports} more the symbol does not use)"
                    if self.other_imports
                    else ""
                )
                out.append(f"imports{more}:")
            out.extend(f"  {statement}" for statement in self.imports)
        elif self.other_imports:  # a header over an empty list read as a cut-off answer
            many = "statement is" if self.other_imports == 1 else "statements is"
            out.append(f"imports: none of the file's {self.other_imports} import {many} used")
        if self.parents:
            out.append("inside:")
            out.extend(f"  {parent}" for parent in self.parents)
        width = len(str(self.end_line))
        if self.truncated_leading_lines:
            out.append(f"... ({self.truncated_leading_lines} earlier lines)")
        if self.leading and self.leading_line:
            out.extend(_numbered(self.leading, self.leading_line, width))
        if self.content or not self.truncated_lines:  # --max-lines 0 shows no line
            out.extend(_numbered(self.content, self.line_number, width))
        if self.truncated_lines:
            out.append(more_lines(self.truncated_lines))
        return "\n".join(out) + "\n"


def _numbered(text: str, first: int, width: int) -> list[str]:
    return [f"{first + i:>{width}}│{line}" for i, line in enumerate(text.split("\n"))]


def get_symbol_content(
    settings: config.Settings,
    name: str,
    file: str | None = None,
    max_lines: int | None = None,
    context: bool = False,
    reindex: bool = True,
    nth: int | None = None,
) -> SymbolContent:
    """The source of the best symbol matching `name`; re-indexes a file changed since indexing."""
    try:
        with store.reading(settings.db_path) as db:
            return symbol_content(
                db, name, file, max_lines, context, store.indexed_root(db, settings.root), nth
            )
    except symbols.FileChanged as changed:
        if not reindex:
            raise
        _reindex(settings, changed)
    with store.reading(settings.db_path) as db:
        return symbol_content(
            db, name, file, max_lines, context, store.indexed_root(db, settings.root), nth
        )


def _reindex(settings: config.Settings, changed: symbols.FileChanged) -> None:
    from repomap.index import pipeline as index

    try:
        # Read again even when its size and mtime are as indexed: its bytes are not.
        index.run(_index_settings(settings)._replace(reread=frozenset({changed.path})))
    except RepomapError as error:
        raise symbols.FileChanged(f"{changed}; re-indexing failed: {error}", changed.path) from None


def _index_settings(settings: config.Settings) -> config.Settings:
    with store.reading(settings.db_path) as db:
        root = store.indexed_root(db, settings.root)
    return settings if root == settings.root else config.resolve(root, settings.db_path)


def symbol_content(
    db: Store,
    name: str,
    file: str | None = None,
    max_lines: int | None = None,
    context: bool = False,
    root: Path | None = None,
    nth: int | None = None,
) -> SymbolContent:
    """get_symbol_content() on an open index, raising FileChanged instead of re-indexing."""
    match = symbols.find_symbol(db, name, file, nth)
    best = match.best
    lines = _current_lines(db, best, root)
    body = lines[best.start_line - 1 : best.end_line]
    extra: dict = _context(db, best, lines, body) if context else {}
    leading = extra["leading"].split("\n") if extra.get("leading") else []
    kept_leading, kept_body = _shares(len(leading), len(body), max_lines)
    if kept_leading < len(leading):  # keep the lines nearest the symbol: decorators, attributes
        kept = leading[len(leading) - kept_leading :]
        extra["leading"] = "\n".join(kept) if kept else None
        extra["leading_line"] = best.start_line - kept_leading if kept else None
        extra["truncated_leading_lines"] = len(leading) - kept_leading
    shown = body[:kept_body]
    result = SymbolContent(
        best.name,
        best.qualified_name,
        best.kind,
        best.language,
        best.file_path,
        best.start_line,
        best.end_line,
        best.signature,
        "\n".join(shown),
        len(body) - len(shown),
    )
    # Others of the same lines are no choice either: `typedef struct json_t {...} json_t` is a
    # struct and a type of one span (jansson: "2 symbols match", the same lines twice).
    choices = [other for other in match.others if _span(other) != _span(best)]
    if choices and not _declarations_of(best, choices):
        listed = [f"{o.kind} {o.qualified_name} {o.file_path}:{o.start_line}" for o in match.others]
        # Numbered as --nth counts them: the best is 1, and the one shown keeps its number.
        shown_as = nth or 1
        numbered = [
            f"[{number if number < shown_as else number + 1}] {other}"
            for number, other in enumerate(listed, 1)
        ]
        # Only the means that tell these apart: a Rust type's `fmt` of Display and of Debug
        # share file and qualified name, and the advice to give one led nowhere.
        means = ["--nth N (nth=N over MCP and HTTP) as numbered here"]
        if any(other.file_path != best.file_path for other in match.others):
            means.append("--file")
        if any(other.qualified_name != best.qualified_name for other in match.others):
            means.append("a qualified name")
        advice = ", ".join(means[:-1]) + " or " + means[-1] if len(means) > 1 else means[0]
        shown_at = f"[{shown_as}] {best.file_path}:{best.start_line}"
        extra["warning"] = matches_warning(name, shown_at, numbered, advice)
        extra["others"] = listed
    return SymbolContent(**{**asdict(result), **extra})


def matches_warning(name: str, shown: str, others: list[str], advice: str, where: str = "") -> str:
    """The several-matches warning: the one shown, the others numbered (MAX_OTHERS of them),
    and how to choose; `where`: ` in 2 roots`."""
    more = f" and {len(others) - MAX_OTHERS} more" if len(others) > MAX_OTHERS else ""
    return (
        f"{len(others) + 1} symbols match {name!r}{where}; showing {shown}. "
        f"Others: {'; '.join(others[:MAX_OTHERS])}{more}. Pass {advice} to choose."
    )


def _span(symbol: symbols.SymbolRow) -> tuple[str, int, int]:
    return symbol.file_path, symbol.start_line, symbol.end_line


def _declarations_of(best: symbols.SymbolRow, others: list[symbols.SymbolRow]) -> bool:
    """The others are only prototypes of the definition shown (a C function and its header's
    declaration): no choice to warn of (`--nth 2` still shows the prototype)."""
    return best.is_definition and all(
        not other.is_definition and other.qualified_name == best.qualified_name for other in others
    )


def _shares(leading: int, body: int, max_lines: int | None) -> tuple[int, int]:
    """How many leading and body lines `max_lines` keeps: that many in all, the symbol's own
    lines at least half of them (all, if fewer), the leading block the rest."""
    if max_lines is None:
        return leading, body
    if max_lines <= 0:  # 0: no lines, only how many were left out (as in every command)
        return 0, 0
    kept_body = min(body, max(max_lines - leading, (max_lines + 1) // 2))
    return min(leading, max_lines - kept_body), kept_body


DECLARATION_DOC_LINES = 20  # of a declaration's doc in the text form (JSON: whole)


def _current_lines(db: Store, symbol: symbols.SymbolRow, root: Path | None) -> list[str]:
    path = (root or store.indexed_root(db, Path("."))) / symbol.file_path
    try:
        raw = path.read_bytes()
    except OSError:
        raise symbols.FileChanged(
            f"{symbol.file_path} is gone since it was indexed; run `repomap index`",
            symbol.file_path,
        ) from None
    if textfile.content_hash(raw) != symbol.file_hash:  # the bytes shown, read once
        raise symbols.FileChanged(
            f"{symbol.file_path} changed since it was indexed; run `repomap index` (`--reread"
            f" {symbol.file_path}` if its size and mtime are as they were: an edit whose mtime"
            " was put back)",
            symbol.file_path,
        )
    # The rule the index read it by (a PEP 263 latin-1 file printed U+FFFD for each é)
    return textfile.split_lines(textfile.text(raw))


def _context(db: Store, symbol: symbols.SymbolRow, lines: list[str], body: list[str]) -> dict:
    start = leading_start(lines, symbol.start_line - 1, symbol.language)
    used = _names_used(body, symbol.language)
    imports, skipped = import_statements(lines, symbol.language, used, symbol.start_line - 1)
    if imports and symbol.language in ("c", "cpp"):
        kept = includes_used(db, imports, "\n".join(body), used)
        imports, skipped = kept, skipped + len(imports) - len(kept)
    parents = [f"{p.start_line}: {p.signature}" for p in symbols.ancestors(db, symbol)]
    declaration = declaration_doc = None
    if symbol.declaration_id is not None and (
        decl := symbols.symbol_by_id(db, symbol.declaration_id)
    ):
        declaration = f"{decl.file_path}:{decl.start_line}: {decl.signature}"
        if decl.doc and start >= symbol.start_line - 1:  # no comment of its own above it
            declaration_doc = decl.doc.strip()
        parents = parents or [
            f"{p.file_path}:{p.start_line}: {p.signature}" for p in symbols.ancestors(db, decl)
        ]
    return {
        "leading": "\n".join(lines[start : symbol.start_line - 1])
        if start < symbol.start_line - 1
        else None,
        "leading_line": start + 1 if start < symbol.start_line - 1 else None,
        "parents": parents,
        "imports": imports,
        "other_imports": skipped,
        "declaration": declaration,
        "declaration_doc": declaration_doc,
    }


def _names_used(body: list[str], language: str) -> set[str]:
    """The identifiers of a definition's lines; of Python code, not those of its comments and
    strings (a search user's `show tzfile._find_last_transition --context` listed `import
    time`, whose name was only in a comment), f-strings' fields kept."""
    text = "\n".join(body)
    if language != "python":
        return set(_IDENTIFIER.findall(text))
    names: set[str] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(textwrap.dedent(text)).readline):
            if token.type == tokenize.NAME:
                names.add(token.string)
            elif token.type == tokenize.STRING and token.string[:2].lower() in (
                "f'",
                'f"',
                "rf",
                "fr",
            ):
                names.update(_IDENTIFIER.findall(token.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return set(_IDENTIFIER.findall(text))  # a cut or odd body: every word, as before
    return names


def import_statements(
    lines: list[str], language: str, used: set[str], before: int | None = None
) -> tuple[list[str], int]:
    """The file's import statements that bind a name in `used`, and how many others there are.
    C and C++: every include above line `before` (0-based; the preprocessor reads one way, so
    an include below a function does nothing for it: redis' `zmalloc` listed 31, most of them
    platform headers further down), each once."""
    if language in ("c", "cpp"):
        above = _statements(lines[:before] if before is not None else lines, language)
        once = list(dict.fromkeys(above))
        return once, len(_statements(lines, language)) - len(once)
    kept: list[str] = []
    skipped = 0
    for statement in _statements(lines, language):
        if _binds_used(statement, language, used):
            kept.append(statement)
        else:
            skipped += 1
    return kept, skipped


def includes_used(db: Store, includes: list[str], body: str, used: set[str]) -> list[str]:
    """Of a C or C++ definition's `includes`, those that may declare what its `body` uses.

    An include names a file, not what it brings: one that resolves to an indexed header is kept
    when that header defines a name the body uses; one that does not (`<stdio.h>`, a header
    outside the tree) when the body calls a function the index defines nowhere, which only such
    a header can declare. A `return 2 * x;` listed every include of the file (lmdb's
    `mdb_pack85` 32 of them)."""
    names = sorted(used)
    defined: dict[str, set[str]] = {}  # a used name -> the files defining it
    for at in range(0, len(names), 500):
        batch = names[at : at + 500]
        marks = ",".join("?" * len(batch))
        for name, path in db.conn.execute(
            "SELECT s.name, f.path FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.name COLLATE NOCASE IN ({marks})",
            batch,
        ):
            if name in used:
                defined.setdefault(name, set()).add(path)
    declaring = {path for paths in defined.values() for path in paths}
    calls = {name for name in _CALL.findall(body) if name not in _NOT_CALLS}
    external = any(name not in defined for name in calls)
    indexed: list[str] | None = None  # every indexed path, read once if a header needs it
    kept = []
    for statement in includes:
        header = _INCLUDED.search(statement)
        if header is None:  # `using namespace std;`, `#include MACRO`: kept as they were
            kept.append(statement)
            continue
        named = header[1]
        if any(_is_at(path, named) for path in declaring):
            kept.append(statement)
            continue
        if indexed is None:
            indexed = [path for (path,) in db.conn.execute("SELECT path FROM files")]
        if external and not any(_is_at(path, named) for path in indexed):
            kept.append(statement)
    return kept


def _is_at(path: str, header: str) -> bool:
    """Whether the indexed `path` is the file an include of `header` names (`a/b.h`)."""
    return path == header or path.endswith("/" + header.removeprefix("./"))


def _statements(lines: list[str], language: str) -> list[str]:
    pattern = {"python": _PY_IMPORT, "rust": _RS_IMPORT, "c": _CPP_IMPORT, "cpp": _CPP_IMPORT}.get(
        language
    )
    if pattern is None:
        return []
    statements, at = [], 0
    while at < len(lines):
        line = lines[at]
        if not pattern.match(line):
            at += 1
            continue
        parts = [line.strip()]
        depth = sum(line.count(c) for c in _OPENERS) - sum(line.count(c) for c in _CLOSERS)
        while at + 1 < len(lines) and _continues(parts[-1], depth, language):
            at += 1
            parts.append(lines[at].strip())
            depth += sum(lines[at].count(c) for c in _OPENERS) - sum(
                lines[at].count(c) for c in _CLOSERS
            )
        statements.append(" ".join(p.removesuffix("\\").strip() for p in parts))
        at += 1
    return statements


def _continues(last: str, depth: int, language: str) -> bool:
    if language == "python":
        return depth > 0 or last.endswith("\\")
    if language == "rust":
        return not last.rstrip().endswith(";")
    return False


def _binds_used(statement: str, language: str, used: set[str]) -> bool:
    """Does the import bind a name the symbol uses? Star imports always count."""
    if "*" in statement:
        return True
    if language == "python":
        if statement.startswith("import "):
            bound = [(p.split(" as ")[-1].strip().split(".")[0]) for p in statement[7:].split(",")]
        else:
            names = statement.split(" import ", 1)[-1].strip("() ")
            bound = [p.split(" as ")[-1].strip(" ()") for p in names.split(",")]
    else:
        body = statement.rstrip(";")
        body = body.split("{", 1)[-1] if "{" in body else body.rsplit("::", 1)[-1]
        bound = [p.split(" as ")[-1].strip(" {}").rsplit("::", 1)[-1] for p in body.split(",")]
        if "self" in bound:  # `use core::fmt::{self, Write}` binds `fmt`, not the receiver
            bound.remove("self")
            bound.append(statement.split("::{", 1)[0].rsplit("::", 1)[-1].split()[-1])
    return any(name in used for name in bound if name)
