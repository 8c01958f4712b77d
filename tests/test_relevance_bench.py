"""bench/relevance.py: the hit rule, the arithmetic, ripgrep's ranking, the split, the questions."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import relevance  # noqa: E402  (bench/ is a folder of scripts, not a package)
from relevance import Result, Span  # noqa: E402

ANSWER = Span("src/retry.py", 10, 20)


@pytest.mark.parametrize(
    "result, hit",
    [
        (Span("src/retry.py", 10, 20), True),  # the same range
        (Span("src/retry.py", 15, 15), True),  # one line inside
        (Span("src/retry.py", 1, 10), True),  # touches the first line
        (Span("src/retry.py", 20, 40), True),  # touches the last line
        (Span("src/retry.py", 1, 63), True),  # a small class around it: 63 = 3 x 11 + 30 lines
        (Span("src/retry.py", 1, 64), False),  # larger: the whole file or a big class
        (Span("src/retry.py", 9, 9), False),  # the line before
        (Span("src/retry.py", 21, 30), False),  # the next function
        (Span("tests/retry.py", 10, 20), False),  # another file, same lines
        (Span("retry.py", 10, 20), False),  # a path tail is not the path
    ],
)
def test_a_hit_is_the_same_path_with_overlapping_lines_and_not_much_larger(result, hit):
    assert relevance.is_hit(result, [ANSWER]) is hit


def test_any_acceptable_answer_counts_as_a_hit():
    answers = [ANSWER, Span("docs/retry.txt", 5, 9)]
    assert relevance.is_hit(Span("docs/retry.txt", 9, 12), answers)


def test_the_first_hit_rank_is_one_based_and_stops_at_ten():
    miss = Span("other.py", 1, 1)
    assert relevance.first_hit_rank([ANSWER, miss], [ANSWER]) == 1
    assert relevance.first_hit_rank([miss, miss, ANSWER, ANSWER], [ANSWER]) == 3
    assert relevance.first_hit_rank([miss] * 9 + [ANSWER], [ANSWER]) == 10
    assert relevance.first_hit_rank([miss] * 10 + [ANSWER], [ANSWER]) is None
    assert relevance.first_hit_rank([], [ANSWER]) is None


def test_recall_and_mrr_count_a_miss_as_zero():
    ranks = [1, 2, None, 4]
    assert relevance.recall(ranks) == pytest.approx(0.75)
    assert relevance.mrr(ranks) == pytest.approx((1 + 1 / 2 + 0 + 1 / 4) / 4)
    assert relevance.recall([]) == 0.0
    assert relevance.mrr([None, None]) == 0.0


def test_query_words_drop_stop_words_short_words_and_repeats():
    words = relevance.query_words("Where is the retry back-off computed? Is it the RETRY's job?")
    assert words == ["retry", "back", "computed", "job"]


def test_lines_rank_by_distinct_words_then_path_then_line():
    matches = [
        ("b.py", 7, "retry retry retry"),  # one distinct word, said three times
        ("b.py", 3, "the Backoff for a RETRY"),  # two words, any case
        ("a.py", 9, "backoff"),
        ("a.py", 2, "retry"),
        ("c.py", 1, "retry backoff delay"),
    ]
    ranked = relevance.rank_lines(matches, ["retry", "backoff", "delay"])
    assert [(s.path, s.start_line) for s in ranked] == [
        ("c.py", 1),
        ("b.py", 3),
        ("a.py", 2),
        ("a.py", 9),
        ("b.py", 7),
    ]
    assert all(s.start_line == s.end_line for s in ranked)


def test_rank_lines_keeps_the_first_ten():
    matches = [("a.py", line, "retry") for line in range(30, 0, -1)]
    assert [s.start_line for s in relevance.rank_lines(matches, ["retry"])] == list(range(1, 11))


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")
def test_ripgrep_finds_and_ranks_lines_in_a_real_tree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "retry.py").write_text(
        "import time\n\ndef wait(attempt):\n    # exponential backoff before the next retry\n"
        "    return 2 ** attempt\n"
    )
    (tmp_path / "notes.txt").write_text("retry later\n")
    result = relevance.run_ripgrep(tmp_path, "Where is the retry backoff computed?")
    assert result.error is None
    assert [(s.path, s.start_line) for s in result.spans] == [
        ("src/retry.py", 4),
        ("notes.txt", 1),
    ]


def test_symbols_merge_by_best_rank_then_by_how_many_words_found_it():
    a, b, c = Span("a.py", 1, 5), Span("b.py", 1, 5), Span("c.py", 1, 5)
    merged = relevance.merge_by_best_rank(
        [
            Result((a, b), ("function a", "function b"), 0.1),
            Result((c, b), ("function c", "function b"), 0.2),
        ]
    )
    assert merged.spans == (a, c, b)  # a and c: best rank 1, one word each, then path
    assert merged.seconds == pytest.approx(0.3)
    both = relevance.merge_by_best_rank(
        [Result((a, b), ("", ""), 0), Result((b, a), ("", ""), 0), Result((c,), ("",), 0)]
    )
    assert both.spans == (a, b, c)  # a and b were found by two words, c by one


@pytest.mark.parametrize(
    "payload, expected",
    [
        (
            {"results": [{"path": "a.py", "start_line": 3, "end_line": 9, "kind": "function"}]},
            Span("a.py", 3, 9),
        ),
        ({"results": [{"file_path": "a.py", "line_number": 4, "end_line": 4}]}, Span("a.py", 4, 4)),
        ([{"file_path": "a.py", "line_number": 5, "end_line": 8}], Span("a.py", 5, 8)),
        ({"results": [{"file_path": "a.py", "line_number": 6}]}, Span("a.py", 6, 6)),
    ],
)
def test_places_are_read_from_every_json_shape_repomap_prints(payload, expected):
    spans, _ = relevance.parse_places(payload)
    assert spans == (expected,)


def test_a_usage_error_makes_a_method_unavailable_not_zero(tmp_path):
    script = tmp_path / "fake.py"
    script.write_text(
        "import sys\nsys.stderr.write(\"Usage: repomap [OPTIONS]\\nError: No such command 'search'.\\n\")\n"
        "sys.exit(2)\n"
    )
    result = relevance.run_repomap([sys.executable, str(script)])
    assert result.unavailable and "No such command" in result.unavailable
    assert result.error is None


def test_a_failing_command_is_an_error_and_no_match_is_an_empty_answer(tmp_path):
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nsys.stderr.write('error: no index here\\n')\nsys.exit(2)\n")
    result = relevance.run_repomap([sys.executable, str(failing)])
    assert result.error == "error: no index here" and result.unavailable is None
    empty = tmp_path / "empty.py"
    empty.write_text("import sys\nsys.exit(1)\n")  # grep's convention: found nothing
    nothing = relevance.run_repomap([sys.executable, str(empty)])
    assert nothing.spans == () and nothing.error is None and nothing.unavailable is None


def test_the_split_depends_on_the_id_alone_and_halves_the_ids():
    ids = [f"question-{n}" for n in range(400)]
    first = [relevance.split_of(i) for i in ids]
    assert first == [relevance.split_of(i) for i in reversed(ids)][::-1]
    assert set(first) == {"tune", "heldout"}
    assert 150 < first.count("tune") < 250
    assert relevance.split_of("django-slug") == relevance.split_of("django-slug")


def test_question_problems_catch_a_wrong_split_a_missing_file_and_a_range_past_the_end(tmp_path):
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    good = {
        "id": "good", "corpus": "tiny", "language": "python", "question": "where?", "kind": "where",
        "answers": [{"path": "a.py", "start_line": 1, "end_line": 3}],
    }  # fmt: skip
    rows = [
        good | {"split": relevance.split_of("good")},
        good
        | {
            "id": "split",
            "split": "tune" if relevance.split_of("split") == "heldout" else "heldout",
        },
        good | {"id": "nofile", "answers": [{"path": "b.py", "start_line": 1, "end_line": 1}]},
        good | {"id": "past", "answers": [{"path": "a.py", "start_line": 2, "end_line": 4}]},
        good | {"id": "kind", "kind": "when"},
    ]
    for row in rows[2:]:
        row["split"] = relevance.split_of(row["id"])
    file = tmp_path / "questions.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for row in rows))
    problems = relevance.question_problems(relevance.load_questions(file), {"tiny": tmp_path})
    assert [p.split(":")[0] for p in problems] == ["split", "nofile", "past", "kind"]


def test_the_question_file_is_well_formed():
    questions = relevance.load_questions()
    assert len(questions) >= 80
    assert relevance.question_problems(questions, {}) == []  # ids, kinds, splits; no corpora
    pins = json.loads(relevance.PINS_FILE.read_text())["corpora"]
    assert {q.corpus for q in questions} <= set(pins)
    assert all(q.language == pins[q.corpus]["language"] for q in questions)
    assert {q.kind for q in questions} == set(relevance.KINDS)


@pytest.mark.slow
def test_every_answer_lies_within_a_file_of_its_pinned_corpus():
    pins = json.loads(relevance.PINS_FILE.read_text())["corpora"]
    roots = {name: relevance.common.CORPORA_DIR / pin["root"] for name, pin in pins.items()}
    missing = sorted(name for name, root in roots.items() if not root.is_dir())
    if missing:
        pytest.skip(
            f"corpora {', '.join(missing)} are absent; run ../shared/corpora/get-corpora.sh "
            "and bench/relevance/fetch.sh"
        )
    assert relevance.question_problems(relevance.load_questions(), roots) == []
