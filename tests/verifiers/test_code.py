"""guards: code.py: extraction, ground-truth formats, verdicts, modes, embedded and remote.

Attacks on the verifier (solutions that cheat) are in test_code_hacks.py.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from _support.serving import running_app
from rewardkit.config import SandboxFusionConfig
from rewardkit.errors import InvalidSampleError, RemoteError, ScorerError
from rewardkit.sandbox import Sandbox, SandboxOptions
from rewardkit.sandbox.server import create_sandbox_app
from rewardkit.verifiers.base import AsyncVerifier
from rewardkit.verifiers.code import (
    CodeVerifier,
    extract_code,
    is_code_source,
    make_code_verifier,
    parse_tests,
)


def fenced(code: str, tag: str = "python") -> str:
    return f"Here is my solution.\n```{tag}\n{code}\n```\nDone."


ADD = "a, b = map(int, input().split())\nprint(a + b)"
ADD_TESTS = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}


@pytest.fixture
async def verifier() -> Iterator[CodeVerifier]:
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True))
    yield v
    await v.aclose()


# ---------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("```python\nprint(1)\n```", ("print(1)", "python")),
        ("first\n```py\nx = 1\n```\nthen\n```cpp\nint main(){}\n```\n", ("int main(){}", "cpp")),
        ("```\nprint(2)\n```", ("print(2)", None)),
        ("1. step\n   ```python\n   if x:\n       y()\n   ```", ("if x:\n    y()", "python")),
        ("```python title=sol.py\nprint(3)\n```", ("print(3)", "python")),
        ("```python\nprint(1)\n```\n```python\nprint(2)", ("print(1)", "python")),  # unclosed last
    ],
)
def test_extract_last_complete_block(response: str, expected: tuple[str, str | None]) -> None:
    assert extract_code(response) == expected


@pytest.mark.parametrize(
    "response", ["no code here", "```python\nprint(1)", "```python\n   \n```", ""]
)
def test_no_code_block(response: str) -> None:
    assert extract_code(response) is None


def test_extraction_is_linear_on_huge_inputs() -> None:
    started = time.perf_counter()
    assert extract_code("```" * 200_000 + "x\n" * 200_000) is None
    assert time.perf_counter() - started < 5


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("codecontests", True), ("deepmind/code_contests", True), ("apps", True), ("codeparrot/apps", True),
        ("taco", True), ("likaixin/TACO-verified", True), ("codeforces", True), ("open-r1/codeforces", True),
        ("humaneval", True), ("openai_humaneval", True), ("evalplus/humanevalplus", True), ("mbpp", True),
        ("openai/gsm8k", False), ("lighteval/MATH", False), ("math_dapo", False), ("perhapss", False),
    ],
)  # fmt: skip
def test_is_code_source(name: str, expected: bool) -> None:
    assert is_code_source(name) is expected


# ---------------------------------------------------------------------- ground truth


def test_parse_io_dict_and_json_string() -> None:
    suite = parse_tests(json.dumps({"inputs": [["1", "2"], "3\n"], "outputs": [["3"], "3"]}))
    assert suite.kind == "stdio"
    assert suite.cases == (("1\n2\n", "3"), ("3\n", "3"))


def test_parse_call_based_apps_and_prime_layouts() -> None:
    apps = parse_tests({"inputs": [[1, [2, 3]]], "outputs": [[6]], "fn_name": "f"})
    assert (apps.kind, apps.fn_name, apps.cases) == ("call", "f", (([1, [2, 3]], [6]),))
    prime = parse_tests({"inputs": ["1\n[2, 3]"], "outputs": ["6"], "fn_name": "f"})
    assert prime.cases == (([1, [2, 3]], 6),)


def test_parse_assert_layouts() -> None:
    mbpp = parse_tests(
        {
            "test_list": ["assert f(1) == 2"],
            "test_setup_code": "import math",
            "test_imports": ["import re"],
        }
    )
    assert (mbpp.kind, mbpp.cases, mbpp.setup) == (
        "assert",
        ("assert f(1) == 2",),
        "import re\nimport math",
    )
    assert parse_tests(["assert g() == 1", "assert g() != 2"]).cases == (
        "assert g() == 1",
        "assert g() != 2",
    )
    assert parse_tests({"assert_case": ["assert h()"]}).kind == "assert"
    human = parse_tests(
        {"test": "def check(candidate):\n    assert candidate(1) == 1\n", "entry_point": "ident"}
    )
    assert human.kind == "program" and human.cases[0].rstrip().endswith("check(ident)")
    assert parse_tests("assert k() == 3").kind == "program"
    nested = parse_tests({"input_output": json.dumps(ADD_TESTS), "language": "cpp"})
    assert (nested.kind, nested.language) == ("stdio", "cpp")


@pytest.mark.parametrize(
    ("ground_truth", "reason"),
    [
        ("not json at all", "neither JSON"),
        ({"inputs": ["1"], "outputs": []}, "1 inputs but 0 outputs"),
        ({"inputs": [], "outputs": []}, "no test cases"),
        ({"foo": 1}, "needs 'inputs'/'outputs'"),
        (42, "must be an object or a list"),
        ({"inputs": ["{bad"], "outputs": ["1"], "fn_name": "f"}, "not JSON lines"),
    ],
)
def test_bad_ground_truth_is_invalid(ground_truth: object, reason: str) -> None:
    with pytest.raises(InvalidSampleError, match=reason):
        parse_tests(ground_truth)


# ---------------------------------------------------------------------- verdicts (embedded sandbox)


async def test_is_an_async_verifier(verifier: CodeVerifier) -> None:
    assert isinstance(verifier, AsyncVerifier)
    assert verifier.key.startswith("code:continuous")


async def test_all_cases_pass(verifier: CodeVerifier) -> None:
    verdict = await verifier.ascore(fenced(ADD), ADD_TESTS, {})
    assert verdict.score == 1.0
    assert verdict.extra == {"acc": True, "passed": 2, "total": 2, "verdicts": ["passed", "passed"]}


async def test_each_verdict_type(verifier: CodeVerifier) -> None:
    code = (
        "n = int(input())\n"
        "if n == 1: print(1)\n"  # passed
        "elif n == 2: print(5)\n"  # wrong_answer
        "else: raise RuntimeError('crash')\n"  # runtime_error
    )
    tests = {"inputs": ["1", "2", "3"], "outputs": ["1", "2", "3"]}
    verdict = await verifier.ascore(fenced(code), tests, {})
    assert verdict.extra["verdicts"] == ["passed", "wrong_answer", "runtime_error"]
    assert verdict.score == pytest.approx(1 / 3) and verdict.extra["acc"] is False


async def test_timeout_verdict() -> None:
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True), run_timeout_s=1)
    try:
        tests = {"inputs": ["1"], "outputs": ["1"]}
        verdict = await v.ascore(fenced("while True:\n    pass"), tests, {})
        assert verdict.extra["verdicts"] == ["timeout"] and verdict.score == 0.0
    finally:
        await v.aclose()


async def test_compile_error(verifier: CodeVerifier) -> None:
    verdict = await verifier.ascore(fenced("int main() { return missing; }", "cpp"), ADD_TESTS, {})
    assert verdict.extra["verdicts"] == ["compile_error", "compile_error"]
    assert verdict.score == 0.0


async def test_cpp_by_fence_tag_and_trailing_whitespace_tolerance(verifier: CodeVerifier) -> None:
    code = (
        '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d   \\n\\n\\n",a+b);}'
    )
    verdict = await verifier.ascore(fenced(code, "cpp"), ADD_TESTS, {})
    assert verdict.score == 1.0


async def test_language_from_extra_info(verifier: CodeVerifier) -> None:
    verdict = await verifier.ascore(
        fenced("read a b; echo $((a + b))", ""), ADD_TESTS, {"language": "bash"}
    )
    assert verdict.score == 1.0


async def test_no_code_block_scores_zero_with_a_reason(verifier: CodeVerifier) -> None:
    verdict = await verifier.ascore("I think the answer is 3.", ADD_TESTS, {})
    assert verdict.score == 0.0 and verdict.extra["reason"] == "no code block"


async def test_call_based_function_and_leetcode_class(verifier: CodeVerifier) -> None:
    tests = {"inputs": [[[1, 2, 3]], [[4]]], "outputs": [[6], [4]], "fn_name": "total"}
    plain = await verifier.ascore(fenced("def total(xs):\n    return sum(xs)"), tests, {})
    assert plain.score == 1.0, plain
    leetcode = "class Solution:\n    def total(self, xs: List[int]) -> int:\n        return sum(xs) + (xs == [4])"
    verdict = await verifier.ascore(fenced(leetcode), json.dumps(tests), {})
    assert verdict.extra["verdicts"] == ["passed", "wrong_answer"]
    tuples = {"inputs": ["[1, 2]"], "outputs": ["[2, 1]"], "fn_name": "swap"}  # PRIME layout
    swapped = await verifier.ascore(
        fenced("def swap(p):\n    return (p[1], p[0])"), tests | tuples, {}
    )
    assert swapped.score == 1.0


async def test_call_based_output_printed_by_the_solution_is_not_the_answer(
    verifier: CodeVerifier,
) -> None:
    tests = {"inputs": [[2]], "outputs": [[4]], "fn_name": "double"}
    verdict = await verifier.ascore(
        fenced("def double(x):\n    print(4)\n    return x * 3"), tests, {}
    )
    assert verdict.extra["verdicts"] == ["wrong_answer"]


async def test_assert_style_failed_assert_is_wrong_answer(verifier: CodeVerifier) -> None:
    tests = {"assert_case": ["assert f(2) == 4", "assert f(3) == 7", "assert g(1)"]}
    verdict = await verifier.ascore(fenced("def f(x):\n    return 2 * x"), tests, {})
    assert verdict.extra["verdicts"] == ["passed", "wrong_answer", "runtime_error"]


async def test_humaneval_program(verifier: CodeVerifier) -> None:
    gt = {
        "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n",
        "entry_point": "add_all",
    }
    good = await verifier.ascore(fenced("def add_all(xs):\n    return sum(xs)"), gt, {})
    bad = await verifier.ascore(fenced("def add_all(xs):\n    return 0"), gt, {})
    assert (good.score, bad.score) == (1.0, 0.0)


async def test_all_or_nothing_stops_at_the_first_failure() -> None:
    v = make_code_verifier(
        SandboxFusionConfig(allow_unisolated=True), mode="all_or_nothing", run_timeout_s=60
    )
    try:
        code = "n = int(input())\nimport time\nif n > 1: time.sleep(30)\nprint(-n)"
        tests = {"inputs": ["1", "2", "3"], "outputs": ["1", "2", "3"]}
        started = time.perf_counter()
        verdict = await v.ascore(fenced(code), tests, {})
        assert time.perf_counter() - started < 20  # did not wait for the slow cases
        assert verdict.score == 0.0
        assert verdict.extra["verdicts"][0] == "wrong_answer"
        assert set(verdict.extra["verdicts"][1:]) <= {"skipped"}
        full = await v.ascore(fenced(ADD), ADD_TESTS, {})
        assert full.score == 1.0
    finally:
        await v.aclose()


async def test_continuous_scores_only_the_first_max_cases() -> None:
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True), max_cases=2)
    try:
        tests = {"inputs": ["1", "2", "3"], "outputs": ["1", "2", "999"]}
        verdict = await v.ascore(fenced("print(input())"), tests, {})
        assert (verdict.score, verdict.extra["total"]) == (1.0, 2)
    finally:
        await v.aclose()


async def test_missing_language_is_a_scorer_error_not_zero(verifier: CodeVerifier) -> None:
    with pytest.raises(ScorerError, match="not available"):
        await verifier.ascore(fenced("(print 1)", "racket"), ADD_TESTS, {"language": "racket"})


async def test_invalid_ground_truth_raises_invalid_sample(verifier: CodeVerifier) -> None:
    with pytest.raises(InvalidSampleError):
        await verifier.ascore(fenced(ADD), "garbage", {})


# ---------------------------------------------------------------------- remote sandbox


@pytest.fixture(scope="module")
def sandbox_url() -> Iterator[str]:
    app = create_sandbox_app(Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2)))
    with running_app(app, wait_ready=False) as base:
        yield base


@pytest.mark.parametrize("suffix", ["/run_code", "", "/"])
async def test_remote_sandbox_gives_the_same_verdicts(sandbox_url: str, suffix: str) -> None:
    v = make_code_verifier(SandboxFusionConfig(url=sandbox_url + suffix, max_concurrent=4))
    try:
        tests = {"inputs": ["1 2", "2 2", "x"], "outputs": ["3", "5", "0"]}
        verdict = await v.ascore(fenced(ADD), tests, {})
        assert verdict.extra["verdicts"] == ["passed", "wrong_answer", "runtime_error"]
    finally:
        await v.aclose()


async def test_remote_sandbox_down_is_a_remote_error_not_zero() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    v = make_code_verifier(SandboxFusionConfig(url=f"http://127.0.0.1:{port}/run_code"))
    try:
        with pytest.raises(RemoteError):
            await v.ascore(fenced(ADD), ADD_TESTS, {})
    finally:
        await v.aclose()


@pytest.fixture(scope="module")
def keyed_sandbox_url() -> Iterator[str]:
    app = create_sandbox_app(
        Sandbox(SandboxOptions(allow_unisolated=True, max_concurrent=2)), api_key="k3y"
    )
    with running_app(app, wait_ready=False) as base:
        yield f"{base}/run_code"


async def test_remote_sandbox_with_an_api_key(keyed_sandbox_url: str) -> None:
    """sandbox_fusion.api_key is sent as a bearer token; without it the row is an error."""
    keyed = make_code_verifier(SandboxFusionConfig(url=keyed_sandbox_url, api_key="k3y"))
    bare = make_code_verifier(SandboxFusionConfig(url=keyed_sandbox_url))
    try:
        assert (await keyed.ascore(fenced(ADD), ADD_TESTS, {})).score == 1.0
        with pytest.raises(RemoteError):
            await bare.ascore(fenced(ADD), ADD_TESTS, {})
    finally:
        await keyed.aclose()
        await bare.aclose()


def test_an_empty_sandbox_api_key_is_refused() -> None:
    with pytest.raises(ValueError, match="is empty"):
        SandboxFusionConfig(api_key=" ")


async def test_python_asserts_run_in_the_harness_other_languages_by_exit_status(
    verifier: CodeVerifier,
) -> None:
    """The test harness is Python's; a C++ assert program is still judged by its exit code."""
    cpp = "#include <cassert>\nint add(int a, int b) { return a + b; }"
    tests = {"test": "int main() { assert(add(1, 2) == 3); return 0; }", "language": "cpp"}
    box = verifier._runner().sandbox  # the embedded sandbox
    await box.start()
    if "cpp" not in box.languages:
        pytest.skip("g++ is not installed")
    assert (await verifier.ascore(fenced(cpp, "cpp"), tests, {})).score == 1.0


# ---------------------------------------------------------------------- the Python test harness

JUDGED = {"test_list": [f"assert add({i}, 1) == {i + 1}" for i in range(10)]}


async def test_judged_cases_each_get_a_fresh_solution_process() -> None:
    """10 asserts (three harness runs): state the solution keeps does not leak between cases."""
    code = "calls = []\ndef add(a, b):\n    calls.append(1)\n    return a + b if len(calls) == 1 else 0"
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True), max_cases=None)
    try:
        verdict = await v.ascore(fenced(code), JUDGED, {})
    finally:
        await v.aclose()
    assert verdict.extra["verdicts"] == ["passed"] * 10


async def test_a_judged_case_that_hangs_times_out_alone() -> None:
    code = "def add(a, b):\n    while a == 1:\n        pass\n    return a + b"
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True, run_timeout_s=2.0))
    try:
        verdict = await v.ascore(fenced(code), {"test_list": JUDGED["test_list"][:4]}, {})
    finally:
        await v.aclose()
    assert verdict.extra["verdicts"] == ["passed", "timeout", "passed", "passed"]
    assert verdict.score == 0.75


async def test_all_or_nothing_stops_the_harness_at_the_first_failure() -> None:
    code = "def add(a, b):\n    return a + b if a != 1 else -1"
    v = make_code_verifier(SandboxFusionConfig(allow_unisolated=True), mode="all_or_nothing")
    try:
        verdict = await v.ascore(fenced(code), JUDGED, {})
    finally:
        await v.aclose()
    assert verdict.score == 0.0
    assert verdict.extra["verdicts"] == ["passed", "wrong_answer"] + ["skipped"] * 8  # 3 runs
