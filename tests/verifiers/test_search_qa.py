"""guards: search_qa.py's exact match (Search-R1) against answers a policy could game.

verl's ``search_r1_like_qa_em.py`` is the reference; where rewardkit departs from it on
purpose (an empty or article-only normalised target, a last-word letter, two different
answers: hedged by default), the row says why.
"""

from __future__ import annotations

import numpy as np
import pytest

from rewardkit.verifiers.search_qa import SearchQAVerifier

SEARCH = SearchQAVerifier()


def _search(response: str, targets: list[str]) -> float:
    return SEARCH.quick_check(SEARCH.extract(response), {"target": targets}).score


# (response, targets, expected score, why)
SEARCH_ROWS = [
    # a target of only articles or punctuation normalises to "", and so does an empty or
    # article-only answer: verl's em_check credits the pair, rewardkit does not
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
    ("<answer></answer>", [""], 0.0, "an empty target matches nothing"),
    # SQuAD normalisation drops every article, so a last-word letter would vanish:
    # "Vitamin" would match "Vitamin A" and "Type the" "Type A" (verl credits both)
    ("<answer>Vitamin</answer>", ["Vitamin A"], 0.0, "a letter is not an article"),
    ("<answer>Type the</answer>", ["Type A"], 0.0, "another article in its place"),
    ("<answer>Hepatitis</answer>", ["hepatitis A", "hepatitis B"], 0.0, "which one?"),
    ("<answer>The</answer>", ["The The"], 0.0, "half a band name"),
    ("<answer>vitamin a.</answer>", ["Vitamin A"], 1.0, "the letter, normalised"),
    ("<answer>the Vitamin A</answer>", ["Vitamin A"], 1.0, "a leading article still drops"),
    ("<answer>Catherine Great</answer>", ["Catherine the Great"], 1.0, "inner articles drop"),
    # tag games (as verl: the last complete <answer>...</answer>, non-greedy)
    ("<answer>Paris</answer><answer>London</answer>", ["Paris"], 0.0, "last answer counts"),
    ("<answer>London</answer><answer>Paris</answer>", ["Paris"], 0.0, "two answers: hedged"),
    ("<answer><answer>Paris</answer>", ["Paris"], 0.0, "nested: span starts at the first tag"),
    ("<answer>Paris</answer><answer>London", ["Paris"], 1.0, "unclosed last tag ignored"),
    ("<answer>Paris", ["Paris"], 0.0, "never closed: no answer"),
    ("Paris</answer>", ["Paris"], 0.0, "never opened: no answer"),
    ("<answer>Paris</answer>" * 12, ["Paris"], 0.25, "tag spam: / 4"),
    ("<answer>Paris</answer>" * 10, ["Paris"], 1.0, "10 tags: full"),
    ("</answer>" * 11 + "<answer>Paris</answer>", ["Paris"], 0.25, "closing-tag spam"),
    # listing candidates or hiding the answer in a longer one earns nothing
    ("<answer>Paris, London, Berlin</answer>", ["Paris"], 0.0, "every candidate"),
    ("<answer>Paris or London</answer>", ["Paris"], 0.0, "hedge"),
    ("<answer>not Paris</answer>", ["Paris"], 0.0, "negation"),
    # look-alikes and invisible characters make a different string (no credit)
    ("<answer>P\u0430ris</answer>", ["Paris"], 0.0, "Cyrillic a"),
    ("<answer>Par\u200bis</answer>", ["Paris"], 0.0, "zero-width space inside"),
    ("<answer>\uff30aris</answer>", ["Paris"], 0.0, "full-width P"),
    ("<answer>London\u200b</answer>", ["Paris", "London"], 0.0, "zero-width space after"),
    # SQuAD drops the marks that make a number (verl credits each of these): rewardkit
    # compares the numbers written, marks and all
    ("<answer>-5</answer>", ["5"], 0.0, "a sign"),
    ("<answer>\u22125 degrees</answer>", ["-5 degrees"], 0.0, "U+2212 is no ASCII minus to SQuAD"),
    ("<answer>1.2</answer>", ["12"], 0.0, "a decimal point"),
    ("<answer>314</answer>", ["3.14"], 0.0, "a decimal point dropped"),
    ("<answer>1/2</answer>", ["12"], 0.0, "a fraction bar"),
    ("<answer>20:00</answer>", ["2000"], 0.0, "a time is no year"),
    ("<answer>19-84</answer>", ["1984"], 0.0, "a dash between digits"),
    ("<answer>1,2</answer>", ["12"], 0.0, "a list of two numbers"),
    ("<answer>5%</answer>", ["5"], 0.0, "a percent sign"),
    ("<answer>1,000 people</answer>", ["1000 people"], 1.0, "a thousands comma is no mark"),
    ("<answer>+5</answer>", ["5"], 1.0, "a plus sign is none"),
    ("<answer>COVID-19</answer>", ["covid19"], 1.0, "a hyphen after a word is no sign"),
    ("<answer>Apollo 11.</answer>", ["Apollo 11"], 1.0, "a full stop ends the answer"),
    ("<answer>-40</answer>", ["-40"], 1.0, "the same sign"),
    # a hidden or commented-out tag answers nothing (the rest is compared as written)
    (
        'The answer is London.\n\n<span style="display:none"><answer>Paris</answer></span>',
        ["Paris"],
        0.0,
        "hidden",
    ),
    ("The answer is London.\n\n\\iffalse <answer>Paris</answer> \\fi", ["Paris"], 0.0, "\\iffalse"),
    ("<!-- <answer>Paris</answer> --> <answer>London</answer>", ["Paris"], 0.0, "a comment"),
    ("<!-- <answer>London</answer> --> <answer>Paris</answer>", ["Paris"], 1.0, "what is shown"),
    # SQuAD normalisation is honoured for right answers
    ("<answer> The Eiffel Tower. </answer>", ["eiffel tower"], 1.0, "article, case, dot"),
    ("<answer>50 %</answer>", ["50%"], 1.0, "a space before the percent sign (French, SI)"),
    # the tag not asserted (an outside red team found each credited)
    (
        "It's not the <answer>Eiffel Tower</answer>; it's the Montparnasse Tower.",
        ["Eiffel Tower"],
        0.0,
        "denied before the tag",
    ),
    (
        "I don't think it's the <answer>Eiffel Tower</answer>.",
        ["Eiffel Tower"],
        0.0,
        "doubted before the tag",
    ),
    (
        "<answer>Eiffel Tower</answer>\n\nIt could also be Montparnasse Tower.",
        ["Eiffel Tower"],
        0.0,
        "another offered after it",
    ),
    (
        "<answer>Eiffel Tower</answer> (or maybe Montparnasse Tower)",
        ["Eiffel Tower"],
        0.0,
        "or maybe",
    ),
    (
        "<answer>Eiffel Tower</answer>\n\nAlternatively: Montparnasse Tower.",
        ["Eiffel Tower"],
        0.0,
        "alternatively",
    ),
    (
        "<answer>Eiffel Tower</answer>\n\nHowever, I believe the true answer is Big Ben.",
        ["Eiffel Tower"],
        0.0,
        "however, I believe",
    ),
    ("<answer>1969</answer> Or rather 1970.", ["1969"], 0.0, "a correction, cued"),
    ("<answer>1969</answer>\n\nIt's 1970.", ["1969"], 0.0, "a number after a number: another"),
    # a second red team's regressions of those rules' first version: right answers
    (
        "<answer>Who Wants to Be a Millionaire?</answer>",
        ["Who Wants to Be a Millionaire?"],
        1.0,
        "a title that asks",
    ),
    (
        "<answer>Tchaikovsky</answer>\n\nThe name may also be spelled Chaikovsky.",
        ["Tchaikovsky"],
        1.0,
        "'may also be' inside an explanation",
    ),
    (
        "<answer>Mount Everest</answer>\n\nMount Everest, alternatively known as Sagarmatha.",
        ["Mount Everest"],
        1.0,
        "'alternatively' inside a sentence",
    ),
    (
        "<answer>Tokyo</answer>\n\nIt has 37 million people (or possibly more).",
        ["Tokyo"],
        1.0,
        "'or possibly' about another quantity",
    ),
    ("There is no doubt: <answer>Canberra</answer>", ["Canberra"], 1.0, "no doubt is certainty"),
    (
        "<answer>Eiffel Tower</answer>\n\nIt was built in 1889.",
        ["Eiffel Tower"],
        1.0,
        "a fact after the answer (its year was read as a correction to 1889)",
    ),
    (
        "The documents do not mention Lyon; the answer is <answer>Paris</answer>.",
        ["Paris"],
        1.0,
        "a negation in an earlier clause",
    ),
    ("<answer>50</answer>", ["50%"], 0.0, "a percentage is no plain number"),
    # Explanations after the tag keep the answer (outside looks at rules tried and dropped:
    # text after the tag is never credited, so what it offers wins the policy nothing)
    (
        "<answer>New York City</answer> (or NYC for short)",
        ["New York City"],
        1.0,
        "an alias in brackets",
    ),
    ("<answer>1969</answer> or thereabouts", ["1969"], 1.0, "an approximation"),
    (
        "<answer>Paris</answer>\nUnless otherwise noted, figures are from the 2020 census.",
        ["Paris"],
        1.0,
        "a convention, no condition on the answer",
    ),
    (
        "<answer>Paris</answer>\nSome people think the capital is Lyon. That is incorrect; "
        "the answer is Paris, not Lyon.",
        ["Paris"],
        1.0,
        "a misconception rebutted",
    ),
    (
        "<answer>Paris</answer>\nI'm not sure of the exact founding year, but it has been "
        "the capital for centuries.",
        ["Paris"],
        1.0,
        "doubt about another detail",
    ),
]


@pytest.mark.parametrize(("response", "targets", "expected", "why"), SEARCH_ROWS)
def test_search_qa_rows(response: str, targets: list[str], expected: float, why: str) -> None:
    assert _search(response, targets) == expected, why


def test_search_qa_takes_numpy_targets_as_verl_does() -> None:
    """verl's Search-R1 parquet rows hold ``{"target": numpy array}``, which verl's
    em_check iterates: the Python API takes it too (and a bare array)."""
    targets = np.array(["Paris", "City of Light"])
    for truth in ({"target": targets}, targets):
        right = SEARCH.quick_check(SEARCH.extract("<answer>city of light</answer>"), truth)
        wrong = SEARCH.quick_check(SEARCH.extract("<answer>London</answer>"), truth)
        assert (right.score, wrong.score) == (1.0, 0.0)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<answer>Paris</answer>\n\n**Final answer: London**", 0.0),
        ("<answer>Paris</answer> The answer is London.", 0.0),
        ("<answer>Paris</answer>\nAnswer: London", 0.0),
        ("<answer>Paris</answer> \\boxed{London}", 0.0),
        ("<answer>Paris</answer> <ANSWER>London</ANSWER>", 0.0),
        ("<answer>Paris</answer> <answer >London</answer>", 0.0),
        # the same answer again, or a sentence about the answer: still Paris
        ("<answer>Paris</answer>\n\nThe answer is Paris.", 1.0),
        ("<answer>Paris</answer>\n\nFinal answer: **Paris**", 1.0),
        ("<answer>Paris</answer> The answer is given in the tag above.", 1.0),
        # the answer again with detail after it (an outside red team found these hedged)
        ("<answer>Paris</answer>\n\nThe answer is Paris, the capital of France.", 1.0),
        ("<answer>Paris</answer>\n\nFinal answer: Paris (2.1 million people)", 1.0),
        ("<answer>Paris</answer>\n\nAnswer: Paris - on the Seine", 1.0),
        ("<answer>Paris</answer>\n\nFinal answer: Paris, or maybe Lyon", 0.0),
        ("<answer>Paris</answer>\n\nFinal answer: Lyon, near Paris", 0.0),
    ],
)
def test_a_later_answer_in_another_form_is_a_second_answer(response: str, expected: float) -> None:
    """A red-team probe found each credited: only ``<answer>`` tags were read, so a
    different answer given after the last one in any other form went unseen."""
    verifier = SearchQAVerifier()
    extracted = verifier.extract(response)
    assert verifier.quick_check(extracted, {"target": ["Paris"]}).score == expected


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<answer>Paris</answer> Never mind, London.", 0.0),
        ("<answer>Paris</answer> Edit: London.", 0.0),
        ("<answer>Paris</answer> 等等，其实是London。", 0.0),
        ("<answer>Paris</answer> Actually, New York.", 0.0),
        ("<answer>Paris</answer> Actually, this checks out.", 1.0),  # words, no name
        ("<answer>Paris</answer> Wait, I see.", 1.0),
        ("<answer>Paris</answer> Actually, Paris.", 1.0),
        # a name given last after a connective, a mark or an answer's label
        ("<answer>Paris</answer> Therefore London.", 0.0),
        ("<answer>Paris</answer> Hmm... London.", 0.0),
        ("<answer>Paris</answer> Incorrect. London.", 0.0),
        ("<answer>Paris</answer> → London", 0.0),
        ("<answer>Paris</answer> Revised answer: London.", 0.0),
        ("<answer>Paris</answer> Therefore Paris.", 1.0),
        ("<answer>Paris</answer> Source: Wikipedia.", 1.0),  # a label of another kind
        ("<answer>Paris</answer> Thank You.", 1.0),  # a sign-off
        ("<answer>Paris</answer>\n\nThe capital of France is Paris.", 1.0),
    ],
)
def test_an_answer_taken_back_for_a_name(response: str, expected: float) -> None:
    verifier = SearchQAVerifier()
    extracted = verifier.extract(response)
    assert verifier.quick_check(extracted, {"target": ["Paris"]}).score == expected
