"""guards: the tests' namespace of a Python code row: no solution dunder, the prompt's helpers."""

# What a code row's tests see (verifiers/_python_harness.py, verifiers/_code_prompt.py): the
# harness's own builtins and modules, never a dunder name from the solution, and the task
# prompt's own helper definitions, never the solution's redefinitions of them. The rows
# are facts of the public datasets (openai_humaneval HumanEval/2, /32, /38 with their
# prompt, canonical_solution, test and entry_point; sanitized MBPP tasks 2 and 82). Every
# hack defines a *wrong* function and scores 0; the canonical solutions score 1, also when
# they call a prompt helper without copying it.

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from _support.code_sandbox import embedded_code_verifier, score_response
from rewardkit import RewardLoop
from rewardkit.verifiers._code_prompt import Helper, prompt_helpers
from rewardkit.verifiers.code import CodeVerifier, parse_tests

# ---------------------------------------------------------------------- the rows

HUMANEVAL_2 = {
    "task_id": "HumanEval/2",
    "prompt": "\n\ndef truncate_number(number: float) -> float:\n"
    '    """ Given a positive floating point number, it can be decomposed into\n'
    "    and integer part (largest integer smaller than given number) and decimals\n"
    "    (leftover part always smaller than 1).\n\n"
    "    Return the decimal part of the number.\n"
    "    >>> truncate_number(3.5)\n"
    "    0.5\n"
    '    """\n',
    "canonical_solution": "    return number % 1.0\n",
    "test": "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\n"
    "def check(candidate):\n"
    "    assert candidate(3.5) == 0.5\n"
    "    assert abs(candidate(1.33) - 0.33) < 1e-6\n"
    "    assert abs(candidate(123.456) - 0.456) < 1e-6\n",
    "entry_point": "truncate_number",
}
HUMANEVAL_32 = {
    "task_id": "HumanEval/32",
    "prompt": "import math\n\n\n"
    "def poly(xs: list, x: float):\n"
    '    """\n'
    "    Evaluates polynomial with coefficients xs at point x.\n"
    "    return xs[0] + xs[1] * x + xs[1] * x^2 + .... xs[n] * x^n\n"
    '    """\n'
    "    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])\n\n\n"
    "def find_zero(xs: list):\n"
    '    """ xs are coefficients of a polynomial.\n'
    "    find_zero find x such that poly(x) = 0.\n"
    "    find_zero returns only only zero point, even if there are many.\n"
    "    Moreover, find_zero only takes list xs having even number of coefficients\n"
    "    and largest non zero coefficient as it guarantees\n"
    "    a solution.\n"
    "    >>> round(find_zero([1, 2]), 2) # f(x) = 1 + 2x\n"
    "    -0.5\n"
    "    >>> round(find_zero([-6, 11, -6, 1]), 2) # (x - 1) * (x - 2) * (x - 3) = "
    "-6 + 11x - 6x^2 + x^3\n"
    "    1.0\n"
    '    """\n',
    "canonical_solution": "    begin, end = -1., 1.\n"
    "    while poly(xs, begin) * poly(xs, end) > 0:\n"
    "        begin *= 2.0\n"
    "        end *= 2.0\n"
    "    while end - begin > 1e-10:\n"
    "        center = (begin + end) / 2.0\n"
    "        if poly(xs, center) * poly(xs, begin) > 0:\n"
    "            begin = center\n"
    "        else:\n"
    "            end = center\n"
    "    return begin\n",
    "test": "\n\nMETADATA = {}\n\n\n"
    "def check(candidate):\n"
    "    import math\n"
    "    import random\n"
    "    rng = random.Random(42)\n"
    "    import copy\n"
    "    for _ in range(100):\n"
    "        ncoeff = 2 * rng.randint(1, 4)\n"
    "        coeffs = []\n"
    "        for _ in range(ncoeff):\n"
    "            coeff = rng.randint(-10, 10)\n"
    "            if coeff == 0:\n"
    "                coeff = 1\n"
    "            coeffs.append(coeff)\n"
    "        solution = candidate(copy.deepcopy(coeffs))\n"
    "        assert math.fabs(poly(coeffs, solution)) < 1e-4\n\n",
    "entry_point": "find_zero",
}
HUMANEVAL_38 = {
    "task_id": "HumanEval/38",
    "prompt": "\n\ndef encode_cyclic(s: str):\n"
    '    """\n'
    "    returns encoded string by cycling groups of three characters.\n"
    '    """\n'
    "    # split string to groups. Each of length 3.\n"
    "    groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]\n"
    "    # cycle elements in each group. Unless group has fewer elements than 3.\n"
    "    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]\n"
    '    return "".join(groups)\n\n\n'
    "def decode_cyclic(s: str):\n"
    '    """\n'
    "    takes as input string encoded with encode_cyclic function. Returns decoded string.\n"
    '    """\n',
    "canonical_solution": "    return encode_cyclic(encode_cyclic(s))\n",
    "test": "\n\nMETADATA = {}\n\n\n"
    "def check(candidate):\n"
    "    from random import randint, choice\n"
    "    import string\n\n"
    "    letters = string.ascii_lowercase\n"
    "    for _ in range(100):\n"
    "        str = ''.join(choice(letters) for i in range(randint(10, 20)))\n"
    "        encoded_str = encode_cyclic(str)\n"
    "        assert candidate(encoded_str) == str\n\n",
    "entry_point": "decode_cyclic",
}
MBPP_2 = {  # sanitized MBPP: the tests compare through `set`
    "test_imports": [],
    "test_list": [
        "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
        "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
        "assert set(similar_elements((11, 12, 14, 13),(17, 15, 14, 13))) == set((13, 14))",
    ],
}
MBPP_2_SOLUTION = (
    "def similar_elements(test_tup1, test_tup2):\n"
    "  res = tuple(set(test_tup1) & set(test_tup2))\n"
    "  return (res) \n"
)
MBPP_82 = {  # sanitized MBPP: the tests compare through `math.isclose`
    "test_imports": ["import math"],
    "test_list": [
        "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
        "assert math.isclose(volume_sphere(25), 65449.84694978735, rel_tol=0.001)",
        "assert math.isclose(volume_sphere(20), 33510.32163829113, rel_tol=0.001)",
    ],
}
MBPP_82_NO_IMPORTS = {"test_list": MBPP_82["test_list"]}
MBPP_82_SOLUTION = (
    "import math\ndef volume_sphere(r):\n  volume=(4/3)*math.pi*r*r*r\n  return volume\n"
)


def canonical(row: dict) -> str:
    """The whole program a chat model writes: the prompt, completed."""
    return row["prompt"] + row["canonical_solution"]


def entry_only(row: dict) -> str:
    """Only the entry point, calling the prompt's helpers without copying them."""
    head = row["prompt"].rstrip("\n").rsplit("\ndef ", 1)[1]
    return "def " + head + "\n" + row["canonical_solution"]


def fenced(code: str) -> str:
    return f"Here is the solution.\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def verifier() -> Iterator[CodeVerifier]:
    yield from embedded_code_verifier()


def score(verifier: CodeVerifier, code: str, tests: dict) -> float:
    return score_response(verifier, fenced(code), tests)[0]


# ---------------------------------------------------------------------- rule 1: no dunder
# A wrong function for each row, which a fake builtin (`abs`, `set` or `math.isclose`
# answering the same on both sides) would turn into a pass.
WRONG = {
    "humaneval_2": ("def truncate_number(number):\n    return 0.5\n", HUMANEVAL_2),
    "mbpp_2": ("def similar_elements(a, b):\n    return a\n", MBPP_2),
    "mbpp_82": ("def volume_sphere(r):\n    return 0.0\n", MBPP_82),
    # as rows that drop test_imports carry it: `math` is whatever the namespace resolves
    "mbpp_82_no_imports": ("def volume_sphere(r):\n    return 0.0\n", MBPP_82_NO_IMPORTS),
}
_FAKES = (
    "_fake_math = type('math', (), {'isclose': staticmethod(lambda *a, **k: True),\n"
    "                              'fabs': staticmethod(lambda x: 0.0)})\n"
    "_fakes = {'abs': lambda x: 0, 'set': lambda *a: 0, 'sorted': lambda *a, **k: 0,\n"
    "          'math': _fake_math, '__import__': lambda *a, **k: _fake_math}\n"
)
# (name, code appended to the wrong function, how it tries to reach the tests)
BUILTINS_HACKS = [
    (
        "forged_reply_builtins_dict",
        "import json, sys\n" + _FAKES + "_host = sys._getframe(1).f_locals['self']\n"
        "_dumps = json.dumps\n"
        "def _forged(obj, *a, **k):\n"
        "    names = obj.get('v') if isinstance(obj, dict) else None\n"
        "    if isinstance(names, dict):\n"
        "        names['__builtins__'] = ['v', _host.handle(_fakes)]\n"
        "        names['__name__'] = ['v', '__main__']\n"
        "    return _dumps(obj, *a, **k)\n"
        "json.dumps = _forged\n",
        "the host's reply is the solution's to write: a __builtins__ entry added to it",
    ),
    (
        "str_subclass_key_in_globals",
        _FAKES + "class _Sly(str):\n"
        "    def startswith(self, *a):\n        return False\n"
        "_g = globals()\n"
        "del _g['__builtins__']\n"
        "_g[_Sly('__builtins__')] = _fakes\n"
        "del _g\n",
        "a key equal to '__builtins__' that the host's own dunder filter does not see",
    ),
    (
        "globals_builtins_entry",
        _FAKES + "globals()['__builtins__'] = _fakes\n",
        "builtins injection through globals()",
    ),
    (
        "builtins_dict_assignment",
        _FAKES + "__builtins__ = _fakes\n",
        "`__builtins__` assigned a dict",
    ),
    (
        "builtins_module_assignment",
        "import types\n" + _FAKES + "__builtins__ = types.ModuleType('builtins')\n"
        "__builtins__.__dict__.update(_fakes)\n",
        "`__builtins__` assigned a module",
    ),
    (
        "patch_the_builtins_module",
        "import builtins\n" + _FAKES + "for _k, _v in _fakes.items():\n"
        "    setattr(builtins, _k, _v)\n",
        "abs, set, sorted patched where every namespace looks them up",
    ),
    (
        "replace_sys_modules_builtins",
        "import sys, types\n" + _FAKES + "_b = types.ModuleType('builtins')\n"
        "_b.__dict__.update(_fakes)\nsys.modules['builtins'] = _b\n",
        "a fake module under sys.modules['builtins']",
    ),
    (
        "shadow_builtins_by_name",
        _FAKES + "abs, set, sorted = _fakes['abs'], _fakes['set'], _fakes['sorted']\n",
        "module-level names that shadow the builtins",
    ),
    (
        "monkeypatch_math_isclose",
        "import math\nmath.isclose = lambda *a, **k: True\nmath.fabs = lambda x: 0.0\n",
        "the test's math module patched in the solution's process",
    ),
    (
        "class_named_math",
        "class math:\n    isclose = staticmethod(lambda *a, **k: True)\n",
        "a class posing as the math module the MBPP tests use",
    ),
]


@pytest.mark.parametrize("row", sorted(WRONG))
@pytest.mark.parametrize(
    ("name", "hack", "why"), BUILTINS_HACKS, ids=[h[0] for h in BUILTINS_HACKS]
)
def test_a_builtins_hack_scores_zero(
    verifier: CodeVerifier, row: str, name: str, hack: str, why: str
) -> None:
    wrong, tests = WRONG[row]
    assert score(verifier, wrong + hack, tests) == 0.0, why


ALWAYS_EQUAL = (
    "class _Eq:\n"
    "    def __eq__(self, other): return True\n"
    "    def __ne__(self, other): return False\n"
    "    def __hash__(self): return 0\n"
    "    def __sub__(self, other): return 0.0\n"
    "    def __abs__(self): return 0.0\n"
    "    def __iter__(self): return iter([_Eq(), _Eq()])\n"
    "    def __float__(self): return 0.0\n"
)


@pytest.mark.parametrize(
    ("code", "tests"),
    [
        (ALWAYS_EQUAL + "def truncate_number(number):\n    return _Eq()\n", HUMANEVAL_2),
        (ALWAYS_EQUAL + "def similar_elements(a, b):\n    return _Eq()\n", MBPP_2),
        (ALWAYS_EQUAL + "def volume_sphere(r):\n    return _Eq()\n", MBPP_82),
    ],
    ids=["humaneval_2", "mbpp_2", "mbpp_82"],
)
def test_an_always_equal_return_scores_zero(verifier: CodeVerifier, code: str, tests: dict) -> None:
    assert score(verifier, code, tests) == 0.0


@pytest.mark.parametrize(
    ("code", "tests"),
    [
        (canonical(HUMANEVAL_2), HUMANEVAL_2),
        (MBPP_2_SOLUTION, MBPP_2),
        (MBPP_82_SOLUTION, MBPP_82),
        (MBPP_82_SOLUTION, MBPP_82_NO_IMPORTS),
        # A solution may use and even shadow builtins for itself: its own calls see them.
        ("abs = lambda x: -x if x < 0 else x\n" + canonical(HUMANEVAL_2), HUMANEVAL_2),
    ],
    ids=["humaneval_2", "mbpp_2", "mbpp_82", "mbpp_82_no_imports", "humaneval_2_own_abs"],
)
def test_a_correct_solution_scores_one(verifier: CodeVerifier, code: str, tests: dict) -> None:
    assert score(verifier, code, tests) == 1.0


# ---------------------------------------------------------------------- rule 2: helpers
# (name, code, row): each redefines a helper the tests call so that a wrong entry point
# passes when the tests call the solution's helper.
HELPER_HACKS = [
    (
        "identity_encode_and_decode",
        "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n",
        HUMANEVAL_38,
    ),
    (
        "helper_assigned_a_builtin",
        "encode_cyclic = str\ndecode_cyclic = str\n",
        HUMANEVAL_38,
    ),
    (
        "helper_set_through_globals",
        "globals()['encode_cyclic'] = lambda s: s\n\ndef decode_cyclic(s):\n    return s\n",
        HUMANEVAL_38,
    ),
    (
        "helper_as_a_class",
        "class encode_cyclic(str):\n    pass\n\ndef decode_cyclic(s):\n    return str(s)\n",
        HUMANEVAL_38,
    ),
    (
        "poly_always_zero",
        "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 0.0\n",
        HUMANEVAL_32,
    ),
    (
        "poly_as_a_lambda_and_a_wrong_root",
        "poly = lambda xs, x: 0\n\ndef find_zero(xs):\n    return 1.0\n",
        HUMANEVAL_32,
    ),
    (
        "monkeypatch_math_fabs",
        "import math\nmath.fabs = lambda x: 0.0\n\ndef find_zero(xs):\n    return 0.0\n",
        HUMANEVAL_32,
    ),
    (
        "forged_reply_helper",
        "import json, sys\n_host = sys._getframe(1).f_locals['self']\n"
        "_dumps = json.dumps\n"
        "def _forged(obj, *a, **k):\n"
        "    names = obj.get('v') if isinstance(obj, dict) else None\n"
        "    if isinstance(names, dict):\n"
        "        names['poly'] = ['v', _host.handle(lambda xs, x: 0.0)]\n"
        "        names['__builtins__'] = ['v', _host.handle({'abs': lambda x: 0})]\n"
        "    return _dumps(obj, *a, **k)\n"
        "json.dumps = _forged\n\ndef find_zero(xs):\n    return 0.0\n",
        HUMANEVAL_32,
    ),
]


@pytest.mark.parametrize(("name", "code", "row"), HELPER_HACKS, ids=[h[0] for h in HELPER_HACKS])
def test_a_helper_redefinition_scores_zero(
    verifier: CodeVerifier, name: str, code: str, row: dict
) -> None:
    assert score(verifier, code, row) == 0.0


@pytest.mark.parametrize("row", [HUMANEVAL_32, HUMANEVAL_38], ids=["humaneval_32", "humaneval_38"])
@pytest.mark.parametrize("write", [canonical, entry_only], ids=["whole_program", "entry_only"])
def test_a_canonical_solution_scores_one(
    verifier: CodeVerifier, row: dict, write: Callable[[dict], str]
) -> None:
    assert score(verifier, write(row), row) == 1.0


def test_a_solution_may_keep_a_helper_of_its_own_under_the_same_name(
    verifier: CodeVerifier,
) -> None:
    """Its decode calls its own encode_cyclic; the tests call the prompt's."""
    code = (
        "def encode_cyclic(s):\n    return s[::-1]\n\n"
        "def decode_cyclic(s):\n    groups = [s[i:i + 3] for i in range(0, len(s), 3)]\n"
        "    return ''.join(g[-1] + g[:-1] if len(g) == 3 else g for g in groups)\n"
    )
    assert score(verifier, code, HUMANEVAL_38) == 1.0


# The same rows, the prompt carried by the row (a chat message), not by the ground truth.
def chat_prompt(row: dict) -> str:
    return f"Complete the following function.\n```python\n{row['prompt']}```\nThink first."


def without_prompt(row: dict) -> dict:
    return {k: row[k] for k in ("test", "entry_point")}


@pytest.mark.parametrize(
    ("code", "expected"),
    [(HELPER_HACKS[0][1], 0.0), (entry_only(HUMANEVAL_38), 1.0), (canonical(HUMANEVAL_38), 1.0)],
    ids=["identity_hack", "entry_only", "whole_program"],
)
def test_the_row_prompt_gives_the_helpers(
    verifier: CodeVerifier, code: str, expected: float
) -> None:
    loop = verifier._loop  # type: ignore[attr-defined]
    ascore = verifier.ascore(
        fenced(code), without_prompt(HUMANEVAL_38), {}, prompt=chat_prompt(HUMANEVAL_38)
    )
    assert loop.run_until_complete(ascore).score == expected


def test_the_engine_passes_the_row_prompt() -> None:
    """The prompt is part of the row's key: the same answer to two prompts runs twice."""
    gt = without_prompt(HUMANEVAL_38)
    honest = fenced(entry_only(HUMANEVAL_38))  # calls encode_cyclic, which only a prompt has
    messages = [{"role": "user", "content": chat_prompt(HUMANEVAL_38)}]
    rows = [
        {"data_source": "openai_humaneval", "response": fenced(HELPER_HACKS[0][1]),
         "ground_truth": gt, "prompt": messages},
        {"data_source": "openai_humaneval", "response": honest, "ground_truth": gt,
         "prompt": messages},
        {"data_source": "openai_humaneval", "response": honest, "ground_truth": gt,
         "prompt": "Write decode_cyclic."},
    ]  # fmt: skip
    config = {"reward": {"num_workers": 1, "sandbox_fusion": {"allow_unisolated": True}}}
    with RewardLoop(config) as loop:
        hack, with_helpers, without_helpers = loop.score(rows)
    assert (hack.score, with_helpers.score, without_helpers.score) == (0.0, 1.0, 0.0)


# ---------------------------------------------------------------------- reading the prompt


def names(helpers: tuple[Helper, ...]) -> list[tuple[str, ...]]:
    return [h.names for h in helpers]


@pytest.mark.parametrize(
    ("prompt", "entry", "expected"),
    [
        (HUMANEVAL_38["prompt"], "decode_cyclic", [("encode_cyclic",)]),
        (HUMANEVAL_32["prompt"], "find_zero", [("math",), ("poly",)]),
        (HUMANEVAL_2["prompt"], "truncate_number", []),
        (chat_prompt(HUMANEVAL_32), "find_zero", [("math",), ("poly",)]),
        ("Complete this:\n" + HUMANEVAL_38["prompt"], "decode_cyclic", [("encode_cyclic",)]),
        # MBPP-style prompt: words and a quoted assert, nothing defined
        ("Write a function to find the volume of a sphere.\n"
         "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
         "volume_sphere", []),
        # stubs are the solution's to write; constants and typed names are helpers
        ("from typing import List\nLIMIT: int = 10\nK = 3\n"
         "def helper(x):\n    ...\n"
         "class Node:\n    def value(self):\n        raise NotImplementedError\n"
         "def f(xs: List[int]) -> int:\n    pass\n",
         "f", [("List",), ("LIMIT",), ("K",)]),
        ("from __future__ import annotations\nprint('hi')\nif True:\n    X = 1\n", "f", []),
    ],
    ids=["humaneval_38", "humaneval_32", "humaneval_2", "fenced_chat", "instruction_then_code",
         "mbpp_words", "stubs_and_constants", "no_definitions"],
)  # fmt: skip
def test_prompt_helpers(prompt: str, entry: str, expected: list) -> None:
    assert names(prompt_helpers(prompt, entry)) == expected


def test_the_ground_truth_prompt_is_read_and_the_entry_point_left_out() -> None:
    suite = parse_tests(HUMANEVAL_38)
    assert suite.entry_point == "decode_cyclic"
    assert names(suite.helpers) == [("encode_cyclic",)]
    assert "def decode_cyclic" not in "".join(h.source for h in suite.helpers)
    assert parse_tests(without_prompt(HUMANEVAL_38)).helpers == ()


def test_a_prompt_helper_that_cannot_run_leaves_its_name_undefined(
    verifier: CodeVerifier,
) -> None:
    """An import the sandbox lacks: the tests get a NameError, never the solution's name."""
    row = {
        "prompt": "import no_such_module_rk as helper\n\ndef f(x):\n    pass\n",
        "test": "def check(candidate):\n    assert helper(1) == 1 and candidate(1) == 1\n",
        "entry_point": "f",
    }
    assert score(verifier, "def helper(x):\n    return x\n\ndef f(x):\n    return x\n", row) == 0.0
    row["test"] = "def check(candidate):\n    assert candidate(1) == 1\n"
    assert score(verifier, "def f(x):\n    return x\n", row) == 1.0


# A task whose tests build the prompt's class and pass it to the solution: classes stay in
# the solution's process (only its objects can cross to it), the prompt's functions do not.
LINKED_LIST = {
    "prompt": "class ListNode:\n"
    "    def __init__(self, val=0, next=None):\n"
    "        self.val = val\n"
    "        self.next = next\n\n\n"
    "def to_list(node):\n"
    "    out = []\n"
    "    while node is not None:\n"
    "        out.append(node.val)\n"
    "        node = node.next\n"
    "    return out\n\n\n"
    "def reverse_list(head):\n"
    '    """Reverse a singly linked list; return its new head."""\n',
    "test": "def check(candidate):\n"
    "    for values in ([1, 2, 3], [7], [4, 4, 5, 1]):\n"
    "        head = None\n"
    "        for v in reversed(values):\n"
    "            head = ListNode(v, head)\n"
    "        assert to_list(candidate(head)) == values[::-1]\n",
    "entry_point": "reverse_list",
}
REVERSE_LIST = (
    "def reverse_list(head):\n"
    "    previous = None\n"
    "    while head is not None:\n"
    "        head.next, previous, head = previous, head, head.next\n"
    "    return previous\n"
)


def test_prompt_classes_stay_with_the_solution() -> None:
    helpers = prompt_helpers(LINKED_LIST["prompt"], "reverse_list")
    assert [(h.names, h.in_tests) for h in helpers] == [
        (("ListNode",), False),
        (("to_list",), True),
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (REVERSE_LIST, 1.0),
        ("def reverse_list(head):\n    return head\n", 0.0),
        # to_list rigged to reverse what it reads: the tests call the prompt's
        ("def to_list(node):\n    out = []\n    while node is not None:\n"
         "        out.insert(0, node.val)\n        node = node.next\n    return out\n\n"
         "def reverse_list(head):\n    return head\n", 0.0),
    ],
    ids=["correct", "wrong", "rigged_helper"],
)  # fmt: skip
def test_a_task_whose_tests_pass_prompt_objects_to_the_solution(
    verifier: CodeVerifier, code: str, expected: float
) -> None:
    assert score(verifier, code, LINKED_LIST) == expected


# ---------------------------------------------------------------------- rule 3: the task's name
# A task's function named like a builtin is the solution's when the test reads no other
# of its names (the harness used to drop it: the builtin passed for any code). A test
# that reads several wraps the task's function in helpers: a builtin's name stays the
# builtin and a comparison tool the stdlib gives tests (isclose, Counter) is the stdlib's.
MAX_TESTS = {"test_list": ["assert max([1, 5, 3]) == 5", "assert max([2]) == 2"]}
SUM_TESTS = {
    "test": "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n",
    "entry_point": "sum",
}
AREA_TESTS = {"test_list": ["assert isclose(area(2), 12.566370614359172)"]}
COUNT_TESTS = {"test_list": ["assert Counter(count_chars('aab')) == Counter({'a': 2, 'b': 1})"]}
RIGHT_AREA = "from math import isclose, pi\n\ndef area(r):\n    return pi * r * r\n"
RIGHT_COUNT = "from collections import Counter\n\ndef count_chars(s):\n    return list(s)\n"
# A task named like a stdlib module; exact numbers crossing as the harness's own
# Fraction and Decimal (an honest Fraction(1, 2) was an opaque object, unequal to 0.5),
# a solution's subclass of them as an opaque one
ARRAY_TESTS = {"test_list": ["assert array(3) == [0, 0, 0]"]}
HALF_TESTS = {"test_list": ["assert half(1) == 0.5"]}
EQUAL_FRACTION = (
    "from fractions import Fraction\n\nclass _Eq(Fraction):\n"
    "    def __eq__(self, other):\n        return True\n\n"
)


@pytest.mark.parametrize(
    ("code", "tests", "expected"),
    [
        ("def max(xs):\n    return -1\n", MAX_TESTS, 0.0),
        ("def max(xs):\n    return sorted(xs)[-1]\n", MAX_TESTS, 1.0),
        ("def sum(xs):\n    return 0\n", SUM_TESTS, 0.0),
        (
            "def sum(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
            SUM_TESTS,
            1.0,
        ),
        ("def area(r):\n    return 0\n\ndef isclose(*a, **k):\n    return True\n", AREA_TESTS, 0.0),
        (RIGHT_AREA, AREA_TESTS, 1.0),
        (
            "def count_chars(s):\n    return 0\n\ndef Counter(x=None):\n    return 0\n",
            COUNT_TESTS,
            0.0,
        ),
        (RIGHT_COUNT, COUNT_TESTS, 1.0),
        ("def array(n):\n    return [0] * n\n", ARRAY_TESTS, 1.0),
        ("def array(n):\n    return [1] * n\n", ARRAY_TESTS, 0.0),
        (
            "from fractions import Fraction\n\ndef half(x):\n    return Fraction(x, 2)\n",
            HALF_TESTS,
            1.0,
        ),
        (
            "from decimal import Decimal\n\ndef half(x):\n    return Decimal(x) / 2\n",
            HALF_TESTS,
            1.0,
        ),
        (
            "from fractions import Fraction\n\ndef half(x):\n    return Fraction(x, 3)\n",
            HALF_TESTS,
            0.0,
        ),
        (EQUAL_FRACTION + "def half(x):\n    return _Eq(x, 3)\n", HALF_TESTS, 0.0),
    ],
    ids=[
        "wrong_max",
        "right_max",
        "wrong_sum",
        "right_sum",
        "fake_isclose",
        "right_isclose",
        "fake_counter",
        "right_counter",
        "right_array",
        "wrong_array",
        "fraction",
        "decimal",
        "wrong_fraction",
        "always_equal_fraction",
    ],
)
def test_the_tests_read_the_task_function_and_the_stdlibs_tools(
    verifier: CodeVerifier, code: str, tests: dict, expected: float
) -> None:
    assert score(verifier, code, tests) == expected
