"""Red team 7e against the code verifier: real sandbox runs, each attack scores 0.

Every row is an attack that earned credit before its fix (the reason says how), run on
the embedded sandbox. The honest rows guard the fixes: a right answer still scores 1.
Attacks that never earned credit are listed in the red team's report, not here.
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
    "    assert candidate(2, 2) == 4\n",
    "entry_point": "add",
}
STDIO_TESTS = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}
CALL_TESTS = {"inputs": [[1, 2], [3, 4]], "outputs": [3, 7], "fn_name": "add"}

# (name, fence tag, code, tests, why it scored before the fix)
ATTACKS = [
    ("bash_exit_0_on_mbpp", "bash", "exit 0", MBPP_TESTS,
     "the fence picked bash: MBPP's asserts ran as shell commands after `exit 0` (score 1.0)"),
    ("bash_exit_0_on_humaneval", "bash", "exit 0", HUMANEVAL_TESTS,
     "the same for HumanEval's check program (score 1.0)"),
    ("sh_exit_0_on_mbpp", "sh", "add() { echo 0; }\nexit 0", MBPP_TESTS,
     "```sh is bash too (score 1.0)"),
    ("perl_exit_on_mbpp", "perl", "exit 0;", MBPP_TESTS,
     "perl runs `exit 0;` and never reaches the Python asserts (score 1.0)"),
    ("contains_always_true", "python",
     "class Bag:\n    def __contains__(self, x):\n        return True\n"
     "    def __iter__(self):\n        return iter([])\n"
     "def keys_of(d):\n    return Bag()",
     {"test_list": ["assert 'b' in keys_of({'a': 1, 'b': 2})", "assert 'z' in keys_of({'z': 0})"]},
     "the harness asked the solution's own __contains__ (score 1.0)"),
    ("contains_always_false", "python",
     "class Bag:\n    def __contains__(self, x):\n        return False\n"
     "def odds(xs):\n    return Bag()",
     {"test_list": ["assert 4 not in odds([1, 2, 3, 4])"]}, "the same for `not in` (score 1.0)"),
    ("big_table_of_always_equal_items", "python",
     "class Eq:\n    def __eq__(self, other):\n        return True\n"
     "    __hash__ = object.__hash__\nTABLE = [Eq() for _ in range(1001)]",
     {"test_list": ["assert 7 in TABLE and 9 in TABLE"]},
     "a table over 1000 items stays in the solution: `in` ran its items' __eq__ (score 1.0)"),
    ("shadow_abs_in_a_humaneval_tolerance_test", "python",
     "def add(a, b):\n    return 0.0\ndef abs(x):\n    return 0",
     {"test": "def check(candidate):\n    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
      "entry_point": "add"},
     "the solution's names entered the test's globals: its abs ran on the test's side (1.0)"),
    ("shadow_set_on_both_sides", "python",
     "def add(a, b):\n    return []\ndef set(*args):\n    return 0",
     {"test_list": ["assert set(add([1], [2])) == set([1, 2])"]}, "0 == 0 (score 1.0)"),
    ("shadow_sorted", "python",
     "def add(a, b):\n    return []\ndef sorted(x):\n    return [1, 2]",
     {"test_list": ["assert sorted(add([1], [2])) == [1, 2]"]}, "a constant sorted (score 1.0)"),
    ("shadow_len", "python", "def add(a, b):\n    return []\ndef len(x):\n    return 2",
     {"test_list": ["assert len(add([1], [2])) == 2"]}, "a constant len (score 1.0)"),
    ("fake_math_module", "python",
     "def add(a, b):\n    return 0\nclass math:\n    @staticmethod\n"
     "    def isclose(*args, **kwargs):\n        return True",
     {"test_list": ["assert math.isclose(add(0.1, 0.2), 0.3)"]},
     "full MBPP's tests use the solution's `import math`: a class named math answered (1.0)"),
]  # fmt: skip

# (name, fence tag, code, tests, why an honest answer must keep scoring 1)
HONEST = [
    ("stdio_trailing_space_and_blank_lines", "python",
     "a, b = map(int, input().split())\nprint(a + b, end=' \\n\\n')", STDIO_TESTS,
     "trailing whitespace and blank lines are forgiven"),
    ("stdio_input_at_eof", "python",
     "a, b = map(int, input().split())\nprint(a + b)\ntry:\n    input()\nexcept EOFError:\n"
     "    pass", STDIO_TESTS, "reading past the end of stdin is not an error of the answer"),
    ("stdio_recursion_depth_1e4", "python",
     "import sys\nsys.setrecursionlimit(20000)\ndef depth(n):\n"
     "    return 0 if n == 0 else 1 + depth(n - 1)\n"
     "a, b = map(int, input().split())\nprint(a + b + depth(10000) - 10000)", STDIO_TESTS,
     "deep recursion fits the run's stack"),
    ("mbpp_recursion_depth_1e4", "python",
     "import sys\nsys.setrecursionlimit(20000)\ndef depth(n):\n"
     "    return 0 if n == 0 else 1 + depth(n - 1)\n"
     "def add(a, b):\n    return a + b + depth(10000) - 10000", MBPP_TESTS,
     "deep recursion in the harness's host process"),
    ("call_recursion_depth_1e4", "python",
     "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
     "def add(a, b):\n    return a + b + depth(10000) - 10000", CALL_TESTS,
     "the call harness raises the recursion limit"),
    ("mbpp_python_under_a_py3_fence", "py3", "def add(a, b):\n    return a + b", MBPP_TESTS,
     "a Python fence on an assert row is still Python"),
    ("mbpp_python_under_an_untagged_fence", "", "def add(a, b):\n    return a + b", MBPP_TESTS,
     "no tag: Python"),
    ("membership_in_a_custom_container", "python",
     "class Box:\n    def __init__(self, xs):\n        self.xs = list(xs)\n"
     "    def __iter__(self):\n        return iter(self.xs)\n"
     "    def __contains__(self, x):\n        return x in self.xs",
     {"test_list": ["assert 3 in Box([1, 3])", "assert 4 not in Box([1, 3])"]},
     "membership over a solution's iterable still works, decided by the harness"),
    ("membership_in_a_big_table", "python",
     "PRIMES = [p for p in range(2, 20000) if all(p % d for d in range(2, int(p**0.5) + 1))]",
     {"test_list": ["assert 7 in PRIMES and 9 not in PRIMES"]},
     "a table crossing by reference is iterated as data"),
    ("solution_shadowing_a_builtin_for_itself", "python",
     "def max(a, b):\n    return a if a > b else b\n"
     "def add(a, b):\n    return max(a, b) + min(a, b)",
     MBPP_TESTS, "the solution's own calls still see its own max"),
    ("test_using_a_solution_helper", "python",
     "def poly(xs, x):\n    return sum(c * x**i for i, c in enumerate(xs))\n"
     "def add(a, b):\n    return a + b",
     {"test_list": ["assert poly([1, 2], add(1, 2)) == 7"]},
     "HumanEval/32's test calls the prompt's poly: solution names other than builtins stay"),
    ("test_using_the_solutions_math_import", "python",
     "import math\ndef add(a, b):\n    return a + b",
     {"test_list": ["assert math.isclose(add(0.1, 0.2), 0.3)"]},
     "the solution's real stdlib imports still reach the test"),
    ("stdio_bash_by_fence", "bash", "read a b\necho $((a + b))", STDIO_TESTS,
     "stdin/stdout tests are language-neutral: the fence still picks the language"),
]  # fmt: skip


def fenced(code: str, tag: str) -> str:
    return f"My answer.\n```{tag}\n{code}\n```\n"


@pytest.fixture(scope="module")
def verifier() -> Iterator[CodeVerifier]:
    yield from embedded_code_verifier()


def score(verifier: CodeVerifier, response: str, tests: dict) -> tuple[float, list[str]]:
    return score_response(verifier, response, tests)


def installed(verifier: CodeVerifier) -> tuple[str, ...]:
    """The languages the embedded sandbox has on this machine."""

    async def languages() -> tuple[str, ...]:
        box = verifier._runner().sandbox  # type: ignore[attr-defined]
        await box.start()
        return box.languages

    return verifier._loop.run_until_complete(languages())  # type: ignore[attr-defined]


def missing_language(verifier: CodeVerifier) -> str:
    """A fence language the embedded sandbox lacks here (skip if it has them all)."""
    have = installed(verifier)
    missing = [tag for tag in ("ruby", "lua", "php", "go", "rust") if tag not in have]
    if not missing:
        pytest.skip("every fence language is installed here")
    return missing[0]


@pytest.mark.parametrize(
    ("name", "tag", "code", "tests", "why"), ATTACKS, ids=[a[0] for a in ATTACKS]
)
def test_attack_scores_zero(
    verifier: CodeVerifier, name: str, tag: str, code: str, tests: dict, why: str
) -> None:
    result, verdicts = score(verifier, fenced(code, tag), tests)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"
    assert "passed" not in verdicts


@pytest.mark.parametrize(
    ("name", "tag", "code", "tests", "why"), HONEST, ids=[h[0] for h in HONEST]
)
def test_honest_answer_scores_one(
    verifier: CodeVerifier, name: str, tag: str, code: str, tests: dict, why: str
) -> None:
    result, verdicts = score(verifier, fenced(code, tag), tests)
    assert result == 1.0, f"{name} ({why}) scored {result}: {verdicts}"


def test_a_row_that_names_its_language_still_runs_in_it(verifier: CodeVerifier) -> None:
    """A bash assert row (``"language": "bash"``) runs the bash code and its bash test."""
    tests = {"test_list": ['[ "$(add 1 2)" = 3 ] || exit 1'], "language": "bash"}
    right = "add() { echo $(($1 + $2)); }"
    wrong = "add() { echo $(($1 - $2)); }"
    assert score(verifier, fenced(right, "bash"), tests)[0] == 1.0
    assert score(verifier, fenced(wrong, "bash"), tests)[0] == 0.0


def test_a_fence_language_the_sandbox_lacks_is_a_wrong_answer(verifier: CodeVerifier) -> None:
    """Before: ```ruby on a stdin/stdout row raised ScorerError, a row error. A policy
    could turn any wrong answer into "no reward" (TRL: zero advantage, not a negative
    one) or stop a verl run. The response chose the language: it is a compile_error."""
    missing = missing_language(verifier)
    result, verdicts = score(verifier, fenced("puts 3", missing), STDIO_TESTS)
    assert (result, verdicts) == (0.0, ["compile_error", "compile_error"])


def test_a_row_naming_a_language_the_sandbox_lacks_is_still_an_error(
    verifier: CodeVerifier,
) -> None:
    """The row's own language missing is the operator's problem: an error, never a 0."""
    from rewardkit.errors import ScorerError

    missing = missing_language(verifier)
    with pytest.raises(ScorerError, match="not available"):
        score(verifier, fenced("puts 3", missing), {**STDIO_TESTS, "language": missing})


# Found by red team 7 and closed by red8c: a row that *names* a language other than Python
# ran its assert program after the code and passed on exit status 0, so the code could
# exit 0 first. The test now ends by printing a per-run nonce, required for a pass (more
# cases in test_code_exit8.py; what remains is said in code.py, "completion lines").
DECLARED_EXITS = [
    ("cpp_static_initializer_exits_0", "cpp",
     "#include <cstdlib>\nint add(int a, int b) { return a - b; }\n"
     "static int leave = (std::exit(0), 0);",
     {"test": "#include <cassert>\nint main() {\n  assert(add(1, 2) == 3);\n  return 0;\n}\n",
      "language": "cpp"}),
    ("bash_exit_0_before_a_bash_test", "bash", "add() { echo 0; }\nexit 0",
     {"test_list": ['[ "$(add 1 2)" = 3 ] || exit 1'], "language": "bash"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "language", "code", "tests"), DECLARED_EXITS, ids=[d[0] for d in DECLARED_EXITS]
)
def test_declared_language_exit_0_scores_zero(
    verifier: CodeVerifier, name: str, language: str, code: str, tests: dict
) -> None:
    if language not in installed(verifier):
        pytest.skip(f"{language} is not installed here")
    assert score(verifier, fenced(code, language), tests)[0] == 0.0, name
