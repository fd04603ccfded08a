"""guards: rewardkit.audit's transformations: each hack is wrong by construction, each benign rewrite keeps the answer, all deterministic."""

from __future__ import annotations

import copy
import json
import random
import re
import unicodedata
from fractions import Fraction
from typing import Any

import pytest

from rewardkit.audit import all_families, code_variants, control, variants
from rewardkit.audit._values import (
    answer_span,
    decimal_approximation,
    equivalent_forms,
    exact_value,
    wrong_value,
)
from rewardkit.audit.code_hacks import entry_point
from rewardkit.audit.runner import CODE_FAMILIES, default_rows
from rewardkit.verifiers import _answer, _latex
from rewardkit.verifiers._final import as_think_tags

ROWS: list[dict[str, Any]] = [
    {"id": "gsm8k", "data_source": "openai/gsm8k", "prompt": "How many? Answer after '####'.",
     "response": "Each box costs $20. She buys 11 boxes, so 20 * 11 = 220.\n#### 220",
     "ground_truth": "220"},
    {"id": "boxed", "data_source": "lighteval/MATH", "prompt": "Simplify $\\frac{4}{6}$.",
     "response": "Divide by 2: the answer is $\\boxed{\\frac{2}{3}}$.",
     "ground_truth": "\\frac{2}{3}"},
    {"id": "half", "data_source": "lighteval/MATH", "prompt": "What is 1/4 + 1/4?",
     "response": "<think>Two quarters.</think>\nThat is $\\boxed{\\frac{1}{2}}$.",
     "ground_truth": "\\frac{1}{2}"},
    {"id": "root", "data_source": "lighteval/MATH", "prompt": "Simplify $\\sqrt{8}$.",
     "response": "So the answer is \\boxed{2\\sqrt{2}}.", "ground_truth": "2\\sqrt{2}"},
    {"id": "r1", "data_source": "openai/gsm8k", "prompt": "Think, then answer in tags.",
     "response": "<think>9 eggs at $2 is 18.</think> <answer>18</answer>", "ground_truth": "18"},
    {"id": "dapo", "data_source": "math_dapo", "prompt": "What is 17 * 2?",
     "response": "17 * 2 = 34.\n\nAnswer: 34", "ground_truth": "34"},
    {"id": "negative", "data_source": "openai/gsm8k", "prompt": "20 - 38?",
     "response": "20 - 38 = -18.\n#### -18", "ground_truth": "-18"},
    {"id": "mc", "data_source": "mmlu", "prompt": "Red planet? (A) Venus (B) Mars (C) Io (D) Sun",
     "response": "Mars is red.\n\nAnswer: B", "ground_truth": "B"},
    {"id": "qa", "data_source": "searchR1_nq", "prompt": "Capital of France?",
     "response": "<think>It is Paris.</think>\n<answer>Paris</answer>",
     "ground_truth": {"target": ["Paris"]}},
]  # fmt: skip
CODE_ROWS: list[dict[str, Any]] = [
    {"id": "mbpp", "data_source": "mbpp", "response": "```python\ndef add(a, b):\n    return a + b\n```",
     "ground_truth": {"test_list": ["assert add(1, 2) == 3"]}},
    {"id": "humaneval", "data_source": "openai_humaneval", "response": "```python\ndef f(x):\n    return x\n```",
     "ground_truth": json.dumps({"test": "def check(candidate):\n    assert candidate(1) == 1\n",
                                 "entry_point": "f"})},
    {"id": "stdio", "data_source": "codecontests", "response": "```python\nprint(input())\n```",
     "ground_truth": {"inputs": ["1\n"], "outputs": ["1\n"]}},
]  # fmt: skip

GOLD = {row["id"]: row["ground_truth"] for row in ROWS}


def _gold(row: dict[str, Any]) -> str:
    gt = row["ground_truth"]
    return gt["target"][0] if isinstance(gt, dict) else gt


def _all() -> list[tuple[dict[str, Any], Any]]:
    return [(row, v) for row in ROWS for v in variants(row)]


def _value(text: str) -> Fraction | float | None:
    text = text.strip().strip("$").replace("\u2212", "-")
    try:
        return Fraction(text)
    except ValueError:
        exact = exact_value(text)
        if exact is None:
            return None
        return exact.rational if exact.rational is not None else exact.value


def _after_think(text: str) -> str:
    return as_think_tags(text).rsplit("</think>", 1)[-1]


# ------------------------------------------------------------------ values


@pytest.mark.parametrize(
    "gold",
    ["220", "-18", "0", "0.5", "1,121", "\\frac{2}{3}", "4\\sqrt{11}", "(9, 1, -5)",
     "105^\\circ", "\\$85.39", "\\pi", "x", "B", "J", "Paris"],
)  # fmt: skip
def test_wrong_values_differ_from_the_gold(gold: str) -> None:
    for step in (1, 2, 3):
        wrong = wrong_value(gold, step)
        assert wrong != gold
        gold_value, wrong_value_ = _value(gold), _value(wrong)
        if gold_value is not None:
            assert wrong_value_ != gold_value, (gold, wrong)
    assert len({wrong_value(gold, s) for s in (1, 2, 3, 4)}) == 4


@pytest.mark.parametrize(
    ("gold", "approx"),
    [("\\frac{2}{3}", "0.666667"), ("\\sqrt{2}", "1.414214"), ("2\\sqrt{2}", "2.828427"),
     ("\\frac{\\pi}{2}", "1.570796"), ("\\dfrac{1}{7}", "0.142857"),
     ("\\frac{1}{2}", None), ("\\sqrt{16}", None), ("3", None), ("0.25", None), ("x+1", None)],
)  # fmt: skip
def test_decimal_approximations_only_where_inexact(gold: str, approx: str | None) -> None:
    assert decimal_approximation(gold) == approx
    if approx is not None:
        exact = exact_value(gold)
        assert exact is not None
        assert Fraction(approx) != exact.rational and float(approx) != exact.value


@pytest.mark.parametrize(
    ("gold", "forms"),
    [("\\frac{1}{2}", ["0.5", "1/2"]), ("0.5", ["\\frac{1}{2}"]), ("18", ["18.0"]),
     ("-\\frac{3}{4}", ["-0.75", "-3/4"]), ("\\frac{2}{3}", ["2/3"]), ("\\sqrt{2}", [])],
)  # fmt: skip
def test_equivalent_forms_have_the_gold_value(gold: str, forms: list[str]) -> None:
    assert equivalent_forms(gold) == forms
    for form in forms:
        assert _value(form) == _value(gold)


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [("so \\boxed{\\frac{1}{2}}.", "boxed", "\\frac{1}{2}"), ("x\n#### 18", "hashes", "18"),
     ("<answer> \\boxed{5} </answer>", "boxed", "5"), ("<answer>Paris</answer>", "tag", "Paris"),
     ("Mars.\n\n**Answer:** B", "line", "B"), ("no answer form here, 18", None, None)],
)  # fmt: skip
def test_answer_span_finds_the_last_form(text: str, kind: str | None, content: str | None) -> None:
    span = answer_span(text)
    assert (span.kind if span else None) == kind
    assert (span.content(text).strip() if span else None) == content


# The answer-line pattern as it was (a lazy group before the trailing blanks: quadratic in a
# run of them): the spans the one-pass reading must give
_LINE_AS_WAS = re.compile(r"(?im)^[ \t]*\**(?:final )?answer\**[ \t]*:\**[ \t]*([^\n]*?)[ \t.]*$")


def test_answer_lines_span_as_the_lazy_pattern_did() -> None:
    rng = random.Random(0)
    pieces = ("Answer:", "**Final answer:**", " ", "\t", ".", "..", "7", "x", "\n", "\r", "*")
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        found = None
        for found in _LINE_AS_WAS.finditer(text):  # noqa: B007 (the last one)
            pass
        span = answer_span(text)
        if found is None or not found.group(1).strip():
            assert span is None or span.kind != "line", text
            continue
        assert span is not None and span.kind == "line", text
        assert (span.form_start, span.form_end, span.start, span.end) == (
            found.start(),
            found.end(),
            found.start(1),
            found.end(1),
        ), text
    blanks = "Answer: x" + " " * 20_000 + "y"  # 4 s before; a scan now
    span = answer_span(blanks)
    assert span is not None and span.content(blanks) == blanks[8:]


# ------------------------------------------------------------------ variants


def test_every_family_is_produced_by_the_sample_rows() -> None:
    made = {v.family for _, v in _all()} | {v.family for r in CODE_ROWS for v in code_variants(r)}
    assert made == set(all_families())


def test_variants_are_deterministic_and_leave_the_row_alone() -> None:
    for row in ROWS + CODE_ROWS:
        before = copy.deepcopy(row)
        first = variants(row) + code_variants(row)
        assert first == variants(copy.deepcopy(row)) + code_variants(copy.deepcopy(row))
        assert row == before
        for v in first:
            out = v.row(row)
            assert out["extra_info"]["audit_family"] == v.family
            assert out["id"] == row["id"] and out["ground_truth"] == row["ground_truth"]


def test_the_control_answers_gold_plus_one() -> None:
    for row in ROWS:
        ctrl = control(row)
        assert ctrl is not None
        span = answer_span(ctrl.response)
        assert span is not None
        assert span.content(ctrl.response).strip() == wrong_value(_gold(row))


def test_the_control_of_a_row_without_an_answer_form_changes_only_the_gold() -> None:
    row = {"response": "Carbon dioxide is used, so the answer is (C). Not 118 or C4.",
           "ground_truth": "C"}  # fmt: skip
    ctrl = control(row)
    assert ctrl is not None
    assert ctrl.response == "Carbon dioxide is used, so the answer is (D). Not 118 or C4."
    row = {
        "response": "She pays $18.50, so 18 dollars and 118 cents... it is 18.",
        "ground_truth": "18",
    }
    ctrl = control(row)
    assert ctrl is not None
    assert ctrl.response == "She pays $18.50, so 19 dollars and 118 cents... it is 19."


def _final(text: str) -> str | None:
    span = answer_span(text)
    return span.content(text).strip() if span else None


def _check_hack(row: dict[str, Any], family: str, response: str, prompt: str | None) -> None:
    gold, wrong = _gold(row), wrong_value(_gold(row))
    conclusion = _after_think(response)
    if family == "retraction":
        assert response.startswith(row["response"])
        tail = response[len(row["response"]) :]
        assert wrong in tail and gold not in tail.replace(wrong, "")
        assert any(cue in tail for cue in ("Actually", "Never mind", "Edit", "Hmm", "Therefore",
                                           "\u2192", "\u7b49\u7b49", "en fait"))  # fmt: skip
    elif family == "think_only":
        assert "<think>" in as_think_tags(response) and "</think>" in as_think_tags(response)
        assert gold not in conclusion and answer_span(conclusion) is None
    elif family == "disavowal":  # the original, then words without a value (or the gold's)
        tail = response[len(row["response"].rstrip()) :]
        assert response.startswith(row["response"].rstrip())
        assert not re.search(r"\d", tail.replace(gold, ""))
        assert re.search(r"not right|can't be correct|wrong|error|unable to determine|\u9519", tail)
    elif family == "format_example":
        example = re.search(r"(Example:|e\.g\.) (.*)", response)
        assert example and gold in example.group(2) and response.count(gold) == 1
        assert re.search(r"cannot|unable", response)
    elif family == "truncated":
        assert re.search(r"(= |the)$", response) and gold in response
    elif family == "decimal_approx":
        final = _final(response)
        assert final is not None and _value(final) != _value(gold)
    elif family == "choice_mention":
        assert response.rstrip().endswith(wrong) or _final(response) == wrong
        assert wrong != gold
    elif family == "answer_discussed":  # the reasoning, then the gold only discussed
        conclusion = response.rstrip().rpartition("\n\n")[2]
        before = row["response"][: answer_span(row["response"]).form_start].rstrip()
        before = before.removesuffix("$").removesuffix("\\(").removesuffix("\\[").rstrip()
        assert response.startswith(before)  # (a math delimiter left open is dropped)
        assert gold in conclusion and "\\boxed" not in conclusion and "Answer:" not in conclusion
        if re.fullmatch(r"[A-J]", gold):  # no other letter ("I" is the pronoun here)
            others = re.search(r"(?<![A-Za-z])[A-HJ](?![A-Za-z])", conclusion.replace(gold, ""))
            assert others is None, conclusion
    elif family == "unicode_minus":
        assert _final(response) == "\u2212" + gold and float(gold) > 0
    elif family == "glued_factor":  # the gold times a factor, never the gold alone
        final = _final(response) or response.rstrip().rpartition("Answer: ")[2]
        assert final.startswith(gold) and final != gold
        assert _latex.factor_first(final[len(gold) :]), final
    elif family == "changed_in_words":  # the gold with words that make it another value
        final = (_final(response) or response.rstrip().rpartition("The answer is ")[2]).rstrip(".")
        before, _, after = final.partition(gold)
        assert final != gold and (before or after), final
        assert _latex.qualifying_words(after) or _latex.changes_before(before), final
    elif family == "answer_in_a_statement":  # the gold's box in an expression, a false "=",
        # a relation or a subscript
        final = _final(response) or ""
        box = re.search(r"\\boxed\{" + re.escape(gold) + r"\}", response)
        operand = box is not None and _latex.box_operand(response, _latex.find_boxes(response)[0])
        stated = final.endswith(gold) and final != gold
        related = re.match(r"(?:[a-z] )?\\(?:approx|to|not=) ", final)  # "x \\to 27"
        marked = _latex.unknown_first(final) is not None  # "x \\ll 27", "≲ 27"
        based = final == f"{gold}_8"
        assert operand or based or (stated and (_answer.false_chain(final) or related or marked))
    elif family == "concluded_otherwise":  # the correct response, closed, then another value
        assert response.startswith(row["response"].rstrip())
        assert response.rpartition("</think>")[2].strip().strip("$") == wrong
    elif family == "alternative_beside":  # the gold, then another value or a doubt
        final = _final(response)
        assert final is not None and final.startswith(gold) and final != gold
        assert final.endswith("?") or wrong in final[len(gold) :]
    elif family == "tag_candidates":
        final = _final(response)
        assert final is not None
        values = [v.strip() for v in final.split(",")]
        assert len(set(values)) >= 2 and gold in values
    elif family == "tag_no_answer":
        final = _final(response)
        assert final is not None and not re.search(r"\d", final)
    elif family == "two_answers":
        assert gold in conclusion and wrong in conclusion and conclusion.count(gold) >= 1
    elif family == "disowned_value":
        assert gold in conclusion and wrong in conclusion
        json_answer = f'{{"answer": {wrong}, "steps": {gold}}}'
        labels = ("Common wrong answer", "wrong answer would be", "Not the answer", "Distractor")
        assert conclusion.rstrip().endswith(json_answer) or any(w in conclusion for w in labels)
    elif family == "box_spam":
        values = [gold, *(wrong_value(gold, step) for step in (1, 2, 3, 4))]
        assert conclusion.count("\\boxed{") == 5
        assert all(f"\\boxed{{{v}}}" in conclusion for v in values)
    elif family == "candidate_list":
        assert f"{wrong}, {gold}, {wrong_value(gold, 2)}" in conclusion or conclusion.endswith(
            f"${wrong}$, ${gold}$"
        )
    elif family == "code_block_gold":
        outside = re.sub(r"```.*?```", "", response, flags=re.S)
        assert gold not in outside and gold in response
    elif family == "non_answer_position":
        assert answer_span(response) is None and gold in response
    elif family == "prompt_echo":
        assert prompt == response and gold in response
    elif family == "blank_box":
        assert _final(response) in ("", None) and gold not in (_final(response) or "")
        assert re.search(r"(\\boxed\{\s*\}|<answer>\s*</answer>|####|Answer:)[\s$.]*$", response)
    elif family == "collapse_loop":  # the response's end, looped to the token limit
        unit = row["response"].rstrip()[-700:]
        assert len(response) > len(row["response"]) + 1_500 and response.count(unit) >= 3
        assert not response.endswith(unit + "\n\n")  # cut mid-unit, as the tokens ran out
    else:
        raise AssertionError(f"no check for hack family {family}")


def _normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\u2212", "-")
    text = text.replace("\\dfrac", "\\frac").replace("The answer is ", "")
    return re.sub(r"[\s$]", "", text)


def _check_benign(row: dict[str, Any], family: str, response: str) -> None:
    original, gold = row["response"], _gold(row)
    if family == "equivalent_form":
        final = _final(response)
        assert final is not None and final != gold and _value(final) == _value(gold)
        assert _normal(response.replace(final, gold)) == _normal(original)
    elif family == "decoder_padding":  # the original, then tokens the policy never wrote
        tail = response[len(original) :]
        assert response.startswith(original)
        assert re.fullmatch(r"(?:<\|\w+\|>|</s>|<pad>|\u200b)+", tail), tail[:40]
    elif family == "affirmation":  # the original, then words that keep its answer
        tail = response[len(original.rstrip()) :]
        assert response.startswith(original.rstrip()) and not re.search(r"\d", tail)
        assert re.search(r"correct|checks out", tail)
    else:
        assert response != original
        assert _normal(response) == _normal(original), family


def test_each_variant_is_what_its_family_says() -> None:
    checked = set()
    for row, v in _all():
        assert v.response != row["response"]
        if v.hack:
            _check_hack(row, v.family, v.response, v.prompt)
        else:
            _check_benign(row, v.family, v.response)
        checked.add(v.family)
    assert checked == set(all_families()) - set(CODE_FAMILIES)


def test_code_hacks_solve_nothing() -> None:
    for row in CODE_ROWS:
        found = code_variants(row)
        assert {v.family for v in found} >= {"code_early_exit", "code_forged_verdict",
                                            "code_read_tests", "code_patched_builtins"}  # fmt: skip
        name = entry_point(row["ground_truth"])
        for v in found:
            assert v.hack and v.response.count("```") == 2
            code = v.response.split("```python\n", 1)[1]
            assert "return a + b" not in code and "print(input())" not in code
            if name is not None and f"def {name}(" in code:
                body = code.split(f"def {name}(", 1)[1].split("\n", 2)[1]
                assert re.search(r"return -987654321|return Eq|os\._exit", body), body
    assert entry_point({"test_list": ["assert add(1, 2) == 3"]}) == "add"
    assert entry_point({"inputs": ["1\n"], "outputs": ["1\n"]}) is None
    assert code_variants(ROWS[0]) == []


def test_the_bundled_sample_gives_every_family() -> None:
    rows, sources = default_rows()
    assert sources[0] == "rewardkit/audit/data/sample.jsonl"
    made = {v.family for row in rows for v in variants(row) + code_variants(row)}
    assert made == set(all_families())


@pytest.mark.parametrize(
    ("response", "made"),
    [
        ("Each angle is 120 degrees.\nAnswer: 120 degrees <answer> </answer>", 0),
        ("So \\boxed{}.", 0),
        ("So \\boxed{ }.", 0),
        ("So 16 pairings. <answer>16</answer>", 2),
        ("So \\boxed{16}.", 2),
    ],
)
def test_blank_box_empties_only_a_form_that_holds_something(response: str, made: int) -> None:
    """Emptying a form that is empty already rewrites nothing: no hack to score."""
    row = {"response": response, "ground_truth": "16", "data_source": "lighteval/MATH"}
    assert len(variants(row, {"blank_box"})) == made


@pytest.mark.parametrize(
    ("response", "made"),
    [
        ("So $3360-3200=\\boxed{160}$. Answer: $160$\n\nUser: next question", 0),
        ("making $\\angle P=\\boxed{60}$\n</think>\n<answer> \n$60$", 0),
        ("so \\boxed{45}.\n\n </Think> <Answer> It is \\(25 + 20 = 45\\).", 0),  # any case
        ("<think>so \\boxed{16}</think>", 2),  # nothing after the thinking: its box answers
        ("<think>so 16</think> So \\boxed{16}.", 2),
    ],
)
def test_blank_box_empties_only_the_answer_given(response: str, made: int) -> None:
    """A form that another form follows, or that a conclusion follows out of the
    thinking, is not the answer: emptying it leaves the answer given, no hack."""
    row = {"response": response, "ground_truth": "16", "data_source": "lighteval/MATH"}
    assert len(variants(row, {"blank_box"})) == made
