"""The conventions every `repomap` command keeps (issue 16): exit status, the JSON envelope,
flag names, --max-lines, paths, --version; the real CLI in a subprocess on real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import indexed_tree, run_cli
from docs_fixture import REPO

from repomap.cli.main import main


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    extra = {"src/pool.py": "# the pool is open\nOPEN = 1\n# the pool is closed\n"}
    return indexed_tree(tmp_path_factory.mktemp("conventions") / "repo", REPO | extra)


def cli(root: Path, *args: str):
    return run_cli(*args, "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})


# --- --max-lines 0: no lines, only the count of the lines left out ---------------------------


@pytest.mark.parametrize(
    "args, expected",
    [
        (
            ["show", "main", "--max-lines", "0"],
            "src/app.py:11-12  function main\n... (2 more lines)\n",
        ),
        (["show", "--section", "Usage", "--max-lines", "0"], "... (14 more lines)\n"),
        (["outline", "src/app.py", "--max-lines", "0"], "... (5 more lines)\n"),
        (["open", "README.md", "--max-lines", "0"], "... (22 more lines)\n"),
    ],
)
def test_max_lines_0_shows_no_lines_only_how_many_were_left_out(repo, args, expected):
    done = cli(repo, *args)
    assert (done.returncode, done.stdout) == (0, expected), done.stderr


# --- exit status: 0 found, 1 nothing found, 2 error (grep's and rg's) -------------------------

FOUND = [
    ["search", "application", "--mode", "lexical"],
    ["search-text", "application"],
    ["search-docs", "configure"],
    ["symbols", "main"],
    ["files", "guide"],
    ["sources"],
    ["outline"],
    ["show", "main"],
    ["show", "--section", "Configure"],
    ["map"],
    ["open", "README.md"],
]
NOTHING = [
    ["search", "xylophone", "--mode", "lexical"],
    ["search-text", "xylophone"],
    ["search-docs", "xylophone"],
    ["symbols", "xylophone"],
    ["files", "xylophone"],
    ["sources", "--pattern", "*.xyz"],
    ["outline", "*.xyz"],
    ["show", "xylophone"],
    ["show", "--section", "Xylophone"],
]
ERRORS = [
    ["search", "x", "--kind", "bogus"],
    ["search-text", '"never closed'],
    ["search-docs", '"never closed'],
    ["symbols", "main", "--kind", "bogus"],
    ["files", ""],
    ["sources", "--dir", "nope"],
    ["outline", "nope.md"],
    ["open", "nope.txt"],
    ["show", "main", "--max-lines", "-1"],
]


@pytest.mark.parametrize("args", FOUND, ids=" ".join)
def test_a_command_that_finds_something_exits_0(repo, args):
    done = cli(repo, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout and "error" not in done.stderr


@pytest.mark.parametrize("args", NOTHING, ids=" ".join)
def test_a_search_or_lookup_that_finds_nothing_exits_1_without_an_error(repo, args):
    done = cli(repo, *args)
    assert (done.returncode, done.stdout) == (1, "")
    assert "error" not in done.stderr and done.stderr.count("\n") == 1  # it says so


@pytest.mark.parametrize("args", ERRORS, ids=" ".join)
def test_bad_input_exits_2_with_one_error_line(repo, args):
    done = cli(repo, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "command", [["search-text", "x"], ["search-docs", "x"], ["symbols", "x"], ["outline"],
                ["show", "x"], ["show", "--section", "x"], ["map"]], ids=" ".join,
)  # fmt: skip
def test_a_missing_index_exits_2(tmp_path, command):
    done = run_cli(*command, "--db", tmp_path / "none.db", "--root", tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("error: no index at ")


# --- --json: one envelope for every answer; errors stay one line on stderr ---------------------

JSON_ANSWERS = [
    ["index"],
    ["migrate"],
    ["stats"],
    ["outline"],
    ["show", "main"],
    ["show", "--section", "Configure"],
    ["open", "README.md"],
    ["sources"],
    ["files", "guide"],
    ["map"],
    ["search-text", "application"],
    ["search-docs", "configure"],
    ["symbols", "main"],
    ["search", "application", "--mode", "lexical"],
]


@pytest.mark.parametrize("args", JSON_ANSWERS, ids=" ".join)
def test_every_command_answers_json_in_one_envelope(repo, args):
    done = run_cli(*args, "--json", "--root", repo, cwd=repo, env={"REPOMAP_SEARCH_LOG": "0"})
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert list(answer)[:3] == ["results", "count", "truncated"]
    assert isinstance(answer["results"], list) and answer["count"] == len(answer["results"])
    assert isinstance(answer["truncated"], bool)
    assert all(isinstance(item, dict) for item in answer["results"])


@pytest.mark.parametrize(
    "args",
    [["symbols", "a", "--limit", "1"], ["search-docs", "install", "--limit", "1"],
     ["search-text", "pool", "--limit", "1"], ["files", ".", "--limit", "1"],
     ["sources", "--limit", "1"], ["outline", "--max-lines", "1"], ["open", "README.md",
     "--max-lines", "1"], ["show", "App", "--max-lines", "1"], ["map", "--tokens", "32"]],
    ids=" ".join,
)  # fmt: skip
def test_truncated_says_when_more_was_left_out(repo, args):
    answer = json.loads(cli(repo, *args, "--json").stdout)
    assert answer["truncated"] is True and answer["count"] >= 1


@pytest.mark.parametrize("args", NOTHING, ids=" ".join)
def test_nothing_found_is_an_empty_envelope_and_exit_1(repo, args):
    done = cli(repo, *args, "--json")
    assert done.returncode == 1
    answer = json.loads(done.stdout)
    assert (answer["results"], answer["count"], answer["truncated"]) == ([], 0, False)


@pytest.mark.parametrize("args", ERRORS, ids=" ".join)
def test_an_error_under_json_is_one_line_on_stderr_and_nothing_on_stdout(repo, args):
    done = cli(repo, *args, "--json")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


# --- stats counts every command, not only search-text ------------------------------------------


def test_stats_counts_every_command_with_its_errors_and_empty_answers(tmp_path):
    root = indexed_tree(tmp_path / "repo", REPO)
    calls = [["symbols", "main"], ["symbols", "xylophone"], ["symbols", "x", "--kind", "bogus"],
             ["outline"], ["open", "README.md"], ["files", "guide"], ["search-text", "application"],
             ["search-docs", "install"], ["show", "main"], ["map"]]  # fmt: skip
    for args in calls:
        run_cli(*args, "--root", root, cwd=root)
    run_cli("symbols", "main", "--root", root, env={"REPOMAP_SEARCH_LOG": "0"})  # not logged
    done = run_cli("stats", "--json", "--root", root)
    assert done.returncode == 0, done.stderr
    usage = {row["name"]: row for row in json.loads(done.stdout)["results"]}
    assert {row["kind"] for row in usage.values()} == {"command"}
    assert set(usage) == {"symbols", "outline", "open", "files", "search-text", "search-docs",
                          "show", "map"}  # fmt: skip
    symbols = usage["symbols"]
    assert (symbols["calls"], symbols["errors"], symbols["empty"]) == (3, 1, 1)
    assert symbols["average_results"] == 0.5  # 1 and 0 results; the error has none
    assert all(row["calls"] == 1 and row["errors"] == 0 for name, row in usage.items()
               if name != "symbols")  # fmt: skip
    human = run_cli("stats", "--root", root)
    assert "CLI commands" in human.stdout and "search-docs" in human.stdout
    again = {
        row["name"]: row
        for row in json.loads(run_cli("stats", "--json", "--root", root).stdout)["results"]
    }
    assert again["stats"]["calls"] == 2  # stats counts itself too


# --- same flag, same name, same meaning ----------------------------------------------------------


def _options(name: str) -> dict[str, click.Option]:
    command = main.commands[name]
    return {opt: p for p in command.params if isinstance(p, click.Option) for opt in p.opts}


@pytest.mark.parametrize("flag", ["--lang", "--path", "--limit", "--kind", "--json"])
def test_a_flag_means_the_same_in_every_command_that_takes_it(flag):
    takers = {name: _options(name)[flag] for name in main.commands if flag in _options(name)}
    assert takers, flag
    shapes = {  # --lang and --kind: `search` also takes docs formats and the kind `section`
        (p.help if flag not in ("--lang", "--kind") else "", "--language" in p.opts,
         type(p.type).__name__, getattr(p.type, "min", None), getattr(p.type, "max", None))
        for p in takers.values()
    }  # fmt: skip
    assert len(shapes) == 1, (flag, takers.keys(), shapes)


def test_the_flags_that_narrow_a_search_are_everywhere_it_applies():
    for name in ("search-text", "symbols", "search"):
        assert {"--lang", "--language", "--path", "--limit"} <= set(_options(name)), name
    for name in ("search-docs", "files", "sources", "outline", "show"):
        assert "--path" in _options(name), name
    for name in ("search-docs", "files", "sources"):
        assert "--limit" in _options(name), name
    servers = {"mcp", "serve"}  # they serve requests; no envelope to print
    assert set(main.commands) - servers <= {n for n in main.commands if "--json" in _options(n)}


# The commands whose subject is the tree itself take it as `index` does: ROOT or --root.
TREE_COMMANDS = ("index", "watch", "init", "status", "doctor", "clean", "prune")


def test_the_commands_about_the_tree_take_root_as_an_argument_and_as_root():
    for name in TREE_COMMANDS:
        command = main.commands[name]
        arguments = [p.metavar for p in command.params if isinstance(p, click.Argument)]
        assert arguments == ["[ROOT]"], name
        assert _options(name)["--root"].help == _options("search")["--root"].help, name


@pytest.mark.parametrize(
    "args", [["status"], ["doctor"], ["clean", "--dry-run"], ["prune"], ["index"]], ids=" ".join
)
def test_root_as_an_argument_answers_as_root_does(tmp_path, args):
    root = indexed_tree(tmp_path / "repo", REPO).resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"REPOMAP_SEARCH_LOG": "0"}
    given = run_cli(*args, root, "--json", cwd=elsewhere, env=env)
    optioned = run_cli(*args, "--json", "--root", root, cwd=elsewhere, env=env)
    assert given.returncode == optioned.returncode, (given.stderr, optioned.stderr)
    assert given.returncode in (0, 1), given.stderr
    answer, expected = json.loads(given.stdout), json.loads(optioned.stdout)
    for key in ("indexed_at", "index_seconds", "elapsed_ms", "timings_ms", "ms"):
        for row in (answer["results"] + expected["results"]) if args[0] == "index" else []:
            row.pop(key, None)
    if args[0] == "status":  # the two reads of the same index differ only in when they ran
        assert answer["results"][0]["root"] == expected["results"][0]["root"] == str(root)
    elif args[0] == "doctor":  # the details hold the free disk space, which moves between runs
        checks = [[(c["name"], c["outcome"]) for c in a["results"]] for a in (answer, expected)]
        assert checks[0] == checks[1] and checks[0]
    elif args[0] != "index":
        assert answer == expected
    both = run_cli(*args, root, "--root", elsewhere, cwd=elsewhere, env=env)
    assert both.returncode == 2
    assert both.stderr.strip().splitlines() == ["error: give ROOT or --root, not both"]


def test_init_writes_the_config_file_in_the_root_it_is_given(tmp_path):
    (tmp_path / "repo").mkdir()
    done = run_cli("init", tmp_path / "repo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "repo" / "repomap.toml").is_file()
    assert not (tmp_path / "repomap.toml").exists()


@pytest.mark.parametrize(
    "args, same_as",
    [
        (["symbols", "main", "--lang", "py"], ["symbols", "main", "--language", "python"]),
        (["search-text", "pool", "--language", "python"], ["search-text", "pool", "--lang", "py"]),
        (["sources", "--path", "*.md"], ["sources", "--pattern", "*.md"]),
        (["show", "--section", "Install", "--path", "docs/"],
         ["show", "--section", "Install", "--file", "docs/"]),
        (["show", "main", "--path", "src/"], ["show", "main", "--file", "src/"]),
        (["outline", "--path", "src/app.py"], ["outline", "src/app.py"]),
        (["symbols", "a", "--kind", "function,class"], ["symbols", "a", "--kind", "class,function"]),
    ],
)  # fmt: skip
def test_new_names_and_old_spellings_give_the_same_answer(repo, args, same_as):
    new, old = cli(repo, *args, "--json"), cli(repo, *same_as, "--json")
    assert new.returncode == 0, new.stderr
    assert json.loads(new.stdout)["results"] == json.loads(old.stdout)["results"]


@pytest.mark.parametrize("command", [["search-text", "x"], ["search-docs", "x"], ["symbols", "x"],
                                     ["files", "x"], ["sources"], ["search", "x", "--mode",
                                     "lexical"]], ids=" ".join)  # fmt: skip
def test_every_limit_takes_1_to_1000(repo, command):
    assert cli(repo, *command, "--limit", "1000").returncode in (0, 1)
    for bad in ("0", "1001"):
        done = cli(repo, *command, "--limit", bad)
        assert done.returncode == 2 and "'--limit'" in done.stderr and "1<=x<=1000" in done.stderr


@pytest.mark.parametrize("module", ["repomap", "repomap.cli"])  # the script's fast path, click
def test_version_is_the_installed_packages(module):
    from importlib.metadata import version

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, f"repomap {version('repomap')}\n")


# --- paths: relative to ROOT, absolute only with --absolute, text and JSON alike -----------------

PATH_ANSWERS = [
    ["search", "application", "--mode", "lexical"],
    ["search-text", "application"],
    ["symbols", "main"],
    ["search-docs", "configure"],
    ["outline", "src/"],
    ["show", "main", "--context"],
    ["show", "--section", "Configure"],
    ["sources"],
    ["files", "guide"],
    ["map"],
    ["migrate"],
    ["stats"],
    ["index"],
    ["clean", "--dry-run"],
]


@pytest.mark.parametrize("args", PATH_ANSWERS, ids=" ".join)
def test_paths_are_relative_to_root_unless_absolute_is_asked(tmp_path, args):
    root = indexed_tree(tmp_path / "repo", REPO).resolve()
    run_cli("search-text", "x", "--root", root)  # a log for stats to name
    for fmt in ([], ["--json"]):
        relative = run_cli(*args, *fmt, "--root", root, cwd=root)
        assert relative.returncode == 0, relative.stderr
        answer = relative.stdout
        if fmt and args[0] == "index":  # ROOT itself is what the other paths are relative to
            answer = answer.replace(json.dumps(str(root)), '"ROOT"')
        assert str(root) not in answer, (args, fmt)
        absolute = run_cli(*args, *fmt, "--absolute", "--root", root, cwd=root)
        assert absolute.returncode == 0, absolute.stderr
        if fmt or args[:2] not in (["show", "--section"], ["stats"]):  # text without a path
            assert f"{root}/" in absolute.stdout, (args, fmt)
        if args[:2] == ["show", "main"] and not fmt:
            assert absolute.stdout.startswith(f"{root}/src/app.py:11-12")


def test_absolute_paths_in_json_name_the_files(repo):
    root = repo.resolve()
    answer = json.loads(cli(repo, "symbols", "main", "--json", "--absolute").stdout)
    assert answer["results"][0]["file_path"] == f"{root}/src/app.py"
    entries = json.loads(cli(repo, "sources", "--json", "--absolute", "--depth", "1").stdout)
    assert {entry["path"] for entry in entries["results"]} >= {f"{root}/src/", f"{root}/README.md"}
    indexed = json.loads(run_cli("index", "--json", "--root", repo, cwd=repo).stdout)
    assert indexed["results"][0]["db_path"] == ".repomap/index.db"
