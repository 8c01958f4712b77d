"""`repomap search-text` as the console script runs it (`python -m repomap`: the fast path) and
as click runs it (`python -m repomap.cli`), in subprocesses on one index.

The CLI has one definition, the click commands of repomap/cli/; the fast path reads
search-text's options from a table generated from it. These tests pin that the table is the
definition, that both paths answer every argument list alike, what a search reads from its
arguments, prints and exits with, and (through `-X importtime`) that it starts without the
modules it does not need: click on the fast path, rich for --json, sqlite_utils, tree-sitter,
numpy, mcp, and the other commands' definitions.
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

from repomap import limits
from repomap.cli import main as cli
from repomap.errors import ExitCode
from repomap.search import text as query

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_tree(tmp_path_factory.mktemp("cli-entry") / "repo", CLI_FILES)


class Run:
    """A finished `python -X importtime -m repomap …`: its status, its output, what it imported."""

    def __init__(self, done: subprocess.CompletedProcess) -> None:
        lines = done.stderr.decode().splitlines(keepends=True)
        self.code = done.returncode
        self.stdout = done.stdout.decode()
        self.stderr = "".join(line for line in lines if not line.startswith("import time:"))
        self.imported = {
            line.split("|")[-1].strip() for line in lines if line.startswith("import time:")
        }

    def heavy(self) -> set[str]:
        """The imported modules a search does not need."""
        heavy = ("sqlite_utils", "tree_sitter", "numpy", "mcp", "httpx", "pydantic", "anyio")
        ours = ("repomap.cli.commands", "repomap.index", "repomap.gateway", "repomap.serve",
                "repomap.maps")  # fmt: skip
        return {
            name for name in self.imported if name.split(".")[0] in heavy or name.startswith(ours)
        }


def run(
    args: list[str | bytes],
    env: dict | None = None,
    cwd: Path | None = None,
    module: str = "repomap",
) -> Run:
    return Run(
        subprocess.run(
            [sys.executable, "-X", "importtime", "-m", module, *args],
            capture_output=True,
            env={**os.environ, "REPOMAP_SEARCH_LOG": "0", **(env or {})},
            cwd=cwd,
            stdin=subprocess.DEVNULL,
        )
    )


def _comparable(output: str) -> str:
    """The output without what changes from run to run (took_ms, `(1.2 ms)` in the footer) or
    with the module run (the program name in a usage line)."""
    output = re.sub(r'^  "took_ms": [0-9.e+-]+,$', '  "took_ms": …,', output, flags=re.MULTILINE)
    output = output.replace("python -m repomap.cli ", "python -m repomap ")  # the usage line
    return re.sub(r"\(\d+\.\d ms\)", "(… ms)", output)


# Argument lists the fast path reads itself, and ones it hands to click (--help, a repeated
# option, `--`, a refused value, a short-option cluster, a flag given a value, ...).
SAME_ANSWER = [
    ["pool", "--json"],
    ["TODO"],
    ['"unclosed'],
    ["TODO", "--type=comment", "--limit=1", "--path=other.py", "--lang=python", "--json"],
    ["TODO", "--type", "comment", "--limit", "+1", "--json"],
    ["failed TO open", "--literal", "-i", "--json"],
    ["failed TO open", "--ignore-case", "--literal"],
    ["pool", "--path", "--json"],
    ["pool", "--limit", "1", "--limit", "2", "--json"],
    ["--", "->", "--literal", "--json"],
    ["pool", "--limit", "0"],
    ["pool", "--type", "Comment"],
    ["pool", "--json=1"],
    ["pool", "-ij"],
    ["pool", "--lang", "java"],
    ["pool", "--nope"],
    ["pool", "extra"],
    ["--help"],
]


@pytest.mark.parametrize("args", SAME_ANSWER, ids=lambda args: " ".join(args))
def test_the_fast_path_answers_as_click_does(root: Path, args: list[str]) -> None:
    argv = ["search-text", *args, "--root", str(root)]
    fast, click_path = run(argv), run(argv, module="repomap.cli")
    assert (fast.code, _comparable(fast.stdout), _comparable(fast.stderr)) == (
        click_path.code, _comparable(click_path.stdout), _comparable(click_path.stderr)
    )  # fmt: skip
    assert "click" in click_path.imported


def test_the_script_is_the_fast_path_and_its_table_is_the_click_definition() -> None:
    from repomap.cli import search_text_spec, spec

    pyproject = (REPO / "pyproject.toml").read_text()
    scripts = pyproject.split("[project.scripts]\n", 1)[1].split("\n\n", 1)[0]
    assert scripts == 'repomap = "repomap.cli.fastpath:main"'
    generated = spec.spec_of(cli.main.commands["search-text"])
    assert generated == search_text_spec.SPEC, "run `python -m repomap.cli.spec`"
    committed = (REPO / "repomap" / "cli" / "search_text_spec.py").read_text()
    assert committed == spec.source(generated)


def test_a_json_search_imports_only_what_it_needs(root: Path) -> None:
    done = run(["search-text", "connection pool", "--json", "--root", str(root)])
    assert (done.code, done.stderr) == (0, "")
    assert [hit["line_number"] for hit in json.loads(done.stdout)["results"]] == [3]
    assert {"repomap.cli.fastpath", "repomap.search.text"} <= done.imported
    assert "click" not in done.imported  # the fast path read the arguments
    assert "rich" not in done.imported  # rich is for people
    assert done.heavy() == set()


def test_a_search_for_people_adds_only_rich(root: Path) -> None:
    done = run(["search-text", "TODO", "--root", str(root)])
    assert done.code == 0 and "src/pool.py:3" in done.stdout and "2 matches" in done.stderr
    assert "rich" in done.imported and done.heavy() == set()


def test_every_option_and_its_equals_form_give_the_same_results(root: Path) -> None:
    spaced = ["TODO", "--type", "comment", "--limit", "1", "--path", "other.py", "--lang", "python"]
    joined = ["TODO", "--type=comment", "--limit=1", "--path=other.py", "--lang=python"]
    for args in (spaced, joined):
        done = run(["search-text", *args, "--json", f"--root={root}"])
        assert done.code == 0, done.stderr
        assert [r["file_path"] for r in json.loads(done.stdout)["results"]] == ["src/other.py"]
    db = root / ".repomap" / "index.db"
    for literal in (["--literal", "-i"], ["--ignore-case", "--literal"]):
        done = run(["search-text", "failed TO open", *literal, "--json", f"--db={db}"])
        assert done.code == 0, done.stderr
        assert [r["line_number"] for r in json.loads(done.stdout)["results"]] == [5]


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
def test_a_bad_query_is_a_one_line_error(
    root: Path, args: list[str], code: int, message: str
) -> None:
    done = run(["search-text", *args, "--root", str(root)])
    assert (done.code, done.stdout) == (code, "")
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert message in done.stderr


@pytest.mark.parametrize(
    "args, named",
    [
        (["--limit", "0"], "'--limit'"),
        (["--limit=1001"], "'--limit'"),
        (["--limit", "many"], "'--limit'"),
        (["--type", "comments"], "'--type'"),
        (["--type=Comment"], "'--type'"),  # click.Choice is case-sensitive
        (["--limit"], "'--limit'"),  # no value of its own: takes `--root`, not a number
        (["--json=yes"], "'--json'"),
        (["--limt", "5"], "--limt"),
        (["-t", "comment"], "-t"),
        (["extra"], "extra"),
    ],
)
def test_refused_arguments_are_a_one_line_usage_error(
    root: Path, args: list[str], named: str
) -> None:
    done = run(["search-text", "pool", *args, "--root", str(root)])
    assert (done.code, done.stdout) == (ExitCode.USAGE, "")
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    assert named in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_short_option_where_text_is_asked_says_how_to_give_text(root: Path) -> None:
    # `search '-table'` said "No such option '-t'." and no more
    done = run(["search", "-table", "--root", str(root)])
    assert done.code == ExitCode.USAGE and done.stderr.count("\n") == 1
    assert "goes last, after `--`: repomap search [OPTIONS] -- '-table'" in done.stderr
    given = run(["search", "pool", "-l", "3", "--root", str(root)])  # the text is `pool`
    assert given.stderr == "error: No such option '-l'.\n"
    mistyped = run(["search", "pool", "--limt", "3", "--root", str(root)])
    assert mistyped.stderr == "error: No such option '--limt'. Did you mean '--limit'?\n"


@pytest.mark.parametrize(
    "args, searched, at_most",
    [
        (["->", "--literal"], "->", 20),  # a query that starts with a dash
        (["pool", "--limit", "1", "--limit", "2"], "pool", 2),  # repeated: the last counts
        (["--", "->"], "->", 20),  # `--` ends the options
        (["pool", "-i", "--literal"], "pool", 20),
        (["pool", "--limit", " 2"], "pool", 2),  # int(" 2") is 2
    ],
)
def test_unusual_forms_are_read_as_click_reads_them(
    root: Path, args: list[str], searched: str, at_most: int
) -> None:
    done = run(["search-text", "--json", "--root", str(root), *args])
    result = json.loads(done.stdout)
    assert done.code == (0 if result["results"] else 1), done.stderr  # 1: nothing found
    assert result["query"] == searched and len(result["results"]) <= at_most


@pytest.mark.parametrize(
    "args, expected",
    [
        (["a"], {"query": "a", "limit": 20, "element_type": "all", "as_json": False}),
        (["--limit=+7", "a"], {"limit": 7}),
        (["a", "--path", "--json"], {"path": "--json", "as_json": False}),
        (["a", "--path="], {"path": ""}),
        (["a", "--db=x=y"], {"db_path": Path("x=y")}),
        (["a", "-i"], {"ignore_case": True, "literal": False}),
        (
            ["a", "-i", "--literal", "--json"],
            {"ignore_case": True, "literal": True, "as_json": True},
        ),
        ([""], {"query": ""}),
    ],
)
def test_what_search_text_reads_from_its_arguments(args: list[str], expected: dict) -> None:
    params = cli.search_text.make_context("search-text", args).params
    assert expected.items() <= params.items()


def test_the_type_choices_and_limit_bound_are_the_searchs() -> None:
    options = {param.name: param for param in cli.search_text.params}
    element_type, limit = options["element_type"].type, options["limit"].type
    assert isinstance(element_type, click.Choice) and isinstance(limit, click.IntRange)
    assert set(element_type.choices) == set(cli.ELEMENT_TYPE_CHOICES) == set(query.ELEMENT_TYPES)
    assert (limit.min, limit.max) == (1, limits.MAX_LIMIT)


def test_help_lists_every_command_and_other_commands_run(root: Path) -> None:
    listed = run(["--help"])
    assert listed.code == 0
    commands = listed.stdout.split("Commands:\n", 1)[1]
    assert [line.split()[0] for line in commands.splitlines()] == sorted(cli.main.commands)
    assert (
        len(cli.main.commands) == 25
    )  # + search-data, search-commits, history, status, doctor, clean, prune, init, watch, serve, refs
    for args in (["search-text", "--help"], ["stats", "--root", str(root)], ["--version"]):
        done = run(args)
        assert done.code == 0 and done.stdout, args
    typo = run(["stast"])  # near two commands now
    assert typo.code == ExitCode.USAGE and "Did you mean one of: 'stats', 'status'?" in typo.stderr


def test_a_missing_index_is_a_one_line_error(tmp_path: Path) -> None:
    for db in (tmp_path / "none.db", tmp_path / "a\nb.db"):  # a line break is shown escaped
        done = run(["search-text", "pool", "--db", str(db)])
        assert (done.code, done.stdout) == (ExitCode.NO_INDEX, "")
        assert done.stderr.startswith("error: no index at ") and done.stderr.count("\n") == 1
    assert "a\\nb.db" in done.stderr


def test_a_corrupt_or_outdated_index_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database at all" * 100)
    done = run(["search-text", "pool", "--db", str(bad)])
    assert done.code == ExitCode.ERROR and "repomap index" in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
    old = tmp_path / "old.db"
    assert run(["migrate", "--db", str(old), "--to", "5"]).code == 0
    done = run(["search-text", "pool", "--db", str(old)])
    assert done.code == ExitCode.NO_INDEX and "schema v5" in done.stderr


def test_a_directory_as_db_or_a_file_as_root_is_a_usage_error(root: Path, tmp_path: Path) -> None:
    done = run(["search-text", "pool", "--db", str(tmp_path)])
    assert done.code == ExitCode.USAGE and "is a directory" in done.stderr
    done = run(["search-text", "pool", "--root", str(root / "src" / "pool.py")])
    assert done.code == ExitCode.USAGE and "is a file" in done.stderr
    done = run(["search-text", "pool", "--db="], cwd=tmp_path)  # Path("")
    assert done.code == ExitCode.ERROR and done.stderr.startswith("error: cannot open")


def test_an_argument_that_is_not_utf8_is_a_one_line_usage_error(root: Path) -> None:
    done = run([b"search-text", b"caf\xe9", b"--root", bytes(root)])
    assert (done.code, done.stdout) == (ExitCode.USAGE, "")
    assert done.stderr == "error: argument 2 is not valid UTF-8 text\n"


def test_an_ascii_stdout_still_gets_the_results(root: Path) -> None:
    """Click re-encodes an ASCII stdout as UTF-8; a plain write would fail on `…` or `é`."""
    done = run(["search-text", "pool", "--json", "--root", str(root)],
               env={"PYTHONIOENCODING": "ascii"})  # fmt: skip
    assert done.code == 0 and json.loads(done.stdout)["results"]


def test_an_interrupted_search_says_so_in_one_line(root: Path) -> None:
    code = (
        "import sys\n"
        "import repomap.search.text as text\n"
        "def interrupted(*args, **kwargs):\n"
        "    raise KeyboardInterrupt\n"
        "text.search_text = interrupted\n"
        f"sys.argv = ['repomap', 'search-text', 'pool', '--json', '--root', {str(root)!r}]\n"
        "from repomap.cli.MODULE import main\n"
        "sys.exit(main())\n"
    )
    for module in ("main", "fastpath"):
        done = subprocess.run([sys.executable, "-c", code.replace("MODULE", module)],
                              capture_output=True, text=True,
                              env={**os.environ, "REPOMAP_SEARCH_LOG": "0"})  # fmt: skip
        assert (done.returncode, done.stdout) == (130, ""), module
        assert done.stderr == f"error: {cli.INTERRUPTED}\n", module


def test_searches_and_failed_searches_are_logged(root: Path, tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    shutil.copy(root / ".repomap" / "index.db", db)
    for module in ("repomap", "repomap.cli"):
        for query_text in ("TODO", '"unclosed'):
            run(["search-text", query_text, "--db", str(db), "--limit=3"],
                env={"REPOMAP_SEARCH_LOG": "1"}, module=module)  # fmt: skip
    lines = (tmp_path / "index-search-log.jsonl").read_text().splitlines()
    events = [
        {k: v for k, v in json.loads(line).items() if k not in ("time", "ms")} for line in lines
    ]
    searches = [event for event in events if event["kind"] == "search_text"]
    assert len(searches) == 4 and searches[:2] == searches[2:]
    assert searches[0]["results"] == 2 and searches[1]["error"]
    commands = [event for event in events if event["kind"] == "command"]
    assert [(c["command"], c["results"], c["exit"]) for c in commands] == [
        ("search-text", 2, 0),
        ("search-text", None, 2),
    ] * 2
    assert commands[:2] == commands[2:]  # the fast path and click log the same line


def test_the_other_commands_are_set_up_only_when_asked_for() -> None:
    code = (
        "import sys\n"
        "from repomap.cli.main import main\n"
        "before = 'repomap.cli.commands' in sys.modules\n"
        "names = sorted(main.commands)\n"
        "print(before, 'repomap.cli.commands' in sys.modules, len(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout == "False True 25\n", done.stderr


def test_a_db_that_is_no_index_gets_no_log_beside_it(root: Path, tmp_path: Path) -> None:
    # `--db notes.txt` failed rightly (exit 2) and wrote notes-search-log.jsonl beside it.
    notes = tmp_path / "questions" / "notes.txt"
    notes.parent.mkdir()
    notes.write_text("not a database\n")
    done = run(["search", "pool", "--root", str(root), "--db", str(notes)],
               env={"REPOMAP_SEARCH_LOG": "1"}, module="repomap.cli")  # fmt: skip
    assert done.code == 2 and "is not a SQLite database" in done.stderr
    assert sorted(path.name for path in notes.parent.iterdir()) == ["notes.txt"]
