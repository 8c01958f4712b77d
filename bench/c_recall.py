"""Recall of C and C++ definitions against universal-ctags, on real headers and C code.

    python bench/c_recall.py [--corpus llvm,nlohmann,spdlog,fmt,kernel,absl,gtest,eigen,boost]
                             [--full-kernel]
                             [--dir NAME=PATH ...] [--misses N] [--json]

For each corpus it reads every file `repomap index` reads as C or C++ (discover.walk,
code_files, and the `.h` rule of repomap/languages.py), runs the extractor on it, and runs
`ctags` on the same files with the same language per file (`--language-force`). A ctags
definition of a class, struct, union, function or namespace is found when repomap has a
symbol of that name and family (class/struct/union, function/method, namespace) in the same
file whose lines span the ctags line. Anonymous ctags entries (`__anon...`) are left out.
Struct, union and class members (ctags' `member`, repomap's `field`) are counted apart, in
their own column, by the same rule.
A function a macro names (`static void FN(Initialize)(...)`) is `FN(Initialize)` in repomap
and `FN` in ctags: the part before `(` matches. It prints recall per corpus and the misses,
grouped by file, so a regression has a name.

`--extras N` measures the other side: repomap's class, struct, union, function and namespace
symbols whose name ctags gives no tag of any kind in that file (a second ctags pass, every
kind), with the N most frequent such names. A name there many times is usually a macro read as
the function it hides (zlib's `OF`, bash's `PARAMS`, Vim's `INIT` before issue 20's fixes);
the rest are mostly what ctags itself misses (Lua's `int (lua_gettop) (lua_State *L)`).

Corpora: llvm = LLVM 14 headers (get-corpora.sh cpp); nlohmann, spdlog, fmt = the Debian
packages nlohmann-json3-dev, libspdlog-dev, libfmt-dev (/usr/include/...); kernel = Linux 6.1
(get-corpora.sh --large), by default the folders in KERNEL_PARTS, all of it with --full-kernel;
absl, gtest, eigen, boost = the Debian packages libabsl-dev, googletest (/usr/src/googletest),
libeigen3-dev and libboost1.74-dev (its asio, beast, container and filesystem folders).
`--dir NAME=PATH` adds any folder as a corpus (repeatable; `--corpus ''` runs only those): how
code never measured before is checked (bench/README.md, "C and C++ never indexed before").
Target: >= 95% of ctags' definitions on every corpus (issue 20).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import common
from repomap.extractors import extract

from repomap.index.discover import code_files, walk
from repomap.languages import header_languages, language_of, language_of_header
from repomap.textfile import decode

TARGET = 0.95
CTAGS = "/usr/bin/ctags"
KERNEL_PARTS = (
    "kernel/",
    "mm/",
    "lib/",
    "fs/ext4/",
    "include/linux/",
    "net/core/",
    "drivers/base/",
)
CORPORA = {
    "llvm": (common.CORPORA_DIR / "cpp", None),
    "nlohmann": (Path("/usr/include/nlohmann"), None),
    "spdlog": (Path("/usr/include/spdlog"), None),
    "fmt": (Path("/usr/include/fmt"), None),
    "kernel": (common.CORPORA_DIR / "large", KERNEL_PARTS),
    # Debian's libabsl-dev, googletest, libeigen3-dev, libboost1.74-dev (four of boost's folders)
    "absl": (Path("/usr/include/absl"), None),
    "gtest": (Path("/usr/src/googletest"), None),
    "eigen": (Path("/usr/include/eigen3"), None),
    "boost": (Path("/usr/include/boost"), ("asio/", "beast/", "container/", "filesystem/")),
}
# ctags kind -> the family it belongs to; repomap kind -> family.
CTAGS_FAMILY = {
    "class": "class",
    "struct": "class",
    "union": "class",
    "function": "function",
    "namespace": "namespace",
    "member": "member",  # counted apart: the target is about the families above
}
OUR_FAMILY = {
    "class": "class",
    "struct": "class",
    "union": "class",
    "function": "function",
    "method": "function",
    "namespace": "namespace",
    "field": "member",
}
CTAGS_LANGUAGE = {"c": "C", "cpp": "C++"}


@dataclass(slots=True)
class Corpus:
    name: str
    files: int = 0
    lines: int = 0
    seconds: float = 0.0  # extraction, one process
    by_language: Counter[str] = field(default_factory=Counter)
    expected: int = 0
    found: int = 0
    members_expected: int = 0  # ctags' struct, union and class members (kind `member`)
    members_found: int = 0
    misses: list[tuple[str, int, str, str]] = field(default_factory=list)  # path, line, kind, name
    ours: list[tuple[str, int, str, str]] = field(default_factory=list)  # path, line, kind, name
    extras: list[tuple[str, int, str, str]] = field(default_factory=list)  # no ctags tag's name


def code_paths(root: Path, parts: tuple[str, ...] | None) -> list[tuple[str, str]]:
    """(rel_path, language) of the C and C++ files repomap reads under `root` (only `parts`).

    With `parts` (the kernel), the folders are listed directly: Debian's kernel tree ends its
    .gitignore with `/*`, which repomap's walk obeys, and the recall is about the extractor.
    """
    if parts is None:
        return [
            (found.rel_path, language)
            for found, language in code_files(walk(root))
            if language in ("c", "cpp")
        ]
    rel_paths = sorted(
        path.relative_to(root).as_posix()
        for part in parts
        for path in (root / part).rglob("*")
        if path.is_file() and language_of(path.name) in ("c", "cpp")
    )
    headers = header_languages(rel_paths)
    return [
        (rel_path, headers.get(rel_path) or language_of(rel_path) or "") for rel_path in rel_paths
    ]


def our_definitions(
    root: Path, parts: tuple[str, ...] | None, corpus: Corpus
) -> tuple[dict[str, str], dict[tuple[str, str, str], list[tuple[int, int]]]]:
    """{rel_path: language}, and {(rel_path, name, family): [(start, end), ...]}."""
    languages: dict[str, str] = {}
    spans: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for rel_path, language in code_paths(root, parts):
        raw = (root / rel_path).read_bytes()
        source, _ = decode(raw)
        if source is None:
            continue
        language = language_of_header(rel_path, language, source)
        started = time.perf_counter()
        extraction = extract(language, source, rel_path)
        corpus.seconds += time.perf_counter() - started
        corpus.files += 1
        corpus.lines += source.count(b"\n")
        corpus.by_language[language] += 1
        languages[rel_path] = language
        for symbol in extraction.symbols:
            family = OUR_FAMILY.get(symbol.kind)
            if family is not None:
                name = "".join(symbol.name.split())
                corpus.ours.append((rel_path, symbol.start_line, symbol.kind, name))
                spans[(rel_path, name, family)].append((symbol.start_line, symbol.end_line))
                if "(" in name and not name.startswith("operator"):
                    # `FN(Initialize)`, a function a macro names: ctags calls it `FN`.
                    macro = name.partition("(")[0]
                    spans[(rel_path, macro, family)].append((symbol.start_line, symbol.end_line))
    return languages, spans


def ctags_definitions(
    root: Path, languages: dict[str, str], every_kind: bool = False
) -> list[tuple[str, int, str, str]]:
    """(rel_path, line, kind, name) of ctags' definitions, each file read as repomap reads it
    (with `every_kind`, every tag: prototypes, variables, members, macros ...)."""
    found = []
    kinds = ["--kinds-C=*", "--kinds-C++=*"] if every_kind else []
    for language in ("c", "cpp"):
        paths = sorted(path for path, lang in languages.items() if lang == language)
        if not paths:
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as listing:
            listing.write("\n".join(paths) + "\n")
            listing.flush()
            output = subprocess.run(
                [
                    CTAGS,
                    f"--language-force={CTAGS_LANGUAGE[language]}",
                    "--output-format=json",
                    "--fields=+nK",
                    "--extras=-{anonymous}",
                    *kinds,
                    "-L",
                    listing.name,
                    "-f",
                    "-",
                ],
                cwd=root,
                capture_output=True,
                check=True,
            ).stdout
        for line in output.splitlines():
            tag = json.loads(line)
            kind = tag.get("kind", "")
            name = tag.get("name", "")
            if (every_kind or kind in CTAGS_FAMILY) and not name.startswith("__anon"):
                found.append((tag["path"], int(tag["line"]), kind, name))
    return found


def measure(name: str, full_kernel: bool, extras: bool = False) -> Corpus:
    root, parts = CORPORA[name]
    if not root.is_dir():
        raise SystemExit(f"{root} is missing: see this script's docstring for how to get {name}")
    corpus = Corpus(name)
    languages, spans = our_definitions(
        root, None if full_kernel and name == "kernel" else parts, corpus
    )
    for path, line, kind, tag_name in ctags_definitions(root, languages):
        # `operator ==` (ctags) is `operator==` (repomap): names compare without blanks.
        candidates = spans.get((path, "".join(tag_name.split()), CTAGS_FAMILY[kind]), ())
        found = any(start <= line <= end for start, end in candidates)
        if kind == "member":
            corpus.members_expected += 1
            corpus.members_found += found
            continue
        corpus.expected += 1
        if found:
            corpus.found += 1
        else:
            corpus.misses.append((path, line, kind, tag_name))
    if extras:
        tagged = {
            (path, "".join(tag.split()))
            for path, _, _, tag in ctags_definitions(root, languages, True)
        }
        corpus.extras = [
            (path, line, kind, ours)
            for path, line, kind, ours in corpus.ours
            if (path, ours) not in tagged and (path, ours.partition("(")[0]) not in tagged
        ]
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=",".join(CORPORA))
    parser.add_argument(
        "--dir",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="one more corpus: every C/C++ file repomap reads under PATH",
    )
    parser.add_argument("--full-kernel", action="store_true", help="all of the kernel tree")
    parser.add_argument("--misses", type=int, default=40, help="misses listed per corpus")
    parser.add_argument(
        "--extras", type=int, default=-1, metavar="N",
        help="also count our definitions no ctags tag names, and list the N most frequent names",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for spec in args.dir:
        name, equals, path = spec.partition("=")
        if not equals or not name or not Path(path).is_dir():
            parser.error(f"--dir takes NAME=PATH with PATH a folder, not {spec!r}")
        CORPORA[name] = (Path(path), None)
    names = [name for name in args.corpus.split(",") if name]
    names += [spec.partition("=")[0] for spec in args.dir]
    results = [measure(name, args.full_kernel, args.extras >= 0) for name in names]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        **{f: getattr(r, f) for f in Corpus.__slots__ if f != "ours"},
                        "by_language": dict(r.by_language),
                    }
                    for r in results
                ]
            )
        )
        return
    rows = []
    for r in results:
        recall = r.found / r.expected if r.expected else 1.0
        rows.append(
            [
                r.name,
                common.fmt_count(r.files),
                ", ".join(f"{k} {v}" for k, v in sorted(r.by_language.items())),
                common.fmt_count(r.lines),
                common.fmt_count(r.expected),
                common.fmt_count(r.found),
                f"{recall:.1%}",
                "yes" if recall >= TARGET else "NO",
                common.fmt_seconds(r.seconds),
                f"{r.members_found:,} of {r.members_expected:,}"
                f" ({r.members_found / max(1, r.members_expected):.1%})",
            ]
            + (
                [
                    f"{len(r.extras):,} of {len(r.ours):,} ({len(r.extras) / max(1, len(r.ours)):.1%})"
                ]
                if args.extras >= 0
                else []
            )
        )
    headers = ["corpus", "files", "read as", "lines", "ctags defs", "found", "recall", "≥95%"]
    headers += ["extract (1 process)", "members (fields)"] + (
        ["ours no ctags tag names"] if args.extras >= 0 else []
    )
    print(common.markdown_table(headers, rows))
    for r in results if args.extras > 0 else ():
        frequent = Counter(name for _, _, _, name in r.extras).most_common(args.extras)
        print(f"\n{r.name}: most frequent names no ctags tag has: "
              + ", ".join(f"{name} {count}" for name, count in frequent))  # fmt: skip
    for r in results:
        if not r.misses:
            continue
        print(
            f"\n{r.name}: {len(r.misses)} missed; by kind {dict(Counter(m[2] for m in r.misses))}"
        )
        for path, line, kind, tag_name in sorted(r.misses)[: args.misses]:
            print(f"  {path}:{line}  {kind} {tag_name}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
