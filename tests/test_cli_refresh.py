"""Every command that reads the index first checks the files it indexed (repomap/cli/refresh.py):
a small index re-indexes what changed, a large one says how many files changed; --no-refresh
answers from the index as it is. The real CLI in a subprocess on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import indexed_tree, run_cli

from repomap.cli.refresh import REFRESH_MAX_FILES

FILES = {
    "src/app.py": '''
        """The application."""


        def main():
            return 1
        ''',
    "docs/guide.md": "# Guide\n\nHow to start.\n",
}

EDITS = {  # a command, and what it answers only after the edit below is indexed
    "symbols": (["symbols", "added_later"], "added_later"),
    "search-text": (["search-text", "walrus"], "walrus"),
    "search-docs": (["search-docs", "zebra"], "zebra"),
    "outline": (["outline", "src/app.py"], "added_later"),
    "map": (["map"], "added_later"),
    "show": (["show", "added_later"], "return 2"),
    "show --section": (["show", "--section", "Stripes"], "zebra"),
}


def _edit(root: Path) -> None:
    with open(root / "src" / "app.py", "a", encoding="utf-8") as file:
        file.write("\n\n# the walrus\ndef added_later():\n    return 2\n")
    with open(root / "docs" / "guide.md", "a", encoding="utf-8") as file:
        file.write("\n## Stripes\n\nA zebra.\n")


def _cli(root: Path, *args: str):
    return run_cli(*args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})


@pytest.mark.parametrize("command", EDITS)
def test_a_command_answers_from_files_edited_since_indexing(tmp_path, command):
    root = indexed_tree(tmp_path / "repo", FILES)
    _edit(root)
    args, expected = EDITS[command]
    done = _cli(root, *args)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert "note: re-indexed 2 changed files first" in done.stderr
    again = _cli(root, *args)  # the index is current now: nothing to say
    assert (again.returncode, again.stderr.count("re-indexed")) == (0, 0)


@pytest.mark.parametrize("command", EDITS)
def test_no_refresh_answers_from_the_index_as_it_is(tmp_path, command):
    root = indexed_tree(tmp_path / "repo", FILES)
    _edit(root)
    args, expected = EDITS[command]
    done = _cli(root, *args, "--no-refresh")
    assert expected not in done.stdout
    assert "re-indexed" not in done.stderr
    if command == "show":  # its lines must be exact: the name is not indexed yet
        assert done.returncode == 1 and "no symbol named 'added_later'" in done.stderr


def test_show_no_refresh_never_serves_lines_of_a_changed_file(tmp_path):
    root = indexed_tree(tmp_path / "repo", FILES)
    app = root / "src" / "app.py"
    app.write_text("# moved down\n" + app.read_text())
    done = _cli(root, "show", "main", "--no-refresh")
    assert (done.returncode, done.stdout) == (2, "")
    assert "src/app.py changed since it was indexed; run `repomap index`" in done.stderr


def test_a_file_touched_but_unchanged_is_not_a_change(tmp_path):
    root = indexed_tree(tmp_path / "repo", FILES)
    app = root / "src" / "app.py"
    stat = app.stat()
    os.utime(app, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    done = _cli(root, "symbols", "main")
    assert (done.returncode, done.stderr) == (0, "")


def test_a_large_index_says_how_many_files_changed_instead_of_reindexing(tmp_path):
    notes = {f"notes/n{i:04}.txt": f"note {i}\n" for i in range(REFRESH_MAX_FILES)}
    root = indexed_tree(tmp_path / "repo", FILES | notes)
    _edit(root)
    (root / "notes" / "n0000.txt").unlink()
    done = _cli(root, "symbols", "added_later", "--json")
    assert done.returncode == 1  # not re-indexed: the new function is not found yet
    assert json.loads(done.stdout)["results"] == []
    assert done.stderr == (
        "warning: 3 indexed files changed since indexing (docs/guide.md, notes/n0000.txt, "
        "src/app.py); answers may be out of date: run `repomap index`\n"
    )
    assert "warning" not in _cli(root, "symbols", "added_later", "--no-refresh").stderr
    assert run_cli("index", root).returncode == 0
    assert _cli(root, "symbols", "added_later").returncode == 0


def test_a_root_the_index_named_by_db_is_not_of_is_refused(make_repo, tmp_path) -> None:
    # `search --root A --db B's-index` answered from B with exit 0 (--root ignored), and a
    # --root that does not exist went unnoticed.
    first = make_repo({"a.py": "def alpha():\n    return 1\n"})
    second = tmp_path / "second"
    second.mkdir()
    (second / "b.py").write_text('def beta():\n    """The beta value."""\n    return 2\n')
    assert run_cli("index", second).returncode == 0
    db = second / ".repomap" / "index.db"
    for command in (["search", "beta"], ["symbols", "beta"], ["search-text", "beta"]):
        done = run_cli(*command, "--root", first, "--db", db)
        assert done.returncode == 2, done.stdout
        assert f"is the index of {second.resolve()}" in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
        missing = run_cli(*command, "--root", tmp_path / "nowhere", "--db", db)
        assert missing.returncode == 2 and "not a directory" in missing.stderr
        assert run_cli(*command, "--root", second, "--db", db).returncode == 0
    # A copied tree's index still names the tree it was copied from: ROOT's own is not refused.
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(second, copy)
    done = run_cli("search-text", "beta", "--root", copy, "--db", copy / ".repomap" / "index.db")
    assert done.returncode == 0, done.stderr
    # ... and so is the original's index asked about the copy: its files are found there
    done = run_cli("search-text", "beta", "--root", copy, "--db", db)
    assert done.returncode == 0, done.stderr
    # One file name in common is not the same tree: two Rust crates both hold `src/lib.rs`
    # (walkdir's index read with humantime's --root answered with walkdir's files).
    crate = {"src/lib.rs": "pub fn walk() {}\n", "src/dent.rs": "pub struct DirEntry;\n",
             "src/error.rs": "pub struct Error;\n"}  # fmt: skip
    other = make_repo(
        {"src/lib.rs": "pub fn parse() {}\n", "src/date.rs": "pub fn now() {}\n"},
        tmp_path / "humantime",
    )
    walkdir = tmp_path / "walkdir"
    for rel, text in crate.items():
        (walkdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (walkdir / rel).write_text(text)
    assert run_cli("index", walkdir).returncode == 0
    done = run_cli("symbols", "walk", "--root", other, "--db", walkdir / ".repomap" / "index.db")
    assert done.returncode == 2 and "is the index of" in done.stderr
    # An index of two files needs both: one `setup.py` in common is not the same project.
    two = make_repo({"setup.py": "NAME = 'a'\n", "alpha.py": "def alpha_only():\n    pass\n"},
                    tmp_path / "rA")  # fmt: skip
    other_two = make_repo({"setup.py": "NAME = 'b'\n", "beta.py": "def beta():\n    pass\n"},
                          tmp_path / "rB")  # fmt: skip
    assert run_cli("index", two).returncode == 0
    done = run_cli(
        "symbols", "alpha_only", "--root", other_two, "--db", two / ".repomap" / "index.db"
    )
    assert done.returncode == 2 and "is the index of" in done.stderr


@pytest.mark.parametrize(
    ("twice", "once"),
    [
        (
            ["search", "beta", "--path", "a.py", "--path", "b.py"],
            ["search", "beta", "--path", "b.py"],
        ),
        (["search-text", "beta", "--path=a.py", "--path", "b.py"], ["search-text", "beta"]),
        (["symbols", "beta", "--lang", "python", "--language", "rust"], ["symbols", "beta"]),
        (["search", "beta", "--kind", "function", "--kind", "class"], ["search", "beta"]),
        (["sources", "--path", "b.py", "--pattern", "c.py"], ["sources", "--pattern", "b.py"]),
    ],
)
def test_a_filter_given_twice_is_refused(make_repo, twice: list[str], once: list[str]) -> None:
    # `--path src/ --path tests/` searched tests/ alone: click kept the last value, silently.
    # (search-text's argv goes through its fast path first.)
    root = make_repo({"b.py": 'def beta():\n    """The beta value."""\n    return 2\n'})
    assert run_cli("index", root).returncode == 0
    done = run_cli(*twice, "--root", root)
    assert done.returncode == 2, done.stdout
    assert "given more than once" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert run_cli(*once, "--root", root).returncode == 0
    # a value that looks like a filter is a value: a heading named `--path`
    heading = run_cli("show", "--section", "--path", "--path", "b.py", "--root", root)
    assert "given more than once" not in heading.stderr


@pytest.mark.parametrize("command", ["search", "search-text", "symbols"])
@pytest.mark.parametrize(
    "option, missing, note, present",
    [
        # A typo in --path answered "nothing matches" alone, as if the words were not found.
        ("--path", "scr/", "no indexed file matches --path scr/", "src/"),
        # So did `--lang cpp` on a C project (a search user's report).
        ("--lang", "cpp", "no indexed file is in --lang cpp", "c"),
    ],
)
def test_an_empty_answer_says_when_a_filter_names_no_indexed_file(
    make_repo, command: str, option: str, missing: str, note: str, present: str
) -> None:
    root = make_repo({"src/b.c": "/* The beta value. */\nint beta(void) { return 2; }\n"})
    assert run_cli("index", root).returncode == 0
    done = run_cli(command, "beta", option, missing, "--root", root)
    assert done.returncode == 1 and note in done.stderr
    # --json says it in the envelope's notes (`search --json` said nothing anywhere)
    as_json = run_cli(command, "beta", option, missing, "--root", root, "--json")
    assert as_json.returncode == 1 and note in json.loads(as_json.stdout)["notes"]
    found_nothing = run_cli(command, "zzqv", option, present, "--root", root)
    assert found_nothing.returncode == 1 and option not in found_nothing.stderr
    assert run_cli(command, "beta", option, present, "--root", root).returncode == 0


def test_refs_says_when_its_path_names_no_indexed_file_in_text_and_in_json(make_repo) -> None:
    root = make_repo(
        {"src/b.c": "int beta(void) { return 2; }\nint gamma(void) { return beta(); }\n"}
    )
    assert run_cli("index", root).returncode == 0
    note = "no indexed file matches --path scr/"
    plain = run_cli("refs", "beta", "--path", "scr/", "--root", root)
    assert plain.returncode == 1 and f"note: {note}" in plain.stderr
    as_json = run_cli("refs", "beta", "--path", "scr/", "--root", root, "--json")
    assert as_json.returncode == 1 and note in json.loads(as_json.stdout)["notes"]
    assert run_cli("refs", "beta", "--path", "src/", "--root", root).returncode == 0


@pytest.mark.parametrize(
    "command", [["search-text", "alpha"], ["search", "alpha"], ["search-text", "alpha", "--json"]]
)
def test_a_reader_that_stops_reading_ends_the_command_with_status_0(
    make_repo, command: list[str]
) -> None:
    # `repomap search Q | head -1` exited 1, "nothing found" (click's, and rich's), where rg
    # exits 0: the reader had what it wanted.
    import subprocess
    import sys

    body = "".join(
        f'def alpha_{n}():\n    """The alpha number {n} of the long list."""\n    return {n}\n'
        for n in range(1200)
    )
    root = make_repo({"many.py": body})
    assert run_cli("index", root).returncode == 0
    script = Path(sys.executable).with_name("repomap")  # the console script: the fast path
    assert script.exists()
    for program in ([sys.executable, "-m", "repomap.cli"], [str(script)]):
        reader = subprocess.Popen(
            [*program, *command, "--root", str(root), "--limit", "1000"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert reader.stdout is not None and reader.stderr is not None
        assert reader.stdout.readline()
        reader.stdout.close()  # before the answer (well over a pipe's 64 KiB) is written
        assert reader.wait(timeout=60) == 0, program
        assert reader.stderr.read() == b""


def test_an_operator_is_found_however_its_name_is_spaced(make_repo) -> None:
    # The index spells `operator <<` as `operator<<`; `symbols 'S::operator <<'` found nothing.
    root = make_repo({"s.h": "struct S {\n  S& operator <<(int v) { return *this; }\n};\n"})
    assert run_cli("index", root).returncode == 0
    for asked in ("S::operator <<", "S::operator<<"):
        done = run_cli("symbols", asked, "--root", root, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"][0]["qualified_name"] == "S::operator<<"
        assert run_cli("show", asked, "--root", root).returncode == 0


def test_a_checkout_copied_with_its_index_is_answered_from_the_copy(tmp_path) -> None:
    """`cp -r a b` copies a's `.repomap/` too: `--root b` read the index as a's (it names a as
    its root), showed a's lines, gave paths under a, refreshed against a (b's new code was not
    found) and `status` said `root: a`. An index in a tree's own `.repomap/` is that tree's."""
    import shutil

    first = indexed_tree(
        tmp_path / "a", {"m.py": 'def alpha():\n    """The alpha sum."""\n    return 1\n'}
    )
    copy = tmp_path / "b"
    shutil.copytree(first, copy)
    with open(copy / "m.py", "a", encoding="utf-8") as file:
        file.write('\n\ndef zebra_stripes():\n    """Paint zebra stripes."""\n    return 2\n')
    (copy / "m.py").write_text((copy / "m.py").read_text().replace("return 1", "return 42"))
    shown = run_cli("show", "alpha", "--root", copy)
    assert shown.returncode == 0 and "return 42" in shown.stdout, shown.stdout
    found = run_cli("search", "paint zebra stripes", "--root", copy, "--absolute", "--json")
    assert found.returncode == 0, found.stderr
    paths = {hit["path"] for hit in json.loads(found.stdout)["results"]}
    assert paths == {str((copy / "m.py").resolve())}
    status = json.loads(run_cli("status", copy, "--json").stdout)["results"][0]
    assert status["root"] == str(copy.resolve())
    assert run_cli("show", "alpha", "--root", first).stdout.count("return 1") == 1  # a's own


@pytest.mark.parametrize("command", [["search", "x"], ["symbols", "x"], ["search-text", "x"]])
def test_a_root_that_does_not_exist_is_said_so(tmp_path, command) -> None:
    # not "no index at ...; run `repomap index` first": there is nothing there to index
    done = run_cli(*command, "--root", tmp_path / "nowhere")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: --root {tmp_path / 'nowhere'}: not a directory"
    ]


def _same_size_edit_with_mtime_put_back(path: Path, old: str, new: str) -> None:
    """An edit `cp -p` or `rsync -t` leaves: the same length, the old mtime."""
    assert len(old) == len(new)
    stat = path.stat()
    path.write_text(path.read_text().replace(old, new))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_show_reads_again_a_file_whose_bytes_changed_under_the_same_size_and_mtime(tmp_path):
    # size and mtime say unchanged, the bytes differ: `show` refused the file ("run `repomap
    # index`", which read nothing: only --force did), in the CLI and through MCP alike.
    root = indexed_tree(tmp_path / "repo", FILES)
    _same_size_edit_with_mtime_put_back(root / "src" / "app.py", "return 1", "return 7")
    done = _cli(root, "show", "main")
    assert done.returncode == 0, done.stderr
    assert "return 7" in done.stdout
    indexed = json.loads(_cli(root, "search-text", "application", "--json").stdout)
    assert indexed["count"] == 1  # the file's other rows were written again, none lost


def test_index_reread_reads_a_file_whose_size_and_mtime_are_as_indexed(tmp_path):
    # `repomap index` saw no change (stat only); `--force` read every file. `--reread PATH`
    # reads that one, as show's error now says, and the HTTP server's child indexer is given it.
    root = indexed_tree(tmp_path / "repo", FILES)
    _same_size_edit_with_mtime_put_back(root / "src" / "app.py", "return 1", "return 7")
    stale = _cli(root, "show", "main", "--no-refresh")
    assert stale.returncode == 2 and "`--reread src/app.py`" in stale.stderr
    unseen = json.loads(_cli(root, "index", "--json").stdout)["results"][0]
    assert unseen["modified"] == 0
    seen = json.loads(_cli(root, "index", "--reread", "src/app.py", "--json").stdout)["results"][0]
    assert seen["modified"] == 1
    assert "return 7" in _cli(root, "show", "main", "--no-refresh").stdout
    outside = _cli(root, "index", "--reread", str(tmp_path / "elsewhere.py"))
    assert outside.returncode == 2 and "is not inside" in outside.stderr


def test_the_servers_child_indexer_passes_the_files_to_read_again(tmp_path):
    from repomap import config
    from repomap.serve.reindex import ChildIndexer

    root = indexed_tree(tmp_path / "repo", FILES)
    _same_size_edit_with_mtime_put_back(root / "src" / "app.py", "return 1", "return 7")
    settings = config.resolve(root)._replace(reread=frozenset({"src/app.py"}))
    assert ChildIndexer()(settings).modified == 1
