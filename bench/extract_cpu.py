"""CPU of the worker's per-file extraction, one process, against the parse floor.

    python bench/extract_cpu.py [--sample kernel,llvm,django,rust] [--runs 3] [--against DIR]
                                [--digests FOLDER] [--profile N]

What a `repomap index` worker does to each file (pipeline.read_and_extract: read, hash, decode,
the extractor, text rows with secrets redacted and subwords, chunks), run in ONE process over:

- kernel: every 10th `.c`/`.h` file of the Linux kernel tree in sorted order (the tree is
  `$REPOMAP_KERNEL`, default /tmp/kernrank/kernel, else the corpora's `large/`; only read),
  each `.h` read as the index reads it (languages.header_languages over the whole tree's list);
- llvm: every C/C++ file `repomap index` reads in LLVM's headers (get-corpora.sh cpp);
- django: every Python file `repomap index` reads in Django (get-corpora.sh python), for the
  Python extraction (`ast`, pylex, references, chunks) the same way;
- rust: every Rust file `repomap index` reads in the Rust standard library (get-corpora.sh rust).

Per sample and run it prints the CPU seconds (time.process_time) of the whole worker step and
of its parts (the extractor call; the chunks, index/chunks.py; the rest: read, hash, decode,
text rows), the floor (tree-sitter parsing the same files with their language's grammar, the
bytes read before the clock starts), the ratio extraction/floor, and a sha256 over every row
the worker returns (FileRows with mtime_ns zeroed, repr'd in file order): a change that must
not change the output keeps the digest.

Each run is a fresh process (`--one`), so no cache of a previous run helps the next.
`--against DIR` alternates runs of another tree installed in DIR (`pip install --no-deps
--target DIR OLD_SOURCE`) with runs of this one and prints both, with the digests compared:
the machine is shared, so A and B take turns and the medians are compared. `--digests FOLDER`
writes each file's digest per sample, to find the file whose rows changed. `--profile N`
runs the sample once under cProfile and prints the top N functions by own time.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common

KERNEL = Path(os.environ.get("REPOMAP_KERNEL", "/tmp/kernrank/kernel"))
KERNEL_STEP = 10  # every 10th file of the sorted list
SAMPLES = ("kernel", "llvm", "django", "rust")


LARGE = common.CORPORA_DIR / "large"


def kernel_root() -> Path | None:
    """The kernel tree to sample: KERNEL, else the corpora's `large/`, else None."""
    return next((root for root in (KERNEL, LARGE) if root.is_dir()), None)


def kernel_files() -> list[tuple[Path, str, str]]:
    """(path, rel_path, language) of every KERNEL_STEP-th `.c`/`.h` of the kernel, sorted."""
    from repomap.config import DEFAULT_MAX_FILE_SIZE
    from repomap.languages import header_languages

    root = kernel_root()
    if root is None:
        raise SystemExit(f"no kernel tree at {KERNEL} nor {LARGE}: get-corpora.sh --large")
    rel_paths = []
    for folder, _, names in os.walk(root):  # Debian's .gitignore hides it all from the walk
        for name in names:
            if name.endswith((".c", ".h")):
                rel_paths.append(os.path.relpath(os.path.join(folder, name), root))
    rel_paths.sort()
    headers = header_languages(rel_paths)
    chosen = []
    for rel_path in rel_paths[::KERNEL_STEP]:
        path = root / rel_path
        if path.is_file() and path.stat().st_size <= DEFAULT_MAX_FILE_SIZE:
            chosen.append((path, rel_path, headers.get(rel_path, "c")))
    return chosen


def llvm_files() -> list[tuple[Path, str, str]]:
    """(path, rel_path, language) of every C/C++ file `repomap index` reads in LLVM's headers."""
    root = common.materialize(["cpp"])["cpp"]
    return [
        (path, path.relative_to(root).as_posix(), language)
        for path, language, _ in sorted(common.indexed_files(root))
        if language in ("c", "cpp")
    ]


def django_files() -> list[tuple[Path, str, str]]:
    """(path, rel_path, "python") of every Python file `repomap index` reads in Django."""
    root = common.materialize(["python"])["python"]
    return [
        (path, path.relative_to(root).as_posix(), language)
        for path, language, _ in sorted(common.indexed_files(root))
        if language == "python"
    ]


def rust_files() -> list[tuple[Path, str, str]]:
    """(path, rel_path, "rust") of every Rust file `repomap index` reads in Rust std."""
    root = common.materialize(["rust"])["rust"]
    return [
        (path, path.relative_to(root).as_posix(), language)
        for path, language, _ in sorted(common.indexed_files(root))
        if language == "rust"
    ]


def sample_files(name: str) -> list[tuple[Path, str, str]]:
    samples = {"kernel": kernel_files, "llvm": llvm_files, "django": django_files}
    return {**samples, "rust": rust_files}[name]()


class _Clock:
    """CPU seconds spent inside a wrapped function, summed over calls."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function, self.seconds = function, 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return self.function(*args, **kwargs)
        finally:
            self.seconds += time.process_time() - started


def measure_one(name: str, digests: Path | None, profile: int) -> dict:
    """One run over sample `name` in this process: CPU figures and the rows' digest."""
    import repomap.extractors
    from repomap.extractors.treesitter import parser

    from repomap.index import pipeline
    from repomap.languages import language_of_header

    files = sample_files(name)
    jobs = [
        pipeline.Job(rel_path, str(path), language, path.stat().st_size, 0, None)
        for path, rel_path, language in files
    ]
    extractor = repomap.extractors.extract = _Clock(repomap.extractors.extract)
    chunker = pipeline.code_chunks = _Clock(pipeline.code_chunks)
    total = hashlib.sha256()
    lines = []
    gc.disable()  # as in a worker (pipeline._no_cyclic_gc)
    profiler = cProfile.Profile() if profile else None
    worker, skipped = 0.0, 0
    for job in jobs:
        # Each file's rows are digested and dropped before the next, as a worker sends them
        # off: a process holding every file's rows grew to GBs and slowed the extraction.
        started = time.process_time()
        if profiler:
            profiler.enable()
        result = pipeline.read_and_extract(job)
        if profiler:
            profiler.disable()
        worker += time.process_time() - started
        if not isinstance(result, pipeline.store.FileRows):
            skipped += 1
        else:
            result = result._replace(mtime_ns=0)
        digest = hashlib.sha256(repr(result).encode()).hexdigest()
        total.update(digest.encode())
        lines.append(f"{job.rel_path}\t{digest}\n")
        del result  # freed here, not in the next file's time
    if digests:
        digests.mkdir(parents=True, exist_ok=True)
        (digests / f"{name}.tsv").write_text("".join(lines))
    # Each file with the grammar the worker parses it with (a `.h` may turn out C++).
    sources = [
        (source := path.read_bytes(), language_of_header(rel_path, language, source))
        for path, rel_path, language in files
    ]
    started = time.process_time()
    for source, language in sources:
        parser(language).parse(source)
    floor = time.process_time() - started
    if profiler:
        stats = pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime")
        stats.print_stats(profile)
    return {
        "sample": name,
        "files": len(files),
        "bytes": sum(len(source) for source, _ in sources),
        "skipped": skipped,
        "worker": worker,
        "extract": extractor.seconds,
        "chunks": chunker.seconds,
        "floor": floor,
        "digest": total.hexdigest(),
        "extractors": str(Path(repomap.extractors.__file__).parent),  # which tree ran
    }


def run_child(name: str, pythonpath: str | None, digests: Path | None) -> dict:
    """measure_one in a fresh process, this tree's install or the one at `pythonpath`."""
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    command = [sys.executable, str(Path(__file__)), "--one", name]
    if digests:
        command += ["--digests", str(digests)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"run failed ({' '.join(command)}):\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def report(name: str, label: str, runs: list[dict]) -> list[str]:
    med = {key: common.median(run[key] for run in runs) for key in ("worker", "extract", "chunks")}
    floor = common.median(run["floor"] for run in runs)
    ratio = common.median(run["worker"] / run["floor"] for run in runs)
    extract_ratio = common.median(run["extract"] / run["floor"] for run in runs)
    rest = common.median(run["worker"] - run["extract"] - run["chunks"] for run in runs)
    spread = f"{min(r['worker'] for r in runs):.2f}-{max(r['worker'] for r in runs):.2f}"
    digests = {run["digest"][:16] for run in runs}
    return [
        name,
        label,
        common.fmt_count(runs[0]["files"]),
        f"{med['worker']:.2f} s ({spread})",
        f"{med['extract']:.2f} s",
        f"{med['chunks']:.2f} s",
        f"{rest:.2f} s",
        f"{floor:.2f} s",
        f"{ratio:.2f}×",
        f"{extract_ratio:.2f}×",
        ", ".join(sorted(digests)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", default="kernel,llvm")  # django, rust: on request
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", metavar="DIR", help="another tree installed with --target")
    parser.add_argument("--digests", type=Path, metavar="FOLDER", help="each file's digest")
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: one run, JSON out
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one, args.digests, 0)))
        return
    names = [name for name in args.sample.split(",") if name]
    if unknown := [name for name in names if name not in SAMPLES]:
        parser.error(f"unknown sample {', '.join(unknown)}; choose from {', '.join(SAMPLES)}")
    if "kernel" in names and kernel_root() is None:  # `run.py --all` runs this with no argument
        print(f"kernel: no tree at {KERNEL} nor {LARGE}, skipped (get-corpora.sh --large)")
        names.remove("kernel")
    if args.profile:
        for name in names:
            print(json.dumps(measure_one(name, args.digests, args.profile)))
        return
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sides = [("base", args.against), ("this", None)] if args.against else [("this", None)]
    runs: dict[tuple[str, str], list[dict]] = {}
    for number in range(args.runs):
        for name in names:
            for label, pythonpath in sides:  # A and B take turns
                folder = args.digests / label if args.digests and number == 0 else None
                run = run_child(name, pythonpath, folder)
                runs.setdefault((name, label), []).append(run)
                print(
                    f"run {number + 1} {name} {label}: worker {run['worker']:.2f} s, "
                    f"floor {run['floor']:.2f} s, digest {run['digest'][:16]}, "
                    f"from {run['extractors']}",
                    file=sys.stderr,
                )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    headers = [
        "sample", "tree", "files", "worker CPU (range)", "extractor", "chunks", "rest",
        "floor", "worker/floor", "extractor/floor", "digest",
    ]  # fmt: skip
    rows = [report(name, label, runs[(name, label)]) for name in names for label, _ in sides]
    print(f"medians of {args.runs} runs, one process each, CPU seconds (time.process_time)")
    print(common.markdown_table(headers, rows, "llrrrrrrrrl"))
    if args.against:
        for name in names:
            base = {run["digest"] for run in runs[(name, "base")]}
            this = {run["digest"] for run in runs[(name, "this")]}
            print(f"{name}: rows {'identical' if base == this else 'DIFFER'} (digest)")


if __name__ == "__main__":
    main()
