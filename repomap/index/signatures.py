"""What tells a C++ overload from another: its parameters' types, read from a signature.

The writer links every definition of a name to the first declaration of that name
(store/writer.py, _LINK_SQL): of a class's overloads (tclap's four `ValueArg` constructors, each
documented), one declaration has all the definitions and the others none. Search pairs a
declaration with its own definition by the types of their parameters, names and defaults left
out (`T value` declared, `T val` defined)."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z_]\w*|::|\S")
_OPENERS = {"(": ")", "<": ">", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


def parameters_key(signature: str, name: str) -> str | None:
    """The parameter types of `signature` (one of `name`), and `const` after them for a const
    method, as one string; None when the parameter list is not found."""
    start = _list_start(signature, name)
    if start is None:
        return None
    depth = 0
    parameters: list[str] = []
    current: list[str] = []
    for at in range(start, len(signature)):
        char = signature[at]
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS and depth > 0:
            depth -= 1
        elif char == ")":  # the list's own closer
            parameters.append("".join(current))
            tail = signature[at + 1 :]
            return _joined(parameters) + ("|const" if re.search(r"\bconst\b", tail) else "")
        elif char == "," and depth == 0:
            parameters.append("".join(current))
            current = []
            continue
        current.append(char)
    return None


def _list_start(signature: str, name: str) -> int | None:
    """Where the parameter list after `name` begins: no regex per name (a pattern compiled for
    each of LLVM's names cost its cold index a second)."""
    at = signature.find(name)
    while at >= 0:
        after = at + len(name)
        rest = signature[after:].lstrip()
        before = signature[at - 1] if at else " "
        if rest.startswith("(") and not (before.isalnum() or before == "_"):
            return len(signature) - len(rest) + 1
        at = signature.find(name, after)
    return None


def _joined(parameters: list[str]) -> str:
    types = [_type_of(parameter) for parameter in parameters]
    if types in ([""], ["void"]):
        return ""
    return ",".join(types)


def _type_of(parameter: str) -> str:
    """`const std::string& flag = ""` -> `const std::string&`; the name and default dropped."""
    tokens = _TOKEN.findall(_without_default(parameter))
    while tokens and tokens[-1] in ("[", "]"):  # `int values[]`: an array is its pointer
        tokens.pop()
    identifiers = [token for token in tokens if token[0].isalpha() or token[0] == "_"]
    if (
        len(identifiers) > 1
        and (tokens[-1][0].isalpha() or tokens[-1][0] == "_")
        and tokens[-2:-1] != ["::"]
        and tokens[-1] not in ("const", "volatile")
    ):
        tokens.pop()  # the parameter's name
    return " ".join(tokens)


def _without_default(parameter: str) -> str:
    depth = 0
    for at, char in enumerate(parameter):
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS and depth > 0:
            depth -= 1
        elif char == "=" and depth == 0:
            return parameter[:at]
    return parameter


_RUST_IMPL = re.compile(r"\s*(?:unsafe\s+)?impl\b\s*")
_PARAMETER = re.compile(r"(?:^|,)\s*(?:const\s+)?('?\w+)")  # of `<'a, T: Clone, const N: usize>`
_CPP_RECORD = re.compile(r"\b(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?([A-Za-z_]\w*)\s*<")


def specialized_name(qualified_name: str, kind: str, signature: str, language: str) -> str:
    """A Rust impl's or a C++ template specialization's qualified name with the type arguments
    its signature gives: `datetime::From<DateTime<Utc>> for DateTime<Local>` where the symbol
    is `datetime::From for DateTime` (chrono's twelve such impls of one file were one name
    twelve times in outline and search), `YAML::convert<bool>` for `YAML::convert` (yaml-cpp's
    thirty specializations). The name as it is when the signature adds nothing, and for a Rust
    struct, whose parameters (`Deserializer<R>`) are no specialization."""
    if "<" not in signature:
        return qualified_name
    if kind == "impl" and language == "rust":
        header = impl_header(signature)
        if header is None:
            return qualified_name
        module, sep, _ = qualified_name.partition(" ")[0].rpartition("::")
        return f"{module}{sep}{header}"
    record = _CPP_RECORD.search(signature) if language in ("c", "cpp") else None
    if record is None or not qualified_name.endswith(record[1]):
        return qualified_name
    arguments = signature[record.end() - 1 :]
    return qualified_name + arguments[: _balanced_end(arguments)]


def impl_header(signature: str) -> str | None:
    """A Rust impl's header with its type arguments, the trait by its last name and the impl's
    own parameters left out (`From<DateTime<Utc>> for DateTime<Local>` of `impl<Tz> ...`), or
    None when it names no argument beyond those parameters (`impl<R> Deserializer<R>`)."""
    start = _RUST_IMPL.match(signature)
    if start is None:
        return None
    header = signature[start.end() :]
    own: set[str] = set()
    if header.startswith("<"):  # the impl's own parameters: `impl<Tz: TimeZone>`
        end = _balanced_end(header)
        own = set(_PARAMETER.findall(header[1 : end - 1]))
        header = header[end:]
    header = " ".join(header.split(" where ", 1)[0].split()).rstrip("{ ").removeprefix("!")
    if "<" not in header:
        return None
    if " for " not in header and header.endswith(">"):
        arguments = header[header.index("<") + 1 : -1]
        if {argument.strip() for argument in arguments.split(",")} <= own:
            return None  # `impl<R> Deserializer<R>`: the type itself
    trait, for_, self_type = header.partition(" for ")
    return f"{trait.rsplit('::', 1)[-1] if for_ else trait}{for_}{self_type}"


def _balanced_end(text: str) -> int:
    """The end of the `<...>` that `text` starts with (all of it when it never closes)."""
    depth = 0
    for at, char in enumerate(text):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return at + 1
    return len(text)
