"""Relevance of natural-language code search: Recall@10 and MRR@10 per method, corpus and split.

    python bench/relevance.py                        # every corpus and method (a few minutes)
    python bench/relevance.py --corpus requests --method ripgrep --method symbols
    python bench/relevance.py --split heldout --misses search-hybrid
    python bench/relevance.py --json                 # also write bench/results/relevance-*.json

The questions are `bench/relevance/questions.jsonl`: typed as a person types them, written by
reading pinned real code (Django, Rust std, LLVM headers from get-corpora.sh; requests, click,
regex and spdlog from `bench/relevance/fetch.sh`, pinned in `bench/relevance/corpora.json`),
each with the defining function, class or docs section (path, start and end line) that answers
it. Each question carries its `split`, `tune` or `heldout`, fixed by a hash of its id: choose
ranking weights on `tune`, report `heldout`.

`bench/relevance/users.jsonl` (`--questions bench/relevance/users.jsonl`) holds questions that
search users wrote for projects repomap had not indexed before, frozen (sha256) before their
first search: 20 per project, over the corpora pinned after the first 24 in corpora.json. None
of them was read to choose a weight before it was frozen; the causes their users found for low
ranks were fixed afterwards, so from then on they are tune questions too (bench/README.md says
which session read which).

Each corpus is indexed once with the real CLI (`repomap index ROOT --db DB`; the databases stay
in ~/.cache/repomap-bench/relevance/, or $REPOMAP_BENCH_DIR/relevance/, and later runs bring
them up to date incrementally). Then every method answers every question through the CLI in a
subprocess (the ground truth, start-up included in its latency), except ripgrep, which is `rg`
itself:

| method | what runs |
| --- | --- |
| ripgrep | the question's words (lower-cased, stop words dropped, 3+ characters) as fixed strings, `rg -i -n --no-heading -F -e W1 -e W2 ...` over the whole corpus (rg's defaults: hidden and ignored files skipped); lines ranked by how many distinct words they hold, then path, then line |
| search-text | `repomap search-text QUESTION --json --limit 10`, the question as typed |
| search-text-or | the same with the words ORed: `W1 OR W2 OR ...` |
| symbols | `repomap symbols W --json --limit 10` for each word; a definition's rank is its best rank under any word, ties go to the one more words found, then path, then line |
| search-lexical, search-semantic, search-hybrid | `repomap search QUESTION --mode M --limit 10 --json` |

A result is a hit when its path is an answer's path and its line range overlaps the answer's
range (a result with one line: the line lies in the range). Recall@10 is the share of
questions with a hit in the top 10; MRR@10 is the mean of 1/rank of the first hit (0 without a
hit in the top 10). A method whose command does not exist yet (a usage error) is reported as
unavailable, not as zero; one that fails on every question of a corpus is reported with its
error. Latency is the median wall time per question (for symbols, all its words' calls).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import common

HERE = Path(__file__).resolve().parent / "relevance"
QUESTIONS_FILE = HERE / "questions.jsonl"
PINS_FILE = HERE / "corpora.json"
FETCH_SCRIPT = HERE / "fetch.sh"
TOP = 10
KINDS = ("where", "how", "what", "why")
SPLITS = ("tune", "heldout")
SEARCH_MODES = ("lexical", "semantic", "hybrid")
METHODS = ("ripgrep", "search-text", "search-text-or", "symbols") + tuple(
    f"search-{mode}" for mode in SEARCH_MODES
)
# A usage error from click: the command, an option or a --mode value this repomap lacks.
USAGE_ERROR = re.compile(r"No such command|No such option|Invalid value for '--mode'|Usage:")
# English function words plus the words questions are made of; what is left names the thing.
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can could did do does doesn't doing don't down during
    each else ever every few for from further get gets got had has have having he her here hers
    herself him himself his how however i if in into is isn't it its itself just let lets like may
    me might more most must my myself no nor not now of off on once one only or other ought our
    ours ourselves out over own same shall she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up upon us use used
    using very via was we were what when where whether which while who whom whose why will with
    within without would you your yours yourself yourselves""".split()  # noqa: SIM905
)
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # "user's" and "doesn't" stay one word


# --- questions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """A place in a corpus: a path relative to its root and an inclusive line range."""

    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    corpus: str
    language: str
    question: str
    kind: str
    answers: tuple[Span, ...]
    split: str


def split_of(question_id: str) -> str:
    """`tune` or `heldout`, by the parity of the sha256 of the id: stable and order-free."""
    return SPLITS[int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % 2]


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """The questions of a JSON-lines file, in file order."""
    questions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        answers = tuple(Span(a["path"], a["start_line"], a["end_line"]) for a in row["answers"])
        questions.append(
            Question(
                row["id"], row["corpus"], row["language"], row["question"], row["kind"], answers,
                row["split"],
            )
        )  # fmt: skip
    return questions


def question_problems(questions: Sequence[Question], roots: dict[str, Path]) -> list[str]:
    """What is wrong with the question set: fields, split, and each answer against its corpus
    (the file exists and the range lies within it). Corpora missing from `roots` are skipped."""
    problems = []
    ids = [q.id for q in questions]
    problems += [f"{qid}: duplicate id" for qid in sorted({i for i in ids if ids.count(i) > 1})]
    line_counts: dict[Path, int] = {}
    for q in questions:
        if q.kind not in KINDS:
            problems.append(f"{q.id}: kind {q.kind!r} is not one of {', '.join(KINDS)}")
        if q.split != split_of(q.id):
            problems.append(f"{q.id}: split {q.split!r}, but its id hashes to {split_of(q.id)!r}")
        if not q.question.strip() or not q.answers:
            problems.append(f"{q.id}: no question text or no answer")
        root = roots.get(q.corpus)
        if root is None:
            continue
        for answer in q.answers:
            file = root / answer.path
            if not file.is_file():
                problems.append(f"{q.id}: {answer.path} is not a file of corpus {q.corpus}")
                continue
            if file not in line_counts:
                line_counts[file] = len(file.read_bytes().splitlines())
            if not 1 <= answer.start_line <= answer.end_line <= line_counts[file]:
                problems.append(
                    f"{q.id}: {answer.path}:{answer.start_line}-{answer.end_line} is outside "
                    f"its {line_counts[file]} lines"
                )
    return problems


def query_words(question: str) -> list[str]:
    """The question's words, lower-cased, without stop words or words under 3 characters; the
    first occurrence of each, in order."""
    words = WORD.findall(question.lower().replace("\u2019", "'"))
    words = [w.removesuffix("'s") for w in words if w not in STOP_WORDS]
    return list(dict.fromkeys(w for w in words if len(w) >= 3 and w not in STOP_WORDS))


# --- scoring ---------------------------------------------------------------------------------


def is_hit(result: Span, answers: Iterable[Span]) -> bool:
    """The result's path is an answer's, their line ranges overlap, and the result is not
    much larger than the answer (at most 3x its lines + 30): a whole file or a 500-line class
    that holds the answering method overlaps it without pointing at it."""
    return any(
        result.path == a.path
        and result.start_line <= a.end_line
        and a.start_line <= result.end_line
        and _lines(result) <= 3 * _lines(a) + 30
        for a in answers
    )


def _lines(span: Span) -> int:
    return span.end_line - span.start_line + 1


def first_hit_rank(results: Sequence[Span], answers: Sequence[Span], top: int = TOP) -> int | None:
    """The 1-based rank of the first hit among the first `top` results, or None."""
    for rank, result in enumerate(results[:top], start=1):
        if is_hit(result, answers):
            return rank
    return None


def recall(ranks: Sequence[int | None], top: int = TOP) -> float:
    """Share of questions answered within the first `top` results."""
    return sum(1 for r in ranks if r is not None and r <= top) / len(ranks) if ranks else 0.0


def mrr(ranks: Sequence[int | None], top: int = TOP) -> float:
    """Mean reciprocal rank of the first hit, counting 0 beyond `top`."""
    return sum(1 / r for r in ranks if r is not None and r <= top) / len(ranks) if ranks else 0.0


# --- methods ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Result:
    """A method's ranked places for one question (best first), or why it has none."""

    spans: tuple[Span, ...] = ()
    names: tuple[str, ...] = ()  # what each place is (symbol name, kind), for --misses
    seconds: float = 0.0
    error: str | None = None  # the command failed for this question
    unavailable: str | None = None  # the command or mode does not exist in this repomap
    model_id: str | None = None  # `search`: the embedding model its answer says it used


def rank_lines(
    matches: Iterable[tuple[str, int, str]], words: Sequence[str], top: int = TOP
) -> list[Span]:
    """rg's matching lines, best first: more distinct query words, then path, then line."""
    scored = []
    for path, line, text in matches:
        low = text.lower()
        scored.append((-sum(1 for w in words if w in low), path, line))
    scored.sort()
    return [Span(path, line, line) for _, path, line in scored[:top]]


def run_ripgrep(root: Path, question: str) -> Result:
    """The words ORed as fixed strings, case-insensitive, over the whole corpus."""
    words = query_words(question)
    if not words:
        return Result()
    command = ["rg", "-i", "-n", "--no-heading", "--with-filename", "--null", "--no-messages"]
    command += ["-F", *(arg for w in words for arg in ("-e", w))]
    started = time.perf_counter()
    run = subprocess.run(command, cwd=root, capture_output=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if run.returncode > 1:
        return Result(seconds=seconds, error=run.stderr.decode(errors="replace").strip()[:200])
    matches = []
    for raw in run.stdout.split(b"\n"):
        path, sep, rest = raw.partition(b"\0")
        line, sep2, text = rest.partition(b":")
        if sep and sep2 and line.isdigit():
            matches.append(
                (path.decode(errors="replace"), int(line), text.decode(errors="replace"))
            )
    spans = rank_lines(matches, words)
    return Result(tuple(spans), tuple("" for _ in spans), seconds)


def parse_places(payload: Any) -> tuple[tuple[Span, ...], tuple[str, ...]]:
    """Places from any of repomap's JSON answers: `search` (path, start_line, end_line),
    `search-text` and `symbols` (file_path, line_number, end_line); a bare list or
    {"results": [...]}."""
    rows = payload.get("results", []) if isinstance(payload, dict) else payload
    spans, names = [], []
    for row in rows or []:
        path = row.get("path") or row.get("file_path")
        start = row.get("start_line") or row.get("line_number") or row.get("line")
        if path is None or start is None:
            continue
        end = row.get("end_line") or start
        spans.append(Span(path, int(start), int(end)))
        name = row.get("qualified_name") or row.get("name") or row.get("symbol_name") or ""
        kind = row.get("kind") or row.get("element_type") or ""
        names.append(f"{kind} {name}".strip())
    return tuple(spans), tuple(names)


def run_repomap(command: Sequence[str]) -> Result:
    """One repomap CLI call with --json; its places, or its error, or that it is unavailable."""
    started = time.perf_counter()
    run = subprocess.run(list(command), capture_output=True, text=True, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    stderr = run.stderr.strip()
    if run.returncode == 2 and USAGE_ERROR.search(stderr):
        return Result(seconds=seconds, unavailable=stderr.splitlines()[-1][:200])
    if run.returncode == 1 and not run.stdout.strip():
        return Result(seconds=seconds)  # found nothing (exit 1: grep's convention)
    if run.returncode not in (0, 1):
        return Result(seconds=seconds, error=(stderr.splitlines() or ["?"])[-1][:200])
    try:
        payload = json.loads(run.stdout)
        spans, names = parse_places(payload)
    except (json.JSONDecodeError, AttributeError, TypeError, ValueError) as e:
        return Result(seconds=seconds, error=f"unreadable JSON: {e}")
    meta = payload.get("meta") if isinstance(payload, dict) else None
    model_id = meta.get("model_id") if isinstance(meta, dict) else None
    return Result(spans, names, seconds, model_id=model_id)


def merge_by_best_rank(per_word: Sequence[Result], top: int = TOP) -> Result:
    """One ranking from several: a place's best rank under any word; ties to the place more
    words found, then path, then line."""
    best: dict[Span, list] = {}
    for result in per_word:
        for rank, (span, name) in enumerate(zip(result.spans, result.names, strict=True), 1):
            if span in best:
                best[span][0] = min(best[span][0], rank)
                best[span][1] -= 1
            else:
                best[span] = [rank, -1, name]
    ordered = sorted(
        best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[0].path, kv[0].start_line)
    )
    seconds = sum(r.seconds for r in per_word)
    errors = [r.error for r in per_word if r.error]
    return Result(
        tuple(span for span, _ in ordered[:top]),
        tuple(info[2] for _, info in ordered[:top]),
        seconds,
        errors[0] if errors and len(errors) == len(per_word) else None,
        next((r.unavailable for r in per_word if r.unavailable), None),
    )


def answer(method: str, question: Question, root: Path, db: Path, repomap: list[str]) -> Result:
    """Run `method` for one question."""
    if method == "ripgrep":
        return run_ripgrep(root, question.question)
    options = ["--json", "--limit", str(TOP), "--db", str(db)]
    if method == "search-text":  # "--": a question is never read as an option
        return run_repomap([*repomap, "search-text", *options, "--", question.question])
    words = query_words(question.question)
    if method == "search-text-or":
        if not words:
            return Result()
        return run_repomap([*repomap, "search-text", *options, "--", " OR ".join(words)])
    if method == "symbols":
        calls = [[*repomap, "symbols", *options, "--", word] for word in words]
        return merge_by_best_rank([run_repomap(call) for call in calls])
    mode = method.removeprefix("search-")
    return run_repomap([*repomap, "search", *options, "--mode", mode, "--", question.question])


# --- running ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One method's answer to one question, scored."""

    question: str
    corpus: str
    method: str
    rank: int | None
    seconds: float
    error: str | None = None
    top: tuple[str, ...] = ()  # "path:start-end name" of the first results
    model_id: str | None = None


def corpus_roots(names: Iterable[str]) -> dict[str, Path]:
    """Materialize the corpora (get-corpora.sh for Django, Rust, LLVM; fetch.sh for the
    others); {name: root}."""
    pins = json.loads(PINS_FILE.read_text())["corpora"]
    names = list(names)
    shared = [n for n in names if pins[n]["fetched_by"] == "get-corpora.sh"]
    ours = [n for n in names if pins[n]["fetched_by"] == "fetch.sh"]
    roots = common.materialize(shared) if shared else {}
    if ours:
        subprocess.run(
            ["bash", str(FETCH_SCRIPT), "--only", ",".join(ours)],
            env={**os.environ, "REPOMAP_CORPORA": str(common.CORPORA_DIR)},
            stdout=sys.stderr,
            check=True,
        )
        roots |= {n: common.CORPORA_DIR / pins[n]["root"] for n in ours}
    return roots


def index_corpus(root: Path, db: Path, repomap: list[str], fresh: bool, embed: bool) -> float:
    """`repomap index ROOT --db DB` (incremental unless `fresh`; `--embed` when a method searches
    by meaning: a plain index run leaves vectors to the servers); seconds taken."""
    if fresh:
        common.remove_database(db)
    db.parent.mkdir(parents=True, exist_ok=True)
    command = [*repomap, "index", str(root), "--db", str(db), "--json"]
    run = common.timed([*command, "--embed"] if embed else command).check()
    return run.seconds


def evaluate(
    questions: Sequence[Question],
    methods: Sequence[str],
    roots: dict[str, Path],
    dbs: dict[str, Path],
    repomap: list[str],
) -> tuple[list[Outcome], dict[tuple[str, str], str]]:
    """Every method on every question; the outcomes and {(method, corpus): why unavailable}."""
    outcomes: list[Outcome] = []
    unavailable: dict[tuple[str, str], str] = {}
    for q in questions:
        for method in methods:
            if (method, q.corpus) in unavailable:
                continue
            result = answer(method, q, roots[q.corpus], dbs[q.corpus], repomap)
            if result.unavailable:
                unavailable[(method, q.corpus)] = result.unavailable
                continue
            top = tuple(
                f"{s.path}:{s.start_line}-{s.end_line} {name}".rstrip()
                for s, name in zip(result.spans[:3], result.names[:3], strict=True)
            )
            rank = first_hit_rank(result.spans, q.answers)
            outcomes.append(
                Outcome(q.id, q.corpus, method, rank, result.seconds, result.error, top,
                        result.model_id)
            )  # fmt: skip
    return outcomes, unavailable


# --- reporting -------------------------------------------------------------------------------


def cell(outcomes: Sequence[Outcome]) -> str:
    """`R@10 / MRR` of some outcomes, `n/a` when there are none, `error` when all failed."""
    if not outcomes:
        return "n/a"
    if all(o.error for o in outcomes):
        return "error"
    ranks = [o.rank for o in outcomes]
    return f"{recall(ranks):.2f} / {mrr(ranks):.2f}"


class Report:
    """The scored outcomes, cut by method and by any question attribute."""

    def __init__(
        self,
        questions: Sequence[Question],
        outcomes: Sequence[Outcome],
        methods: Sequence[str],
        unavailable: dict[tuple[str, str], str],
    ) -> None:
        self.questions = questions
        self.by_id = {q.id: q for q in questions}
        self.outcomes = outcomes
        self.methods = methods
        self.unavailable = unavailable
        self.corpora = list(dict.fromkeys(q.corpus for q in questions))

    def pick(self, method: str, **where: str) -> list[Outcome]:
        """The outcomes of `method` on the questions whose attributes equal `where`."""
        return [
            o for o in self.outcomes
            if o.method == method
            and all(getattr(self.by_id[o.question], k) == v for k, v in where.items())
        ]  # fmt: skip

    def cell(self, method: str, **where: str) -> str:
        """`R@10 / MRR` of `method` on some questions, or why there is no figure."""
        corpora = [where["corpus"]] if "corpus" in where else self.corpora
        if all((method, c) in self.unavailable for c in corpora):
            return "unavailable"
        return cell(self.pick(method, **where))

    def count(self, **where: str) -> int:
        return sum(1 for q in self.questions if all(getattr(q, k) == v for k, v in where.items()))

    def overall(self) -> str:
        rows = []
        for method in self.methods:
            mine = self.pick(method)
            latency = f"{common.median(o.seconds for o in mine) * 1000:.0f}" if mine else ""
            rows.append(
                [method, self.cell(method)]
                + [self.cell(method, split=s) for s in SPLITS]
                + [latency, str(sum(1 for o in mine if o.error))]
            )
        headers = ["method", "all", *(f"{s} ({self.count(split=s)})" for s in SPLITS)]
        return common.markdown_table([*headers, "median ms", "errors"], rows, "lrrrrr")

    def per_corpus(self) -> str:
        rows = []
        for corpus in self.corpora:
            n = " + ".join(str(self.count(corpus=corpus, split=s)) for s in SPLITS)
            for i, method in enumerate(self.methods):
                rows.append(
                    [corpus if i == 0 else "", n if i == 0 else "", method]
                    + [self.cell(method, corpus=corpus, split=s) for s in SPLITS]
                    + [self.cell(method, corpus=corpus)]
                )
        headers = ["corpus", "tune + heldout", "method", *SPLITS, "all"]
        return common.markdown_table(headers, rows, "lrlrrr")

    def per(self, attribute: str, values: Sequence[str]) -> str:
        values = [v for v in values if self.count(**{attribute: v})]
        rows = [
            [method, *(self.cell(method, **{attribute: v}) for v in values)]
            for method in self.methods
        ]
        headers = ["method", *(f"{v} ({self.count(**{attribute: v})})" for v in values)]
        return common.markdown_table(headers, rows, "l" + "r" * len(values))

    def notes(self) -> list[str]:
        out = []
        if self.unavailable:
            reasons = sorted({f"{m}: {why}" for (m, _), why in self.unavailable.items()})
            out.append("Unavailable: " + "; ".join(reasons))
        modelless = [
            m for m in self.methods
            if m in ("search-semantic", "search-hybrid")
            and (mine := [o for o in self.pick(m) if not o.error])
            and all(o.model_id is None for o in mine)
        ]  # fmt: skip
        if modelless:
            out.append(
                f"{', '.join(modelless)}: every answer's meta.model_id was null, so no embedding "
                "model took part (the figures are lexical ranking)."
            )
        errors = [o for o in self.outcomes if o.error]
        if errors:
            first = errors[0]
            out.append(
                f"Errors ({len(errors)}), the first: {first.method} on {first.question}: "
                f"{first.error}"
            )
        return out

    def markdown(self) -> str:
        """The whole report: overall, per corpus and split, per language, per kind, notes."""
        languages = list(dict.fromkeys(q.language for q in self.questions))
        sections = [
            (f"Overall ({len(self.questions)} questions; cells are Recall@{TOP} / MRR@{TOP})",
             self.overall()),
            ("Per corpus and split", self.per_corpus()),
            ("Per language", self.per("language", languages)),
            ("Per kind", self.per("kind", KINDS)),
        ]  # fmt: skip
        out = [f"### {title}\n\n{table}" for title, table in sections]
        return "\n\n".join(out + self.notes())


def misses(questions: Sequence[Question], outcomes: Sequence[Outcome], method: str) -> str:
    """Each question `method` did not answer within the top 10, with what it returned first."""
    by_id = {q.id: q for q in questions}
    lines = [f"### Misses of {method}", ""]
    mine = [o for o in outcomes if o.method == method]
    if not mine:
        return "\n".join(lines + [f"({method} has no results: unavailable or not run)"])
    for o in mine:
        if o.rank is not None:
            continue
        q = by_id[o.question]
        expected = ", ".join(f"{a.path}:{a.start_line}-{a.end_line}" for a in q.answers)
        lines.append(f"- {q.id} [{q.corpus}, {q.kind}, {q.split}] {q.question}")
        lines.append(f"  expected: {expected}")
        if o.error:
            lines.append(f"  error: {o.error}")
        for place in o.top or ["(nothing)"]:
            lines.append(f"  got: {place}")
    ranked = sorted(
        ((o.rank, o.question) for o in mine if o.rank and o.rank > 1), key=lambda r: (-r[0], r[1])
    )
    if ranked:
        lines += [
            "",
            "Found below rank 1: " + ", ".join(f"{question} ({rank})" for rank, question in ranked),
        ]
    return "\n".join(lines)


def default_mode(repomap: list[str], db: Path) -> str | None:
    """The mode `repomap search` uses when none is given, read from its JSON; None without it."""
    run = subprocess.run(
        [*repomap, "search", "configuration", "--json", "--limit", "1", "--db", str(db)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        return json.loads(run.stdout).get("mode")
    except (json.JSONDecodeError, AttributeError):
        return None


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    questions = [
        q for q in load_questions(args.questions)
        if (not args.corpus or q.corpus in args.corpus) and (not args.split or q.split == args.split)
        and (not args.id or q.id in args.id)
    ]  # fmt: skip
    if not questions:
        raise SystemExit("no question matches the filters")
    methods = args.method or list(METHODS)
    if "ripgrep" in methods and not shutil.which("rg"):
        raise SystemExit("rg is missing; install ripgrep (apt-get install -y ripgrep)")
    repomap = shlex.split(args.repomap) if args.repomap else common.repomap_command()
    corpora = list(dict.fromkeys(q.corpus for q in questions))
    roots = corpus_roots(corpora)
    problems = question_problems(questions, roots)
    if problems:
        raise SystemExit("the question file has problems:\n" + "\n".join(problems))
    base = Path(os.environ.get("REPOMAP_BENCH_DIR", Path.home() / ".cache" / "repomap-bench"))
    dbs = {name: base / "relevance" / f"{name}.db" for name in corpora}
    embed = any(method in ("search-semantic", "search-hybrid") for method in methods)
    for name in corpora:
        seconds = index_corpus(roots[name], dbs[name], repomap, args.fresh, embed)
        print(f"index {name}: {seconds:.1f} s ({dbs[name]})", file=sys.stderr)
    started = time.perf_counter()
    outcomes, unavailable = evaluate(questions, methods, roots, dbs, repomap)
    print(f"{len(questions)} questions x {len(methods)} methods in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip
    report = Report(questions, outcomes, methods, unavailable)
    print(report.markdown())
    if args.misses is not None:
        method = args.misses or _default_method(repomap, dbs[corpora[0]])
        print("\n" + misses(questions, outcomes, method))
    if args.json:
        _write_json(report, repomap)
    return 0


def _default_method(repomap: list[str], db: Path) -> str:
    """`search-<mode>` for the mode `repomap search` uses when none is given."""
    mode = default_mode(repomap, db)
    return f"search-{mode}" if mode else "search (unavailable)"


def _write_json(report: Report, repomap: list[str]) -> None:
    """Every outcome and the figures per method, corpus and split, in bench/results/."""
    summary = {}
    for method in report.methods:
        for corpus in (*report.corpora, "all"):
            for split in (*SPLITS, "all"):
                where = {k: v for k, v in (("corpus", corpus), ("split", split)) if v != "all"}
                mine = report.pick(method, **where)
                ranks = [o.rank for o in mine]
                summary[f"{method}/{corpus}/{split}"] = {
                    "questions": len(mine),
                    "recall_at_10": recall(ranks),
                    "mrr_at_10": mrr(ranks),
                    "median_ms": common.median(o.seconds for o in mine) * 1000 if mine else None,
                    "errors": sum(1 for o in mine if o.error),
                }
    version = subprocess.run([*repomap, "--version"], capture_output=True, text=True).stdout
    payload = {
        "repomap": repomap,
        "repomap_version": version.strip(),
        "questions_sha256": hashlib.sha256(QUESTIONS_FILE.read_bytes()).hexdigest(),
        "questions": len(report.questions),
        "summary": summary,
        "unavailable": {f"{m}/{c}": why for (m, c), why in report.unavailable.items()},
        "outcomes": [asdict(o) for o in report.outcomes],
    }
    results = common.PROJECT_ROOT / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"relevance-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(payload, indent=1))
    print(f"wrote {path}", file=sys.stderr)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    parser.add_argument("--method", action="append", choices=METHODS, help="repeatable")
    parser.add_argument("--split", choices=SPLITS)
    parser.add_argument("--id", action="append", help="only this question (repeatable)")
    parser.add_argument(
        "--misses", nargs="?", const="", choices=["", *METHODS],
        help="list the questions this method missed (default: the default mode of `search`)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="also write bench/results/*.json")
    parser.add_argument("--fresh", action="store_true", help="rebuild the indexes")
    parser.add_argument("--questions", type=Path, default=QUESTIONS_FILE)
    parser.add_argument("--repomap", help="the repomap command to run (default: this venv's)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
