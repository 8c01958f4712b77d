"""What a new user hit running repomap on projects it had never seen (ujson's C, memchr's Rust,
attrs' Python): each defect reproduced on a small real tree through the real CLI."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from conftest import indexed_tree, run_cli, write_tree


def cli(root: Path, *args: str | Path) -> subprocess.CompletedProcess:
    return run_cli(*args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})


# --- C: a calling-convention macro between `*` and the name (ujson's decode.c) -------------

UJSON_STYLE = """\
#define FASTCALL_MSVC
#define FASTCALL_ATTR

static FASTCALL_ATTR PyObject *FASTCALL_MSVC decode_true ( struct DecoderState *ds)
{
  ds->lastType = 1;
  Py_RETURN_TRUE;
}

static PyObject *FASTCALL_MSVC decode_false ( struct DecoderState *ds);

static PyObject *FASTCALL_MSVC decode_null ( struct DecoderState *ds)
{
  return NULL;
}
"""


def test_a_function_whose_pointer_return_type_is_followed_by_a_macro_keeps_its_name(tmp_path):
    """tree-sitter reads `PyObject *FASTCALL_MSVC decode_true (` as a function named
    FASTCALL_MSVC with `decode_true` in an ERROR: ujson's decode_true, decode_false and
    decode_null were all indexed as `FASTCALL_MSVC`."""
    root = indexed_tree(tmp_path / "repo", {"decode.c": UJSON_STYLE})
    done = cli(root, "outline", "decode.c", "--json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)["results"][0]["entries"]
    functions = [(e["name"], e["start_line"], e["end_line"]) for e in entries
                 if e["kind"] == "function"]  # fmt: skip
    assert functions == [
        ("decode_true", 4, 8),
        ("decode_false", 10, 10),
        ("decode_null", 12, 15),
    ]
    shown = cli(root, "show", "decode_null")
    assert shown.returncode == 0, shown.stderr
    assert "return NULL;" in shown.stdout


# --- output piped to a file or another program is never wrapped -----------------------------


def test_the_index_summary_is_not_wrapped_when_piped(tmp_path):
    """Piped, `repomap index` cut each skipped file's line at 80 columns (rich's default width
    off a terminal) and padded the summary's lines with spaces."""
    deep = "src/" + "a_rather_long_folder_name/" * 4 + "big_generated_table_of_values.c"
    write_tree(tmp_path / "repo", {deep: "int x[] = {" + "1," * 400 + "};\n", "ok.c": "int f;\n"})
    done = run_cli("index", tmp_path / "repo", "--max-file-size", "100")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"    {deep}: larger than the limit (100 bytes)" in lines, done.stdout
    assert [line for line in lines if line != line.rstrip()] == []


def test_the_no_files_warning_is_one_line_when_piped(tmp_path):
    write_tree(tmp_path / "repo", {"notes.bin": b"\x00\x01"})
    done = run_cli("index", tmp_path / "repo")
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].endswith(") as records"), done.stdout


# --- doctor: one line per check, even when SQLite's quick check finds many faults ------------


def test_doctor_shows_a_damaged_database_in_a_few_lines(tmp_path):
    root = indexed_tree(tmp_path / "repo", {f"m{i}.py": f"def f{i}():\n    return {i}\n" * 40
                                             for i in range(30)})  # fmt: skip
    db = root / ".repomap" / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 0  # so page 2 is a pointer map
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with db.open("r+b") as file:  # scribble over page 2: SQLite reports each bad entry
        file.seek(page_size + 100)
        file.write(bytes(range(7, 207)))
    done = cli(root, "doctor")
    assert done.returncode == 2, done.stdout
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL  database")]
    assert len(failed) == 1, done.stdout
    assert len(done.stdout.splitlines()) <= 12, done.stdout  # nine checks, a fix, no dump


# --- nothing to show is exit 1 with a line on stderr, as for every other lookup ---------------


def test_map_of_an_index_without_code_finds_nothing(tmp_path):
    root = indexed_tree(tmp_path / "repo", {"README.md": "# Notes\n\nNothing here.\n"})
    done = cli(root, "map")
    assert (done.returncode, done.stdout) == (1, ""), done.stdout
    assert "no code files" in done.stderr
    as_json = cli(root, "map", "--json")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["results"] == []


def test_outline_with_no_matching_file_says_so(tmp_path):
    root = indexed_tree(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    done = cli(root, "outline", "--path", "*.rs")
    assert (done.returncode, done.stdout) == (1, "")
    assert "*.rs" in done.stderr


def test_search_commits_outside_git_says_history_was_not_indexed(tmp_path):
    """Outside a git repository `search-commits` said `no matches for 'fix'`, as if the history
    had been searched; the index knows it was never read."""
    root = indexed_tree(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    done = cli(root, "search-commits", "fix")
    assert (done.returncode, done.stdout) == (1, "")
    assert "not a git repository" in done.stderr


def test_search_kind_takes_the_kinds_its_results_show(tmp_path):
    """`search` answers with kind `commit` and `data` (README), yet `--kind commit` was refused
    as an unknown kind."""
    root = tmp_path / "repo"
    write_tree(root, {"a.py": "def f():\n    pass\n",
                      "settings.json": '{"retry": {"backoff_seconds": 30}}\n'})  # fmt: skip
    git = ["git", "-C", str(root), "-c", "user.name=A", "-c", "user.email=a@example.com"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "Lengthen the retry backoff"], check=True)
    assert run_cli("index", root).returncode == 0
    for kind in ("commit", "data"):
        done = cli(root, "search", "retry backoff", "--mode", "lexical", "--kind", kind, "--json")
        assert done.returncode == 0, done.stderr
        assert {hit["kind"] for hit in json.loads(done.stdout)["results"]} == {kind}


def test_outline_tells_a_types_trait_impls_apart(tmp_path):
    """memchr's iter.rs has `impl Memchr`, `impl Iterator for Memchr` and `impl
    DoubleEndedIterator for Memchr`; the outline listed all three as `impl Memchr`."""
    source = (
        "pub struct Memchr;\n"
        "impl Memchr {\n    pub fn new() -> Memchr { Memchr }\n}\n"
        "impl Iterator for Memchr {\n    type Item = usize;\n"
        "    fn next(&mut self) -> Option<usize> { None }\n}\n"
        "impl std::fmt::Debug for Memchr {\n"
        "    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\n"
    )
    root = indexed_tree(tmp_path / "repo", {"src/iter.rs": source})
    done = cli(root, "outline", "src/iter.rs", "--json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)["results"][0]["entries"]
    impls = [entry["name"] for entry in entries if entry["kind"] == "impl"]
    assert impls == ["Memchr", "Iterator for Memchr", "Debug for Memchr"]
    text = cli(root, "outline", "src/iter.rs").stdout
    assert "  impl Iterator for Memchr  L5-8" in text.splitlines(), text


def test_impls_and_specializations_are_named_with_their_type_arguments(tmp_path):
    """chrono's datetime/mod.rs has twelve `impl From<X> for DateTime<Y>`, yaml-cpp's
    convert.h thirty `template <> struct convert<T>`: outline and search showed each as
    `From for DateTime` and `YAML::convert`, one name for all."""
    rust = (
        "pub struct DateTime<Tz>(Tz);\npub struct Utc;\npub struct Local;\n"
        "impl<Tz: Clone> DateTime<Tz> {\n    pub fn zone(&self) -> Tz { self.0.clone() }\n}\n"
        "impl From<DateTime<Utc>> for DateTime<Local> {\n"
        "    /// Moves a universal time into the machine's local zone.\n"
        "    fn from(src: DateTime<Utc>) -> Self { DateTime(Local) }\n}\n"
        "impl From<DateTime<Local>> for DateTime<Utc> {\n"
        "    fn from(src: DateTime<Local>) -> Self { DateTime(Utc) }\n}\n"
        "impl std::fmt::Debug for Utc {\n"
        "    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\n"
    )
    cpp = (
        "namespace YAML {\ntemplate <typename T> struct convert;\n"
        "template <> struct convert<bool> {\n  static bool decode(int n) { return n != 0; }\n};\n"
        "template <typename K> struct convert<std::vector<K>> {\n"
        "  static int encode(const std::vector<K>& v) { return v.size(); }\n};\n}\n"
    )
    root = indexed_tree(tmp_path / "repo", {"src/datetime.rs": rust, "include/convert.hpp": cpp})
    entries = json.loads(cli(root, "outline", "src/datetime.rs", "--json").stdout)["results"][0]
    impls = [entry["name"] for entry in entries["entries"] if entry["kind"] == "impl"]
    assert impls == ["DateTime", "From<DateTime<Utc>> for DateTime<Local>",
                     "From<DateTime<Local>> for DateTime<Utc>", "Debug for Utc"]  # fmt: skip
    text = cli(root, "outline", "include/convert.hpp").stdout.splitlines()
    assert (
        "    struct convert<bool>  L3-5" in text
        and "    struct convert<std::vector<K>>  L6-8" in text
    )
    done = cli(
        root,
        "search",
        "zone of a local time",
        "--mode",
        "lexical",
        "--kind",
        "impl,struct",
        "--json",
    )
    names = {hit["name"] for hit in json.loads(done.stdout)["results"]}
    assert "datetime::From<DateTime<Utc>> for DateTime<Local>" in names, names
    done = cli(root, "search", "decode a bool", "--mode", "lexical", "--kind", "struct", "--json")
    assert json.loads(done.stdout)["results"][0]["name"] == "YAML::convert<bool>"
