"""Red team 7f: a policy after credit it did not earn from the small rule verifiers.

Each row is an attack on ``search_qa``, ``format``, ``overlong`` or ``geometry``: the
``found`` rows were real problems (the docstring or comment says what the score was
before), the others are attacks that already failed and must keep failing. verl's own
functions (``verl/utils/reward_score/search_r1_like_qa_em.py``, ``geo3k.py``, DAPO's
overlong formula) are the reference where they exist; where rewardkit departs from
them on purpose, the row says why.
"""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.verifiers.format import format_score
from rewardkit.verifiers.geometry import GeometryVerifier
from rewardkit.verifiers.overlong import overlong_penalty
from rewardkit.verifiers.search_qa import SearchQAVerifier

SEARCH = SearchQAVerifier()
GEOMETRY = GeometryVerifier()


def _search(response: str, targets: list[str]) -> float:
    return SEARCH.quick_check(SEARCH.extract(response), {"target": targets}).score


# (response, targets, expected score, why)
SEARCH_ROWS = [
    # Found: a target of only articles or punctuation normalises to "", and so does an
    # empty or article-only answer; verl's em_check credits the pair (was 1.0 for all).
    ("<answer></answer>", ["A"], 0.0, "empty answer vs blood type A"),
    ("<answer>the</answer>", ["A"], 0.0, "an article is not the letter A"),
    ("<answer>.</answer>", ["!!!"], 0.0, "punctuation vs other punctuation"),
    ("<answer></answer>", ["The The"], 0.0, "empty answer vs the band The The"),
    ("<answer>an</answer>", ["The"], 0.0, "one article for another"),
    # ...while such a target is still reachable by its own answer.
    ("<answer>A</answer>", ["A"], 1.0, "the right letter"),
    ("<answer>a.</answer>", ["A"], 1.0, "case and punctuation still normalised"),
    ("<answer>The  the</answer>", ["The The"], 1.0, "whitespace collapsed"),
    ("<answer>!!!</answer>", ["!!!"], 1.0, "an all-punctuation answer matches itself"),
    ("<answer></answer>", [""], 0.0, "found too: an empty target matches nothing"),
    # Found: SQuAD drops every article, so a last-word letter vanished: "Vitamin" matched
    # "Vitamin A" and "Type the" matched "Type A" (was 1.0; verl too).
    ("<answer>Vitamin</answer>", ["Vitamin A"], 0.0, "a letter is not an article"),
    ("<answer>Type the</answer>", ["Type A"], 0.0, "another article in its place"),
    ("<answer>Hepatitis</answer>", ["hepatitis A", "hepatitis B"], 0.0, "which one?"),
    ("<answer>The</answer>", ["The The"], 0.0, "half a band name"),
    ("<answer>vitamin a.</answer>", ["Vitamin A"], 1.0, "the letter, normalised"),
    ("<answer>the Vitamin A</answer>", ["Vitamin A"], 1.0, "a leading article still drops"),
    ("<answer>Catherine Great</answer>", ["Catherine the Great"], 1.0, "inner articles drop"),
    # Clean: tag games (verl: the last complete <answer>...</answer>, non-greedy).
    ("<answer>Paris</answer><answer>London</answer>", ["Paris"], 0.0, "last answer counts"),
    ("<answer>London</answer><answer>Paris</answer>", ["Paris"], 0.0, "two answers: hedged"),
    ("<answer><answer>Paris</answer>", ["Paris"], 0.0, "nested: span starts at the first tag"),
    ("<answer>Paris</answer><answer>London", ["Paris"], 1.0, "unclosed last tag ignored"),
    ("<answer>Paris", ["Paris"], 0.0, "never closed: no answer"),
    ("Paris</answer>", ["Paris"], 0.0, "never opened: no answer"),
    ("<answer>Paris</answer>" * 12, ["Paris"], 0.25, "tag spam: / 4"),
    ("<answer>Paris</answer>" * 10, ["Paris"], 1.0, "10 tags: full"),
    ("</answer>" * 11 + "<answer>Paris</answer>", ["Paris"], 0.25, "closing-tag spam"),
    # Clean: listing candidates or hiding the answer in a longer one earns nothing.
    ("<answer>Paris, London, Berlin</answer>", ["Paris"], 0.0, "every candidate"),
    ("<answer>Paris or London</answer>", ["Paris"], 0.0, "hedge"),
    ("<answer>not Paris</answer>", ["Paris"], 0.0, "negation"),
    # Clean: look-alikes and invisible characters make a different string (no credit).
    ("<answer>P\u0430ris</answer>", ["Paris"], 0.0, "Cyrillic a"),
    ("<answer>Par\u200bis</answer>", ["Paris"], 0.0, "zero-width space inside"),
    ("<answer>\uff30aris</answer>", ["Paris"], 0.0, "full-width P"),
    ("<answer>London\u200b</answer>", ["Paris", "London"], 0.0, "zero-width space after"),
    # Clean: SQuAD normalisation is honoured for right answers.
    ("<answer> The Eiffel Tower. </answer>", ["eiffel tower"], 1.0, "article, case, dot"),
]


@pytest.mark.parametrize(("response", "targets", "expected", "why"), SEARCH_ROWS)
def test_search_qa_attacks(response: str, targets: list[str], expected: float, why: str) -> None:
    assert _search(response, targets) == expected, why


def test_search_qa_takes_numpy_targets_as_verl_does() -> None:
    """Found: verl's Search-R1 parquet rows hold ``{"target": numpy array}``; verl's
    em_check iterates it, rewardkit's Python API called the row invalid."""
    targets = np.array(["Paris", "City of Light"])
    for truth in ({"target": targets}, targets):
        right = SEARCH.quick_check(SEARCH.extract("<answer>city of light</answer>"), truth)
        wrong = SEARCH.quick_check(SEARCH.extract("<answer>London</answer>"), truth)
        assert (right.score, wrong.score) == (1.0, 0.0)


# (response, expected, why)
FORMAT_ROWS = [
    # Found: str.strip() keeps zero-width and other format characters (category Cf), so
    # an "answer" of nothing visible earned the format reward (was 1.0).
    ("<think></think>\u200b", 0.0, "zero-width space"),
    ("<think>x</think>\ufeff", 0.0, "byte-order mark"),
    ("<think>x</think>\u2060\u200d\u200c", 0.0, "word joiner, zero-width (non-)joiner"),
    ("<think>x</think> \u200b\n\u00a0", 0.0, "invisible and blank mixed"),
    ("<think>x</think>\u200b4", 1.0, "a visible character after an invisible one"),
    # Clean: nesting, unclosed and doubled blocks.
    ("<think><think>x</think></think>4", 0.0, "nested blocks"),
    ("<think>x</think>4<think>", 0.0, "a second, unclosed block"),
    ("<think>x<think>4", 0.0, "never closed"),
    ("<THINK>x</THINK>4", 0.0, "other case is another tag"),
]


@pytest.mark.parametrize(("response", "expected", "why"), FORMAT_ROWS)
def test_format_attacks(response: str, expected: float, why: str) -> None:
    assert format_score(response) == expected, why


# (length, max_resp_len, buffer_len, factor, expected, why)
OVERLONG_ROWS = [
    # Clean: the buffer's edges.
    (100, 100, 100, 1.0, -1.0, "buffer as long as the limit: at the limit"),
    (0, 100, 100, 1.0, 0.0, "buffer as long as the limit: empty response"),
    (1, 1, 1, 1.0, -1.0, "smallest limit and buffer"),
    (90, 100, 10, 1.0, 0.0, "the last free token"),
    (100, 100, 10, 0.0, 0.0, "factor 0: no penalty"),
    # As verl's DAPO manager: past the limit the penalty keeps growing (no clamp;
    # tests/test_tokens.py pins the same for the tensor API).
    (110, 100, 10, 1.0, -2.0, "one buffer past the limit"),
    (2**53, 100, 10, 1.0, -(2**53 - 90) / 10, "the longest length accepted"),
]


@pytest.mark.parametrize(("length", "limit", "buffer", "factor", "expected", "why"), OVERLONG_ROWS)
def test_overlong_edges(
    length: int, limit: int, buffer: int, factor: float, expected: float, why: str
) -> None:
    assert overlong_penalty(length, limit, buffer, factor) == pytest.approx(expected), why


def test_an_absurd_length_is_refused_by_name() -> None:
    """Found: 10**400 tokens raised OverflowError (a float cannot hold the penalty);
    in the engine that read as an internal error rather than an invalid row."""
    with pytest.raises(ValueError, match="response_length must be <= 2"):
        overlong_penalty(10**400, 100, 10, 1.0)
    with pytest.raises(ValueError, match="response_length"):
        overlong_penalty(2**53 + 1, 100, 10, 1.0)


def _geometry(response: str, truth: str = "5") -> float:
    return GEOMETRY.check(GEOMETRY.extract(response), truth).score


# (response, expected, why): verl's geo3k = 0.9 * acc + 0.1 * format (its regex
# <think>.*</think>.*\\boxed\{.*\}.*, full match, DOTALL).
GEOMETRY_ROWS = [
    # As verl: the format bonus needs no right answer, nor a non-empty box (0.1 of it).
    ("<think></think>\\boxed{}", 0.1, "empty box: the format bonus only, as verl"),
    ("<think>x</think>\\boxed{7}", 0.1, "wrong answer: format bonus only"),
    ("<think>x</think>\\boxed{5}", 1.0, "right, formatted"),
    ("\\boxed{5}", 0.9, "right, unformatted"),
    ("<think>x\\boxed{5}", 0.9, "unclosed think: no bonus"),
    ("<think>\\boxed{5}</think>", 0.9, "box inside think only: no bonus"),
    (" <think>x</think>\\boxed{5}", 0.9, "text before <think>: no bonus, as verl's fullmatch"),
    ("<think>x</think>\\boxed{5", 0.0, "unclosed box: no answer, and no '}' for the format"),
    ("<think>x</think>\\boxed{5}\\boxed{7}", 0.1, "the last box counts"),
    ("<think>x</think>\\boxed{5 or 7}", 0.1, "two candidates in one box"),
]


@pytest.mark.parametrize(("response", "expected", "why"), GEOMETRY_ROWS)
def test_geometry_attacks(response: str, expected: float, why: str) -> None:
    assert _geometry(response) == pytest.approx(expected), why
