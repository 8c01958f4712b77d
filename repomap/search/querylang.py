"""The search query language: text -> syntax tree -> a safe FTS5 MATCH string. Pure: no SQL here.

Syntax (mode `fts`):

- Bare words are ANDed in any order: `configure authentication`.
- `"a phrase"` needs its words adjacent and in order.
- `AND`, `OR`, `NOT` (upper case only; `and`, `or`, `not` are plain words) and parentheses:
  `database AND (timeout OR deadline)`, `pool NOT thread`, `pool AND NOT thread`.
- Precedence, tightest first: `NOT`, then `AND` (explicit or implied by a space), then `OR`.
  So `a b OR c` is `(a AND b) OR c` and `a NOT b c` is `a AND c AND NOT b`. `NOT` subtracts
  from the other terms of its `AND` group, so a group needs at least one term without `NOT`.
- `connect*` matches every word starting with `connect`. `*` is allowed only there, at the
  end of a bare word right after a letter or digit; anywhere else it is an error.
- Words are matched the way the index stores them (SQLite's unicode61 tokenizer: letters,
  digits and private-use characters make words, everything else separates them, case and
  diacritics are ignored). A bare word with punctuation (`std::vector`, `self.pool`, `error:`,
  `foo-bar`, `C++`, `#include`, `don't`, `f(x)`) is the phrase of its words, so it is never
  read as an operator or a column filter. A word with no letters or digits at all (`->`,
  `::`, `+=`) cannot be found with a word index: it is left out of the query and reported in
  `Query.ignored` (literal mode finds it).
- Parentheses group only at the edges of a word: `(a OR b)` groups, while the parentheses in
  `foo()` or `f(x)` are punctuation inside the word.
- Identifiers: a mixed-case bare word such as `ConnectionPool` also matches its parts as a
  phrase (`connection pool`), so it finds `connection_pool`, `connectionPool` and the words
  "connection pool" too; `to_match()` does this expansion (see repomap/subwords.py for the
  index side).

Errors are `BadQuery` with `problem` and a 1-based code-point `position`: an empty query,
an unbalanced quote or parenthesis, a dangling or misplaced `AND`/`OR`/`NOT`, a `*` outside a
word's end, empty quotes or parentheses, nesting deeper than MAX_DEPTH, more than MAX_WORDS
words (phrases included: ranking reads every word's rows once, and 1,400 repeated common words
took a minute), a lone surrogate, or more than MAX_QUERY_LENGTH code points.

API: `parse(text) -> Query`, `to_match(query) -> str`, `query_terms(query)` (the words to
highlight), `check_literal(text)` (literal-mode validation).
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from repomap.errors import BadQuery
from repomap.search.unicode61 import is_separator
from repomap.subwords import split_identifier

MAX_QUERY_LENGTH = 4096  # code points
MAX_DEPTH = 32  # nested parentheses
MIN_PREFIX = 2  # characters before a "*"
MAX_WORDS = 32  # words in a query, phrases included: bm25 costs a pass over each word's rows
OPERATORS = ("AND", "OR", "NOT")
LITERAL_HINT = "use literal mode (--literal) to search for exact text"


# --- the syntax tree ---------------------------------------------------------------------------


class Term(NamedTuple):
    """A bare word or a quoted phrase; `words` are folded as the index folds them."""

    words: tuple[str, ...]
    prefix: bool  # the last word is a prefix (`connect*`)
    text: str  # as typed, with its quotes or its '*'
    position: int  # 1-based code point where it starts
    quoted: bool = False

    @property
    def source(self) -> str:
        """The typed text without quotes or '*': what SQLite tokenizes into the phrase."""
        return self.text[1:-1] if self.quoted else self.text.removesuffix("*")


class And(NamedTuple):
    """Every item matches and no excluded one does (`a b NOT c`)."""

    items: tuple[Node, ...]
    excluded: tuple[Node, ...] = ()


class Or(NamedTuple):
    items: tuple[Node, ...]


Node = Term | And | Or


class Query(NamedTuple):
    """A parsed query; `root` is None when every word was punctuation (see `ignored`)."""

    text: str
    root: Node | None
    ignored: tuple[str, ...] = ()  # words with no letters or digits, left out


# --- characters --------------------------------------------------------------------------------


def is_word_char(char: str) -> bool:
    """A character unicode61 keeps inside words (repomap/unicode61.py has SQLite's own table)."""
    return not is_separator(char)


def fold(word: str) -> str:
    """Lower case without diacritics, close to what unicode61 remove_diacritics 2 stores."""
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def words_of(text: str) -> tuple[str, ...]:
    """The index words of `text`, folded: runs of word characters."""
    found, current = [], []
    for char in text:
        if is_word_char(char):
            current.append(char)
        elif current:
            found.append(fold("".join(current)))
            current = []
    if current:
        found.append(fold("".join(current)))
    return tuple(word for word in found if word)


def _bad(problem: str, position: int) -> BadQuery:
    return BadQuery(problem, position)


def check_text(text: str) -> None:
    """Errors every mode shares: empty, too long, or not encodable as UTF-8."""
    if not text.strip():
        raise _bad("the query is empty; type words to search for", 1)
    if len(text) > MAX_QUERY_LENGTH:
        raise _bad(f"the query is longer than {MAX_QUERY_LENGTH} characters", MAX_QUERY_LENGTH + 1)
    for index, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            raise _bad("a lone surrogate is not a character", index + 1)


def check_literal(text: str) -> None:
    """Validate a literal-mode query (taken verbatim: spaces and every character count)."""
    check_text(text)
    if "\0" in text:
        raise _bad("a NUL character cannot be searched for", text.index("\0") + 1)


# --- lexing ------------------------------------------------------------------------------------

STAR_HINT = f"a prefix search is a word ending in '*', as in connect*; or {LITERAL_HINT}"


class _Token(NamedTuple):
    kind: str  # "word", "phrase", "op", "(", ")"
    text: str
    position: int  # 1-based


_SPACE = re.compile(r"\s+")


def _tokens(text: str) -> list[_Token]:
    """Split into words, phrases, operators and grouping parentheses.

    A `(` at the start of a word groups; one inside a word (`foo(`, `f(x`) is punctuation, and so
    is the `)` that closes it, even in a later word: `printf("%d", x)` never fails to parse.
    """
    tokens: list[_Token] = []
    opened: list[bool] = []  # one per unclosed "(": True when it groups
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        if char.isspace():
            space = _SPACE.match(text, index)
            assert space is not None  # \s is what str.isspace() calls whitespace
            index = space.end()
        elif char == '"':
            close = text.find('"', index + 1)
            if close < 0:
                raise _bad("this quote is never closed", index + 1)
            tokens.append(_Token("phrase", text[index : close + 1], index + 1))
            index = close + 1
            if index < end and text[index] == "*":
                raise _bad(f"a quoted phrase cannot end in '*'; {STAR_HINT}", index + 1)
        elif char == "(":
            opened.append(True)
            tokens.append(_Token("(", char, index + 1))
            index += 1
        elif char == ")" and (not opened or opened[-1]):
            if opened:
                opened.pop()
            tokens.append(_Token(")", char, index + 1))
            index += 1
        else:
            index = _word(text, index, tokens, opened)
    return tokens


def _word(text: str, start: int, tokens: list[_Token], opened: list[bool]) -> int:
    """Scan a bare word; a `)` that closes a grouping `(` ends it."""
    index = start
    while index < len(text):
        char = text[index]
        if char.isspace() or char == '"':
            break
        if char == "(":
            opened.append(False)
        elif char == ")":
            if not opened or opened[-1]:
                break
            opened.pop()
        index += 1
    word = text[start:index]
    if word.strip("()"):  # a word that is only in-word parentheses adds nothing
        tokens.append(_Token("op" if word in OPERATORS else "word", word, start + 1))
    return index


def _term(token: _Token) -> Term | str:
    """A Term, or the token's text when it has no words (punctuation only)."""
    if token.kind == "phrase":
        inner = token.text[1:-1]
        if not inner.strip():
            raise _bad("empty quotes: put words between them", token.position)
        words = words_of(inner)
        return Term(words, False, token.text, token.position, quoted=True) if words else token.text
    text, prefix = token.text, False
    star = text.find("*")
    if star >= 0:
        position = token.position + star
        if text == "*":
            raise _bad(f"a lone '*' matches nothing; {STAR_HINT}", position)
        if star != len(text) - 1:
            raise _bad(f"'*' is allowed only at the end of a word; {STAR_HINT}", position)
        if star == 0 or not is_word_char(text[star - 1]):
            raise _bad(f"'*' must follow a letter or digit; {STAR_HINT}", position)
        text, prefix = text[:-1], True
    words = words_of(text)
    if prefix and len(words[-1]) < MIN_PREFIX:
        problem = f"a prefix needs at least {MIN_PREFIX} letters or digits before '*'"
        raise _bad(f"{problem}: {words[-1]}* would match nearly everything", token.position)
    return Term(words, prefix, token.text, token.position) if words else token.text


# --- parsing -----------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the tokens.

    or_group  := and_group ("OR" and_group)*
    and_group := ["AND"] unary ([AND] unary)*      -- at least one unary without NOT
    unary     := ["NOT"] item
    item      := word | phrase | "(" or_group ")"
    """

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.ignored: list[str] = []
        self.words = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def parse(self) -> Node | None:
        node = self.or_group(depth=0)
        token = self.peek()
        if token is not None:  # or_group stops early only at a ")"
            raise _bad("this ')' closes nothing", token.position)
        return node

    def or_group(self, depth: int) -> Node | None:
        items = [self.and_group(depth, after=None)]
        while (token := self.peek()) is not None and _is_op(token, "OR"):
            self.take()
            items.append(self.and_group(depth, after=token))
        kept = [item for item in items if item is not None]
        if not kept:
            return None
        flat = _flatten(kept, Or)
        return flat[0] if len(flat) == 1 else Or(tuple(flat))

    def and_group(self, depth: int, after: _Token | None) -> Node | None:
        items: list[Node | None] = []
        excluded: list[Node | None] = []
        first_not: _Token | None = None
        while (token := self.peek()) is not None and token.kind != ")" and not _is_op(token, "OR"):
            if _is_op(token, "AND"):
                self.take()
                if not items and not excluded:
                    raise _bad("AND has nothing before it", token.position)
                self.expect_operand(token)
                continue
            negate = _is_op(token, "NOT")
            if negate:
                self.take()
                self.expect_operand(token)
                first_not = first_not or token
            (excluded if negate else items).append(self.item(depth))
        if not items and not excluded:
            self.missing_operand(after)
        if not items:
            assert first_not is not None  # only exclusions: each came after a NOT
            raise _bad(
                "NOT has nothing to exclude from; put the words to find first, as in: "
                "pool NOT thread",
                first_not.position,
            )
        kept = [item for item in items if item is not None]
        dropped = [item for item in excluded if item is not None]
        if not kept:
            return None  # only punctuation left to find: nothing a word index can match
        flat = _flatten(kept, And)
        if len(flat) == 1 and not dropped:
            return flat[0]
        return And(tuple(flat), tuple(_unique(dropped)))

    def expect_operand(self, operator: _Token) -> None:
        token = self.peek()
        if token is None or token.kind == ")" or _is_op(token, "AND") or _is_op(token, "OR"):
            raise _bad(f"{operator.text} has nothing after it", operator.position)
        if _is_op(token, "NOT") and operator.text == "NOT":
            raise _bad("NOT is followed by another NOT", token.position)

    def missing_operand(self, after: _Token | None) -> None:
        token = self.peek()
        if after is not None:
            raise _bad("OR has nothing after it", after.position)
        if token is not None and _is_op(token, "OR"):
            raise _bad("OR has nothing before it", token.position)
        assert token is not None  # check_text refuses a blank query, item() an empty group
        raise _bad("this ')' closes nothing", token.position)  # "()" is caught in item()

    def item(self, depth: int) -> Node | None:
        token = self.take()
        if token.kind != "(":
            term = _term(token)
            if isinstance(term, str):
                self.ignored.append(term)
                return None
            self.words += len(term.words)
            if self.words > MAX_WORDS:
                raise _bad(
                    f"the query has more than {MAX_WORDS} words; search for fewer, or find a "
                    "long exact text with literal mode (--literal)",
                    token.position,
                )
            return term
        if depth >= MAX_DEPTH:
            raise _bad(f"parentheses are nested deeper than {MAX_DEPTH} levels", token.position)
        following = self.peek()
        if following is None:
            raise _bad("this '(' is never closed", token.position)
        if following.kind == ")":
            raise _bad("empty parentheses: put words between them", token.position)
        node = self.or_group(depth + 1)
        close = self.peek()
        if close is None or close.kind != ")":
            raise _bad("this '(' is never closed", token.position)
        self.take()
        return node


def _is_op(token: _Token, name: str) -> bool:
    return token.kind == "op" and token.text == name


def _flatten(items: list[Node], kind: type[And] | type[Or]) -> list[Node]:
    """(a AND b) AND c -> a AND b AND c (groups without exclusions); a repeated word once.

    `the the the` means `the`, and ranking repeats its work for every copy.
    """
    flat: list[Node] = []
    for item in items:
        if (kind is Or and isinstance(item, Or)) or (
            kind is And and isinstance(item, And) and not item.excluded
        ):
            flat.extend(item.items)
        else:
            flat.append(item)
    return _unique(flat)


def _unique(items: list[Node]) -> list[Node]:
    seen: set[tuple] = set()
    unique = []
    for item in items:
        key = (item.words, item.prefix, item.quoted) if isinstance(item, Term) else (id(item),)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def parse(text: str) -> Query:
    """Parse a fts-mode query; raises BadQuery naming the problem and its position."""
    check_text(text)
    parser = _Parser(_tokens(text))
    root = parser.parse()
    return Query(text, root, tuple(parser.ignored))


def and_terms(query: Query) -> tuple[Term, ...]:
    """The words and phrases of a query that is only their AND (`configure auth "user name"`),
    or () for one with OR, NOT or a single term: what a note can count one by one."""
    root = query.root
    if isinstance(root, And) and not root.excluded and all(isinstance(i, Term) for i in root.items):
        return tuple(item for item in root.items if isinstance(item, Term))
    return ()


def term_match(term: Term) -> str:
    """One term's FTS5 MATCH string, as `to_match` renders it inside a query."""
    return _render(term)


# --- rendering ---------------------------------------------------------------------------------


def _quote(text: str, prefix: bool) -> str:
    """An FTS5 string: SQLite tokenizes it exactly as it tokenized the index; never syntax."""
    escaped = text.replace("\0", " ").replace('"', '""')
    return f'"{escaped}"' + ("*" if prefix else "")


def _render(node: Node) -> str:
    if isinstance(node, Term):
        match = _quote(node.source, node.prefix)
        parts = identifier_parts(node)
        return f"({match} OR {_quote(' '.join(parts), node.prefix)})" if parts else match
    if isinstance(node, Or):
        return "(" + " OR ".join(_render(item) for item in node.items) + ")"
    positive = " AND ".join(_render(item) for item in node.items)
    if not node.excluded:
        return f"({positive})"
    negative = " OR ".join(_render(item) for item in node.excluded)
    return f"(({positive}) NOT ({negative}))"


def identifier_parts(term: Term) -> tuple[str, ...] | None:
    """`ConnectionPool` -> ("connection", "pool"): the words subwords.py indexes it as."""
    raw = term.source
    if term.quoted or not raw.isascii() or not raw.isalnum() or raw.islower() or raw.isupper():
        return None
    parts = tuple(split_identifier(raw))
    return parts if len(parts) > 1 else None


def to_match(query: Query) -> str | None:
    """The FTS5 MATCH string: every word double-quoted, so no user text is ever FTS5 syntax."""
    return None if query.root is None else _render(query.root)


def query_terms(query: Query) -> list[tuple[str, bool]]:
    """(word, is_prefix) of every word that is not excluded, for highlighting."""
    found: list[tuple[str, bool]] = []

    def visit(node: Node) -> None:
        if isinstance(node, Term):
            for index, word in enumerate(node.words):
                found.append((word, node.prefix and index == len(node.words) - 1))
            parts = identifier_parts(node) or ()
            for index, part in enumerate(parts):
                found.append((part, node.prefix and index == len(parts) - 1))
        else:
            for item in node.items:
                visit(item)

    if query.root is not None:
        visit(query.root)
    return list(dict.fromkeys(found))
