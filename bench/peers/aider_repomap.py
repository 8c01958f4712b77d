"""Cold repo map of a tree with aider's RepoMap, timed by stage; one JSON line on stdout.

Runs with the Python of the peer's own venv (bench/peer.py creates it), never repomap's:

    VENV/bin/python bench/peers/aider_repomap.py ROOT FILE_LIST CACHE_DIR [--map-tokens N]

FILE_LIST holds one path per line, relative to ROOT (the files repomap indexes). CACHE_DIR must
not exist: aider's tags cache (a diskcache SQLite folder, normally ROOT/.aider.tags.cache.v4) is
put there, so the run is cold and the measured tree is not written to.

What it does is what aider does on the first start in a repository: `RepoMap.get_ranked_tags`
over every file — for each file, a tree-sitter parse and its tags query (definitions and
references; pygments tokens as references where the query finds only definitions), the tags
written to the diskcache — then the reference graph (networkx) and PageRank, and the ranked
definitions. With --map-tokens N it then renders the text map within N tokens (the token count
is aider's own sampling with a chars / 4 counter, so no tokenizer is loaded); the bench leaves it
at 0, because `repomap index` renders no map. No LLM, model, key or network is used: the script
imports aider.repomap only (not aider.main or litellm) and reports whether litellm got loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # in case anything loads litellm
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("AIDER_ANALYTICS", "false")

import_started = time.perf_counter()
from aider import __version__ as aider_version  # noqa: E402
from aider.repomap import RepoMap  # noqa: E402

import_seconds = time.perf_counter() - import_started


class QuietIO:
    """The part of aider's InputOutput that RepoMap calls: reading files and messages."""

    encoding = "utf-8"

    def __init__(self) -> None:
        self.errors = 0

    def read_text(self, filename, silent=False):
        try:
            with open(str(filename), encoding=self.encoding) as handle:  # as aider's io does
                return handle.read()
        except (OSError, UnicodeError) as error:
            self.tool_error(f"{filename}: {error}")
            return None

    def tool_output(self, *messages, **_):
        print(*messages, file=sys.stderr)

    def tool_warning(self, *messages, **_):
        print(*messages, file=sys.stderr)

    def tool_error(self, *messages, **_):
        self.errors += 1
        print(*messages, file=sys.stderr)


class CharsModel:
    """Stands in for aider's Model: token_count only, four characters a token."""

    def token_count(self, text):
        return len(text) / 4


class TimedRepoMap(RepoMap):
    """aider's RepoMap, unchanged, with the time spent computing tags (cache misses) summed."""

    def __init__(self, cache_dir: Path, **kwargs):
        self.TAGS_CACHE_DIR = str(cache_dir)  # absolute: Path(root) / it is it
        self.tags_seconds = 0.0
        self.definitions = 0
        self.references = 0
        self.tagged_files = 0
        super().__init__(**kwargs)

    def get_tags(self, fname, rel_fname):
        started = time.perf_counter()
        tags = super().get_tags(fname, rel_fname)
        self.tags_seconds += time.perf_counter() - started
        if tags:
            self.tagged_files += 1
        for tag in tags:
            if tag.kind == "def":
                self.definitions += 1
            elif tag.kind == "ref":
                self.references += 1
        return tags


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("file_list", type=Path)
    parser.add_argument("cache_dir", type=Path)
    parser.add_argument("--map-tokens", type=int, default=0)
    args = parser.parse_args(argv)
    if args.cache_dir.exists():
        parser.error(f"{args.cache_dir} exists: the run would not be cold")
    root = args.root.resolve()
    files = [str(root / line) for line in args.file_list.read_text().splitlines() if line]
    io = QuietIO()
    started = time.perf_counter()
    repo_map = TimedRepoMap(
        args.cache_dir.resolve(),
        map_tokens=max(args.map_tokens, 1),
        root=str(root),
        main_model=CharsModel(),
        io=io,
    )
    ranked = repo_map.get_ranked_tags([], files, set(), set())
    rank_seconds = time.perf_counter() - started
    tags_seconds = repo_map.tags_seconds  # rendering reads the cached tags again: not counted
    counts = (repo_map.tagged_files, repo_map.definitions, repo_map.references)
    map_chars, map_seconds = 0, 0.0
    if args.map_tokens > 0:
        map_started = time.perf_counter()
        text = repo_map.get_ranked_tags_map([], files, args.map_tokens)
        map_seconds = time.perf_counter() - map_started
        map_chars = len(text or "")
    print(
        json.dumps(
            {
                "aider": aider_version,
                "files": len(files),
                "tagged_files": counts[0],
                "definitions": counts[1],
                "references": counts[2],
                "ranked": len(ranked),
                "read_errors": io.errors,
                "import_seconds": round(import_seconds, 3),
                "tags_seconds": round(tags_seconds, 3),
                "rank_seconds": round(rank_seconds - tags_seconds, 3),
                "map_seconds": round(map_seconds, 3),
                "map_chars": map_chars,
                "litellm_loaded": "litellm" in sys.modules,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
