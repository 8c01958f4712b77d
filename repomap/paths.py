"""The one path-filter dialect: what `--path`, `--file`, `--focus`, `--pattern`, `outline PATH`
and every MCP tool's `path` mean, everywhere.

A filter is one of:

- a **glob**, when it holds `*`, `?` or `[`: a gitignore-style pattern (pathspec's
  `GitIgnoreSpec`). Without a `/` before its end it matches at any depth (`*.rs`, `tests/`);
  with one it is anchored at the root (`django/db/*.py`); `**` crosses folders
  (`**/tests/**`); a trailing `/` means a folder and everything under it.
- a **path**, otherwise: a file or a folder named from the root (`django/db/models.py`,
  `django/db/`, `src`). When nothing lies there, it is a **tail** at a segment boundary
  (`default.py` matches `.../backends/default.py`; `_transports/` matches every file under
  any `_transports` folder; `db/models.py` matches `django/db/models.py`). A trailing `/`
  keeps folders only; a leading `/` never falls back to tails.

A leading `!` turns any of them into its opposite: every path but those it names (`!tests/`,
`!*_test.go`), as `!` reads in a .gitignore (there, a file taken back).

Paths are '/'-separated and relative to the root: `\\` is read as `/`, `./` is dropped, and an
absolute path inside the root is made relative. Matching is case-sensitive, as git's is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

GLOB_CHARS = "*?["


def is_glob(text: str) -> bool:
    return any(char in text for char in GLOB_CHARS)


class PathFilter:
    """One parsed filter; `select(rel_paths)` is the whole meaning. (A plain class: `dataclasses`
    imports `inspect`, ~4 ms of every CLI search.)"""

    __slots__ = ("text", "glob", "anchored", "folder_only", "_name", "_compiled")

    def __init__(self, text: str, glob: bool, anchored: bool, folder_only: bool) -> None:
        self.text = text  # normalized: '/'-separated, relative; a glob kept as given
        self.glob = glob
        self.anchored = anchored  # a path given from the root (leading `/`): no tails
        self.folder_only = folder_only  # a path given with a trailing `/`
        self._name = text.strip("/")
        self._compiled: pathspec.GitIgnoreSpec | None = None

    @property
    def _spec(self) -> pathspec.GitIgnoreSpec:
        if self._compiled is None:
            import re

            import pathspec  # ~10 ms: only a glob needs it

            from repomap.errors import BadArgument

            try:
                self._compiled = pathspec.GitIgnoreSpec.from_lines([self.text])
            except (ValueError, re.error) as error:  # `[0-.]`: a range backwards
                raise BadArgument(f"bad path filter {self.text!r}: {error}") from None
        return self._compiled

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathFilter) and (
            self.text,
            self.glob,
            self.anchored,
            self.folder_only,
        ) == (other.text, other.glob, other.anchored, other.folder_only)

    def __hash__(self) -> int:
        return hash((self.text, self.glob, self.anchored, self.folder_only))

    def __repr__(self) -> str:
        return f"PathFilter({self.text!r}, glob={self.glob}, anchored={self.anchored})"

    def from_root(self, rel_path: str) -> bool:
        """Whether `rel_path` is the file or lies in the folder this path names from the root
        (for a glob: whether the glob matches it)."""
        if self.glob:
            return self._spec.match_file(rel_path)
        name = self._name
        return rel_path.startswith(name + "/") or (rel_path == name and not self.folder_only)

    @property
    def tails(self) -> bool:
        """Whether this filter can match as a tail (when nothing lies at it from the root)."""
        return not (self.glob or self.anchored)

    def as_tail(self, rel_path: str) -> bool:
        """Whether `rel_path` ends with this path at a segment boundary, or lies in a folder
        whose path ends with it."""
        if not self.tails:
            return False
        name = self._name
        if f"/{name}/" in rel_path:
            return True
        return not self.folder_only and rel_path.endswith("/" + name)

    def select(self, rel_paths: Iterable[str]) -> list[str]:
        """The paths this filter keeps, in the order given: those named from the root, or, when
        there are none, those it matches as a tail."""
        candidates = list(rel_paths)
        if self.glob and "[" in self.text:
            # A file whose name holds `[` (`we ird[1].py`, Next.js's `[slug].tsx`): named as
            # written, the file itself; a glob only when no path is that (outline said nothing).
            literal = parse_literal(self.text).select(candidates)
            if literal:
                return literal
        rooted = [rel_path for rel_path in candidates if self.from_root(rel_path)]
        if rooted or not self.tails:
            return rooted
        return [rel_path for rel_path in candidates if self.as_tail(rel_path)]

    @property
    def prefix(self) -> str:
        """A leading part every path named from the root starts with: lets a caller read only
        that range of a sorted table before select() (tails need the whole table)."""
        if self.glob:
            if "/" not in self.text.rstrip("/"):
                return ""
            fixed = self.text[: min(self.text.find(c) for c in GLOB_CHARS if c in self.text)]
            fixed = fixed.lstrip("/")
            return fixed[: fixed.rfind("/") + 1]
        return self._name

    def __str__(self) -> str:
        return self.text


class Excluding(PathFilter):
    """`!FILTER`: every path but those FILTER keeps. A glob for the callers that resolve a
    path filter on disk (none lies at `!tests/`)."""

    __slots__ = ("excluded",)

    def __init__(self, excluded: PathFilter) -> None:
        super().__init__("!" + excluded.text, glob=True, anchored=False, folder_only=False)
        self.excluded = excluded

    def select(self, rel_paths: Iterable[str]) -> list[str]:
        candidates = list(rel_paths)
        dropped = set(self.excluded.select(candidates))
        return [rel_path for rel_path in candidates if rel_path not in dropped]

    @property
    def prefix(self) -> str:
        return ""  # every path may be kept

    @property
    def tails(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Excluding) and self.excluded == other.excluded

    def __hash__(self) -> int:
        return hash(("!", self.excluded))

    def __repr__(self) -> str:
        return f"Excluding({self.excluded!r})"


_EMPTY_SEGMENTS = re.compile(r"(?<=.)/(?:\.?/)+")  # after the first character: `/` anchors


def parse(raw: str | None, root: Path | str | None = None) -> PathFilter | None:
    """The filter `raw` means, or None when it keeps everything (None, "", ".", "/" alone).

    `root`, when given, turns an absolute path inside it into a relative one.
    """
    if raw is None:
        return None
    if raw.strip().startswith("!"):
        excluded = parse(raw.strip()[1:], root)
        if excluded is None:
            from repomap.errors import BadArgument

            raise BadArgument(f"{raw!r} excludes nothing: write a path or glob after the `!`")
        if isinstance(excluded, Excluding):
            return excluded.excluded  # `!!x`: x
        return Excluding(excluded)
    # `src//attr/`, `src/./attr/`: the folder they name (a typed or joined path's doubled slash
    # matched nothing)
    text = _EMPTY_SEGMENTS.sub("/", raw.strip().replace("\\", "/"))
    if root is not None and text.startswith("/") and not is_glob(text):
        base = os.fspath(root).replace("\\", "/").rstrip("/")
        if base and (text + "/").startswith(base + "/"):
            text = "/" + text[len(base) :].lstrip("/") if text != base else ""
    while text.startswith("./"):
        text = text[2:]
    if text in ("", ".", "/"):
        return None
    if ".." in text.split("/"):
        from repomap.errors import OutsideRoot

        raise OutsideRoot(
            f"{raw} is outside the repository root; a path filter is relative to the root"
        )
    if is_glob(text):
        return PathFilter(text, glob=True, anchored=text.startswith("/"), folder_only=False)
    return _as_path(text)


def _as_path(text: str) -> PathFilter | None:
    """`text` (normalized) as a path from the root or a tail, its `*?[` as themselves."""
    anchored = text.startswith("/")
    folder_only = text.endswith("/")
    name = text.strip("/")
    if not name or name == ".":
        return None
    return PathFilter(name + ("/" if folder_only else ""), False, anchored, folder_only)


def parse_literal(text: str) -> PathFilter:
    """A parsed glob's text read as a path, its glob characters as themselves."""
    literal = _as_path(text)
    assert literal is not None  # a glob holds `*`, `?` or `[`: never empty
    return literal


def select(path_filter: PathFilter | None, rel_paths: Iterable[str]) -> list[str]:
    """`path_filter.select(rel_paths)`, or every path when there is no filter."""
    return list(rel_paths) if path_filter is None else path_filter.select(rel_paths)


# --- what a path is for ----------------------------------------------------------------------

TEST_FOLDERS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "testsuite",
        "unittests",
        "bench",
        "benches",
        "benchmarks",
        "example",
        "examples",
        "sample",
        "samples",
        "demo",
        "demos",
    }
)
# A C test harness a project carries in a folder of its own name: libconfig's `tinytest/` (its
# tests' hub: the 4th and 5th files of its map, above `lib/libconfig.c`). Only the harnesses'
# own names: `unity/` or `check/` are as often a project's modules, and googletest's own tree is
# `googletest/` and `googlemock/` (a bundled copy is under third_party/ or external/ anyway).
TEST_HARNESS_FOLDERS = frozenset({"tinytest", "minunit", "munit", "acutest", "cutest", "cmocka"})
# Code in a project's documentation is a tutorial's (libuv's `docs/code/signal/main.c` took four
# of "signal handler"'s first eight places); the documentation itself is no test.
DOC_FOLDERS = frozenset({"doc", "docs"})
_DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc")


# Folders named as tests are besides: libpng's `contrib/libtests/`, the kernel's `selftests/`,
# Go's and others' `testdata/`, `test_utils/`, `testcases/` (a folder ending in `tests`, or
# `test` then `_`, `-`, or one of these words). Not `latest/`, `attest/` or `contest/`.
_TEST_FOLDER = re.compile(r".*tests|test[_-].*|test(?:data|ing|suite|cases?|files|utils?|libs?)")
# Fuzzing harnesses are tests too (lz4's `ossfuzz/`, libpng's `contrib/oss-fuzz/`, libgit2's
# `fuzzers/`, cJSON's `fuzzing/`): they call the API with made-up input and say what it does in
# its own words, above the code. Not LLVM's `FuzzMutate/`, a library.
_FUZZ_FOLDER = re.compile(r"(?:oss-?)?fuzz(?:ing|ers?)?")
# A folder whose name has such a word among others: attrs' `typing-examples/` (6 of a search's
# first ten places), `code_samples/`, `perf-benchmarks/`. Singular `sample` or `demo` is often
# a module's own name (`sample_rate/`), so only the plurals and `example`.
_FOLDER_WORDS = frozenset(
    {"tests", "unittests", "example", "examples", "samples", "demos", "benches", "benchmarks"}
)
_WORD_SEPARATORS = re.compile(r"[-_.]")
# Test files by their name: `x_test.go`, Google's `x_unittest.cc` and `x-test.cc`, snappy's
# `snappy_test_tool.cc`, `x_benchmark.cc` (not `FrustumTest.h`: Imath's frustum test is code).
_TEST_STEM_ENDS: tuple[str, ...] = ("_test", "_tests", "-test", "-tests", "unittest", "unittests")
_TEST_STEM_ENDS += ("_fuzzer", "-fuzzer", "_benchmark", "_benchmarks", "-benchmark", "-benchmarks")
# A test's helper named after it (`snappy_test_tool.cc`, `foo_test_util.h`); not any `_test_` in a
# name (Catch2's `catch_test_spec.cpp` is the framework's code, `is_test_mode.c` a project's).
_TEST_HELPER_STEM = re.compile(r"_test_(?:tools?|utils?|helpers?|main|runner|support|common)\Z")

# Code a project carries but did not write (issue 17: demoted with tests unless asked for).
VENDORED_FOLDERS = frozenset(
    {"third_party", "thirdparty", "third-party", "3rdparty", "vendored", "bundled", "external"}
    | {"_vendor", "_vendored"}
)  # `external` at any depth: cereal's `include/cereal/external/` (rapidxml, base64); Python's
# `_vendor` at any depth: pip's, setuptools' and bleach's (html5lib took 83 of a search user's
# 200 first places on bleach, above bleach's own answer in 8 of 20 questions)
# The same, only as the tree's top folder: deeper, these are often the project's own modules
# (Rust's `core_simd/src/vendor/` holds its intrinsics, not someone else's code; Django's
# `django/contrib/` its admin and auth, toolz's `toolz/sandbox/` a module). At the top, what a
# project carries beside its own code: libpng's and zlib's `contrib/` (tools, demos, other
# people's code: 34 of a search user's 200 first places on libpng), cereal's `sandbox/`.
VENDORED_TOP_FOLDERS = frozenset({"vendor", "deps", "extern", "contrib", "sandbox"})


def is_demoted_path(path: str) -> bool:
    """Tests, benchmarks, examples, vendored code and type stubs: `tests/`, `examples/`,
    `samples/`, `demos/`, code (not text) in `docs/`,
    `benches/`, `libtests/`, `testdata/`, `fuzz/`, `oss-fuzz/`, `test_x.py`, `x_test.go`,
    `foo_tests.rs`, `png_read_fuzzer.cc`, `x_unittest.cc`, `x_benchmark.cc`,
    `typing-examples/`, `test.rs`
    (rayon's test modules), `conftest.py`, `third_party/`,
    `fmt/bundled/`, `external/`, a bundled test harness (`tinytest/`), `_vendor/`, `vendor/`, `deps/`, `contrib/`, `sandbox/` at the
    top of the tree, and `.pyi` files
    (a stub repeats the signatures and docstrings of the code that does the work)."""
    parts = path.lower().split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    folders = parts[:-1]
    return (
        any(
            p in TEST_FOLDERS
            or p in VENDORED_FOLDERS
            or p in TEST_HARNESS_FOLDERS
            or _TEST_FOLDER.fullmatch(p) is not None
            or _FUZZ_FOLDER.fullmatch(p) is not None
            or not _FOLDER_WORDS.isdisjoint(_WORD_SEPARATORS.split(p))
            for p in folders
        )
        or bool(folders and folders[0] in VENDORED_TOP_FOLDERS)
        or (not parts[-1].endswith(_DOC_SUFFIXES) and not DOC_FOLDERS.isdisjoint(folders))
        or stem.startswith("test_")
        or stem.endswith(_TEST_STEM_ENDS)
        or _TEST_HELPER_STEM.search(stem) is not None
        or stem in ("test", "tests", "conftest")
        or parts[-1].endswith(".pyi")
    )
