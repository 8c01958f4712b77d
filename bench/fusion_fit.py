"""A learned fusion for `repomap search` (issue 17): features per candidate, a linear model fit
on the tune half of bench/relevance.py's questions, figures per split, corpus and for Django.

    REPOMAP_BENCH_DIR=COPY python bench/fusion_fit.py              # extract (cached), fit, report
    REPOMAP_BENCH_DIR=COPY python bench/fusion_fit.py --refresh    # extract the features again

Extraction runs the search's own stages in process on each question (search/code.py's
lexical_scores over SQLite, _semantic_scores, _traits: the candidates the default mode reads,
300 of each), and per candidate reads what a ranking could use: its BM25 score and cosine and
their ranks, its kind, test and docs flags, its size, its file's PageRank, and how many of the
question's search words (FTS5's stems) it holds in its title (qualified name), place (path),
head (signature, docs) and body, from the index's postings (search/bm25.py's arrays). A
candidate is relevant when the harness's hit rule says so (relevance.is_hit). The features are
kept in a pickle beside the indexes (COPY/relevance/fusion-features.pkl).

Every model is scored over the same candidates and ranked as search_code ranks (ties by path,
then line; docs records demoted; no `_distinct`, which only folds overlapping docs pieces):
`--check` runs search_code itself in process on the 122 questions and compares, question by
question, with today's fusion computed offline here (`baseline_scores`: search/code.py `fuse`,
then `_add_neighbours`).

The models (MODELS) are linear: a candidate's score is exp(w . features), fit with numpy on
the tune half only by a listwise loss (softmax over a question's candidates, cross-entropy
against its relevant ones; Adam, 600 steps) and an L2 penalty whose strength is chosen by
5-fold cross-validation over the tune questions (MRR@10). Where a model holds today's score
(`log_base`, log of today's fused and neighboured score), the penalty pulls the other weights
to 0 and that one to its own fitted scale, so the fit only departs from today's ranking as far
as the tune questions pay for. Printed: R@10 / MRR@10 for all, tune, heldout and Django, per
corpus, each model's weights and cross-validated MRR, the in-sample bound (every feature fit on
all 122 questions, heldout included: what a linear model over these features could reach at
best), and with `--ablate` the dozen-weight model refit without each feature.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import relevance

from repomap import store
from repomap.search import bm25, code
from repomap.store.postings import tokenizer

CORPORA = ("python", "rust", "cpp", "requests", "click", "regex", "spdlog")
POOL = code.CANDIDATES
COLUMNS = ("title", "place", "head", "body")
CLASSY = frozenset({"class", "struct", "impl", "trait", "enum", "union"})


@dataclass
class QuestionData:
    id: str
    corpus: str
    split: str
    n_terms: int
    tests_factor: float  # code.test_factor(): 1.0 when the question asks for tests
    ids: np.ndarray  # chunk ids
    raw: dict[str, np.ndarray]  # raw per-candidate values
    label: np.ndarray  # bool: a hit
    path: list[str]
    start: np.ndarray


def bench_dir() -> Path:
    base = os.environ.get("REPOMAP_BENCH_DIR")
    return (Path(base) if base else Path.home() / ".cache" / "repomap-bench") / "relevance"


def extract(questions: list[relevance.Question]) -> list[QuestionData]:
    out: list[QuestionData] = []
    for corpus in CORPORA:
        asked = [q for q in questions if q.corpus == corpus]
        if not asked:
            continue
        db = store.open_index(bench_dir() / f"{corpus}.db", readonly=True)
        prepared = bm25.prepare(db, code.COLUMN_WEIGHTS)
        assert prepared is not None
        postings = prepared.postings
        split = tokenizer(postings.tokenize)
        row_of = {int(r): i for i, r in enumerate(postings.rowids.tolist())}
        ranks = dict(db.conn.execute("SELECT file_id, rank FROM file_ranks").fetchall())
        n_files = max(len(ranks), 1)
        for q in asked:
            out.append(_one(db, q, postings, split, row_of, ranks, n_files))
            print(f"{q.id}: {len(out[-1].ids)} candidates, {int(out[-1].label.sum())} hits",
                  file=sys.stderr)  # fmt: skip
        db.close()
    return out


def _one(db, q, postings, split, row_of, ranks, n_files) -> QuestionData:  # type: ignore[no-untyped-def]
    filters = code.make_filters(db)
    terms = code.query_terms(q.question)
    tests_factor = code.test_factor(q.question, filters)
    lexical = code.lexical_scores(db, terms, filters, POOL)
    semantic, _model, _coverage = code._semantic_scores(db, q.question, filters, POOL, {})
    traits: dict[int, Any] = {i: found[1:] for i, found in lexical.items()}
    traits.update(code._traits(db, [i for i in semantic if i not in traits]))
    ids = sorted(traits)
    lex_order = {i: r for r, i in enumerate(sorted(lexical, key=lambda i: -lexical[i][0]), 1)}
    sem_order = {i: r for r, i in enumerate(sorted(semantic, key=lambda i: -semantic[i]), 1)}
    stems = sorted({tok for t in terms for tok in split.tokens(t)})
    idf = {}
    holds = np.zeros((len(ids), len(stems), len(COLUMNS)), dtype=np.float32)
    index_of = {i: k for k, i in enumerate(ids)}
    rows_wanted = {row_of[i]: index_of[i] for i in ids if i in row_of}
    for s, stem in enumerate(stems):
        start, end = postings.terms.get(stem, (0, 0))
        hits = end - start
        idf[stem] = max(math.log((postings.total_rows - hits + 0.5) / (hits + 0.5)), 1e-6)
        for row, counts in zip(postings.rows[start:end].tolist(), postings.counts[start:end],
                               strict=True):  # fmt: skip
            k = rows_wanted.get(row)
            if k is not None:
                holds[k, s, :] = counts[: len(COLUMNS)] > 0
    weights = np.array([idf[s] for s in stems], dtype=np.float32)
    details = {
        row[0]: row[1:]
        for row in db.conn.execute(code._DETAILS_SQL, (code._json_ids(ids),)).fetchall()
    }
    path = [details[i][0] for i in ids]
    start = np.array([details[i][1] for i in ids])
    end = np.array([details[i][2] for i in ids])
    label = np.array(
        [relevance.is_hit(relevance.Span(p, s, e), q.answers) for p, s, e in zip(path, start, end,
                                                                                  strict=True)]
    )  # fmt: skip
    sizes = np.array([postings.sizes[row_of[i]] if i in row_of else 0.0 for i in ids])
    n = max(len(stems), 1)
    wsum = float(weights.sum()) or 1.0
    any_col = holds.max(axis=2) if len(stems) else np.zeros((len(ids), 0))
    raw = {
        "lex": np.array([lexical[i][0] if i in lexical else 0.0 for i in ids]),
        "in_lex": np.array([i in lexical for i in ids], dtype=float),
        "lex_rank": np.array([lex_order.get(i, 0) for i in ids], dtype=float),
        "cos": np.array([semantic.get(i, np.nan) for i in ids], dtype=float),
        "in_sem": np.array([i in semantic for i in ids], dtype=float),
        "sem_rank": np.array([sem_order.get(i, 0) for i in ids], dtype=float),
        "is_test": np.array([traits[i][0] for i in ids], dtype=float),
        "kind": np.array([traits[i][1] for i in ids], dtype=object),
        "file": np.array([-1 if traits[i][2] is None else traits[i][2] for i in ids]),
        "record": np.array(
            [
                code.is_record_doc(p) and traits[i][1] == "section"
                for p, i in zip(path, ids, strict=True)
            ],
            dtype=float,
        ),  # fmt: skip
        "size": sizes,
        "pagerank": np.array([ranks.get(traits[i][2], 0.0) * n_files for i in ids]),
        "cov_any": any_col.sum(axis=1) / n,
        "cov_idf": (any_col * weights).sum(axis=1) / wsum,
        # the same over the question's words as search/code.py's word_coverage counts them:
        # each word once (two words of one stem twice), a word holding all of its tokens
        "cov_words": _per_word(terms, stems, split, any_col, idf),
        **{f"cov_{c}": holds[:, :, k].sum(axis=1) / n for k, c in enumerate(COLUMNS)},
        "lines": (end - start + 1).astype(float),
    }
    return QuestionData(q.id, q.corpus, q.split, len(stems), tests_factor, np.array(ids), raw,
                        label, path, start)  # fmt: skip


def _per_word(terms, stems, split, any_col, idf) -> np.ndarray:  # type: ignore[no-untyped-def]
    total = np.zeros(len(any_col))
    weight = 0.0
    for term in terms:
        tokens = split.tokens(term)
        at = [stems.index(t) for t in tokens]
        w = sum(idf[t] for t in tokens) / max(len(tokens), 1)
        total += w * (any_col[:, at].min(axis=1) if at else 0.0)
        weight += w
    return total / (weight or 1.0)


# --- features -------------------------------------------------------------------------------


def base_parts(d: QuestionData) -> tuple[np.ndarray, np.ndarray]:
    """Today's normalized lexical score and stretched cosine (search/code.py `fuse`)."""
    r = d.raw
    best = r["lex"].max() or 1.0
    words = r["lex"] / best
    cos = r["cos"]
    have = ~np.isnan(cos)
    if have.any():
        high, low = cos[have].max(), cos[have].min()
        low -= (high - low) / 20 or 0.05
        meaning = np.where(have, np.maximum((np.nan_to_num(cos) - low) / (high - low), 0), 0)
    else:
        meaning = np.zeros_like(words)
    return words, meaning


def prior(d: QuestionData) -> np.ndarray:
    kinds = d.raw["kind"]
    factor = np.array([code.KIND_FACTORS.get(k, 1.0) for k in kinds])
    return factor * np.where(d.raw["is_test"] > 0, d.tests_factor, 1.0)


def neighbours(scores: np.ndarray, files: np.ndarray) -> np.ndarray:
    """The `_add_neighbours` increment: NEIGHBOUR_SHARE x mean of the file's other best 3."""
    out = np.zeros_like(scores)
    order = np.argsort(-scores, kind="stable")
    by_file: dict[int, list[int]] = {}
    for k in order.tolist():
        if files[k] >= 0:
            by_file.setdefault(int(files[k]), []).append(k)
    for members in by_file.values():
        if len(members) < 2:
            continue
        top = [scores[k] for k in members[: code.NEIGHBOURS + 1]]
        for k in members:
            others = list(top)
            if scores[k] in others:
                others.remove(scores[k])
            out[k] = sum(others[: code.NEIGHBOURS]) / code.NEIGHBOURS
    return out


def baseline_scores(
    d: QuestionData, weight: float = code.SEMANTIC_WEIGHT, coverage: float | None = None
) -> np.ndarray:
    """search/code.py's ranking: `fuse`, the records' demotion, `_add_neighbours`, then in
    hybrid each lexical candidate times 1 + `coverage` (COVERAGE_WEIGHT) x its word coverage."""
    words, meaning = base_parts(d)
    fused = ((1 - weight) * words + weight * meaning) * prior(d)
    fused = np.where(fused > 0, fused, 0.0)
    if d.tests_factor < 1.0:
        fused = fused * np.where(d.raw["record"] > 0, code.RECORD_FACTOR, 1.0)
    scores = fused + code.NEIGHBOUR_SHARE * neighbours(fused, d.raw["file"])
    if 0.0 < weight < 1.0:
        share = code.COVERAGE_WEIGHT if coverage is None else coverage
        scores = scores * (1.0 + share * d.raw["cov_words"] * (scores > 0) * d.raw["in_lex"])
    return scores


def before_scores(d: QuestionData) -> np.ndarray:
    """The ranking before the word coverage (main at 2026-11-26 09:00 UTC)."""
    return baseline_scores(d, coverage=0.0)


FEATURES = (
    "words", "meaning", "log_lex", "in_lex", "in_sem", "lex_rrank", "sem_rrank", "module",
    "section", "classy", "test", "cov_any", "cov_idf", "cov_title", "cov_head", "cov_body",
    "cov_place", "cov_words", "log_size", "pagerank", "base_nb", "log_base", "log_words",
    "log_meaning", "log_nb", "fused",
)  # fmt: skip


_FEATURES: dict[str, np.ndarray] = {}


def features(d: QuestionData) -> np.ndarray:
    if d.id not in _FEATURES:
        _FEATURES[d.id] = _features(d)
    return _FEATURES[d.id]


def _features(d: QuestionData) -> np.ndarray:
    r = d.raw
    words, meaning = base_parts(d)
    kinds = r["kind"]
    base = ((1 - code.SEMANTIC_WEIGHT) * words + code.SEMANTIC_WEIGHT * meaning) * prior(d)
    cols = {
        "words": words,
        "meaning": meaning,
        "log_lex": np.log1p(r["lex"]),
        "in_lex": r["in_lex"],
        "in_sem": r["in_sem"],
        "lex_rrank": np.where(r["lex_rank"] > 0, 1 / np.log2(1 + np.maximum(r["lex_rank"], 1)), 0),
        "sem_rrank": np.where(r["sem_rank"] > 0, 1 / np.log2(1 + np.maximum(r["sem_rank"], 1)), 0),
        "module": np.array([k == "module" for k in kinds], dtype=float),
        "section": np.array([k == "section" for k in kinds], dtype=float),
        "classy": np.array([k in CLASSY for k in kinds], dtype=float),
        "test": r["is_test"] * (1.0 - d.tests_factor) / (1.0 - code.TEST_FACTOR),
        "cov_any": r["cov_any"],
        "cov_idf": r["cov_idf"],
        "cov_title": r["cov_title"],
        "cov_head": r["cov_head"],
        "cov_body": r["cov_body"],
        "cov_place": r["cov_place"],
        "cov_words": r["cov_words"],
        "log_size": np.log1p(r["size"]) / 8,
        "pagerank": np.log1p(r["pagerank"]),
        "base_nb": neighbours(base, r["file"]),
        "log_base": np.log(before_scores(d) + 0.01),
        "log_words": np.log(words + 0.05),
        "log_meaning": np.log(meaning + 0.05),
        "log_nb": np.log(neighbours(base, r["file"]) + 0.05),
        "fused": np.log((1 - code.SEMANTIC_WEIGHT) * words + code.SEMANTIC_WEIGHT * meaning + 0.01),
    }
    return np.stack([cols[name] for name in FEATURES], axis=1)


# --- evaluation -----------------------------------------------------------------------------


def first_rank(d: QuestionData, scores: np.ndarray, top: int = 10) -> int | None:
    order = sorted(range(len(scores)), key=lambda k: (-scores[k], d.path[k], d.start[k]))
    for rank, k in enumerate(order[:top], 1):
        if d.label[k]:
            return rank
    return None


def figures(data: list[QuestionData], scorer) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    ranks = [first_rank(d, scorer(d)) for d in data]
    return relevance.recall(ranks), relevance.mrr(ranks)


# --- the model ------------------------------------------------------------------------------


def fit(data: list[QuestionData], columns: list[int], l2: float, steps: int = 600) -> np.ndarray:
    """The weights, shrunk towards today's ranking: L2 on their distance from a model that is
    log_base alone (its scale fit first, without penalty), when log_base is among them."""
    start = np.zeros(len(columns))
    base = FEATURES.index("log_base")
    if base in columns:
        start[columns.index(base)] = _fit(data, [base], 0.0, np.zeros(1))[0]
    return _fit(data, columns, l2, start)


def _fit(data: list[QuestionData], columns: list[int], l2: float, start: np.ndarray,
         steps: int = 600) -> np.ndarray:  # fmt: skip
    """Listwise softmax cross-entropy (ListNet with the relevant ones as the target), L2,
    Adam; questions without a relevant candidate are left out."""
    sets = []
    for d in data:
        if d.label.any():
            x = features(d)[:, columns]
            y = d.label.astype(float)
            sets.append((x, y / y.sum()))
    w = start.copy()
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    rate = 0.05
    for step in range(1, steps + 1):
        grad = 2 * l2 * (w - start)
        for x, y in sets:
            s = x @ w
            s = s - s.max()
            p = np.exp(s)
            p /= p.sum()
            grad += x.T @ (p - y) / len(sets)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        w -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def model_scorer(w: np.ndarray, columns: list[int], share: float = 0.0):  # type: ignore[no-untyped-def]
    def score(d: QuestionData) -> np.ndarray:
        s = features(d)[:, columns] @ w
        s = 1 / (1 + np.exp(-s))  # positive, so the neighbours' increment means what it did
        if d.tests_factor < 1.0:
            s = s * np.where(d.raw["record"] > 0, code.RECORD_FACTOR, 1.0)
        return s + share * neighbours(s, d.raw["file"]) if share else s

    return score


def cross_validate(
    tune: list[QuestionData], columns: list[int], l2: float, folds: int = 5
) -> float:
    order = sorted(tune, key=lambda d: d.id)
    mrrs = []
    for f in range(folds):
        test = order[f::folds]
        train = [d for k, d in enumerate(order) if k % folds != f]
        w = fit(train, columns, l2)
        mrrs.append(figures(test, model_scorer(w, columns))[1] * len(test))
    return sum(mrrs) / len(order)


SMALL = ("words", "meaning", "lex_rrank", "sem_rrank", "in_lex", "in_sem", "test", "classy",
         "module", "section", "base_nb", "cov_idf")  # fmt: skip
# name -> its features. "today's score" is log_base: its scale is fit first and the L2 pulls
# the rest towards 0, so a strong penalty gives today's ranking back.
MODELS: dict[str, tuple[str, ...]] = {
    "every feature but today's score": tuple(n for n in FEATURES if n != "log_base"),
    "a dozen": SMALL,
    "today's score + word coverage": ("log_base", "cov_words"),
    "today's score + title, body coverage": ("log_base", "cov_title", "cov_body"),
    "today's score + every feature": FEATURES,
}


def parts(data: list[QuestionData]) -> dict[str, list[QuestionData]]:
    return {
        "all": data,
        "tune": [d for d in data if d.split == "tune"],
        "heldout": [d for d in data if d.split == "heldout"],
        "Django": [d for d in data if d.corpus == "python"],
    }


def row(name: str, data: list[QuestionData], scorer) -> str:  # type: ignore[no-untyped-def]
    cells = [figures(part, scorer) for part in parts(data).values()]
    return f"| {name} | " + " | ".join(f"{r:.2f} / {m:.3f}" for r, m in cells) + " |"


def corpus_row(name: str, data: list[QuestionData], scorer) -> str:  # type: ignore[no-untyped-def]
    cells = [figures([d for d in data if d.corpus == c], scorer) for c in CORPORA]
    return f"| {name} | " + " | ".join(f"{r:.2f} / {m:.3f}" for r, m in cells) + " |"


def check(data: list[QuestionData]) -> None:
    """The offline baseline's first-hit rank against search_code's own, question by question
    (hybrid, in process, the harness's hit rule): the offline ranking is the search's."""
    questions = {q.id: q for q in relevance.load_questions()}
    differ = 0
    for corpus in CORPORA:
        db = store.open_index(bench_dir() / f"{corpus}.db", readonly=True)
        for d in (d for d in data if d.corpus == corpus):
            q = questions[d.id]
            found = code.search_code(db, q.question, mode="hybrid", limit=10, log=False)
            spans = [relevance.Span(h.path, h.start_line, h.end_line) for h in found.hits]
            live, offline = (
                relevance.first_hit_rank(spans, q.answers),
                first_rank(d, baseline_scores(d)),
            )
            if live != offline:
                differ += 1
                print(f"  {d.id}: search_code {live}, offline {offline}")
        db.close()
    print(f"offline baseline against search_code: {differ} of {len(data)} questions differ\n")


def load(cache: Path) -> list[QuestionData]:
    """The features extract() kept (plain dicts, so any script can read them)."""
    return [QuestionData(**fields) for fields in pickle.loads(cache.read_bytes())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--refresh", action="store_true", help="extract the features again")
    parser.add_argument("--l2", type=float, action="append", help="L2 strengths to try")
    parser.add_argument(
        "--check",
        action="store_true",
        help="compare the offline baseline with search_code in process",
    )
    parser.add_argument("--ablate", action="store_true",
                        help="refit the dozen without each feature")  # fmt: skip
    args = parser.parse_args(argv)
    cache = bench_dir() / "fusion-features.pkl"
    if args.refresh or not cache.exists():
        data = extract(relevance.load_questions())
        cache.write_bytes(pickle.dumps([vars(d) for d in data]))
    data = load(cache)
    tune = parts(data)["tune"]
    if args.check:
        check(data)
    strengths = args.l2 or [0.001, 0.01, 0.1, 1.0]
    held = "| --- | ---: | ---: | ---: | ---: |"
    table = [
        "| model | all | tune | heldout | Django |",
        held,
        row("before (main at 09:00 UTC)", data, before_scores),
        row("today (baseline)", data, baseline_scores),
    ]
    per_corpus = ["| model | " + " | ".join(CORPORA) + " |", "| --- |" + " ---: |" * len(CORPORA),
                  corpus_row("before (main at 09:00 UTC)", data, before_scores),
                  corpus_row("today (baseline)", data, baseline_scores)]  # fmt: skip
    notes = []
    for name, names in MODELS.items():
        columns = [FEATURES.index(n) for n in names]
        cv = {l2: cross_validate(tune, columns, l2) for l2 in strengths}
        chosen = max(cv, key=lambda l2: (round(cv[l2], 4), l2))
        w = fit(tune, columns, chosen)
        label = f"{name} (L2 {chosen})"
        table.append(row(label, data, model_scorer(w, columns)))
        per_corpus.append(corpus_row(label, data, model_scorer(w, columns)))
        notes.append(f"{label}: cross-validated tune MRR "
                     + ", ".join(f"L2 {l2}: {m:.3f}" for l2, m in cv.items()) + "; weights "
                     + ", ".join(f"{FEATURES[c]} {v:+.3f}" for c, v in zip(columns, w,
                                                                           strict=True)))  # fmt: skip
    columns = list(range(len(FEATURES)))
    w = fit(data, columns, 0.001)
    table.append(row("every feature, fit on all 122 (in-sample bound)", data,
                     model_scorer(w, columns)))  # fmt: skip
    print("\n".join(table), "\n\n" + "\n".join(per_corpus), "\n")
    print("\n\n".join(notes))
    hits = sum(bool(d.label.any()) for d in data)
    print(f"\nquestions with a hit among the candidates: {hits} of {len(data)}")
    if args.ablate:
        columns = [FEATURES.index(n) for n in SMALL]
        strength = 0.01
        full = [figures(part, model_scorer(fit(tune, columns, strength), columns))
                for part in (tune, parts(data)["heldout"])]  # fmt: skip
        print(
            f"\nthe dozen without one feature (L2 {strength}); all of them: tune "
            f"{full[0][0]:.2f} / {full[0][1]:.3f}, heldout {full[1][0]:.2f} / {full[1][1]:.3f}"
        )
        for k in range(len(columns)):
            rest = columns[:k] + columns[k + 1 :]
            wk = fit(tune, rest, strength)
            t, h = (
                figures(part, model_scorer(wk, rest)) for part in (tune, parts(data)["heldout"])
            )
            print(f"  {SMALL[k]:10s} tune {t[0]:.2f} / {t[1]:.3f}  heldout {h[0]:.2f} / {h[1]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
