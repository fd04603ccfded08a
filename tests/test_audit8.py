"""Audit 8d: what the project says it fixed, checked from outside with real parts.

Each check drives a surface a user drives: the CLI in a subprocess on a JSONL file, the
reward server on 127.0.0.1, ``RewardLoop``, the embedded code sandbox, user reward
functions in worker processes, and verl 0.9.1's own reward managers (in verl's
environment, when one is found). Rows are facts with the reason each exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from rewardkit import RewardLoop
from _support.serving import running_server

ROOT = Path(__file__).resolve().parents[1]

# --- 1. wrong answers that earlier fast paths or extraction scored as right ----------

# (response's answer, ground truth, why it must score 0)
WRONG_MATH = [
    ("x=2,y=1", "x=1,y=2", "named values swapped: the set {1, 2} is equal, the solution is not"),
    ("a=1, b=2", "a=2, b=1", "the same with spaces after the comma"),
    ("2^{31}", "2^{31}-1", "a float comparison calls them equal (relative error 5e-10)"),
    ("10^{-10}", "0", "a tolerance calls a tiny number zero"),
    (r"2\frac{1}{4}", r"\frac{1}{2}", "a mixed number read as a product: 2 * 1/4"),
    ("32, 349", "32349", "a list of two numbers read as one number with a thousands comma"),
    (r"\text{for}", "f", "a word read as the product f*o*r, or its first letter"),
]
RIGHT_MATH = [("x=1,y=2", "x=1,y=2"), (r"2\frac{1}{4}", r"\frac{9}{4}")]  # guards


def _math_rows() -> list[dict[str, Any]]:
    pairs = [(a, g) for a, g, _ in WRONG_MATH] + RIGHT_MATH
    return [
        {"id": str(i), "data_source": "lighteval/MATH", "response": f"So $\\boxed{{{a}}}$.",
         "ground_truth": g}
        for i, (a, g) in enumerate(pairs)
    ]  # fmt: skip


def _expected_math_scores() -> list[float]:
    return [0.0] * len(WRONG_MATH) + [1.0] * len(RIGHT_MATH)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_wrong_math_answers_score_zero_with_rewardkit_score(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _math_rows()))
    proc = _cli("score", str(source), "-o", "out.jsonl", "--no-progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["ok"] * len(results)
    assert [r["score"] for r in results] == _expected_math_scores()


@pytest.mark.parametrize("fast_paths", [True, False])
def test_wrong_math_answers_score_zero_through_the_server(fast_paths: bool) -> None:
    """And with fast_paths off, /metrics shows no row decided inline: all went to a worker."""
    config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": fast_paths}}}
    rows = _math_rows()
    with running_server(config) as base:
        answer = httpx.post(f"{base}/v1/score", json={"samples": rows}, timeout=120)
        metrics = httpx.get(f"{base}/metrics", timeout=30).text
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [r["status"] for r in results] == ["ok"] * len(rows)
    assert [r["score"] for r in results] == _expected_math_scores()
    quick = _engine_event(metrics, "quick")
    assert quick == 0.0 if not fast_paths else quick > 0


def _engine_event(metrics: str, event: str) -> float:
    label = f'rewardkit_engine_events_total{{event="{event}",source="engine"}}'
    for line in metrics.splitlines():
        if line.startswith(label):
            return float(line.split()[-1])
    raise AssertionError(f"{label} not in /metrics")


# --- 2. reward.verifiers.fast_paths=false --------------------------------------------


def test_fast_paths_false_changes_a_verdict_and_sends_every_answer_to_math_verify() -> None:
    """math-verify calls sqrt(2) + 1e-20 equal to sqrt(2) (its numeric comparison); the
    exact fast path does not. README "How it avoids..." names this pair."""
    rows = [
        {"data_source": "lighteval/MATH", "response": r"$\boxed{\sqrt{2}+10^{-20}}$",
         "ground_truth": r"\sqrt{2}"},
        {"data_source": "lighteval/MATH", "response": r"$\boxed{\frac{1}{2}}$", "ground_truth": "0.5"},
        {"data_source": "lighteval/MATH", "response": r"$\boxed{3}$", "ground_truth": "4"},
    ]  # fmt: skip
    outcome = {}
    for fast_paths in (True, False):
        config = {"reward": {"num_workers": 1, "verifiers": {"fast_paths": fast_paths}}}
        with RewardLoop(config) as loop:
            scores = [r.score for r in loop.score(rows)]
            outcome[fast_paths] = (scores, dict(loop.engine.stats), loop.engine.pool.stats["tasks"])
    assert outcome[True][0] == [0.0, 1.0, 0.0]
    assert outcome[False][0] == [1.0, 1.0, 0.0]  # the verdict that changes
    assert outcome[True][1]["quick"] == 3
    assert outcome[False][1]["quick"] == 0 and outcome[False][1]["pool"] == 3
    assert outcome[False][2] == 3  # one math-verify task per row in the worker pool


# --- 3. code that fakes success in the embedded sandbox ------------------------------

MBPP = {"test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}
STDIO = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}
WRONG = {"mbpp": "def add(a, b):\n    return a - b\n",
         "stdio": "a, b = map(int, input().split())\nprint(a - b)\n"}  # fmt: skip
RIGHT = {"mbpp": "def add(a, b):\n    return a + b\n",
         "stdio": "a, b = map(int, input().split())\nprint(a + b)\n"}  # fmt: skip
# (name, code appended to the wrong solution, how it would earn credit)
CHEATS = [
    ("os_exit", "import os\nos._exit(0)\n", "exit 0 before the checks run"),
    ("sys_exit", "import sys\nsys.exit(0)\n", "SystemExit(0) is a clean exit"),
    ("raise_system_exit", "raise SystemExit\n", "SystemExit(None) is exit status 0"),
    ("patch_assertion_error",
     "import builtins\nbuiltins.AssertionError = type('AssertionError', (BaseException,), {})\n",
     "a failing assert raises something the harness does not catch as a failure"),
    ("fake_passed_lines", "print('passed')\nprint('All tests passed')\nprint('3')\nprint('7')\n",
     "a harness that reads 'passed' or the expected output from stdout"),
    ("reexec_with_O",
     "import os, sys\nif not sys.flags.optimize:\n"
     "    os.execv(sys.executable, [sys.executable, '-O', *sys.argv])\n",
     "re-run the program under -O, where assert statements are compiled away"),
    ("exit_hooks", "import atexit, os, sys\natexit.register(lambda: os._exit(0))\n"
     "sys.excepthook = lambda *a: os._exit(0)\n", "turn a failing run's exit status into 0"),
]  # fmt: skip
CODE_SOURCES = {"mbpp": ("mbpp", MBPP), "stdio": ("codecontests", STDIO)}


@pytest.fixture(scope="module")
def code_loop() -> Iterator[RewardLoop]:
    with RewardLoop({"reward": {"num_workers": 1, "timeout_s": 30}}) as loop:
        yield loop


def _code_row(kind: str, code: str) -> dict[str, Any]:
    source, tests = CODE_SOURCES[kind]
    return {"data_source": source, "response": f"```python\n{code}```",
            "ground_truth": json.dumps(tests)}  # fmt: skip


@pytest.mark.parametrize("kind", ["mbpp", "stdio"])
def test_code_that_fakes_success_scores_zero(code_loop: RewardLoop, kind: str) -> None:
    rows = [_code_row(kind, WRONG[kind] + cheat) for _, cheat, _ in CHEATS]
    rows.append(_code_row(kind, RIGHT[kind]))  # guard: the sandbox does run honest code
    results = code_loop.score(rows)
    assert [r.status.value for r in results] == ["ok"] * len(rows)
    scores = {name: r.score for (name, _, _), r in zip(CHEATS, results, strict=False)}
    assert scores == dict.fromkeys(scores, 0.0)
    assert results[-1].score == 1.0


# --- 4. user reward functions: called every time, failures typed --------------------

FUNCTIONS = """
import asyncio, os, random, time

def rnd(data_source, solution_str, ground_truth, extra_info, **kw):
    return random.random()

async def arnd(data_source, solution_str, ground_truth, extra_info, **kw):
    await asyncio.sleep(0)
    return random.random()

def boom(data_source, solution_str, ground_truth, extra_info, **kw):
    raise ValueError("boom")

def hang(data_source, solution_str, ground_truth, extra_info, **kw):
    time.sleep(60)
    return 1.0

async def ahang(data_source, solution_str, ground_truth, extra_info, **kw):
    await asyncio.sleep(60)
    return 1.0

def die(data_source, solution_str, ground_truth, extra_info, **kw):
    os._exit(0)
"""
SAME_ROW = {"data_source": "anything", "response": "same", "ground_truth": "1"}


def _run_function(path: Path, name: str, cache: bool = False) -> list[Any]:
    """Two batches: three identical rows, then the same row again."""
    function = {"path": str(path), "name": name, "cache": cache}
    config = {"reward": {"num_workers": 2, "timeout_s": 2, "async_timeout_s": 2,
                         "custom_reward_function": function}}  # fmt: skip
    with RewardLoop(config) as loop:
        return loop.score([SAME_ROW] * 3) + loop.score([SAME_ROW])


@pytest.fixture(scope="module")
def functions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fns") / "audit8_functions.py"
    path.write_text(FUNCTIONS)
    return path


@pytest.mark.parametrize("name", ["rnd", "arnd"])
def test_a_random_function_is_called_on_every_row_unless_cache_is_true(
    functions: Path, name: str
) -> None:
    fresh = [r.score for r in _run_function(functions, name)]
    assert len(set(fresh)) == 4  # four calls, across and within batches
    cached = [r.score for r in _run_function(functions, name, cache=True)]
    assert len(set(cached)) == 1


@pytest.mark.parametrize(
    ("name", "status", "reason"),
    [
        ("boom", "error", "ValueError: boom"),
        ("hang", "timeout", "timed out"),
        ("ahang", "timeout", "timed out"),
        ("die", "error", "worker process died"),
    ],
)
def test_a_failing_function_gives_a_typed_status_not_zero(
    functions: Path, name: str, status: str, reason: str
) -> None:
    results = _run_function(functions, name)
    assert [r.status.value for r in results] == [status] * 4
    assert all(r.score is None and reason in (r.error or "") for r in results)


# --- 5. verl's own managers on a mixed batch ------------------------------------------


def _verl_python() -> str | None:
    """A Python with verl 0.9.1: REWARDKIT_VERL_PYTHON, CI's .venv-compat, or this one."""
    candidates = [os.environ.get("REWARDKIT_VERL_PYTHON"), str(ROOT / ".venv-compat/bin/python"),
                  sys.executable]  # fmt: skip
    for python in filter(None, candidates):
        if Path(python).exists() and _has_verl(python):
            return python
    return None


def _has_verl(python: str) -> bool:
    probe = [
        python,
        "-c",
        "import importlib.util as u; raise SystemExit(u.find_spec('verl') is None)",
    ]
    return subprocess.run(probe, capture_output=True, timeout=60).returncode == 0


def test_verls_managers_score_a_mixed_batch_and_name_the_unknown_source(tmp_path: Path) -> None:
    python = _verl_python()
    if python is None:
        pytest.skip("no Python with verl (set REWARDKIT_VERL_PYTHON; .ci/run builds .venv-compat)")
    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  num_workers: 1\n  timeout_s: 30\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])}
    proc = subprocess.run(
        [python, str(ROOT / "tests/_support/verl_managers.py"), str(config)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    for manager in ("naive", "batch", "rewardkit"):
        assert "unknown data_source 'my_unknown_source'" in report[f"{manager}/raise"]
        filled = report[f"{manager}/fill"]
        assert filled["scores"] == [1.0, 1.0, 1.0, 0.0]  # gsm8k, MATH, mbpp; filled row
        assert filled["status"] == ["ok", "ok", "ok", "invalid"]
        assert "my_unknown_source" in filled["error"][3]
    assert "closing a scorer failed" not in proc.stderr


def test_the_trainer_adapters_close_their_scorer_at_exit_without_a_warning() -> None:
    """Before: every process that used an adapter ended with "rewardkit: closing a scorer
    failed: cannot schedule new futures after shutdown" (atexit ran after
    concurrent.futures stopped taking work, so the worker pool was not stopped)."""
    script = (
        "from rewardkit.integrations import verl\n"
        "print(verl.compute_score('openai/gsm8k', '#### 72', '72', {},\n"
        "      rewardkit_config={'reward': {'num_workers': 1}})['score'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1.0"
    assert "closing a scorer failed" not in proc.stderr, proc.stderr


# --- 6. GSM8K answer formats ------------------------------------------------------------

# (response, why it is a real model's way of giving 18)
GSM8K_FORMATS = [
    ("She has 10 + 8 = 18 apples.\nThe answer is 18", "Llama and Mistral few-shot style"),
    ("She has 10 + 8 = 18 apples. So $\\boxed{18}$", "Qwen-Math and R1 style"),
    ("She has 10 + 8 = 18 apples.\nA: 18", "the Q:/A: few-shot style"),
    ("She has 10 + 8 = 18 apples.\n#### 18", "the dataset's own format"),
]


@pytest.mark.parametrize("method", ["auto", "strict"])
def test_gsm8k_formats_score_one_in_auto_and_only_hashes_in_strict(method: str) -> None:
    rows = [{"data_source": "openai/gsm8k", "response": r, "ground_truth": "18"}
            for r, _ in GSM8K_FORMATS]  # fmt: skip
    config = {"reward": {"num_workers": 1, "verifiers": {"gsm8k_method": method}}}
    with RewardLoop(config) as loop:
        scores = [r.score for r in loop.score(rows)]
    assert scores == ([1.0] * 4 if method == "auto" else [0.0, 0.0, 0.0, 1.0])


def test_gsm8k_strict_reads_only_the_end_as_verl_does() -> None:
    row = {"data_source": "openai/gsm8k", "response": "#### 18" + " and so on" * 40,
           "ground_truth": "18"}  # fmt: skip
    config = {"reward": {"num_workers": 1, "verifiers": {"gsm8k_method": "strict"}}}
    with RewardLoop(config) as loop:
        [result] = loop.score([row])
    assert result.score == 0.0


# (response, ground truth, why it must score 0): in the default `auto` mode a LaTeX
# expression after an answer cue is read as one of its numbers, which credits a wrong
# answer whenever that number is the ground truth.
GSM8K_EXPRESSIONS = [
    (r"The answer is \frac{1}{2}", "2", "one half read as its denominator (verl's flexible too)"),
    (r"#### \frac{1}{2}", "2", "the same after '####' (verl's strict rule finds no answer)"),
    (r"The answer is $\frac{3}{4}$.", "4", "three quarters read as 4"),
    (r"<answer>\frac{1}{2}</answer>", "2", "an answer tag holding a fraction"),
    (r"The answer is \sqrt{4}", "4", "sqrt(4) is 2, read as 4"),
    (r"The answer is 2^{2}", "2", "2^2 is 4, read as its exponent"),
    (r"The answer is $5 \times 4$", "5", "5 x 4 is 20, read as 5: verl's flexible rule gives 0"),
    (r"The answer is $18 \div 2$", "18", "18 / 2 is 9, read as 18: verl's flexible rule gives 0"),
]
# and the numbers next to LaTeX that are still the answer (response, why it is 18)
GSM8K_NOT_EXPRESSIONS = [
    (r"\textbf{Answer:} 18", "a bold label before the number"),
    (r"The answer is \textbf{18}.", "a bold number: a text wrapper, not an argument"),
    (r"Total: $3 \times 6 = 18$", "the result of a product"),
    (r"$\frac{36}{2} = 18$ dollars", "the result of a fraction"),
    (r"<think>so 17</think> The answer is 18!", "an exclamation mark is no factorial here"),
]


@pytest.fixture(scope="module")
def default_loop() -> Iterator[RewardLoop]:
    with RewardLoop({"reward": {"num_workers": 1}}) as loop:
        yield loop


@pytest.mark.parametrize(("response", "ground_truth", "why"), GSM8K_EXPRESSIONS)
def test_gsm8k_auto_does_not_credit_one_number_read_out_of_an_expression(
    default_loop: RewardLoop, response: str, ground_truth: str, why: str
) -> None:
    row = {"data_source": "openai/gsm8k", "response": response, "ground_truth": ground_truth}
    [result] = default_loop.score([row])
    assert (result.status.value, result.score) == ("ok", 0.0), why


@pytest.mark.parametrize(("response", "why"), GSM8K_NOT_EXPRESSIONS)
def test_gsm8k_auto_still_reads_a_number_beside_latex(
    default_loop: RewardLoop, response: str, why: str
) -> None:
    row = {"data_source": "openai/gsm8k", "response": response, "ground_truth": "18"}
    [result] = default_loop.score([row])
    assert (result.status.value, result.score) == ("ok", 1.0), why


def test_gsm8k_auto_reads_only_the_conclusion(default_loop: RewardLoop) -> None:
    """README's "Data sources": only the conclusion answers, the text after the last
    ``</think>``; a response closing its thinking twice (``<think> 24 x 3 = 72 </think>
    72 </think>``, tests/verifiers/test_extraction_real.py) concludes with the text
    between the closers. A number only in the thinking is no answer."""
    rows = [
        ("<think>so 18</think> I cannot answer.", 0.0),
        ("<think> 6 x 3 = 18 </think> 18 </think>", 1.0),
    ]
    results = default_loop.score(
        [{"data_source": "openai/gsm8k", "response": r, "ground_truth": "18"} for r, _ in rows]
    )
    assert [(r.status.value, r.score) for r in results] == [("ok", want) for _, want in rows]


# --- the CLI's stdout belongs to the result rows ------------------------------------

PRINTING = """
def sync_print(data_source, solution_str, ground_truth, extra_info, **kw):
    print("debug: scoring", solution_str)
    return 1.0

async def async_print(data_source, solution_str, ground_truth, extra_info, **kw):
    print("debug: scoring", solution_str)
    return 1.0
"""


@pytest.mark.parametrize("name", ["sync_print", "async_print"])
def test_a_printing_function_does_not_break_the_jsonl_on_stdout(tmp_path: Path, name: str) -> None:
    """Before: `rewardkit score rows.jsonl -o - | trainer` got "debug: scoring a" lines
    between the rows when an async function printed (it runs on the loop, in the CLI's
    own process; sync functions' workers already sent stdout to stderr)."""
    (tmp_path / "printing.py").write_text(PRINTING)
    rows = [{"data_source": "x", "response": r, "ground_truth": "1"} for r in "ab"]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    proc = _cli(
        "score", "rows.jsonl", "-o", "-", "--no-progress",
        "reward.custom_reward_function.path=printing.py",
        f"reward.custom_reward_function.name={name}", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is a row
    assert [(r["response"], r["score"]) for r in results] == [("a", 1.0), ("b", 1.0)]
    assert "debug: scoring a" in proc.stderr and "debug: scoring b" in proc.stderr
