"""guards: choice.py: the chosen letter (A-J), read from the end of the response.

Hedged choices (several letters offered) are in test_hedging.py.
"""

from __future__ import annotations

import time

import pytest

from _support.verifier_rows import table_params
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.base import Context, Verifier
from rewardkit.verifiers.choice import ChoiceVerifier

V = ChoiceVerifier()

# (gold, response, expected, reason)
ROWS: list[tuple[object, str, float, str]] = [
    ("C", "Mitochondria produce ATP, so the answer is (C).", 1.0, "a label after 'the answer is'"),
    ("C", "The answer is C.", 1.0, "a stated answer"),
    ("C", "Answer: C", 1.0, "an answer line"),
    ("C", "**Answer:** C", 1.0, "a bold answer label"),
    ("C", "**Answer: (C)**", 1.0, "a bold answer line with a label"),
    ("C", "The correct option is B.", 0.0, "another letter"),
    # an option named after a value is no choice read (an outside red team took back or
    # hedged such a choice in words the option reading does not check)
    ("B", "The answer is 42, which is option B.\n\nActually, C.", 0.0, "taken back"),
    ("B", "A is wrong. C is correct. B is correct.", 0.0, "two letters called correct"),
    (
        "B",
        "Considering each option...\nTherefore, the final answer is $\\boxed{B}$.",
        1.0,
        "a boxed letter",
    ),
    ("B", "$\\boxed{\\text{B}}$", 1.0, "a letter in \\text in a box"),
    ("D", "(A) is wrong because... (B) fails... so **D**", 1.0, "labels discussed, then chosen"),
    ("D", "Option (A) is too small, option (D) fits.", 1.0, "options discussed"),
    ("A", "Let me check every choice.\n\nA", 1.0, "a lone letter ending the response"),
    ("A", "Let me check every choice.\n\n(A)", 1.0, "a lone label ending the response"),
    ("J", "After elimination the answer is J", 1.0, "letters go up to J"),
    ("C", "The answer is C, not (D) as some think.", 1.0, "a label ruled out after the answer"),
    ("C", "answer: Consider the energy first.", 0.0, "'Consider' is a word, no letter C"),
    ("C", "I am not sure.", 0.0, "'I' is a pronoun, no answer"),
    ("C", "", 0.0, "an empty response"),
    ("C) 42", "Answer: C", 1.0, "a gold with the option's text"),
    ("(C)", "Answer: C", 1.0, "a gold label in parentheses"),
    ("c", "Answer: C", 1.0, "a lower-case gold"),
    (["B", "C"], "Answer: C", 1.0, "a list of golds: any one"),
    ("C", "<answer>C</answer>", 1.0, "the R1 tag"),
    ("C", "<answer>C) 42</answer>", 1.0, "the tag with the option's text"),
    ("C", "Answer: C. Because option A is wrong", 1.0, "'option A' discusses, not answers"),
    (
        "A",
        "so it stops at quarter $A$. </think> <answer> $A$ </answer>",
        1.0,
        "a letter in math in the tag (ei corpus, iter_5:780)",
    ),
    ("C", "<answer> C(5, 2) = 10 </answer>", 0.0, "C(5, 2) is a binomial, no letter"),
    ("C", "Answer: C" + " " * 1_000_000, 1.0, "a megabyte of spaces after it"),
    ("A", "<answer> I need more data. </answer>", 0.0, "'I' is a word, no letter"),
    # full-width forms and "answer" in Chinese, as a model answering in Chinese writes them
    ("B", "The answer is （Ｂ）.", 1.0, "a full-width letter in full-width parentheses"),
    ("B", "所以答案是 Ｂ。", 1.0, "a full-width letter after 答案是"),
    ("B", "答案：B", 1.0, "答案 with a full-width colon"),
    ("B", "答案为 **B**", 1.0, "答案为, the letter in bold"),
    ("C", "正确答案是：Ｂ", 0.0, "another letter"),
    ("B", "答案不是B", 0.0, "the letter denied"),
    ("B", "答案：B\n\n答案：C", 0.0, "two answers, one a paragraph"),
    ("B", "答案是 B 或 C", 0.0, "two letters offered"),
    # as English reads them (an outside red team's probes): letters joined with no blank,
    # a letter asked, the wrong answer named, one ruled out, one chosen
    ("B", "答案是B或C。", 0.0, "或 joins two letters"),
    ("B", "答案是B还是C？", 0.0, "还是 asks which"),
    ("B", "答案是B吗？", 0.0, "吗 asks"),
    ("A", "答案：A、B", 0.0, "、 lists two"),
    ("A", "答案：Ａ、Ｂ", 0.0, "、 lists two full-width letters"),
    ("A", "答案是A和B", 0.0, "和 joins two"),
    ("B", "错误答案是B，正确的是A。", 0.0, "the wrong answer named"),
    ("A", "题目问：“答案是A吗？”我认为正确选项是C。", 0.0, "a question quoted"),
    ("B", "排除答案B，所以选D。", 0.0, "B ruled out"),
    ("D", "排除答案B，所以选D。", 1.0, "D chosen"),
    ("C", "不选B，选C。", 1.0, "not B: C chosen"),
]


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params({"choice": ROWS}))
def test_regression_table(gold: object, response: str, expected: float, reason: str) -> None:
    extracted = V.extract(response)
    verdict = V.quick_check(extracted, gold)
    assert verdict.score == expected, (reason, extracted)
    assert verdict.extra["acc"] is (expected == 1.0)
    assert V.check(extracted, gold) == verdict


def test_stated_answer_beats_a_later_parenthesised_letter() -> None:
    extracted = V.extract("The answer is B. Note that (D) would need more energy.")
    assert extracted.answer == "B"
    assert extracted.extra["pattern"] == "stated"


@pytest.mark.parametrize("gold", [None, "", "42", 2, [], "Zebra"])
def test_unusable_ground_truth_is_an_invalid_row(gold: object) -> None:
    with pytest.raises(InvalidSampleError, match="choice: ground_truth"):
        V.quick_check(V.extract("Answer: C"), gold)


@pytest.mark.parametrize("gold", [1, "3"])
def test_an_option_index_as_gold_says_to_give_the_letter(gold: object) -> None:
    """cais/mmlu numbers options from 0, ARC's keys from 1: no guess, a reason."""
    with pytest.raises(InvalidSampleError, match="give the letter, A for the first option"):
        V.quick_check(V.extract("Answer: B"), gold)


def test_protocol() -> None:
    assert isinstance(V, Verifier)
    assert V.key == "choice"


@pytest.mark.parametrize(
    "response",
    [
        "a" * 1_000_000,
        "answer " * 150_000,
        "(A) " * 250_000,
        "**" * 500_000,
        "\x00Answer: C\x00",
        "\ud800Answer: C",
    ],
    ids=["prose", "answer-words", "parens", "stars", "nul", "surrogate"],
)
def test_hostile_responses_are_bounded(response: str) -> None:
    started = time.process_time()
    verdict = V.quick_check(V.extract(response), "C")
    assert time.process_time() - started < 1.0
    assert verdict.score == (1.0 if "Answer: C" in response else 0.0)


# A red-team probe found each credited against gold B: the letter marked wrong or unsure,
# set beside another by an operator or a part, or another letter chosen in a later sentence.
_MARKED_OR_REPLACED = [
    "Answer: B is wrong; C", "Answer: B is incorrect", "Answer: B (wrong)", "Answer: B ✗",
    "Answer: B (eliminated)", "Answer: B (ruled out)", "Answer: B (guess)", "Answer: B (no) C",
    "Answer: B (50%) / C (50%)", "Answer: B >> C", "Answer: B → C", "Answer: B∨C",
    "Answer: B\\C", "Answer: B for (a), C for (b)", "Answer: B\n\nI choose C.",
    "Answer: B\n\nGoing with C.", "Answer: B\n\nSo C it is.",
    "Answer: B\n\n(C) is the correct option.", "Answer: B\n\nLa réponse est C.",
]  # fmt: skip
_KEPT = [
    "Answer: B", "Answer: B, not C", "Answer: B (the largest)", "Answer: (B) 42%",
    "Answer: B (no doubt)", "Answer: B\n\nI choose B.", "Answer: B\n\n(B) is the correct option.",
    "Answer: B\n\nSo, A is wrong because it is too small.",
]  # fmt: skip


# A letter chosen with a verb ("I'll go with B", "The correct option is B") was read with
# no look at what follows it, unlike one stated ("Answer: B"): a correction or another
# option offered after it kept it; and a last line of another letter after it was read
# alone. Each scored 1.0 (an outside red team's probes, gold B; the second list gold C).
_CHOSEN_THEN_TAKEN_BACK = [
    "I'll go with B. Actually, C.", "I'd pick B... actually C.", "I choose B. Wait, no: C.",
    "The correct option is B... actually D.", "I choose B. Never mind, C.", "I choose B. Edit: C.",
    "I choose B... no, C.", "I'll go with B. Or C.", "I choose B. Or maybe C.",
    "Therefore, the correct option is B. Or C.", "I choose B.\n\nWait, C.", "Answer: B (also C)",
]  # fmt: skip
_CHOSEN_THEN_ANOTHER_LINE = [
    "I choose B.\n\nC", "I choose B.\n\nC) Berlin", "I choose B.\n\n**C**", "(B)\n\nC",
    "The correct option is B.\n\nC", "I'll go with B.\n\n(C)",
]  # fmt: skip
# An answer offered as an alternative to another letter stated before it, or a letter in
# quotes, code or math mode joined by another (the wrapper hid the "or"): each credited
_TWO_GIVEN = [  # (response, gold)
    ("Answer: B\n\nAlternatively:\nAnswer: C", "C"), ('The answer is "B" or "C".', "B"),
    ("The answer is `B`, `C`.", "B"), ("The answer is \\(B\\) and \\(C\\).", "B"),
    ("The answer is *B* or *C*.", "B"), ('The answer is "B" (also C).', "B"),
    ("The answer is `B`, probably.", "B"), ("答案应该是B，也可能是C", "B"),
]  # fmt: skip
# Two options with their texts as the prompt gives them, in the answer's sentence (an
# outside red team's probes): each credited whichever of the two was gold
_OPTIONS = "Which city?\nA) Berlin\nB) Paris\nC) Rome\nD) 12\nE) 15"
_TWO_LISTED = [  # (response, gold)
    ("Answer: B) Paris, C) Rome", "B"), ("Answer: (B) Paris, (C) Rome", "B"),
    ("Answer: B) Paris; C) Rome", "B"), ("Answer: B) Paris or C) Rome", "C"),
    ("Answer: B. Paris, C. Rome", "B"), ("The answer is (D) 12 or (E) 15.", "D"),
    ("Answer: **B** Paris, **C** Rome", "C"), ("I choose (B) Paris and (C) Rome.", "B"),
    ("Answer: B) Paris, C) Rome are both possible.", "B"),
]  # fmt: skip
# The same shapes that choose one: the other option ruled out, said something of, or no
# option's text (a second outside look at the rule's first version, which voided each)
_ONE_LISTED = [  # (response, gold)
    ("Answer: B) Paris, not A) Berlin or C) Rome.", "B"), ("Answer: (D) 12; (E) 15 overcounts.", "D"),
    ("The answer is (B), eliminating (A) and (C).", "B"), ("Answer: B) Paris, unlike C) Rome", "B"),
    ("The answer is (D) Both (A) and (B).", "D"), ("Answer: B) Paris, and C) Rome is Italy's.", "B"),
    ("The answer is C. Darwin and A. R. Wallace.", "C"), ("Answer: B) Paris", "B"),
    ("The answer is (C) Salmonella, E. coli, and Listeria.", "C"),
    # the other options named with their texts to explain why they are wrong (a third
    # outside look: the rule's second version voided each)
    ("The answer is (B) Paris, because (A) Berlin, (C) Rome and (D) 12 are other things.", "B"),
    ("The answer is (D) 12; (E) 15 too large, (C) Rome is a city.", "D"),
    ("The answer is (B) Paris, and (C) Rome would be Italy's.", "B"),
]  # fmt: skip
_LISTING_OPTIONS = {
    "The answer is (D) Both (A) and (B).": "Q\n(A) x\n(B) y\n(C) z\n(D) Both (A) and (B)",
    "The answer is C. Darwin and A. R. Wallace.": "Q\nA. Lamarck\nB. Mendel\nC. Darwin and A. R. Wallace",
}
# Regressions an outside red team found in those rules' first version: each is B
_ONE_GIVEN_THE_OTHER_SET_APART = [
    "Answer: B) Paris, not C) Berlin", "Answer: (B) Paris. (C) is wrong.",
    "The answer is B) P(A)P(B|A)", "The answer is B) Paris, and C) Rome is the capital of Italy.",
    "The answer is B. Also A, C and D are capitals of other countries.",
    "The answer is B. Also D) Madrid is in Spain.", "The answer is B. Also I'd note it is large.",
    "Berlin is Germany's. Alternatively, by elimination the answer is B.",
    "Many students choose A because it is large.\n\nTherefore, the correct answer is:\n\n**B**",
    "You might choose C if you confuse it with Italy.\n\nFinal answer:\nB",
    "Answer: B) Paris. C) Rome is in Italy.", "Answer: B) Paris, as opposed to C) Rome",
    "Answer: B) 4, since (C) assumes x > 0.", "The answer is (B), and (B) only.",
    "Answer: B. Paris, i.e. the capital.",
]  # fmt: skip


@pytest.mark.parametrize(("response", "gold"), _TWO_GIVEN)
def test_two_options_given_or_one_offered_as_an_alternative_is_no_answer(
    response: str, gold: str
) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), gold).score == 0.0


@pytest.mark.parametrize(("response", "gold"), _TWO_LISTED)
def test_two_options_listed_with_their_texts_is_no_answer(response: str, gold: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response, Context.of(_OPTIONS, None)), gold).score == 0.0


@pytest.mark.parametrize(("response", "gold"), _ONE_LISTED)
def test_one_option_chosen_beside_others_ruled_out_or_named_keeps_its_credit(
    response: str, gold: str
) -> None:
    verifier = ChoiceVerifier()
    context = Context.of(_LISTING_OPTIONS.get(response, _OPTIONS), None)
    assert verifier.check(verifier.extract(response, context), gold).score == 1.0


@pytest.mark.parametrize("response", _ONE_GIVEN_THE_OTHER_SET_APART)
def test_one_option_given_and_another_ruled_out_keeps_its_credit(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "B").score == 1.0


_CHOSEN_AND_KEPT = [
    "I'll go with B.", "I choose B because Paris is the capital.", "I'll go with B, not C.",
    "London is in the UK, so not A. I choose B.", "I choose B.\n\nB",
    "I choose B. Paris is the capital of France.", "Option B is correct.", "所以选B。",
]  # fmt: skip


# Natural answers an outside red team found scored 0 (gold B; a last line needs the
# prompt's option text to be read as chosen: the row's context carries it)
_NATURAL = [
    "The answer should be B.", "The answer must be B.", "The answer is \\(B\\).",
    "The answer is *B*.", "The answer is `B`.", 'The answer is "B".', "The answer is 'B'.",
    "答案应该是B。", "Final answer:\nB: Paris", "B - Paris", "B — Paris",
]  # fmt: skip
_FRANCE = "What is the capital of France?\nA. London\nB. Paris\nC. Berlin\nD. Madrid"


@pytest.mark.parametrize("response", _NATURAL)
def test_natural_ways_to_state_a_letter_are_read(response: str) -> None:
    verifier = ChoiceVerifier()
    extracted = verifier.extract(response, Context.of(_FRANCE, None))
    assert verifier.check(extracted, "B").score == 1.0
    assert verifier.check(extracted, "C").score == 0.0


@pytest.mark.parametrize("response", _CHOSEN_THEN_TAKEN_BACK)
def test_a_letter_chosen_then_taken_back_or_joined_by_another_is_no_answer(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "B").score == 0.0


@pytest.mark.parametrize("response", _CHOSEN_THEN_ANOTHER_LINE)
def test_a_letter_chosen_then_another_on_the_last_line_is_no_answer(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "C").score == 0.0
    assert verifier.check(verifier.extract(response), "B").score == 0.0


@pytest.mark.parametrize("response", _CHOSEN_AND_KEPT)
def test_a_letter_chosen_and_explained_keeps_its_credit(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "B").score == 1.0


@pytest.mark.parametrize("response", _MARKED_OR_REPLACED)
def test_a_letter_marked_wrong_or_replaced_is_no_answer(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "B").score == 0.0


@pytest.mark.parametrize("response", _KEPT)
def test_a_letter_explained_or_restated_keeps_its_credit(response: str) -> None:
    verifier = ChoiceVerifier()
    assert verifier.check(verifier.extract(response), "B").score == 1.0
