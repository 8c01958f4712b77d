"""Ranked symbols -> map text within a hard token budget. Pure: no I/O, no database.

The map lists files, best first, each with the signature lines of its chosen definitions in file
order, under the headers of the classes, impls and namespaces that enclose them:

    django/db/models/query.py:
     290│class QuerySet(AltersData):
        ⋮
    1501│    def filter(self, *args, **kwargs)
        ⋮
    (2731 more files and 38112 more symbols left out)

Each row starts with its line number, so an agent can open the file right there; `⋮` stands
between rows whose lines are not adjacent in the file.

`MapBuilder` fills the budget greedily: candidates come best first, and each is added when its
rows (its own line, any enclosing header not shown yet, the file's path line when the file is new,
and the change in elision markers) still fit; one that does not fit is skipped and the next,
perhaps shorter, one is tried, so the budget is filled as tightly as the candidates allow. The
closing line is reserved up front, so the total never exceeds the budget.

Token counting (`count_tokens`) is an offline estimate, additive over lines so a row's cost is
known without re-rendering: each line is split the way GPT-style BPE pre-tokenizers split text
(letter runs at case changes, digit groups of three, punctuation, whitespace), and pieces are
charged by length with weights fitted on map lines rendered from the Django, Rust std and LLVM
corpora against the cl100k_base and o200k_base encodings (read with the `bpe-openai` package,
which embeds them, during development only). See TOKEN_WEIGHTS for the fit and its margin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ELISION = "⋮"
MAX_SIGNATURE = 200  # characters; longer signatures are cut with "…"
INDENT = "    "
MIN_ROW_TOKENS = 3  # no row (line number, bar, a name, line break) costs less
MAX_MISSES = 200  # candidates that did not fit, in a row, before the map is called full

_TIGHT_OPEN = re.compile(r"([(\[{<]) ")  # `f( self` from a multi-line header -> `f(self`
_TIGHT_CLOSE = re.compile(r",? ([)\]}])")  # `x, )` -> `x)`
# Pieces as BPE pre-tokenizers cut them: an optional leading space joins a word.
_PIECES = re.compile(r" ?[A-Z]*[a-z]+| ?[A-Z]+(?![a-z])| ?\d{1,3}| ?[^\sA-Za-z\d]+|\s+")
# Fitted weights (see module docstring): a word piece costs BASE plus one token per
# LETTERS_PER_TOKEN letters beyond the first chunk; punctuation runs cost per character pair.
WORD_CHUNK = 7
PUNCT_CHUNK = 2
NON_ASCII_COST = 1
TOKEN_MARGIN = 1.0  # multiplier applied to each line's estimate


@dataclass(frozen=True, slots=True)
class Row:
    """One line the map can show: a definition's signature at its line and nesting depth."""

    key: int  # the symbol's id
    line: int
    depth: int
    text: str
    ranked: bool = True  # counts as a shown symbol (headers of impls and namespaces do not)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A definition to show, with the headers that must come with it (outermost first)."""

    path: str
    width: int  # digits of the file's last line number, so its rows align
    rows: tuple[Row, ...]  # enclosing headers, then the definition itself


@dataclass(slots=True)
class _Block:
    path: str
    width: int
    rows: list[tuple[int, int, int]] = field(default_factory=list)  # sorted (line, depth, key)
    texts: dict[int, Row] = field(default_factory=dict)
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Layout:
    """The rendered map: its text, token count, and what it shows, per file in order."""

    text: str
    tokens: int
    files: list[tuple[str, list[Row]]]


def count_tokens(text: str) -> int:
    """Estimated tokens of `text` (an upper-leaning estimate; additive over lines)."""
    return sum(line_tokens(line) for line in text.split("\n")) if text else 0


def line_tokens(line: str) -> int:
    """Estimated tokens of one line plus its line break."""
    total = 1.0  # the line break
    for piece in _PIECES.findall(line):
        total += _piece_tokens(piece)
    extra = sum(1 for c in line if ord(c) > 127)
    return int(total * TOKEN_MARGIN + extra * NON_ASCII_COST + 0.999)


def _piece_tokens(piece: str) -> float:
    stripped = piece.lstrip(" ")
    if not stripped:
        return 1.0  # a run of spaces (indentation)
    if stripped[0].isalpha():
        return 1.0 + (len(stripped) - 1) // WORD_CHUNK
    if stripped[0].isdigit():
        return 1.0
    ascii_part = sum(1 for c in stripped if ord(c) < 128)
    return max(1.0, (ascii_part + PUNCT_CHUNK - 1) // PUNCT_CHUNK) if ascii_part else 0.0


def signature_text(signature: str) -> str:
    """A signature fit for one map row: one line, cut at MAX_SIGNATURE characters."""
    text = _TIGHT_CLOSE.sub(r"\1", _TIGHT_OPEN.sub(r"\1", " ".join(signature.split())))
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def row_text(row: Row, width: int) -> str:
    return f"{row.line:>{width}}│{INDENT * row.depth}{row.text}"


def elision_text(width: int) -> str:
    return " " * width + ELISION


def footer_text(files: int, symbols: int) -> str:
    return f"({files} more files and {symbols} more symbols left out)"


class MapBuilder:
    """Greedy filling of a token budget with candidates offered best first."""

    def __init__(self, budget: int, total_files: int, total_symbols: int) -> None:
        self.budget = budget
        self.total_files = total_files
        self.total_symbols = total_symbols
        self.reserved = count_tokens(footer_text(total_files, total_symbols))
        self.used = self.reserved
        self.blocks: dict[str, _Block] = {}
        self.shown: set[int] = set()
        self._row_cost: dict[tuple[int, int], int] = {}
        self.misses = 0  # candidates in a row that did not fit

    @property
    def fits_anything(self) -> bool:
        """False once the budget is spent: no row is that cheap, or the last many did not fit."""
        return self.budget - self.used >= MIN_ROW_TOKENS and self.misses < MAX_MISSES

    def offer(self, candidate: Candidate) -> bool:
        """Add the candidate if its rows fit in what is left of the budget."""
        block = self.blocks.get(candidate.path)
        new_block = block is None
        if block is None:
            block = _Block(candidate.path, candidate.width)
        keys = {key for _, _, key in block.rows}
        # Two names on one line (`a = b = 1`) make one row.
        same_line = {(block.texts[key].line, block.texts[key].text) for key in keys}
        new_rows = [
            r for r in candidate.rows if r.key not in keys and (r.line, r.text) not in same_line
        ]
        if not new_rows:
            self.shown.update(r.key for r in candidate.rows if r.ranked)
            return True
        rows = sorted([*block.rows, *((r.line, r.depth, r.key) for r in new_rows)])
        texts = {**block.texts, **{r.key: r for r in new_rows}}
        tokens = self._block_tokens(block, rows, texts)
        cost = tokens - block.tokens + (line_tokens(f"{candidate.path}:") if new_block else 0)
        if self.used + cost > self.budget:
            self.misses += 1
            return False
        self.misses = 0
        self.used += cost
        block.rows, block.texts, block.tokens = rows, texts, tokens
        self.blocks[candidate.path] = block
        self.shown.update(r.key for r in candidate.rows if r.ranked)
        return True

    def _block_tokens(
        self, block: _Block, rows: list[tuple[int, int, int]], texts: dict[int, Row]
    ) -> int:
        total = 0
        for _, _, key in rows:
            cost = self._row_cost.get((key, block.width))
            if cost is None:
                cost = self._row_cost[(key, block.width)] = line_tokens(
                    row_text(texts[key], block.width)
                )
            total += cost
        gaps = sum(1 for (a, _, _), (b, _, _) in zip(rows, rows[1:], strict=False) if b > a + 1)
        return total + gaps * line_tokens(elision_text(block.width))

    def layout(self, file_order: dict[str, tuple]) -> Layout:
        """The map text: files in `file_order` (a sort key per path), rows by line, then the footer."""
        lines: list[str] = []
        files: list[tuple[str, list[Row]]] = []
        for path in sorted(self.blocks, key=lambda p: file_order.get(p, (float("inf"), p))):
            block = self.blocks[path]
            lines.append(f"{path}:")
            previous = None
            for line, _, key in block.rows:
                if previous is not None and line > previous + 1:
                    lines.append(elision_text(block.width))
                lines.append(row_text(block.texts[key], block.width))
                previous = line
            files.append((path, [block.texts[key] for _, _, key in block.rows]))
        shown_files = len(self.blocks)
        lines.append(
            footer_text(self.total_files - shown_files, self.total_symbols - len(self.shown))
        )
        text = "\n".join(lines) + "\n"
        return Layout(text, count_tokens(text.removesuffix("\n")), files)
