"""guards: the code verifier's verdict on code that fakes success in the embedded sandbox.

Each cheat is appended to a wrong solution and scored through RewardLoop (a real worker
pool and sandbox): it must score 0, and the honest solution 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from rewardkit import RewardLoop

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
