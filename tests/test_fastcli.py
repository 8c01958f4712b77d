"""The console script's fast `search-text` (repomap/fastcli.py) against the click command it
stands in for: the real CLI in subprocesses, both ways, with the same index and arguments.

Each case runs `python -m repomap.cli` (click) and `python -X importtime -m repomap` (the
console script's entry), compares exit status, stdout and stderr, and reads from the import log
whether the fast path ran (click never imported) or handed over to click.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import CLI_FILES, indexed_tree

from repomap.cli import common as cli_common
from repomap.cli import fast as fastcli
from repomap.cli import main as cli
from repomap.errors import ExitCode
from repomap.search import text as query

FAST, CLICK = "fast", "click"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("fastcli") / "repo", CLI_FILES)


def run(
    module: str, args: list[str | bytes], env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    importtime = ["-X", "importtime"] if module == "repomap" else []
    return subprocess.run(
        [sys.executable, *importtime, "-m", module, *args],
        capture_output=True,
        env={**os.environ, "REPOMAP_SEARCH_LOG": "0", **(env or {})},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def both(args: list[str | bytes], env: dict | None = None, cwd: Path | None = None) -> tuple:
    """(exit status, stdout, stderr) of both paths, asserted equal, and the path the entry took."""
    entry, click_path = run("repomap", args, env, cwd), run("repomap.cli", args, env, cwd)
    imported = _imported(entry)
    stderr = "".join(
        line + "\n"
        for line in entry.stderr.decode().splitlines()
        if not line.startswith("import time:")
    )
    ours = (entry.returncode, entry.stdout.decode(), stderr)
    theirs = (click_path.returncode, click_path.stdout.decode(), click_path.stderr.decode())
    assert [_comparable(part) for part in ours] == [_comparable(part) for part in theirs]
    if "--json" in args and "click" not in imported:
        assert "rich" not in imported  # rich is for people
    return (*ours, CLICK if "click" in imported else FAST)


def _imported(done: subprocess.CompletedProcess) -> set[str]:
    """The modules a `-X importtime` run imported."""
    lines = done.stderr.decode().splitlines()
    return {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}


def _comparable(output: str | int) -> str | int:
    """The output without what changes from run to run: took_ms, and `(1.2 ms)` in the footer."""
    if isinstance(output, int):
        return output
    output = re.sub(r'^  "took_ms": [0-9.e+-]+,$', '  "took_ms": …,', output, flags=re.MULTILINE)
    return re.sub(r"\(\d+\.\d ms\)", "(… ms)", output)


def test_json_results_are_the_same_and_come_without_click(root: Path) -> None:
    code, stdout, stderr, path = both(
        ["search-text", "connection pool", "--json", "--root", str(root)]
    )
    assert (code, stderr, path) == (0, "", FAST)
    assert [hit["line_number"] for hit in json.loads(stdout)["results"]] == [3]


def test_every_option_and_its_equals_form_give_the_same_results(root: Path) -> None:
    spaced = ["TODO", "--type", "comment", "--limit", "1", "--path", "src/o", "--lang", "python"]
    joined = ["TODO", "--type=comment", "--limit=1", "--path=src/o", "--lang=python"]
    for args in (spaced, joined):
        code, stdout, _, path = both(["search-text", *args, "--json", f"--root={root}"])
        assert (code, path) == (0, FAST)
        assert [r["file_path"] for r in json.loads(stdout)["results"]] == ["src/other.py"]
    db = root / ".repomap" / "index.db"
    for literal in (["--literal", "-i"], ["--ignore-case", "--literal"]):
        code, stdout, _, path = both(
            ["search-text", "failed TO open", *literal, "--json", f"--db={db}"]
        )
        assert (code, path) == (0, FAST)
        assert [r["line_number"] for r in json.loads(stdout)["results"]] == [5]


def test_human_output_is_the_same(root: Path) -> None:
    code, stdout, stderr, path = both(["search-text", "TODO", "--root", str(root)])
    assert (code, path) == (0, FAST)
    assert "src/pool.py:3" in stdout and "2 matches" in stderr


@pytest.mark.parametrize(
    "args, code, message",
    [
        (
            ['"unclosed'],
            ExitCode.USAGE,
            "error: bad query at position 1: this quote is never closed",
        ),
        (["   "], ExitCode.USAGE, "the query is empty"),
        (["pool", "--lang", "java"], ExitCode.USAGE, "error: unknown language 'java'"),
        (["*", "--json"], ExitCode.USAGE, "literal mode"),
    ],
)
def test_a_bad_query_is_the_same_one_line_error(
    root: Path, args: list[str], code: int, message: str
) -> None:
    status, stdout, stderr, _ = both(["search-text", *args, "--root", str(root)])
    assert (status, stdout) == (code, "")
    assert stderr.startswith("error: ") and stderr.count("\n") == 1 and message in stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--limit", "0"],
        ["--limit=1001"],
        ["--limit", "many"],
        ["--type", "comments"],
        ["--type=Comment"],
        ["--limit"],  # no value
        ["--json=yes"],
        ["--limt", "5"],
        ["-t", "comment"],
        ["extra"],
    ],
)
def test_arguments_click_refuses_go_to_click(root: Path, args: list[str]) -> None:
    status, stdout, stderr, path = both(["search-text", "pool", *args, "--root", str(root)])
    assert (status, stdout, path) == (ExitCode.USAGE, "", CLICK)
    assert stderr.startswith("error: ") and stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, path",
    [
        (["->", "--literal"], CLICK),  # a query that starts with a dash
        (["pool", "--limit", "1", "--limit", "2"], CLICK),  # repeated: click keeps the last
        (["--", "->"], CLICK),  # `--` ends the options
        (["pool", "-i", "--literal"], FAST),
        (["pool", "--limit", " 2"], FAST),  # int(" 2") is 2 for click, so for the fast path too
    ],
)
def test_unusual_forms_give_clicks_results(root: Path, args: list[str], path: str) -> None:
    status, stdout, _, taken = both(["search-text", "--json", "--root", str(root), *args])
    assert status == 0 and "results" in json.loads(stdout)
    assert taken == path


def test_other_commands_and_help_go_to_click(root: Path) -> None:
    for args in (["search-text", "--help"], ["--help"], ["stats", "--root", str(root)]):
        done = run("repomap", args)
        assert done.returncode == 0 and "click" in _imported(done), args


def test_a_missing_index_is_the_same_error(tmp_path: Path) -> None:
    for db in (tmp_path / "none.db", tmp_path / "a\nb.db"):  # a line break is shown escaped
        status, stdout, stderr, path = both(["search-text", "pool", "--db", str(db)])
        assert (status, stdout, path) == (ExitCode.NO_INDEX, "", FAST)
        assert stderr.startswith("error: no index at ") and stderr.count("\n") == 1


def test_a_corrupt_or_outdated_index_is_the_same_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    status, _, stderr, path = both(["search-text", "pool", "--db", str(bad)])
    assert status == ExitCode.ERROR and path == FAST and "repomap index" in stderr
    old = tmp_path / "old.db"
    assert run("repomap.cli", ["migrate", "--db", str(old), "--to", "5"]).returncode == 0
    status, _, stderr, path = both(["search-text", "pool", "--db", str(old)])
    assert (status, path) == (ExitCode.NO_INDEX, FAST) and "schema v5" in stderr


def test_a_directory_as_db_or_a_file_as_root_goes_to_click(root: Path, tmp_path: Path) -> None:
    status, _, stderr, path = both(["search-text", "pool", "--db", str(tmp_path)])
    assert (status, path) == (ExitCode.USAGE, CLICK) and "is a directory" in stderr
    status, _, stderr, path = both(["search-text", "pool", "--root", str(root / "src" / "pool.py")])
    assert (status, path) == (ExitCode.USAGE, CLICK) and "is a file" in stderr
    status, _, stderr, path = both(["search-text", "pool", "--db="], cwd=tmp_path)  # Path("")
    assert (status, path) == (ExitCode.ERROR, FAST) and stderr.startswith("error: cannot open")


def test_an_argument_that_is_not_utf8_gets_clicks_message(root: Path) -> None:
    status, _, stderr, path = both([b"search-text", b"caf\xe9", b"--root", bytes(root)])
    assert (status, path) == (ExitCode.USAGE, CLICK)
    assert stderr == "error: argument 2 is not valid UTF-8 text\n"


def test_an_ascii_stdout_is_left_to_click_which_writes_utf8(root: Path) -> None:
    """Click re-encodes an ASCII stdout as UTF-8; a plain write would fail on `…` or `é`."""
    args = ["search-text", "pool", "--json", "--root", str(root)]
    status, stdout, _, path = both(args, env={"PYTHONIOENCODING": "ascii"})
    assert (status, path) == (0, CLICK) and json.loads(stdout)["results"]


def test_both_paths_log_the_same_search(root: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    shutil.copy(root / ".repomap" / "index.db", db)
    for module in ("repomap", "repomap.cli"):
        for query_text in ("TODO", '"unclosed'):
            run(module, ["search-text", query_text, "--db", str(db), "--limit=3"],
                env={"REPOMAP_SEARCH_LOG": "1"})  # fmt: skip
    lines = (tmp_path / "index-search-log.jsonl").read_text().splitlines()
    events = [
        {k: v for k, v in json.loads(line).items() if k not in ("time", "ms")} for line in lines
    ]
    assert len(events) == 4 and events[:2] == events[2:]
    assert events[0]["results"] == 2 and events[1]["error"]


def test_the_fast_path_imports_neither_click_nor_rich(root: Path) -> None:
    code = (
        "import sys\n"
        f"sys.argv = ['repomap', 'search-text', 'pool', '--json', '--root', {str(root)!r}]\n"
        "from repomap.fastcli import main\n"
        "status = main()\n"
        "print(status, 'click' in sys.modules, 'rich' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "REPOMAP_SEARCH_LOG": "0"})  # fmt: skip
    assert done.stderr == "None False False\n" and json.loads(done.stdout)["results"]


def test_the_fast_parser_knows_exactly_the_click_commands_options() -> None:
    declared = {
        name: (param.name, param.is_flag)
        for param in cli.search_text.params
        if isinstance(param, click.Option)
        for name in param.opts
    }
    fast = {name: (dest, False) for name, dest in fastcli.VALUE_OPTIONS.items()}
    fast |= {name: (dest, True) for name, dest in fastcli.FLAGS.items()}
    assert declared == fast
    assert set(cli_common.ELEMENT_TYPE_CHOICES) == set(query.ELEMENT_TYPES)
    assert cli_common.MAX_LIMIT == query.MAX_LIMIT


@pytest.mark.parametrize(
    "args, expected",
    [
        (["search-text", "a"], {"query": "a", "limit": 20, "element_type": "all"}),
        (["search-text", "--limit=+7", "a"], {"limit": 7}),
        (["search-text", "a", "--path", "--json"], {"path": "--json", "as_json": False}),
        (["search-text", "a", "--path="], {"path": ""}),
        (["search-text", "a", "--db=x=y"], {"db_path": Path("x=y")}),
        (["search-text", "a", "-i"], {"ignore_case": True, "literal": False}),
        (["search-text", ""], {"query": ""}),
        (["search-text"], None),
        (["search-text", "a", "-"], None),
        (["search-text", "a", "-ij"], None),
        (["search-text", "a", "--json", "--json"], None),
        (["search-text", "a", "--limit", "1e3"], None),
        (["symbols", "a"], None),
        (["--version"], None),
    ],
)
def test_the_fast_parser_reads_what_click_reads(args: list[str], expected: dict | None) -> None:
    parsed = fastcli.parse_search_text(args)
    if expected is None:
        assert parsed is None
    else:
        assert parsed is not None and expected.items() <= parsed.items()
