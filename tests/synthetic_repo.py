"""A generated repository of real-looking Python, Rust and C++ (and a few Markdown files), big
enough that `repomap index` is caught mid-write, deterministic for a seed.

`write_repo(root, files, seed)` writes it; `change_repo(root, seed)` edits a third of the
files, deletes some and adds others, as a working day would.
"""

from __future__ import annotations

import random
from pathlib import Path

_SENTENCE = (
    "connection pool cache buffer request response token parser index symbol reader writer "
    "stream channel worker queue lock retry timeout config module handle session client server "
    "record batch filter search rank graph node edge path file store table query result error"
)
WORDS = _SENTENCE.split()


def _name(rng: random.Random, parts: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(parts))


def _camel(rng: random.Random, parts: int = 2) -> str:
    return "".join(rng.choice(WORDS).capitalize() for _ in range(parts))


def _sentence(rng: random.Random, words: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize()


def python_module(rng: random.Random, number: int) -> str:
    lines = [f'"""{_sentence(rng)} (module {number})."""', "", "import os", "import re", ""]
    lines.append(f"LIMIT_{number} = {rng.randint(1, 999)}")
    lines.append(f'PATTERN_{number} = re.compile(r"{rng.choice(WORDS)}[0-9]+")')
    for c in range(rng.randint(2, 4)):
        cls = f"{_camel(rng)}{number}x{c}"
        lines += ["", "", f"class {cls}:", f'    """{_sentence(rng, 12)}."""', ""]
        lines.append(f"    kind = {rng.choice(WORDS)!r}")
        for m in range(rng.randint(2, 5)):
            method = f"{_name(rng)}_{m}"
            lines += [
                "",
                f"    def {method}(self, {_name(rng, 1)}, limit=None):",
                f'        """{_sentence(rng)}."""',
                f"        # {_sentence(rng, 10)}",
                f"        value = os.environ.get({_name(rng).upper()!r}, {rng.choice(WORDS)!r})",
                "        if limit is not None and len(value) > limit:",
                f'            raise ValueError("{_sentence(rng, 5)}: %s" % value)',
                f"        return self.kind + value  # {_sentence(rng, 4)}",
            ]
    lines += ["", "", f"def main_{number}():", f"    return {cls}().kind", ""]
    return "\n".join(lines)


def rust_module(rng: random.Random, number: int) -> str:
    lines = [f"//! {_sentence(rng)} (module {number}).", "", "use std::collections::HashMap;", ""]
    for s in range(rng.randint(2, 4)):
        struct = f"{_camel(rng)}{number}x{s}"
        lines += [
            f"/// {_sentence(rng, 10)}.",
            "#[derive(Debug, Clone)]",
            f"pub struct {struct} {{",
            f"    {_name(rng)}: HashMap<String, u32>,",
            f"    {_name(rng)}: Vec<u8>,",
            "}",
            "",
            f"impl {struct} {{",
        ]
        for m in range(rng.randint(2, 4)):
            lines += [
                f"    /// {_sentence(rng)}.",
                f"    pub fn {_name(rng)}_{m}(&self, limit: usize) -> Result<usize, String> {{",
                f"        // {_sentence(rng, 9)}",
                "        if limit == 0 {",
                f'            return Err(format!("{_sentence(rng, 5)}: {{}}", limit));',
                "        }",
                "        Ok(limit + 1)",
                "    }",
                "",
            ]
        lines += ["}", ""]
    lines += [f"pub const NAME_{number}: &str = {_sentence(rng, 3)!r};".replace("'", '"'), ""]
    return "\n".join(lines)


def cpp_module(rng: random.Random, number: int) -> str:
    namespace = f"{rng.choice(WORDS)}{number}"
    lines = [f"// {_sentence(rng)} (module {number}).", "#include <string>", "#include <vector>"]
    lines += ["", f"namespace {namespace} {{", ""]
    bodies = []
    for c in range(rng.randint(2, 3)):
        cls = f"{_camel(rng)}{number}x{c}"
        lines += [f"/// {_sentence(rng, 10)}.", f"class {cls} {{", " public:"]
        for m in range(rng.randint(2, 4)):
            method = f"{_camel(rng)}{m}"
            lines += [f"  /// {_sentence(rng)}.", f"  int {method}(int limit) const;"]
            bodies += [
                f"int {cls}::{method}(int limit) const {{",
                f"  // {_sentence(rng, 9)}",
                f'  std::string message = "{_sentence(rng, 5)}";',
                "  return limit > 0 ? limit : static_cast<int>(message.size());",
                "}",
                "",
            ]
        lines += [" private:", "  std::vector<int> values_;", "};", ""]
    lines += bodies + [f"}}  // namespace {namespace}", ""]
    return "\n".join(lines)


def markdown_doc(rng: random.Random, number: int) -> str:
    sections = [f"# {_sentence(rng, 3)} {number}", "", _sentence(rng, 20) + "."]
    for s in range(rng.randint(2, 4)):
        sections += ["", f"## {_sentence(rng, 2)} {s}", "", _sentence(rng, 30) + "."]
    return "\n".join(sections) + "\n"


WRITERS = (("py", python_module), ("rs", rust_module), ("cpp", cpp_module))


def _path(suffix: str, number: int) -> str:
    return f"{suffix}/pkg{number % 12}/module_{number}.{suffix}"


def write_repo(root: Path, files: int = 1500, seed: int = 0) -> list[str]:
    """Write `files` source files (a third per language) and a doc per 50; their paths."""
    rng = random.Random(seed)
    written = []
    for number in range(files):
        suffix, write = WRITERS[number % 3]
        written.append(_write(root, _path(suffix, number), write(rng, number)))
    for number in range(files // 50):
        written.append(_write(root, f"docs/guide_{number}.md", markdown_doc(rng, number)))
    return written


def change_repo(root: Path, files: int = 1500, seed: int = 1) -> None:
    """Rewrite every other file, delete every eleventh, add a few new ones."""
    rng = random.Random(seed)
    for number in range(files):
        suffix, write = WRITERS[number % 3]
        path = root / _path(suffix, number)
        if number % 11 == 0:
            path.unlink(missing_ok=True)
        elif number % 2 == 1:
            path.write_text(write(rng, number + 100_000))
    for number in range(files, files + files // 20):
        suffix, write = WRITERS[number % 3]
        _write(root, _path(suffix, number), write(rng, number))


def _write(root: Path, rel_path: str, text: str) -> str:
    path = root / rel_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return rel_path
