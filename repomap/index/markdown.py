"""Markdown split into headings and sections; pure (text in, records out).

A CommonMark subset that is enough to find sections reliably:

- ATX headings (`#` to `######` after at most 3 spaces, then a space or the end of the line; an
  optional closing run of `#`) and setext headings (a paragraph underlined with `===`, level 1,
  or `---`, level 2).
- Fenced code blocks (``` or ~~~, three or more, closed by the same character at least as many
  times) and HTML comments hide everything inside them: a `# comment` in a shell example is not a
  heading. An unclosed fence runs to the end of the file, as in CommonMark.
- Front matter (`---` ... `---`/`...` YAML or `+++` ... `+++` TOML starting on line 1) is neither
  a heading nor a setext underline; it belongs to the preamble.

`parse(text)` returns the headings and the sections. A section is a heading and its text up to
the next heading of the same or a higher level (so a `#` section contains its `##` sections);
its line range leaves out trailing blank lines. Text before the first heading (front matter
included) is the preamble: a section with an empty name and level 0, present when it holds any
non-blank line. reStructuredText (`.rst`) and `.txt` files are split by reStructuredText's
section titles (`rst_sections`): a `.txt` is often reST (Django's docs, mpdecimal's notes), and
one without titles is one such section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repomap.textfile import split_lines

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# An inline HTML tag, opening, closing or empty: READMEs put anchors and badges in headings
# (`## Configuration<a id="configuration"></a>`, ruff's), which are no part of the title. HTML's
# own names only: `## Vec<T> and Option<T>` keeps its type parameters.
_INLINE_TAG = re.compile(
    r"</?(?:a|abbr|b|br|code|del|div|em|font|i|img|ins|kbd|mark|picture|s|small|source|span"
    r"|strong|sub|sup|u)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
# Lines that start a block of their own, so they never continue or start a setext paragraph.
_BLOCK_START = re.compile(r"^ {0,3}(?:>|[-+*][ \t]|\d{1,9}[.)][ \t]|<)")
_FRONT_MATTER_CLOSE = {"---": ("---", "..."), "+++": ("+++",)}


@dataclass(frozen=True, slots=True)
class Heading:
    text: str  # without the `#` marks or the underline, trimmed
    level: int  # 1-6
    line: int  # 1-based line where the heading starts
    underline_line: int  # last line of the heading itself (the underline of a setext heading)


@dataclass(frozen=True, slots=True)
class Section:
    name: str  # the heading text; "" for the preamble and for plain text
    level: int  # 0 for the preamble
    start_line: int  # 1-based, inclusive; the heading's first line
    end_line: int  # inclusive, trailing blank lines left out
    content: str  # the lines after the heading line(s) up to end_line, leading blanks dropped


@dataclass(frozen=True, slots=True)
class Document:
    headings: list[Heading]
    sections: list[Section]  # the preamble (if any) first, then one per heading, in file order
    line_count: int


def find_headings(lines: list[str]) -> list[Heading]:
    """Every heading outside code fences, HTML comments and front matter, in file order."""
    headings: list[Heading] = []
    fence: str | None = None  # the opening run of the fence we are inside
    in_comment = False
    paragraph_start: int | None = None  # index of the first line of the open paragraph
    in_other_block = False  # inside a list item, quote or HTML block: no paragraph starts here
    index = _front_matter_end(lines)
    while index < len(lines):
        line = lines[index]
        if fence is not None:
            if _closes_fence(line, fence):
                fence = None
            index += 1
            continue
        if in_comment:
            in_comment = "-->" not in line
            index += 1
            continue
        stripped = line.strip()
        if opening := _opening_fence(line):
            fence, paragraph_start, in_other_block = opening, None, False
        elif stripped.startswith("<!--") and _leading_spaces(line) <= 3:
            in_comment, paragraph_start = "-->" not in stripped[4:], None
        elif match := _ATX.match(line):
            headings.append(
                Heading(_atx_text(match.group(2) or ""), len(match.group(1)), index + 1, index + 1)
            )
            paragraph_start, in_other_block = None, False
        elif paragraph_start is not None and (underline := _SETEXT.match(line)):
            text = _title(" ".join(part.strip() for part in lines[paragraph_start:index]))
            level = 1 if underline.group(1)[0] == "=" else 2
            headings.append(Heading(text, level, paragraph_start + 1, index + 1))
            paragraph_start = None
        elif not stripped or _THEMATIC_BREAK.match(line):
            paragraph_start, in_other_block = None, False
        elif _BLOCK_START.match(line):
            paragraph_start, in_other_block = None, True
        elif paragraph_start is None and not in_other_block and _starts_paragraph(line):
            paragraph_start = index
        index += 1
    return headings


def parse(text: str) -> Document:
    """Headings and sections of a Markdown document."""
    lines = split_lines(text)
    return _sections(lines, find_headings(lines))


def _sections(lines: list[str], headings: list[Heading]) -> Document:
    """The preamble, then a section per heading up to the next of its level or a higher one."""
    sections: list[Section] = []
    first_heading = headings[0].line if headings else len(lines) + 1
    preamble_end = _trim_end(lines, 1, first_heading - 1)
    if any(line.strip() for line in lines[:preamble_end]):
        sections.append(Section("", 0, 1, preamble_end, "\n".join(lines[:preamble_end])))
    for position, heading in enumerate(headings):
        following = (h.line for h in headings[position + 1 :] if h.level <= heading.level)
        end = _trim_end(lines, heading.underline_line, next(following, len(lines) + 1) - 1)
        body = heading.underline_line  # index of the first line after the heading
        while body < end and not lines[body].strip():
            body += 1
        content = "\n".join(lines[body:end])
        sections.append(Section(heading.text, heading.level, heading.line, end, content))
    return Document(headings, sections, len(lines))


# reStructuredText section adornment: one punctuation character repeated, under the title (and
# over it, for an overlined style), at least as long as the title. Levels are not fixed by the
# character: the first style met is level 1, the next new one level 2, and so on.
_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")


def rst_sections(text: str) -> Document:
    """A reStructuredText file (`.rst`, Sphinx's docs) by its sections, as parse() splits
    Markdown: titles are lines at the left margin with an adornment of one repeated
    punctuation character under them (and the same over them, for an overlined style), as
    long as the title or at least 4 characters (docutils keeps a shorter one, with a warning)."""
    lines = split_lines(text)
    styles: list[tuple[str, bool]] = []  # (character, overlined) in the order first met
    headings: list[Heading] = []
    taken = -1  # the last line a heading took: no overline, and a title may follow it
    index = 0
    while index + 1 < len(lines):
        title, under = lines[index], lines[index + 1]
        adornment = _RST_ADORNMENT.match(under)
        over = _RST_ADORNMENT.match(lines[index - 1]) if index - 1 > taken else None
        overline = adornment is not None and over is not None and over[1] == adornment[1]
        # An overlined title may be inset (`=====\n Title\n=====`); one without, not.
        plain_title = title.strip() and (overline or title[0] not in " \t")
        plain_title = plain_title and not _RST_ADORNMENT.match(title)
        after_break = index == 0 or index - 1 == taken or not lines[index - 1].strip() or overline
        long_enough = len(under.rstrip()) >= min(len(title.rstrip()), 4)
        if adornment and plain_title and after_break and long_enough:
            style = (adornment.group(1), overline)
            if style not in styles:
                styles.append(style)
            start = index if overline else index + 1  # the overline is the heading's first line
            headings.append(Heading(_title(title.strip()), min(styles.index(style) + 1, 6),
                                    start, index + 2))  # fmt: skip
            taken = index + 1
            index += 2
            continue
        index += 1
    return _sections(lines, headings)


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after the front matter (0 when there is none)."""
    if not lines or lines[0].rstrip() not in _FRONT_MATTER_CLOSE:
        return 0
    closers = _FRONT_MATTER_CLOSE[lines[0].rstrip()]
    for index in range(1, len(lines)):
        if lines[index].rstrip() in closers:
            return index + 1
    return 0  # never closed: a thematic break, not front matter


def _opening_fence(line: str) -> str | None:
    match = _FENCE.match(line)
    if match is None:
        return None
    run, info = match.groups()
    if run[0] == "`" and "`" in info:  # ```foo``` is inline code, not a fence
        return None
    return run


def _closes_fence(line: str, opening: str) -> bool:
    match = _FENCE.match(line)
    if match is None:
        return False
    run, rest = match.groups()
    return run[0] == opening[0] and len(run) >= len(opening) and not rest.strip()


def _atx_text(raw: str) -> str:
    return _title(_ATX_CLOSING.sub("", raw.strip()).strip())


def _title(text: str) -> str:
    """A heading's text as a reader sees it: without inline HTML tags (their text kept), with
    character references and backslash escapes read (anyhow's README heading, written with
    `&ensp;` and `\\_`, was a result's name as written), spaces collapsed; as written when it
    is nothing but tags (`# <img src="logo.svg">`)."""
    if "<" in text:
        text = " ".join(_INLINE_TAG.sub(" ", text).split()) or text
    if "&" in text or "\\" in text:  # after the tags: `&lt;b&gt;` is text, not a tag
        text = " ".join(_unescaped(text).split())
    return text


# CommonMark's entity and numeric character references (the `;` is required) and its backslash
# escapes of ASCII punctuation; neither is read inside a code span.
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _unescaped(text: str) -> str:
    import html

    parts = text.split("`")
    for index in range(0, len(parts), 2):  # outside backticks (odd parts are code spans)
        read = _REFERENCE.sub(lambda found: html.unescape(found.group()), parts[index])
        parts[index] = _ESCAPE.sub(r"\1", read)
    return "`".join(parts)


def _leading_spaces(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _starts_paragraph(line: str) -> bool:
    """A line that can open a paragraph (and so be underlined into a setext heading)."""
    return not line.expandtabs(4).startswith("    ")  # indented code


def _trim_end(lines: list[str], start: int, end: int) -> int:
    """`end` moved up past blank lines, but never above `start` (1-based, inclusive)."""
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end
