"""`repomap index`: discovery, skipped files, incremental updates, the summary and the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from conftest import run_cli
from index_dump import check_integrity

from repomap import config, store
from repomap.index import pipeline as indexer


def _rows(db: Path, sql: str, *args) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql, args).fetchall()


def _paths(db: Path) -> list[str]:
    return [row[0] for row in _rows(db, "SELECT path FROM files ORDER BY path")]


def _db(root: Path) -> Path:
    return root / ".repomap" / "index.db"


def test_index_finds_every_language_and_skips_other_files(make_repo, index):
    root = make_repo(
        {
            "a.py": "x = 1\n",
            "b.pyi": "def f() -> int: ...\n",
            "c.rs": "fn main() {}\n",
            "d.h": "int f();\n",
            "e.cpp": "int g() { return 0; }\n",
            "f.cc": "",
            "g.hpp": "",
            "h.cxx": "",
            "i.c++": "",
            "j.hh": "",
            "k.hxx": "",
            "l.ipp": "",
            "m.inl": "",
            "n.tcc": "",
            "o.tpp": "",
            "p.txx": "",
            "q.h++": "",
            "r.cppm": "",
            "s.ixx": "",
            "T.C": "namespace n { class K {}; }\n",  # GCC's upper-case `.C` is C++
            "u.c": "int u(void) { return 0; }\n",
            "README.md": "# hi\n",
            "n.js": "var x;\n",
            "Makefile": "all:\n",
        }
    )
    summary = index(root)
    assert summary.scanned == 21
    langs = dict(_rows(_db(root), "SELECT path, language FROM files"))
    assert langs["a.py"] == langs["b.pyi"] == "python"
    assert langs["c.rs"] == "rust"
    assert {
        langs[p]
        for p in (
            "d.h",
            "e.cpp",
            "f.cc",
            "g.hpp",
            "h.cxx",
            "i.c++",
            "j.hh",
            "k.hxx",
            "l.ipp",
            "m.inl",
            "n.tcc",
            "o.tpp",
            "p.txx",
            "q.h++",
            "r.cppm",
            "s.ixx",
            "T.C",
        )
    } == {"cpp"}
    assert langs["u.c"] == "c"
    assert "README.md" not in langs and "n.js" not in langs


def test_ignore_rules_at_every_level_are_respected(make_repo, index):
    root = make_repo(
        {
            ".gitignore": "build/\n*.gen.py\n!keep.gen.py\n",
            "build/out.py": "x = 1\n",
            "src/a.py": "x = 1\n",
            "src/a.gen.py": "x = 1\n",
            "src/keep.gen.py": "x = 1\n",
            "src/.gitignore": "local_*.py\n",
            "src/local_secret.py": "x = 1\n",
            "other/local_ok.py": "x = 1\n",
            ".git/info/exclude": "excluded.py\n",
            "excluded.py": "x = 1\n",
            ".git/objects/junk.py": "x = 1\n",
            ".repomapignore": "vendor/\n",
            "vendor/lib.py": "x = 1\n",
        }
    )
    index(root)
    assert _paths(_db(root)) == ["other/local_ok.py", "src/a.py", "src/keep.gen.py"]


def test_tools_hidden_folders_are_skipped_unless_an_ignore_file_takes_one_back(make_repo, index):
    # quilt's `.pc/` (every Debian source tree) held pre-patch copies that won ties in `show`.
    root = make_repo(
        {
            "src/a.py": "def a():\n    pass\n",
            ".pc/fix.patch/src/a.py": "def a():\n    pass\n",
            ".venv/lib/site.py": "x = 1\n",
            ".tox/py311/lib/x.py": "x = 1\n",
            ".github/scripts/check.py": "x = 1\n",  # another hidden folder is read
            "lib/.mypy_cache/x.py": "x = 1\n",  # below the root too
            "lib/env.venv/y.py": "x = 1\n",  # a name that only ends like one
        }
    )
    summary = index(root)
    assert _paths(_db(root)) == [".github/scripts/check.py", "lib/env.venv/y.py", "src/a.py"]
    assert summary.ignored == 4
    (root / ".repomapignore").write_text("!.venv/\n")
    index(root)
    assert _paths(_db(root)) == [
        ".github/scripts/check.py",
        ".venv/lib/site.py",
        "lib/env.venv/y.py",
        "src/a.py",
    ]


def test_the_default_patterns_are_hidden_folder_names():
    # discover._ignoring skips them for a path with no part starting with `.`: exact only
    # while each is the name of a folder whose name starts with `.`.
    from repomap.index.discover import DEFAULT_IGNORE

    for pattern in DEFAULT_IGNORE:
        assert pattern.startswith(".") and pattern.endswith("/") and pattern.count("/") == 1
        assert not any(char in pattern for char in "*?[]!\\")


def test_a_tree_without_ignore_files_never_loads_pathspec_hidden_folders_and_all(make_repo):
    # The default patterns are folder names, matched by name: Django's sources (no ignore file;
    # a `.hidden` folder, `.keep` files) spent ~15 ms of a ~170 ms no-change run importing
    # pathspec and compiling them. An ignore file still needs it.
    plain = make_repo({"src/a.py": "x = 1\n"}, root=make_repo({}).parent / "plain")
    hidden = make_repo(
        {"src/a.py": "x = 1\n", ".venv/b.py": "x = 1\n", "t/.keep": "", "t/.hidden/c.txt": "x"}
    )
    ignoring = make_repo({"src/a.py": "x = 1\n", ".gitignore": "b/\n"}, root=plain.parent / "ig")
    script = (
        "import sys; from pathlib import Path; from repomap.index.discover import walk;"
        "found = walk(Path(sys.argv[1]));"
        "print(sorted(f.rel_path for f in found.files), 'pathspec' in sys.modules)"
    )
    for root, expected in (
        (plain, "['src/a.py'] False"),
        (hidden, "['src/a.py', 't/.hidden/c.txt', 't/.keep'] False"),
        (ignoring, "['.gitignore', 'src/a.py'] True"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected


def test_git_is_not_asked_about_a_folder_with_no_git_above_it(make_repo, tmp_path):
    # git finds a work tree by a `.git` in the folder or above it; with none, not spawned.
    root = make_repo({"a.py": "x = 1\n"})
    assert not any((folder / ".git").exists() for folder in root.absolute().parents)
    tools = tmp_path / "bin"
    tools.mkdir()
    called = tmp_path / "git-called"
    fake = tools / "git"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {called}\nexit 128\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    done = run_cli("index", root, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert "not a git repository" in json.loads(done.stdout)["results"][0]["history"]["note"]
    assert not called.exists()
    (root / ".git").mkdir()  # now git is asked (and this fake one says no repository)
    done = run_cli("index", root, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert called.read_text().startswith("-C")


def test_ignored_entries_are_counted_by_the_rule_that_excluded_them(make_repo):
    from repomap.index.discover import walk

    root = make_repo(
        {
            ".gitignore": "build/\n*.gen.py\n",
            "build/out.py": "x = 1\n",
            "build/more.py": "x = 1\n",
            "src/a.gen.py": "x = 1\n",
            "src/b.gen.py": "x = 1\n",
            "src/.gitignore": "local_*.py\n",
            "src/local_x.py": "x = 1\n",
            ".git/info/exclude": "excluded.py\n",
            "excluded.py": "x = 1\n",
            "kept.py": "x = 1\n",
        }
    )
    walked = walk(root)
    # A folder counts once: build/'s two files are not looked at.
    assert walked.ignored == {
        ".gitignore: build/": 1,
        ".gitignore: *.gen.py": 2,
        "src/.gitignore: local_*.py": 1,
        ".git/info/exclude: excluded.py": 1,
    }
    assert walked.ignored_examples[".gitignore: *.gen.py"] == ["src/a.gen.py", "src/b.gen.py"]
    assert walked.ignored_examples[".gitignore: build/"] == ["build/"]


def test_ignore_rules_that_leave_nothing_to_index_are_named_in_a_warning(make_repo):
    # Debian's kernel source ships a .gitignore whose `/*` ignores its whole top level.
    files = {
        ".gitignore": "*.o\n/*\n!/debian/\n",
        ".clang-format": "x\n",
        "kernel/sched.h": "int schedule(void);\n",
        "include/list.h": "struct list_head { struct list_head *next; };\n",
        "tools/gen.py": "def gen():\n    pass\n",
    }
    root = make_repo(files)
    result = run_cli("index", root, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["results"][0]
    assert summary["scanned"] == 0 and summary["files"] == 0
    assert summary["ignored"] == 5  # .clang-format, .gitignore and the three folders
    [warning] = summary["warnings"]
    assert "ignore rules excluded 5 entries: 5 by .gitignore: /* (include/, kernel/, tools/" in (
        warning
    )
    assert ".clang-format" not in warning  # a hidden entry says little
    human = run_cli("index", root)
    assert human.returncode == 0 and "warning: no source files to index" in human.stdout
    assert "Traceback" not in human.stderr

    # What the warning advises works: a .repomapignore beside it re-includes the tree.
    (root / ".repomapignore").write_text("!/*\n")
    summary = json.loads(run_cli("index", root, "--json").stdout)["results"][0]
    assert summary["files"] == 3 and summary["warnings"] == []
    assert _paths(_db(root)) == ["include/list.h", "kernel/sched.h", "tools/gen.py"]


def test_a_tree_of_other_languages_says_which_ones_repomap_reads(make_repo):
    root = make_repo({"src/app.js": "console.log('hi')\n", "package.json": "{}\n"})
    summary = json.loads(run_cli("index", root, "--json").stdout)["results"][0]
    assert summary["files"] == 0
    [warning] = summary["warnings"]
    assert warning.startswith(
        "no source or docs files repomap reads here (2 other files, 1 of them data files read "
        "as records only)"
    )  # package.json is read, as records: the warning says so rather than "no files"
    assert all(name in warning for name in ("Python (.py .pyi)", "Rust (.rs)", "C++", ".md"))
    assert ".json" in warning and summary["data"]["files"] == 1
    human = run_cli("index", root)
    assert human.returncode == 0
    assert "warning: no source or docs files repomap reads here" in human.stdout
    # Docs alone are something to index: no warning then.
    (root / "README.md").write_text("# App\n")
    assert json.loads(run_cli("index", root, "--json").stdout)["results"][0]["warnings"] == []


def test_the_walk_lists_every_file_and_reads_sizes_of_those_asked_for(make_repo):
    from repomap.index.discover import walk

    root = make_repo({"pkg/a.py": "x = 1\n", "pkg/data.bin": "\x01" * 7, "notes.po": "msgid ''\n"})
    (root / "pkg_link").symlink_to(root / "pkg", target_is_directory=True)
    walked = walk(root)
    found = {f.rel_path: f for f in walked.files}
    # The folder and its link lead to one folder: it is walked once, under one of its names.
    assert sorted(found) in (
        ["notes.po", "pkg/a.py", "pkg/data.bin"],
        ["notes.po", "pkg_link/a.py", "pkg_link/data.bin"],
    )
    data = next(f for f in walked.files if f.rel_path.endswith("data.bin"))
    assert (data.size, data.mtime_ns) == (7, (root / "pkg" / "data.bin").stat().st_mtime_ns)
    # A file removed between the walk and the question reads as empty, so it is read again.
    gone = found["notes.po"]
    (root / "notes.po").unlink()
    assert (gone.size, gone.mtime_ns) == (0, 0)


def test_symlinks_inside_are_followed_once_and_outside_never(make_repo, index, tmp_path):
    outside = make_repo({"secret.py": "TOKEN = 'outside'\n"}, root=tmp_path / "outside")
    root = make_repo({"pkg/real.py": "def real():\n    pass\n"})
    (root / "alias.py").symlink_to(root / "pkg" / "real.py")
    (root / "pkg_link").symlink_to(root / "pkg", target_is_directory=True)
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "pkg" / "loop").symlink_to(root, target_is_directory=True)
    summary = index(root)
    paths = _paths(_db(root))
    assert len(paths) == 1 and paths[0] in ("alias.py", "pkg/real.py")
    assert {p for p, r in summary.skipped if "outside" in r} == {"escape", "escape.py"}


def test_binary_undecodable_and_oversized_files_are_skipped_and_counted(make_repo, index, tmp_path):
    root = make_repo(
        {
            "good.py": "def good():\n    'still indexed'\n",
            "binary.py": b"\x00\x01\x02ELF\x00" * 100,
            "latin1.rs": "// caf\xe9\n".encode("latin-1"),
            "big.py": "x = 1\n" * 50_000,
            "utf16.py": "def wide():\n    'from utf-16'\n".encode("utf-16"),
            "cookie.py": "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"),
        }
    )
    summary = indexer.run(config.resolve(root, max_file_size=100_000))
    reasons = dict(summary.skipped)
    assert reasons["binary.py"].startswith("binary")
    assert reasons["latin1.rs"].startswith("not UTF-8")
    assert reasons["big.py"].startswith("larger than the limit")
    assert summary.skipped_by_reason == {"binary": 1, "not UTF-8": 1, "larger than the limit": 1}
    assert _paths(_db(root)) == ["cookie.py", "good.py", "utf16.py"]
    contents = {row[0] for row in _rows(_db(root), "SELECT content FROM code_text")}
    assert {"still indexed", "from utf-16", "caf\xe9"} <= contents


def test_unchanged_files_are_not_reread_and_changes_are_followed(make_repo, index):
    root = make_repo(
        {
            "a.py": "def a():\n    'alpha'\n",
            "b.py": "def b():\n    'beta'\n",
            "c.py": "def c():\n    'gamma'\n",
        }
    )
    first = index(root)
    assert (first.added, first.unchanged) == (3, 0)
    again = index(root)
    assert (again.added, again.modified, again.removed, again.unchanged) == (0, 0, 0, 3)

    (root / "a.py").write_text("def a2():\n    'alpha two'\n")
    (root / "c.py").unlink()
    (root / "d.py").write_text("def d():\n    'delta'\n")
    os.utime(root / "b.py", ns=(1, 1))  # touched, same bytes: re-hashed, not re-parsed
    summary = index(root)
    assert (summary.added, summary.modified, summary.removed, summary.unchanged) == (1, 1, 1, 1)
    db = _db(root)
    assert sorted(r[0] for r in _rows(db, "SELECT qualified_name FROM symbols")) == ["a2", "b", "d"]
    assert sorted(r[0] for r in _rows(db, "SELECT content FROM code_text")) == [
        "alpha two",
        "beta",
        "delta",
    ]
    hits = _rows(
        db, "SELECT file_path FROM code_text_fts WHERE code_text_fts MATCH 'gamma OR alpha'"
    )
    assert hits == [("a.py",)]
    assert _rows(db, "SELECT mtime_ns FROM files WHERE path = 'b.py'") == [(1,)]


def test_force_rereads_everything(make_repo, index):
    root = make_repo({"a.py": "x = 1\n"})
    index(root)
    assert index(root, force=True).modified == 1


def test_worker_processes_give_the_same_rows_as_one_process(make_repo, index, tmp_path):
    files = {
        f"m{i}.py": f"def f{i}():\n    'doc {i}'\n    # note {i}\n    return 'lit {i}'\n"
        for i in range(40)
    }
    root = make_repo(files)
    index(root, db=tmp_path / "one.db", workers=1)
    index(root, db=tmp_path / "two.db", workers=2)
    sql = "SELECT file_path, line_number, element_type, symbol_name, content FROM code_text_fts ORDER BY 1, 2"
    assert _rows(tmp_path / "one.db", sql) == _rows(tmp_path / "two.db", sql)
    assert len(_rows(tmp_path / "one.db", sql)) == 120


def test_the_workers_are_forked_before_the_docs_are_indexed(make_repo, index, monkeypatch):
    """The thread that takes results ahead forks the workers while this one goes on to index
    the docs. Its first import of a module then (repomap.index.markdown) held the module's
    import lock at the fork, and a worker that imported it too (a Rust crate's long `//!` doc)
    waited forever for a thread it does not have: `repomap index` of semver hung. The docs
    are indexed only once every worker process is started."""
    import multiprocessing

    files = {f"m{i:02}.py": f"def f{i}():\n    return {i}\n" for i in range(40)}
    root = make_repo({**files, "README.md": "# Title\n\nSome words.\n"})
    seen: list[int] = []
    update_docs = indexer.update_docs

    def counting(*args, **kwargs):
        seen.append(len(multiprocessing.active_children()))
        return update_docs(*args, **kwargs)

    monkeypatch.setattr(indexer, "update_docs", counting)
    summary = index(root, workers=2)
    assert summary.added == 40
    assert seen == [2]


def test_ids_are_the_same_for_the_same_tree_whatever_the_workers_timing(make_repo, tmp_path):
    """Files, symbols and chunks are numbered in the order they are written, and FTS answers
    tied at a LIMIT come in id order: ids that followed the order workers finished in made two
    cold runs of one tree answer differently. A large file submitted first finishes last."""
    files = {f"pkg/m{i:02}.py": f"def f{i}():\n    return g{i}(1)\n" for i in range(40)}
    files["pkg/big.py"] = "".join(
        f"def big{i}(a, b):\n    'doc {i}'\n    return helper(a) + other(b)  # {i}\n"
        for i in range(4000)
    )
    root = make_repo(files)
    numbered = (
        "SELECT id, path FROM files ORDER BY id",
        "SELECT s.id, s.name, f.path FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY 1",
        "SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY 1",
    )
    runs = []
    for workers in ("2", "3", "2"):  # one worker reads in process, in the walk's order
        db = tmp_path / f"w{len(runs)}.db"
        done = run_cli("index", root, "--db", db, "--workers", workers, "--json")
        assert done.returncode == 0, done.stderr
        runs.append([_rows(db, sql) for sql in numbered])
    assert len(runs[0][1]) == 4040
    assert all(run == runs[0] for run in runs[1:])


def test_the_index_folder_carries_its_own_gitignore_and_wal_mode(make_repo, index):
    root = make_repo({"a.py": "x = 1\n"})
    index(root)
    assert (root / ".repomap" / ".gitignore").read_text().strip().endswith("*")
    assert _rows(_db(root), "PRAGMA journal_mode") == [("wal",)]


def test_cli_index_prints_a_json_summary(make_repo):
    root = make_repo(
        {"a.py": "def a():\n    '''Doc.'''\n    return 'x'  # why\n", "bin.py": b"\x00\x00"}
    )
    result = run_cli("index", root, "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)["results"][0]
    assert summary["added"] == 1 and summary["skipped"] == 1
    assert summary["elements"] == {"comment": 1, "docstring": 1, "string_literal": 1}
    assert summary["symbols"] == 1
    assert summary["skipped_files"] == [{"path": "bin.py", "reason": "binary (NUL bytes)"}]


def test_cli_index_prints_a_readable_summary(make_repo):
    root = make_repo({"a.py": "x = 1\n"})
    result = run_cli("index", root)
    assert result.returncode == 0
    assert "1 added, 0 changed, 0 unchanged, 0 removed; 0 skipped" in result.stdout
    assert "1 file, 1 symbol, 0 references" in result.stdout


def test_cli_index_summary_names_skips_of_every_stage_without_a_false_total(make_repo):
    # A secret file (never read), a binary one (read, then refused), a doc marked noindex and a
    # data file that does not parse are skipped at four stages; the summary counts all of them
    # and lists why, and gives no total they would contradict.
    root = make_repo({
        "a.py": "x = 1\n",
        ".env": "KEY=1\n",
        "b.md": "# B\n\ntext\n",
        "c.md": "<!-- repomap: noindex -->\n# C\n",
        "d.json": "{",
    })  # fmt: skip
    (root / "bin.py").write_bytes(b"\x00\x01")
    result = run_cli("index", root)
    assert result.returncode == 0, result.stderr
    assert "1 added, 0 changed, 0 unchanged, 0 removed; 4 skipped" in result.stdout
    assert "docs     1 file (1 added" in result.stdout
    for reason in ("secret file", "binary", "noindex", "not valid JSON"):
        assert reason in result.stdout, (reason, result.stdout)
    assert "found" not in result.stdout.split("indexed")[0]


@pytest.mark.parametrize(
    "args, message",
    [
        (["index", "/no/such/dir"], "not a directory"),
        (["index", "--max-file-size", "0"], "--max-file-size"),
    ],
)
def test_cli_index_rejects_bad_arguments_in_one_line(args, message):
    result = run_cli(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("literal_index_bytes", ["0", "1000000"])  # trigram index kept or not
def test_text_indexes_stay_whole_when_a_batch_writes_then_deletes_or_fails(
    make_repo, index, monkeypatch, literal_index_bytes: str
):
    """The writer adds a batch's text rows to FTS5 when the batch ends: a file written and
    deleted in one batch must never be 'deleted' from an index that never had it, and a batch
    that fails leaves nothing pending for the next one."""
    monkeypatch.setenv("REPOMAP_LITERAL_INDEX_BYTES", literal_index_bytes)
    from index_dump import check_integrity

    from repomap import store

    repo = make_repo({"a.py": "# alpha comment\nX = 'alpha string'\n", "b.py": "# beta\n"})
    db_path = repo / ".repomap" / "index.db"
    index(repo)
    job = indexer.Job("c.py", str(repo / "a.py"), "python", 40, 1, None)
    rows = indexer.read_and_extract(job)
    db = store.open_index(db_path)
    try:
        writer = store.Writer(db)
        with writer.batch():
            file_id = writer.replace_file(rows, None, "now")
            writer.delete_file(file_id)
        with pytest.raises(RuntimeError), writer.batch():
            writer.replace_file(rows, None, "now")
            raise RuntimeError("the batch fails")
        with writer.batch():
            writer.replace_file(rows, None, "now")
        with writer.batch():  # a nested batch that fails takes back only what it wrote
            writer.replace_file(rows._replace(path="d.py"), None, "now")
            with pytest.raises(RuntimeError), writer.batch():
                writer.replace_file(rows._replace(path="e.py"), None, "now")
                raise RuntimeError("one file fails")
    finally:
        db.conn.close()
    check_integrity(db_path)
    with closing(sqlite3.connect(db_path)) as conn:
        hits = conn.execute(
            "SELECT file_path FROM code_text_fts WHERE code_text_fts MATCH 'alpha' ORDER BY 1"
        ).fetchall()
    assert hits == [("a.py",), ("a.py",), ("c.py",), ("c.py",), ("d.py",), ("d.py",)]


def test_a_large_run_merges_the_text_indexes_and_hands_back_the_freed_pages(
    make_repo, index, monkeypatch
):
    """After a run that rewrote many files each text index is one FTS5 segment, and the pages
    the old segments held leave the file (auto_vacuum = INCREMENTAL) instead of staying free."""
    monkeypatch.setenv("REPOMAP_LITERAL_INDEX_BYTES", "0")  # the trigram index kept too
    files = {f"m{i}.py": f"# note {i} about pools\nVALUE_{i} = 'text {i}'\n" for i in range(30)}
    repo = make_repo(files)
    monkeypatch.setattr(indexer, "OPTIMIZE_AFTER_FILES", 10)
    monkeypatch.setattr(indexer, "BATCH_FILES", 7)  # several batches: several segments to merge
    index(repo)
    index(repo, force=True)
    db = _db(repo)
    assert _rows(db, "PRAGMA auto_vacuum") == [(2,)]
    assert _rows(db, "PRAGMA freelist_count") == [(0,)]
    for table in ("code_text_fts", "code_text_literal"):
        assert _rows(db, f"SELECT count(DISTINCT segid) FROM {table}_idx") == [(1,)]
    hits = _rows(db, "SELECT count(*) FROM code_text_fts WHERE code_text_fts MATCH 'pools'")
    assert hits == [(30,)]


TEXT_INDEXES = ("code_text_fts", "code_text_literal", "chunks_fts")
FTS5_MERGES = {"automerge": 4, "crisismerge": 16, "hashsize": 1 << 20}  # FTS5's defaults


def _merge_settings(db: Path) -> set[tuple]:
    """Each text index's configured merging (FTS5's defaults when never set)."""
    return {
        (table, key, dict(_rows(db, f"SELECT k, v FROM {table}_config")).get(key, default))
        for table in TEXT_INDEXES
        for key, default in FTS5_MERGES.items()
    }


def _answers(db: Path) -> list[tuple]:
    return [
        *_rows(db, "SELECT rowid FROM code_text_fts WHERE code_text_fts MATCH 'pools' ORDER BY 1"),
        *_rows(db, "SELECT rowid FROM code_text_literal WHERE content LIKE '%text 2%' ORDER BY 1"),
        *_rows(db, "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH 'value' ORDER BY 1"),
    ]


def test_a_large_run_merges_the_text_indexes_once_at_its_end_then_merges_as_before(
    make_repo, index, monkeypatch
):
    """While a large run writes, FTS5 merges no segments (automerge 0); its 'optimize' merges
    them once and gives FTS5 its default merging back, for the small runs after it."""
    monkeypatch.setenv("REPOMAP_LITERAL_INDEX_BYTES", "0")  # the trigram index kept too
    files = {f"m{i}.py": f"# note {i} about pools\nVALUE_{i} = 'text {i}'\n" for i in range(30)}
    repo = make_repo(files)
    monkeypatch.setattr(indexer, "OPTIMIZE_AFTER_FILES", 10)
    monkeypatch.setattr(indexer, "BATCH_FILES", 7)
    seen = []
    optimize_text = store.Writer.optimize_text

    def optimize(writer: store.Writer) -> None:
        seen.extend(writer.conn.execute("SELECT v FROM code_text_fts_config WHERE k = 'automerge'"))
        optimize_text(writer)

    monkeypatch.setattr(store.Writer, "optimize_text", optimize)
    index(repo)
    db = _db(repo)
    assert seen == [(0,)]
    assert _merge_settings(db) == {(t, k, v) for t in TEXT_INDEXES for k, v in FTS5_MERGES.items()}
    for table in TEXT_INDEXES:
        assert _rows(db, f"SELECT count(DISTINCT segid) FROM {table}_idx") == [(1,)]


def test_a_large_run_killed_while_merges_and_indexes_wait_leaves_a_usable_index_the_next_completes(
    make_repo, index, monkeypatch, tmp_path
):
    """Killed after the large run deferred FTS5's merging and dropped the symbols' name indexes
    (here: interrupted after 28 of 30 files, in its fifth batch), the index answers from the
    files written; the next run writes the rest, few files, so it does not optimize, but builds
    the indexes first, gives FTS5 its merging back, and answers as a clean index does."""
    monkeypatch.setenv("REPOMAP_LITERAL_INDEX_BYTES", "0")  # the trigram index kept too
    files = {f"m{i}.py": f"# note {i} about pools\nVALUE_{i} = 'text {i}'\n" for i in range(30)}
    repo = make_repo(files)
    clean = make_repo(files, tmp_path / "clean")
    monkeypatch.setattr(indexer, "OPTIMIZE_AFTER_FILES", 10)
    monkeypatch.setattr(indexer, "BATCH_FILES", 7)
    write = indexer._write
    calls = []

    def killed(*args) -> None:
        calls.append(1)
        if len(calls) == 29:
            raise KeyboardInterrupt  # what a kill leaves: the batch open is rolled back
        write(*args)

    monkeypatch.setattr(indexer, "_write", killed)
    with pytest.raises(KeyboardInterrupt):
        index(repo)
    db = _db(repo)
    check_integrity(db)
    assert _rows(db, "SELECT count(*) FROM files") == [(28,)]
    assert {(key, value) for _, key, value in _merge_settings(db)} == {
        ("automerge", 0),
        ("crisismerge", 64),
        ("hashsize", 8 << 20),
    }
    hits = _rows(db, "SELECT count(*) FROM code_text_fts WHERE code_text_fts MATCH 'pools'")
    assert hits == [(28,)]
    assert not _indexes(db) & {"symbols_name", "symbols_unsuffixed"}  # built at the end
    assert run_cli("symbols", "VALUE_3", "--root", repo, "--no-refresh").returncode == 0
    monkeypatch.setattr(indexer, "_write", write)
    summary = index(repo)
    assert summary.added == 2
    index(clean)
    check_integrity(db)
    assert _merge_settings(db) == _merge_settings(_db(clean))
    assert _answers(db) == _answers(_db(clean))
    assert _indexes(db) == _indexes(_db(clean))
    assert _rows(db, "SELECT value FROM meta WHERE key = 'deferred_indexes'") == []


def _indexes(db: Path) -> set[str]:
    return {name for (name,) in _rows(db, "SELECT name FROM sqlite_schema WHERE type = 'index'")}


def _links(db: Path) -> set[tuple]:
    """(definition file, qualified name, line) -> (declaration file, line), as paths and lines."""
    return set(
        _rows(
            db,
            """SELECT f.path, s.qualified_name, s.start_line, df.path, d.start_line
            FROM symbols s JOIN files f ON f.id = s.file_id
            LEFT JOIN symbols d ON d.id = s.declaration_id LEFT JOIN files df ON df.id = d.file_id
            WHERE s.is_definition = 1 AND s.kind IN ('method', 'function')""",
        )
    )


def _links_relinked_in_full(db: Path, tmp: Path) -> set[tuple]:
    from repomap.store.writer import LINK_DECLARATIONS_SQL

    copy = tmp / "full-link.db"
    with closing(sqlite3.connect(db)) as source, closing(sqlite3.connect(copy)) as target:
        source.backup(target)
        target.execute(LINK_DECLARATIONS_SQL)
        target.commit()
    return _links(copy)


def test_incremental_runs_link_cpp_definitions_exactly_as_a_full_relink(make_repo, index, tmp_path):
    """A small run relinks only the definitions its changes can affect; after each kind of
    change the links equal those of relinking every definition."""
    header = "namespace n {\nclass Pool {\n public:\n  void get();\n  void put(int x);\n};\n}\n"
    repo = make_repo(
        {
            "pool.h": header,
            "pool.cc": '#include "pool.h"\nvoid n::Pool::get() {}\nvoid n::Pool::put(int x) {}\n',
            "other.cc": "void n::Pool::drain() {}\nvoid free_function() {}\n",
        }
    )
    db = _db(repo)
    index(repo)
    links = _links(db)
    assert ("pool.cc", "n::Pool::get", 2, "pool.h", 4) in links
    assert ("other.cc", "n::Pool::drain", 1, None, None) in links

    steps = [
        # the header gains the declaration other.cc defines, and loses put
        lambda: (repo / "pool.h").write_text(header.replace("void put(int x);", "void drain();")),
        # the header is re-read with the same declarations (new symbol ids)
        lambda: (repo / "pool.h").write_text("// moved down\n" + header),
        # a second declaration of get in another header, then the first header is deleted
        lambda: (repo / "more.h").write_text("namespace n { class Pool { void get(); }; }\n"),
        lambda: (repo / "pool.h").unlink(),
    ]
    for step in steps:
        step()
        index(repo)
        assert _links(db) == _links_relinked_in_full(db, tmp_path)
    assert ("pool.cc", "n::Pool::get", 2, "more.h", 1) in _links(db)


def test_a_run_killed_before_its_final_link_is_relinked_in_full_by_the_next(
    make_repo, index, tmp_path
):
    """The writer marks links pending with its first change; a run that died before linking
    (here: a batch written without the run's end) leaves the mark, so the next run, which sees
    nothing changed, still relinks every definition."""
    from repomap import store

    repo = make_repo(
        {
            "pool.h": "namespace n {\nclass Pool {\n public:\n  void get();\n};\n}\n",
            "pool.cc": '#include "pool.h"\nvoid n::Pool::get() {}\n',
        }
    )
    db_path = _db(repo)
    index(repo)
    before = _links(db_path)
    assert ("pool.cc", "n::Pool::get", 2, "pool.h", 4) in before
    header = repo / "pool.h"
    stat = header.stat()
    rows = indexer.read_and_extract(
        indexer.Job("pool.h", str(header), "cpp", stat.st_size, stat.st_mtime_ns, None)
    )
    db = store.open_index(db_path)
    try:
        writer = store.Writer(db)
        old_id = store.indexed_files(db)["pool.h"].id
        with writer.batch():  # the header's rows again, with new symbol ids; then the run "dies"
            writer.replace_file(rows, old_id, "now")
    finally:
        db.conn.close()
    assert _rows(db_path, "SELECT value FROM meta WHERE key = 'links_pending'") == [("1",)]
    assert index(repo).unchanged == 2
    assert _links(db_path) == before == _links_relinked_in_full(db_path, tmp_path)
    assert _rows(db_path, "SELECT value FROM meta WHERE key = 'links_pending'") == [("0",)]


def test_a_size_limit_given_to_index_is_kept_for_the_refreshes_after_it(tmp_path: Path) -> None:
    """`index --max-file-size` of a 2.2 MB file (the default limit is 2 MiB), then an edit:
    the next query's refresh, given no limit, kept the index's and re-read the file, where it
    used to drop it (sqlite3.c: 0 symbols after one edit and "re-indexed 1 changed file")."""
    root = tmp_path / "repo"
    root.mkdir()
    big = root / "big.c"
    # Over the default limit by its size, not its symbols (80,000 functions cost 19 s of the
    # suite): blank lines between two halves of 1,000 functions.
    functions = [f"int f{n}(void) {{ return {n}; }}\n" for n in range(2_000)]
    blank = "\n" * (config.DEFAULT_MAX_FILE_SIZE + 100_000)
    big.write_text("".join(functions[:1_000]) + blank + "".join(functions[1_000:]))
    assert big.stat().st_size > config.DEFAULT_MAX_FILE_SIZE
    done = run_cli("index", root, "--max-file-size", "5000000")
    assert done.returncode == 0, done.stderr

    def found(name: str) -> list[str]:
        result = run_cli("symbols", name, "--root", root, "--json")
        assert result.returncode in (0, 1), result.stderr  # 1: nothing found, as rg
        return [hit["file_path"] for hit in json.loads(result.stdout)["results"]]

    assert found("f1999") == ["big.c"]
    # `status --db` alone: the root the index was built for, and the limit it keeps.
    db = root / ".repomap" / "index.db"
    shown = json.loads(run_cli("status", "--db", db, "--json", cwd=tmp_path).stdout)["results"][0]
    assert shown["root"] == str(root.resolve())
    assert shown["settings"]["index.max_file_size"]["value"] == 5_000_000
    with big.open("a") as file:
        file.write("int g(void) { return 0; }\n")
    assert found("g") == ["big.c"]  # the refresh read the file again, with the kept limit
    assert found("f1999") == ["big.c"]
    done = run_cli("index", root, "--max-file-size", "1000")  # a new limit replaces it
    assert done.returncode == 0 and found("f1999") == []
