"""guards: code.py against solutions that cheat: each attack scores 0, each honest answer 1.

Real runs on the embedded sandbox, on the test styles of the datasets: MBPP asserts,
HumanEval ``check(candidate)`` programs, stdin/stdout and call-based cases
(CodeContests/APPS), and rows that name another language (cpp, bash, nodejs), whose test
must run to its end: it prints a fresh nonce, and a case passes only with that line and
exit status 0. Each attack defines a wrong answer, then tries to make the harness report
a pass anyway; ``why`` says how. A language missing here is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _support.code_sandbox import (
    embedded_code_verifier,
    fenced,
    installed_languages,
    score_response,
    skip_unless_installed,
)
from rewardkit.errors import InvalidSampleError, ScorerError
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
CALL_TESTS = {"inputs": [[1, 2], [3, 4]], "outputs": [3, 7], "fn_name": "add"}
WRONG_CPP = "int add(int a, int b) { return a - b; }\n"
RIGHT_CPP = "int add(int a, int b) { return a + b; }\n"
CPP_ASSERTS = {  # HumanEval-X's layout: main without a return statement
    "test": "#include <cassert>\nint main() {\n  assert(add(1, 2) == 3);\n  assert(add(2, 2) == 4);\n}\n",
    "language": "cpp",
}
CPP_RETURNS_1 = {  # a test that reports failure by its status, not an abort
    "test": "int main(int argc, char** argv) {\n  if (add(1, 2) != 3) return 1;\n  return 0;\n}\n",
    "language": "cpp",
}
BASH_TESTS = {"test_list": ['[ "$(add 1 2)" = 3 ] || exit 1', '[ "$(add 2 2)" = 4 ] || exit 1'],
              "language": "bash"}  # fmt: skip
MULTIPL_E_BASH = {  # MultiPL-E's layout
    "test": 'candidate() {\n    add "$@"\n}\n\nset -e\nrun_test() {\n'
    '    [[ $(candidate "1" "2") = "3" ]]\n    [[ $(candidate "2" "2") = "4" ]]\n}\n\nrun_test\n',
    "language": "bash",
}
WRONG_BASH = "add() { echo $(($1 - $2)); }\n"
RIGHT_BASH = "add() { echo $(($1 + $2)); }\n"
NODE_TESTS = {
    "test": "const assert = require('assert');\nassert.strictEqual(add(1, 2), 3);\n",
    "language": "nodejs",
}
WRONG_NODE = "function add(a, b) { return a - b; }\n"
WRONG = "import os, sys, signal, builtins, atexit, threading\ndef add(a, b):\n    return a - b\n"

# (name, code, why): each defines a wrong ``add`` and then cheats; run on MBPP and HumanEval
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

# (name, code, why): a wrong stdin/stdout program that cheats
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

# (name, fence tag, code, tests, why): a fence that picks another language for a Python row,
# or a solution that reaches into the test's namespace
ROW_ATTACKS = [
    ("bash_exit_0_on_mbpp", "bash", "exit 0", MBPP_TESTS,
     "the fence picked bash: MBPP's asserts ran as shell commands after `exit 0`"),
    ("bash_exit_0_on_humaneval", "bash", "exit 0", HUMANEVAL_TESTS,
     "the same for HumanEval's check program"),
    ("sh_exit_0_on_mbpp", "sh", "add() { echo 0; }\nexit 0", MBPP_TESTS,
     "```sh is bash too"),
    ("perl_exit_on_mbpp", "perl", "exit 0;", MBPP_TESTS,
     "perl runs `exit 0;` and never reaches the Python asserts"),
    ("contains_always_true", "python",
     "class Bag:\n    def __contains__(self, x):\n        return True\n"
     "    def __iter__(self):\n        return iter([])\n"
     "def keys_of(d):\n    return Bag()",
     {"test_list": ["assert 'b' in keys_of({'a': 1, 'b': 2})", "assert 'z' in keys_of({'z': 0})"]},
     "the harness asked the solution's own __contains__"),
    ("contains_always_false", "python",
     "class Bag:\n    def __contains__(self, x):\n        return False\n"
     "def odds(xs):\n    return Bag()",
     {"test_list": ["assert 4 not in odds([1, 2, 3, 4])"]}, "the same for `not in`"),
    ("big_table_of_always_equal_items", "python",
     "class Eq:\n    def __eq__(self, other):\n        return True\n"
     "    __hash__ = object.__hash__\nTABLE = [Eq() for _ in range(1001)]",
     {"test_list": ["assert 7 in TABLE and 9 in TABLE"]},
     "a table over 1000 items stays in the solution: `in` ran its items' __eq__"),
    ("shadow_abs_in_a_humaneval_tolerance_test", "python",
     "def add(a, b):\n    return 0.0\ndef abs(x):\n    return 0",
     {"test": "def check(candidate):\n    assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9\n",
      "entry_point": "add"},
     "the solution's names entered the test's globals: its abs ran on the test's side"),
    ("shadow_set_on_both_sides", "python",
     "def add(a, b):\n    return []\ndef set(*args):\n    return 0",
     {"test_list": ["assert set(add([1], [2])) == set([1, 2])"]}, "0 == 0"),
    ("shadow_sorted", "python",
     "def add(a, b):\n    return []\ndef sorted(x):\n    return [1, 2]",
     {"test_list": ["assert sorted(add([1], [2])) == [1, 2]"]}, "a constant sorted"),
    ("shadow_len", "python", "def add(a, b):\n    return []\ndef len(x):\n    return 2",
     {"test_list": ["assert len(add([1], [2])) == 2"]}, "a constant len"),
    ("fake_math_module", "python",
     "def add(a, b):\n    return 0\nclass math:\n    @staticmethod\n"
     "    def isclose(*args, **kwargs):\n        return True",
     {"test_list": ["assert math.isclose(add(0.1, 0.2), 0.3)"]},
     "full MBPP's tests use the solution's `import math`: a class named math answered"),
]  # fmt: skip

# (name, language, code, tests, why): a row naming its language; the code ends the program
# (or switches its asserts off) before the test fails
EXIT_ATTACKS = [
    ("cpp_constructor_attribute_exit", "cpp",
     "#include <cstdlib>\n" + WRONG_CPP + "__attribute__((constructor)) static void leave() { exit(0); }\n",
     CPP_ASSERTS, "a constructor ran before main and exited 0"),
    ("cpp_static_initializer__exit", "cpp",
     "#include <unistd.h>\n" + WRONG_CPP + "static int leave = (_exit(0), 0);\n",
     CPP_ASSERTS, "_exit(0) skips every handler: status 0"),
    ("cpp_quick_exit", "cpp",
     "#include <cstdlib>\n" + WRONG_CPP + "static int leave = (std::quick_exit(0), 0);\n",
     CPP_ASSERTS, "quick_exit(0) before main: status 0"),
    ("cpp_abort_handler_exits_0", "cpp",
     "#include <csignal>\n#include <unistd.h>\n" + WRONG_CPP
     + "static void out(int) { _exit(0); }\nstatic int hook = (std::signal(SIGABRT, out), 0);\n",
     CPP_ASSERTS, "the failed assert's abort() was caught and turned into exit 0"),
    ("cpp_atexit_rewrites_the_status", "cpp",
     "#include <cstdlib>\n#include <unistd.h>\n" + WRONG_CPP
     + "static void out() { _exit(0); }\nstatic int hook = (std::atexit(out), 0);\n",
     CPP_RETURNS_1, "main returned 1, then an atexit handler exited 0"),
    ("cpp_ndebug_switches_asserts_off", "cpp", "#define NDEBUG\n" + WRONG_CPP, CPP_ASSERTS,
     "NDEBUG before the test's <cassert>: every assert compiled to nothing"),
    ("cpp_assert_macro_redefined", "cpp",
     "#include <cassert>\n" + WRONG_CPP + "#undef assert\n#define assert(x) ((void)0)\n",
     {"test": "int main() {\n  assert(add(1, 2) == 3);\n}\n", "language": "cpp"},
     "the code's own assert macro, in a test that relies on its include"),
    ("bash_exit_trap", "bash", "trap 'exit 0' EXIT\n" + WRONG_BASH, BASH_TESTS,
     "the test's `exit 1` ran the code's EXIT trap, which exited 0"),
    ("bash_exec_true", "bash", WRONG_BASH + "exec true\n", BASH_TESTS,
     "the shell replaced itself with `true` before the test"),
    ("bash_exit_0_inside_the_function_the_test_calls", "bash",
     "add() { exit 0; }\n",
     {"test_list": ['add 1 2 > out.txt; [ "$(cat out.txt)" = 3 ] || exit 1'], "language": "bash"},
     "the test called the code's function in its own shell: `exit 0` ended the test"),
    ("bash_heredoc_swallows_the_test", "bash", "add() { echo 0; }\n: <<'run_test'",
     MULTIPL_E_BASH, "an open here-document swallowed the test up to its last line, `run_test`"),
    ("nodejs_process_exit_0", "nodejs", WRONG_NODE + "process.exit(0);\n", NODE_TESTS,
     "process.exit(0) before the test"),
    ("nodejs_exit_listener_rewrites_the_status", "nodejs",
     WRONG_NODE + "process.on('exit', () => { process.exitCode = 0; });\n", NODE_TESTS,
     "the failed assert's status 1 was rewritten to 0 by an exit listener"),
    ("cpp_static_initializer_exits_0", "cpp",
     "#include <cstdlib>\nint add(int a, int b) { return a - b; }\n"
     "static int leave = (std::exit(0), 0);",
     {"test": "#include <cassert>\nint main() {\n  assert(add(1, 2) == 3);\n  return 0;\n}\n",
      "language": "cpp"}, "std::exit(0) in a static initializer, before main"),
    ("bash_exit_0_before_a_bash_test", "bash", "add() { echo 0; }\nexit 0",
     {"test_list": ['[ "$(add 1 2)" = 3 ] || exit 1'], "language": "bash"},
     "exit 0 before a one-case bash test"),
]  # fmt: skip

# (name, fence tag or language, code, tests, why): right answers that must keep scoring 1
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
    ("cpp_main_without_return", "cpp", RIGHT_CPP, CPP_ASSERTS,
     "HumanEval-X's main has no return statement"),
    ("cpp_main_with_argv_returning_0", "cpp", RIGHT_CPP, CPP_RETURNS_1,
     "a test that reports by its exit status"),
    ("cpp_braces_in_literals_and_comments", "cpp", RIGHT_CPP,
     {"test": "#include <cassert>\n#include <string>\n// int main() { here }\n"
              "int main(void) {\n  std::string s = \"}{\"; char c = '}';\n"
              "  /* } */ assert(add(1, 2) == 3 && s[0] == c);\n  return 0;\n}\n",
      "language": "cpp"}, "braces in literals and comments do not hide the test's main"),
    ("bash_asserts", "bash", RIGHT_BASH, BASH_TESTS, "bash asserts, one a case"),
    ("bash_multipl_e_layout", "bash", RIGHT_BASH, MULTIPL_E_BASH, "MultiPL-E's bash layout"),
    ("bash_test_ending_with_exit_0", "bash", RIGHT_BASH,
     {"test": '[ "$(add 1 2)" = 3 ] || exit 1\nexit 0\n', "language": "bash"},
     "the test's own exit 0 after its checks"),
    ("nodejs_asserts", "nodejs", "function add(a, b) { return a + b; }\n", NODE_TESTS,
     "node's assert module"),
    ("nodejs_test_ending_with_process_exit_0", "nodejs", "function add(a, b) { return a + b; }\n",
     {"test": NODE_TESTS["test"] + "process.exit(0);\n", "language": "nodejs"},
     "the test's own process.exit(0) after its checks"),
]  # fmt: skip


@pytest.fixture(scope="module")
def verifier() -> Iterator[CodeVerifier]:
    yield from embedded_code_verifier()


def score(verifier: CodeVerifier, response: str, tests: dict) -> tuple[float, list[str]]:
    return score_response(verifier, response, tests)


def missing_language(verifier: CodeVerifier) -> str:
    """A fence language the embedded sandbox lacks here (skip if it has them all)."""
    have = installed_languages(verifier)
    missing = [tag for tag in ("ruby", "lua", "php", "go", "rust") if tag not in have]
    if not missing:
        pytest.skip("every fence language is installed here")
    return missing[0]


def _cases(tests: dict) -> int:
    return len(tests.get("test_list") or tests.get("inputs") or [None])


# --- attacks --------------------------------------------------------------------------------


@pytest.mark.parametrize("tests", [MBPP_TESTS, HUMANEVAL_TESTS], ids=["mbpp", "humaneval"])
@pytest.mark.parametrize(
    ("name", "code", "why"), FUNCTION_ATTACKS, ids=[a[0] for a in FUNCTION_ATTACKS]
)
def test_function_attack_scores_zero(
    verifier: CodeVerifier, tests: dict, name: str, code: str, why: str
) -> None:
    result, verdicts = score(verifier, fenced(code), tests)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"
    assert "passed" not in verdicts


@pytest.mark.parametrize(("name", "code", "why"), STDIO_ATTACKS, ids=[a[0] for a in STDIO_ATTACKS])
def test_stdio_attack_scores_zero(verifier: CodeVerifier, name: str, code: str, why: str) -> None:
    result, verdicts = score(verifier, fenced(code), STDIO_TESTS)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"


@pytest.mark.parametrize(
    ("name", "tag", "code", "tests", "why"), ROW_ATTACKS, ids=[a[0] for a in ROW_ATTACKS]
)
def test_row_attack_scores_zero(
    verifier: CodeVerifier, name: str, tag: str, code: str, tests: dict, why: str
) -> None:
    result, verdicts = score(verifier, fenced(code, tag), tests)
    assert result == 0.0, f"{name} ({why}) scored {result}: {verdicts}"
    assert "passed" not in verdicts


@pytest.mark.parametrize(
    ("name", "language", "code", "tests", "why"), EXIT_ATTACKS, ids=[h[0] for h in EXIT_ATTACKS]
)
def test_code_that_ends_the_program_first_scores_zero(
    verifier: CodeVerifier, name: str, language: str, code: str, tests: dict, why: str
) -> None:
    skip_unless_installed(verifier, language)
    result, verdicts = score(verifier, fenced(code, language), tests)
    assert result == 0.0, f"{name}: {why}"
    assert "passed" not in verdicts


def test_exit_0_before_the_test_reads_as_a_runtime_error(verifier: CodeVerifier) -> None:
    """Status 0 without the completion line: the test never ran to its end."""
    skip_unless_installed(verifier, "bash")
    _, verdicts = score(verifier, fenced("exit 0\n", "bash"), BASH_TESTS)
    assert verdicts == ["runtime_error", "runtime_error"]


def test_printing_a_guess_at_the_line_does_not_pass(verifier: CodeVerifier) -> None:
    """The nonce is fresh per run: a line with another nonce (or last run's) is no pass."""
    skip_unless_installed(verifier, "bash")
    forged = "printf '\\n\\036rewardkit-done:%s\\n' 0123456789abcdef0123456789abcdef\nexit 0\n"
    assert score(verifier, fenced(forged, "bash"), BASH_TESTS)[0] == 0.0


@pytest.mark.parametrize("ending", ["kill -9 $$", "kill -TERM $$"])
def test_a_bash_solution_that_kills_its_shell_scores_zero(
    verifier: CodeVerifier, ending: str
) -> None:
    """The status is the signal's: never a pass."""
    skip_unless_installed(verifier, "bash")
    assert score(verifier, fenced(f"{WRONG_BASH}{ending}\n", "bash"), BASH_TESTS)[0] == 0.0


# --- honest answers -------------------------------------------------------------------------


@pytest.mark.parametrize("tests", [MBPP_TESTS, HUMANEVAL_TESTS], ids=["mbpp", "humaneval"])
def test_a_correct_function_scores_one(verifier: CodeVerifier, tests: dict) -> None:
    assert score(verifier, fenced(CORRECT_FUNCTION), tests)[0] == 1.0


def test_a_correct_stdio_program_scores_one(verifier: CodeVerifier) -> None:
    assert score(verifier, fenced(CORRECT_STDIO), STDIO_TESTS)[0] == 1.0


@pytest.mark.parametrize(
    ("name", "tag", "code", "tests", "why"), HONEST, ids=[h[0] for h in HONEST]
)
def test_honest_answer_scores_one(
    verifier: CodeVerifier, name: str, tag: str, code: str, tests: dict, why: str
) -> None:
    if tag in ("cpp", "nodejs") or "language" in tests:
        skip_unless_installed(verifier, tag)
    result, verdicts = score(verifier, fenced(code, tag), tests)
    assert (result, verdicts) == (1.0, ["passed"] * _cases(tests)), f"{name} ({why})"


def test_a_row_that_names_its_language_still_runs_in_it(verifier: CodeVerifier) -> None:
    """A bash assert row (``"language": "bash"``) runs the bash code and its bash test."""
    tests = {"test_list": ['[ "$(add 1 2)" = 3 ] || exit 1'], "language": "bash"}
    right = "add() { echo $(($1 + $2)); }"
    wrong = "add() { echo $(($1 - $2)); }"
    assert score(verifier, fenced(right, "bash"), tests)[0] == 1.0
    assert score(verifier, fenced(wrong, "bash"), tests)[0] == 0.0


# --- languages the sandbox lacks -------------------------------------------------------------


def test_a_fence_language_the_sandbox_lacks_is_a_wrong_answer(verifier: CodeVerifier) -> None:
    """A fence the sandbox cannot run is the response's choice: a compile_error (score 0),
    never a row error a policy could use to turn a wrong answer into "no reward" (TRL:
    zero advantage, not a negative one) or to stop a verl run."""
    missing = missing_language(verifier)
    result, verdicts = score(verifier, fenced("puts 3", missing), STDIO_TESTS)
    assert (result, verdicts) == (0.0, ["compile_error", "compile_error"])


def test_a_row_naming_a_language_the_sandbox_lacks_is_still_an_error(
    verifier: CodeVerifier,
) -> None:
    """The row's own language missing is the operator's problem: an error, never a 0."""
    missing = missing_language(verifier)
    with pytest.raises(ScorerError, match="not available"):
        score(verifier, fenced("puts 3", missing), {**STDIO_TESTS, "language": missing})


def test_a_cpp_test_without_a_main_is_a_row_error(verifier: CodeVerifier) -> None:
    """No main to rename: the verifier cannot see the test run to its end, so the row is
    an error naming why, never a pass on exit status (nor a silent 0)."""
    skip_unless_installed(verifier, "cpp")
    tests = {"test": "static_assert(sizeof(int) >= 2);\n", "language": "cpp"}
    with pytest.raises(InvalidSampleError, match="int main"):
        score(verifier, fenced(RIGHT_CPP, "cpp"), tests)


# --- what a solution may do -----------------------------------------------------------------


def test_a_solution_exception_is_catchable_by_the_test(verifier: CodeVerifier) -> None:
    """Rebuilt builtin exceptions keep tests like 'raises ValueError' working."""
    code = "def add(a, b):\n    if a < 0:\n        raise ValueError('neg')\n    return a + b\n"
    tests = {"test_list": ["try:\n    add(-1, 1)\n    assert False\nexcept ValueError:\n    pass"]}
    assert score(verifier, fenced(code), tests)[0] == 1.0


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
    assert score(verifier, fenced(code), tests) == (1.0, ["passed"] * 4)


def test_numpy_scalars_compare_as_numbers(verifier: CodeVerifier) -> None:
    """np.int64(3) == 3 holds in Python; a scalar of numpy's shape crosses as its item()."""
    code = (
        "class Int64:\n    __module__ = 'numpy'\n    shape = ()\n"
        "    def __init__(self, v): self.v = v\n    def item(self): return self.v\n"
        "def add(a, b):\n    return Int64(a + b)\n"
    )
    assert score(verifier, fenced(code), MBPP_TESTS)[0] == 1.0


def test_a_big_precomputed_table_is_not_copied_to_the_harness(verifier: CodeVerifier) -> None:
    """Module-level data over 1000 items crosses by reference (len, indexing, iteration)."""
    code = (
        "PRIMES = [p for p in range(2, 200000) if all(p % d for d in range(2, int(p**0.5) + 1))]\n"
    )
    code += "def add(a, b):\n    return a + b\n"
    tests = {"test_list": ["assert add(1, 2) == 3 and PRIMES[0] == 2 and len(PRIMES) > 1000"]}
    assert score(verifier, fenced(code), tests)[0] == 1.0


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
    assert score(verifier, fenced(solution), tests)[0] == 1.0
