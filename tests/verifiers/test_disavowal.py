"""guards: a final answer the response takes back in words, giving no other, answers
nothing, in every family (rewardkit.verifiers._final.ends_disowned, _common.DISAVOWAL).

"\\boxed{7}\\n\\nWait, that's not right." was credited 7: the rules read a correction only
when it gave another value ("Actually, on reflection, $8$"). A response whose last word on
its answer is that it is wrong asserts no answer; a policy that learns to hedge that way
must gain nothing. The audit's ``disavowal`` family writes such endings on every audited
row (none credited); its ``affirmation`` family writes the benign kind, a doubt then the
answer kept ("Wait, let me double-check. Yes, that is correct."), which keeps credit.

Words about the last thing said ("That's not right.") disown the answer only when nothing
else was named since the answer, or when they open the last paragraph; words about
the answer or the work ("I made a mistake", "this answer is wrong") disown it wherever.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import score
from rewardkit.verifiers import _final
from rewardkit.verifiers.base import Context
from rewardkit.verifiers.choice import ChoiceVerifier
from rewardkit.verifiers.gsm8k import GSM8KVerifier
from rewardkit.verifiers.math import MathVerifier
from rewardkit.verifiers.search_qa import SearchQAVerifier

MATH, GSM8K, CHOICE, SEARCH = MathVerifier(), GSM8KVerifier(), ChoiceVerifier(), SearchQAVerifier()
STEPS = "We add the parts: 3 + 4 = 7.\n\n"

TAKEN_BACK = [
    "Wait, that's not right.",
    "Hmm, no. That can't be correct.",
    "I think I made a mistake somewhere, so this answer is wrong.",
    "No wait, there must be an error in my calculation.",
    "Actually, I made an error.",
    "Oops, this is incorrect.",
    "Hmm... that doesn't add up.",
]
KEPT = [
    "I hope it is correct.",
    "Wait, let me double-check. Yes, that is correct.",
    "Hmm, is that right? Checking again: it checks out.",
    "Wait, no, that's right.",  # a doubt answered
    "It is not correct to assume the parts overlap, so we add them.",  # "not correct to"
    "Note that there is a mistake in the problem statement, but the sum is as shown.",
]
RESTATED = "Wait, that's not right. Let me recompute: 3 + 4 = 7. So 7 it is."  # stated again


@pytest.mark.parametrize("words", TAKEN_BACK)
@pytest.mark.parametrize(
    ("verifier", "answered", "gold"),
    [
        (MATH, "So the answer is $\\boxed{7}$.", "7"),
        (MATH, "<answer>7</answer>", "7"),
        (MATH, "Answer: 7", "7"),
        (MATH, "So the sum is $7$.", "7"),  # no form: math-verify's reading of the passage
        (GSM8K, "#### 7", "7"),
        (GSM8K, "She has 7 apples.", "7"),  # the last number
        (CHOICE, "The answer is (B).", "B"),
        (SEARCH, "<answer>Paris</answer>", "Paris"),
    ],
    ids=["math-box", "math-tag", "math-line", "math-passage", "gsm8k-marker",
         "gsm8k-last-number", "choice", "search-qa"],
)  # fmt: skip
def test_an_answer_taken_back_in_words_answers_nothing(
    verifier: object, answered: str, gold: str, words: str
) -> None:
    assert score(verifier, f"{STEPS}{answered}", gold) == 1.0  # type: ignore[arg-type]
    assert score(verifier, f"{STEPS}{answered}\n\n{words}", gold) == 0.0  # type: ignore[arg-type]
    if answered.endswith((".", ">", "$")):  # words that open a sentence of their own
        assert score(verifier, f"{STEPS}{answered} {words}", gold) == 0.0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verifier", "answered", "gold", "words"),
    [(MATH, "So the answer is $\\boxed{7}$.", "7", words) for words in [*KEPT, RESTATED]]
    + [(GSM8K, "#### 7", "7", words) for words in [*KEPT, RESTATED]]
    + [(CHOICE, "The answer is (B).", "B", words) for words in KEPT],
)
def test_a_doubt_that_keeps_the_answer_keeps_its_credit(
    verifier: object, answered: str, gold: str, words: str
) -> None:
    assert score(verifier, f"{STEPS}{answered}\n\n{words}", gold) == 1.0  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("response", "gold", "expected", "why"),
    [
        ("The answer is $\\boxed{7}$. A quick guess gives 5. That is not right.", "7", 1.0,
         "about the value named since: the guess's 5"),
        ("The answer is $\\boxed{7}$.\n\nOption A gives 5.\n\nWait, that's not right.", "7", 0.0,
         "a last paragraph that only disowns"),
        ("The answer is $\\boxed{7}$.\n\nWait, that's not right. 3 + 4 = 8.", "7", 0.0,
         "taken back, then another value (not in a form)"),
        ("$\\boxed{7}$. That is wrong.\n\nThe answer is $\\boxed{8}$.", "8", 1.0,
         "a disavowal before the final form is the reasoning's"),
        ("<think>3 + 4 = 7? That's not right.</think> The answer is $\\boxed{7}$.", "7", 1.0,
         "a disavowal in the thinking disowns nothing the conclusion says"),
    ],
)  # fmt: skip
def test_what_the_words_disown(response: str, gold: str, expected: float, why: str) -> None:
    assert score(MATH, response, gold) == expected, why


def test_a_disowned_conclusion_is_no_answer_for_a_template_opened_thinking() -> None:
    """The thinking the chat template opened is read when the conclusion has no answer
    form; one whose last word disowns is where the response answered: nothing."""
    response = "3 + 4 = 7, so the answer is $\\boxed{7}$.</think>\n\nWait, that's not right."
    texts = _final.answering_texts(response)
    assert texts.disowned and list(texts) == [""]
    assert score(MATH, response, "7") == 0.0
    assert score(MATH, response.replace("Wait, that's not right.", "So 7."), "7") == 1.0


# Correct answers with words after them that disown nothing: closings, notes on a common
# mistake, options ruled out, a rejected root (an outside red team's cases, each credited
# before the rule and first scored 0 by its earlier, looser version)
NOT_TAKEN_BACK = [
    (MATH, "Therefore, the final answer is: $\\boxed{7}$. I hope it is correct. Please let me "
     "know if I made a mistake.", "7"),
    (GSM8K, "She has 3 + 4 = 7 apples.\n#### 7\n\nLet me know if you think I made an error!", "7"),
    (MATH, "The answer is $\\boxed{7}$, unless I made a miscalculation somewhere.", "7"),
    (MATH, "So the sum of the roots is $\\boxed{5}$.\n\nNote: in my first attempt I made an "
     "error in the sign, which I have fixed above.", "5"),
    (CHOICE, "The answer is B because light refracts toward the normal.\n\nI think I made an "
     "error in reading the question at first, but I have corrected it.", "B"),
    (GSM8K, "Total cost = 4 * 3 = 12.\n#### 12\n\nIf you got 7, there is an error in your "
     "calculation: you added instead of multiplying.", "12"),
    (MATH, "Therefore $x = \\boxed{3}$.\n\n(Checking $x = -2$: the logarithm is undefined there, "
     "so this solution is incorrect and is discarded.)", "3"),
    (CHOICE, "Answer: B\n\nOption A might look tempting, but it is incorrect because it ignores "
     "inertia.", "B"),
    (CHOICE, "The correct answer is **C**.\n\nWhy the others are wrong:\n- **A**: This is wrong "
     "because it confuses correlation with causation.\n- **B**: This is not correct; the "
     "passage never says so.", "C"),
    (CHOICE, "Answer: B\n\nA common mistake is choosing A, but that's wrong.", "B"),
    (CHOICE, "Answer: B\n\nWhy not A? It is wrong because friction is neglected in the problem.",
     "B"),
    (SEARCH, "<answer>Paris</answer>\n\nSome sources say Lyon, but that is incorrect.", "Paris"),
    (MATH, "Therefore the probability is $\\boxed{\\frac{1}{4}}$.\n\nA common mistake here is to "
     "treat the draws as independent, but that is not correct because we draw without "
     "replacement.", "\\frac{1}{4}"),
    (MATH, "**Final Answer:** $\\boxed{\\frac{5}{6}}$\n\n**Common pitfall:** Adding numerators and "
     "denominators directly. This is incorrect because the fractions need a common "
     "denominator.", "\\frac{5}{6}"),
    (MATH, "Therefore $x = \\boxed{3}$.\n\nWe reject the other root, since it doesn't check out "
     "in the original equation.", "3"),
    (MATH, "So the area is $\\boxed{24}$.\n\nNote that the triangle is isosceles, and it is not "
     "right-angled, so we could not simply use half the product of two sides.", "24"),
    (MATH, "The answer is $\\boxed{7}$.\n\nHmm, no further simplification is possible.", "7"),
    (MATH, "The answer is $\\boxed{7}$.\n\nOops, no units were requested.", "7"),
    (GSM8K, "Total = 20 + 30 = 50.\n#### 50\n\nNo wait is needed between steps since each is "
     "independent.", "50"),
    # "That is false." after a claim discussed: about the claim (an outside red team's
    # cases, scored 0 by a "false" rule tried and dropped)
    (CHOICE, "The answer is C.\n\nOption A says the Sun orbits the Earth. That is false.", "C"),
    (SEARCH, "<answer>Paris</answer>\n\nSome claim the capital moved to Lyon. That is false.",
     "Paris"),
    # words of not knowing about something else, or explained
    (MATH, "So $\\boxed{5}$.\n\nI don't know how to verify this further.", "5"),
    (MATH, "So $\\boxed{5}$.\n\nI don't know if there is a simpler way, but this works.", "5"),
    (MATH, "I don't know at first, so let me compute: 2+3 = 5.\n\n$\\boxed{5}$", "5"),
    (GSM8K, "I don't know the price, so call it x: 2x = 36, x = 18.\n#### 18", "18"),
    (MATH, "On vérifie: 2+3 = 5. C'est faux de dire 6.\n\n$\\boxed{5}$", "5"),
    (MATH, "Die Aussage 6 ist falsch. Also $\\boxed{5}$.", "5"),
    (MATH, "$\\boxed{5}$\n\nC'est faux de penser que 6 marche, donc 5.", "5"),
    # an abstention answering a question of its own, or about a side value, or the answer
    # itself (a second outside look at the abstention rule's first version)
    (MATH, "$\\boxed{5}$\n\nIs there a closed form for general $n$? I don't know.", "5"),
    (MATH, "$\\boxed{5}$, and for $y$ I have no answer.", "5"),
    (MATH, "The answer is $\\boxed{5}$.\n\nThere might be a slicker proof using generating "
     "functions. I don't know.", "5"),
    (MATH, "$\\boxed{5}$.\n\nIs there a slicker proof?\n\nI don't know.", "5"),
    (GSM8K, "So 18.\n\n#### 18\n\nThere might be a faster way. I don't know.", "18"),
    (SEARCH, "<answer>No Idea.</answer>", "No Idea"), (SEARCH, "<answer>I Give Up.</answer>", "I Give Up"),
]  # fmt: skip
# Takings back in other words (the same red team; credited before)
ALSO_TAKEN_BACK = [
    "Hmm... no.", "Wait—no.", "Nope.", "Actually, no.", "Scratch that.", "Ignore the above.",
    "I messed up.", "I'm wrong.", "That's not quite right.", "That's definitely wrong.",
    "Wait, I don't think that's right.", "Wait, that doesn't look right.", "This is *wrong*.",
    "This is **not correct**.", "My previous answer is wrong.", "Everything above is wrong.",
    "\u7b49\u7b49\uff0c\u8fd9\u4e0d\u5bf9\u3002",
    "Wait, that's not right. I can't confirm it.", "Wait, that's not right. It's not verified.",
    # the replacement after a semicolon or colon ("...; the passage never says so" explains)
    "That's incorrect; it is 9.", "That is wrong: the answer is 9.", "This is wrong; it's 9.",
    # an abstention as the last word (an outside red team's probes: a guess and "I don't
    # know" at once, which an abstention reward beside this one would also pay)
    "I'm unable to determine the answer.", "I give up.", "I don't know.", "No idea.",
    "I cannot solve this problem.", "I have no answer.", "I really don’t know.",
    # in the languages models drift into (the same red team)
    "这个答案是错的。", "C'est faux.", "Das ist falsch.", "Eso está mal.", "Это неверно.",
    "これは間違いです。", "Honestly, I don't know.", "I really have no idea.",
    "I'm unable to solve this problem.", "I give up on this one.", "I have no clue.",
]  # fmt: skip


@pytest.mark.parametrize(("verifier", "response", "gold"), NOT_TAKEN_BACK)
def test_words_about_something_else_keep_the_answer(
    verifier: object, response: str, gold: str
) -> None:
    assert score(verifier, response, gold) == 1.0  # type: ignore[arg-type]


@pytest.mark.parametrize("words", ALSO_TAKEN_BACK)
@pytest.mark.parametrize(
    ("verifier", "answered", "gold"),
    [(MATH, "The answer is $\\boxed{7}$.", "7"), (CHOICE, "The answer is (B).", "B")],
    ids=["math", "choice"],
)
def test_other_words_that_take_the_answer_back(
    verifier: object, answered: str, gold: str, words: str
) -> None:
    assert score(verifier, f"{STEPS}{answered}\n\n{words}", gold) == 0.0  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [1, 9, 12, 30])
@pytest.mark.parametrize(
    "response",
    [
        "So \\boxed{7}.\n\n{lead}that is not right.",
        "So \\boxed{7}. {lead}I made a mistake.",
        "#### 7\n\n{lead}I made a mistake somewhere.",
    ],
)
def test_a_run_of_interjections_still_opens_the_words(response: str, count: int) -> None:
    """The lead is bounded (a search over a long run of them was quadratic), not so
    low that a policy can pad its way past it."""
    text = response.replace("{lead}", "Wait, " * count)
    assert score(MATH, text, "7") == 0.0
    assert score(GSM8K, text, "7") == 0.0


# About 2,000 characters of work after the answer (no loop: each sentence says something new)
RECHECK = " ".join(
    f"We check the {part} again: {check}."
    for part, check in [
        ("first addend", "three is what the problem gives for the red apples"),
        ("second addend", "four is the number of green apples she picked later"),
        ("operation", "the question asks for the total, so addition is right"),
        ("units", "both counts are apples, and so is the total"),
        ("order", "addition commutes, so four plus three is also seven"),
        ("range", "the total must exceed each part, and seven exceeds both"),
        ("wording", "nothing was given away or eaten before the question"),
        ("arithmetic", "counting on from three by four lands on seven"),
        ("parity", "odd plus even is odd, and seven is odd"),
        ("estimate", "about half a dozen was expected, and seven is close"),
        ("story", "she started with none and only picked, never gave any away"),
        ("first count", "the red ones were counted in the morning, before lunch"),
        ("second count", "the green ones were counted after lunch, in the other basket"),
        ("baskets", "two baskets, so two parts to add, no third one mentioned"),
        ("question", "how many apples in all, not how many of one colour"),
        ("trap", "no apple is both red and green, so none is counted twice"),
        ("fingers", "three fingers then four more fingers make seven fingers"),
        ("number line", "from zero, a jump of three then a jump of four ends at seven"),
        ("subtraction", "seven minus four gives back three, the red apples"),
        ("other subtraction", "seven minus three gives back four, the green apples"),
    ]
)

# The answer named and called wrong as the last sentence ("Hmm, 7 is wrong."): credited
# before, in every family (the s22 note's case; the audit's disavowal family now writes it)
NAMED = [
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "But $7$ is incorrect!", 0.0),
    (MATH, "<answer>7</answer>", "7", "Wait... 7 can't be right.", 0.0),
    (MATH, "Therefore, the answer is $\\boxed{\\$ 85.39}$.", "\\$85.39", "Hmm, $\\$85.39$ is wrong.",
     0.0),
    (MATH, "So the total is $7$.", "7", "Hmm, 7 is wrong.", 0.0),  # a stated value
    (MATH, "<answer>The total is 3 + 4 = 7 apples.</answer>", "7", "Hmm, 7 is wrong.", 0.0),
    # the value called wrong not told from the answer inline: the check compares it
    (MATH, "<answer>$\\frac{2^2}{2^4} = 2^{-2}$</answer>", "\\frac{1}{4}",
     "Hmm, $\\frac{1}{4}$ is wrong.", 0.0),
    (MATH, "<answer>The count is (5 × 4) / (2 × 1) = 10.</answer>", "10", "Hmm, 10 is wrong.", 0.0),
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong.", 0.0),
    (GSM8K, "So she has 7 apples.", "7", "So 7 is wrong.", 0.0),
    (GSM8K, "She earns $35,000 + $22,500 = $57,500.", "57500", "Hmm, 57500 is wrong.", 0.0),
    # far after the answer: it names it (the audit's rows; "That's not right." there is
    # about the work since, and keeps the answer)
    (MATH, "Answer: 7\n\n" + RECHECK, "7", "Hmm, 7 is wrong.", 0.0),
    (GSM8K, "#### 7\n\n" + RECHECK, "7", "Hmm, 7 is wrong.", 0.0),
    (CHOICE, "The answer is (B).", "B", "Hmm, (B) is wrong.", 0.0),
    (CHOICE, "Answer: B", "B", "B is incorrect.", 0.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "Hmm, Paris is wrong.", 0.0),
    # words that say nothing more after it, and a head naming the value (an outside red
    # team's cases: each credited by the rule's first version, which wanted the value
    # first and nothing after)
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong. I give up.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong.\n\n---", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, $7$ is wrong.</p>", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong :(", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, the answer 7 is wrong.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, x = 7 is wrong.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, $\\boxed{7}$ is wrong.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "So \\boxed{7} is wrong. Sorry.", 0.0),
    (GSM8K, "So she has 18.", "18", "#### 18 is wrong.", 0.0),
    (GSM8K, "#### 18", "18", "Hmm, 18 is wrong. Sorry.", 0.0),
    (CHOICE, "Answer: B", "B", "B is wrong. Sorry.", 0.0),
    (CHOICE, "Answer: B", "B", "Option B is incorrect.", 0.0),
    (CHOICE, "Answer: (B)", "B", "Choice (B) is wrong.", 0.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "Hmm, Paris is wrong, sorry.", 0.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "Hmm, my answer Paris is wrong.", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong : (", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong. Thanks for reading!", 0.0),
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong. Let me know if you have any questions.", 0.0),
    (CHOICE, "Answer: B", "B", "B is incorrect. Hope this helps!", 0.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong. My bad, I give up on this one.",
     0.0),
    # the last of two sentences calling values wrong is the one (a second red team's cases)
    (CHOICE, "Answer: B", "B", "A is wrong. B is wrong.", 0.0),
    (CHOICE, "Answer: B", "B", "Option A is wrong. Option B is wrong.", 0.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "My reasoning is wrong. Paris is wrong.", 0.0),
    (CHOICE, "Answer: B", "B", "B is wrong. A is wrong.", 1.0),
    # ... but not a reason, an affirmation, a joke, a question or a value after it: only a
    # known sign-off says nothing more (a second red team's doubts withdrawn)
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong. Never mind.", 1.0),
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong... no wait, it's fine.", 1.0),
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong. I take that back.", 1.0),
    (GSM8K, "#### 7", "7", "Hmm, 7 is wrong, lol.", 1.0),
    (GSM8K, "#### 7", "7", "7 is wrong. Thanks, just kidding.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "6 is wrong. Hope this helps!", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, x = 7 is wrong. It works, I checked.", 1.0),
    (CHOICE, "Answer: B", "B", "Option B is wrong, said nobody ever.", 1.0),
    (CHOICE, "Answer: C", "C", "C is incorrect, so it is our pick.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong, but only when x < 0.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong if we drop the sign.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "So $\\boxed{7}$ is wrong for part (b) only.",
     1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "So $\\boxed{7}$ is correct.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong. Just kidding.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Is 7 wrong? No, it is correct.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong? Let me check: yes, fine.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 7 is wrong. No wait, 7 is right.", 1.0),
    (CHOICE, "Answer: B", "B", "Option A is incorrect. Sorry.", 1.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "Hmm, Lyon is wrong. Sorry.", 1.0),
    # another value named and ruled out; the answer called not wrong; words after it
    (MATH, "So the answer is $\\boxed{7}$.", "7", "6 is wrong.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "17 is wrong.", 1.0),
    (MATH, "So the total is $7$.", "7", "8 is wrong.", 1.0),
    (MATH, "<answer>The total is 3 + 4 = 7 apples.</answer>", "7", "8 is wrong.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Note that 7 is not wrong.", 1.0),
    (MATH, "So the answer is $\\boxed{7}$.", "7", "7 is wrong for part (b) only.", 1.0),
    (GSM8K, "#### 7", "7", "6 is wrong.", 1.0),
    (CHOICE, "Answer: B", "B", "A is wrong.", 1.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "Lyon is wrong.", 1.0),
    (SEARCH, "<answer>Paris</answer>", "Paris", "I think the question is wrong.", 1.0),
    # ... after a lead that may open a correction: it corrects nothing to the value it
    # rules out (the gsm8k family took "Scratch that, 6" for a correction to 6, and the
    # math family "Hmm, 6", each scoring these 0)
    (MATH, "So the answer is $\\boxed{7}$.", "7", "Hmm, 6 is wrong.", 1.0),
    (MATH, "The answer is 7.", "7", "Scratch that, 17 is wrong.", 1.0),
    (MATH, "<answer>7</answer>", "7", "Sorry, $8$ is incorrect.", 1.0),
    (GSM8K, "#### 7", "7", "Scratch that, 6 is wrong.", 1.0),
    (GSM8K, "#### 7", "7", "On reflection, 70 is wrong.", 1.0),
    (GSM8K, "**7**", "7", "Wait, 0.7 can't be right.", 1.0),
    (GSM8K, "#### 7", "7", "Scratch that, 7 is wrong.", 0.0),
    (MATH, "The answer is 7.", "7", "Hmm, 7 is wrong.", 0.0),
    # a value that cannot be told apart from the answer inline is not taken for it (an
    # outside red team's cases: each scored 0 by the rule's first version)
    (GSM8K, "#### 18", "18", "Trying other values: so $x = 20$ is wrong.", 1.0),
    (GSM8K, "#### 18", "18", "$6 + 3 = 9$ is wrong.", 1.0),
    (MATH, "So the angle is $\\boxed{30^\\circ}$.", "30^\\circ", "But 60 is wrong.", 1.0),
    (MATH, "So it is $\\boxed{\\sqrt{2}}$.", "\\sqrt{2}", "1.5 is wrong.", 1.0),
    (MATH, "So $\\boxed{\\text{II and III}}$.", "\\text{II and III}", "So I is wrong.", 1.0),
]  # fmt: skip


@pytest.mark.parametrize(("verifier", "answered", "gold", "words", "expected"), NAMED)
def test_the_answer_named_and_called_wrong_last_answers_nothing(
    verifier: object, answered: str, gold: str, words: str, expected: float
) -> None:
    assert score(verifier, f"{STEPS}{answered}", gold) == 1.0  # type: ignore[arg-type]
    assert score(verifier, f"{STEPS}{answered}\n\n{words}", gold) == expected  # type: ignore[arg-type]


def test_an_option_called_incorrect_is_the_answer_where_the_question_asks_for_one() -> None:
    """ "Which statement is incorrect?" ... "Answer: C. Option C is incorrect." restates
    the answer (Context.asks_for_wrong, read from the prompt); elsewhere it takes it back."""
    response = "Statement C contradicts the passage.\n\nAnswer: C\n\nOption C is incorrect."
    for prompt, expected in [
        ("Which of the following statements is incorrect?\nA) ...\nB) ...\nC) ...", "C"),
        ("All of the following are mammals EXCEPT:\nA) ...", "C"),
        ("Which of these is NOT a prime number?", "C"),
        ("Which of the following statements is true?\nA) ...", None),
    ]:
        context = Context.of(prompt, {})
        assert CHOICE.extract(response, context).answer == expected, prompt
