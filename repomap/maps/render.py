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
perhaps shorter, one is tried, so the budget is filled as tightly as the candidates allow. While
nothing is shown, a candidate that does not fit is tried with its parameters elided
(`void ares_send(…)`), so a tight budget shows the top definitions, never nothing. The
closing line is reserved up front, so the total never exceeds the budget.

Token counting (`count_tokens`) is an offline estimate, additive over lines so a row's cost is
known without re-rendering: each line is split the way GPT-style BPE pre-tokenizers split text
(letter runs at case changes, digit groups of three, punctuation, whitespace), and pieces are
charged by a linear model fitted (least squares, per line) on 17 maps (about 13,000 lines)
rendered from the Django, Rust std and LLVM corpora, against the larger of the cl100k_base and
o200k_base counts (read with the `bpe-openai` package, which embeds both encodings; used during
development only, never at run time). Summed over a whole map the fit came within 0.91-1.09 of
the real count: plain code lands near 0.91-1.0, and names BPE has never seen
(`atomic_cxchgweak_acqrel`) cost more. TOKEN_MARGIN (1.10) covers the worst calibration map, so
the real count of every one of them is under its budget: Python maps use about 83% of it in real
tokens, Rust and C++ maps 89-99%. Other tokenizers (Claude's is not public) may differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

ELISION = "⋮"
MAX_SIGNATURE = 200  # characters; longer signatures are cut with "…"
INDENT = "    "
MIN_ROW_TOKENS = 3  # no row (line number, bar, a name, line break) costs less
MAX_MISSES = 200  # candidates that did not fit, in a row, before the map is called full

_TIGHT_OPEN = re.compile(r"([(\[{<]) ")  # `f( self` from a multi-line header -> `f(self`
_TIGHT_CLOSE = re.compile(r",? ([)\]}])")  # `x, )` -> `x)`
# Pieces as BPE pre-tokenizers cut them: an optional leading space joins a word.
_PIECES = re.compile(r" ?[A-Z]*[a-z]+| ?[A-Z]+(?![a-z])| ?\d{1,3}| ?[^\sA-Za-z\d]+|\s+")
# Milli-tokens per feature of a line, least-squares fitted per line (the line break included)
# on map text from the three corpora, counted with cl100k_base and o200k_base (the larger),
# then multiplied by TOKEN_MARGIN so that no calibration map's estimate fell below its real
# count. Integers, so sums are exact and the same in every order.
LINE_COST = 1032  # each line: its line break and leading piece
WORD_COST = 892  # each letter run (split at case changes, as BPE does)
LONG_WORD_COST = 88  # each letter beyond the sixth of a letter run
NUMBER_COST = 461  # each group of up to three digits
PUNCT_COST = 609  # each ASCII punctuation character
SPACE_RUN_COST = 786  # each run of spaces not joined to a word (indentation, alignment)
NON_ASCII_COST = 2857  # each non-ASCII character (│ ⋮ …: several bytes, often 2-3 tokens)
TOKEN_MARGIN = 1.10  # the largest real/estimate ratio on the 17 calibration maps was 1.092


@dataclass(frozen=True, slots=True)
class Row:
    """One line the map can show: a definition's signature at its line and nesting depth."""

    key: int  # the symbol's id
    line: int
    depth: int
    text: str
    ranked: bool = True  # counts as a shown symbol (headers of impls and namespaces do not)
    brief: str = ""  # the text with its parameters elided (brief_text), "" when not shorter


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
    tokens: int = 0  # milli-tokens of its rows and elision markers
    merged: set[int] = field(default_factory=set)  # keys whose row another row on its line took


def _said_on_line(block: _Block, row: Row, pending: list[Row]) -> int | None:
    """Whether a row of `block` (or one about to join it) on `row`'s line and depth already
    holds `row`'s text (-1), or `row` holds a row's text of the block (that row's key), or
    neither (None)."""
    for other in (*block.texts.values(), *pending):
        if other.line != row.line or other.depth != row.depth:
            continue
        if _holds(other.text, row.text):
            return -1
        if _holds(row.text, other.text) and other.key in block.texts:
            return other.key
    return None


def _holds(text: str, part: str) -> bool:
    """Whether `part` is in `text` as whole words (`int opt` is not in `int optind`)."""
    at = text.find(part)
    while at >= 0:
        end = at + len(part)
        if (at == 0 or not _is_word(text[at - 1]) or not _is_word(part[0])) and (
            end == len(text) or not _is_word(text[end]) or not _is_word(part[-1])
        ):
            return True
        at = text.find(part, at + 1)
    return False


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


@dataclass(frozen=True, slots=True)
class Layout:
    """The rendered map: its text, token count, and what it shows, per file in order."""

    text: str
    tokens: int
    files: list[tuple[str, list[Row]]]


def count_tokens(text: str) -> int:
    """Estimated tokens of `text` (see the module docstring); additive over lines."""
    return -(-sum(line_cost(line) for line in text.split("\n")) // 1000) if text else 0


def line_cost(line: str) -> int:
    """Estimated milli-tokens of one line and its line break."""
    words = long_letters = numbers = punct = spaces = 0
    for piece in _PIECES.findall(line):
        stripped = piece.lstrip(" ")
        if not stripped:
            spaces += 1
        elif stripped[0].isalpha():
            words += 1
            long_letters += max(0, len(stripped) - 6)
        elif stripped[0].isdigit():
            numbers += 1
        else:
            punct += len(stripped.encode("ascii", "ignore"))
    non_ascii = len(line) - len(line.encode("ascii", "ignore"))
    cost = (
        LINE_COST
        + WORD_COST * words
        + LONG_WORD_COST * long_letters
        + NUMBER_COST * numbers
        + PUNCT_COST * punct
        + SPACE_RUN_COST * spaces
        + NON_ASCII_COST * non_ascii
    )
    return int(cost * TOKEN_MARGIN)


def signature_text(signature: str) -> str:
    """A signature fit for one map row: one line, cut at MAX_SIGNATURE characters."""
    text = _TIGHT_CLOSE.sub(r"\1", _TIGHT_OPEN.sub(r"\1", " ".join(signature.split())))
    body = text.find(" {")
    if body > 0 and ";" in text[body:]:  # a header that swallowed its body: keep the header
        text = text[:body]
    return text if len(text) <= MAX_SIGNATURE else text[: MAX_SIGNATURE - 1] + "…"


def brief_text(text: str, name: str) -> str:
    """A row's text with the parameters after `name` elided (`void ares_send(…)`), for a map
    whose budget holds no whole row; "" when that is not shorter."""
    at = text.find(f"{name}(")
    if at < 0:
        return ""
    opened = at + len(name) + 1
    brief = text[:opened] + (")" if text.startswith(")", opened) else "…)")
    return brief if len(brief) < len(text) else ""


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
        self.reserved = line_cost(footer_text(total_files, total_symbols))  # milli-tokens
        self.used = self.reserved
        self.blocks: dict[str, _Block] = {}
        self.shown: set[int] = set()
        self._row_cost: dict[tuple[int, int, str], int] = {}  # by (key, width, text)
        self.misses = 0  # candidates in a row that did not fit
        self._elision_cost: dict[int, int] = {}

    @property
    def fits_anything(self) -> bool:
        """False once the budget is spent: no row is that cheap, or the last many did not fit."""
        return self.budget * 1000 - self.used >= MIN_ROW_TOKENS * 1000 and self.misses < MAX_MISSES

    def offer(self, candidate: Candidate) -> bool:
        """Add the candidate if its rows fit in what is left of the budget; while the map is
        empty, with its parameters elided if it does not fit whole (`void ares_send(…)`): a
        budget that holds no signature of a file (`--path`) still shows its top definitions,
        not nothing."""
        if self._offer(candidate):
            return True
        if self.blocks or not any(r.brief for r in candidate.rows):
            return False
        self.misses -= 1  # one miss for the candidate, whichever form
        brief = tuple(replace(r, text=r.brief or r.text, brief="") for r in candidate.rows)
        return self._offer(replace(candidate, rows=brief))

    def _offer(self, candidate: Candidate) -> bool:
        block = self.blocks.get(candidate.path)
        new_block = block is None
        if block is None:
            block = _Block(candidate.path, candidate.width)
        keys = {key for _, _, key in block.rows} | block.merged
        # Two names on one line make one row: `a = b = 1`, and C's `typedef struct TValue {…}
        # TValue` with the `struct TValue` it holds (each a symbol; the longer row says both).
        new_rows: list[Row] = []
        replaced: set[int] = set()
        for r in candidate.rows:
            if r.key in keys:
                continue
            said = _said_on_line(block, r, new_rows)
            if said is None:
                new_rows.append(r)
            elif said == -1:  # another row on the line holds this one's text
                continue
            else:  # this row holds another's text: it takes that row's place
                replaced.add(said)
                new_rows.append(r)
        if not new_rows:
            self.shown.update(r.key for r in candidate.rows if r.ranked)
            return True
        rows = sorted(
            [*(row for row in block.rows if row[2] not in replaced),
             *((r.line, r.depth, r.key) for r in new_rows)]
        )  # fmt: skip
        texts = {**{k: v for k, v in block.texts.items() if k not in replaced},
                 **{r.key: r for r in new_rows}}  # fmt: skip
        tokens = self._block_tokens(block, rows, texts)
        cost = tokens - block.tokens + (line_cost(f"{candidate.path}:") if new_block else 0)
        if self.used + cost > self.budget * 1000:
            self.misses += 1
            return False
        self.misses = 0
        self.used += cost
        block.rows, block.texts, block.tokens = rows, texts, tokens
        block.merged |= replaced
        self.blocks[candidate.path] = block
        self.shown.update(r.key for r in candidate.rows if r.ranked)
        return True

    def _block_tokens(
        self, block: _Block, rows: list[tuple[int, int, int]], texts: dict[int, Row]
    ) -> int:
        total = 0
        for _, _, key in rows:
            row = texts[key]
            cost = self._row_cost.get((key, block.width, row.text))
            if cost is None:
                cost = self._row_cost[(key, block.width, row.text)] = line_cost(
                    row_text(row, block.width)
                )
            total += cost
        gaps = sum(1 for (a, _, _), (b, _, _) in zip(rows, rows[1:], strict=False) if b > a + 1)
        if gaps and block.width not in self._elision_cost:
            self._elision_cost[block.width] = line_cost(elision_text(block.width))
        return total + gaps * self._elision_cost.get(block.width, 0)

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
        footer = line_cost(lines[-1]) - self.reserved  # fewer left out: never more than reserved
        return Layout(text, -(-(self.used + footer) // 1000), files)
