"""Do two indexes answer the same? `search-text`, `search --mode lexical`, `symbols` and
`search-docs` for a fixed set of queries, each run through the real CLI on each index.

    python bench/answers.py --before-db OLD.db [--before-repomap PATH] --after-db NEW.db
        [--after-repomap PATH] [--limit N] [--save DIR]

A storage change (schema, insert order, what a table keeps) must leave every answer as it was:
run the old version's `repomap` on an index it built and this version's on one it built from
the same tree. Answers are compared whole (paths, lines, snippets, scores, order) after
dropping the timing fields; the first difference of each differing query is printed. The
queries are Django's (bench/serve_load.py's lists and the relevance questions).
Exit status 0: every answer identical; 1: some differ.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import common
from serve_load import QUESTIONS as SHORT_QUESTIONS
from serve_load import SYMBOL_QUERIES, TEXT_QUERIES

RELEVANCE = Path(__file__).resolve().parent / "relevance" / "questions.jsonl"
LITERALS = ["Failed to", "DEFAULT_", "timeout", "utf-8", "%s", "TODO"]
DOCS_QUERIES = [*TEXT_QUERIES, "install", "settings reference", "release notes security"]
TEXT_EXTRA = ['"end of file"', "connection OR cursor", "cache NOT timeout", "deprecat*", "con*",
              "get*", "form* AND valid*", "de*", '"raise an" exc*']  # fmt: skip
DROPPED = ("meta", "took_ms")  # timings: never the same twice


def queries() -> list[tuple[str, list[str]]]:
    """(command, arguments) of every query asked."""
    questions = [
        json.loads(line)["question"]
        for line in RELEVANCE.read_text().splitlines()
        if line.strip() and json.loads(line)["corpus"] == "python"
    ]
    asked = [("search-text", [query]) for query in [*TEXT_QUERIES, *TEXT_EXTRA]]
    asked += [("search-text", [literal, "--literal"]) for literal in LITERALS]
    asked += [("search", [q, "--mode", "lexical"]) for q in [*SHORT_QUESTIONS, *questions]]
    asked += [("symbols", [query]) for query in SYMBOL_QUERIES]
    asked += [("search-docs", [query]) for query in DOCS_QUERIES]
    return asked


def answers(repomap: str, db: Path, limit: int) -> list[dict]:
    """Each query's JSON answer (exit status kept, timing fields dropped)."""
    found = []
    for command, arguments in queries():
        run = subprocess.run(
            [repomap, command, *arguments, "--json", "--no-refresh", "--limit", str(limit),
             "--db", str(db)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if run.returncode not in (0, 1):
            raise SystemExit(f"{command} {arguments}: exit {run.returncode}: {run.stderr.strip()}")
        answer = json.loads(run.stdout)
        for key in DROPPED:
            answer.pop(key, None)
        found.append({"command": command, "arguments": arguments, "exit": run.returncode,
                      "answer": answer})  # fmt: skip
    return found


def first_difference(before: object, after: object, where: str = "") -> str:
    """Where two JSON values first differ, as a path and the two values (cut)."""
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                return first_difference(before.get(key), after.get(key), f"{where}.{key}")
    if isinstance(before, list) and isinstance(after, list):
        for index, (left, right) in enumerate(zip(before, after, strict=False)):
            if left != right:
                return first_difference(left, right, f"{where}[{index}]")
        if len(before) != len(after):
            return f"{where}: {len(before)} items before, {len(after)} after"
    return f"{where}: {json.dumps(before)[:120]} -> {json.dumps(after)[:120]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-db", type=Path, required=True)
    parser.add_argument("--before-repomap", default=None, help="default: this environment's")
    parser.add_argument("--after-db", type=Path, required=True)
    parser.add_argument("--after-repomap", default=None, help="default: this environment's")
    parser.add_argument("--limit", type=int, default=50, help="results per query (default 50)")
    parser.add_argument("--save", type=Path, help="also write both sides' answers here")
    args = parser.parse_args(argv)
    own = shutil.which("repomap", path=str(Path(sys.executable).parent)) or "repomap"
    before = answers(args.before_repomap or own, args.before_db, args.limit)
    after = answers(args.after_repomap or own, args.after_db, args.limit)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        (args.save / "before.json").write_text(json.dumps(before, indent=1))
        (args.save / "after.json").write_text(json.dumps(after, indent=1))
    totals: dict[str, list[int]] = {}
    differing = []
    for old, new in zip(before, after, strict=True):
        same = old["exit"] == new["exit"] and old["answer"] == new["answer"]
        counts = totals.setdefault(old["command"], [0, 0, 0])
        counts[0] += 1
        counts[1] += same
        counts[2] += len(old["answer"].get("results", []))
        if not same:
            differing.append(
                f"- `{old['command']} {' '.join(old['arguments'])}`: "
                + first_difference(old["answer"], new["answer"])
            )
    print(f"## Answers before and after\n\nbefore: `{args.before_db}`, after: `{args.after_db}`, "
          f"--limit {args.limit}\n")  # fmt: skip
    rows = [
        [command, str(asked), str(same), str(results), "PASS" if same == asked else "**FAIL**"]
        for command, (asked, same, results) in totals.items()
    ]
    print(common.markdown_table(
        ["command", "queries", "identical", "results compared", "result"], rows, "lrrrl"))  # fmt: skip
    if differing:
        print("\n" + "\n".join(differing))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
