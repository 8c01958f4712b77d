"""JSON and TOML records carry the line they are written on, although `json` and `tomllib` give
none: `repomap search` and `search-data` answer `pyproject.toml:14`, not line 0. Real files in a
temp dir, the real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli, write_tree

from repomap.index.records import parse

TOML = """\
# a comment with [brackets] and key = "no"
title = "demo"

[project]
name = "demo"
classifiers = [
  "A :: B",  # ] not the end
  "C",
]
urls = {Home = "https://example.org", "Bug tracker" = "https://example.org/issues"}
description = \"\"\"
line = "inside a string"
[not.a.table]
\"\"\"
literal = '''
x = 1
'''
a.b = 1
"quoted.key" = 2

[[bin]]
name = "one"

[[bin]]
name = "two"
[bin.extra]
flag = true
[[bin.steps]]
run = "a"

[[bin]]
name = "three"
[[bin.steps]]
run = "b"

[tool.ruff.lint]
select = ["E", "F"]
"""


def lines_of(fmt: str, text: str) -> dict[str, int | None]:
    return {record.key: record.line for record in parse(fmt, text).records}


def test_toml_leaves_are_placed_on_their_statements_lines() -> None:
    assert lines_of("toml", TOML) == {
        "title": 2,
        "project.name": 5,
        "project.classifiers[0]": 6,  # an array's leaves: its key's line
        "project.classifiers[1]": 6,
        "project.urls.Home": 10,
        'project.urls["Bug tracker"]': 10,
        "project.description": 11,  # what a multi-line string holds is no statement
        "project.literal": 15,
        "project.a.b": 18,
        'project["quoted.key"]': 19,
        "bin[0].name": 22,
        "bin[1].name": 25,
        "bin[1].extra.flag": 27,  # an array of tables' last table
        "bin[1].steps[0].run": 29,
        "bin[2].name": 32,
        "bin[2].steps[0].run": 34,  # an array in each table of an array: counted apart
        "tool.ruff.lint.select[0]": 37,
        "tool.ruff.lint.select[1]": 37,
    }


def test_json_leaves_are_placed_where_their_values_start() -> None:
    text = (
        '{"a": {"b": [1,\n {"c": null}, []],\n "d": "x \\" ] } y"},\n'
        ' "e": {},\n "a b": 3, "dup": 1,\n\n "dup": 2}'
    )
    assert lines_of("json", text) == {
        "a.b[0]": 1,
        "a.b[1].c": 2,
        "a.b[2]": 2,
        "a.d": 3,
        "e": 4,
        '["a b"]': 5,
        "dup": 7,  # written twice: where the value json keeps is
    }
    assert lines_of("json", "[\n1,\n2]") == {"[0]": 2, "[1]": 3}
    assert lines_of("json", '\n"just a string"') == {"value": 2}


def test_search_answers_data_records_with_their_lines(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "repo",
        {
            "pyproject.toml": TOML,
            "package.json": '{\n  "name": "demo",\n  "scripts": {\n    "lint": "eslint ."\n  }\n}\n',
            "app.py": "def main():\n    return 1\n",
        },
    )
    assert run_cli("index", root).returncode == 0
    found = run_cli("search-data", "eslint", "--root", root, "--json")
    assert found.returncode == 0, found.stderr
    assert [(r["file_path"], r["line"]) for r in json.loads(found.stdout)["results"]] == [
        ("package.json", 4)
    ]
    done = run_cli("search", "bug tracker issues", "--mode", "lexical", "--root", root, "--json")
    assert done.returncode == 0, done.stderr
    data_hits = [r for r in json.loads(done.stdout)["results"] if r["kind"] == "data"]
    assert data_hits and all(r["start_line"] >= 1 for r in data_hits)
    assert any(r["path"] == "pyproject.toml" and r["start_line"] <= 10 <= r["end_line"]
               for r in data_hits)  # fmt: skip


def test_a_toml_key_json_cannot_decode_places_nothing_under_it() -> None:
    # An 8-digit `U` escape is TOML's, not JSON's: its table placed nothing, and the table
    # before it took its keys' lines; a statement's multi-line string was read as headers.
    found = lines_of("toml", '[a]\nx = 1\n["\\U0001F600"]\nx = 2\n')
    assert found == {"a.x": 2, '["\U0001f600"].x': None}
    found = lines_of("toml", '"k\\U0001F600" = """\n[a]\nx = 1\n"""\n[b]\ny = 1\n')
    assert found["b.y"] == 6 and "a.x" not in found
