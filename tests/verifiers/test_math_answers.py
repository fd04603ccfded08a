"""guards: math.py's reading of a final answer, scored as a careful grader would.

Each row is ``(gold, response, expected, reason)``; ``expected`` is what a careful human
grader gives, never more generous than math-verify reading the same answer after
rewardkit's pre-normalisation (``fast_paths=False``). ``mv`` in a reason is raw
math-verify's ``parse``/``verify`` on the same answer. A false positive (a wrong answer
scored 1) is the worst bug, so every row expected 0 is also checked with
``fast_paths=False``: no reading may credit it (``_support.verifier_rows.check_math_row``).
Rows where a response offers two different values are in test_hedging.py.
"""

from __future__ import annotations

import pytest

from _support.verifier_rows import OFF, V, box, check_both_phases, check_math_row, table_params
from rewardkit import RewardLoop, Status
from rewardkit.errors import InvalidSampleError

# what the answer is: boxes in boxes, a box of one token, a wrapped number alone
BOXES: list[tuple[str, str, float, str]] = [
    # boxes inside boxes: the outer box is the answer
    ("4", "\\boxed{3 \\text{ or } \\boxed{4}}", 0.0, "two values, the 4 boxed again"),
    ("3", "\\boxed{\\boxed{3} \\text{ or } 4}", 0.0, "two values, the 3 boxed again"),
    ("4", "\\boxed{3\\boxed{4}}", 0.0, "a 3 beside a boxed 4"),
    ("7", "\\boxed{\\boxed{7}}", 1.0, "a box around a box is the box"),
    ("7", "\\boxed{\\boxed{\\boxed{7}}}", 1.0, "three deep is still the box"),
    (
        "7",
        "Step: \\boxed{2}\n\nSo $\\boxed{\\boxed{7}}$.",
        1.0,
        "an earlier paragraph's box is a step",
    ),
    # \boxed with a one-token argument (mv in math mode: 1)
    ("4", "\\boxed4", 1.0, "TeX boxes the one token 4"),
    ("4", "The answer is $\\boxed4$.", 1.0, "in math mode (mv: 1)"),
    ("4", "So the answer is \\boxed4.", 1.0, "a full stop ends the sentence, not a decimal"),
    ("5", "\\boxed4", 0.0, "a boxed 4 is no 5"),
    ("4", "\\boxed4.5", 0.0, "a decimal after one token is left alone"),
    ("4", "$\\boxed4x$", 0.0, "TeX: a boxed 4 times x; mv reads 4x"),
    ("4", "\\boxed{3}\n\nSo $\\boxed4$.", 1.0, "an earlier paragraph's box is a step"),
    ("4", "So $\\boxed{3}$ or $\\boxed4$.", 0.0, "two boxes offered: a hedge"),
    # a wrapped number as the whole response (mv finds nothing outside $)
    ("4", "\\text{4}", 1.0, "a number in \\text and nothing else (mv: 0, no math mode)"),
    ("4", "\\textbf{4}.", 1.0, "in bold, a full stop after it"),
    ("4", "$\\text{4}$", 1.0, "in math mode (mv: 1)"),
    ("5", "\\text{4}", 0.0, "a wrapped 4 is no 5"),
    ("4", "\\text{4 or 5}", 0.0, "words in the wrapper: math-verify's passage"),
    ("4", "Maybe 5.\n\\text{4}", 0.0, "prose before it: math-verify's passage"),
    # trailing blanks
    ("4", "The answer is 4" + " " * 1_000_000, 1.0, "a megabyte of spaces after the answer"),
]

# how a written value reads: TeX spacing and padding, number words, mixed numbers,
# percents, repeating decimals, Unicode digits, and attack shapes on each
NUMBERS: list[tuple[str, str, float, str]] = [
    # SI thin-space thousands groups (mv read "1\,000" as 1*0)
    ("1000", "\\boxed{1\\,000}", 1.0, "TeX shows 1 000, a thousand (mv: 0, reads 1*0)"),
    ("12345678", "$\\boxed{12\\,345\\,678}$", 1.0, "several thin-space groups"),
    ("1234.5", "\\boxed{1\\,234.5}", 1.0, "a group, then a decimal part (mv: 1*234.5)"),
    ("1", "\\boxed{1\\,000}", 0.0, "a thousand is no 1"),
    ("0", "\\boxed{1\\,000}", 0.0, "nor 0, as mv's product read it"),
    ("34", "\\boxed{3\\,4}", 0.0, "no three-digit group: 3 and 4, left to mv"),
    ("12", "\\boxed{3\\,4}", 0.0, "nor a product"),
    ("10000", "\\boxed{1\\,0000}", 0.0, "a four-digit group is no thousands group"),
    ("1.5", "\\boxed{1.5\\,000}", 0.0, "digits after a decimal point are not regrouped"),
    # a \phantom as blank padding (mv read \phantom{3}4 as 7)
    ("4", "\\boxed{\\phantom{3}4}", 1.0, "padding before the value (mv: 7)"),
    ("4", "\\boxed{4\\phantom{3}}", 1.0, "padding after the value (mv: 7)"),
    ("4", "\\boxed{\\hphantom{-}4}", 1.0, "an \\hphantom of a sign: nothing shows"),
    ("34", "\\boxed{\\phantom{3}4}", 0.0, "the phantom 3 is not shown"),
    ("7", "\\boxed{\\phantom{3}4}", 0.0, "nor added"),
    ("234", "\\boxed{2\\phantom{3}4}", 0.0, "a gap between 2 and 4 is left to mv"),
    ("8", "\\boxed{2\\phantom{3}4}", 0.0, "TeX shows '2 4': no product"),
    # integers apart by a TeX space: TeX shows two numbers, never one value (mv: a sum or a product)
    ("5", "\\boxed{2\\,3}", 0.0, "TeX shows '2 3' (mv: 5, a sum)"),
    ("5", "\\boxed{2~3}", 0.0, "a tie between two numbers"),
    ("1", "\\boxed{0\\,001}", 0.0, "no thousands group (mv: 1)"),
    ("23", "\\boxed{2\\quad 3}", 0.0, "a quad between two numbers"),
    ("2\\,3", "\\boxed{2\\,3}", 1.0, "the gold typeset the same way: mv's call"),
    ("\\frac{11}{4}", "\\boxed{2\\,\\frac{3}{4}}", 1.0, "a mixed number is left to mv"),
    ("x=2, y=3", "\\boxed{x = 2,\\ y = 3}", 1.0, "a comma and a space: a list"),
    # percents on both sides compare as their numbers (decided inline, no worker)
    ("55\\%", box("45\\%"), 0.0, "two different percents"),
    ("55\\%", box("55\\%"), 1.0, "the same percent"),
    ("5\\%", box("0.05\\%"), 0.0, "5% is not 0.05%"),
    ("0.05", box("5\\%"), 1.0, "one side only has the percent: math-verify decides (mv: 1)"),
    # number words: a strict grammar, never a sum of words (mv: 0)
    ("5", box("-five"), 0.0, "a sign before a number word: -5, not 5"),
    ("5", box("- five"), 0.0, "a sign, spaced, before a number word"),
    ("5", box("\\text{-five}"), 0.0, "a sign inside \\text before a number word"),
    ("5", box("\\text{--five}"), 0.0, "two hyphens are no number"),
    ("5", box("\\text{five-}"), 0.0, "a trailing hyphen is no number"),
    ("3", box("\\text{two one}"), 0.0, "two number words are two numbers (or 21), never 3"),
    ("3", box("two one"), 0.0, "two bare number words are never their sum"),
    ("3", box("oneandtwo"), 0.0, "'one and two' glued: a list, never 3"),
    ("12", box("\\text{ten two}"), 0.0, "'ten two' is not twelve"),
    ("10", box("\\text{five five}"), 0.0, "'five five' is not ten"),
    ("20300", box("\\text{two hundred three hundred}"), 0.0, "not one number"),
    ("2000", box("\\text{thousand thousand}"), 0.0, "a repeated scale is not a sum"),
    ("21", box("\\text{twenty-one}"), 1.0, "a hyphenated number word still reads (mv: 0)"),
    ("12", box("\\text{twelve}"), 1.0, "a number word is its number (mv: 0, a symbol)"),
    ("105", box("\\text{one hundred five}"), 1.0, "hundreds then units (mv: 0)"),
    ("2005", box("\\text{two thousand five}"), 1.0, "scales in order (mv: 0)"),
    # mixed numbers and exponents (mv: 0)
    ("32", box("4^2\\frac{1}{2}"), 0.0, "4^2 times 1/2 is 8; never 4^{5/2} = 32"),
    ("8", box("4^2\\frac{1}{2}"), 1.0, "an unbraced exponent is one digit (mv: 1)"),
    ("32", box("4^2\\frac12"), 0.0, "the same with \\frac12"),
    ("\\frac{9x}{4}", box("2\\frac{1}{4}x"), 0.0, "a mixed number among factors is ambiguous"),
    ("\\frac{x}{2}", box("2\\frac{1}{4}x"), 1.0, "read as math-verify reads it"),
    ("\\frac{9}{4}", box("2\\frac{1}{4}"), 1.0, "a lone mixed number is still 9/4 (mv: 1)"),
    ("-\\frac{9}{4}", box("-2\\frac{1}{4}"), 1.0, "a negative mixed number (mv: 1)"),
    # rows that held already: attack shapes a policy might try (all mv: 0)
    ("2^{64}", box("18446744073709551617"), 0.0, "big integers compare exactly"),
    ("\\frac{1}{3}", box("0.333"), 0.0, "a short decimal is not 1/3"),
    ("\\frac{1}{3}", box("0.3333"), 0.0, "nor four digits"),
    ("1000", box("1, 000"), 0.0, "a comma and a space separate two numbers"),
    ("(1,2]", box("[1,2)"), 0.0, "swapped interval brackets"),
    ("x=1, y=2", box("x=2, y=1"), 0.0, "named values keep their names"),
    ("3+4i", box("4+3i"), 0.0, "complex parts swapped"),
    ("1011_2", box("1101_2"), 0.0, "another base-2 number"),
    ("\\pm 2", box("2"), 0.0, "one of the two signs"),
    ("(1,2), (3,4)", box("(1,2), (4,3)"), 0.0, "ordered pairs inside a set"),
    ("10^{-6}", box("0"), 0.0, "a tiny number is not zero"),
    ("12", box("12 - 1\\text{ dollars}"), 0.0, "a unit after an expression is not dropped"),
    ("3", box("3\\text{ or }4"), 0.0, "two values in one box"),
    ("3", "\\boxed{3} $\\boxed{}$ \\boxed{4}", 0.0, "a blank box between two answers: hedging"),
    ("3", "\\boxed{3}\\text{ (or }\\boxed{4}\\text{)}", 0.0, "a second box in a parenthesis"),
    # exact values rewardkit credits and math-verify does not (correct, mv: 0)
    ("\\frac{1}{3}", box("0.\\overline{3}"), 1.0, "a repeating decimal is exactly 1/3"),
    ("1", box("0.\\overline{9}"), 1.0, "0.999... is exactly 1"),
    ("\\frac{11}{9}", box("1\\overline{2}"), 0.0, "a bar without a point: a numeral"),
    ("\\frac{1}{3}", box("0\\overline{3}"), 0.0, "no decimal point, no repeating decimal"),
    ("\\frac{1}{2}", box("\\frac{2}{1}\\frac{1}{4}"), 1.0, "a product of fractions (mv: 9/4)"),
    # Unicode digits: exactly the number (mv: 0, it reads no number)
    ("12", box("\uff11\uff12"), 1.0, "fullwidth digits are 12"),
    ("12", box("\u0661\u0662"), 1.0, "Arabic-Indic digits are 12"),
    ("13", box("\uff11\uff12"), 0.0, "fullwidth 12 is not 13"),
]

# Option labels, and multi-select letters: a gold like ``\\text{A,B,C,D}`` (MATH's "enter
# the letters of the true statements, separated by commas") against an answer listing
# letters. math-verify scores every such answer 0; the inline path compares the letters
# as a set (the question asks which statements are true, so the order is not part of the
# answer). A subset, a superset, other letters, letters not separated by commas or with
# words added stay 0. Real outputs: tests/data/real_outputs, math_qwen25math15b_ei rows
# 987, 988, 989, 991, 1974, 1982 (hand verdict 1).
LABELS: list[tuple[str, str, float, str]] = [
    # option labels (mv: 0)
    ("A", box("(A) \\text{ or } (B)"), 0.0, "two options offered: a hedge"),
    ("A", box("(A)(B)"), 0.0, "two option labels glued"),
    ("A", box("(A), (B)"), 0.0, "two options listed"),
    ("A", box("\\text{(A) or (B)}"), 0.0, "two options inside one \\text"),
    ("A", box("(A) \\text{ and } (B)"), 0.0, "two options joined by 'and'"),
    ("A", box("\\text{(A) } 5 \\text{ or (B) } 6"), 0.0, "two labelled values offered"),
    ("(C) 12", box("(D) 12"), 0.0, "another option with the same value"),
    ("\\text{(C) } 12", box("\\text{(D) } 12"), 0.0, "another option, labels in \\text"),
    ("C", box("(C) 12"), 1.0, "the right label with its value (mv: 0)"),
    ("(C) 12", box("12"), 1.0, "the value of the right option (mv: 0)"),
    ("(C) 12", box("(C)"), 1.0, "the right option without its value (mv: 0)"),
    ("(C) 12", box("(D)"), 0.0, "another option without its value"),
    ("C", box("\\text{(c)}"), 1.0, "a lower-case label (mv: 1)"),
    ("C", box("\\{C\\}"), 1.0, "a label in braces (mv: 1)"),
    ("C", box("\\{D\\}"), 0.0, "another label in braces"),
    # multi-select letters: see the note above
    (
        "\\text{A,B,C,D}",
        "the answer is A, B, C, D</think> <answer>A, B, C, D </answer>",
        1.0,
        "real output: letters and commas",
    ),
    (
        "\\text{A,B,C,D}",
        "so all four hold. </think> <answer> $A$, $B$, $C$, $D$ </answer>",
        1.0,
        "real output: each letter in math mode",
    ),
    (
        "\\text{A,B,C,D}",
        "the true statements are $A$, $B$, $C$, and $D$. </think> <answer> "
        "\\boxed{A, B, C, D} </answer>",
        1.0,
        "real output: boxed with spaces",
    ),
    (
        "\\text{A,B,C,D}",
        "so all the statements are true.</think> <answer> $\\boxed{A,B,C,D}$ </answer>",
        1.0,
        "real output: the gold's own spelling",
    ),
    ("\\text{A,B,C,D}", box("A, B, C, and D"), 1.0, "an 'and' before the last letter"),
    ("\\text{A,B,C,D}", box("(A), (B), (C), (D)"), 1.0, "labels in parentheses"),
    ("\\text{A,B,C,D}", box("\\text{A, B, C, D}"), 1.0, "in text"),
    ("\\text{A,B,C,D}", box("D, C, B, A"), 1.0, "another order: the same set of true statements"),
    ("\\text{A,C}", box("C, A"), 1.0, "another order, two letters"),
    ("A, C", box("A, C"), 1.0, "a gold without \\text"),
    ("\\text{A,C}", box("\\{A, C\\}"), 1.0, "a set of letters"),
    ("\\text{A,C}", box("A; C"), 1.0, "semicolons"),
    ("\\text{A,C}", box("A or C"), 0.0, "letters offered as alternatives: a hedge"),
    ("\\text{A,C}", box("A \\text{ or } C"), 0.0, "the same in text"),
    ("\\text{A,C}", box("A, C, or D"), 0.0, "a hedge on a third letter"),
    ("\\text{A,B,C,D}", box("A, B, C"), 0.0, "a subset"),
    ("\\text{A,B,C,D}", box("A, B, C, D, E"), 0.0, "a superset"),
    ("\\text{A,B,C,D}", box("A, B, C, E"), 0.0, "another letter"),
    ("\\text{A,B,C,D}", box("A"), 0.0, "one letter"),
    ("\\text{A,C}", box("(A)"), 0.0, "one label"),
    ("\\text{A,B,C,D}", box("A, A, B, C, D"), 0.0, "a letter repeated: left to math-verify (0)"),
    (
        "\\text{A,B,C,D}",
        "</think> <answer> A B C D </answer>",
        0.0,
        "real output (row 984, source label 0): no commas, as math-verify reads it",
    ),
    ("\\text{A,B,C,D}", box("ABCD"), 0.0, "glued letters: a product to math-verify"),
    ("\\text{A,B,C,D}", "</think> <answer>ABC </answer>", 0.0, "real output (row 986)"),
    ("\\text{A,B,C,D}", box("A, B, C, D\\text{ or E}"), 0.0, "a hedge after the letters"),
    ("\\text{A,B,C,D}", box("A, B, C, D, \\text{or } E"), 0.0, "a hedge as a last item"),
    ("\\text{A,B,C,D}", box("A, B, C, D?"), 0.0, "a question mark: no list of letters"),
    ("\\text{A,B,C,D}", box("a, b, c, d"), 0.0, "lower-case letters are not the options"),
    ("\\text{A,B,C,D}", box("4, 8, 16, 32"), 0.0, "real output (row 1978): the values"),
]

# words around a value that change it (an operator, a bound, a negation), against units,
# which a value may carry; math-verify drops everything from the first ``\\text{`` of an
# answer ending in ``}`` as a unit
QUALIFIERS: list[tuple[str, str, float, str]] = [
    # a box: text after the value that math-verify drops as a unit (mv: 1)
    ("5", box("5\\text{ squared}"), 0.0, "an operator word: 25"),
    ("5", box("5\\text{ cubed}"), 0.0, "an operator word: 125"),
    ("5", box("5 \\text{ minus one}"), 0.0, "an operator and a number word: 4"),
    ("5", box("5\\text{ times two}"), 0.0, "'times' with a factor: 10"),
    ("5", box("5\\text{ over two}"), 0.0, "'over': a fraction"),
    ("5", box("5\\text{ factorial}"), 0.0, "120"),
    ("5", box("5\\text{ is wrong}"), 0.0, "the answer says it is wrong"),
    ("5", box("5\\text{ is not the answer}"), 0.0, "a negation"),
    ("5", box("5\\text{ or more}"), 0.0, "a bound, not a value"),
    ("5", box("5 \\text{ at most}"), 0.0, "a bound"),
    ("5", box("5\\text{ and up}"), 0.0, "a bound"),
    ("5", box("5\\text{, or 6}"), 0.0, "two values offered"),
    ("5", box("5\\text{ OR 6}"), 0.0, "two values offered"),
    ("5", box("5\\text{ x 2}"), 0.0, "math inside the text: 10"),
    # words in a wrapper offering another value: math-verify drops the text as a unit
    ("5", box("5\\text{ or 6}"), 0.0, "two values offered: mv reads the 5"),
    ("5", box("5\\mbox{ or 6}"), 0.0, "the same in \\mbox"),
    ("5", box("5\\textbf{ or 6}"), 0.0, "the same in \\textbf"),
    ("5", box("5\\text{ and 6}"), 0.0, "two values listed"),
    ("5", box("5\\text{ + 1}"), 0.0, "a sum: 6, mv reads 5"),
    ("5", box("5\\text{,000}"), 0.0, "5,000 split by \\text: mv reads 5"),
    ("5", box("5\\text{ 000}"), 0.0, "5 000 split by \\text: mv reads 5"),
    # units still dropped: a value with its unit is the value
    ("5", box("5\\text{ cm}^2"), 1.0, "a unit with a power"),
    # a published Qwen2.5-Math-7B Minerva answer: powers inside the unit, not after it
    ("15000", box("15000 \\text{ kcal m}^{-2} \\text{ yr}^{-1}"), 1.0, "a unit with powers inside"),
    ("5", box("5\\text{ cm}^{2}"), 1.0, "a unit with a braced power"),
    ("5", box("5\\mathrm{m}^{3}"), 1.0, "a unit in \\mathrm with a braced power"),
    ("5", box("5 \\text{ (mod 7)}"), 1.0, "a modulus names no other value"),
    ("5", box("5\\text{ more apples}"), 1.0, "'how many more': a unit phrase"),
    ("5", box("5\\text{ times}"), 1.0, "'how many times'"),
    ("5", box("5\\text{ cm squared}"), 1.0, "'squared' after a unit is the unit's power"),
    ("5", box("5\\text{ percent}"), 1.0, "as 5\\%: math-verify credits 5 (mv: 1)"),
    ("5", box("5\\text{ thousand}"), 1.0, "'how many thousand': a scale word is a unit (mv: 1)"),
    ("5", box("5\\text{ halves}"), 1.0, "'how many halves': a unit (mv: 1)"),
    ("5", box("5\\text{ students, so each likes at least one}"), 1.0, "later words describe"),
    ("-5, 4", box("x=-5\\text{ or }x=4"), 1.0, "\\text{ or } between values lists them"),
    # an answer line: the words after the number (mv: 1)
    ("5", "Answer: 5 squared", 0.0, "an operator word"),
    ("5", "Answer: 5 cubed", 0.0, "an operator word"),
    ("5", "The answer is 5 or more.", 0.0, "a bound"),
    ("5", "Answer: 5 at most", 0.0, "a bound"),
    ("5", "Answer: 5 or so", 0.0, "a hedge"),
    ("5", "Answer: 5 and a half", 0.0, "5.5"),
    ("5", box("5\\text{ and a half}"), 0.0, "5.5 in a box"),
    ("5", "The answer is 5 is wrong.", 0.0, "a negation"),
    ("5", "Answer: $5$ squared", 0.0, "words after a math span"),
    ("5", "Answer: $5$ or more", 0.0, "a bound after a math span"),
    ("5", "Answer: $5$ is wrong", 0.0, "a negation after a math span"),
    ("5", "Answer: at least 5", 0.0, "a bound before the number (mv's extraction)"),
    ("5", "Answer: between 5 and 6", 0.0, "a range (mv's extraction reads 5)"),
    ("5", "Answer: 5 apples or 6 apples", 0.0, "two values with units (mv)"),
    ("5", "Answer: 5 apples, maybe 6", 0.0, "a hedge after a unit (mv)"),
    ("5", "Answer: 5 apples", 1.0, "a unit word is dropped"),
    ("5", "Answer: 5 dozen", 1.0, "'how many dozen': a unit (mv: 1)"),
    ("5", "Answer: 5 more apples", 1.0, "a unit phrase"),
    ("5", "Answer: 5 percent", 1.0, "a percent word, as 5\\%"),
    ("5", "Answer: 5, not 6", 1.0, "a value ruled out after the answer"),
    ("2009", "The answer is 2009, but the image shows more.", 1.0, "prose after a comma"),
    # a relation or negation with no left side: "not 12" (mv: 1)
    ("12", box("\\neq 12"), 0.0, "'not equal to 12': mv reads the 12"),
    ("12", box("\\ne 12"), 0.0, "\\ne: mv reads the 12"),
    ("12", box("\\neg 12"), 0.0, "'not 12': mv reads the 12"),
    ("12", box("< 12"), 0.0, "'less than 12': mv reads the 12"),
    ("12", box("\\le 12"), 0.0, "'at most 12': mv reads the 12"),
    ("12", box("= 12"), 1.0, "an equals sign is harmless (mv: 1)"),
    ("\\ge 12", box("\\geq 12"), 1.0, "a relation in the gold too: compared as usual"),
    # a value ruled out or bounded
    ("3", "The answer is not $3$ but $4$.", 0.0, "ruled out"),
    ("3", "The answer is definitely not $3$.", 0.0, "ruled out"),
    ("3", "The answer isn't $3$.", 0.0, "ruled out"),
    ("3", "The answer cannot be $3$.", 0.0, "ruled out"),
    ("3", "The answer is anything but $3$.", 0.0, "ruled out"),
    ("3", "The answer is less than $3$.", 0.0, "a bound"),
    ("3", "The final answer is: not $\\boxed{3}$", 0.0, "a negated box"),
    ("3", "<answer>not $3$ but $4$</answer>", 0.0, "a negated tag"),
    (
        "9",
        "Jane must score at least $\\boxed{9}$ points.",
        1.0,
        "a bound before a box answers 'the minimum' (tora corpus, 366)",
    ),
    ("3", "The answer is not obvious, but $x = 3$.", 1.0, "'not' before no value"),
    ("4", "The answer is $4$, not $3$.", 1.0, "the other value ruled out"),
    # passages (math-verify's reading) ending on a range, a qualified or a bounded value
    ("20", "So it is 18 to 20.", 0.0, "a range: math-verify reads the 20"),
    ("20", "So it is between 18 and 20.", 0.0, "a range"),
    ("18", "So it is 18~20.", 0.0, "a range"),
    ("20", "<answer>It is 18 to 20</answer>", 0.0, "a range in a tag"),
    ("18", "So it is about 18 or so.", 0.0, "'or so'"),
    ("18", "The answer is about 18 or so", 0.0, "an answer line that is prose"),
    ("18", "The answer is 18 (or slightly more)", 0.0, "'(or slightly more)'"),
    ("18", "So it is 18 or more.", 0.0, "'or more'"),
    ("18", "So it is at least 18.", 0.0, "a bound"),
    ("20", "So it is 18, not 20.", 0.0, "the last value is ruled out"),
    ("18", "The answer is 18 hours 30 minutes", 1.0, "left: a known gap, see the report"),
    # not hedging
    ("18", "The price rose by 2 to 18.", 1.0, "where a change ends is no range"),
    ("18", "The temperature went from 12 to 18.", 1.0, "'from 12 to 18' ends on 18"),
    ("18", "So the answer is 18 and not 20.", 1.0, "math-verify reads the answer's 18"),
    ("18", "So she has 18, which is the most.", 1.0, "words after a comma describe"),
    ("2", "<answer>2 primes lie between 20 and 30</answer>", 1.0, "a range after the value"),
]

_DERIVATION = (  # ei:ei_G8_eibatch128_sftepochs_1/iter_1:680, the end of the real response
    "<answer>\n$15\\% \\times N=45\\% \\times 2003$\n$0 . 15N=0.45 \\times 2003$\n"
    "$N=2003\\times \\frac{0.45}{0.15}$\n$N=2003\\times 3$\n$N=6009$\n</answer>"
)
# real false negatives (math-verify scores the two real rows 0 too), and their neighbours
# that must stay 0
REAL: list[tuple[str, str, float, str]] = [
    (
        "15\\pi",
        "the area of the gray region is 15$\\pi$ square units.</think> "
        "<answer>Answer: 15$\\pi$ square units</answer>",
        1.0,
        "real row iter_1:489: a number glued to a span, then units",
    ),
    ("6009", _DERIVATION, 1.0, "real row iter_1:680: a derivation ending in N = 6009"),
    # never a false credit
    ("4", "<answer>\n$x = 3$\n$x = 4$\n</answer>", 0.0, "two values set, one a line: a list"),
    ("6", "<answer>\n$N = 5$\n$N = 2 \\times 3$\n$N = 6$\n</answer>", 0.0, "N set twice"),
    ("4", "<answer>\n$2x = 8$\n$x = 4$\n</answer>", 1.0, "a derivation's result"),
    ("16\\pi", "The answer is 15$\\pi$ or 16$\\pi$", 0.0, "two glued values"),
    ("15\\pi", "The answer is 15$\\pi$ square units or more", 0.0, "qualified: refused"),
]

TABLES = {
    "boxes": BOXES,
    "numbers": NUMBERS,
    "labels": LABELS,
    "qualifiers": QUALIFIERS,
    "real": REAL,
}


@pytest.mark.parametrize(("gold", "response", "expected", "reason"), table_params(TABLES))
def test_math_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_math_row(gold, response, expected, reason)


# math-verify's own false positives that the fast path refuses (mv: 1). math-verify
# rounds a decimal and an exact value to 6 places before comparing, so any decimal below
# 5e-7 "equals" any tiny exact value. With fast_paths=False math-verify's verdict stands
# (the user asked for it), so these rows check the default verifier only.
ROUNDING: list[tuple[str, str, float, str]] = [
    ("10^{-7}", box("0.0"), 0.0, "0.0 is zero, not 10^{-7}"),
    ("10^{-7}", box("0.0000002"), 0.0, "twice the value"),
    ("\\frac{1}{2^{30}}", box("0.000000001"), 0.0, "1e-9 is 7% off 2^{-30}"),
    ("\\frac{1}{3000000}", box("0.0000003"), 0.0, "one significant digit, 10% off"),
    ("\\frac{\\pi}{10^7}", box("0.0"), 0.0, "an expression with pi, against zero"),
    ("(10^{-7}, 1)", box("(0.0, 1)"), 0.0, "inside an interval"),
    ("10^{-7}, 1", box("0.0, 1"), 0.0, "inside a set"),
    # exact by default (reward.verifiers.math.decimals: exact): a rounding is no exact value
    ("\\frac{1}{3}", box("0.3333333"), 0.0, "a good rounding is still a rounding"),
    ("\\frac{1}{70000}", box("0.0000143"), 0.0, "three significant digits: inexact"),
    ("\\frac{1}{1024}", box("0.000977"), 0.0, "a tiny value rounded well: inexact"),
]


@pytest.mark.parametrize(
    ("gold", "response", "expected", "reason"), table_params({"rounding": ROUNDING})
)
def test_rounding_row(gold: str, response: str, expected: float, reason: str) -> None:
    check_both_phases(gold, response, expected, reason)


def test_letters_with_fast_paths_off_are_math_verifys() -> None:
    """``fast_paths=False`` asks for math-verify's verdict: it reads no list of letters."""
    response = "<answer>A, B, C, D</answer>"
    assert OFF.check(OFF.extract(response), "\\text{A,B,C,D}").score == 0.0


def test_a_qualified_answer_is_reported_with_its_words() -> None:
    """The row's ``pred`` shows what was read, so a 0 is explained, not silent."""
    assert V.extract("Answer: 5 squared").answer == "5\\text{ squared}"
    hedged = V.extract("<answer>5 (or possibly 6)</answer>")
    assert hedged.answer is None and hedged.extra["hedged"] is True


def test_a_qualified_passage_says_so() -> None:
    extracted = V.extract("So it is about 18 or so.")
    assert extracted.answer is None and extracted.extra["qualified"] is True


@pytest.mark.parametrize("gold", ["\\text{}", "$", "\\$", ".", "\\,", "\\text{ }", "~"])
def test_a_gold_blank_once_normalised_is_an_invalid_row(gold: str) -> None:
    """A gold that normalises to nothing cannot be matched: ``\\boxed{.}`` (also nothing)
    must not score 1 against ``\\text{}``."""
    with pytest.raises(InvalidSampleError, match="blank once normalised"):
        V.check(V.extract(box(".")), gold)


def test_a_blank_gold_is_an_invalid_row_through_the_loop() -> None:
    rows = [
        {"data_source": "lighteval/MATH", "response": box("."), "ground_truth": "\\text{}"},
        {"data_source": "lighteval/MATH", "response": box("1"), "ground_truth": "1"},
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        blank, fine = loop.score(rows)
    assert (blank.status, blank.score) == (Status.INVALID, None)
    assert "blank once normalised" in (blank.error or "")
    assert (fine.status, fine.score) == (Status.OK, 1.0)


def test_a_passage_and_a_box_with_the_same_text_are_not_one_check() -> None:
    """The loop's dedup key once ignored how an answer was found: a fallback passage
    (math-verify reads its last value: 3) and a box holding the same text (0) shared one
    check, so a row's score depended on which came first in the batch."""
    passage = "x is 4 but 3 is wrong"
    rows = [
        {"data_source": "lighteval/MATH", "response": passage, "ground_truth": "3"},
        {"data_source": "lighteval/MATH", "response": f"\\boxed{{{passage}}}", "ground_truth": "3"},
    ]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        first = [result.score for result in loop.score(rows)]
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        second = [result.score for result in loop.score(rows[::-1])][::-1]
    own = [V.check(V.extract(row["response"]), "3").score for row in rows]
    assert first == second == own


# A run of blanks reaches math-verify as one blank, but a blank line stays one: its
# "answer is" pattern reads across a line break, not a paragraph's end. Folded to one
# line break, "is: \n\n800 + 720 = 1520" read the sum's first term. (A real output of
# text-davinci-002 with the zero-shot chain-of-thought trigger, kojima-takeshi188/
# zero_shot_cot, log/gsm8k_zero_shot_cot.log, scored as MATH; an outside check.)
@pytest.mark.parametrize(
    ("gap", "gold", "score"),
    [
        (" \n\n", "1520", 1.0),
        (" \n\n", "800", 0.0),
        ("\n \n\n", "1520", 1.0),
        ("\r\n\r\n", "1520", 1.0),
    ],
)
def test_a_blank_line_stays_a_paragraph_end_to_math_verify(
    gap: str, gold: str, score: float
) -> None:
    response = (
        f"We add the two parts.\nTherefore, the answer (arabic numerals) is:{gap}800 + 720 = 1520"
    )
    extracted = V.extract(response)
    verdict = V.quick_check(extracted, gold) or V.check(extracted, gold)
    assert verdict.score == score
