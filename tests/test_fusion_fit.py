"""bench/fusion_fit.py: its offline ranking is search/code.py's, and its fit learns and shrinks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import fusion_fit as ff  # noqa: E402  (bench/ is a folder of scripts, not a package)

from repomap.search import code  # noqa: E402

KINDS = ("function", "method", "class", "module", "section")


def question(qid: str, n: int, seed: int, relevant: int | None = None) -> ff.QuestionData:
    """A question's candidates with random scores: ids 1..n, some only lexical, some only
    semantic, a few tests, kinds and files mixed."""
    rng = np.random.default_rng(seed)
    lex = np.where(rng.random(n) < 0.7, rng.random(n) * 12, 0.0)
    cos = np.where((lex == 0) | (rng.random(n) < 0.6), 0.2 + rng.random(n) * 0.5, np.nan)
    kinds = np.array([KINDS[k] for k in rng.integers(0, len(KINDS), n)], dtype=object)
    files = np.where(kinds == "section", -1, rng.integers(0, max(n // 4, 1), n))
    label = np.zeros(n, dtype=bool)
    if relevant is not None:
        label[relevant] = True
    raw = {
        "lex": lex, "in_lex": (lex > 0).astype(float),
        "lex_rank": np.argsort(np.argsort(-lex)) + 1.0, "cos": cos,
        "in_sem": (~np.isnan(cos)).astype(float),
        "sem_rank": np.argsort(np.argsort(-np.nan_to_num(cos, nan=-1))) + 1.0,
        "is_test": (rng.random(n) < 0.15).astype(float), "kind": kinds, "file": files,
        "record": np.zeros(n), "size": rng.integers(10, 400, n).astype(float),
        "pagerank": rng.random(n), "lines": rng.integers(1, 80, n).astype(float),
        **{f"cov_{c}": rng.integers(0, 4, n) / 3 for c in ("any", "idf", "words", "title", "place",
                                                           "head", "body")},
    }  # fmt: skip
    return ff.QuestionData(qid, "python", "tune", 3, code.TEST_FACTOR, np.arange(1, n + 1), raw, label,
                           [f"f{k}.py" for k in range(n)], np.ones(n, dtype=int))  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_offline_ranking_is_search_codes_fusion_and_neighbours(seed):
    d = question(f"parity-{seed}", 60, seed)
    r = d.raw
    ids = d.ids.tolist()
    lexical = {i: (r["lex"][k], bool(r["is_test"][k]), r["kind"][k], None)
               for k, i in enumerate(ids) if r["lex"][k] > 0}  # fmt: skip
    semantic = {i: float(r["cos"][k]) for k, i in enumerate(ids) if not np.isnan(r["cos"][k])}
    file_of = {i: None if r["file"][k] < 0 else int(r["file"][k]) for k, i in enumerate(ids)}
    traits = {i: (bool(r["is_test"][k]), r["kind"][k], file_of[i]) for k, i in enumerate(ids)}
    scored = code.fuse(lexical, semantic, traits, code.SEMANTIC_WEIGHT)
    scored = {i: s for i, s in scored.items() if s > 0}
    code._add_neighbours(scored, {i: file_of[i] for i in scored})
    offline = ff.before_scores(d)  # without the word coverage, which reads the index
    for k, i in enumerate(ids):
        assert offline[k] == pytest.approx(scored.get(i, 0.0), abs=1e-12)


def test_the_fit_learns_a_feature_that_marks_the_answer_and_ranks_it_first():
    # The answer is always the candidate with the most of the question's words in its title,
    # and today's fusion does not know it: the fit must weigh cov_title up.
    train = []
    for seed in range(20):
        d = question(f"learn-{seed}", 40, 100 + seed)
        d.raw["cov_title"] = np.zeros(40)
        d.raw["cov_title"][seed % 40] = 1.0
        d.label[seed % 40] = True
        train.append(d)
    columns = [ff.FEATURES.index("log_base"), ff.FEATURES.index("cov_title")]
    w = ff.fit(train, columns, 0.001)
    assert w[1] > 1.0
    fresh = question("learn-unseen", 40, 999, relevant=7)
    fresh.raw["cov_title"] = np.zeros(40)
    fresh.raw["cov_title"][7] = 1.0
    assert ff.first_rank(fresh, ff.model_scorer(w, columns)(fresh)) == 1
    assert ff.first_rank(fresh, ff.before_scores(fresh)) != 1  # today's ranking misses it


def test_a_strong_penalty_keeps_todays_ranking():
    train = [question(f"shrink-{s}", 40, 200 + s, relevant=s % 40) for s in range(10)]
    columns = [ff.FEATURES.index(n) for n in ("log_base", "cov_idf", "test", "words")]
    w = ff.fit(train, columns, 1e6)
    assert w[0] > 0 and np.allclose(w[1:], 0.0, atol=1e-3)
    d = train[0]
    model, today = ff.model_scorer(w, columns)(d), ff.before_scores(d)
    assert list(np.argsort(-model, kind="stable")) == list(np.argsort(-today, kind="stable"))


def test_cross_validation_scores_every_question_once():
    # log_base alone at any positive scale ranks as today: each fold's held-out MRR, weighed by
    # its questions, must add up to today's MRR over all of them, every question counted once.
    # The answers are among today's first few, so the fitted scale is positive.
    data = [question(f"cv-{s}", 30, 300 + s) for s in range(11)]
    for s, d in enumerate(data):
        d.label[np.argsort(-ff.before_scores(d), kind="stable")[s % 4]] = True
    columns = [ff.FEATURES.index("log_base")]
    today = ff.figures(data, ff.before_scores)[1]
    assert 0.0 < today < 1.0
    assert ff.cross_validate(data, columns, 0.01) == pytest.approx(today)
