"""The gateway: outline, show --section, open, sources, files; path safety everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import run_cli
from docs_fixture import README, REPO
from mcp.client import Client

from repomap import config, store
from repomap.errors import BadArgument, OutsideRoot, PathNotFound, StaleIndex
from repomap.gateway import files as gateway
from repomap.gateway import section as docs
from repomap.serve.mcp_server import build_server

OUTLINE = """\
README.md
  # Project  L1-22
    ## Install  L5-7
    ## Usage  L9-22
      ### Configure  L11-18
      ### Search — advanced  L20-22
docs/guide.md
  # Guide  L6-16
    ## Install  L9-11
    ## Troubleshooting  L13-16
src/app.py
  class App  L1-8
    method run  L4-8
      function inner  L5-6
  function main  L11-12
"""

SOURCES = """\
docs/
  data.json
  guide.md
  notes.txt
src/
  pkg/
    __init__.py
  app.py
.gitignore
README.md
"""


@pytest.fixture
def repo(make_repo, index) -> Path:
    root = make_repo(REPO)
    index(root)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


def cli(root: Path, *args: str):
    return run_cli(*args, cwd=root)


def _bump_mtime(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


# --- path safety -----------------------------------------------------------------------------

ESCAPES = [
    "../x",
    "../outside/secret.txt",
    "/etc/passwd",
    "docs/../../outside/secret.txt",
    "a/../../b",
    "link_out",
    "link_dir_out/secret.txt",
]


@pytest.fixture
def linked(repo: Path, outside: Path) -> Path:
    (repo / "link_out").symlink_to(outside / "secret.txt")
    (repo / "link_dir_out").symlink_to(outside)
    (repo / "link_in.md").symlink_to(repo / "README.md")
    return repo


@pytest.mark.parametrize("path", ESCAPES)
def test_paths_leading_outside_the_root_are_refused(linked, path):
    with pytest.raises(OutsideRoot, match="outside the repository root"):
        gateway.resolve_path(linked, path)


@pytest.mark.parametrize("path", ESCAPES)
def test_open_refuses_every_escape_in_one_line(linked, path):
    result = cli(linked, "open", path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and "outside the repository root" in result.stderr
    assert result.stderr.count("\n") == 1 and "secret" not in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("outline", "../outside"),
        ("outline", "/etc/passwd"),
        ("outline", "link_out"),
        ("sources", "--dir", "../outside"),
        ("sources", "--dir", "a/../../b"),
        ("sources", "--dir", "link_dir_out"),
        ("show", "--section", "Install", "--file", "../outside/secret.txt"),
        ("show", "--section", "Install", "--file", "link_out"),
    ],
)
def test_every_command_taking_a_path_refuses_escapes(linked, args):
    result = cli(linked, *args)
    assert result.returncode == 2, result.stderr
    assert "outside the repository root" in result.stderr and result.stdout == ""


def test_paths_that_stay_inside_are_accepted_however_they_are_written(linked):
    assert gateway.resolve_path(linked, "docs/../README.md").rel_path == "README.md"
    assert (
        gateway.resolve_path(linked, str(linked / "docs" / "guide.md")).rel_path == "docs/guide.md"
    )
    inside_link = gateway.resolve_path(linked, "link_in.md")
    assert (inside_link.rel_path, inside_link.real_rel_path) == ("link_in.md", "README.md")
    assert gateway.resolve_path(linked, ".").rel_path == ""
    assert cli(linked, "open", "link_in.md").stdout == README


def test_a_nul_byte_in_a_path_is_a_usage_error(repo):
    with pytest.raises(BadArgument):
        gateway.resolve_path(repo, "README.md\0.txt")


# --- open ------------------------------------------------------------------------------------


def test_open_prints_the_file_as_it_is(repo):
    raw = b"line one\r\n\xff not utf-8\r\nno final newline"
    (repo / "raw.bin").write_bytes(raw)
    result = subprocess.run(
        [sys.executable, "-m", "repomap.cli", "open", "raw.bin"], cwd=repo, capture_output=True
    )
    assert (result.returncode, result.stdout) == (0, raw)


def test_open_max_lines_cuts_and_counts_the_rest(repo):
    result = cli(repo, "open", "README.md", "--max-lines", "3")
    assert (
        result.stdout == "# Project\n\nIntro: repomap indexes code and docs.\n... (19 more lines)\n"
    )
    assert cli(repo, "open", "README.md", "--max-lines", "22").stdout == README
    assert cli(repo, "open", "README.md", "--max-lines", "0").stdout == "... (22 more lines)\n"
    # one line left out is one line ("(1 more lines)" read as a typo)
    assert cli(repo, "open", "README.md", "--max-lines", "21").stdout.endswith(
        "... (1 more line)\n"
    )


def test_open_max_lines_on_a_file_without_final_newline(repo):
    (repo / "short.txt").write_text("a\nb\nc")
    assert cli(repo, "open", "short.txt", "--max-lines", "2").stdout == "a\nb\n... (1 more line)\n"
    assert cli(repo, "open", "short.txt", "--max-lines", "3").stdout == "a\nb\nc"


@pytest.mark.parametrize(
    "content", [b"", b"a", b"a\n", b"a\nb", b"a\n\n", b"\n", b"x\n" * 9 + b"y"]
)
@pytest.mark.parametrize("max_lines", [None, 0, 1, 2, 5])
@pytest.mark.parametrize("chunk", [3, 1 << 20])
def test_open_counts_lines_like_an_editor_however_the_rest_is_streamed(
    tmp_path, monkeypatch, content, max_lines, chunk
):
    monkeypatch.setattr(gateway, "READ_CHUNK", chunk)
    (tmp_path / "f").write_bytes(content)
    lines = content.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    view = gateway.open_file(tmp_path, "f", max_lines)
    assert view.line_count == len(lines)
    more = 0 if max_lines is None else max(0, len(lines) - max_lines)
    assert view.more_lines == more
    kept = lines if max_lines is None else lines[:max_lines]
    assert view.content == (content if not more else b"".join(line + b"\n" for line in kept))


def test_open_lines_reads_a_range(repo):
    readme = README.splitlines(keepends=True)
    assert cli(repo, "open", "README.md", "--lines", "5:7").stdout == "".join(readme[4:7])
    assert cli(repo, "open", "README.md", "--lines", "21:").stdout == "".join(readme[20:])
    assert cli(repo, "open", "README.md", "--lines", ":2").stdout == "".join(readme[:2])
    assert cli(repo, "open", "README.md", "--lines", "3").stdout == readme[2]
    assert cli(repo, "open", "README.md", "--lines", "20:99").stdout == "".join(readme[19:])
    cut = cli(repo, "open", "README.md", "--lines", "5:9", "--max-lines", "2")
    assert cut.stdout == "".join(readme[4:6]) + "... (3 more lines)\n"
    view = gateway.open_file(repo, "README.md", lines=gateway.parse_line_range("9:11"))
    assert (view.first_line, view.line_count, view.more_lines) == (9, 22, 0)
    (repo / "latin.py").write_bytes(LATIN1)
    assert cli(repo, "open", "latin.py", "--lines", "3").stdout == "    return 'café crème'\n"


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            "0:3",
            "error: --lines takes A:B, A: or :B with line numbers from 1 (e.g. 10:20), not '0:3'",
        ),
        (
            "a:b",
            "error: --lines takes A:B, A: or :B with line numbers from 1 (e.g. 10:20), not 'a:b'",
        ),
        (":", "error: --lines takes A:B, A: or :B with line numbers from 1 (e.g. 10:20), not ':'"),
        ("9:5", "error: --lines 9:5 ends before it starts"),
        ("23:30", "error: line 23 is past the end of README.md (22 lines)"),
    ],
)
def test_open_lines_out_of_range_is_a_one_line_error(repo, lines, message):
    result = cli(repo, "open", "README.md", "--lines", lines)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", message + "\n")


def test_open_refuses_what_is_not_a_regular_file(repo):
    os.mkfifo(repo / "pipe")
    result = cli(repo, "open", "pipe")
    assert (result.returncode, result.stderr) == (2, "error: pipe is not a regular file\n")


def test_open_a_directory_or_a_missing_file_says_what_it_is(repo):
    folder = cli(repo, "open", "docs")
    assert folder.returncode == 2
    assert (
        folder.stderr
        == "error: docs is a directory; `repomap sources --dir docs` lists what is in it\n"
    )
    missing = cli(repo, "open", "docs/nope.md")
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: docs/nope.md does not exist under ")
    assert "`repomap files nope.md`" in missing.stderr


def test_open_reads_ignored_files_too(repo):
    assert cli(repo, "open", "build/out.txt").stdout == "ignored build output\n"


# --- sources ---------------------------------------------------------------------------------


def test_sources_lists_directories_first_in_bytewise_order(repo):
    result = cli(repo, "sources")
    assert (result.returncode, result.stdout) == (0, SOURCES)


def test_sources_collapses_directories_below_depth(repo):
    expected = "docs/ (3 files)\nsrc/ (2 files)\n.gitignore\nREADME.md\n"
    assert cli(repo, "sources", "--depth", "1").stdout == expected
    assert cli(repo, "sources", "--depth", "2").stdout == SOURCES.replace(
        "  pkg/\n    __init__.py\n", "  pkg/ (1 files)\n"
    )


def test_sources_limit_cuts_with_a_count_of_the_rest(repo):
    expected = "docs/ (3 files)\nsrc/ (2 files)\n.gitignore\n... (1 more)\n"
    assert cli(repo, "sources", "--depth", "1", "--limit", "3").stdout == expected
    assert (
        cli(repo, "sources", "--limit", "4").stdout
        == "docs/ (3 files)\nsrc/ (2 files)\n.gitignore\nREADME.md\n"
    )


def test_sources_without_depth_shows_the_deepest_tree_that_fits(repo):
    # 10 entries fully expanded, 8 at depth 2, 4 at depth 1.
    assert gateway.sources(repo, limit=10).depth == 3
    assert gateway.sources(repo, limit=9).depth == 2
    assert gateway.sources(repo, limit=7).depth == 1


def test_sources_dir_and_pattern(repo):
    assert cli(repo, "sources", "--dir", "docs").stdout == "data.json\nguide.md\nnotes.txt\n"
    assert cli(repo, "sources", "--dir", "docs/").stdout == "data.json\nguide.md\nnotes.txt\n"
    assert cli(repo, "sources", "--pattern", "*.md").stdout == "docs/\n  guide.md\nREADME.md\n"
    assert (
        cli(repo, "sources", "--pattern", "src/*").stdout
        == "src/\n  pkg/\n    __init__.py\n  app.py\n"
    )
    assert cli(repo, "sources", "--pattern", "*.nothing").stdout == ""


def test_sources_json_carries_paths_counts_and_the_cut(repo):
    result = json.loads(
        cli(repo, "sources", "--depth", "1", "--limit", "1", "--format", "json").stdout
    )
    assert result["results"] == [
        {"path": "docs/", "name": "docs", "kind": "dir", "depth": 1, "files": 3, "expanded": False}
    ]
    assert (result["more"], result["truncated"], result["total_files"]) == (3, True, 7)
    same = cli(repo, "sources", "--depth", "1", "--limit", "1", "--json").stdout
    assert json.loads(same) == result  # --format json is --json


def test_sources_dir_must_be_a_directory_inside_the_root(repo):
    assert cli(repo, "sources", "--dir", "README.md").stderr == (
        "error: README.md is a file, not a directory; `repomap open README.md` shows it\n"
    )
    assert cli(repo, "sources", "--dir", "nope").returncode == 2


# --- files -----------------------------------------------------------------------------------


@pytest.fixture
def names(make_repo) -> Path:
    return make_repo(
        {
            "B_config.py": "",
            "a_config.py": "",
            "src/Config.rs": "",
            "src/configure.md": "",
            "caf\u00e9_config.txt": "",  # é composed
            "cafe\u0301.txt": "",  # e + combining acute
            "configs/readme.txt": "",
            "ignored/config.py": "",
            ".gitignore": "ignored/\n",
        }
    )


def test_files_match_a_literal_substring_of_the_name_in_code_point_order(names):
    assert cli(names, "files", "config").stdout == (
        "B_config.py\na_config.py\ncaf\u00e9_config.txt\nsrc/configure.md\n"
    )


def test_files_ignore_case(names):
    assert cli(names, "files", "CONFIG", "--ignore-case").stdout == (
        "B_config.py\na_config.py\ncaf\u00e9_config.txt\nsrc/Config.rs\nsrc/configure.md\n"
    )
    assert cli(names, "files", "CONFIG").stdout == ""


def test_files_compare_code_points_without_normalizing(names):
    assert gateway.find_files(names, "caf\u00e9").paths == ["caf\u00e9_config.txt"]
    assert gateway.find_files(names, "cafe\u0301").paths == ["cafe\u0301.txt"]


def test_files_with_a_slash_match_the_path(names):
    assert gateway.find_files(names, "s/read").paths == ["configs/readme.txt"]
    assert gateway.find_files(names, "src/").paths == ["src/Config.rs", "src/configure.md"]


def test_files_with_glob_characters_match_as_a_glob_too(names, make_repo):
    # `find_files("*.c")` answered nothing: a glob is read as --path reads one
    assert gateway.find_files(names, "*.py").paths == ["B_config.py", "a_config.py"]
    assert gateway.find_files(names, "src/*.rs").paths == ["src/Config.rs"]
    assert gateway.find_files(names, "*.RS", ignore_case=True).paths == ["src/Config.rs"]
    assert gateway.find_files(names, "*.RS").paths == []
    cased = make_repo({"src/Main.C": "", "src/main.c": ""}, names.parent / "cased")
    assert gateway.find_files(cased, "*.c", ignore_case=True).paths == ["src/Main.C", "src/main.c"]
    literal = make_repo({"pages/[slug].py": "", "pages/s.py": ""}, names.parent / "pages")
    assert gateway.find_files(literal, "[slug]").paths == ["pages/[slug].py"]  # as written too


def test_files_naming_a_folder_alone_gives_its_files_and_says_so(names):
    # `files debian` found nothing though debian/ held the package's files (a search user)
    found = gateway.find_files(names, "configs")
    assert (found.paths, found.by_folder) == (["configs/readme.txt"], True)
    assert gateway.find_files(names, "readme").by_folder is False  # a name holds it
    done = cli(names, "files", "configs")
    assert done.stdout == "configs/readme.txt\n" and "no file name holds 'configs'" in done.stderr


def test_files_json_says_when_the_limit_cut_the_list(names):
    cut = json.loads(cli(names, "files", "config", "--limit", "2", "--json").stdout)
    assert cut == {
        "results": [{"path": "B_config.py"}, {"path": "a_config.py"}],
        "count": 2,
        "truncated": True,
        "query": "config",
        "total": 4,
    }
    whole = json.loads(cli(names, "files", "config", "--json").stdout)
    assert whole["truncated"] is False and whole["count"] == 4
    assert (
        cli(names, "files", "config", "--limit", "2").stdout
        == "B_config.py\na_config.py\n... (2 more)\n"
    )


# --- outline ---------------------------------------------------------------------------------


def test_outline_of_the_repository(repo):
    result = cli(repo, "outline")
    assert (result.returncode, result.stdout, result.stderr) == (0, OUTLINE, "")


def test_outline_level_limits_heading_levels_and_symbol_depth(repo):
    assert cli(repo, "outline", "--level", "1").stdout == (
        "README.md\n  # Project  L1-22\ndocs/guide.md\n  # Guide  L6-16\n"
        "src/app.py\n  class App  L1-8\n  function main  L11-12\n"
    )
    level2 = cli(repo, "outline", "--level", "2").stdout
    assert "### Configure" not in level2 and "## Usage" in level2
    assert "method run" in level2 and "function inner" not in level2


def test_outline_of_one_file_or_one_directory(repo):
    assert cli(repo, "outline", "src/app.py").stdout == OUTLINE[OUTLINE.index("src/app.py") :]
    guide = OUTLINE[OUTLINE.index("docs/guide.md") : OUTLINE.index("src/app.py")]
    assert cli(repo, "outline", "docs").stdout == guide
    assert cli(repo, "outline", "docs/notes.txt").stdout == "docs/notes.txt\n  (no headings)\n"
    assert (
        cli(repo, "outline", "src/pkg/__init__.py").stdout
        == "src/pkg/__init__.py\n  (no symbols)\n"
    )


def test_outline_of_a_file_that_is_not_indexed_says_why(repo):
    (repo / "docs" / "notes.ini").write_text("[core]\nname = x\n")
    result = cli(repo, "outline", "docs/notes.ini", "--no-refresh")
    assert result.returncode == 2
    assert (
        "is not in the index" in result.stderr and "`repomap open docs/notes.ini`" in result.stderr
    )
    data = cli(repo, "outline", "docs/data.json")  # a data file: its keys (test_records)
    assert data.returncode == 0 and data.stdout.startswith("docs/data.json\n")
    assert cli(repo, "outline", "nope.md").returncode == 2  # no such file: an error, as for grep


def test_outline_nests_a_symbol_without_a_parent_in_the_file_under_what_encloses_it(
    make_repo, index
):
    # Methods defined out of their class inside a namespace have no parent in this file: they
    # were shown at the top, and the namespace's next function indented below the last of them,
    # as if it were that method's child. Two definitions on one line stay side by side.
    root = make_repo(
        {
            "src/widget.cpp": (
                '#include "widget.h"\n'
                "namespace ui {\n"
                "Counter::Counter() {}\n"
                "void Counter::setValue(int v) {\n"
                "    value = v;\n"
                "}\n"
                "int helper(int x) { return x * 2; }\n"
                "}\n"
                "struct A { int x; }; struct B { int y; };\n"
                "namespace io::net { int open(); }\n"  # shown as written, not as `net`
            ),
            "src/list.c": (
                "typedef struct node {\n    struct node *next;\n} node_t;\n"
                "int main(void) {\n#define LOCAL 1\n    return LOCAL;\n}\n"
            ),
        }
    )
    index(root)
    assert cli(root, "outline", "src/widget.cpp").stdout == (
        "src/widget.cpp\n"
        "  namespace ui  L2-8\n"
        "    method Counter  L3-3\n"
        "    method setValue  L4-6\n"
        "    function helper  L7-7\n"
        "  struct A  L9-9\n"
        "    field x  L9-9\n"
        "  struct B  L9-9\n"
        "    field y  L9-9\n"
        "  namespace io::net  L10-10\n"
        "    function open  L10-10\n"
    )
    assert cli(root, "outline", "src/list.c").stdout == (
        "src/list.c\n"
        "  type node_t  L1-3\n"
        "    struct node  L1-3\n"
        "      field next  L2-2\n"
        "  function main  L4-7\n"
        "    macro LOCAL  L5-5\n"
    )


def test_outline_max_lines(repo):
    result = cli(repo, "outline", "--max-lines", "2")
    assert result.stdout == "README.md\n  # Project  L1-22\n... (13 more lines)\n"


def test_outline_warns_about_files_changed_since_indexing(repo):
    readme = repo / "README.md"
    readme.write_text("# Rewritten\n")
    _bump_mtime(readme)
    result = cli(repo, "outline", "--no-refresh")  # by default it is re-indexed first
    assert result.stderr == (
        "warning: 1 files changed since they were indexed (README.md); "
        "run `repomap index` for their current outline\n"
    )
    assert result.stdout == OUTLINE


def test_outline_json(repo):
    result = json.loads(cli(repo, "outline", "src/app.py", "--json").stdout)
    assert result["changed"] == []
    [app] = result["results"]
    assert app["path"] == "src/app.py" and app["language"] == "python"
    assert app["entries"][2] == {
        "depth": 3,
        "kind": "function",
        "name": "inner",
        "level": 3,
        "start_line": 5,
        "end_line": 6,
    }


# --- show --section --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("Install", "Install"),
        ("  Install\t", "Install"),
        ("Install — how to install it", "Install"),
        ("Install — ", "Install"),
        ("A — b — c", "A"),
        ("Install—tight dash", "Install—tight dash"),
        ("Install - hyphen", "Install - hyphen"),
        ("## Install", "Install"),
        ("#hashtag", "#hashtag"),
    ],
)
def test_heading_queries_are_trimmed_and_cut_at_an_em_dash(query, expected):
    assert docs.normalize_heading(query) == expected


def test_show_section_prints_the_section_lines(repo):
    result = cli(repo, "show", "--section", "Configure")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == "".join(README.splitlines(keepends=True)[10:18])


def test_show_several_matches_warns_and_shows_the_first_in_path_order(repo):
    result = cli(repo, "show", "--section", "install")
    assert result.returncode == 0
    assert result.stderr == (
        'warning: 2 headings match "install"; showing the first (--nth 2 to 2 or --file to '
        "choose)\n"
    )
    assert result.stdout == "## Install\n\nRun `pip install repomap` before configuring anything.\n"


def test_show_file_picks_among_duplicates(repo):
    result = cli(repo, "show", "--section", "Install", "--file", "docs/guide.md")
    assert (result.stdout, result.stderr) == ("## Install\n\nInstall from source with pip.\n", "")


def test_show_nth_picks_a_duplicate_heading_even_in_one_file(make_repo, index):
    """A heading repeated in one file (`## Example` under each function) could not be reached."""
    root = make_repo(
        {
            "api.md": "# API\n\n## get\n\n### Example\n\nget(1)\n\n## put\n\n### Example\n\n"
            "put(1, 2)\n",
            "more.md": "# More\n\n### Example\n\nmore()\n",
        }
    )
    index(root)
    second = cli(root, "show", "--section", "Example", "--nth", "2")
    assert (second.returncode, second.stderr) == (0, "")
    assert second.stdout == "### Example\n\nput(1, 2)\n"
    third = cli(root, "show", "--section", "Example", "--nth", "3", "--json")
    answer = json.loads(third.stdout)["results"][0]  # the one JSON envelope
    assert answer["file"] == "more.md" and answer["nth"] == 3
    in_file = cli(root, "show", "--section", "example", "--file", "api.md", "--nth", "2")
    assert in_file.stdout == second.stdout
    past = cli(root, "show", "--section", "Example", "--nth", "4")
    assert (past.returncode, past.stdout) == (2, "")
    assert past.stderr == 'error: nth is 4, but 3 headings match "Example": give 1 to 3\n'
    for bad in ("0", "x"):
        refused = cli(root, "show", "--section", "Example", "--nth", bad)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith("error: ") and "--nth" in refused.stderr
    server = build_server(config.resolve(root, workers=1))
    found = anyio.run(_tool, server, "get_section", {"heading": "Example", "nth": 2})
    assert (found["content"], found["nth"], found["notices"]) == (second.stdout, 2, [])
    first = anyio.run(_tool, server, "get_section", {"heading": "Example"})
    assert any("Pass nth= (1 to 3)" in notice for notice in first["notices"])
    too_far = anyio.run(_tool_error, server, "get_section", {"heading": "Example", "nth": 9})
    assert too_far == 'nth is 9, but 3 headings match "Example": give 1 to 3'


async def _tool(server, name: str, arguments: dict) -> dict:
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
        assert not result.is_error, result.content[0].text
        return result.structured_content


async def _tool_error(server, name: str, arguments: dict) -> str:
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
        assert result.is_error
        return result.content[0].text


def test_show_drops_everything_from_an_em_dash_and_trims(repo):
    result = cli(repo, "show", "--section", "  Troubleshooting — when the tokenizer is missing  ")
    assert result.stdout.startswith("Troubleshooting\n---------------\n")
    # A heading that itself has an em dash is found by the part before it.
    assert cli(repo, "show", "--section", "search").stdout.startswith("### Search — advanced\n")
    assert cli(repo, "show", "--section", "Search — advanced").stdout.startswith("### Search")


def test_show_accepts_a_heading_copied_with_its_marks(repo):
    assert cli(repo, "show", "--section", "### Configure").stdout.startswith("### Configure\n")


def test_show_max_lines_marks_the_cut(repo):
    result = cli(repo, "show", "--section", "Usage", "--max-lines", "3")
    assert result.stdout == "## Usage\n\n### Configure\n... (11 more lines)\n"


def test_show_without_a_match_suggests_similar_headings_with_their_files(repo):
    result = cli(repo, "show", "--section", "Instal")
    assert result.returncode == 1 and result.stdout == ""  # nothing found: exit 1, no error
    assert result.stderr == (
        'no heading "Instal"; similar: "Install" (README.md:5), "Install" (docs/guide.md:9)\n'
    )
    substring = cli(repo, "show", "--section", "shoot").stderr
    assert substring == 'no heading "shoot"; similar: "Troubleshooting" (docs/guide.md:13)\n'
    typo = cli(repo, "show", "--section", "Configuer").stderr
    assert '"Configure" (README.md:11)' in typo


def test_show_suggests_at_most_five(make_repo, index):
    root = make_repo({f"d{i}.md": f"# Setup step {i}\n" for i in range(8)})
    index(root)
    db_path = config.resolve(root).db_path
    with pytest.raises(docs.HeadingNotFound) as error, store.reading(db_path) as db:
        docs.show_section(db, root, "setup")
    assert str(error.value).count("Setup step") == 5


def test_show_without_any_match_points_at_outline(repo):
    assert cli(repo, "show", "--section", "zzz").stderr == (
        'no heading "zzz"; `repomap outline` lists the headings\n'
    )


def test_show_section_never_serves_lines_of_a_changed_file(repo):
    readme = repo / "README.md"
    readme.write_text("inserted line\n" + readme.read_text())  # every line moves down
    result = cli(repo, "show", "--section", "Configure", "--no-refresh")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        "error: README.md changed since it was indexed, so its section lines are out of date; "
        "run `repomap index` and try again\n"
    )
    assert cli(repo, "index").returncode == 0
    assert cli(repo, "show", "--section", "Configure").stdout.startswith("### Configure\n")


def test_show_section_of_a_deleted_file_says_to_reindex(repo):
    (repo / "docs" / "guide.md").unlink()
    result = cli(repo, "show", "--section", "Troubleshooting", "--no-refresh")
    assert result.returncode == 2
    assert "docs/guide.md was removed since it was indexed; run `repomap index`" in result.stderr


def test_show_and_search_docs_without_an_index_say_how_to_make_one(make_repo):
    root = make_repo(REPO)
    for args in (("show", "--section", "Install"), ("search-docs", "install")):
        result = cli(root, *args)
        assert result.returncode == 2
        assert "no index at" in result.stderr and "run `repomap index`" in result.stderr


def test_show_and_search_docs_on_a_corrupt_index_say_how_to_fix_it(repo):
    (repo / ".repomap" / "index.db").write_bytes(b"this is not sqlite" * 300)
    for args in (("show", "--section", "Install"), ("search-docs", "install"), ("outline",)):
        result = cli(repo, *args)
        assert result.returncode != 0 and result.stdout == ""
        assert result.stderr.startswith("error: ") and "`repomap index" in result.stderr


def test_show_on_an_index_without_docs_says_to_index(make_repo, tmp_path):
    root = make_repo({"a.py": "x = 1\n"})
    assert run_cli("migrate", "--root", root).returncode == 0
    (root / "README.md").write_text("# Hello\n")
    result = cli(root, "show", "--section", "Hello")
    assert "the index has no Markdown files; run `repomap index`" in result.stderr


def test_show_file_that_is_not_a_doc_or_not_indexed(repo):
    assert cli(repo, "show", "--section", "x", "--file", "src/app.py").stderr == (
        "error: src/app.py is not a Markdown or text file; `repomap open src/app.py` shows it\n"
    )
    (repo / "new.md").write_text("# New\n")
    assert (
        "run `repomap index` to add it"
        in cli(repo, "show", "--section", "New", "--file", "new.md").stderr
    )


def test_show_json_lists_every_match(repo):
    [view] = json.loads(cli(repo, "show", "--section", "Install", "--json").stdout)["results"]
    assert (view["file"], view["start_line"], view["end_line"]) == ("README.md", 5, 7)
    assert [(m["file"], m["start_line"]) for m in view["matches"]] == [
        ("README.md", 5),
        ("docs/guide.md", 9),
    ]


def test_show_needs_a_name_or_a_section(repo):
    assert cli(repo, "show").returncode == 2


def test_unicode_headings_match_regardless_of_case(make_repo, index):
    root = make_repo({"de.md": "# Über uns\ntext\n"})
    index(root)
    with store.reading(config.resolve(root).db_path) as db:
        assert docs.show_section(db, root, "ÜBER UNS").heading == "Über uns"


def test_path_errors_have_their_own_classes(repo):
    with pytest.raises(PathNotFound):
        gateway.open_file(repo, "missing.txt")
    (repo / "added.md").write_text("# Added\n")
    with pytest.raises(StaleIndex), store.reading(config.resolve(repo).db_path) as db:
        gateway.outline(db, repo, "added.md")


# --- search-docs -----------------------------------------------------------------------------


def _search(root: Path, query: str, *args: str) -> list[dict]:
    result = cli(root, "search-docs", query, "--json", *args)
    hits = json.loads(result.stdout)["results"]
    assert result.returncode == (0 if hits else 1), result.stderr  # 1: nothing found
    return hits


def test_search_docs_returns_ranked_sections_with_marked_snippets(repo):
    hits = _search(repo, "tokenizer")
    assert [(h["file"], h["section"], h["start_line"], h["end_line"]) for h in hits] == [
        ("docs/guide.md", "", 1, 4),
        ("docs/guide.md", "Troubleshooting", 13, 16),
    ]
    assert hits[1]["snippet"] == (
        "When the porter [MATCH]tokenizer[/MATCH] is missing, repomap falls back to unicode61."
    )
    assert hits[0]["score"] >= hits[1]["score"] > 0
    assert {"file", "section", "snippet", "score"} <= set(hits[0])


def test_search_docs_stems_with_porter(repo):
    found = [(h["file"], h["section"]) for h in _search(repo, "configuring")]
    assert found == [("README.md", "Configure"), ("README.md", "Install")]
    assert [h["file"] for h in _search(repo, "stem")] == ["docs/notes.txt"]


def test_search_docs_ands_bare_words_and_speaks_the_query_language(repo):
    assert [h["section"] for h in _search(repo, "porter unicode61")] == ["Troubleshooting"]
    assert _search(repo, "porter zebra") == []
    either = {(h["file"], h["section"]) for h in _search(repo, "stemming OR troubleshooting")}
    assert either == {("docs/notes.txt", ""), ("docs/guide.md", "Troubleshooting")}
    assert [h["section"] for h in _search(repo, '"bare words"')] == ["Search — advanced"]
    assert _search(repo, "tokenizer NOT porter")[0]["section"] == ""


def test_search_docs_reports_each_place_once_at_its_best_section(repo):
    # "shell comment" is in Configure, so also in its parents Usage and Project.
    assert [(h["section"], h["start_line"]) for h in _search(repo, "shell comment")] == [
        ("Configure", 11)
    ]
    # Words spread over two subsections are found in the section holding both.
    assert [h["section"] for h in _search(repo, "REPOMAP_DB bare")] == ["Usage"]


def test_search_docs_limit(repo):
    assert len(_search(repo, "install", "--limit", "1")) == 1
    assert len(_search(repo, "install")) == 2


def test_search_docs_text_output(repo):
    result = cli(repo, "search-docs", "configuring")
    assert result.stdout == (  # to a pipe: plain text, no markers (highlighted on a terminal)
        "README.md:11-18  Configure\n"
        "  Set REPOMAP_DB to configure where the index lives. ```sh # Not a heading:"
        " a shell comment repomap index . ```\n"
        "README.md:5-7  Install\n"
        "  Run `pip install repomap` before configuring anything.\n"
    )
    marked = cli(repo, "search-docs", "configuring", "--markers")
    assert marked.stdout == (
        "README.md:11-18  Configure\n"
        "  Set REPOMAP_DB to [MATCH]configure[/MATCH] where the index lives. ```sh # Not a heading:"
        " a shell comment repomap index . ```\n"
        "README.md:5-7  Install\n"
        "  Run `pip install repomap` before [MATCH]configuring[/MATCH] anything.\n"
    )


def test_search_docs_rejects_a_bad_query_in_one_line(repo):
    result = cli(repo, "search-docs", '"never closed')
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1


def test_search_docs_follows_edits_after_reindexing(repo):
    guide = repo / "docs" / "guide.md"
    guide.write_text(guide.read_text().replace("porter tokenizer", "snowball stemmer"))
    _bump_mtime(guide)
    assert cli(repo, "index").returncode == 0
    assert [h["section"] for h in _search(repo, "snowball")] == ["Troubleshooting"]
    assert _search(repo, "porter") == []


def test_search_docs_never_gives_line_numbers_of_a_changed_file(repo):
    readme = repo / "README.md"
    readme.write_text("new first line\n" + readme.read_text())
    result = cli(repo, "search-docs", "configuring", "--json", "--no-refresh")
    assert result.stderr == (
        "warning: README.md changed since indexing (line numbers left out); run `repomap index`\n"
    )
    hits = json.loads(result.stdout)["results"]
    assert [(h["section"], h["start_line"], h["end_line"], h["stale"]) for h in hits] == [
        ("Configure", None, None, True),
        ("Install", None, None, True),
    ]
    text = cli(repo, "search-docs", "configuring", "--no-refresh").stdout
    assert text.startswith("README.md  Configure\n")


def test_search_docs_with_only_punctuation_finds_nothing_and_says_why(repo):
    result = cli(repo, "search-docs", "--", "->")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "warning: left out of the search (no letters or digits): ->\n"


def test_credential_files_are_never_served_or_listed(repo):
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "docs" / "id_rsa").write_text("key\n")
    for path in (".env", "docs/id_rsa"):
        result = cli(repo, "open", path)
        assert result.returncode == 2 and result.stdout == ""
        assert "is a credentials file" in result.stderr
    assert ".env" not in cli(repo, "sources").stdout
    assert cli(repo, "files", "env").stdout == ""


def test_show_file_accepts_a_folder_a_path_tail_or_a_glob_like_show_name(repo):
    for file in ("guide.md", "docs", "docs/*.md", "./docs/guide.md"):
        result = cli(repo, "show", "--section", "Install", "--file", file)
        assert (result.stdout, result.stderr) == (
            "## Install\n\nInstall from source with pip.\n",
            "",
        )
    missing = cli(repo, "show", "--section", "Install", "--file", "nope.md")
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: no indexed Markdown or text file matches nope.md")


def test_index_backed_commands_work_from_anywhere_with_db(repo, tmp_path):
    db = repo / ".repomap" / "index.db"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shown = run_cli("show", "--section", "Configure", "--db", db, cwd=elsewhere)
    assert shown.returncode == 0 and shown.stdout.startswith("### Configure\n")
    found = run_cli("search-docs", "tokenizer", "--db", db, cwd=elsewhere)
    assert found.stdout.startswith("docs/guide.md:1-4") and found.stderr == ""
    assert run_cli("outline", "--db", db, cwd=elsewhere).stdout == OUTLINE


# --- encodings: every reader decodes as the index does (repomap/textfile.py) -------------------

LATIN1 = "# -*- coding: latin-1 -*-\ndef greet():\n    return 'café crème'\n".encode("latin-1")


def test_show_open_and_read_file_decode_a_pep263_file_as_python_does(make_repo, index):
    """show printed U+FFFD for each é of a latin-1 file that declares its encoding."""
    root = make_repo({"latin.py": LATIN1, "notes.md": "# Notes\n\nplain\n"})
    index(root)
    shown = cli(root, "show", "greet")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert (
        shown.stdout == "latin.py:2-3  function greet\n2│def greet():\n3│    return 'café crème'\n"
    )
    source = LATIN1.decode("latin-1")
    assert cli(root, "open", "latin.py").stdout == source
    assert cli(root, "open", "latin.py", "--max-lines", "3").stdout == source
    server = build_server(config.resolve(root, workers=1))
    read = anyio.run(_read_file, server, {"path": "latin.py", "start_line": 3})
    assert read["content"] == "    return 'café crème'\n"


async def _read_file(server, arguments: dict) -> dict:
    async with Client(server) as client:
        return (await client.call_tool("read_file", arguments)).structured_content


def test_open_prints_utf16_and_bom_files_as_utf8_text(repo):
    text = "é\nline two\n"
    (repo / "wide.txt").write_bytes(text.encode("utf-16"))
    (repo / "bom.txt").write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert cli(repo, "open", "wide.txt").stdout == text
    assert cli(repo, "open", "bom.txt").stdout == text


def test_open_sources_and_files_read_the_tree_of_the_index_given_with_db(
    make_repo, index, tmp_path
):
    # Every command that reads an index takes --db; open, sources and files refused it
    # ("No such option"), so with the index outside the project they needed --root too.
    root = make_repo(REPO)
    db = tmp_path / "elsewhere" / "index.db"
    db.parent.mkdir()
    index(root, db)
    away = tmp_path / "away"
    away.mkdir()
    opened = run_cli("open", "src/app.py", "--lines", "1:1", "--db", db, cwd=away)
    assert (opened.returncode, opened.stdout) == (
        0,
        (root / "src/app.py").read_text().split("\n")[0] + "\n",
    )
    found = run_cli("files", "app", "--db", db, "--json", cwd=away)
    assert found.returncode == 0 and [r["path"] for r in json.loads(found.stdout)["results"]] == [
        "src/app.py"
    ]
    tree = run_cli("sources", "--db", db, cwd=away)
    assert tree.returncode == 0 and tree.stdout == SOURCES
    missing = run_cli("files", "app", "--db", tmp_path / "none.db", cwd=away)
    assert missing.returncode == 2 and missing.stderr.startswith("error: no index at")
    assert "Traceback" not in missing.stderr


def test_search_docs_says_how_many_sections_hold_each_word_when_none_holds_all(repo):
    # A search user's "emit a map in flow style" found no section, where "map in flow" found
    # the one it wanted, and nothing said which word to drop.
    result = cli(repo, "search-docs", "porter tokenizer zebra")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "no doc section matches 'porter tokenizer zebra'",
        "note: no docs section holds all 3 words; files holding each alone: porter 1, "
        "tokenizer 1, zebra 0",
    ]
    data = json.loads(cli(repo, "search-docs", "porter tokenizer zebra", "--json").stdout)
    assert data["results"] == [] and data["notes"][0].endswith("porter 1, tokenizer 1, zebra 0")
    # One word, an OR or a NOT: nothing to count one by one.
    assert json.loads(cli(repo, "search-docs", "zebra", "--json").stdout)["notes"] == []
    assert json.loads(cli(repo, "search-docs", "zebra OR okapi", "--json").stdout)["notes"] == []
