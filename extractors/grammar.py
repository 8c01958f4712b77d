"""The C inside a yacc/bison (`.y`) or lex/flex (`.l`) grammar, for the C extractor.

A grammar file is three parts split by lines of `%%`: declarations, rules and user code. The
generator copies C verbatim from the `%{ ... %}` blocks (and flex's `%top{ ... }`, bison's
`%code ... { ... }`) and from all of the user code, where such files define their helper
functions (a lexer's `include` handling, a parser's `yyerror`). The rest is the generator's own
language, which tree-sitter-c reads as errors that swallow the functions around them. So the
C extractor reads a view of the file with every other line emptied: line numbers are kept, and
the definitions, comments and strings found are where the file has them. The rules' actions
(`{ ... }` after a pattern) are left out: they define nothing.
"""

from __future__ import annotations

import re

GRAMMAR_SUFFIXES = (".y", ".l")

_SECTION = re.compile(rb"%%[ \t\r]*")
_OPEN = re.compile(rb"%\{[ \t\r]*")
_CLOSE = re.compile(rb"%\}[ \t\r]*")
# flex's `%top{`, bison's `%code {` / `%code requires {`: braces balanced to the end
_BRACED = re.compile(rb"%(?:top|code(?:[ \t]+[A-Za-z_][\w.-]*)?)[ \t]*\{")


def is_grammar(rel_path: str) -> bool:
    return rel_path.endswith(GRAMMAR_SUFFIXES)


def c_view(source: bytes) -> bytes:
    """`source` with every line that is not C emptied (see the module's docstring)."""
    lines = source.split(b"\n")
    kept = [False] * len(lines)
    section = 0  # 0 declarations, 1 rules, 2 user code
    index = 0
    while index < len(lines):
        line = lines[index]
        if section == 2:
            kept[index] = True
        elif _SECTION.fullmatch(line):
            section += 1
        elif _OPEN.fullmatch(line):
            index = _keep_until_close(lines, kept, index + 1)
        elif section == 0 and (braced := _BRACED.match(line)):
            index = _keep_braced(lines, kept, index, braced.end())
        index += 1
    return b"\n".join(line if keep else b"" for line, keep in zip(lines, kept, strict=True))


def _keep_until_close(lines: list[bytes], kept: list[bool], index: int) -> int:
    """Keep the lines from `index` up to a `%}` line; the index of that line (or the last)."""
    while index < len(lines) and not _CLOSE.fullmatch(lines[index]):
        kept[index] = True
        index += 1
    return index


def _keep_braced(lines: list[bytes], kept: list[bool], index: int, start: int) -> int:
    """Keep the lines inside a block whose `{` ends at `start` of line `index`, to its matching
    `}` (counted naively: braces in the block's strings and comments are rare); the index of the
    line that closes it."""
    depth = 1
    column = start
    first = index
    while index < len(lines):
        line = lines[index]
        for at in range(column, len(line)):
            byte = line[at]
            if byte == ord("{"):
                depth += 1
            elif byte == ord("}"):
                depth -= 1
                if depth == 0:
                    return index
        if index != first:
            kept[index] = True
        index += 1
        column = 0
    return index
