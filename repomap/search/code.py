"""`repomap search`: find code by what it does, from a question typed as a person types it.

The units are the chunks of repomap/index/chunks.py (a definition each, a file's module-level
code, pieces of docs). Two signals:

- lexical: BM25 over the chunks' words (FTS5, porter-stemmed; the title, head and body columns
  weighed apart), the question's words ORed after its stop words are dropped, so a question
  needs none of its words to be in the answer; a server computes the same scores from the
  postings it holds in memory (search/bm25.py), ~20x faster;
- semantic: cosine between the question's and the chunks' embeddings (repomap/embed).

`hybrid` fuses the two scores with a weight; then small priors: definitions above module and
docs chunks, tests, examples and vendored code demoted unless the question or a filter names
them; in hybrid, a chunk found by its words gains a little by the share of the question's words
it holds (`word_coverage`, learned by bench/fusion_fit.py). Filters (path, language, kind) apply before ranking.
"""

from __future__ import annotations

import functools
import heapq
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from repomap import paths, store
from repomap.errors import BadArgument, BadQuery, RepomapError
from repomap.index import chunks
from repomap.index.signatures import parameters_key
from repomap.index.vocabulary import KINDS as SYMBOL_KINDS
from repomap.languages import DATA_FORMATS, DOC_FORMATS, LANGUAGE_ALIASES, LANGUAGES
from repomap.limits import check_limit
from repomap.search import morphology
from repomap.search.filters import Filters
from repomap.search.match_lines import MatchLine, match_lines
from repomap.store import ROWS_PER_FILE, Store
from repomap.store.postings import chunks_tokenizer
from repomap.subwords import split_identifier

T = TypeVar("T")

MODES = ("hybrid", "lexical", "semantic")
# Without --mode: hybrid when the index has vectors (it wins on bench/relevance.py's questions,
# see bench/README.md), lexical when it has none yet.
DEFAULT_MODE = "hybrid"
MAX_QUERY_CHARS = 4096
# The kinds a result can have, so `--kind` takes each: commits and data records are chunks too.
CHUNK_KINDS = (*sorted(chunks.SEARCH_KINDS), "module", "section", "commit", "data")
DOC_LANGUAGES = tuple(sorted(set(DOC_FORMATS.values())))  # markdown, text
DATA_LANGUAGES = tuple(sorted(set(DATA_FORMATS.values())))  # csv, json, toml, yaml ...

# BM25 weights of the title (name), place (path), head (signature, docs, comments) and body.
COLUMN_WEIGHTS = (3.0, 1.0, 2.0, 1.0)
CANDIDATES = 300  # lexical candidates re-ranked with the priors
TEST_FACTOR = 0.5  # tests, examples, benchmarks, vendored code
# ... and when a question's words ask for them (_TEST_WORDS): still a little below, as "tests"
# is often what a project's own code is about (googletest's sharding: "split tests across
# machines" had nine tests in its first ten places, none of them the answer). Neutral on the
# 1,040 questions of bench/relevance.py and the search users' sets (bench/README.md).
ASKED_TEST_FACTOR = 0.75
# A data file's records (a CI workflow, a manifest) hold many words and rarely what a question
# about code asks: serde_json's ci.yml came first for "skip over a value without building
# anything". As module code, then. A macro (a one-line `#define`, a `macro_rules!`) is short, so
# BM25 put it above the function it stands for or calls (libconfuse's `CFG_STR_CB` above the
# function that prints a value): as a type, then, by 0.85 (bench/relevance.py: tune half
# unchanged, heldout MRR 0.518 -> 0.520; 0.7 and 0.5 put two heldout answers a place or two lower).
KIND_FACTORS = {"module": 0.6, "section": 0.8, "class": 0.85, "struct": 0.85, "impl": 0.8,
                "trait": 0.85, "enum": 0.85, "union": 0.85, "data": 0.6,
                "macro": 0.85, "type": 0.7}  # fmt: skip

# Words a question is made of that say nothing of the code it asks for.
_STOP_WORDS_TEXT = """
    a an the and or but of to in on at by for with from into onto over under about as is are
    was were be been being do does did done doing have has had having i me my we our you your it
    its this that these those there here where when what which who whom whose why how can could
    should would will shall may might must get gets got find finds found code function method
    implemented implement implementation defined define definition located location file place
    part logic thing things happen happens way ways some any all each every one see show tell
    use used uses using make makes made work works if then than so not no yes just only also
    whether
"""
# English function words: Snowball's English stop list, with the parts of contractions a
# question's "doesn't" and "isn't" leave after \w+ (NLTK's list adds them the same way). Left in,
# "why doesn't it fail when another process creates the same folder" ranked every chunk that
# says "doesn't", "another" and "same" above the one that creates folders (bench/README.md).
_FUNCTION_WORDS_TEXT = """
    me myself ours ourselves yours yourself yourselves he him his himself she her hers herself
    itself they them their theirs themselves am ought because until while against between
    through during before after above below up down out off again further once both few more
    most other such nor own same too very now don doesn isn aren wasn weren hasn haven hadn
    didn won wouldn shan shouldn couldn mustn mightn needn ll ve re
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split() + _FUNCTION_WORDS_TEXT.split())
_WORD = re.compile(r"\w+", re.UNICODE)
_ALPHANUMERIC = re.compile(r"[a-z0-9]+")  # FTS5's unicode61 tokens of an ASCII identifier
# Words that ask for tests, examples, benchmarks or vendored code: with one, they are not
# demoted. Not singular `sample` and `demo` (a sample rate, a sample list: a search user's "from
# a sample list" put a test first), as paths.TEST_FOLDERS' word lists do.
_TEST_WORDS = frozenset(
    {"test", "tests", "testing", "example", "examples", "bench", "benchmark", "vendor", "vendored",
     "bundled", "stub", "stubs", "pyi", "fuzz", "fuzzer", "fuzzing", "samples", "demos",
     "tutorial"}
)  # fmt: skip
# `example` where it asks for no example: "for example", and the names RFC 2606
# keeps for examples (`*.example.net`, `example.com`: cpp-httplib's wildcard test was first).
_EXAMPLE_NOT_ASKED = re.compile(
    r"\bfor\s+example\b|\bexample\.(?:com|net|org|edu)\b|[*.]\.?example\b", re.IGNORECASE
)


# Of those, the words a project's own code is often about: a test framework's or runner's
# (googletest, pytest, Catch2). Asked with these alone, tests are demoted less, not lifted.
_SUBJECT_TEST_WORDS = frozenset({"test", "tests", "testing"})


def test_factor(question: str, filters: Filters) -> float:
    """What a demoted chunk's score (a test's, an example's, vendored code's) is multiplied by
    for this question: TEST_FACTOR; 1.0 when a path filter names such files or the question
    asks for them by a word of their own (`vendored`, `examples`, `stub`); ASKED_TEST_FACTOR
    when its only such words are `test`, `tests`, `testing`."""
    if filters.names_tests:
        return 1.0
    terms = query_terms(_EXAMPLE_NOT_ASKED.sub(" ", question))
    asked = {term for term in terms if term in _TEST_WORDS}
    if not asked:
        return TEST_FACTOR
    return ASKED_TEST_FACTOR if asked <= _SUBJECT_TEST_WORDS else 1.0


# A lexical candidate: (BM25 score, is_test, kind, file id: None for docs and records); the
# traits of any candidate: (is_test, kind, file id).
Candidate = tuple[float, bool, str, int | None]
Traits = tuple[bool, str, int | None]


@dataclass(frozen=True, slots=True)
class CodeHit:
    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    language: str
    score: float  # 0-1, best first
    snippet: str
    chunk_id: int = field(default=0, compare=False, repr=False)  # where the snippet is read
    # the lines of its range holding the most of the question's words (search/match_lines.py)
    match_lines: tuple[MatchLine, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "start_line": self.start_line, "end_line": self.end_line,
            "kind": self.kind, "name": self.name, "qualified_name": self.name,
            "language": self.language,
            "score": self.score, "snippet": self.snippet,
            "match_lines": [line.as_dict() for line in self.match_lines],
        }  # fmt: skip


TIMED_STAGES = ("embed", "vector", "lexical", "total")


@dataclass
class CodeResults:
    query: str
    mode: str
    hits: list[CodeHit]
    truncated: bool
    timings_ms: dict[str, float] = field(default_factory=dict)
    model_id: str | None = None
    coverage: float | None = None  # share of chunks with a vector (semantic and hybrid)
    server: str | None = None  # the running `repomap serve` that answered, if one did
    # Chunks that hold any of the question's words (None: not asked, semantic mode). 0 in
    # hybrid mode: every result is a nearest neighbour by meaning, however unrelated.
    word_matches: int | None = None
    # hybrid: the cosine's share this question was ranked with (semantic_share); not shown
    semantic_share: float | None = None
    # results' files changed since they were indexed (a search with --no-refresh): their lines
    # may be off, and they show no match_lines
    changed_files: list[str] = field(default_factory=list)
    # How well the best result fits the question, comparable between indexes (asked with
    # `compare`): scores are 0-1 within one index, each index's best at 1.0 (see `strength`)
    strength: float | None = None
    best_cosine: float | None = None  # the nearest chunk's, in semantic and hybrid mode

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [hit.as_dict() for hit in self.hits],
            "count": len(self.hits),
            "truncated": self.truncated,
            "meta": {
                # every stage named, 0 for one the mode does not run: one shape for every mode
                "timings_ms": {
                    k: round(v, 2)
                    for k, v in {**dict.fromkeys(TIMED_STAGES, 0.0), **self.timings_ms}.items()
                },
                "model_id": self.model_id,
                "coverage": self.coverage,
                "server": self.server,
                "word_matches": self.word_matches,
                "changed_files": self.changed_files,
            },
        }


NO_WORDS_NOTE = (
    "no chunk holds any of the question's words: the results are only the nearest by meaning"
)
CHANGED_NOTE = (
    "changed since indexed, so lines may be off and no match lines are shown "
    "(`repomap index` updates them): {}"
)
COMMON_WORDS_NOTE = (
    "every word of the question is a common word ({}): the results hold those words; "
    "say what the code does, or use a name"
)


NOTHING_FOUND = "no chunk holds any of the question's words"
NOTHING_FOUND_FILTERED = "no chunk the filters keep holds any of the question's words"


def nothing_found_note(mode: str, best_cosine: float | None, filtered: bool = False) -> str:
    """Why a question with words found nothing: none of its words is in any chunk the filters
    keep, and (by meaning) the nearest chunk is below MIN_COSINE. An empty answer said only
    "nothing matches" (a search user's French question and `purple elephant dancing`)."""
    said = NOTHING_FOUND_FILTERED if filtered else NOTHING_FOUND
    if mode != "lexical" and best_cosine is not None:
        said += (
            f", and none is near it in meaning (best similarity {best_cosine:.2f}, "
            f"answers start at {MIN_COSINE:.2f})"
        )
    return said + "; say what the code does in other words, or look a name up"


NO_VECTORS_NOTE = (
    "this index has no embeddings (yet): words only; `repomap index --embed` adds search by meaning"
)


# A name as code spells it: an underscore inside (`png_calculate_crc`) or a lower-case letter
# before a capital (`parseHeaderLines`). Plain words, capitals alone (`JSON`) and dunders
# (`__init__`) are no names in a sentence; a question that is one word and nothing else
# (`echo`, `Connection`), or a word in backticks, is a name however it is spelled: an agent
# typing a bare name wants its definition, as `symbols` would give it.
_NAME_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPELLED_AS_CODE = re.compile(r"[A-Za-z0-9]_+[A-Za-z0-9]|[a-z][A-Z]")
# A qualified name (`SmallVec::grow`, `Context.invoke`, `os.path.join`): its parts name one
# definition, the last part inside the others; `SmallVec` alone is not what was asked for.
_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)+")
_BACKTICKED = re.compile(r"`([^`]+)`")
_BARE = re.compile(r"\s*`?([A-Za-z_][A-Za-z0-9_]*)`?(?:\(\))?\s*")
_PATH_SEPARATOR = re.compile(r"::|\.")


@dataclass(frozen=True)
class Named:
    """A name the question asks for: `parts[-1]`, inside `parts[:-1]` (outermost first)."""

    parts: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.parts[-1]

    def matches(self, qualified_name: str) -> bool:
        """Whether a definition of that qualified name is the one asked for: its last parts
        are the name's (`smallvec::SmallVec::grow` is `SmallVec::grow`)."""
        if len(self.parts) == 1:
            return True
        parts = _PATH_SEPARATOR.split(qualified_name)
        return tuple(parts[-len(self.parts) :]) == self.parts


def names_in(question: str) -> list[Named]:
    """The names a question asks for, each once, in order: qualified names, words in
    backticks, a question of one word, and the identifiers it spells as code does."""
    if bare := _BARE.fullmatch(question):
        return [Named((bare.group(1),))]
    found: dict[Named, None] = {}
    rest = question
    for written in (*_BACKTICKED.findall(question), *_QUALIFIED.findall(question)):
        for qualified in _QUALIFIED.findall(written) or _NAME_TOKEN.findall(written)[:1]:
            found[Named(tuple(_PATH_SEPARATOR.split(qualified)))] = None
        rest = rest.replace(written, " ")
    for token in _NAME_TOKEN.findall(rest):
        if _SPELLED_AS_CODE.search(token):
            found[Named((token,))] = None
    return list(found)


# Definitions whose own name the question spells (`repomap search png_calculate_crc`): one
# that holds the name's words more often (a macro calling it, a caller) ranked above it. Read
# from the candidates' chunks, a few hundred, through symbols' (file, line) index: from the
# symbols by name, the kernel's 4M were scanned (the name index ignores case), 9.6 s a search.
_NAMED_SQL = """
SELECT c.id, s.name, s.qualified_name, s.doc IS NOT NULL, s.kind FROM chunks c
JOIN symbols s ON s.file_id = c.file_id AND s.start_line = c.start_line
WHERE c.id IN (SELECT value FROM json_each(?)) AND s.is_definition
    AND s.name COLLATE NOCASE IN (SELECT value FROM json_each(?))"""


def lift_named(
    db: Store,
    question: str,
    scored: dict[int, float],
    tests: set[int] = frozenset(),  # type: ignore[assignment]
    tests_factor: float = 1.0,
) -> None:
    """The candidates that define a name the question asks for, raised above every other
    candidate in place (in their own order among themselves). A qualified name no candidate
    defines asks for its parts spelled as code instead (`self.parse_header_lines`). One of
    `tests` (demoted candidates) is raised by `tests_factor` of that (test_factor()): a search
    user's "in the no_proxy list" raised a test fixture `no_proxy` level with
    `should_bypass_proxies`, the answer."""
    asked = names_in(question)
    if not asked or not scored:
        return
    every_part = json.dumps(sorted({part for named in asked for part in named.parts}))
    defined = db.conn.execute(_NAMED_SQL, (_json_ids(list(scored)), every_part)).fetchall()
    named: set[int] = set()
    for wanted in asked:
        hits = {
            i
            for i, name, qualified, _, _ in defined
            if name == wanted.name and wanted.matches(qualified)
        }
        if not hits and len(wanted.parts) > 1:
            parts = {part for part in wanted.parts if _SPELLED_AS_CODE.search(part)}
            hits = {i for i, name, _, _, _ in defined if name in parts}
        # A Rust type's impls are named by it: "convert a Table into an InlineTable" raised
        # `struct InlineTable` and its impls of Clone, Default and Debug over the method
        # that converts (a search user's toml_edit). The type, not its impls, unless only
        # impls define the name.
        impls = {i for i, _, _, _, kind in defined if kind == "impl"}
        named |= hits - impls if hits - impls else hits
    if named:
        # Of several definitions of the name, a documented one first: the kernel's kmalloc (its
        # kernel-doc) ranked fifth, below four undocumented stand-ins in tools/ that are short.
        documented = {i for i, _, _, has_doc, _ in defined if has_doc}
        top = max(scored.values())
        for chunk_id in named:
            lift = top * (1.5 if chunk_id in documented else 1.0)
            scored[chunk_id] += lift * tests_factor if chunk_id in tests else lift


def common_words_only(question: str) -> list[str]:
    """The question's words when every one is a common word (`how does it`): query_terms
    searches them, as nothing else is left, and the answer says so (a search user got a
    confident 1.00 and no word of why); else none."""
    terms = query_terms(question)
    return terms if terms and all(term in STOP_WORDS for term in terms) else []


def query_terms(question: str) -> list[str]:
    """The words of a question worth searching: identifiers split, stop words dropped, each
    once; a question of nothing but stop words keeps them.

    An identifier's digits are no word of their own: the index's tokenizer keeps them with the
    letters around them (`parse_rfc3339` holds the token `rfc3339`, `utf8_encode` `utf8`), so
    `3339` or `8` alone matched nothing and the name's own definition lost to a longer one
    that holds the same letters (`parse_rfc3339_weak`). Such a piece is searched as written.
    A word that starts with a digit is a quantity (`2h 37m`), no identifier: split as before.
    A word written as code keeps its stop words: in capitals (`WHERE` in a SQL parser), or an
    identifier of several words (`group_where`, `getValue`): "where" and "get" say nothing in a
    question, and name the thing in code (sqlparse's `class Where` was fourth for "WHERE
    clause", below the OVER and HAVING clauses)."""
    words: dict[str, None] = {}
    every: dict[str, None] = {}
    for token in _WORD.findall(question):
        parts = split_identifier(token) if token.isascii() else [token.lower()]
        if len(parts) > 1 and _one_word(token, parts):
            # `NaN`, `iOS`, `IPv4`, `CPUs`: one word in mixed case, as the index's tokenizer
            # reads it in text (`nan`); split, `NaN` asked for `na`, `CPUs` for `cp` and `us`.
            parts = [token.lower()]
        if parts and not token[0].isdigit() and any(c.isdigit() for c in token):
            pieces = [p for p in _ALPHANUMERIC.findall(token.lower()) if not p.isalpha()]
            parts = [p for p in parts if not p.isdigit()] + pieces
        as_code = len(parts) > 1 or (len(token) > 1 and token.isupper())
        for part in parts or [token.lower()]:
            every[part] = None
            if (as_code or part not in STOP_WORDS) and (len(part) > 1 or part.isdigit()):
                words[part] = None
    return list(words or every)


def _in_mixed_case(token: str) -> bool:
    """An ASCII word of upper and lower case letters (and digits), no `_`: `NaN`, `IPv4`."""
    return token.isascii() and "_" not in token and not token.isupper() and not token.islower()


_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s")  # CPUs, APIs, URLs, IDs


def _one_word(token: str, parts: Sequence[str]) -> bool:
    """Whether a word in mixed case is one word, not an identifier's parts: a plural acronym,
    or parts of one or two letters, one of them a letter alone (`NaN` -> `na`, `n`; `IPv4`).
    An identifier with a longer part is split (`getX`, `xAxis`: `set_x_axis` holds `axis`),
    and searched whole beside its parts (hyphenated)."""
    if not _in_mixed_case(token):
        return False
    if _PLURAL_ACRONYM.fullmatch(token) is not None:
        return True
    letters = [part for part in parts if part.isalpha()]
    return any(len(part) == 1 for part in letters) and all(len(part) <= 2 for part in letters)


_HYPHENATED = re.compile(r"(?<![\w-])([A-Za-z]{2,})-([A-Za-z]{2,})(?![\w-])")


def hyphenated(question: str) -> list[str]:
    """A hyphenated word of the question written as one (`non-blocking` -> `nonblocking`, as
    libevent's `evutil_make_socket_nonblocking` spells it): searched beside its parts; so is
    a word in mixed case split into words of two letters or more (`macOS` -> `macos`, as text
    holds it, beside `mac` and `os`)."""
    joined = [f"{first}{second}".lower() for first, second in _HYPHENATED.findall(question)]
    for token in _WORD.findall(question):
        parts = split_identifier(token)
        if _in_mixed_case(token) and len(parts) > 1 and not _one_word(token, parts):
            joined.append(token.lower())
    return joined


def search_terms(db: Store, words: Sequence[str], joined: Sequence[str] = ()) -> list[str]:
    """The question's words, each followed by the related forms code may use for it (`built`
    -> `build`, search/morphology.py): what BM25 looks for. A form the index's tokenizer makes
    into a token already asked for is left out (`iterable` -> `iter`, not `itere` too: BM25
    would count that token twice). The coverage reward counts the question's words alone."""
    forms = {word: morphology.related_forms(word) for word in words}
    if not any(forms.values()) and not joined:
        return list(words)
    split = chunks_tokenizer(db)
    asked = {split.tokens(word) for word in words}
    found: list[str] = []
    for word, related in [*forms.items(), *((word, ()) for word in joined)]:
        if word not in forms:  # a hyphenated word written as one: once, if it is new
            tokens = split.tokens(word)
            if not tokens or tokens in asked:
                continue
            asked.add(tokens)
        found.append(word)
        for form in related:
            tokens = split.tokens(form)
            if form not in STOP_WORDS and tokens and tokens not in asked:
                asked.add(tokens)
                found.append(form)
    return found


class NoEmbeddings(BadQuery):
    """Semantic or hybrid search asked of an index whose store holds no vector."""


def check_query(question: object) -> str:
    if not isinstance(question, str) or not question.strip():
        raise BadQuery("the query is empty; ask in words what the code does")
    question = question.strip()
    if len(question) > MAX_QUERY_CHARS:
        raise BadQuery(
            f"the query is {len(question)} characters long; at most {MAX_QUERY_CHARS} are allowed"
        )
    return question


def make_filters(
    db: Store, path: str | None = None, language: str | None = None, kind: str | None = None
) -> Filters:
    lang = None
    if language is not None:
        lowered = language.strip().lower()
        formats = (*DOC_LANGUAGES, *DATA_LANGUAGES)
        lang = lowered if lowered in formats else LANGUAGE_ALIASES.get(lowered)
        if lang is None:
            choices = ", ".join((*LANGUAGES, *formats))
            raise BadArgument(f"unknown language {language!r}; use one of {choices}")
    kinds = None
    if kind is not None:
        kinds = tuple(k.strip().lower() for k in kind.split(",") if k.strip())
        unknown = [k for k in kinds if k not in CHUNK_KINDS]
        if unknown or not kinds:
            named = ", ".join(repr(k) for k in unknown) if unknown else repr(kind)
            symbol_only = [k for k in unknown if k in SYMBOL_KINDS]
            # `field`, `variable`, `constant`: definitions too, found by name, never by words
            hint = (
                f" ({', '.join(symbol_only)}: symbols, found by name with"
                f" `symbols --kind {symbol_only[0]}`)"
                if symbol_only
                else ""
            )
            raise BadArgument(
                f"unknown kind {named}; use one or more of {', '.join(sorted(CHUNK_KINDS))}{hint}"
            )
    file_ids = doc_ids = data_ids = None
    if path is not None:
        path_filter = paths.parse(path, root=store.get_meta(db, "root"))
        if path_filter is not None:
            file_ids = store.ids_matching(db, path_filter, table="files")
            doc_ids = store.ids_matching(db, path_filter, table="doc_files")
            data_ids = store.ids_matching(db, path_filter, table="data_files")
    return Filters(file_ids, doc_ids, lang, kinds, data_ids)


def _fts_query(terms: Sequence[str]) -> str:
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


_LEXICAL_SQL = """
SELECT c.id, -bm25(chunks_fts, ?, ?, ?, ?) AS score, c.is_test, c.kind, c.file_id
FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
WHERE chunks_fts MATCH ? {where}
ORDER BY bm25(chunks_fts, ?, ?, ?, ?) LIMIT ?"""
# Without filters the best are cut from FTS5 alone, then joined: a third faster on Django than
# joining every match (thousands for a question of common words) before the cut.
_LEXICAL_UNFILTERED_SQL = """
WITH best AS (
    SELECT rowid AS id, -bm25(chunks_fts, ?, ?, ?, ?) AS score FROM chunks_fts
    WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, ?, ?, ?, ?) LIMIT ?)
SELECT best.id, best.score, c.is_test, c.kind, c.file_id FROM best JOIN chunks c ON c.id = best.id"""


def _where(filters: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filters.kinds is not None:
        clauses.append(f"c.kind IN ({','.join('?' * len(filters.kinds))})")
        params.extend(filters.kinds)
    if filters.file_ids is not None or filters.doc_ids is not None:
        clauses.append(
            "(c.file_id IN (SELECT value FROM json_each(?))"
            " OR c.doc_id IN (SELECT value FROM json_each(?))"
            " OR c.data_id IN (SELECT value FROM json_each(?)))"
        )
        params += [
            _json_ids(filters.file_ids), _json_ids(filters.doc_ids), _json_ids(filters.data_ids)
        ]  # fmt: skip
    if filters.language is not None:
        if filters.language in DOC_LANGUAGES:
            clauses.append("c.doc_id IN (SELECT id FROM doc_files WHERE format = ?)")
        elif filters.language in DATA_LANGUAGES:
            clauses.append("c.data_id IN (SELECT id FROM data_files WHERE format = ?)")
        else:
            clauses.append("c.file_id IN (SELECT id FROM files WHERE language = ?)")
        params.append(filters.language)
    return "".join(f" AND {clause}" for clause in clauses), params


def _in_memory(
    db: Store, terms: Sequence[str], filters: Filters, candidates: int
) -> dict[int, Candidate] | None:
    """lexical_scores() from search/bm25.py's postings (imported here: it needs numpy, which a
    CLI search without vectors does not); None when they cannot answer."""
    from repomap.search import bm25

    kept = bm25.prepared(db, COLUMN_WEIGHTS)
    if kept is None:
        return None
    return bm25.scores(db, kept, terms, filters, candidates)


def _json_ids(ids: list[int] | None) -> str:
    return "[" + ",".join(map(str, ids or ())) + "]"


def chunk_count(db: Store) -> int:
    """Chunks in the index: FTS5's own row table counts them ~40x faster than `chunks` (still
    ~0.4 ms on Django, so a server counts once per index content)."""
    return db.per_content(
        "chunk_count", lambda: int(db.scalar("SELECT count(*) FROM chunks_fts_docsize") or 0)
    )


def lexical_scores(
    db: Store, terms: Sequence[str], filters: Filters, candidates: int = CANDIDATES
) -> dict[int, Candidate]:
    """chunk id -> (BM25 score, is_test, kind, file id) of the best `candidates` chunks."""
    if not terms:
        return {}
    if db.state is not None:  # a server's kept reader: its postings in memory, same scores
        found = _in_memory(db, terms, filters, candidates)
        if found is not None:
            return found
    where, params = _where(filters)
    sql = _LEXICAL_SQL.format(where=where) if where else _LEXICAL_UNFILTERED_SQL
    rows = db.conn.execute(
        sql, (*COLUMN_WEIGHTS, _fts_query(terms), *params, *COLUMN_WEIGHTS, candidates)
    )
    return {
        chunk_id: (score, bool(is_test), kind, file_id)
        for chunk_id, score, is_test, kind, file_id in rows
    }


def prior(kind: str, is_test: bool, tests_factor: float = TEST_FACTOR) -> float:
    """A chunk's prior: its kind's factor, times `tests_factor` (test_factor()) for a test's."""
    factor = KIND_FACTORS.get(kind, 1.0)
    return factor * tests_factor if is_test else factor


# A question no chunk holds a word of is answered by meaning only when its nearest chunk is
# this close to it. Every question of bench/relevance.py has a chunk at 0.33 or more (5% of
# them below 0.42), while the nearest chunk of gibberish or of a question about something else
# ("zzqqxx", "banana smoothie recipe") is at 0.13-0.35 in most corpora: those came back at
# score 1.00 with exit 0, as the stretched score's best always is. The answer itself may be
# a few places below the nearest (0.29 at rank 3), so the gate is the nearest, not each chunk;
# and a question whose words the code holds is never gated (one word, `deploy`, is often
# below 0.3 from the very section that explains it).
MIN_COSINE = 0.3
SEMANTIC_WEIGHT = 0.4  # hybrid: the cosine's share, chosen on the tune half of bench/relevance.py
# ... unless the question's words are scarce in the code: when none of the LEADERS best chunks
# by BM25 holds SCARCE_COVERAGE of them (word_coverage: each word weighed by its IDF), the words
# found are incidental (a comment, a doc example, one word of an identifier) and the cosine's
# share rises linearly, to SCARCE_WEIGHT for a best chunk that holds none. Chosen on the tune
# half of bench/relevance.py (tops 3-20, 0.5-0.8, 0.4-0.9 tried); it lost nothing on the heldout
# half or Django and gained most on 100 questions about code never tuned on (bench/README.md).
SCARCE_COVERAGE = 0.4
SCARCE_WEIGHT = 0.7
LEADERS = 10


def search_code(
    db: Store,
    question: str,
    *,
    mode: str | None = None,
    path: str | None = None,
    language: str | None = None,
    kind: str | None = None,
    limit: int = 10,
    semantic_weight: float = SEMANTIC_WEIGHT,
    quick_start: bool = False,
    log: bool = True,
    started: float | None = None,
    compare: bool = False,
) -> CodeResults:
    """The chunks that best answer `question`, best first (ties: path, then line).
    `quick_start`: this process asks once and exits, so load for one question, not many.
    `log`: record the search (or its error) in the index's search log (search/log.py).
    `started`: the perf_counter() at which work on this question began, when before this call
    (the CLI starts embedding it early, embed.model.embed_soon): `total` counts from there, so
    it is never less than `embed`.
    `compare`: the answer will be merged with other indexes' (a server of several roots): give
    its `strength`."""
    started = time.perf_counter() if started is None else started
    try:
        result = _search_code(
            db, question, mode, path, language, kind, limit, semantic_weight, quick_start, started,
            compare,
        )  # fmt: skip
    except RepomapError as problem:  # bad input, a model mismatch: logged as failed searches
        if log:
            _log(db, question, mode, path, language, kind, limit, None, str(problem), started)
        raise
    if log:
        _log(db, question, mode, path, language, kind, limit, result, None, started)
    return result


def _log(db: Store, question: str, mode: str | None, path: str | None, language: str | None,
         kind: str | None, limit: int, result: CodeResults | None, error: str | None,
         started: float) -> None:  # fmt: skip
    from repomap.search import log as searchlog

    searchlog.log_event(
        "search_code",
        index=db.path,
        query=question,
        mode=result.mode if result else mode,
        path=path,
        language=language,
        kinds=kind,  # the --kind filter (`kind` is the event's)
        limit=limit,
        results=len(result.hits) if result else 0,
        word_matches=result.word_matches if result else None,
        ms=round((time.perf_counter() - started) * 1000, 3),
        error=error,
    )


def _search_code(
    db: Store,
    question: str,
    mode: str | None,
    path: str | None,
    language: str | None,
    kind: str | None,
    limit: int,
    semantic_weight: float,
    quick_start: bool,
    started: float,
    compare: bool = False,
) -> CodeResults:
    question = check_query(question)
    limit = check_limit(limit)
    defaulted = mode is None
    if mode is None:
        mode = DEFAULT_MODE if store.has_vectors(db) else "lexical"
    if mode not in MODES:
        raise BadArgument(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    filters = make_filters(db, path, language, kind)
    terms = query_terms(question)
    tests_factor = test_factor(question, filters)
    timings: dict[str, float] = {}
    # Candidates beyond the limit: prototypes fold into definitions and docs pieces that
    # repeat one drop out, and a full pool means more may match than were read.
    pool = max(CANDIDATES, 2 * limit + 20)

    lexical: dict[int, Candidate] = {}
    if mode != "semantic":
        clock = time.perf_counter()
        lexical = lexical_scores(db, search_terms(db, terms, hyphenated(question)), filters, pool)
        timings["lexical"] = (time.perf_counter() - clock) * 1000
    semantic: dict[int, float] = {}
    model_id = coverage = None
    if mode != "lexical":
        try:
            semantic, model_id, coverage = _semantic_scores(
                db, question, filters, pool, timings, quick_start
            )
        except NoEmbeddings:
            if not defaulted:
                raise
            # A store named but empty (every vector dropped since, or none made yet): the
            # default is words alone, as for an index that never had embeddings. The default
            # mode is hybrid, so the lexical scores are here already.
            mode = "lexical"

    traits: dict[int, Traits] = {chunk_id: found[1:] for chunk_id, found in lexical.items()}
    traits.update(_traits(db, [chunk_id for chunk_id in semantic if chunk_id not in traits]))
    asked_weight = {"lexical": 0.0, "semantic": 1.0}.get(mode, semantic_weight)
    ranked = functools.partial(_ranked, db, question, mode, terms, traits, filters, tests_factor)
    scored, weight = ranked(lexical, semantic, asked_weight)
    if pool > CANDIDATES:
        # More results asked for than the default pool holds: the chunks among each signal's
        # best CANDIDATES are ranked exactly as a smaller --limit ranks them (normalized by the
        # same candidates, lifted by the same neighbours), the rest after them. Asking for more
        # then only adds to the list (the first 10 of --limit 1000 were not those of --limit 10).
        best_lexical = _best_of(lexical, lambda candidate: candidate[0])
        base, weight = ranked(best_lexical, _best_of(semantic, float), asked_weight)
        floor = min(base.values(), default=0.0)
        scored = {i: min(score, floor) for i, score in scored.items() if i not in base}
        scored.update(base)
    hits, truncated = _best_hits(db, scored, limit)
    found = match_lines(db, hits, terms)
    hits = [replace(hit, match_lines=lines) for hit, lines in zip(hits, found.lines, strict=True)]
    # A signal that filled its pool left chunks unread: more match than were ranked.
    # (with no result at all nothing was cut: gibberish fills the nearest-by-meaning pool)
    truncated = bool(hits) and (truncated or len(lexical) >= pool or len(semantic) >= pool)
    timings["total"] = (time.perf_counter() - started) * 1000
    result = CodeResults(
        question, mode, hits, truncated, timings, model_id, coverage,
        word_matches=None if mode == "semantic" else len(lexical),
        semantic_share=weight if mode == "hybrid" else None,
        best_cosine=max(semantic.values(), default=None),
        changed_files=found.changed,
    )  # fmt: skip
    if compare:  # the question's words as searched, not parsed again
        result.strength = strength(db, result, terms)
    return result


def _best_of(scores: dict[int, T], score: Callable[[T], float]) -> dict[int, T]:
    """The CANDIDATES best of a signal's candidates by `score`."""
    if len(scores) <= CANDIDATES:
        return scores
    return dict(heapq.nlargest(CANDIDATES, scores.items(), key=lambda item: score(item[1])))


def _ranked(
    db: Store,
    question: str,
    mode: str,
    terms: Sequence[str],
    traits: dict[int, Traits],
    filters: Filters,
    tests_factor: float,
    lexical: dict[int, Candidate],
    semantic: dict[int, float],
    weight: float,
) -> tuple[dict[int, float], float]:
    """chunk id -> final score of the candidates of the two signals, and the cosine's share."""
    held: dict[int, float] = {}
    if mode == "hybrid" and lexical:
        held = dict(zip(lexical, word_coverage(db, terms, list(lexical)), strict=True))
        weight = semantic_share(weight, max(held[i] for i in leaders_by_words(lexical)))
    traits = dict(traits)  # this call's: a fold takes its chunk out (the caller ranks twice)
    lexical, semantic = _folded(folds_of(db, traits, filters), lexical, semantic, held, traits)
    scored = fuse(lexical, semantic, traits, weight, tests_factor)
    short_kinds = ("function", "method") if mode == "hybrid" else ()
    lengths = _line_counts(
        db, [i for i in scored if traits[i][1] == "macro" or traits[i][1] in short_kinds]
    )
    for chunk_id, lines in lengths.items():
        if traits[chunk_id][1] == "macro":
            scored[chunk_id] *= ONE_LINE_MACRO_FACTOR if lines == 1 else 1.0
        elif lines <= SHORT_LINES:
            scored[chunk_id] *= SHORT_FACTOR
    one_line_macros = [i for i, lines in lengths.items() if lines == 1 and traits[i][1] == "macro"]
    _thin_runs(scored, one_line_macros, MACROS_PER_FILE, MACRO_RUN_FACTOR)
    sections = [i for i in scored if traits[i][1] == "section"]
    _thin_runs(scored, sections, DOC_SECTIONS_PER_FILE, DOC_RUN_FACTOR)
    scored = {chunk_id: score for chunk_id, score in scored.items() if score > 0}
    # The prototypes folded into their definitions above: a definition with no vector of its
    # own holds its prototype's cosine, and goes with it (the review's case: it answered
    # gibberish with a gated prototype's score).
    if max(semantic.values(), default=MIN_COSINE) < MIN_COSINE and not _holds_a_word(
        db, terms, lexical, mode, filters
    ):
        scored = {i: score for i, score in scored.items() if i not in semantic}
    if not filters.names_tests:
        _demote_records(db, scored, [i for i in scored if traits[i][1] == "section"])
    # Semantic mode keeps the share even: there the leaders cost the heldout half a question
    # (bench/README.md, issue 17, "a file's neighbour share goes whole to its leaders").
    leaders = None if mode == "semantic" else file_leaders(lexical, semantic, traits, scored)
    _add_neighbours(scored, {i: traits[i][2] for i in scored}, leaders)
    for chunk_id, share in held.items():
        if chunk_id in scored:
            scored[chunk_id] *= 1.0 + COVERAGE_WEIGHT * share
    if mode != "semantic":
        tests = {i for i in scored if traits[i][0]}
        lift_named(db, question, scored, tests, tests_factor)
    return scored, weight


def _holds_a_word(
    db: Store, terms: Sequence[str], lexical: dict[int, Candidate], mode: str, filters: Filters
) -> bool:
    """Whether a chunk the filters let through holds one of the question's words (in semantic
    mode, where no lexical search ran, looked up now, as hybrid's would have found it)."""
    if mode != "semantic" or not terms:  # `???`: no word at all
        return bool(lexical)
    return bool(lexical_scores(db, search_terms(db, terms), filters, 1))


def fuse(
    lexical: dict[int, Candidate],
    semantic: dict[int, float],
    traits: dict[int, Traits],
    weight: float,
    tests_factor: float = TEST_FACTOR,
) -> dict[int, float]:
    """chunk id -> the weighed sum of its two normalized scores, times its prior."""
    best_lexical = max((candidate[0] for candidate in lexical.values()), default=0.0) or 1.0
    # Cosines of related texts sit in a narrow band (0.3-0.7 with this model): stretched over
    # the candidates, as the BM25 scores are, before the two are weighed; the last candidate
    # keeps a twentieth of the band, so it is ranked, not dropped.
    high = max(semantic.values(), default=1.0)
    low = min(semantic.values(), default=0.0)
    low -= (high - low) / 20 or 0.05
    span = high - low
    scored = {}
    for chunk_id, (is_test, chunk_kind, _) in traits.items():
        words = lexical[chunk_id][0] / best_lexical if chunk_id in lexical else 0.0
        meaning = max((semantic[chunk_id] - low) / span, 0.0) if chunk_id in semantic else 0.0
        fused = (1 - weight) * words + weight * meaning
        scored[chunk_id] = fused * prior(chunk_kind, is_test, tests_factor)
    return scored


# A candidate gains NEIGHBOUR_SHARE of the mean of the NEIGHBOURS best scores of the other
# candidates in its source file (chosen on the tune half of bench/relevance.py, 0.05-0.4 and 1-5
# tried): what answers a question seldom stands alone in its file (the session's expiry, the
# paginator's checks of a page number), while a chunk elsewhere that shares a few of the
# question's words usually does. Docs sections are left as they are: a docs page's sections all
# share its words.
NEIGHBOUR_SHARE = 0.2
NEIGHBOURS = 3
# The file's evidence is not every chunk's in it alike: a file's leaders (the chunk its words
# rank first in the file and the one its meaning does) take the whole share, any other chunk
# SIBLING_FACTOR of it. Without this a file of many small related chunks (a paginator's
# has_next, end_index, previous_page_number...) lifted them all, and they filled the places of
# a chunk elsewhere that itself matches (the failure analysis's S, bench/README.md). Chosen on
# the tune half (0.25-0.75 the same), confirmed on the heldout half and each corpus.
SIBLING_FACTOR = 0.5


def file_leaders(
    lexical: dict[int, Candidate],
    semantic: dict[int, float],
    traits: dict[int, Traits],
    scored: dict[int, float],
) -> set[int]:
    """The candidates of `scored` that lead their file: its best by BM25 and its best by cosine
    (ties: the lower chunk id, so the choice does not depend on the order of the dicts)."""
    by_words: dict[int, tuple[float, int]] = {}
    by_meaning: dict[int, tuple[float, int]] = {}
    for chunk_id in scored:
        file_id = traits[chunk_id][2]
        if file_id is None:
            continue
        if chunk_id in lexical:
            _keep_best(by_words, file_id, lexical[chunk_id][0], chunk_id)
        if chunk_id in semantic:
            _keep_best(by_meaning, file_id, semantic[chunk_id], chunk_id)
    return {chunk_id for _, chunk_id in (*by_words.values(), *by_meaning.values())}


def _keep_best(best: dict[int, tuple[float, int]], key: int, score: float, chunk_id: int) -> None:
    held = best.get(key)
    if held is None or (score, -chunk_id) > (held[0], -held[1]):
        best[key] = (score, chunk_id)


def _add_neighbours(
    scored: dict[int, float], file_of: dict[int, int | None], leaders: set[int] | None = None
) -> None:
    """Each code candidate's score raised in place by its file's other candidates' best; with
    `leaders`, a chunk not among them by SIBLING_FACTOR of that."""
    by_file: dict[int, list[float]] = {}
    for chunk_id, file_id in file_of.items():
        if file_id is not None:
            by_file.setdefault(file_id, []).append(scored[chunk_id])
    best = {
        file_id: sorted(values, reverse=True)[: NEIGHBOURS + 1]
        for file_id, values in by_file.items()
        if len(values) > 1
    }
    raised = {}
    for chunk_id, file_id in file_of.items():
        top = None if file_id is None else best.get(file_id)
        if top is None:
            continue
        score = scored[chunk_id]
        others = list(top)
        if score in others:  # one of its file's best: the others are the rest
            others.remove(score)
        share = NEIGHBOUR_SHARE
        if leaders is not None and chunk_id not in leaders:
            share *= SIBLING_FACTOR
        raised[chunk_id] = score + share * sum(others[:NEIGHBOURS]) / NEIGHBOURS
    scored.update(raised)


# hybrid: a lexical candidate's score x (1 + COVERAGE_WEIGHT x the share of the question's
# words it holds, each word weighed by its IDF). Learned on the tune half of bench/relevance.py
# by bench/fusion_fit.py (a listwise linear model over today's score and this share, its L2
# chosen by cross-validation; 0.33 / 4.30 of today's log-score's weight), and kept because it
# was the one learned fusion that did not lose on the heldout half or Django (bench/README.md):
# BM25 sums its words' scores, so one word said many times can outrank a chunk that says what
# the question asks in all its words; this counts each word once.
COVERAGE_WEIGHT = 0.076
_TERM_ROWS_SQL = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?"


def strength(db: Store, result: CodeResults, terms: Sequence[str]) -> float:
    """How well `result`'s best hit fits its question, on a scale every index shares: the share
    of the question's words it holds (IDF-weighed) and the nearest chunk's cosine, mixed as the
    mode mixed the two signals. Scores are stretched to each index's own best (1.0), so a server
    of several roots that merged by score put an index that holds nothing like the question
    level with the one that answers it (`struct range` of an XML parser beside semver's
    `matches_tilde` for "tilde range matching"); it merges by score x strength."""
    if not result.hits:
        return 0.0
    share = {"lexical": 0.0, "semantic": 1.0}.get(result.mode, result.semantic_share or 0.0)
    words = word_coverage(db, terms, [result.hits[0].chunk_id])[0] if share < 1 else 0.0
    return (1 - share) * words + share * (result.best_cosine or 0.0)


def word_coverage(db: Store, terms: Sequence[str], chunk_ids: Sequence[int]) -> list[float]:
    """Per chunk of `chunk_ids`, the share of the question's words (`terms`) it holds, each
    weighed by its IDF as bm25() weighs it: 1.0 for a chunk that holds every word. A server
    reads it from the postings it holds (search/bm25.py), a CLI call asks SQLite for each
    word's rows (~2 ms a question on Django, bench/bm25_parity.py)."""
    if not terms or not chunk_ids:
        return [0.0] * len(chunk_ids)
    if db.state is not None:
        from repomap.search import bm25

        kept = bm25.prepared(db, COLUMN_WEIGHTS)
        if kept is not None:
            found = bm25.coverage(kept, terms, chunk_ids)
            if found is not None:
                return found
    from repomap.search.bm25 import idf

    total = chunk_count(db)
    wanted = dict.fromkeys(chunk_ids, 0.0)
    weight = 0.0
    for term in terms:
        rows = [rowid for (rowid,) in db.conn.execute(_TERM_ROWS_SQL, (_fts_query([term]),))]
        value = idf(total, len(rows))
        weight += value
        for rowid in rows:
            if rowid in wanted:
                wanted[rowid] += value
    return [wanted[chunk_id] / (weight or 1.0) for chunk_id in chunk_ids]


def leaders_by_words(lexical: dict[int, Candidate]) -> list[int]:
    """The LEADERS best candidates by BM25 (ties: the lower chunk id)."""
    return heapq.nsmallest(LEADERS, lexical, key=lambda chunk_id: (-lexical[chunk_id][0], chunk_id))


def semantic_share(weight: float, best_coverage: float) -> float:
    """The cosine's share in hybrid for a question whose best chunks by words hold at most
    `best_coverage` of its words: `weight`, raised toward SCARCE_WEIGHT below SCARCE_COVERAGE."""
    if best_coverage >= SCARCE_COVERAGE or weight >= SCARCE_WEIGHT:
        return weight
    return weight + (SCARCE_WEIGHT - weight) * (SCARCE_COVERAGE - best_coverage) / SCARCE_COVERAGE


def _semantic_scores(
    db: Store,
    question: str,
    filters: Filters,
    pool: int,
    timings: dict[str, float],
    quick_start: bool = False,
) -> tuple[dict[int, float], str, float]:
    """chunk id -> cosine of the `pool` nearest chunks; the model id; the vectors' coverage."""
    from repomap.embed.model import (
        DEFAULT_MAX_TOKENS,
        model_id_for,
        question_vector,
        stored_or_default,
        window_of,
    )
    from repomap.index import embedding
    from repomap.store.vectors import EmbeddingModelMismatch, VectorFilter

    # The question is embedded by the model and window the index's vectors came from.
    model_id = stored_or_default(store.embedding_model(db))
    window = window_of(model_id)
    if window is None:
        raise EmbeddingModelMismatch(embedding.SCOPE, model_id, model_id_for(DEFAULT_MAX_TOKENS))
    vectors = embedding.vector_store(db, model_id)
    covered = embedding.coverage_count(db, vectors)
    if not covered:
        raise NoEmbeddings(
            "this index has no embeddings yet; run `repomap index --embed` (or use --mode lexical)"
        )
    clock = time.perf_counter()
    if quick_start:
        from concurrent.futures import ThreadPoolExecutor

        from repomap.embed.model import import_runtime

        # A process that asks once (the CLI) has neither the model nor the vectors in memory:
        # the model loads and embeds in a thread (onnxruntime lets go of the GIL) while this
        # one reads the vectors, so the slower of the two is paid, not both. Native libraries
        # are loaded here first, one at a time (two at once in two threads crashed).
        import_runtime()
        with ThreadPoolExecutor(1, thread_name_prefix="repomap-embed") as executor:
            embedded = executor.submit(question_vector, window, question)
            vectors.prepare(embedding.SCOPE)
            timings["prepare"] = (time.perf_counter() - clock) * 1000
            target, timings["embed"] = embedded.result()
    else:
        target, timings["embed"] = question_vector(window, question, quick=False)
    clock = time.perf_counter()
    where = VectorFilter(
        paths=_paths(db, filters) if filters.names_tests else None,
        languages=None if filters.language is None else {filters.language},
        kinds=None if filters.kinds is None else set(filters.kinds),
    )
    found = dict(vectors.query(embedding.SCOPE, target, pool, where))
    timings["vector"] = (time.perf_counter() - clock) * 1000
    total = chunk_count(db) or 1
    return found, model_id, min(covered / total, 1.0)


# A C or C++ function's prototype is a chunk (a header's `int status_at_line(struct client *);`,
# a static forward declaration above its definition): for an API whose definition the index
# lacks (llvm-c/Core.h), it is all there is. Where the index holds one definition of the name,
# the two were one answer twice (tmux: 1,374 of its 3,545 function chunks are prototypes of
# functions it defines, and a forward declaration's chunk holds its definition's comments), and
# the definition is the code a question asks for: the prototype folds into the definition's
# chunk (each signal keeps the better of the two, _folded), and leaves the ranking.
_PROTOTYPES_SQL = """
SELECT c.id, min(s.name), min(s.signature) FROM chunks c
JOIN files f ON f.id = c.file_id AND f.language IN ('c', 'cpp')
JOIN symbols s ON s.file_id = c.file_id AND s.start_line = c.start_line AND s.kind = 'function'
WHERE c.id IN (SELECT value FROM json_each(?)) AND c.kind = 'function'
GROUP BY c.id HAVING count(*) = 1 AND NOT max(s.is_definition) AND max(s.parent_id) IS NULL"""
_DEFINITIONS_SQL = f"""
SELECT s.name, c.id, s.file_id, f.language, s.signature FROM symbols s
JOIN files f ON f.id = s.file_id AND f.language IN ('c', 'cpp')
JOIN chunks c ON c.id >= s.file_id * {ROWS_PER_FILE} AND c.id < (s.file_id + 1) * {ROWS_PER_FILE}
    AND c.start_line = s.start_line AND c.kind = 'function'
WHERE s.name COLLATE NOCASE IN (SELECT value FROM json_each(?)) AND s.kind = 'function'
    AND s.parent_id IS NULL AND s.is_definition"""


def folds_of(db: Store, traits: dict[int, Traits], filters: Filters) -> dict[int, int]:
    """Chunk id -> the definition's chunk it is one answer with, among the candidates of
    `traits`: C and C++ prototypes (_prototype_folds) and documented C++ member declarations
    (_declaration_folds). The definition's traits join `traits`."""
    folds: dict[int, int] = {}
    allowed = None if filters.file_ids is None else set(filters.file_ids)
    _prototype_folds(db, traits, filters, allowed, folds)
    _declaration_folds(db, traits, filters, allowed, folds)
    return folds


def _folded(
    folds: dict[int, int],
    lexical: dict[int, Candidate],
    semantic: dict[int, float],
    held: dict[int, float],
    traits: dict[int, Traits],
) -> tuple[dict[int, Candidate], dict[int, float]]:
    """The two signals with each folded chunk one with its definition: the definition holds
    the better of the two's BM25, of their cosines and of their word coverage, and the folded
    chunk leaves. Each signal on its own: a declaration whose doc says what the question asks
    and a definition whose body does it are one answer that each signal finds by another half
    (ninja's Builder::Cleanup, first by words and by meaning through its declaration, was
    second when the better of the two fused scores stood for both)."""
    if not folds:
        return lexical, semantic
    lexical, semantic = dict(lexical), dict(semantic)
    for chunk, definition in folds.items():
        found = lexical.pop(chunk, None)
        if found is not None and found[0] > lexical.get(definition, (0.0,))[0]:
            lexical[definition] = (found[0], *traits[definition])
        cosine = semantic.pop(chunk, None)
        if cosine is not None and cosine > semantic.get(definition, -1.0):
            semantic[definition] = cosine
        share = held.pop(chunk, None)
        if share is not None and share > held.get(definition, 0.0):
            held[definition] = share
        traits.pop(chunk, None)
    return lexical, semantic


def _prototype_folds(
    db: Store,
    traits: dict[int, Traits],
    filters: Filters,
    allowed: set[int] | None,
    folds: dict[int, int],
) -> None:
    """Each prototype among the candidates whose name has one definition (a function's chunk
    the filters keep), or one in the prototype's own file (a `static` forward declaration:
    zstd's legacy decoders define the same names in six files, and a one-line prototype came
    first, the comment above it another function's), folds into that definition's chunk."""
    functions = [i for i, t in traits.items() if t[1] == "function" and t[2] is not None]
    if not functions:
        return
    prototypes = {
        chunk: (name, signature)
        for chunk, name, signature in db.conn.execute(_PROTOTYPES_SQL, (_json_ids(functions),))
    }
    if not prototypes:
        return
    names = {name for name, _ in prototypes.values()}
    found: dict[str, list[tuple[int, int, str, str]]] = {}
    rows = db.conn.execute(_DEFINITIONS_SQL, (json.dumps(sorted(names)),))
    for name, chunk_id, file_id, language, signature in rows:
        if name in names:  # the name index ignores case; C does not
            found.setdefault(name, []).append((chunk_id, file_id, language, signature))
    for prototype, (name, signature) in prototypes.items():
        definitions = found.get(name, [])
        if len(definitions) > 1:
            definitions = [d for d in definitions if d[1] == prototype // ROWS_PER_FILE] or [
                d for d in definitions if _same_parameters(d[3], signature, name)
            ]  # a C++ overload in another file: ninja's two CanonicalizePath in util.h / .cc
        if len(definitions) != 1:
            continue  # none, or one per platform or configuration: no single answer to give
        if _may_fold(db, traits, filters, allowed, prototype, *definitions[0][:3]):
            folds[prototype] = definitions[0][0]


_NAMESPACE_PREFIX = re.compile(r"\b\w+ :: ")


def _same_parameters(signature: str, other: str, name: str) -> bool:
    """Whether two signatures of `name` take the same parameter types, namespaces aside (a
    header's `std::string*` is a source file's `string*` under `using namespace std`)."""
    key = parameters_key(signature, name)
    return key is not None and _NAMESPACE_PREFIX.sub("", key) == _NAMESPACE_PREFIX.sub(
        "", parameters_key(other, name) or ""
    )


def _may_fold(
    db: Store,
    traits: dict[int, Traits],
    filters: Filters,
    allowed: set[int] | None,
    chunk: int,
    definition: int,
    file_id: int,
    language: str,
) -> bool:
    """Whether `chunk` folds into its `definition`'s chunk: when the filters keep the
    definition, and unless the definition is a test's and `chunk` is not (a test's definition
    does not stand for the code's prototype or declaration)."""
    if (allowed is not None and file_id not in allowed) or filters.language not in (
        None,
        language,
    ):
        return False
    if definition not in traits:
        traits.update(_traits(db, [definition]))
    return definition in traits and not (traits[definition][0] and not traits[chunk][0])


# A documented C++ member declaration is a chunk (index/chunks.py, version 41): C++ documents an
# out of line method on its declaration, in its class or in a header whose definition is in a
# .cc (tclap, re2, leveldb). The definition is the code, and the two are one answer: the
# declaration folds into its definition's chunk (each signal keeps the better of the two) and
# leaves the ranking. Its definition is one the writer linked to a declaration of its name
# (symbols.declaration_id: the first such declaration, so all of a class's overloads link to
# one): the one whose parameter types are the declaration's (index/signatures.py), else the
# only one when the name has one declaration. With none (LLVM's headers alone, a pure virtual
# method) the declaration stays, the API's answer.
_DECLARATIONS_SQL = """
SELECT c.id, min(s.name), min(s.qualified_name), min(s.signature) FROM chunks c
JOIN files f ON f.id = c.file_id AND f.language IN ('c', 'cpp')
JOIN symbols s ON s.file_id = c.file_id AND s.start_line = c.start_line AND s.kind = c.kind
WHERE c.id IN (SELECT value FROM json_each(?)) AND c.kind IN ('function', 'method')
GROUP BY c.id HAVING count(*) = 1 AND NOT max(s.is_definition) AND max(s.parent_id) IS NOT NULL"""
# Of each name: its linked definitions that are chunks, and how many declarations it has.
_DECLARED_NAMES_SQL = f"""
SELECT s.name, s.qualified_name, s.is_definition, s.signature, c.id, s.file_id, f.language
FROM symbols s JOIN files f ON f.id = s.file_id AND f.language IN ('c', 'cpp')
LEFT JOIN chunks c ON s.is_definition AND c.id >= s.file_id * {ROWS_PER_FILE}
    AND c.id < (s.file_id + 1) * {ROWS_PER_FILE} AND c.start_line = s.start_line
    AND c.kind = s.kind
WHERE s.name COLLATE NOCASE IN (SELECT value FROM json_each(?))  -- uses the name index
    AND s.qualified_name IN (SELECT value FROM json_each(?))  -- not every `get` of LLVM's
    AND s.kind IN ('function', 'method') AND (s.declaration_id IS NOT NULL OR NOT s.is_definition)"""


def _declaration_folds(
    db: Store,
    traits: dict[int, Traits],
    filters: Filters,
    allowed: set[int] | None,
    folds: dict[int, int],
) -> None:
    """Each member declaration's chunk among the candidates with its own definition's chunk
    (one the filters keep) folds into that chunk."""
    candidates = [
        i for i, t in traits.items() if t[1] in ("function", "method") and t[2] is not None
    ]
    if not candidates:
        return
    declarations = {
        chunk: (name, qualified, signature)
        for chunk, name, qualified, signature in db.conn.execute(
            _DECLARATIONS_SQL, (_json_ids(candidates),)
        )
    }
    if not declarations:
        return
    named = json.dumps(sorted({name for name, _, _ in declarations.values()}))
    qualified_names = json.dumps(sorted({qualified for _, qualified, _ in declarations.values()}))
    declared: dict[tuple[str, str], int] = {}
    defined: dict[tuple[str, str], list[tuple[str, int, int, str]]] = {}
    wanted = {(name, qualified) for name, qualified, _ in declarations.values()}
    for name, qualified, is_definition, signature, chunk_id, file_id, language in db.conn.execute(
        _DECLARED_NAMES_SQL, (named, qualified_names)
    ):
        if (name, qualified) not in wanted:  # the name index ignores case; C++ does not
            continue
        if not is_definition:
            declared[name, qualified] = declared.get((name, qualified), 0) + 1
        elif chunk_id is not None:
            defined.setdefault((name, qualified), []).append(
                (signature, chunk_id, file_id, language)
            )
    for chunk, (name, qualified, signature) in declarations.items():
        definitions = defined.get((name, qualified), [])
        if not definitions:
            continue  # no definition indexed (LLVM's headers): the declaration is the answer
        same = [d for d in definitions if _same_parameters(d[0], signature, name)]
        if len(same) != 1:
            if len(definitions) != 1 or declared.get((name, qualified), 0) != 1:
                continue  # none, or several and no one of them its own: no single answer
            same = definitions
        if _may_fold(db, traits, filters, allowed, chunk, *same[0][1:]):
            folds[chunk] = same[0][1]


def _paths(db: Store, filters: Filters) -> set[str]:
    rows = db.conn.execute(
        "SELECT path FROM files WHERE id IN (SELECT value FROM json_each(?)) UNION ALL "
        "SELECT path FROM doc_files WHERE id IN (SELECT value FROM json_each(?)) UNION ALL "
        "SELECT path FROM data_files WHERE id IN (SELECT value FROM json_each(?))",
        (_json_ids(filters.file_ids), _json_ids(filters.doc_ids), _json_ids(filters.data_ids)),
    )
    return {path for (path,) in rows}


# A macro of one line (`#define LEN_LOW_BITS 3`, `#define ladder crypto_..._ladder`), on top of
# the macros' factor: its few words and short text meet a question's words and meaning more
# than the function that does the work (three search users: xz's lzma_vli_decode first by words,
# tenth in hybrid below such constants; libsodium's VARIANT constants above the base64 decoder).
# 0.7 chosen on the 880 + 240 questions of /tmp/s56/fw.py and the stop's users (1.0, 0.8, 0.7,
# 0.65 tried; bench/README.md).
ONE_LINE_MACRO_FACTOR = 0.7


# In hybrid, a function or method of at most three lines at 0.8: like a one-line macro, its few
# words and short text meet a question's cheaply (csv's three-line `try_positive_integer128_bytes` and
# `is_empty` above `infer_deserialize`, the answer, for "guess whether a raw byte field is a
# bool, integer, float or text"). 1.0 / 0.9 / 0.8 / 0.7 / 0.6 tried on /tmp/s56/fw.py's 880
# questions and the stop's 240: 0.641 -> 0.650 and 0.596 -> 0.619 MRR at 0.8, the benchmark's
# halves kept (0.7 cost its tune half 0.005; bench/README.md).
SHORT_FACTOR = 0.8
SHORT_LINES = 3
_SHORT_LINES_SQL = f"""SELECT id, end_line - start_line + 1 FROM chunks
    WHERE id IN (SELECT value FROM json_each(?)) AND end_line - start_line < {SHORT_LINES}"""


# One-line macros of one file past its MACROS_PER_FILE best, each at this factor: a family of
# constants (`HANGUL_SBASE`, `HANGUL_LBASE` ...) shares the question's words and filled every
# place, in every mode, above the one function that uses them (utf8proc's Hangul decomposition,
# 12th; a search user). On /tmp/s56/fw.py's 1,090 questions and the 240 of the last stop's
# users, 0.6 and 0.5 moved no answer's rank (3 of 140 top tens on six C projects changed at
# all); 0.5 puts the function in the top three in all three modes there, 0.6 in two.
MACROS_PER_FILE = 2
MACRO_RUN_FACTOR = 0.5


# A docs file's sections past its best DOC_SECTIONS_PER_FILE count DOC_RUN_FACTOR of their
# score: a man page's NAME, SYNOPSIS, EXAMPLE and SEE ALSO all share its function's words, and
# libmodbus's pages took 46 of a search user's 200 top-ten places, the code below them. On
# 1,650 questions in process (the benchmark's and earlier users'), 1 and 0.5 moved 15 answers
# up and none down (2 and 0.5: 7 up; 3: 1 up).
DOC_SECTIONS_PER_FILE = 1
DOC_RUN_FACTOR = 0.5


def _thin_runs(scored: dict[int, float], chunk_ids: list[int], keep: int, factor: float) -> None:
    """Of each file's `chunk_ids`, those past its best `keep` scored times `factor`."""
    if len(chunk_ids) <= keep:
        return
    by_file: dict[tuple[bool, int], list[int]] = {}
    for chunk_id in chunk_ids:  # a docs chunk's id is -(its file's id x ROWS_PER_FILE + ordinal)
        by_file.setdefault((chunk_id < 0, abs(chunk_id) // ROWS_PER_FILE), []).append(chunk_id)
    for ids in by_file.values():
        if len(ids) > keep:
            ids.sort(key=lambda chunk_id: (-scored[chunk_id], chunk_id))
            for chunk_id in ids[keep:]:
                scored[chunk_id] *= factor


def _line_counts(db: Store, chunk_ids: list[int]) -> dict[int, int]:
    """Of `chunk_ids`, those of at most SHORT_LINES lines, with their line counts: one query
    for both factors above."""
    if not chunk_ids:
        return {}
    return dict(db.conn.execute(_SHORT_LINES_SQL, (_json_ids(chunk_ids),)).fetchall())


def _traits(db: Store, chunk_ids: list[int]) -> dict[int, Traits]:
    """(is_test, kind, file id) of each of `chunk_ids` that is a chunk: from a server's postings
    (search/bm25.py) when it holds them (a semantic search does not start their read), from
    SQLite for the rest."""
    if not chunk_ids:
        return {}
    found: dict[int, Traits] = {}
    if db.state is not None:
        from repomap.search import bm25

        kept = bm25.prepared(db, COLUMN_WEIGHTS, start=False)
        if kept is not None:
            found = bm25.traits(kept, chunk_ids)
            chunk_ids = [chunk_id for chunk_id in chunk_ids if chunk_id not in found]
            if not chunk_ids:
                return found
    rows = db.conn.execute(
        "SELECT id, is_test, kind, file_id FROM chunks"
        " WHERE id IN (SELECT value FROM json_each(?))",
        (_json_ids(chunk_ids),),
    )
    found.update(
        (chunk_id, (bool(is_test), kind, file_id)) for chunk_id, is_test, kind, file_id in rows
    )
    return found


_DETAILS_SQL = """
SELECT c.id, coalesce(f.path, d.path, r.path, 'commit:' || m.hash), c.start_line, c.end_line,
       c.kind, coalesce(f.language, d.format, r.format, 'git')
FROM chunks c LEFT JOIN files f ON f.id = c.file_id LEFT JOIN doc_files d ON d.id = c.doc_id
     LEFT JOIN data_files r ON r.id = c.data_id LEFT JOIN commits m ON m.id = c.commit_id
WHERE c.id IN (SELECT value FROM json_each(?))"""


def _demote_records(db: Store, scored: dict[int, float], sections: list[int]) -> None:
    """A release history's or a package manifest's sections demoted in place: they mention
    everything, and answer nothing."""
    if not sections:
        return
    records = db.per_content("record docs", lambda: _record_docs(db))
    for chunk_id in sections:
        if chunk_id < 0 and -chunk_id // ROWS_PER_FILE in records:  # a doc's section
            scored[chunk_id] *= RECORD_FACTOR


def _record_docs(db: Store) -> frozenset[int]:
    """The ids of the docs that is_record_doc names (a docs chunk's id is
    -(doc id x ROWS_PER_FILE + ordinal), store/chunk_texts.py): read once per index content by
    a server, not per question (~0.2 ms on Django)."""
    rows = db.conn.execute("SELECT id, path FROM doc_files")
    return frozenset(doc_id for doc_id, path in rows if is_record_doc(path))


def _best_hits(db: Store, scored: dict[int, float], limit: int) -> tuple[list[CodeHit], bool]:
    """The best `limit` hits, best first (ties: path, then line), scores scaled so the best is
    1, and whether more were found. Only the best few chunks are read back (their path, name
    and text), not every candidate: enough for the cut, its ties and the docs pieces that
    `_distinct` drops, more when it dropped too many."""
    if not scored:
        return [], False
    ranked = sorted(scored.values(), reverse=True)
    top = ranked[0] or 1.0
    wanted = 2 * limit + 20
    while True:
        floor = ranked[min(wanted, len(ranked)) - 1]
        chosen = {chunk_id: score for chunk_id, score in scored.items() if score >= floor}
        hits = _hits(db, chosen, top)
        hits.sort(key=lambda hit: (-hit.score, hit.path, hit.start_line))  # score as shown
        hits = _distinct(hits, _section_names(db, hits))
        hits = _without_lone_member_twins(db, hits)
        rest = len(scored) - len(chosen)
        if len(hits) > limit or not rest:
            return _with_snippets(db, hits[:limit]), len(hits) > limit or rest > 0
        wanted *= 4


def _hits(db: Store, scored: dict[int, float], top: float) -> list[CodeHit]:
    """The hits without their names and snippets: those of the hits kept are read by
    _with_snippets (each is a blob of compressed words to decode, schema v16)."""
    rows = db.conn.execute(_DETAILS_SQL, (_json_ids(list(scored)),)).fetchall()
    return [
        CodeHit(
            path, start, end, kind, "", language, shown_score(scored[chunk_id] / top), "", chunk_id
        )
        for chunk_id, path, start, end, kind, language in rows
    ]


def shown_score(score: float) -> float:
    """A score as every interface shows it: four decimals, never 0 (scores are in (0, 1]).
    Ranked as shown, so hits that show the same score are in path, then line order, not in
    the order of differences of 1e-7 nobody sees."""
    return max(round(score, 4), 0.0001)


def _with_snippets(db: Store, hits: list[CodeHit]) -> list[CodeHit]:
    """Each hit with its name and snippet (the start of its chunk's head: signature, docs)."""
    words = store.chunk_words(db, [hit.chunk_id for hit in hits])
    missing = ("", "", "", "", "")
    return [
        replace(hit, name=name, snippet=_snippet(head))
        for hit in hits
        for _title, _place, head, _body, name in [words.get(hit.chunk_id, missing)]
    ]


def _section_names(db: Store, hits: list[CodeHit]) -> dict[int, str]:
    """The heading paths of the docs sections among the hits (`Guide > Whitespace Control`) of
    files with several (each is a blob of words to decode: only where pieces may repeat)."""
    by_path: dict[str, list[int]] = {}
    for hit in hits:
        if hit.kind == "section":
            by_path.setdefault(hit.path, []).append(hit.chunk_id)
    sections = [chunk_id for ids in by_path.values() if len(ids) > 1 for chunk_id in ids]
    if not sections:
        return {}
    return {chunk_id: words[4] for chunk_id, words in store.chunk_words(db, sections).items()}


def _distinct(hits: list[CodeHit], section_names: dict[int, str]) -> list[CodeHit]:
    """The hits with one piece of each docs section, the best: a long section is cut into
    windows, and each took a place in the answer for the same section (jinja2's "Whitespace
    Control" held the first seven, the function that strips it eighth; `show --section` shows
    it whole). Nor a piece that mostly repeats a better one of another heading."""
    kept: list[CodeHit] = []
    shown: dict[str, list[CodeHit]] = {}
    named: set[tuple[str, str]] = set()
    for hit in hits:
        if hit.kind == "section":
            name = (hit.path, section_names.get(hit.chunk_id, str(hit.chunk_id)))
            if name in named or any(
                _overlap(hit, other) * 2 > min(_size(hit), _size(other))
                for other in shown.get(hit.path, ())
            ):
                continue
            named.add(name)
            shown.setdefault(hit.path, []).append(hit)
        kept.append(hit)
    return kept


# The chunks inside a container's lines, but the container's own (chunk ids are per file).
_INSIDE_SQL = f"""SELECT count(*) FROM chunks WHERE id >= ? * {ROWS_PER_FILE}
    AND id < (? + 1) * {ROWS_PER_FILE} AND id != ? AND start_line >= ? AND end_line <= ?"""


def _without_lone_member_twins(db: Store, hits: list[CodeHit]) -> list[CodeHit]:
    """The hits without the lower of a class (struct, impl ...) and its one member chunk: a
    class whose only method is `__init__` is that method and a header, and the two took two
    of the first places (7 of a search user's 80 top tens on PyYAML's tokens, libmodbus)."""
    containers = [hit for hit in hits if hit.kind in chunks.CONTAINER_KINDS]
    if not containers:
        return hits
    dropped: set[int] = set()
    for container in containers:
        if container.chunk_id in dropped:
            continue
        inside = [
            hit
            for hit in hits
            if hit is not container and hit.chunk_id not in dropped and hit.path == container.path
            and container.start_line <= hit.start_line and hit.end_line <= container.end_line
        ]  # fmt: skip
        if len(inside) != 1:
            continue
        file_id = container.chunk_id // ROWS_PER_FILE
        (members,) = db.conn.execute(
            _INSIDE_SQL,
            (file_id, file_id, container.chunk_id, container.start_line, container.end_line),
        ).fetchone()
        if members == 1:  # the hits are best first: the later of the two goes
            later = max(container, inside[0], key=hits.index)
            dropped.add(later.chunk_id)
    return [hit for hit in hits if hit.chunk_id not in dropped]


def _size(hit: CodeHit) -> int:
    return hit.end_line - hit.start_line + 1


def _overlap(one: CodeHit, other: CodeHit) -> int:
    return max(0, min(one.end_line, other.end_line) - max(one.start_line, other.start_line) + 1)


RECORD_FACTOR = 0.3
_RECORD_STEMS = frozenset(
    {"history", "changes", "changelog", "news", "release-notes", "releases", "authors",
     "contributors", "thanks", "credits", "license", "licence", "copying", "notice"}
)  # fmt: skip


def is_record_doc(path: str) -> bool:
    """A changelog, an authors or licence file, or packaging metadata (`*.egg-info/`)."""
    if ".egg-info/" in path or ".dist-info/" in path or "/releases/" in f"/{path}":
        return True
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0].lower()
    return stem in _RECORD_STEMS


def _snippet(head: str, width: int = 240) -> str:
    text = " ".join(head.split())
    return text if len(text) <= width else text[: width - 1] + "…"
