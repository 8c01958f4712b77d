"""An answer's advice in the words of the MCP tools, not of the command line.

The library's errors and notices name what to run next as a person at a shell would
(`repomap files NAME`, `--nth N`, `--mode lexical`): an agent that only has the MCP tools was
told to run commands it cannot (the MCP agent user's finding). Rewritten here, at the MCP
boundary, so every layer below keeps one wording; what has no tool (`repomap index --force`,
`repomap doctor`) is left as it is, a command for the person beside the agent.
"""

from __future__ import annotations

import re
from typing import Any

# A flag where the library writes one: at a line's or phrase's start, after a space, `(` or a
# backquote (never inside a path: `src/--path/x.py`).
_FLAG = r"(?:(?<=^)|(?<=[\s(`]))"
# (a command line as the library writes it, between backquotes) -> the tool call that does it
_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"`symbols --kind (\w+)`"), r'`search_symbols(kind="\1")`'),
    (re.compile(r"`repomap files ([^`]+)`"), r'`find_files(query="\1")`'),
    (re.compile(r"`repomap sources --dir ([^`]+)`"), r'`list_sources(dir="\1")`'),
    (re.compile(r"`repomap sources --pattern '?([^`']+)'?`"), r'`list_sources(pattern="\1")`'),
    (re.compile(r"`repomap sources`"), "`list_sources()`"),
    (re.compile(r"`repomap outline`"), "`outline`"),
    (re.compile(r"`repomap outline ([^`]+)`"), r'`outline(path="\1")`'),
    (re.compile(r"`repomap open ([^`]+)`"), r'`read_file(path="\1")`'),
    (re.compile(r"`repomap show NAME --file`"), '`get_symbol_content(name, file="...")`'),
    (re.compile(r"`repomap symbols ([^`]+)`"), r'`search_symbols(query="\1")`'),
    (re.compile(r"`repomap search --path/--lang/--kind`"), "search_code's path, language, kind"),
    (re.compile(r"`repomap search --kind`"), "search_code's kind"),
    (re.compile(r"`repomap search ([^`-][^`]*)`"), r'`search_code(query="\1")`'),
    (re.compile(r"`repomap search`"), "`search_code`"),
    (re.compile(r"`repomap history NAME`"), "`search_commits`"),
    (re.compile(r"--nth N \(nth=N over MCP and HTTP\)"), "nth=N"),
    (re.compile(_FLAG + r"`?--nth (\w+)`?"), r"nth=\1"),
    (re.compile(_FLAG + r"`?--mode (\w+)`?"), r'mode="\1"'),
    (re.compile(_FLAG + r"`?--path ([^`\s\"']+)`?"), r'path="\1"'),
    (re.compile(r"`--path`|" + _FLAG + r"--path(?![\w-])"), "path"),
    (re.compile(r"`--kind`|" + _FLAG + r"--kind(?![\w-])"), "kind"),
    (re.compile(_FLAG + r"--file(?![\w-])"), "file"),
]


# The literal mode by the argument that chooses it in the tool that answered (search_text
# takes a mode; search_data and search_commits are exact unless ranked=true).
_LITERAL_ARGUMENT = {"search_data": "ranked=false", "search_commits": "ranked=false"}
_LITERAL_FLAG = re.compile(r"\(--literal\)")


def for_agents(text: str, tool: str | None = None) -> str:
    """`text` with every command line it advises that a tool does written as that tool's call
    (`tool`: the tool that answered, whose arguments name a mode)."""
    if "repomap " not in text and "--" not in text:
        return text
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    if tool == "search_docs":  # no literal mode there: a phrase is its exact text
        return text.replace("literal mode (--literal)", 'a "quoted phrase"')
    literal = _LITERAL_ARGUMENT.get(tool or "", 'mode="literal"')
    return _LITERAL_FLAG.sub(f"({literal})", text)


_ADVISING_FIELDS = ("notices", "notes", "warning", "note")


def reword_answer(content: dict[str, Any], tool: str | None = None) -> None:
    """The notices, notes and warning of a tool's structured answer, reworded in place."""
    for key in _ADVISING_FIELDS:
        value = content.get(key)
        if isinstance(value, str):
            content[key] = for_agents(value, tool)
        elif isinstance(value, list):
            content[key] = [for_agents(v, tool) if isinstance(v, str) else v for v in value]
