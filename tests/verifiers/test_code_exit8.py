"""Non-Python assert programs must run to their end to pass (red-team red8c).

Found: a row naming another language (cpp, bash, nodejs) ran its assert program after
the code, in one program, and passed on exit status 0, so code that exited 0 before the
test (a C++ static initializer, bash ``exit 0``) earned full credit. The test now ends by
printing a fresh nonce and a case passes only with that line and exit status 0. Every
hack row below is a wrong answer that scored 1.0 before (the reason says how); the honest
rows guard against breaking right answers. Real sandbox runs; a language missing here is
skipped.

    .venv/bin/python -m pytest tests/verifiers/test_code_exit8.py
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from _support.code_sandbox import embedded_code_verifier, score_response
from rewardkit.errors import InvalidSampleError
from rewardkit.verifiers.code import CodeVerifier

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

# (name, language, code, tests, why it scored 1.0 before)
HACKS = [
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
]  # fmt: skip

# (name, language, code, tests): right answers that must keep scoring 1.0
HONEST = [
    ("cpp_main_without_return", "cpp", RIGHT_CPP, CPP_ASSERTS),
    ("cpp_main_with_argv_returning_0", "cpp", RIGHT_CPP, CPP_RETURNS_1),
    ("cpp_braces_in_literals_and_comments", "cpp", RIGHT_CPP,
     {"test": "#include <cassert>\n#include <string>\n// int main() { here }\n"
              "int main(void) {\n  std::string s = \"}{\"; char c = '}';\n"
              "  /* } */ assert(add(1, 2) == 3 && s[0] == c);\n  return 0;\n}\n",
      "language": "cpp"}),
    ("bash_asserts", "bash", RIGHT_BASH, BASH_TESTS),
    ("bash_multipl_e_layout", "bash", RIGHT_BASH, MULTIPL_E_BASH),
    ("bash_test_ending_with_exit_0", "bash", RIGHT_BASH,
     {"test": '[ "$(add 1 2)" = 3 ] || exit 1\nexit 0\n', "language": "bash"}),
    ("nodejs_asserts", "nodejs", "function add(a, b) { return a + b; }\n", NODE_TESTS),
    ("nodejs_test_ending_with_process_exit_0", "nodejs", "function add(a, b) { return a + b; }\n",
     {"test": NODE_TESTS["test"] + "process.exit(0);\n", "language": "nodejs"}),
]  # fmt: skip


@pytest.fixture(scope="module")
def verifier() -> Iterator[CodeVerifier]:
    yield from embedded_code_verifier()


def _fenced(code: str, tag: str) -> str:
    return f"My answer.\n```{tag}\n{code}\n```\n"


def _installed(verifier: CodeVerifier) -> tuple[str, ...]:
    async def languages() -> tuple[str, ...]:
        box = verifier._runner().sandbox  # type: ignore[attr-defined]
        await box.start()
        return box.languages

    return verifier._loop.run_until_complete(languages())  # type: ignore[attr-defined]


def _score(verifier: CodeVerifier, language: str, code: str, tests: dict) -> tuple[float, list]:
    if language not in _installed(verifier):
        pytest.skip(f"{language} is not installed here")
    return score_response(verifier, _fenced(code, language), tests)


@pytest.mark.parametrize(
    ("name", "language", "code", "tests", "why"), HACKS, ids=[h[0] for h in HACKS]
)
def test_code_that_ends_the_program_first_scores_zero(
    verifier: CodeVerifier, name: str, language: str, code: str, tests: dict, why: str
) -> None:
    score, verdicts = _score(verifier, language, code, tests)
    assert score == 0.0, f"{name}: {why}"
    assert "passed" not in verdicts


@pytest.mark.parametrize(("name", "language", "code", "tests"), HONEST, ids=[h[0] for h in HONEST])
def test_right_answers_still_pass(
    verifier: CodeVerifier, name: str, language: str, code: str, tests: dict
) -> None:
    assert _score(verifier, language, code, tests) == (
        1.0,
        ["passed"] * len(tests.get("test_list", [None])),
    ), name


def test_exit_0_before_the_test_reads_as_a_runtime_error(verifier: CodeVerifier) -> None:
    """Status 0 without the completion line: the test never ran to its end."""
    _, verdicts = _score(verifier, "bash", "exit 0\n", BASH_TESTS)
    assert verdicts == ["runtime_error", "runtime_error"]


def test_printing_a_guess_at_the_line_does_not_pass(verifier: CodeVerifier) -> None:
    """The nonce is fresh per run: a line with another nonce (or last run's) is no pass."""
    forged = "printf '\\n\\036rewardkit-done:%s\\n' 0123456789abcdef0123456789abcdef\nexit 0\n"
    assert _score(verifier, "bash", forged, BASH_TESTS)[0] == 0.0


def test_a_cpp_test_without_a_main_is_a_row_error(verifier: CodeVerifier) -> None:
    """No main to rename: the verifier cannot see the test run to its end, so the row is
    an error naming why, never a pass on exit status (nor a silent 0)."""
    tests = {"test": "static_assert(sizeof(int) >= 2);\n", "language": "cpp"}
    with pytest.raises(InvalidSampleError, match="int main"):
        _score(verifier, "cpp", RIGHT_CPP, tests)


@pytest.mark.parametrize("ending", ["kill -9 $$", "kill -TERM $$"])
def test_a_bash_solution_that_kills_its_shell_scores_zero(
    verifier: CodeVerifier, ending: str
) -> None:
    """Never passed (the status is the signal's), kept so that it stays so."""
    assert _score(verifier, "bash", f"{WRONG_BASH}{ending}\n", BASH_TESTS)[0] == 0.0
