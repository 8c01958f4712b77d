"""The base classes a class's signature names: `class Group(Command)` (Python), `class logger :
public std::enable_shared_from_this<logger>` (C++). Pure: text in, names out.

What `show Group.main` follows when `Group` defines no `main` but a base does, as attribute
lookup does. Keyword arguments (`metaclass=ABCMeta`), subscripts (`Generic[T]`), template
arguments and access specifiers are left out; a name that is not a plain (dotted or `::`)
identifier path is left out too.
"""

from __future__ import annotations

_CPP_WORDS = frozenset({"public", "private", "protected", "virtual"})


def base_names(signature: str, language: str) -> list[str]:
    if language == "python":
        start, end = signature.find("("), signature.rfind(")")
        if start < 0 or end < start:
            return []
        parts = _split(signature[start + 1 : end])
        found = [part.split("[", 1)[0].strip() for part in parts if "=" not in part]
        return [name for name in found if _is_path(name, ".")]
    if language in ("cpp", "c"):
        colon = _base_clause(signature)
        if colon < 0:
            return []
        names = []
        for part in _split(signature[colon + 1 :].split("{", 1)[0]):
            words = [w for w in part.split("<", 1)[0].split() if w not in _CPP_WORDS]
            if words and _is_path(words[-1], "::"):
                names.append(words[-1])
        return names
    return []


def _split(text: str) -> list[str]:
    """`text` cut at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(text):
        if char in "([<{":
            depth += 1
        elif char in ")]>}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:at])
            start = at + 1
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def _base_clause(signature: str) -> int:
    """Where a C++ class's base clause starts: the first `:` that is not half of `::`."""
    at = 0
    while (at := signature.find(":", at)) >= 0:
        if signature[at + 1 : at + 2] == ":":
            at += 2
            continue
        if at > 0 and signature[at - 1] == ":":
            at += 1
            continue
        return at
    return -1


def _is_path(name: str, separator: str) -> bool:
    parts = name.removeprefix(separator).split(separator)
    return bool(name) and all(part.isidentifier() for part in parts)
