"""discover -> extract in worker processes -> one writer; each file's rows replaced atomically."""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import gc
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, cast

from repomap import store, textfile
from repomap.config import DEFAULT_MAX_FILE_SIZE, Settings, literal_index_bytes
from repomap.errors import CorruptIndex, IndexBusy, NotAnIndex, RepomapError
from repomap.extractors.cpp_namespaces import EMPTY, Table, uses_opener
from repomap.index import markers, namespaces, scopes, secrets
from repomap.index.chunks import CHUNKS_VERSION, code_chunks
from repomap.index.discover import FoundFile, Walk, code_files, read_file, read_file_if, walk
from repomap.index.docs import update_docs
from repomap.index.history import update_history
from repomap.index.readable import indexed_source
from repomap.index.records import update_data
from repomap.languages import (
    DATA_FORMATS,
    DOC_FORMATS,
    LANGUAGE_BY_SUFFIX,
    LANGUAGE_NAMES,
    data_format,
    doc_format,
    language_of_header,
)
from repomap.subwords import subwords

if TYPE_CHECKING:  # numpy comes with it: a run that embeds nothing (most) never imports it
    from repomap.extractors.model import TextElement
    from repomap.index.embedding import EmbedSummary

# Bump when extraction changes what it stores: every file is then re-read once.
# 2: credentials redacted in signatures and docs too; 3: Python class attributes and type
# aliases are symbols; 4: `.c` and C projects' `.h` read as C (tree-sitter-c), enum constants;
# 5: C++ enumerators are symbols too; 6: C/C++ functions tree-sitter lost to an ERROR found again
# from their head and braces, functions a macro names or defines (`FN(x)`, `SYSCALL_DEFINE1(x)`),
# more macros blanked (member and statement macros, `* MACRO name`, macro calls alone at file
# scope, the `extern "C"` guard, comments in continued `#define`s), conversion operators named
# with their type, docs across `#if`, a tree of headers alone read as C; 7: Rust items inside an
# item-level macro call (`cfg_rt! { .. }`, `cfg_if! { if #[cfg(..)] { .. } }`) are symbols; 8: a
# C++ function a test macro defines is named with its arguments (`TEST(Suite, Name)`); 9: and
# `TEST_CASE("name", "[tag]") { .. }` by its first (Catch2), past a continued #define too; 10:
# `SYSCALL_DEFINE0(getpid) { .. }` and `DEFINE_IDTENTRY(exc_bounds) { .. }` found, a C test
# macro's two names kept (`TEST(Group, Name)`); 11: C/C++ classes, namespaces and enums whose
# head tree-sitter left in an ERROR (or that it closed too early) found with their braces
# matched by hand; a macro after a declarator's `)` (`pid() SPDLOG_NOEXCEPT {`), as an access
# specifier (`JSON_PRIVATE_UNLESS_TESTED:`) or before a destructor (`FMT_CONSTEXPR20 ~buf()`)
# blanked, and at column 0 a macro call with literal arguments and a `;` (gmock's default
# actions), `class GTEST_API_ Foo`, `class Q_CORE_EXPORT QEvent // c\n{`, `class A_API B_API C`,
# `void MACRO ns::f(`;
# `BOOST_TRY {` / `BOOST_CATCH(...)` read as `try` / `catch` where catch clauses follow,
# a conditional inside a declaration (a class head's bases) read as its first branch;
# `constexpr Foo::operator bool()` named as the operator; Rust: a `bitflags!` struct is a struct,
# a malformed macro body no longer hides the well-formed ones after it, an item a macro lets go
# without its `;` (`thread_local! { static X: T = { .. } }`) ends there; 12: C and C++ never
# indexed before (curl, git, openssl, CPython, Vim, Lua ...): a function name in parentheses
# (`int (lua_gettop) (lua_State *L);`), attribute macros after a prototype's `)` in C too
# (`ATTRIBUTE_FORMAT_PRINTF(1, 2);`), macro calls before a continued `#define` kept apart from the
# function after it, a return type's macro kept on its line before `STRINGLIB(find)(` or `f(void) {`, no enumerator named
# from a directive's line, a conditional whose branches each leave `(` or `{` open read as one
# branch (zlib's inflate(): `if (a ||\n#else\n if (\n#endif\n b) {`), or whose branches each end
# inside an expression (`x =\n#else\n (void)\n#endif`) or are heads of one function, an
# attribute macro after a parameter's name (Vim's `expand_T *xp UNUSED`); 13: a macro around a
# prototype's parameters (zlib's `fill_window OF((deflate_state *s))`, bash's `PARAMS((int))`),
# an attribute macro between a return type and the name (`_GL_ATTRIBUTE_PURE`,
# `internal_function`), a macro after a declared name (`Columns INIT(= 80)`, `GUARDED_BY(mu_)`),
# a macro on the line after a method's `const` (`GTEST_LOCK_EXCLUDED_(mu)`), an attribute macro
# ending the return type's line (`static void __printf(2, 3)\nname(`), a capitalised storage macro
# at a line's start (`EXTERN char e_x[]`, `STATIC const`), an initialiser macro (`INIT(= 80)`),
# attribute macros between a record's `}` and `;` (the kernel's `} __packed;`); 14: and between
# a record's `}` and the name a typedef declares (`} __aligned(8) psw_compat_t;`); 15: a Python
# function decorated `@overload` is a declaration (is_definition 0), not a definition; 16: C++
# namespaces opened by macros (`FMT_BEGIN_NAMESPACE`) in qualified names; 17: C/C++ files with
# CRLF line ends have their macros blanked as LF files do; 18: a macro around a qualified name
# (`void NOINLINE(Greenlet::expose_frames)()`) names the method, a pointer to a member function
# (`Error (Parser::*routine)(unsigned);`) no method; 19: a function's end at its hand-matched
# brace; 20: a macro after a class's name (`class Verifier FLATBUFFERS_FINAL_CLASS {`), a
# record macro (`FLATBUFFERS_MANUALLY_ALIGNED_STRUCT(4) Vec3 {`), a capitals macro without an
# underscore after a declarator (`void f() NOEXCEPT {`), an annotation after a member's name
# (`bool done_ GUARDED_BY(mu_);`), no macro blanked in a `#define`'s continued body, `.C`,
# `.tcc`, `.tpp`, `.txx`, `.h++`, `.cppm` and `.ixx` as C++, `enum class` and `operator`
# declarations as C++ syntax in a header; 21: typedefs of standard type names (`int8_t`),
# `#define`s inside enums and initializers, Catch2's try/catch macros, calling conventions,
# `inline friend`, `(min)` names, `ns::X::f` defined inside `namespace ns`, a header that opens
# a namespace with the tree's macro is C++; 22: operator names spelled one way, a qualified
# name looked up among the file's namespaces and classes, parentheses in an enum's literals;
# 23: a macro inside a function-pointer typedef's parentheses (`(APIENTRYP PFNGL..PROC)`,
# `(WINAPI *F)`), a one-line `#define` with a comment before code or `/*` in a string, an
# anonymous enum's base and a macro after an enum's name, anonymous enums' constants named in
# their scope, a function returning a reference to an array, `TYPE MACRO name(void)`, trio's
# `name TRIO_ARGS2((a, b), ...)` heads on two lines; 24: an export macro before an enum's name,
# `typedef __attribute__((..))`, capitals macros after a record's `}` (`} T GLIB_DEPRECATED;`),
# macro calls in a class body (`DISALLOW_COPY_AND_ASSIGN(A);`) no methods; 25: a test macro's
# local types (`TEST_CASE("..") {`), `#define`s in initializers after a row or a `=\n{`,
# `struct {..}\nHB_FUNCOBJ (x);`, an indented return type alone on its line, `__TBB_X` macros
# (their arguments over lines), `MACRO(void f(..), "..")` in a class names `f`, an empty
# `#define` with trailing blanks; 26: pcre2's `PRIV(name)[] = {..}` named as its functions,
# string macros joined after `=` (`alasnames[] =\n  STRING_a\n  STRING_b;`); 27: a capitals
# macro used as an `if` with an `else` (`KJ_IF_MAYBE(x, y) {..} else`), `static MACRO(void
# f(..)) {`, a macro statement's empty last argument (`OVERRIDE(int, B, foo, );`), a bare
# `_CAPITALS_` line before a declaration, `lzma_attribute((..))` ending a return type's line,
# `GCC_NORETURN NCURSES_EXPORT(void) f(..)` in C; 28: an empty last argument after a comment,
# `#if`/`#endif` around a record's body (`typedef struct X\n#if ..\n{..}\n#endif\nT;`); 29:
# export macros not in capitals (`class Foundation_API X {`) and before a union's name,
# `static int GIT_FORMAT_PRINTF(2, 3) f(`, `typedef int GIT_CALLBACK(name)(..)`, a bare
# macro line before `GIT_EXTERN(int) f(` or `START_TEST(t) {`, `} _PACKED name;`, a typedef's
# words the file defines as macros (`typedef DEPRECATED int8_t int8 DEPRECATED2;`); 30:
# `MACRO(name) {` named `name` when the file's `#define MACRO(x)` opens a function `x(`, a
# mixed-case `Macro(name) {` as written, and no locals of a body whose function was not read;
# libpng's `PNG_FUNCTION(type, name, (params), ..) {` named `name`; 31: a Rust impl for a
# reference or pointer type puts its items under the type it points to (`Utf8Sequence::x`);
# 32: lower-case specifier macros (`simdjson_inline`, `nssv_noexcept`), an attribute macro's
# arguments over lines before a record's or an alias's name; 33: `} ALIGNED(8);` after a
# record is no function; 34: a capitals macro inside a function name's parentheses
# (`png_uint_32 (PNGAPI png_get_uint_32)(..)`); 35: no locals of a lambda in a namespace-scope
# initializer, `typedef PNG_CALLBACK(..)`'s argument types no types, `enum __attribute__((..))
# name {`, `X::operator std::string_view()` named so; 36: a block comment over lines in a
# continued `#define`, a `#define` in a typedef enum, `INLINE\nLOCAL(void)\nname(`, a macro
# call's arguments over indented lines at column 0, a file without a final newline; 37: a
# braced member initialiser in a conditional between a constructor's head and body, no
# variable named `bool`, `A::B::operator bool()` after a specifier named so; 38: an attribute
# macro after `__always_inline` (the kernel's kmalloc), a `<header>` in `__has_include(..)`,
# a K&R definition returning a pointer; 39: an `#if` .. `#endif` around an attribute alone
# (libtomcrypt's struct fields), yacc and lex grammars' C, an autoconf `@X@` in an `#if`,
# directive lines between a function's head and its body (gnulib's), an attribute or a capitals
# macro call between a typedef's type and its name; 47: a Rust enum's variants are its
# constants (`DecodeError::InvalidByte`), as C and C++ enumerators are; 48: a capitals macro
# ending a C/C++ head's first line after its return type (expat's `static int PTRFASTCALL\n`);
# 49: a prototype whose type a macro makes on the line above (libyaml's `YAML_DECLARE(int)\n`),
# a typedef'd record documented by its alias's doc; 50: a statement as a capitals macro's
# argument left unread (pugixml's tests' `CHECK_ALLOC_FAIL(for (..) ..);`); 51: a C or C++
# record's data members are symbols (`field`); 52: ... inside `#if` blocks too, and beside an
# annotation tree-sitter cannot read (`const char __user *data;`); 53: a member function
# returning a function pointer (`int (*get(void))(int);`) is no field; 54: a C or C++ plain
# comment right above a declaration is its doc when it has none; 55: a Rust struct's,
# union's or struct-like variant's named fields are symbols (`field`), `self.depth` a reference
# 56: a Rust field named in a struct literal or pattern (`Pool { depth: 3 }`) is a reference;
# 57: a licence or a tool's mark (`// NOLINT`) above a C/C++ declaration, and a Doxygen member
# group's `/// @{`, are no doc; a Python function's recursive call is a reference (its own name
# was first used on its `def` line, dropped); a `//` comment ending in `\` ends on its line;
# a Rust impl for a reference is named by the type it is to (`Map`, not `&'a Map`)
# 58: a C/C++ function a capitals macro names by its one argument is named by it, qualified
# as written (`SYSCALL_DEFINE0(getpid)`: `getpid`; a test macro's only when it says `test`);
# libpng's `static PNG_FUNCTION(..)` names its function and keeps the next; adjacent doc
# comments are joined (`//!` brief over `/*!`); `EXPORT_MACRO type name = ..;` and an
# initializer holding an `#if` keep their variable, as does a recovered function head with a
# comment on its return type's line (`int /* PRIVATE */`); 59: the kernel's
# `SYSCALL_DEFINE1(umask, ..)` is `umask`, qualified as written; a licence is `Copyright (c)`
# 60: C++ `#if` links of a method chain, `ASSERT_X(T v("a"))`; Rust `impl X for io::Error`, `a-b/`
# 61: an object-like C/C++ macro's signature holds its value (`#define SQLITE_BUSY 5`)
# 62: a Python property's getter and setter keep their own docstrings (by line, not by name)
# 63: C attribute macros in any case after a prototype's `)` and `((..))` ones before its name
# 64: a C++ `#if` right after an initialiser's `{` or `= {`, or ending an `=` member with its `;`
# (CLI11's `bool allow_windows_style_options_{\n#ifdef _WIN32`); Rust strings without `\`+newline
EXTRACTOR_VERSION = "66"
IN_PROCESS_LIMIT = 16  # fewer changed files than this are read without starting workers
BATCH_FILES = 400  # files per transaction
FORK_WAIT_SECONDS = 30.0  # the workers' fork is ~10-50 ms; a bound, should it never come
EXTRACTED_AHEAD = 1024  # results the workers may have ready before the writer takes them
WORKER_NICENESS = 5  # the writer first: it fell behind the workers, then wrote alone at the end
OPTIMIZE_AFTER_FILES = 200  # a run writing this many files (and a fifth) merges FTS segments


@dataclass(frozen=True, slots=True)
class Job:
    rel_path: str
    path: str
    language: str
    size: int
    mtime_ns: int
    old_hash: str | None  # skip extraction when the bytes turn out unchanged
    redact: bool = True  # replace credentials in text elements with [REDACTED]
    root: str = "/"  # the resolved ROOT: a link swapped in since the walk must stay inside
    max_size: int = DEFAULT_MAX_FILE_SIZE  # a file that grew since the walk is not read whole
    cpp_namespaces: Table = EMPTY  # the tree's C++ namespace macros (index/namespaces.py)
    # A Rust file's module when a `mod` declaration loads it as another than its path says
    # (`#[path = "extern_impl.rs"] mod imp;`: `fmt::imp`); None: its path's (index/rust_paths.py)
    rust_module: str | None = None


@dataclass(frozen=True, slots=True)
class Unchanged:
    job: Job


@dataclass(frozen=True, slots=True)
class Skipped:
    rel_path: str
    reason: str


Result: TypeAlias = store.FileRows | Unchanged | Skipped  # what the writer takes for a job
T = TypeVar("T")


class Extracted(Iterator[Result], Protocol):
    """The results of a run's jobs: a generator, or workers.Ahead over worker processes."""

    def close(self) -> None: ...


@dataclass(slots=True)
class Summary:
    root: str
    db_path: str
    scanned: int = 0
    unchanged: int = 0
    added: int = 0
    modified: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    fallback: list[tuple[str, str]] = field(default_factory=list)
    elements: dict[str, int] = field(default_factory=dict)
    symbols: int = 0
    references: int = 0
    files: int = 0
    docs: dict[str, int] = field(default_factory=dict)  # docs.DocsSummary.as_dict()
    data: dict[str, Any] = field(default_factory=dict)  # records.DataSummary.as_dict()
    history: dict[str, Any] = field(default_factory=dict)  # history.HistorySummary.as_dict()
    seconds: float = 0.0
    recovered_from: str | None = None  # where a corrupt index was moved before rebuilding
    ignored: int = 0  # entries that ignore rules excluded (a folder counts once)
    warnings: list[str] = field(default_factory=list)
    # Vectors of chunks this run rewrote that held their old text, deleted (a run that does
    # not embed: embedding.drop_stale); an embedding run counts its own deletions
    vectors_dropped: int = 0
    # why every file was read again though none changed: another repomap made the index
    # (`extractor version 47 (now 50)`); None when files were read for their own changes
    reread: str | None = None

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(_reason_kind(reason) for _, reason in self.skipped))

    def as_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "db_path": self.db_path,
            "scanned": self.scanned,
            "unchanged": self.unchanged,
            "added": self.added,
            "modified": self.modified,
            "removed": self.removed,
            "skipped": len(self.skipped),
            "skipped_by_reason": self.skipped_by_reason,
            "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped],
            "fallback_files": [{"path": p, "reason": r} for p, r in self.fallback],
            "files": self.files,
            "elements": self.elements,
            "symbols": self.symbols,
            "references": self.references,
            "docs": self.docs,
            "data": self.data,
            "history": self.history,
            "seconds": round(self.seconds, 3),
            "recovered_from": self.recovered_from,
            "ignored": self.ignored,
            "warnings": self.warnings,
            "vectors_dropped": self.vectors_dropped,
            "reread": self.reread,
        }


def _reason_kind(reason: str) -> str:
    return reason.split(" (")[0]


Progress = Callable[[int, int], None]


def run(
    settings: Settings,
    *,
    force: bool = False,
    progress: Progress | None = None,
    keep_vectors: bool = False,
) -> Summary:
    """Bring the index at settings.db_path up to date with settings.root. The vectors of
    chunks a rewrite changed are deleted (embedding.drop_stale) unless `keep_vectors`: an
    embedding run follows, which deletes and counts them itself."""
    started = time.perf_counter()
    try:
        with _exclusive(settings.db_path), _no_cyclic_gc():
            if settings.scope_mode != "fixed":  # a new branch starts from the nearest index
                scopes.seed(settings)
            try:
                summary, totals = _run_once(settings, force, progress, started, keep_vectors)
            except CorruptIndex:
                # Damage that opening did not show (a malformed page met mid-run) gets the same
                # recovery, once: otherwise every run stopped at the same page, each one saying
                # to run `repomap index`.
                if not _is_ours(settings):
                    raise
                moved = str(store.move_aside(settings.db_path))
                summary, totals = _run_once(settings, True, progress, started, keep_vectors)
                summary.recovered_from = moved
    except OSError as error:
        raise RepomapError(
            f"cannot write the index at {settings.db_path} ({error.strerror or error}); "
            "pass --db with a writable location"
        ) from None
    summary.files = totals.pop("files")
    summary.symbols = totals.pop("symbols")
    summary.references = totals.pop("references")
    summary.elements = {k: totals.get(k, 0) for k in ("comment", "docstring", "string_literal")}
    if settings.scope_mode != "fixed":
        scopes.record(settings)
    return summary


def refresh_history(settings: Settings) -> list[str]:
    """Bring the index's commits up to date when HEAD moved since indexing (commits do not
    change any indexed file, so the file checks never see them); notes for the answer."""
    from repomap.index.history import head_of, update_history

    if not settings.db_path.exists() or not settings.history:
        return []
    with store.reading(settings.db_path) as db:
        indexed = store.get_meta(db, "history_head")
        root = store.indexed_root(db, settings.root)
    head = head_of(root)
    if head is None or head == indexed:
        return []
    try:
        with _exclusive(settings.db_path):
            db = store.open_index(settings.db_path)
            try:
                with store.write_errors(settings.db_path):
                    done = update_history(store.Writer(db), root, settings.redact)
            finally:
                db.conn.close()
    except IndexBusy:
        return ["another `repomap index` is running: commits since it started may be missing"]
    if done.note:
        return [done.note]
    return [f"read {done.added} new commits first ({done.removed} no longer in HEAD's history)"]


def has_embeddings(settings: Settings) -> bool:
    """The index has a vector store with vectors in it: `repomap index` keeps it up to date."""
    if not settings.db_path.exists():
        return False
    with store.reading(settings.db_path) as db:
        return store.has_vectors(db)


def embed(
    settings: Settings,
    *,
    dry_run: bool = False,
    at_most: int | None = None,
    vector_store: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    renew_model: bool = False,
) -> EmbedSummary:
    """Bring the vector store up to date with the index's chunks (after run(): lexical first).

    `vector_store` ('sqlite', 'milvus:PATH_OR_URI') is remembered in the index, so searches
    and later runs use the same store. The model (and window) the index was embedded with is
    kept, so a new default never re-embeds an index behind its user's back; `renew_model`
    (`repomap index --force`) moves it to the default. The index's lock is taken per batch
    written, waiting for a run of `repomap index` to end; interrupted, every batch finished is
    kept.
    """
    from repomap.embed.model import DEFAULT_MAX_TOKENS, Embedder, model_id_for, window_of
    from repomap.index import embedding

    db = store.open_index(settings.db_path)
    try:
        with store.write_errors(settings.db_path):
            stored = None if renew_model else store.embedding_model(db)
            window = (stored and window_of(stored)) or DEFAULT_MAX_TOKENS
            model_id = model_id_for(window)
            if not dry_run:
                with _exclusive(settings.db_path, wait=True):
                    store.set_meta(
                        db,
                        {store.EMBEDDING_MODEL_META: model_id}
                        | ({} if vector_store is None else {store.VECTOR_STORE_META: vector_store}),
                    )
            vectors = embedding.vector_store(db, model_id, vector_store)
            done = embedding.embed_chunks(
                db,
                vectors,
                lambda: Embedder.load(window),
                dry_run=dry_run,
                at_most=at_most,
                progress=progress,
                writing=lambda: _exclusive(settings.db_path, wait=True),
                stop=stop,
                elsewhere=(
                    None
                    if settings.scope_mode == "fixed"
                    else functools.partial(scopes.cached_elsewhere, settings)
                ),
            )
    finally:
        db.conn.close()
    if settings.scope_mode != "fixed" and not dry_run:
        scopes.record(settings)  # the scope's model id and counts, for status and prune
    return done


def prune_embedding_cache(settings: Settings, apply: bool) -> int:
    """Cached vectors of texts no chunk has any more and no scope uses (an edited function's
    old text, a deleted file's): how many, and with `apply` they are dropped. The cache is
    what makes a re-index or a new branch cheap, so nothing else ever drops from it."""
    from repomap.store.vectors import EmbeddingCache

    if not apply:
        with store.reading(settings.db_path) as db:
            return len(EmbeddingCache(db).unused())
    with _exclusive(settings.db_path, wait=True):
        db = store.open_index(settings.db_path)
        try:
            with store.write_errors(settings.db_path):
                return EmbeddingCache(db).prune_cache()
        finally:
            db.conn.close()


def _run_once(
    settings: Settings,
    force: bool,
    progress: Progress | None,
    started: float,
    keep_vectors: bool = False,
) -> tuple[Summary, dict[str, int]]:
    summary = Summary(str(settings.root), str(settings.db_path))
    db = _open_or_recover(settings, summary)
    try:
        with store.write_errors(settings.db_path):
            settings = _size_limit(db, settings)
            _index(db, settings, force, summary, progress, keep_vectors)
            summary.seconds = time.perf_counter() - started
            return summary, store.counts(db)
    finally:
        db.conn.close()


def _size_limit(db: store.Store, settings: Settings) -> Settings:
    """The run's file size limit: one given (kept in the index for the runs after it), else
    the one the index keeps. A file indexed with `--max-file-size 20000000` is not dropped by
    the next query's refresh, which is given no limit."""
    kept = store.kept_size_limit(db)
    if settings.max_file_size_set:
        if kept != settings.max_file_size:
            store.set_meta(db, {store.MAX_FILE_SIZE_META: str(settings.max_file_size)})
        return settings
    return settings if kept is None else settings._replace(max_file_size=kept)


def _is_ours(settings: Settings) -> bool:
    """A broken file repomap may move aside: at the default path, or a SQLite file."""
    return settings.uses_default_db or store.has_sqlite_header(settings.db_path)


def _open_or_recover(settings: Settings, summary: Summary) -> store.Store:
    """Open the index; a corrupt index of ours is moved aside (never deleted) and rebuilt."""
    try:
        return store.open_index(settings.db_path)
    except CorruptIndex:
        path = settings.db_path
        if not _is_ours(settings):
            raise NotAnIndex(
                f"{path} is not a SQLite database, so not an index repomap made; it was left "
                "untouched: delete it or pass another --db"
            ) from None
        summary.recovered_from = str(store.move_aside(path))
        return store.open_index(path)


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause the cycle collector for the run: it found nothing to free in ast nodes, tree-sitter
    nodes or row tuples, yet cost 10-20% of extraction. Forked workers inherit the pause."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _exclusive(db_path: Path, wait: bool = False) -> Iterator[None]:
    """One `repomap index` per database at a time; readers are never blocked (WAL). `wait`:
    wait for the lock rather than fail (the embedding stage's short writes)."""
    store.prepare_folder(db_path)
    lock_path = db_path.with_name(db_path.name + ".lock")
    with open(lock_path, "a+b") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexBusy(
                f"another `repomap index` is updating {db_path}; try again when it ends"
            ) from None
        _held_locks.append(lock.fileno())
        try:
            yield
        finally:
            _held_locks.remove(lock.fileno())
            fcntl.flock(lock, fcntl.LOCK_UN)


# The lock's descriptor, which forked workers inherit. A flock is held until every descriptor
# of it is closed: a worker still parsing after its parent was killed kept the next
# `repomap index` out (IndexBusy) until it finished. Workers close their copy as they start.
_held_locks: list[int] = []


def _start_worker() -> None:
    for descriptor in _held_locks:  # the writer's lock is not the worker's to hold
        os.close(descriptor)
    _held_locks.clear()
    os.nice(WORKER_NICENESS)


# Runs writing this many files make and free arrays of tens of MB (index/memory.py).
LARGE_RUN_FILES = 4_000


def _index(
    db: store.Store,
    settings: Settings,
    force: bool,
    summary: Summary,
    progress: Progress | None,
    keep_vectors: bool = False,
) -> None:
    started = time.perf_counter()
    # Read before anything is written: a bad value refused after a forced run's clear_files
    # left the index empty (a review's case).
    literal_threshold = literal_index_bytes()
    made_otherwise = outdated(db, settings)
    if not force and any(old is not None for old, _new in made_otherwise.values()):
        summary.reread = made_with(made_otherwise)  # an upgrade, not a new index
    force = force or bool(made_otherwise)
    walked = walk(settings.root, skip_dirs=settings.index_skipped)
    summary.skipped.extend(walked.skipped)
    summary.ignored = walked.ignored.total()
    existing = store.indexed_files(db)
    writer = store.Writer(db)
    if force or not existing:
        with writer.batch():
            if existing:  # forced: every file is read again, so its old rows go first, at once
                writer.clear_files()
            # No rows of another version or redaction setting are here now: record them, so a
            # run killed midway is resumed from its last batch, not forced to start over.
            store.set_meta(db, _version_meta(settings))
    jobs: list[Job] = []
    present: set[str] = set()
    unchanged_cpp: list[tuple[FoundFile, str, int]] = []  # may hold C++: file, language, id
    rust: dict[str, FoundFile] = {}  # the Rust files the index holds after this run
    code_bytes = 0  # of the code files the index holds after this run
    for found, language in code_files(walked):
        summary.scanned += 1
        present.add(found.rel_path)
        if found.size > settings.max_file_size:
            summary.skipped.append(
                (found.rel_path, f"larger than the limit ({settings.max_file_size} bytes)")
            )
            continue
        code_bytes += found.size
        if language == "rust":
            rust[found.rel_path] = found
        old = existing.get(found.rel_path)
        if (
            old
            and not force
            and old.text_indexed
            and (old.size, old.mtime_ns) == (found.size, found.mtime_ns)
            and found.rel_path not in settings.reread
        ):
            summary.unchanged += 1
            if namespaces.may_be_cpp(found.rel_path, language, True):
                unchanged_cpp.append((found, language, old.id))
            continue
        jobs.append(
            Job(
                found.rel_path,
                found.abs_path,
                language,
                found.size,
                found.mtime_ns,
                # Not text-indexed (an index from before v5 or v13): read it whole again.
                None if force or old is None or not old.text_indexed else old.hash,
                settings.redact,
                str(settings.root),
                settings.max_file_size,
            )
        )
    jobs = _with_namespaces(db, settings, jobs, present, walked, unchanged_cpp, summary)
    jobs = _with_rust_modules(db, settings, jobs, rust, existing, summary)
    if len(jobs) >= LARGE_RUN_FILES:
        from repomap.index.memory import map_large_blocks

        map_large_blocks()  # the ranking's freed arrays go back to the system
    if not summary.scanned and walked.ignored:
        summary.warnings.append(_all_ignored_warning(walked))
    elif not summary.scanned and not any(doc_format(f.rel_path) for f in walked.files):
        data_files = sum(1 for found in walked.files if data_format(found.rel_path))
        summary.warnings.append(_nothing_readable_warning(len(walked.files), data_files))
    # What ranking reads of symbols and refs, kept as this run writes it (the module imports
    # no numpy; only ranking does).
    from repomap.index.ranking import Written

    taken = Written()
    writer.observer = taken
    writer.compare_graphs = not force  # a forced run ranks from scratch (below)
    indexed_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    gone = [old for path, old in existing.items() if path not in present]
    written = 0
    writer.keep_literal_index(code_bytes, literal_threshold)
    if len(jobs) >= max(OPTIMIZE_AFTER_FILES, summary.scanned // 5):
        writer.begin_bulk()  # text merged and name indexes built once, at the end
    else:
        writer.end_bulk()  # what a large run killed before its end deferred
    with writer.batch():
        for old in gone:
            writer.delete_file(old.id)
        summary.removed = len(gone)
    # Extraction starts now, so the workers run while the docs are indexed.
    with closing(_extract_all(jobs, settings.workers)) as results:
        docs = update_docs(
            writer, walked.files, settings.max_file_size, force, indexed_at, settings.redact
        )
        summary.skipped.extend(docs.skipped)
        summary.docs = docs.as_dict()
        data = update_data(
            writer, walked.files, settings.max_file_size, force, indexed_at, settings.redact,
            settings.root.resolve(),
        )  # fmt: skip
        summary.skipped.extend(data.skipped)
        summary.data = data.as_dict()
        while True:
            with writer.batch():
                for result in _take(results, BATCH_FILES):
                    written += 1
                    _write(writer, result, existing, summary, indexed_at)
                    if progress:
                        progress(written, len(jobs))
            if written >= len(jobs):
                break
    with writer.batch():
        # Files that vanished or became unreadable since they were indexed: drop their rows.
        for rel_path, _reason in summary.skipped:
            if rel_path in existing and rel_path in present:
                writer.delete_file(existing[rel_path].id)
        writer.link_declarations()  # what this run's writes and deletions changed
        if writer.rewritten_chunks and not keep_vectors:
            if store.has_vectors(db):
                from repomap.index.embedding import drop_stale

                summary.vectors_dropped = drop_stale(db, writer.rewritten_chunks)
            writer.vector_checks_done()
    summary.history = update_history(
        writer, settings.root, settings.redact, settings.history
    ).as_dict()
    with writer.batch():
        store.set_meta(
            db, {**_version_meta(settings), "indexed_at": indexed_at, "root": str(settings.root)}
        )
    optimized = summary.added + summary.modified >= max(OPTIMIZE_AFTER_FILES, summary.scanned // 5)
    from repomap.index.ranking import compute_ranks, store_ranks  # numpy: imported when ranking

    if optimized:
        from concurrent.futures import ThreadPoolExecutor  # with logging: ~4 ms a run needs not

        # Merging the text indexes (one SQLite statement, without the GIL) and ranking (reads
        # and arithmetic, on a reader of its own) take a core each: ~0.4 s off a cold run.
        with ThreadPoolExecutor(1, thread_name_prefix="repomap-merge") as pool:
            merged = pool.submit(_merge_text, writer)
            try:
                with store.reading(settings.db_path) as reader:
                    ranking = compute_ranks(reader, force, written=taken)
            finally:
                merged.result()
    else:
        # None when nothing changed; forced (every file read again): ranked from scratch too
        ranking = compute_ranks(db, force, written=taken)
    if ranking:
        store_ranks(db, ranking)
    if optimized:
        writer.release_free_pages()
    else:  # few files were written after all
        writer.end_bulk()
    row_counts = writer.row_counts()
    if row_counts is None:  # not known from the start of the run: counted once
        store.set_meta(db, {store.ROW_COUNTS_META: ""})
        row_counts = store.counts(db)
    with writer.batch():  # for `repomap status`: how long the last run took
        store.set_meta(
            db,
            {
                "index_seconds": f"{time.perf_counter() - started:.3f}",
                **store.counts_meta(db, row_counts),
            },
        )


def _with_namespaces(
    db: store.Store,
    settings: Settings,
    jobs: list[Job],
    present: set[str],
    walked: Walk,
    unchanged_cpp: list[tuple[FoundFile, str, int]],
    summary: Summary,
) -> list[Job]:
    """`jobs` carrying the tree's C++ namespace macros, and the unchanged files that use one
    whose definition changed read again (also a job whose stat changed but whose bytes may
    not have: its old hash is dropped). The definitions are saved now, and those files marked
    unread, so a run stopped before its end still makes them again when resumed. When the
    rule for which `.h` files are read changed (a tree's first `.c` or C++ source), every file
    the rule now takes is read for definitions, not only the changed ones."""
    headers = namespaces.reads_headers([found.rel_path for found in walked.files])
    before, headers_before = namespaces.stored(db)
    root = Path(str(settings.root))  # as the jobs have it
    taken = [job for job in jobs if namespaces.may_be_cpp(job.rel_path, job.language, headers)]
    read = [(job.rel_path, Path(job.path), root, job.max_size) for job in taken]
    if headers != headers_before:
        before_rule = {}  # what the old rule read may not be read any more: start over
        read += [
            (found.rel_path, Path(found.abs_path), root, settings.max_file_size)
            for found, language, _ in unchanged_cpp
            if namespaces.may_be_cpp(found.rel_path, language, headers)
        ]
    else:
        before_rule = before
    after = namespaces.updated(before_rule, read, present)
    table = namespaces.table_of(after)
    if after != before or headers != headers_before:
        names = namespaces.changed_names(namespaces.table_of(before), table)
        users = [
            (found, language, file_id)
            for found, language, file_id in unchanged_cpp
            if names
            and namespaces.uses_any(Path(found.abs_path), root, settings.max_file_size, names)
        ]
        stale = {
            job.rel_path
            for job in taken
            if names
            and job.old_hash is not None
            and namespaces.uses_any(Path(job.path), root, job.max_size, names)
        }
        writer = store.Writer(db)
        with writer.batch():
            namespaces.save(db, after, headers)
            writer.mark_unread(file_id for _, _, file_id in users)
        summary.unchanged -= len(users)
        jobs = [dataclasses.replace(job, old_hash=None) if job.rel_path in stale else job
                for job in jobs]  # fmt: skip
        jobs += [
            Job(found.rel_path, found.abs_path, language, found.size, found.mtime_ns, None,
                settings.redact, str(settings.root), settings.max_file_size)
            for found, language, _ in users
        ]  # fmt: skip
    if not table.macros:
        return jobs
    return [
        dataclasses.replace(job, cpp_namespaces=table)
        if namespaces.may_be_cpp(job.rel_path, job.language, headers)
        else job
        for job in jobs
    ]


def _with_rust_modules(
    db: store.Store,
    settings: Settings,
    jobs: list[Job],
    rust: dict[str, FoundFile],
    existing: dict[str, store.IndexedFile],
    summary: Summary,
) -> list[Job]:
    """`jobs` carrying the module of each Rust file that a `mod` declaration loads as another
    than its path says (`#[path = "extern_impl.rs"] mod imp;`), and the unchanged files whose
    module changed (a declaring file edited, added or removed) read again, a job whose stat
    changed but whose bytes may not have with its old hash dropped. The changed files (every
    file when the index keeps none: one made before them) are looked at before the workers
    read them again: only those with a path attribute have their declarations read (parsed)
    now, and then the other files' that matter (rust_paths.completed: the unchanged ones'
    are the index's, and read if it kept none). They are saved now, and the files whose
    module changed marked unread, so a run stopped before its end still makes them again
    when resumed. Rust std, cold: ~0.05 s of this process's CPU (every declaring file parsed
    here: ~0.6 s)."""
    rust_jobs = [job for job in jobs if job.language == "rust"]
    gone = any(path.endswith(".rs") and path not in rust for path in existing)
    if not rust and not gone:
        return jobs  # no Rust file, now or before
    from repomap.index import rust_paths  # tree-sitter: imported for a tree of Rust only

    kept = rust_paths.stored(db)
    if not rust_jobs and not gone and kept is not None:
        return jobs  # no Rust file changed: no module either
    kept_nothing = kept is None
    root = Path(str(settings.root))  # as the jobs have it
    if kept is None:
        look = [(path, found.abs_path, settings.max_file_size) for path, found in rust.items()]
        kept = rust_paths.NOTHING_KEPT
    else:
        look = [(job.rel_path, job.path, job.max_size) for job in rust_jobs]
    declared = {path: found for path, found in kept.declared.items() if path in rust}
    reread: dict[str, bytes] = {}  # changed files read the last time, that may be again now
    for rel_path, path, max_size in look:
        test = functools.partial(rust_paths.may_load_elsewhere, rel_path)
        before = declared.pop(rel_path, None) is not None
        raw = read_file_if(path, root, max_size, _any_bytes if before else test)
        if raw is None:
            continue  # no path attribute (or unreadable): read below if another file needs it
        if not before or test(raw):
            declared[rel_path] = rust_paths.declarations(raw)
        else:  # read the last time for another file's sake: kept, for that may hold again
            reread[rel_path] = raw

    def read(rel_path: str) -> bytes | None:
        if rel_path in reread:
            return reread.pop(rel_path)
        found = rust[rel_path]
        return read_file(Path(found.abs_path), root, settings.max_file_size)[0]

    declared = rust_paths.completed(declared, rust, read)
    modules = rust_paths.modules(declared, rust)
    changed = {path for path in rust if kept.modules.get(path) != modules.get(path)}
    if kept_nothing or declared != kept.declared or modules != kept.modules:
        writer = store.Writer(db)
        with writer.batch():
            rust_paths.save(db, rust_paths.Kept(declared, modules))
            writer.mark_unread(existing[path].id for path in changed if path in existing)
    if changed:
        queued = {job.rel_path for job in jobs}
        again = [path for path in sorted(changed) if path not in queued]
        summary.unchanged -= len(again)
        jobs = [dataclasses.replace(job, old_hash=None) if job.rel_path in changed else job
                for job in jobs]  # fmt: skip
        jobs += [
            Job(path, rust[path].abs_path, "rust", rust[path].size, rust[path].mtime_ns, None,
                settings.redact, str(settings.root), settings.max_file_size)
            for path in again
        ]  # fmt: skip
    if not modules:
        return jobs
    return [
        dataclasses.replace(job, rust_module=modules[job.rel_path])
        if job.rel_path in modules and job.language == "rust"
        else job
        for job in jobs
    ]


def _any_bytes(raw: bytes) -> bool:
    """read_file_if's test for a file wanted whatever it holds."""
    return True


def _all_ignored_warning(walked: Walk) -> str:
    """Say which rules left nothing to index: an empty index with no reason given misleads."""
    rules = "; ".join(
        f"{count} by {rule}"
        + (
            f" ({', '.join(walked.ignored_examples[rule])}, ...)"
            if walked.ignored_examples[rule]
            else ""
        )
        for rule, count in walked.ignored.most_common(3)
    )
    return (
        f"no source files to index: ignore rules excluded {walked.ignored.total()} entries: "
        f"{rules}. To index them anyway, re-include them with `!` patterns in a .repomapignore "
        "beside that file: it takes precedence over .gitignore in the same folder."
    )


def _nothing_readable_warning(other_files: int, data_files: int) -> str:
    """An index without code or docs from a tree of other languages (a JavaScript project)
    says so; the data files it read as records (package.json) are counted apart."""
    suffixes: dict[str, list[str]] = {}
    for suffix, language in LANGUAGE_BY_SUFFIX.items():
        suffixes.setdefault(language, []).append(suffix)
    languages = ", ".join(
        f"{LANGUAGE_NAMES[name]} ({' '.join(found)})" for name, found in suffixes.items()
    )
    data = f", {data_files} of them data files read as records only" if data_files else ""
    return (
        f"no source or docs files repomap reads here ({other_files} other files{data}): it "
        f"indexes {languages} source, Markdown, .txt and .rst docs ({' '.join(DOC_FORMATS)}), and "
        f"data files ({' '.join(DATA_FORMATS)}) as records"
    )


def _merge_text(writer: store.Writer) -> None:
    with writer.batch():  # one segment per batch: merged, queries read one
        writer.optimize_text()


def _version_meta(settings: Settings) -> dict[str, str]:
    """What every file's rows were made with; a change forces a re-read of every file."""
    return {
        "extractor_version": EXTRACTOR_VERSION,
        "chunks_version": CHUNKS_VERSION,
        "redact": str(int(settings.redact)),
    }


def outdated(db: store.Store, settings: Settings) -> dict[str, tuple[str | None, str]]:
    """What the index's rows were made with that this repomap makes otherwise (an upgrade, a
    changed redaction setting): name -> (the index's, this one's). Any: the next run re-reads
    every file, though none changed."""
    return {
        key: (found, value)
        for key, value in _version_meta(settings).items()
        if (found := store.get_meta(db, key)) != value
    }


def made_with(versions: dict[str, tuple[str | None, str]]) -> str:
    """`extractor version 47 (now 50), chunks version 21 (now 23)`: outdated() in words."""
    return ", ".join(
        f"{key.replace('_', ' ')} {old or '-'} (now {new})" for key, (old, new) in versions.items()
    )


def _take(results: Iterator[T], count: int) -> Iterator[T]:
    for _ in range(count):
        try:
            yield next(results)
        except StopIteration:
            return


def _write(
    writer: store.Writer,
    result: Result,
    existing: dict[str, store.IndexedFile],
    summary: Summary,
    indexed_at: str,
) -> None:
    if isinstance(result, Skipped):
        summary.skipped.append((result.rel_path, result.reason))
        return
    if isinstance(result, Unchanged):
        summary.unchanged += 1
        job = result.job
        writer.touch_file(existing[job.rel_path].id, job.size, job.mtime_ns)
        return
    old = existing.get(result.path)
    if result.status != "ok":
        summary.fallback.append((result.path, result.note or result.status))
    if old is None:
        summary.added += 1
    else:
        summary.modified += 1
    writer.replace_file(result, old.id if old else None, indexed_at)


def _extract_all(jobs: list[Job], workers: int) -> Extracted:
    """Each job's result, as the writer asks for them; close() it when done (or failed)."""
    if len(jobs) < IN_PROCESS_LIMIT or workers <= 1:
        return (read_and_extract(job) for job in jobs)
    from repomap.index.workers import (  # multiprocessing: imports a small run never needs
        Ahead,
        run_all,
    )

    # Largest first, so one big file does not leave a worker alone at the end; the results
    # come back in this order (run_all keeps it), and new files get their ids in the order
    # they are written: the same ids for the same tree, whatever the workers' timing.
    ordered = sorted(jobs, key=lambda job: (-job.size, job.rel_path))
    stop = threading.Event()  # set by close(): a run interrupted (Ctrl-C, SIGTERM) or failed
    # The workers are forked by the thread that takes results ahead; this thread then indexes
    # the docs, whose first import of repomap.index.markdown held that module's import lock
    # at the fork: a worker inherited it held by a thread it does not have, and hung at its
    # own import of markdown (a Rust crate's long `//!` doc), and `repomap index` with it
    # (semver, 1 of 6 runs with --embed). So this thread waits for the fork, importing nothing.
    forked = threading.Event()
    results = run_all(
        read_and_extract, ordered, workers, on_crash=_crashed, initializer=_start_worker,
        stop=stop, forked=forked,
    )  # fmt: skip
    ahead = Ahead(results, EXTRACTED_AHEAD, stop)
    forked.wait(FORK_WAIT_SECONDS)
    return ahead


def _crashed(job: Job) -> Skipped:
    return Skipped(job.rel_path, "its extraction process died (killed, or a parser crashed)")


def read_and_extract(job: Job) -> Result:
    """Worker: read one file, and unless its bytes are unchanged, extract its rows."""
    raw, problem = read_file(Path(job.path), Path(job.root), job.max_size)
    if raw is None:
        return Skipped(job.rel_path, problem or "unreadable")
    digest = textfile.content_hash(raw)
    if digest == job.old_hash:
        return Unchanged(job)
    source, replaced, skipped = indexed_source(raw, job.language)
    if source is None:
        return Skipped(job.rel_path, skipped or "not text")
    language = language_of_header(job.rel_path, job.language, source)
    if language == "c" and job.cpp_namespaces.macros and uses_opener(raw, job.cpp_namespaces):
        language = "cpp"  # a namespace macro of the tree's opens a namespace: C has none
    from repomap.extractors import extract  # the parsers: a run with nothing changed needs none

    read_as = job.rel_path
    if job.rust_module is not None and language == "rust":
        from repomap.index.rust_paths import extraction_path

        # The extractor qualifies a file's items by the module its path makes: given one
        # that makes the module a `mod` declaration gives the file (`fmt/imp/mod.rs`).
        read_as = extraction_path(job.rust_module) or job.rel_path
    try:
        extraction = extract(language, source, read_as, job.cpp_namespaces)
    except RecursionError:
        return Skipped(job.rel_path, "nested too deeply to parse")
    # Kept broad on purpose: a parser's failure on one file (any type: tree-sitter, ast, our
    # readers on a grammar they do not know) is named with its type and message in the summary's
    # skipped files, where it is seen and fixed, instead of ending the whole run.
    except Exception as error:  # noqa: BLE001 - a count in the summary, never silent
        return Skipped(job.rel_path, f"extractor failed ({type(error).__name__}: {error})")
    # Symbols, references: plain tuples (a Symbol's fields are store.SYMBOL_FIELDS in order,
    # (name, line, symbol) a reference's); a named tuple pickles as a call to its class
    symbols = cast("list[tuple[Any, ...]]", list(map(tuple, extraction.symbols)))
    references = cast("list[tuple[str, int, str | None]]", list(map(tuple, extraction.references)))
    hidden: set[str] = set()
    texts = _text_rows(extraction.texts, source, job.redact, hidden)
    if job.redact and (hidden or _could_hold_key(symbols)):
        symbols = [_redacted_symbol(row, hidden) for row in symbols]
    if ignored := markers.ignored_lines(source):  # kept out of text rows and chunks
        texts = [row for row in texts if not markers.inside(ignored, row[2], row[3])]
        chunked = [row for row in symbols if not markers.inside(ignored, row[3], row[3])]
        chunks = code_chunks(
            job.rel_path, markers.blanked(source, ignored), chunked, texts, hidden, language
        )
    else:
        chunks = code_chunks(job.rel_path, source, symbols, texts, hidden, language)
    return store.FileRows(
        job.rel_path,
        language,
        len(raw),
        job.mtime_ns,
        digest,
        textfile.line_count(source),
        extraction.status,
        "; ".join(note for note in (replaced, extraction.note) if note) or None,
        symbols,
        references,
        texts,
        chunks,
    )


_SIGNATURE = store.SYMBOL_FIELDS.index("signature")
_DOC = store.SYMBOL_FIELDS.index("doc")


def _could_hold_key(symbols: list[tuple[Any, ...]]) -> bool:
    """Whether any symbol's signature or doc may need redacting when no literal of its file
    was (`hidden` empty): one search over them all, where one per row cost a C file ~1 µs a
    symbol (the kernel sample: 439,000 symbols, ~0.4 s)."""
    signatures = "\n".join([row[_SIGNATURE] for row in symbols])
    docs = "\n".join([row[_DOC] for row in symbols if row[_DOC]])
    return secrets.could_hold_key(signatures) or secrets.could_hold_key(docs)


def _redacted_symbol(row: tuple[Any, ...], hidden: set[str]) -> tuple[Any, ...]:
    """A symbol row whose signature and doc cannot show what the file's text rows hide."""
    signature, doc = row[_SIGNATURE], row[_DOC]
    clean = (secrets.redact_header(signature, hidden), doc and secrets.redact(doc))
    if clean == (signature, doc):
        return row
    fields = list(row)
    fields[_SIGNATURE], fields[_DOC] = clean
    return tuple(fields)


def _text_rows(
    texts: list[TextElement], source: bytes, redact: bool, hidden: set[str] | None = None
) -> list[tuple[str, str, int, int, str | None, str]]:
    """Text elements as rows, credentials redacted unless turned off; `hidden` collects the
    original contents that redaction changed."""
    lines: list[str] | None = None
    cursors: dict[int, int] = {}
    rows = []
    # Without a key format in any of them, only a literal assigned to a secret's name can
    # change: one search for the file, not one per element.
    keys = redact and secrets.could_hold_key("\n".join([t.content for t in texts]))
    for t in texts:
        content = t.content
        if redact:
            line_text = None
            if t.element_type == "string_literal" and secrets.could_be_assigned_secret(content):
                if lines is None:
                    lines = source.decode("utf-8", "replace").split("\n")
                line_text = _line_before(lines, t.line, content, cursors)
            if keys or line_text is not None:
                content = secrets.redact(content, line_text)
            if hidden is not None and content != t.content:
                hidden.add(t.content)
        rows.append((t.element_type, content, t.line, t.end_line, t.symbol_name, subwords(content)))
    return rows


LONG_LINE = 1000  # characters; a longer line (minified, generated) is searched with a cursor


def _line_before(lines: list[str], line: int, content: str, cursors: dict[int, int]) -> str | None:
    """The source line a literal starts on, for redact(); on a long line only what leads to it.

    A generated line can hold thousands of literals: finding each in the whole line made a 2 MB
    file take minutes, so a long line is searched on from the previous literal found on it.
    """
    if line > len(lines):
        return None
    text = lines[line - 1]
    if len(text) <= LONG_LINE:
        return text
    key = content[:40]
    at = text.find(key, cursors.get(line, 0))
    if at < 0:
        return None
    cursors[line] = at + len(key)
    return text[max(0, at - 200) : at + len(key)]
