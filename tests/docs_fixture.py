"""The repository the docs and gateway tests share: nested Markdown, .txt files and code.

It has a heading inside a code fence, the heading "Install" in two files, an em-dash heading,
setext headings and front matter, a .txt file, files in other formats, an ignored folder and
a Python file with nested symbols.
"""

from __future__ import annotations

README = """\
# Project

Intro: repomap indexes code and docs.

## Install

Run `pip install repomap` before configuring anything.

## Usage

### Configure

Set REPOMAP_DB to configure where the index lives.

```sh
# Not a heading: a shell comment
repomap index .
```

### Search — advanced

Search with bare words; they are ANDed.
"""

GUIDE = """\
---
title: Guide
---
Guide preamble mentions the tokenizer.

Guide
=====

## Install

Install from source with pip.

Troubleshooting
---------------

When the porter tokenizer is missing, repomap falls back to unicode61.
"""

NOTES = "Plain notes about stemming.\nSecond line of notes.\n"

APP = '''\
class App:
    """The application."""

    def run(self):
        def inner():
            return 1

        return inner()


def main():
    App().run()
'''

REPO = {
    "README.md": README,
    "docs/guide.md": GUIDE,
    "docs/notes.txt": NOTES,
    "docs/data.json": '{"heading": "# not markdown"}\n',
    "src/app.py": APP,
    "src/pkg/__init__.py": "",
    "build/out.txt": "ignored build output\n",
    ".gitignore": "build/\n",
}
