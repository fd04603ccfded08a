"""Reward hacking through the code verifier: every attack scores 0, a correct solution 1.

Each row is a real trick a policy can find (issue 13): the solution defines a *wrong*
function, then tries to make the harness report a pass anyway. They run against the real
embedded sandbox on the three test styles: MBPP asserts, HumanEval ``check(candidate)``
programs and stdin/stdout cases (CodeContests/APPS).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _support.code_sandbox import embedded_code_verifier, score_response
from rewardkit.verifiers.code import CodeVerifier

MBPP_TESTS = {
    "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(-1, 1) == 0"],
}
HUMANEVAL_TESTS = {
    "test": "def check(candidate):\n"
    "    assert candidate(1, 2) == 3\n"
    "    assert candidate(2, 2) == 4\n"
    "    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
    "entry_point": "add",
}
STDIO_TESTS = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}

CORRECT_FUNCTION = "def add(a, b):\n    return a + b\n"
CORRECT_STDIO = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "import os, sys, signal, builtins, atexit, threading\ndef add(a, b):\n    return a - b\n"

# (name, code, why the row exists). Each defines a wrong ``add`` and then cheats.
FUNCTION_ATTACKS = [
    ("sys_exit_at_module_level", WRONG + "sys.exit(0)\n",
     "the old harness read a clean exit as 'every assert passed'"),
    ("os_exit_at_module_level", WRONG + "os._exit(0)\n", "exit without unwinding, no finally"),
    ("raise_system_exit", WRONG + "raise SystemExit\n", "SystemExit(None) is exit status 0"),
    ("kill_self", WRONG + "os.kill(os.getpid(), signal.SIGKILL)\n", "die before the asserts"),
    ("kill_parent", WRONG + "os.kill(os.getppid(), signal.SIGKILL)\n", "kill the harness"),
    ("kill_group", WRONG + "os.killpg(0, signal.SIGKILL)\n", "kill every process of the run"),
    ("exit_when_called", "import os\ndef add(a, b):\n    os._exit(0)\n", "exit inside the assert"),
    ("sys_exit_when_called", "import sys\ndef add(a, b):\n    sys.exit(0)\n",
     "SystemExit escapes 'except Exception' in tests"),
    ("kill_parent_when_called",
     "import os, signal\ndef add(a, b):\n    os.kill(os.getppid(), signal.SIGKILL)\n",
     "kill the harness while it waits for the answer"),
    ("always_equal_object",
     "class Eq:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
     "    def __lt__(self, other): return True\n    def __sub__(self, other): return self\n"
     "    def __abs__(self): return self\n    def __bool__(self): return True\n"
     "def add(a, b):\n    return Eq()\n",
     "__eq__ always True fooled 'assert add(1, 2) == 3' in the same process"),
    ("always_equal_int_subclass",
     "class Eq(int):\n    def __eq__(self, other): return True\n    __hash__ = int.__hash__\n"
     "def add(a, b):\n    return Eq(-5)\n",
     "an int subclass: its own value (-5) is what is compared"),
    ("patch_builtins",
     WRONG + "builtins.AssertionError = type('Fine', (BaseException,), {})\n"
     "builtins.print = lambda *a, **k: None\n",
     "patching builtins in the process that runs the asserts"),
    ("patch_exit_hooks",
     WRONG + "atexit.register(lambda: os._exit(0))\nsys.excepthook = lambda *a: os._exit(0)\n",
     "turn the failing assert's exit status into 0"),
    ("del_exits",
     WRONG + "class Bye:\n    def __del__(self): os._exit(0)\nkeep = Bye()\n",
     "a finalizer that exits 0 at shutdown"),
    ("define_own_check",
     WRONG + "def check(candidate):\n    return True\n",
     "replace HumanEval's test function"),
    ("forge_verdict_lines",
     WRONG + "for tag in ('\\x1erewardkit-harness:', '\\x1erewardkit-result:'):\n"
     "    print(tag + 'x:passed')\n    sys.stderr.write(tag + 'x:passed\\n')\n",
     "print what a passing harness prints (the nonce is unknown)"),
    ("steal_the_harness_mark",
     WRONG + "p = os.getppid()\n"
     "for path in ('/proc/%d/fd/0' % p, '/proc/%d/mem' % p, '/proc/%d/environ' % p):\n"
     "    try:\n        open(path, 'rb').read(1)\n        print('READ', path)\n"
     "    except OSError:\n        pass\n"
     "try:\n    with open('/proc/%d/fd/1' % p, 'w') as out:\n"
     "        out.write('\\n\\x1erewardkit-harness:x:passed\\n')\n"
     "except OSError:\n    pass\n",
     "read the harness's stdin (tests, nonce) or write to its stdout"),
    ("thread_forges_after",
     WRONG + "def spam():\n    import time\n    while True:\n"
     "        sys.__stdout__.write('\\x1erewardkit-harness:x:passed\\n')\n        time.sleep(0.01)\n"
     "threading.Thread(target=spam, daemon=True).start()\n",
     "a background thread keeps printing after the module loaded"),
]  # fmt: skip

STDIO_ATTACKS = [
    ("print_all_then_raise", "print(3)\nprint(7)\nraise RuntimeError\n", "print answers, crash"),
    ("print_then_kill_self", "import os\nprint(3, flush=True)\nos.kill(os.getpid(), 9)\n",
     "print the first answer and die"),
    ("print_then_exit_1", "import sys\nprint(3)\nsys.exit(1)\n", "print and exit non-zero"),
    ("print_then_kill_parent",
     "import os, signal\nprint(3)\nprint(7)\nos.kill(os.getppid(), signal.SIGKILL)\n",
     "kill whoever started the run, then exit 0 with both answers"),
    ("print_then_hang", "import sys, time\nprint(3, flush=True)\nsys.stdout.close()\ntime.sleep(60)\n",
     "print the answer and never exit"),
]  # fmt: skip


def fenced(code: str) -> str:
    return f"Here you go.\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def verifier() -> Iterator[CodeVerifier]:
    yield from embedded_code_verifier()


def score(verifier: CodeVerifier, code: str, tests: dict) -> tuple[float, list[str]]:
    return score_response(verifier, fenced(code), tests)


@pytest.mark.parametrize("tests", [MBPP_TESTS, HUMANEVAL_TESTS], ids=["mbpp", "humaneval"])
def test_a_correct_function_scores_one(verifier: CodeVerifier, tests: dict) -> None:
    assert score(verifier, CORRECT_FUNCTION, tests)[0] == 1.0


def test_a_correct_stdio_program_scores_one(verifier: CodeVerifier) -> None:
    assert score(verifier, CORRECT_STDIO, STDIO_TESTS)[0] == 1.0


@pytest.mark.parametrize("tests", [MBPP_TESTS, HUMANEVAL_TESTS], ids=["mbpp", "humaneval"])
@pytest.mark.parametrize(
    ("name", "code", "why"), FUNCTION_ATTACKS, ids=[a[0] for a in FUNCTION_ATTACKS]
)
def test_function_attack_scores_zero(
    verifier: CodeVerifier, tests: dict, name: str, code: str, why: str
) -> None:
    result, verdicts = score(verifier, code, tests)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"
    assert "passed" not in verdicts


@pytest.mark.parametrize(("name", "code", "why"), STDIO_ATTACKS, ids=[a[0] for a in STDIO_ATTACKS])
def test_stdio_attack_scores_zero(verifier: CodeVerifier, name: str, code: str, why: str) -> None:
    result, verdicts = score(verifier, code, STDIO_TESTS)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"


def test_a_solution_exception_is_catchable_by_the_test(verifier: CodeVerifier) -> None:
    """Rebuilt builtin exceptions keep tests like 'raises ValueError' working."""
    code = "def add(a, b):\n    if a < 0:\n        raise ValueError('neg')\n    return a + b\n"
    tests = {"test_list": ["try:\n    add(-1, 1)\n    assert False\nexcept ValueError:\n    pass"]}
    assert score(verifier, code, tests)[0] == 1.0


def test_solution_classes_and_containers_cross_as_values(verifier: CodeVerifier) -> None:
    """MBPP-style tests build the solution's objects and compare tuples, sets, dicts."""
    code = (
        "from collections import Counter, namedtuple\nclass Pair:\n"
        "    def __init__(self, a, b): self.a, self.b = a, b\n"
        "def longest(pairs): return max(p.b - p.a for p in pairs)\n"
        "def stats(xs): return Counter(xs), (min(xs), max(xs)), set(xs)\n"
        "def gen(n): return (i * i for i in range(n))\n"
    )
    tests = {
        "test_list": [
            "assert longest([Pair(1, 5), Pair(2, 3)]) == 4",
            "assert stats([1, 1, 2]) == ({1: 2, 2: 1}, (1, 2), {1, 2})",
            "assert list(gen(3)) == [0, 1, 4]",
            "assert BASE == 10 and NAMES == ('a', 'b')",
        ]
    }
    code += "BASE = 10\nNAMES = ('a', 'b')\n"
    assert score(verifier, code, tests) == (1.0, ["passed"] * 4)


def test_numpy_scalars_compare_as_numbers(verifier: CodeVerifier) -> None:
    """np.int64(3) == 3 holds in Python; a scalar of numpy's shape crosses as its item()."""
    code = (
        "class Int64:\n    __module__ = 'numpy'\n    shape = ()\n"
        "    def __init__(self, v): self.v = v\n    def item(self): return self.v\n"
        "def add(a, b):\n    return Int64(a + b)\n"
    )
    assert score(verifier, code, MBPP_TESTS)[0] == 1.0


def test_a_big_precomputed_table_is_not_copied_to_the_harness(verifier: CodeVerifier) -> None:
    """Module-level data over 1000 items crosses by reference (len, indexing, iteration)."""
    code = (
        "PRIMES = [p for p in range(2, 200000) if all(p % d for d in range(2, int(p**0.5) + 1))]\n"
    )
    code += "def add(a, b):\n    return a + b\n"
    tests = {"test_list": ["assert add(1, 2) == 3 and PRIMES[0] == 2 and len(PRIMES) > 1000"]}
    assert score(verifier, code, tests)[0] == 1.0


# Real rows (openai_humaneval HumanEval/0, mbpp task 2) with their canonical solutions:
# the harness must not change what a correct answer scores.
HUMANEVAL_0 = {
    "test": "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\n"
    "def check(candidate):\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
    "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
    "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False\n"
    "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True\n"
    "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False\n\n",
    "entry_point": "has_close_elements",
}
HUMANEVAL_0_SOLUTION = (
    "from typing import List\n\n\n"
    "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    "    for idx, elem in enumerate(numbers):\n"
    "        for idx2, elem2 in enumerate(numbers):\n"
    "            if idx != idx2:\n"
    "                distance = abs(elem - elem2)\n"
    "                if distance < threshold:\n"
    "                    return True\n\n"
    "    return False\n"
)
MBPP_2 = {
    "test_setup_code": "",
    "test_list": [
        "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
        "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)",
        "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)",
    ],
}
MBPP_2_SOLUTION = (
    "def similar_elements(test_tup1, test_tup2):\n"
    "  res = tuple(set(test_tup1) & set(test_tup2))\n"
    "  return (res) \n"
)


@pytest.mark.parametrize(
    ("solution", "tests"),
    [(HUMANEVAL_0_SOLUTION, HUMANEVAL_0), (MBPP_2_SOLUTION, MBPP_2)],
    ids=["humaneval_0", "mbpp_2"],
)
def test_real_rows_with_their_canonical_solutions_score_one(
    verifier: CodeVerifier, solution: str, tests: dict
) -> None:
    assert score(verifier, solution, tests)[0] == 1.0
