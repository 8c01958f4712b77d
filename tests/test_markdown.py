"""Markdown headings and sections: ATX, setext, fences, front matter, section extents."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from repomap.index.markdown import parse, rst_sections
from repomap.textfile import split_lines


def headings(text: str) -> list[tuple[str, int, int]]:
    return [(h.text, h.level, h.line) for h in parse(textwrap.dedent(text).lstrip("\n")).headings]


def sections(text: str) -> list[tuple[str, int, int, int]]:
    document = parse(textwrap.dedent(text).lstrip("\n"))
    return [(s.name, s.level, s.start_line, s.end_line) for s in document.sections]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("# One\n## Two\n###### Six\n", [("One", 1, 1), ("Two", 2, 2), ("Six", 6, 3)]),
        ("#No space\n####### seven\n    # indented code\n", []),
        ("   # three spaces\n", [("three spaces", 1, 1)]),
        (
            "# Closed ##\n## Hash# kept\n### \\# escaped ###\n",
            [("Closed", 1, 1), ("Hash# kept", 2, 2), ("# escaped", 3, 3)],  # as rendered
        ),
        ("#\n# ##\n", [("", 1, 1), ("", 1, 2)]),
        ("Title\n=====\n\nSub\n---\n", [("Title", 1, 1), ("Sub", 2, 4)]),
        ("Two line\nsetext title\n===\n", [("Two line setext title", 1, 1)]),
        ("para\n\n---\n", []),  # a thematic break after a blank line
        ("- item\n---\n", []),  # a list item is not a paragraph
        ("> quote\n---\n", []),
        ("***\n", []),
        ("text\n# Heading interrupts\n", [("Heading interrupts", 1, 2)]),
        ("# `code` and **bold**\n", [("`code` and **bold**", 1, 1)]),
        ("# Tabs\tinside\t\n", [("Tabs\tinside", 1, 1)]),
    ],
)
def test_headings_follow_commonmark_rules(source: str, expected: list) -> None:
    assert headings(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "```sh\n# comment in shell\n```\n",
        "~~~\n# tilde fence\n~~~\n",
        "````\n```\n# still inside a four-backtick fence\n```\n````\n",
        "~~~~\n~~~\n# a shorter run does not close\n~~~~\n",
        "```\n~~~\n# another character does not close\n```\n",
        "  ```python\n  # indented fence, as in a list item\n  ```\n",
        "```\n# unclosed fence runs to the end\n",
        "<!--\n# commented out\n-->\n",
        "```\nTitle\n=====\n```\n",
    ],
)
def test_nothing_inside_fences_or_comments_is_a_heading(source: str) -> None:
    assert headings(source) == []


def test_a_closed_fence_lets_headings_resume() -> None:
    source = """
        ```sh
        # not a heading
        ```
        # After the fence
        ~~~
        ## not either
        ~~~
        ## Second
        """
    assert headings(source) == [("After the fence", 1, 4), ("Second", 2, 8)]


def test_backticks_on_one_line_are_inline_code_not_a_fence() -> None:
    assert headings("```inline``` text\n# Heading\n") == [("Heading", 1, 2)]


def test_front_matter_is_neither_heading_nor_underline() -> None:
    source = """
        ---
        title: Guide
        # yaml comment
        ---
        # Guide
        """
    assert headings(source) == [("Guide", 1, 5)]
    assert sections(source)[0] == ("", 0, 1, 4)


def test_toml_front_matter_is_skipped_too() -> None:
    assert headings("+++\n# x = 1\n+++\n# Real\n") == [("Real", 1, 4)]


def test_an_unclosed_opening_rule_is_not_front_matter() -> None:
    assert headings("---\n# Heading\n") == [("Heading", 1, 2)]


def test_a_section_runs_to_the_next_heading_of_the_same_or_higher_level() -> None:
    source = """
        intro line

        # A
        a text
        ## A.1
        a1 text
        ### A.1.a
        deep

        ## A.2
        a2 text
        # B
        b text


        """
    assert sections(source) == [
        ("", 0, 1, 1),
        ("A", 1, 3, 11),
        ("A.1", 2, 5, 8),
        ("A.1.a", 3, 7, 8),
        ("A.2", 2, 10, 11),
        ("B", 1, 12, 13),
    ]


def test_section_content_is_the_body_after_the_heading_lines() -> None:
    document = parse("Title\n=====\nbody one\n## Sub\nbody two\n")
    assert [s.content for s in document.sections] == ["body one\n## Sub\nbody two", "body two"]


def test_a_document_without_headings_is_one_preamble_section() -> None:
    document = parse("just text\n\nmore\n")
    assert [(s.name, s.level, s.start_line, s.end_line) for s in document.sections] == [
        ("", 0, 1, 3)
    ]


def test_a_blank_preamble_is_not_a_section() -> None:
    document = parse("\n  \n# Title\n")
    assert [(s.name, s.start_line, s.end_line) for s in document.sections] == [("Title", 3, 3)]


def test_plain_text_without_titles_is_one_unnamed_section() -> None:
    document = rst_sections("line one\n# not a heading in .txt\n\n")
    assert [(s.name, s.start_line, s.end_line, s.content) for s in document.sections] == [
        ("", 1, 2, "line one\n# not a heading in .txt")
    ]
    assert rst_sections("\n \n").sections == []


def test_lines_split_on_newlines_only() -> None:
    assert split_lines("a\r\nb\x0cc\u2028d\n") == ["a", "b\x0cc\u2028d"]
    assert split_lines("") == []
    assert split_lines("x") == ["x"]
    assert headings("a\x0c\n# H\r\n") == [("H", 1, 2)]


LINE_KINDS = [
    "# A",
    "## B",
    "### C",
    "text",
    "",
    "```",
    "~~~~",
    "---",
    "===",
    "- item",
    "<!--",
    "-->",
    "    code",
    "> quote",
    "#### D ##",
]


@given(st.lists(st.sampled_from(LINE_KINDS), max_size=40))
@example(["---", "```", "---", "# A"])  # a fence inside front matter opens none
def test_any_document_gives_nested_or_disjoint_sections_inside_the_file(lines: list[str]) -> None:
    document = parse("".join(line + "\n" for line in lines))
    assert document.line_count == len(lines)
    ranges = []
    for section in document.sections:
        assert 1 <= section.start_line <= section.end_line <= max(1, len(lines))
        assert lines[section.end_line - 1].strip() or section.end_line == section.start_line
        if section.level:
            ranges.append((section.start_line, section.end_line))
    for a_start, a_end in ranges:
        for b_start, b_end in ranges:
            nested = (a_start <= b_start and b_end <= a_end) or (
                b_start <= a_start and a_end <= b_end
            )
            assert nested or a_end < b_start or b_end < a_start
    if "~~~~" not in lines and "<!--" not in lines:  # then fences are simply ``` pairs
        # ... after the front matter: `---` on line 1 up to the next `---` hides its fences
        closing = lines.index("---", 1) if lines[:1] == ["---"] and "---" in lines[1:] else -1
        for heading in document.headings:
            assert lines[closing + 1 : heading.line - 1].count("```") % 2 == 0


def test_blank_lines_after_a_heading_are_not_content() -> None:
    document = parse("# A\n\n  \nbody\n\n## B\n\n")
    assert [(s.name, s.content) for s in document.sections] == [("A", "body\n\n## B"), ("B", "")]


@pytest.mark.parametrize(
    "source, expected",
    [
        ('## Configuration<a id="configuration"></a>\n', [("Configuration", 2, 1)]),
        ('## <a name="usage"></a>Usage\n', [("Usage", 2, 1)]),
        ("Install <sup>beta</sup>\n---\n", [("Install beta", 2, 1)]),
        ("# Using <code>pip</code>\n", [("Using pip", 1, 1)]),
        ('# <img src="logo.svg">\n', [('<img src="logo.svg">', 1, 1)]),  # nothing but a tag
        ("## Vec<T> and Option<T>\n", [("Vec<T> and Option<T>", 2, 1)]),  # no HTML names
        ("## a < b and c > d\n", [("a < b and c > d", 2, 1)]),
        # character references and backslash escapes read, not inside a code span
        (
            "# Anyhow&ensp;\u00af\\\\\\_(\u30c4)\\_/\u00af\n",
            [("Anyhow \u00af\\_(\u30c4)_/\u00af", 1, 1)],
        ),
        ("## Tom &amp; Jerry `a\\_b` \\*x\\*\n", [("Tom & Jerry `a\\_b` *x*", 2, 1)]),
        ("## 1\\. Install &lt;b&gt;\n", [("1. Install <b>", 2, 1)]),
        ("## a & b; c \\d\n", [("a & b; c \\d", 2, 1)]),
    ],
)
def test_inline_html_tags_are_no_part_of_a_heading(source: str, expected: list) -> None:
    """READMEs put anchors and badges in headings (ruff's `### Configuration<a id=...>`):
    `show --section Configuration` must find it."""
    assert headings(source) == expected


def test_a_heading_with_an_anchor_is_found_by_its_title(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "README.md").write_text(
        '# Tool\n\n### Configuration<a id="configuration"></a>\n\nSet `line-length` in the file.\n'
    )
    assert run_cli("index", tmp_path).returncode == 0
    done = run_cli("show", "--section", "Configuration", "--root", tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    assert "line-length" in done.stdout


RST = """\
=========
 Marshal
=========

Intro.

Install
-------

Run pip::

    pip install it
    -----

Extras
~~~~~~

With extras.

Usage
-----
text
  not a title
  -----------
"""


def test_rst_is_split_by_its_section_titles_levels_in_the_order_met() -> None:
    document = rst_sections(RST)
    assert [(h.text, h.level, h.line, h.underline_line) for h in document.headings] == [
        ("Marshal", 1, 1, 3),  # overlined, inset title
        ("Install", 2, 7, 8),
        ("Extras", 3, 15, 16),
        ("Usage", 2, 20, 21),  # `-----` again: level 2, as first met
    ]
    assert [(s.name, s.start_line, s.end_line) for s in document.sections] == [
        ("Marshal", 1, 24),
        ("Install", 7, 18),
        ("Extras", 15, 18),
        ("Usage", 20, 24),
    ]
    # an indented block's dashes, a too-short underline, text before a title: no titles
    assert rst_sections("Title\n---\n\nbody\n").headings == []
    assert rst_sections("para\nTitle\n-----\n").headings == []
