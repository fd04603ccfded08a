"""guards: degenerate responses (a loop to the end) are decided cheaply and never a long legitimate one.

Benign long rows come from the real corpus in tests/data (hand-read rows, and long
derivations, tables, number lists and code built from its responses); degenerate
shapes are the ones a collapsing policy writes. Each degenerate row is decided by the
inline phases of every family that reads a final answer from free text (math, gsm8k,
multiple choice, search QA, geometry), with no parse, in well under 50 ms of CPU.
"""

from __future__ import annotations

import gzip
import json
import random
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from rewardkit import RewardLoop
from rewardkit.config import VerifierOptions
from rewardkit.types import Status
from rewardkit.verifiers import _repetition
from rewardkit.verifiers.base import NO_CONTEXT, extract_with
from rewardkit.verifiers.registry import resolve

DATA = Path(__file__).resolve().parents[1] / "data" / "real_outputs"


def _corpus() -> list[dict[str, Any]]:
    rows = []
    for path in sorted(DATA.glob("*.jsonl.gz")):
        with gzip.open(path, "rt") as handle:
            rows.extend(json.loads(line) for line in handle)
    return rows


ROWS = _corpus()
BY_ID = {row["id"]: row for row in ROWS}
_READ = [json.loads(line) for line in (DATA / "adjudicated.jsonl").read_text().splitlines()]
CORRECT = [BY_ID[r["id"]]["response"] for r in _READ if r["correct"] is True]


def _benign_long() -> dict[str, str]:
    """Long legitimate responses, each at least the rule's window."""
    longest = sorted(CORRECT, key=len, reverse=True)
    derivation = "\n\n".join(longest[:12])  # a long derivation, ending in its answer
    golds = [row["ground_truth"] for row in ROWS[::7] if isinstance(row["ground_truth"], str)]
    table = (
        "| n | answer |\n|---|---|\n"
        + "".join(f"| {i} | {gold} |\n" for i, gold in enumerate(golds[:300]))
        + "So the table is complete and the answer is $\\boxed{7}$."
    )
    numbers = "The values are " + ", ".join(str(i * i) for i in range(1, 700)) + ". \\boxed{699}"
    tora = (
        next(r for r in longest if "```python" in r)
        if any("```python" in r for r in longest)
        else ""
    )
    code = (
        "```python\n"
        + "".join(
            f"total += prices[{i}] * counts[{i}]\nprint('-' * 40)\nprint(total)\n"
            for i in range(60)
        )
        + "```\n```output\n"
        + "\n".join(str(1000 + 37 * i) for i in range(60))
        + "\n```\n"
        + tora[-1500:]
    )
    long_number = "2^{14000} = " + str(2**14000) + ". So the last digit is \\boxed{6}."
    matrix = (
        longest[0][:1200]
        + "\n\\[ I = \\begin{pmatrix}"
        + "\\\\ ".join(" & ".join("1" if i == j else "0" for j in range(30)) for i in range(30))
        + "\\end{pmatrix} \\]\nThe identity matrix has trace $\\boxed{30}$."
    )
    # one format, numbers changing, then a conclusion: the second way reads numbers as
    # one, and these end on a sentence that came nowhere before
    cases = (
        "".join(
            f"Case {i}: $n = {i}$ gives $n^2 + 1 = {i * i + 1}$, which is even, so not prime.\n"
            for i in range(3, 140, 2)
        )
        + "So no odd case works, and the answer is $\\boxed{2}$."
    )
    steps = (
        "".join(
            f"Step {i}: we add {i} to the running total, which becomes {i * (i + 1) // 2}.\n\n"
            for i in range(1, 90)
        )
        + "The running total after step 89 is $\\boxed{4005}$."
    )
    shaped = {
        "cases, then the answer": cases,
        "counted steps, then the answer": steps,
        "derivation": derivation,
        "table": table,
        "numbers": numbers,
        "code": code,
        "long number": long_number,
        "identity matrix": matrix,
        "prose x2": "\n\n".join(CORRECT[:40]),
        # the same long case worked three times (a unit the long window would see), then
        # the conclusion: it ends on something new
        "three long cases, then a conclusion": "".join(
            f"Case {k}: " + "\n".join(CORRECT[1:6])[:1800] + "\n\n" for k in range(1, 4)
        )
        + "So all three cases give the same value, and the answer is $\\boxed{12}$.",
        # checks that each do their own work, closing alike: units found between the
        # closing sentences, but no copies of each other
        "four checks, each its own work, closing alike": "".join(
            f"{opener}{body}\nHaving checked it this way too, the answer is $\\boxed{{12}}$.\n\n"
            for opener, body in zip(
                ("Let me verify: ", "Another way: ", "One more check: ", "Finally: "),
                ("\n".join(CORRECT[i : i + 4])[:1600] for i in (10, 20, 30, 40)),
                strict=True,
            )
        ),
    }
    for name, text in shaped.items():
        assert len(text) >= _repetition.WINDOW_CHARS, name
    return shaped


BENIGN = _benign_long()


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_long_legitimate_responses_are_never_degenerate(name: str) -> None:
    assert not _repetition.degenerate(BENIGN[name])


def test_no_row_judged_right_or_credited_by_its_source_is_degenerate() -> None:
    credited = [row["response"] for row in ROWS if row["extra_info"].get("source_label") is True]
    assert len(CORRECT) >= 300 and len(credited) >= 1000
    assert not [text[-200:] for text in CORRECT + credited if _repetition.degenerate(text)]


# The rows of the corpus that end in a loop, each read: a few tokens ("traffic traffic
# ...", `\ \ \`, `\"\"\",`, "gremlins gremlins", `0.1444...` cut at the limit,
# `\qquad` x 200), one unit with small variations ("... square units figure ANSWER 0
# square units figure ANSWER ...", a counted enumeration cut mid-sentence), a few-shot
# dialogue echoed again and again ("User: ... Assistant: There are 3 bags of chips on
# the table."), and a whole paragraph or solution again and again (near copies). Most
# are shorter than 4,096 characters: a policy with a budget of 512 to 1,024 tokens.
CORPUS_LOOPS = {
    "damek:grpo_train_loop_log:30",
    *(f"damek:grpo_prompt_ablation:{n}" for n in (39, 41, 67, 75, 77, 84, 85, 86)),
    *(f"liba:r1_zero_3shot:{n}" for n in (210, 786, 870, 924, 1086)),
    *(f"ei:ei_G8_eibatch128_sftepochs_1/iter_1:{n}" for n in (402, 700, 774)),
    *(
        f"ei:ei_G16_eibatch128_sftepochs_3/iter_5:{n}"
        for n in (196, 302, 1324, 1328, 1332, 1338, 1442, 1494, 1970, 1976)
    ),
}


def test_the_corpus_loops_are_degenerate() -> None:
    """The rows of the corpus that end in a loop are flagged, and no others; those of
    them read by hand and judged are judged wrong (a loop of the gold is no answer)."""
    flagged = {row["id"] for row in ROWS if _repetition.degenerate(row["response"])}
    assert flagged == CORPUS_LOOPS
    judged = {
        r["id"]: r["correct"] for r in _READ if r["id"] in CORPUS_LOOPS and r["correct"] is not None
    }
    assert judged == {
        "ei:ei_G16_eibatch128_sftepochs_3/iter_5:1324": False,
        "ei:ei_G16_eibatch128_sftepochs_3/iter_5:1442": False,
        "liba:r1_zero_3shot:786": False,  # right in its own turn, then invented turns on a loop
    }


_rng = random.Random(7)
_WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen".split()
_PHRASES = ["Let me check again. ", "Let me verify once more. ", "Let me double check. "]
_OPENERS = ("Let me re-verify: ", "Wait, let me re-check: ", "Let me verify this again: ")


def _prose(rng: random.Random, chars: int) -> str:
    """Words in no order, about ``chars`` characters: a unit with dozens of distinct words."""
    words = (
        "the sum of both sides gives us a new equation where each term is multiplied by "
        "its coefficient and we then collect like terms before we divide through so that "
        "only one unknown remains on the left while the right side holds a constant value"
    ).split()
    out: list[str] = []
    while sum(map(len, out)) + len(out) < chars:
        out.append(rng.choice(words))
    return " ".join(out)


def _reworded_loop(size: int) -> str:
    """One paragraph of about ``size`` characters again and again, its opener reworded
    each time, cut mid-unit where the tokens ran out."""
    unit = _prose(_rng, size) + " Therefore the answer is $\\boxed{3}$.\n\n"
    loop = "".join(_rng.choice(_OPENERS) + unit for _ in range(max(5, 40_000 // size)))
    return loop[: -size // 3]


_BINARY_UNIT = (
    "the binary expansion of the fraction is 0."
    + "".join(_rng.choice("01") for _ in range(2_500))
    + ", so the digit in position 3 gives the answer $\\boxed{3}$.\n\n"
)

DEGENERATE = {
    "blank boxes": "We need the sum. " + "\\boxed{}" * 3000,
    "one boxed answer 2,000 times": "So the answer is \\boxed{42}. " + "\\boxed{42} " * 2000,
    "phrase loop": CORRECT[0][:800] + "So the answer is 12 and we are done. " * 1500,
    "line loop": "Step 1.\n" + "\\[ x^2 + 2x + 1 = 0 \\]\n" * 2000,
    "token loop, small variations": "So "
    + " ".join(_rng.choice(["the", "the", "a", "the,"]) for _ in range(6000)),
    "phrase loop, small variations": "".join(_rng.choice(_PHRASES) for _ in range(3000)),
    "repetition after a correct answer": "x = 3, so $\\boxed{3}$. "
    + "Wait, let me recheck. " * 2000,
    "a digit run": "The number is " + "4" * 30_000,
    "quote junk": "The answer:"
    + "".join(_rng.choice(['\\"', '",', '")', "\\'"]) for _ in range(9000)),
    "long loop in a long response": "\n\n".join(CORRECT[:30]) + " traffic" * 5000,
    # a greedy policy at its token limit (a public MATH-500 dump of Llama-3.1-8B-Instruct
    # ends so): two paragraphs of dozens of words in turn, their steps counted, cut
    # mid-formula; too many distinct tokens for the first way
    "counted loop of two paragraphs": (
        "We need the simplest radical form of $\\sqrt{53}$.\n\n"
        + "".join(
            f"Step {i}:  Now, we can simplify $\\sqrt{{53}}$ by finding the largest perfect "
            "square that divides 53. Since 53 is a prime number, the largest perfect square "
            f"that divides 53 is 1.\n\nStep {i + 1}:  We can rewrite $\\sqrt{{53}}$ as "
            "$\\sqrt{1 \\cdot 53}$. Since $\\sqrt{1} = 1$, we can rewrite this as "
            "$1 \\cdot \\sqrt{53}$.\n\n"
            for i in range(4, 80, 2)
        )
    )[:8000],
    # loops whose words vary: neither few tokens nor one exact unit; they compress away
    "sentence loop, synonyms swapped in": "".join(
        f"{_rng.choice(['So', 'Thus', 'Hence', 'Therefore'])}, "
        f"{_rng.choice(['clearly', 'indeed', 'certainly', 'obviously', 'of course'])}, "
        f"{_rng.choice(['the final answer', 'the answer', 'our result'])} is $\\boxed{{3}}$. "
        "Let me verify this once more by substituting back. "
        for _ in range(300)
    )[:12000],
    "counter in words": "".join(
        f"Attempt {a}-{b}: the answer is $\\boxed{{3}}$.\n" for a in _WORDS for b in _WORDS
    )[:12000],
    # a unit longer than a third of the window (an outside red team's finding): a
    # "re-verify" paragraph of ~2,000 characters holding the answer, 8 times, cut mid-unit
    "a paragraph loop, 2,000 characters a unit": (
        "Problem setup. "
        + (
            "Let me re-derive it. "
            + " ".join(_rng.choice(_WORDS) for _ in range(330))
            + ". Hence the answer is $\\boxed{3}$.\n\n"
        )
        * 8
    )[:-700],
    "counted list loop": "".join(
        f"{i}. The next multiple of 30 is {30 * i}, which cannot be written with only the "
        "digits 0 and 2.\n\n"
        for i in range(1, 120)
    )[:9000],
    # near copies (an outside red team's finding): the same "re-verify" paragraph, its
    # opener reworded each time (no fixed period), cut mid-unit; and a loop that began
    # less than a window before the cut, the derivation before it still in the window
    **{
        f"re-verify loop, {size:,}-character unit, openers reworded": _reworded_loop(size)
        for size in (700, 2_500, 8_000, 12_000)
    },
    # units of few symbols, where zlib's level 6 never tries the copy one unit back (an
    # outside red team's finding): binary digits with the opener reworded, and an exact
    # loop of a unit drawn from three CJK characters
    "a unit of binary digits, openers reworded": "".join(
        _rng.choice(_OPENERS) + _BINARY_UNIT for _ in range(6)
    )[:-1_500],
    "an exact loop of a three-character CJK unit": (
        "".join(_rng.choice("一二 ") for _ in range(10_000)) * 4
    )[:-5_000],
    "a late loop after a derivation": _prose(_rng, 3_500)
    + (
        "\n\nSimplifying this expression, we get:\n\n\\[3x^2 = (x^2 + 1)^{\\frac{3}{2}} - "
        "2(x^2 + 1)^{\\frac{3}{2}}.\\]" * 12
    )[:-30],
}


# Every family that reads a final answer out of free text, with a gold its loops could
# repeat, and the score a wrong answer gets there.
FAMILIES = {
    "lighteval/MATH": ("3", 0.0),
    "math_dapo": ("3", -1.0),
    "openai/gsm8k": ("3", 0.0),
    "multiple_choice": ("A", 0.0),
    "searchR1_nq": ({"target": ["3"]}, 0.0),
    "hiyouga/geometry3k": ("3", 0.0),  # and no format credit either
}


@pytest.mark.parametrize("name", sorted(DEGENERATE))
@pytest.mark.parametrize("data_source", sorted(FAMILIES))
def test_a_degenerate_response_is_decided_wrong_without_a_parse(
    name: str, data_source: str
) -> None:
    verifier = resolve(data_source, VerifierOptions())
    assert verifier is not None
    gold, wrong = FAMILIES[data_source]
    response = DEGENERATE[name]
    started = time.process_time()
    extracted = extract_with(verifier, response, NO_CONTEXT)
    quick = verifier.quick_check(extracted, gold)
    spent = time.process_time() - started
    assert quick is not None  # decided inline: no check, no parse
    assert extracted.extra["degenerate"] == 1 and extracted.answer is None
    assert quick.score == wrong
    assert spent < 0.05, f"{name}: {spent * 1000:.1f} ms of CPU"


def _answer_said(data_source: str, math_form: str) -> str:
    """The family's right answer (FAMILIES' gold) in its answer form."""
    return {
        "openai/gsm8k": "#### 3",
        "multiple_choice": "Answer: A",
        "searchR1_nq": "<answer>3</answer>",
    }.get(data_source, math_form)


@pytest.mark.parametrize("data_source", sorted(FAMILIES))
def test_a_loop_of_the_right_answer_earns_nothing(data_source: str) -> None:
    """The gold, repeated until the tokens ran out, is a collapse, not an answer."""
    gold, wrong = FAMILIES[data_source]
    said = _answer_said(data_source, "\\boxed{3}") + "\n"
    verifier = resolve(data_source, VerifierOptions())
    assert verifier is not None
    extracted = extract_with(verifier, "Let me think. " + said * 1500, NO_CONTEXT)
    quick = verifier.quick_check(extracted, gold)
    assert quick is not None and quick.score == wrong and extracted.extra["degenerate"] == 1


# A policy with a budget of 512 to 1,024 tokens: the loop is shorter than the long window,
# alone or after the derivation it began from (which the long window still holds)
_DERIVATION = "\n\n".join(CORRECT[:3])[:3_000] + "\n\n"
SHORT_LOOPS = {
    "blank boxes": "\\boxed{} ",
    "the gold boxed": "The answer is $\\boxed{3}$. ",
    "a word": "wait ",
    "a sentence": "Let me check the sum again, term by term. ",
    "a LaTeX line": "\\[ x^2 + 2x + 1 = 0 \\]\n",
    "a paragraph": "We substitute back: $2 \\cdot 3 - 1 = 5$, which matches the second "
    "equation, and $3 + 4 = 7$ matches the first, so the answer is $\\boxed{3}$.\n\n",
}


@pytest.mark.parametrize("loop_chars", [1_200, 2_500])
@pytest.mark.parametrize("after", ["alone", "after a derivation"])
@pytest.mark.parametrize("name", sorted(SHORT_LOOPS))
def test_a_loop_shorter_than_the_long_window_is_degenerate(
    name: str, after: str, loop_chars: int
) -> None:
    unit = SHORT_LOOPS[name]
    loop = (unit * (loop_chars // len(unit) + 2))[: loop_chars + len(unit) // 2]
    head = "So the answer is $\\boxed{3}$.\n" if after == "alone" else _DERIVATION
    response = head + loop
    assert _repetition.degenerate(response)
    for data_source, (gold, wrong) in FAMILIES.items():
        verifier = resolve(data_source, VerifierOptions())
        assert verifier is not None
        quick = verifier.quick_check(extract_with(verifier, response, NO_CONTEXT), gold)
        assert quick is not None and quick.score == wrong, data_source


def test_a_response_shorter_than_the_short_window_is_never_a_loop() -> None:
    """Under 1,024 characters the ordinary rules read it (a policy that repeats its
    answer a few times in a short response has said it)."""
    assert _repetition.SHORT_WINDOW_CHARS == 1_024
    said = "The answer is $\\boxed{3}$. "  # 27 characters
    assert not _repetition.degenerate(said * 37) and not _repetition.degenerate("")  # 999
    assert _repetition.degenerate(said * 39)  # 1,052 (the last blank is no content)


BENIGN_SHORT = {
    "values in one format, then the answer": "".join(
        f"n = {i}: $n^2 - n + 41 = {i * i - i + 41}$, prime.\n" for i in range(1, 40)
    )
    + "So every n below 40 gives a prime, and the answer is $\\boxed{40}$.",
    "a 0/1 matrix, then the answer": "The adjacency matrix is\n\\[ \\begin{pmatrix}"
    + "\\\\ ".join(" & ".join("1" if (i + j) % 3 else "0" for j in range(16)) for i in range(16))
    + "\\end{pmatrix} \\]\nIts rank is $\\boxed{2}$.",
    "a long decimal, then the answer": "$\\frac{1}{7} = 0."
    + "142857" * 170
    + "\\ldots$, so the 100th digit after the point is $\\boxed{8}$.",
}


@pytest.mark.parametrize("name", sorted(BENIGN_SHORT))
def test_short_legitimate_responses_that_end_on_their_answer_are_no_loop(name: str) -> None:
    text = BENIGN_SHORT[name]
    assert _repetition.SHORT_WINDOW_CHARS <= len(text) < _repetition.WINDOW_CHARS
    assert not _repetition.degenerate(text)


# What a decoder may leave after the policy's last word (a padded batch decoded with its
# special tokens): no loop the policy wrote (an outside red team's find: each was called
# degenerate, the right answer before it scored 0)
_PROSE = " ".join(
    f"Line {i}: we expand term {i * 7 % 13} and collect like powers." for i in range(60)
)
PADDINGS = {
    "<|endoftext|>": "<|endoftext|>" * 400,
    "<|im_end|> and blanks": "<|im_end|>\n" * 400,
    "</s> and <pad>": "</s>" + "<pad>" * 800,
    "zero-width spaces": "\u200b" * 4_200,
    "a megabyte of blanks": " " * 1_000_000,
    # DeepSeek-R1's end and V3's pad, Llama-2's <unk> pad, BERT-style [PAD], <s>, <EOS>
    "<｜end▁of▁sentence｜>": "<\uff5cend\u2581of\u2581sentence\uff5c>" * 300,
    "<｜▁pad▁｜>": "<\uff5c\u2581pad\u2581\uff5c>" * 500,
    "<unk>": "<unk>" * 1_000,
    "[PAD]": "[PAD]" * 1_000,
    "<s> and <EOS>": "<s>" * 1_000 + "<EOS>" * 1_000,
    # a short answer right-padded to a 32k-token limit: more than one read of the end
    "160,000 characters of <|endoftext|>": "<|endoftext|>" * 12_000,
}


@pytest.mark.parametrize("padding", PADDINGS.values(), ids=PADDINGS.keys())
@pytest.mark.parametrize("data_source", sorted(set(FAMILIES) - {"hiyouga/geometry3k"}))
def test_padding_after_the_answer_is_no_loop(padding: str, data_source: str) -> None:
    gold, _ = FAMILIES[data_source]
    said = _answer_said(data_source, "So the answer is $\\boxed{3}$.")
    response = f"{_PROSE}\n{said}{padding}"
    assert not _repetition.degenerate(response)
    verifier = resolve(data_source, VerifierOptions())
    assert verifier is not None
    extracted = extract_with(verifier, response, NO_CONTEXT)
    assert "degenerate" not in extracted.extra
    said_right = verifier.quick_check(extracted, gold) or verifier.check(extracted, gold)
    assert said_right.score == 1.0


def test_an_answer_line_is_read_without_the_padding_after_it() -> None:
    """The answer is read as the policy wrote it: "Answer: 34" then padding answers 34
    (the padding is no text of the line: it answered "34 <|endoftext|>...", wrong)."""
    said = [
        ("math_dapo", "17 * 2 = 34.\n\nAnswer: 34", "34"),
        ("openai/gsm8k", "<think> 3 x 4 x 2 = 24 </think> <think> 24 x 3 = 72 </think>", "72"),
        ("lighteval/MATH", "So the sum is\n<answer>2 + 11 = 13</answer>", "13"),
        ("searchR1_nq", "<answer>Paris</answer>", {"target": ["Paris"]}),
    ]
    rows = [
        {"data_source": source, "response": response + padding, "ground_truth": gold}
        for source, response, gold in said
        for padding in PADDINGS.values()
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        results = loop.score(rows)
    assert [(r.status, r.score) for r in results] == [(Status.OK, 1.0)] * len(rows)
    assert _repetition.unpadded("x = 1  \n") == "x = 1  \n"  # blanks alone stay


@pytest.mark.parametrize("padding", PADDINGS.values(), ids=PADDINGS.keys())
def test_a_loop_before_padding_is_still_a_loop(padding: str) -> None:
    assert _repetition.degenerate("Let me think. " + "\\boxed{3}\n" * 1500 + padding)
    assert _repetition.content_end("\\boxed{3}" + padding) == len("\\boxed{3}")


def _elimination(seed: int, n: int = 7) -> str:
    """Gauss-Jordan elimination printing the whole augmented matrix after each row
    operation, then the answer: each printout near the one before, no loop."""
    rng = random.Random(seed)
    solution = [rng.randint(-3, 3) for _ in range(n)]
    rows = [[Fraction(rng.randint(-4, 4)) for _ in range(n)] for _ in range(n)]
    for i in range(n):
        rows[i][i] = Fraction(rng.choice([1, 2, 3]))
        rows[i].append(sum(a * x for a, x in zip(rows[i], solution, strict=False)))

    def shown() -> str:
        body = " \\\\\n".join(" & ".join(str(x) for x in row) for row in rows)
        return f"$$\\left[\\begin{{array}}{{{'c' * n}|c}}\n{body}\n\\end{{array}}\\right]$$\n\n"

    out = [
        "Hmm, let me think. Therefore, I think the final answer is what we get at the end, "
        "by Gauss-Jordan elimination.\n\n" + "\n\n".join(CORRECT[:6])
    ]
    out.append("\n\nThe augmented matrix:\n\n" + shown())
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            break
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
                out.append(f"$R_{r + 1} \\to R_{r + 1} - ({factor}) R_{col + 1}$:\n\n" + shown())
    total = sum(rows[i][n] / rows[i][i] for i in range(n))
    return "".join(out) + f"Therefore, the final answer is ${total}$."


@pytest.mark.parametrize("seed", range(12))
def test_printouts_of_a_changing_state_then_the_answer_are_no_loop(seed: int) -> None:
    """Each step's printout nearly copies the one before (an outside red team's find: the
    fourth way, its key taken before the end, called 13 of 30 such texts a loop); the
    conclusion after them is new, so the loop does not run to the end."""
    assert not _repetition.degenerate(_elimination(seed))


def test_the_decision_reads_a_bounded_window() -> None:
    """A 4 MB loop costs what a 4,096-character one does: the window, not the response."""
    huge = "\\boxed{} " * 450_000
    started = time.process_time()
    for _ in range(20):
        assert _repetition.degenerate(huge)
    assert (time.process_time() - started) / 20 < 0.01


_COUNTED = "".join(f"Step {i}: We check it again, and the answer is 17.\n" for i in range(1, 91))


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("x " * 20_000 + "So \\boxed{4}.", False),  # a loop, then an answer: ordinary rules
        ("\\boxedx\\fboxy" * 70_000 + "\\boxed{4}", False),
        ("\\boxed{5}" + " " * 1_000_000, False),  # trailing blanks are no loop
        ("\\boxed{5} " * 2000 + "\\box", True),  # cut short mid-token: still the loop
        ("Wait, let me recheck. " * 300 + "Wait, let me rec", True),
        ("\\boxed{" * 70_000 + "4" + "}" * 70_000, True),  # 70,000 braces to the end
        # one unit repeated, its counter changing: a loop, cut anywhere, in a number too
        (_COUNTED, True),
        (_COUNTED + "Step 91: We check it again, and the answer is 1", True),
        (_COUNTED[:-30], True),
        # ... but a value the loop had kept, changed in its last unit, is a new answer
        (_COUNTED + "Step 91: We check it again, and the answer is 42.", False),
        ("\\boxed{1}, then more words. " * 200 + "\\boxed{2}", False),
        # and a conclusion after the counted lines is no loop
        (_COUNTED + "So every step gives 17, and the answer is $\\boxed{17}$.", False),
    ],
)
def test_the_loop_must_run_to_the_end(response: str, expected: bool) -> None:
    assert _repetition.degenerate(response) is expected


def _roman(n: int) -> str:
    out = ""
    for value, numeral in ((100, "c"), (90, "xc"), (50, "l"), (40, "xl"), (10, "x"), (9, "ix")):
        while n >= value:
            out, n = out + numeral, n - value
    return out + ("", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii")[n]


# A loop counts its units in any numbering: each unit writes a counter the window has not
# seen, which is no new word (an outside red team's loops, each credited before: the
# right answer, boxed again and again, counted in Roman numerals, letter pairs or Chinese
# numerals)
_CN = "一二三四五六七八九十"
COUNTED_LOOPS = {
    "Roman numerals": "".join(f"({_roman(i)}) $\\boxed{{5}}$ " for i in range(1, 100)),
    "upper-case Roman numerals": "".join(
        f"Step {_roman(i).upper()}: the answer is $\\boxed{{5}}$. " for i in range(1, 80)
    ),
    "letter pairs": "".join(
        f"Case {a}{b}: the answer is $\\boxed{{5}}$. " for a in "ABCDEFG" for b in "ABCDEFGHIJKLM"
    )[:4_000],
    "Chinese numerals": "".join(
        f"第{_CN[i % 10]}{_CN[i // 10 % 10]}步：答案是 $\\boxed{{5}}$。" for i in range(100)
    ),
}
_LONG_UNIT = (
    "".join(f"Check {i}: substituting gives the expected result. " for i in range(80))
    + "Therefore the answer is $\\boxed{5}$.\n"
)


@pytest.mark.parametrize("name", sorted(COUNTED_LOOPS))
def test_a_loop_counted_in_any_numbering_is_degenerate(name: str) -> None:
    response = COUNTED_LOOPS[name]
    assert _repetition.degenerate(response)
    verifier = resolve("lighteval/MATH", VerifierOptions())
    assert verifier is not None
    extracted = extract_with(verifier, response, NO_CONTEXT)
    quick = verifier.quick_check(extracted, "5")
    assert quick is not None and quick.score == 0.0  # the loop of the gold earns nothing
    assert extracted.extra["degenerate"] == 1


def test_a_long_unit_said_three_times_to_a_finished_end_is_no_loop() -> None:
    """Three copies of a long unit that end where a unit ends: the policy stopped (a
    solution restated twice, "Let me verify once more", is an answer, an outside red
    team's probe); a fourth copy, or a third cut mid-unit at the token limit, is a loop."""
    assert not _repetition.degenerate(_LONG_UNIT * 2)
    assert not _repetition.degenerate(_LONG_UNIT * 3)
    assert not _repetition.degenerate(
        _LONG_UNIT * 3 + "So the answer is 5, as every check confirms."
    )
    assert _repetition.degenerate(_LONG_UNIT * 4)
    assert _repetition.degenerate((_LONG_UNIT * 4)[:-1_000])


def test_a_counted_list_in_sentences_then_the_answer_is_no_loop() -> None:
    """Counters are no new words, but the words around them are: cases in Roman numerals
    with their own computations, then a conclusion."""
    cases = "".join(
        f"({_roman(i)}) For $n = {i}$ we get $n^2 + 1 = {i * i + 1}$, which is {'even' if i % 2 else 'odd'}.\n"
        for i in range(1, 40)
    )
    assert not _repetition.degenerate(cases + "So exactly 20 of the values are odd: $\\boxed{20}$.")


# A solution that ends by restating its final answer a few times, line for line, stopped:
# a published Llama-3.1-8B dump (henro25/Qwen2.5-Math, evaluation/outputs/.../v16/math500,
# a harness that adds a line per "thought") ends 42 of its rows with 6 to 8 copies of
# "The final answer is $\boxed{13}$." after a whole solution; its own grader credits the
# right ones. A policy at its token limit writes far more copies, or is cut inside one.
_SOLVED = (
    "Step 1: The line meets the x-axis at $a = 4$ and the y-axis at $b = 12$.\n"
    "Step 2: Rewriting $\\frac{x}{4} + \\frac{y}{12} = 1$ as $y = 12 - 3x$, the slope is $m = -3$.\n"
    "Step 3: So $a + b + m = 4 + 12 - 3 = 13$.\n"
) * 4 + "So, the value of $a + b + m$ is $\\boxed{13}$.\n"
_RESTATED = {
    "one line, 8 copies": ("The final answer is $\\boxed{13}$.\n" * 8, False),
    "two lines, 7 copies": (
        "The final answer is $\\boxed{13}$.\nThis is the sum of the intercepts and the slope.\n"
        * 7,
        False,
    ),
    "blank lines between copies": ("The final answer is $\\boxed{13}$.\n\n" * 6, False),
    "17 copies": ("The final answer is $\\boxed{13}$.\n" * 17, True),
    "cut inside a copy": ("The final answer is $\\boxed{13}$.\n" * 40 + "The final ans", True),
    "copies of a line with no answer": ("Let me check the sum again, term by term.\n" * 30, True),
}


@pytest.mark.parametrize("name", sorted(_RESTATED))
def test_an_answer_restated_a_few_times_at_the_end_is_no_loop(name: str) -> None:
    copies, looped = _RESTATED[name]
    response = _SOLVED + copies
    assert _repetition.degenerate(response) == looped
    verifier = resolve("lighteval/MATH", VerifierOptions())
    assert verifier is not None
    quick = verifier.quick_check(extract_with(verifier, response, NO_CONTEXT), "13")
    assert quick is not None and quick.score == (0.0 if looped else 1.0)
