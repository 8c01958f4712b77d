"""The page's first results on screen after the last keystroke, in a real browser, on Django.

    python bench/page.py                                  # the embedded Django index, if kept
    python bench/page.py --db ~/.cache/repomap-bench-emb/relevance/python.db --rounds 3

The real `repomap serve` runs on the Django corpus with a copy of `--db` (the shared index is
never opened: the copy sits in a scratch folder; the search log is off), and Debian's Chromium,
driven by Playwright, loads the page at `/`. For each mode (hybrid, text, symbols, literal) and
each query the script clears the search box, types the query one key at a time (60 ms between
keys, quicker than the debounce, as a person types), and reads from the page
`window.repomapTimings`: `input`, the time of the last keystroke's input event, and `shown`,
the time the hits of that query were in the DOM (after the debounce, the request, and the
rendering). The figure is `shown - input` in milliseconds; it includes the page's debounce
(`DEBOUNCE_MS` in app.js). One warm-up query per mode is not counted (the first hybrid query
loads the embedding model). The machine is shared: the header gives its load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import common

DEFAULT_DB = Path.home() / ".cache/repomap-bench-emb/relevance/python.db"
CORPUS = Path.home() / ".cache/repomap-corpora/python"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
QUERIES = {
    "hybrid": ["where is the password hashed", "csrf token check", "queryset select related",
               "template loader cache", "parse http date", "migration autodetector rename"],
    "text": ["connection pool", "timezone aware", "deprecated", "transaction atomic",
             "session expired", "foreign key"],
    "symbols": ["QuerySet.filter", "make_password", "get_response", "reverse", "Field",
                "as_sql"],
    "literal": ["select_for_update", "DEFAULT_AUTO_FIELD", "csrftoken", "utf-8",
                "is not supported", "HttpResponse"],
}  # fmt: skip
WARM_UP = {"hybrid": "user login", "text": "cache", "symbols": "Model", "literal": "TODO"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(db: Path, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [*common.repomap_command(), "serve", str(CORPUS), "--db", str(db), "--port", str(port),
         "--rate-limit", "0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "REPOMAP_SEARCH_LOG": "0"},
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"repomap serve exited: {process.stderr.read().decode()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    sys.exit("repomap serve did not answer /healthz")


def _type(page, mode: str, query: str) -> float:
    """Type `query` in `mode`; the ms from its last keystroke to its hits on screen."""
    page.locator(f'input[name="mode"][value="{mode}"]').check()
    box = page.locator("#q")
    box.fill("")
    page.wait_for_timeout(200)
    box.press_sequentially(query, delay=60)
    page.wait_for_function(
        "([q, mode]) => window.repomapTimings.q === q && window.repomapTimings.mode === mode",
        arg=[query, mode],
        timeout=30000,
    )
    timings = page.evaluate("window.repomapTimings")
    return timings["shown"] - timings["input"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=DEFAULT_DB)
    parser.add_argument("--rounds", type=int, default=2, help="times each query is typed")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    if not args.db.exists() or not CORPUS.exists():
        sys.exit(f"need the Django corpus ({CORPUS}) and an index of it ({args.db})")
    from playwright.sync_api import sync_playwright

    scratch = common.scratch_dir("repomap-bench-page-")
    copy = scratch / "index.db"
    shutil.copyfile(args.db, copy)  # the shared index stays untouched
    port = _free_port()
    server = _serve(copy, port)
    print(f"# page: first results after the last keystroke, Django, load {os.getloadavg()[0]:.2f}")
    print(f"index: a copy of {args.db}; server http://127.0.0.1:{port}/; {args.rounds} rounds\n")
    rows = []
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(f"http://127.0.0.1:{port}/")
            everything: list[float] = []
            for mode, queries in QUERIES.items():
                _type(page, mode, WARM_UP[mode])
                found = [_type(page, mode, q) for _ in range(args.rounds) for q in queries]
                everything += found
                rows.append([mode, str(len(found)), f"{common.median(found):.0f}",
                             f"{common.percentile(found, 90):.0f}", f"{max(found):.0f}"])  # fmt: skip
            rows.append(["all", str(len(everything)), f"{common.median(everything):.0f}",
                         f"{common.percentile(everything, 90):.0f}", f"{max(everything):.0f}"])  # fmt: skip
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)
        shutil.rmtree(scratch, ignore_errors=True)
    print(common.markdown_table(["mode", "queries", "median ms", "p90 ms", "max ms"], rows))
    print("\n(ms from the last keystroke's input event to the hits in the DOM, debounce included)")


if __name__ == "__main__":
    main()
