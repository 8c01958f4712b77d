"""Hostile files in the repository: each is indexed or skipped with a stated reason, and none
crashes, hangs or stops the good files beside it from being indexed whole."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli

from repomap import config
from repomap.index import pipeline as indexer
from repomap.store import ELEMENT_TYPE_CODES

GOOD = {
    "good.py": "def good():\n    'the good docstring'\n    return 'good value'\n",
    "good.rs": '/// the good doc\nfn good_rs() -> &\'static str { "good rust" }\n',
    "good.cpp": '// the good comment\nconst char* good_cpp() { return "good cpp"; }\n',
}
DEEP = 5000
LIMIT = config.DEFAULT_MAX_FILE_SIZE
ELEMENT_TYPES = {code: name for name, code in ELEMENT_TYPE_CODES.items()}


def _run(root: Path, **options) -> indexer.Summary:
    return indexer.run(config.resolve(root, workers=options.pop("workers", 1), **options))


def _reasons(summary: indexer.Summary) -> dict[str, str]:
    return dict(summary.skipped)


def _db(root: Path) -> Path:
    return root / ".repomap" / "index.db"


def _file_rows(db: Path, rel_path: str) -> dict:
    """What the index holds for one file: its row, symbol names, and text elements."""
    with closing(sqlite3.connect(db)) as conn:
        row = conn.execute(
            "SELECT id, status, note, line_count FROM files WHERE path = ?", (rel_path,)
        ).fetchone()
        if row is None:
            return {}
        file_id = row[0]
        symbols = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM symbols WHERE file_id = ? ORDER BY start_line, id", (file_id,)
            )
        ]
        texts = [
            (ELEMENT_TYPES[r[0]], r[1], r[2])
            for r in conn.execute(
                "SELECT element_type, content, line_number FROM code_text WHERE file_id = ? "
                "ORDER BY id",
                (file_id,),
            )
        ]
    return {"status": row[1], "note": row[2], "lines": row[3], "symbols": symbols, "texts": texts}


def _good_files_are_whole(root: Path) -> None:
    db = _db(root)
    assert _file_rows(db, "good.py") == {
        "status": "ok",
        "note": None,
        "lines": 3,
        "symbols": ["good"],
        "texts": [("docstring", "the good docstring", 2), ("string_literal", "good value", 3)],
    }
    for rel_path in ("good.rs", "good.cpp"):
        rows = _file_rows(db, rel_path)
        assert (rows["status"], rows["note"], rows["lines"]) == ("ok", None, 2), rel_path
        assert rows["symbols"] == [rel_path.replace(".", "_").replace("good_py", "good")]
        assert len(rows["texts"]) == 2, rel_path


# --- bytes that are not source ---------------------------------------------------------------


def test_a_binary_file_named_x_py_is_skipped_as_binary_beside_indexed_good_files(make_repo):
    root = make_repo({**GOOD, "x.py": b"\x7fELF\x02\x01\x01\x00" + os.urandom(4096)})
    summary = _run(root)
    assert _reasons(summary) == {"x.py": "binary (NUL bytes)"}
    assert _file_rows(_db(root), "x.py") == {}
    _good_files_are_whole(root)


@pytest.mark.parametrize("offset", [0, 100, 8191, 8192, 100_000])
def test_a_nul_byte_anywhere_in_source_skips_the_file_as_binary(make_repo, offset):
    body = b"def f():\n    return 1\n" * (offset // 22 + 1)
    root = make_repo({"nul.py": body[:offset] + b"\0" + body[offset:], **GOOD})
    summary = _run(root)
    assert _reasons(summary) == {"nul.py": "binary (NUL bytes)"}
    _good_files_are_whole(root)


@pytest.mark.parametrize("name", ["bad.py", "bad.rs"])
def test_invalid_utf8_is_skipped_with_the_offset_of_the_bad_byte(make_repo, name):
    root = make_repo({name: b"x = 'caf\xe9'\n", **GOOD})
    summary = _run(root)
    assert _reasons(summary) == {name: "not UTF-8 (invalid byte at offset 8)"}
    _good_files_are_whole(root)


@pytest.mark.parametrize("name", ["latin.c", "latin.h", "latin.cpp"])
def test_a_c_or_cpp_file_with_a_latin1_byte_is_indexed_with_a_note(make_repo, name):
    """C and C++ compilers take any byte in a comment: the file is read with U+FFFD for the
    byte (as `repomap show` shows it), its code whole, and the files row says so."""
    body = b"/* Fran\xe7ois wrote this */\nint parse_header(int n) { return n; }\n"
    root = make_repo({name: body, **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    rows = _file_rows(_db(root), name)
    assert rows["symbols"] == ["parse_header"] and rows["lines"] == 2
    assert rows["note"] == "not UTF-8 (invalid byte at offset 7): read with U+FFFD for it"
    assert rows["texts"] == [("comment", "Fran\ufffdois wrote this", 1)]
    _good_files_are_whole(root)


@pytest.mark.parametrize(
    "encoded",
    [
        "def wide():\n    'caf\u00e9 docstring'\n".encode("utf-16"),  # BOM + native order
        b"\xfe\xff" + "def wide():\n    'caf\u00e9 docstring'\n".encode("utf-16-be"),
        b"\xff\xfe" + "def wide():\n    'caf\u00e9 docstring'\n".encode("utf-16-le"),
    ],
    ids=["native", "big-endian", "little-endian"],
)
def test_utf16_with_a_bom_is_indexed_after_decoding(make_repo, encoded):
    root = make_repo({"wide.py": encoded})
    summary = _run(root)
    assert summary.skipped == []
    rows = _file_rows(_db(root), "wide.py")
    assert rows["status"] == "ok" and rows["lines"] == 2
    assert rows["symbols"] == ["wide"]
    assert rows["texts"] == [("docstring", "caf\u00e9 docstring", 2)]


def test_utf16_that_does_not_decode_is_skipped_as_bad_utf16(make_repo):
    root = make_repo({"odd.py": b"\xff\xfe" + b"a\x00" * 5 + b"\x00\xd8", **GOOD})  # lone surrogate
    summary = _run(root)
    assert _reasons(summary) == {"odd.py": "binary (bad UTF-16)"}
    _good_files_are_whole(root)


# --- size -------------------------------------------------------------------------------------


def _one_line_of_literals(size: int) -> bytes:
    """One line of ~`size` bytes holding many string literals: generated data as it is found."""
    items = ", ".join(f'"abcdefgh{i:08d}"' for i in range(size // 20))
    return f"DATA = [{items}]\n".encode()


def test_a_5mb_single_line_file_is_skipped_by_the_default_size_limit(make_repo):
    root = make_repo({"big.py": _one_line_of_literals(5_000_000), **GOOD})
    summary = _run(root)
    assert _reasons(summary) == {"big.py": f"larger than the limit ({LIMIT} bytes)"}
    _good_files_are_whole(root)


@pytest.mark.parametrize(
    "name, body",
    [
        pytest.param("literals.py", _one_line_of_literals(5_000_000), marks=pytest.mark.slow),
        ("string.py", b'S = "' + b"a" * 5_000_000 + b'"\n'),
        pytest.param("comment.rs", b"// " + b"ab " * 1_700_000 + b"\n", marks=pytest.mark.slow),
        pytest.param(
            "string.cpp", b'const char* s = "' + b"xY" * 2_500_000 + b'";\n', marks=pytest.mark.slow
        ),
    ],
    ids=["python-literals", "python-string", "rust-comment", "cpp-string"],
)
def test_a_5mb_single_line_file_is_indexed_in_bounded_time_with_a_raised_limit(
    make_repo, tmp_path, name, body
):
    """These took minutes to hours (quadratic regexes) before; a minute is a generous bound."""
    root = make_repo({name: body})
    started = time.monotonic()
    result = run_cli("index", root, "--json", "--max-file-size", "6000000", timeout=180)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 90
    summary = json.loads(result.stdout)["results"][0]
    assert summary["skipped_files"] == [] and summary["files"] == 1
    rows = _file_rows(_db(root), name)
    assert rows["lines"] == 1 and rows["texts"]


# --- parsers pushed to their limits -----------------------------------------------------------

PYTHON_DEEP = {
    "parens": ("x = " + "(" * DEEP + "1" + ")" * DEEP, "SyntaxError: too many nested parentheses"),
    "unary": ("x = " + "-" * DEEP + "1", "RecursionError"),
    "attributes": ("x = a" + ".b" * DEEP, "RecursionError"),
    "calls": ("x = f" + "()" * DEEP, "RecursionError"),
    "conditionals": ("x = " + "1 if c else " * DEEP + "2", "RecursionError"),
    "additions": ("x = 1" + " + 1" * 100_000, "RecursionError"),
    "lambdas": ("f = " + "lambda: " * DEEP + "1", "MemoryError"),
    "indentation": (
        "".join(" " * i + f"def f{i}():\n" for i in range(150)) + " " * 150 + "pass",
        "IndentationError: too many levels of indentation",
    ),
}


@pytest.mark.parametrize("case", PYTHON_DEEP, ids=list(PYTHON_DEEP))
def test_python_nested_5000_deep_falls_back_to_tree_sitter_without_crashing(make_repo, case):
    source, note = PYTHON_DEEP[case]
    root = make_repo({"deep.py": source + "\n\ndef after():\n    'still found'\n", **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    assert summary.fallback == [("deep.py", summary.fallback[0][1])]
    assert summary.fallback[0][1].startswith(note)
    rows = _file_rows(_db(root), "deep.py")
    assert rows["status"] == "fallback"
    assert rows["symbols"][-1] == "after"
    assert rows["texts"][-1] == ("docstring", "still found", rows["lines"])
    _good_files_are_whole(root)


NATIVE_DEEP = {
    "rust-parens": ("deep.rs", "fn a() { let x = " + "(" * DEEP + "1" + ")" * DEEP + "; }"),
    "rust-blocks": ("deep.rs", "fn a() " + "{" * DEEP + "}" * DEEP),
    "rust-generics": ("deep.rs", "type T = " + "Vec<" * DEEP + "u8" + ">" * DEEP + ";"),
    "cpp-parens": ("deep.cpp", "int a() { return " + "(" * DEEP + "1" + ")" * DEEP + "; }"),
    "cpp-templates": ("deep.cpp", "using T = " + "std::vector<" * DEEP + "int" + ">" * DEEP + ";"),
    "cpp-ifdefs": ("deep.cpp", "#if A\n" * DEEP + "int f();\n" + "#endif\n" * DEEP),
}


@pytest.mark.parametrize("case", NATIVE_DEEP, ids=list(NATIVE_DEEP))
def test_rust_and_cpp_nested_5000_deep_are_indexed_with_the_definitions_after(make_repo, case):
    name, source = NATIVE_DEEP[case]
    after = "fn after() {}" if name.endswith(".rs") else "int after() { return 0; }"
    root = make_repo({name: source + "\n" + after + "\n", **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    rows = _file_rows(_db(root), name)
    assert rows["symbols"][-1] == "after"
    _good_files_are_whole(root)


def test_python_2_syntax_is_indexed_by_the_fallback_parser(make_repo):
    source = (
        "import sys\n"
        "def greet(name):\n"
        "    print 'hello', name\n"
        "    print >>sys.stderr, `name`\n"
        "    try:\n"
        "        exec 'x = 1'\n"
        "    except ValueError, error:\n"
        "        pass\n"
        "class Old:\n"
        "    def method(self):\n"
        "        return ur'raw unicode'\n"
    )
    root = make_repo({"legacy.py": source})
    summary = _run(root)
    assert summary.skipped == []
    assert [path for path, _ in summary.fallback] == ["legacy.py"]
    rows = _file_rows(_db(root), "legacy.py")
    assert rows["status"] == "fallback"
    assert rows["symbols"] == ["greet", "Old", "method"]
    assert [t[1] for t in rows["texts"]] == ["hello", "x = 1", "raw unicode"]
    # the summary names the file and why, not a count alone (a search user had to ask --json)
    root.joinpath("legacy.py").write_text(source + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "repomap.cli", "index", str(root)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "  read with a fallback parser: 1 files\n    legacy.py: " in done.stdout, done.stdout


@pytest.mark.parametrize("name", ["empty.py", "empty.rs", "empty.cpp", "empty.h"])
def test_an_empty_file_is_indexed_with_no_rows(make_repo, name):
    root = make_repo({name: b"", **GOOD})
    summary = _run(root)
    assert summary.skipped == [] and summary.fallback == []
    assert _file_rows(_db(root), name) == {
        "status": "ok",
        "note": None,
        "lines": 0,
        "symbols": [],
        "texts": [],
    }
    _good_files_are_whole(root)


UNTERMINATED = {
    "python-string": ("u.py", "def before():\n    pass\ns = 'never closed\nt = 1\n"),
    "python-triple": ("u.py", "def before():\n    pass\ns = '''never closed\n# and on\n"),
    "rust-string": ("u.rs", 'fn before() {}\nfn a() { let s = "never closed; }\n'),
    "rust-comment": ("u.rs", "fn before() {}\n/* never closed\nfn hidden() {}\n"),
    "rust-raw": ("u.rs", 'fn before() {}\nconst R: &str = r#"never closed\n'),
    "cpp-string": ("u.cpp", 'int before() { return 0; }\nconst char* s = "never closed;\n'),
    "cpp-comment": ("u.cpp", "int before() { return 0; }\n/* never closed\nint hidden();\n"),
    "cpp-raw": ("u.cpp", 'int before() { return 0; }\nauto r = R"x(never closed\n'),
}


@pytest.mark.parametrize("case", UNTERMINATED, ids=list(UNTERMINATED))
def test_unterminated_strings_and_comments_keep_the_definitions_before_them(make_repo, case):
    name, source = UNTERMINATED[case]
    root = make_repo({name: source, **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    rows = _file_rows(_db(root), name)
    assert rows["symbols"][0] == "before"
    assert "hidden" not in rows["symbols"]  # inside the open comment: not code
    assert rows["status"] == ("fallback" if name.endswith(".py") else "ok")
    assert name.endswith(".py") or rows["note"] == "syntax errors"
    _good_files_are_whole(root)


UNBALANCED = {
    "python-close": ("b.py", ")))\ndef after():\n    pass\n"),
    "rust-open": ("b.rs", "fn a() {{{{ }\nfn after() {}\n"),
    "rust-close": ("b.rs", "}}}}\nfn after() {}\n"),
    "cpp-close": ("b.cpp", "}}}}\nint after() { return 0; }\n"),
}


@pytest.mark.parametrize("case", UNBALANCED, ids=list(UNBALANCED))
def test_unbalanced_braces_are_indexed_and_later_definitions_found(make_repo, case):
    name, source = UNBALANCED[case]
    root = make_repo({name: source, **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    assert _file_rows(_db(root), name)["symbols"][-1] == "after"
    _good_files_are_whole(root)


def test_an_unclosed_cpp_class_is_indexed_without_crashing(make_repo):
    root = make_repo({"b.cpp": "class A { void f() {{{{ };\nint g() {}\n", **GOOD})
    summary = _run(root)
    assert summary.skipped == []
    assert _file_rows(_db(root), "b.cpp")["note"] == "syntax errors"
    _good_files_are_whole(root)


# --- the file system --------------------------------------------------------------------------


def test_symlink_loops_are_named_in_the_summary_and_the_walk_ends(make_repo):
    root = make_repo(GOOD)
    os.symlink("self.py", root / "self.py")
    os.symlink("pong.py", root / "ping.py")
    os.symlink("ping.py", root / "pong.py")
    (root / "sub").mkdir()
    (root / "sub" / "inner.py").write_text("def inner():\n    pass\n")
    os.symlink("..", root / "sub" / "up")  # a directory link back up: walked once
    summary = _run(root)
    assert _reasons(summary) == {
        "ping.py": "symlink loop",
        "pong.py": "symlink loop",
        "self.py": "symlink loop",
    }
    assert _file_rows(_db(root), "sub/inner.py")["symbols"] == ["inner"]
    with closing(sqlite3.connect(_db(root))) as conn:
        paths = [row[0] for row in conn.execute("SELECT path FROM files ORDER BY path")]
    assert paths == ["good.cpp", "good.py", "good.rs", "sub/inner.py"]
    _good_files_are_whole(root)


def test_a_dangling_symlink_is_named_in_the_summary(make_repo):
    root = make_repo(GOOD)
    os.symlink("missing.py", root / "dangling.py")
    summary = _run(root)
    assert _reasons(summary) == {"dangling.py": "broken symlink (No such file or directory)"}
    _good_files_are_whole(root)


def test_symlinks_leading_outside_the_root_are_skipped_and_never_read(make_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("def leaked():\n    'outside the root'\n")
    root = make_repo(GOOD)
    os.symlink(outside / "leak.py", root / "leak.py")
    os.symlink(outside, root / "elsewhere")
    os.symlink("/etc/passwd", root / "passwd.py")
    summary = _run(root)
    assert _reasons(summary) == {
        "elsewhere": "symlink leads outside the root",
        "leak.py": "symlink leads outside the root",
        "passwd.py": "symlink leads outside the root",
    }
    with closing(sqlite3.connect(_db(root))) as conn:
        assert conn.execute("SELECT count(*) FROM symbols WHERE name = 'leaked'").fetchone() == (0,)
    _good_files_are_whole(root)


def test_a_fifo_named_like_source_is_skipped_without_blocking(make_repo):
    root = make_repo(GOOD)
    os.mkfifo(root / "pipe.py")
    result = run_cli("index", root, "--json", timeout=60)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["results"][0]
    assert summary["skipped_files"] == [{"path": "pipe.py", "reason": "not a regular file"}]
    _good_files_are_whole(root)


DROP_READ_CAPABILITIES = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


def _cli_without_read_override(*args) -> subprocess.CompletedProcess:
    """The CLI as a process that file permissions apply to, even when the tests run as root."""
    prefix = DROP_READ_CAPABILITIES if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-m", "repomap.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def permissions_apply():
    if os.geteuid() == 0:
        probe = subprocess.run([*DROP_READ_CAPABILITIES, "true"], capture_output=True)
        if probe.returncode != 0:
            pytest.skip("running as root and setpriv cannot drop CAP_DAC_OVERRIDE here")


def test_files_and_directories_without_read_permission_are_named_in_the_summary(
    make_repo, permissions_apply
):
    root = make_repo(
        {**GOOD, "secret_sauce.py": "def sauce():\n    pass\n", "closed/inner.py": "X = 1\n"}
    )
    (root / "secret_sauce.py").chmod(0)
    (root / "closed").chmod(0)
    try:
        result = _cli_without_read_override("index", root, "--json")
    finally:
        (root / "closed").chmod(0o755)
    assert result.returncode == 0, result.stderr
    skipped = {
        s["path"]: s["reason"] for s in json.loads(result.stdout)["results"][0]["skipped_files"]
    }
    assert skipped == {
        "closed": "unreadable directory (Permission denied)",
        "secret_sauce.py": "unreadable (Permission denied)",
    }
    _good_files_are_whole(root)


def _walk_then(change):
    """discover.walk as index.py calls it, then `change` applied to the tree before reading."""
    real_walk = indexer.walk

    def walk(root, **options):
        walked = real_walk(root, **options)
        change(root)
        return walked

    return walk


def test_a_file_that_disappears_after_discovery_is_skipped_and_its_old_rows_dropped(
    make_repo, monkeypatch
):
    root = make_repo({**GOOD, "gone.py": "def gone():\n    pass\n"})
    _run(root)
    (root / "gone.py").write_text("def gone():\n    pass\n\ndef more():\n    pass\n")
    monkeypatch.setattr(indexer, "walk", _walk_then(lambda r: (r / "gone.py").unlink()))
    summary = _run(root)
    assert _reasons(summary) == {"gone.py": "unreadable (No such file or directory)"}
    assert _file_rows(_db(root), "gone.py") == {}
    _good_files_are_whole(root)


def test_a_file_that_changes_after_discovery_is_indexed_as_read_and_settles_next_run(
    make_repo, monkeypatch
):
    root = make_repo({**GOOD, "moving.py": "def first():\n    pass\n"})
    _run(root)
    (root / "moving.py").write_text("def second():\n    pass\n")

    def rewrite(r: Path) -> None:
        (r / "moving.py").write_text("def third():\n    pass\n")
        os.utime(r / "moving.py", ns=(1, 1))  # a different stat than the walk saw

    monkeypatch.setattr(indexer, "walk", _walk_then(rewrite))
    summary = _run(root)
    assert summary.skipped == [] and summary.modified == 1
    assert _file_rows(_db(root), "moving.py")["symbols"] == ["third"]
    monkeypatch.undo()
    again = _run(root)  # the stat differs from the walk's: read once more, bytes unchanged
    assert (again.modified, again.unchanged) == (0, 4)
    assert _file_rows(_db(root), "moving.py")["symbols"] == ["third"]


def test_a_file_replaced_by_a_fifo_after_discovery_is_skipped_without_blocking(
    make_repo, monkeypatch
):
    root = make_repo({**GOOD, "turns.py": "def turns():\n    pass\n"})

    def to_fifo(r: Path) -> None:
        (r / "turns.py").unlink()
        os.mkfifo(r / "turns.py")

    monkeypatch.setattr(indexer, "walk", _walk_then(to_fifo))
    summary = _run(root)
    assert _reasons(summary) == {"turns.py": "not a regular file"}
    _good_files_are_whole(root)


def test_a_file_swapped_for_a_link_outside_after_discovery_is_not_read(
    make_repo, monkeypatch, tmp_path
):
    (tmp_path / "private.py").write_text("def private():\n    'not yours'\n")
    root = make_repo({**GOOD, "swap.py": "def swap():\n    pass\n"})

    def to_link(r: Path) -> None:
        (r / "swap.py").unlink()
        os.symlink(tmp_path / "private.py", r / "swap.py")

    monkeypatch.setattr(indexer, "walk", _walk_then(to_link))
    summary = _run(root)
    assert _reasons(summary) == {"swap.py": "symlink leads outside the root"}
    assert _file_rows(_db(root), "swap.py") == {}
    _good_files_are_whole(root)


def test_a_file_that_grows_past_the_limit_after_discovery_is_skipped(make_repo, monkeypatch):
    root = make_repo({**GOOD, "grows.py": "X = 1\n"})
    monkeypatch.setattr(
        indexer, "walk", _walk_then(lambda r: (r / "grows.py").write_text("X = 1\n" * 1000))
    )
    summary = _run(root, max_file_size=1000)
    assert _reasons(summary) == {"grows.py": "larger than the limit (1000 bytes)"}
    _good_files_are_whole(root)


def test_paths_with_spaces_and_newlines_are_indexed_under_their_exact_names(make_repo):
    root = make_repo(
        {
            "with space/a file.py": "def spaced():\n    pass\n",
            "new\nline.rs": "fn newline() {}\n",
            "tab\there.cpp": "int tabbed() { return 0; }\n",
        }
    )
    result = run_cli("index", root, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["files"] == 3
    db = _db(root)
    assert _file_rows(db, "with space/a file.py")["symbols"] == ["spaced"]
    assert _file_rows(db, "new\nline.rs")["symbols"] == ["newline"]
    assert _file_rows(db, "tab\there.cpp")["symbols"] == ["tabbed"]
    human = run_cli("index", root)  # the human summary prints such names without failing
    assert human.returncode == 0 and "Traceback" not in human.stderr


def test_a_file_name_that_is_not_utf8_is_skipped_and_named_escaped(make_repo):
    root = make_repo(GOOD)
    name = os.fsencode(root) + b"/caf\xe9.py"
    with open(name, "wb") as file:
        file.write(b"def latin_name():\n    pass\n")
    result = run_cli("index", root, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["results"][0]
    assert summary["skipped_files"] == [
        {"path": "caf\\udce9.py", "reason": "file name is not valid UTF-8"}
    ]
    _good_files_are_whole(root)
    listed = run_cli("sources", "--root", root, "--format", "json")
    assert listed.returncode == 0 and "caf" not in listed.stdout


# --- all of it at once ------------------------------------------------------------------------


def _hostile_tree(root: Path) -> dict[str, str]:
    """Every hostile input beside each other; returns the reasons the summary must give."""
    (root / "x.py").write_bytes(b"\0" + os.urandom(2048))
    (root / "nul_late.py").write_bytes(b"A = 1\n" * 2000 + b"\0\n")
    (root / "latin.rs").write_bytes(b"// caf\xe9\n")
    (root / "wide.py").write_bytes("def wide():\n    pass\n".encode("utf-16"))
    (root / "big.py").write_bytes(b"S = '" + b"a" * (LIMIT + 10) + b"'\n")
    (root / "deep.py").write_text("x = " + "-" * DEEP + "1\ndef after_deep():\n    pass\n")
    (root / "py2.py").write_text("def old():\n    print 'hi'\n")
    (root / "empty.rs").write_text("")
    (root / "open.cpp").write_text("int open_before();\n/* never closed\n")
    os.symlink("loop.py", root / "loop.py")
    os.symlink("/etc/hostname", root / "outside.py")
    os.mkfifo(root / "fifo.py")
    with open(os.fsencode(root) + b"/bad\xffname.py", "wb") as file:
        file.write(b"X = 1\n")
    (root / "a dir with spaces").mkdir()
    (root / "a dir with spaces" / "ok file.py").write_text("def ok_file():\n    pass\n")
    return {
        "x.py": "binary (NUL bytes)",
        "nul_late.py": "binary (NUL bytes)",
        "latin.rs": "not UTF-8 (invalid byte at offset 6)",
        "big.py": f"larger than the limit ({LIMIT} bytes)",
        "loop.py": "symlink loop",
        "outside.py": "symlink leads outside the root",
        "fifo.py": "not a regular file",
        "bad\\udcffname.py": "file name is not valid UTF-8",
    }


def _rows_of(db: Path, paths: list[str]) -> dict:
    return {path: _file_rows(db, path) for path in paths}


def test_a_repository_of_hostile_files_indexes_every_good_file_whole(make_repo, tmp_path):
    """With workers: 20 good files beside the hostile ones, each indexed exactly as alone."""
    good = {
        f"pkg/mod{i}.py": f"def func{i}():\n    'doc {i}'\n    return 'v{i}'\n" for i in range(20)
    }
    good.update(GOOD)
    clean = make_repo(good, root=tmp_path / "clean")
    assert run_cli("index", clean, "--workers", "2").returncode == 0
    root = make_repo(good, root=tmp_path / "hostile")
    expected_skips = _hostile_tree(root)
    result = run_cli("index", root, "--json", "--workers", "2", timeout=120)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["results"][0]
    assert {s["path"]: s["reason"] for s in summary["skipped_files"]} == expected_skips
    assert summary["skipped_by_reason"] == {
        "binary": 2,
        "not UTF-8": 1,
        "larger than the limit": 1,
        "symlink loop": 1,
        "symlink leads outside the root": 1,
        "not a regular file": 1,
        "file name is not valid UTF-8": 1,
    }
    assert {f["path"] for f in summary["fallback_files"]} == {"deep.py", "py2.py"}
    assert _rows_of(_db(root), sorted(good)) == _rows_of(_db(clean), sorted(good))
    assert _file_rows(_db(root), "wide.py")["symbols"] == ["wide"]
    assert _file_rows(_db(root), "deep.py")["symbols"] == ["x", "after_deep"]
    assert _file_rows(_db(root), "a dir with spaces/ok file.py")["symbols"] == ["ok_file"]
    human = run_cli("index", root, "--force")
    assert human.returncode == 0 and "Traceback" not in human.stderr
    for reason in ("symlink loop", "not a regular file", "binary"):
        assert reason in human.stdout + human.stderr


def test_rust_files_swapped_after_discovery_are_looked_at_without_blocking_or_leaking(
    make_repo, monkeypatch, tmp_path
):
    """The indexer looks at every Rust file for a `#[path]` before the workers read it
    (index/rust_paths.py): a FIFO put in place of one does not block that look, and a link
    swapped in that leads outside the root gives nothing of the file it leads to."""
    (tmp_path / "private.rs").write_text('#[path = "secret_impl.rs"]\nmod secret;\n')
    root = make_repo(
        {
            **GOOD,
            "src/lib.rs": "mod fifo;\nmod swap;\n",
            "src/fifo.rs": "pub fn fifo() {}\n",
            "src/swap.rs": "pub fn swap() {}\n",
            "src/secret_impl.rs": "pub fn hidden() {}\n",
        }
    )

    def swap(r: Path) -> None:
        (r / "src/fifo.rs").unlink()
        os.mkfifo(r / "src/fifo.rs")
        (r / "src/swap.rs").unlink()
        os.symlink(tmp_path / "private.rs", r / "src/swap.rs")

    monkeypatch.setattr(indexer, "walk", _walk_then(swap))
    summary = _run(root)
    assert _reasons(summary) == {
        "src/fifo.rs": "not a regular file",
        "src/swap.rs": "symlink leads outside the root",
    }
    with sqlite3.connect(_db(root)) as db:
        (kept,) = db.execute("SELECT value FROM meta WHERE key = 'rust_modules'").fetchone()
        hidden = db.execute(
            "SELECT s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE f.path = 'src/secret_impl.rs'"
        ).fetchall()
    assert "secret" not in kept and hidden == [("secret_impl::hidden",)]
    _good_files_are_whole(root)
