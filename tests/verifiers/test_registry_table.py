"""guards: registry.py as a table: every entry consistent, a new verifier one module away.

The verifier registry as a table: every entry is consistent, and adding a verifier is
one module plus one test table (the walkthrough of docs/verifiers.md, run for real)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardkit.config import RewardConfig, RewardSection
from rewardkit.scoring import tasks
from rewardkit.scoring.engine import RewardEngine
from rewardkit.verifiers import registry
from rewardkit.verifiers.base import Entry, Extracted, Matcher, Verdict, Verifier, is_async
from rewardkit.verifiers.code import CODE_SOURCES, CodeVerifier

ROOT = Path(__file__).resolve().parents[2]
SECTION = RewardSection()


@pytest.mark.parametrize("entry", registry.entries(), ids=lambda e: e.family)
def test_each_factory_builds_the_kind_its_entry_declares(entry: Entry) -> None:
    verifier = entry.factory(SECTION)
    assert is_async(verifier) is entry.asynchronous
    assert isinstance(verifier.key, str) and verifier.key


@pytest.mark.parametrize("name", [n for e in registry.entries() for n in e.matches.known], ids=str)
def test_every_listed_name_is_handled_by_its_own_entry_first(name: str) -> None:
    owners = [e for e in registry.entries() if name in e.matches.known]
    assert len(owners) == 1, f"{name} is listed by {[e.family for e in owners]}"
    assert registry.match(name.rstrip("*")) is owners[0]


# The names the registry listed before it became a table (rewardkit 0.1's constants):
# the built-in rows kept every one and added none; a verifier module added to the package
# (docs/verifiers.md adds one) lists more.
LISTED_BEFORE = """
DigitalLearningGmbH/MATH-lighteval HuggingFaceH4/MATH-500 ai2_arc* aime* arc* commonsense_qa*
gpqa* gsm8k hiyouga/geometry3k lighteval/MATH math math_dapo math_dapo_reasoning mcq mmlu*
multiple_choice numina_* numina_amc_aime numina_aops_forum numina_cn_k12 numina_olympiads
numina_synthetic_amc numina_synthetic_math openai/gsm8k openbookqa* searchR1_2wikimultihopqa
searchR1_bamboogle searchR1_hotpotqa searchR1_musique searchR1_nq searchR1_popqa
searchR1_triviaqa supergpqa*
""".split()


def test_the_table_lists_what_the_registry_listed_before() -> None:
    assert sorted(n for entry in registry.BUILTIN for n in entry.matches.known) == sorted(
        LISTED_BEFORE
    )
    assert set(LISTED_BEFORE) <= set(registry.KNOWN_DATA_SOURCES)
    assert len(set(registry.KNOWN_DATA_SOURCES)) == len(registry.KNOWN_DATA_SOURCES)


def test_code_sources_come_from_the_code_verifiers_entry() -> None:
    assert registry.CODE_DATA_SOURCES == CODE_SOURCES
    assert not set(registry.KNOWN_DATA_SOURCES) & set(CODE_SOURCES)


@pytest.mark.parametrize(
    ("data_source", "family"),
    [
        ("openai/gsm8k", "gsm8k"),
        ("deepmind/code_contests", "code"),  # code before the rule families
        ("likaixin/TACO-verified", "code"),
        ("aime2024", "math (verl scale: -1 wrong)"),
        ("numina_olympiads", "math"),
        ("cais/mmlu", "multiple choice"),
        ("archive", None),
    ],
)
def test_the_table_picks(data_source: str, family: str | None) -> None:
    entry = registry.match(data_source)
    assert (entry.family if entry else None) == family


def test_the_engines_table_builds_each_verifier_once_and_closes_async_ones() -> None:
    table = registry.VerifierTable(SECTION)
    code = table.pick("apps")
    assert isinstance(code, CodeVerifier) and table.pick("codeforces") is code
    gsm8k = table.pick("gsm8k")
    assert isinstance(gsm8k, Verifier) and table.pick("openai/gsm8k") is gsm8k
    assert table.pick("nothing-knows-this") is None


# ---------------------------------------------------------------- errors at the right level


class _Buggy:
    """A verifier whose quick check has a bug (it raises ValueError on every row)."""

    key = "buggy"

    def extract(self, response: str) -> Extracted:
        return Extracted(response)

    def quick_check(self, extracted: Extracted, ground_truth: Any) -> Verdict | None:
        raise ValueError("a bug in the verifier")

    def check(self, extracted: Extracted, ground_truth: Any) -> Verdict:
        raise AssertionError("not reached")


async def test_a_verifier_bug_is_an_error_not_invalid_data() -> None:
    engine = await RewardEngine.create(RewardConfig.model_validate({"reward": {"num_workers": 1}}))
    try:
        entry = Entry("buggy", Matcher(names=frozenset({"buggy"})), lambda _: _Buggy())
        engine._verifiers = registry.VerifierTable(engine.section, [entry])
        result = await engine.score_row(
            0, {"data_source": "buggy", "response": "x", "ground_truth": "y"}
        )
    finally:
        await engine.close()
    assert result.status.value == "error"
    assert result.error == "internal error: ValueError: a bug in the verifier"


def test_a_verifier_bug_in_a_worker_is_raised_not_reported_as_bad_data() -> None:
    # verify_whole runs rows too big for the event loop; the pool turns a raise into error.
    with pytest.raises(ValueError, match="a bug"):
        tasks.verify_whole(_Buggy(), "x", "y", True)


# ---------------------------------------------------------------- docs/verifiers.md


def test_the_walkthrough_adds_a_verifier_with_one_module_and_one_table(tmp_path: Path) -> None:
    """Copy the package and the registry's tests, add docs' two files where the walkthrough
    says, change nothing else, and run the walkthrough's own pytest command on the copy."""
    doc = (ROOT / "docs" / "verifiers.md").read_text()
    run = (
        "python -m pytest tests/verifiers/test_yes_no.py tests/verifiers/test_registry_table.py -q"
    )
    for step in (
        "cp docs/example_verifier.py src/rewardkit/verifiers/yes_no.py",
        "cp docs/example_verifier_test.py tests/verifiers/test_yes_no.py",
        run,
    ):
        assert step in doc
    shutil.copytree(
        ROOT / "src" / "rewardkit",
        tmp_path / "src" / "rewardkit",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    (tmp_path / "tests" / "verifiers").mkdir(parents=True)
    shutil.copy(
        ROOT / "docs" / "example_verifier.py", tmp_path / "src/rewardkit/verifiers/yes_no.py"
    )
    shutil.copy(
        ROOT / "docs" / "example_verifier_test.py", tmp_path / "tests/verifiers/test_yes_no.py"
    )
    shutil.copy(Path(__file__), tmp_path / "tests/verifiers/test_registry_table.py")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")  # pytest's settings
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    proc = subprocess.run(  # all but this test, which would copy the copy
        [
            sys.executable,
            *run.split()[1:],
            "-rA",
            "-p",
            "no:cacheprovider",
            "-k",
            "not walkthrough",
            "-n",
            "0",  # in this process: two more pytest workers for two files cost more than they save
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    # 7 rows, inline and in a worker; the registry's table tests pass with boolq in it
    assert proc.stdout.count("PASSED tests/verifiers/test_yes_no.py") == 14, proc.stdout[-3000:]
    hint = subprocess.run(
        [
            sys.executable,
            "-c",
            "from rewardkit.verifiers import registry as r; print(r.suggest('boolqq'))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert hint.stdout.strip() == "(did you mean 'boolq'?)", hint.stderr


WARM_PROBE = """
import asyncio
from rewardkit import wiring
from rewardkit.execution.pool import WorkerPool

async def main():
    pool = WorkerPool(1, preload=wiring.WORKER_PRELOAD)
    await pool.start()
    probe = "[m in __import__('sys').modules for m in ('math_verify', 'rewardkit.scoring.tasks')]"
    print(await pool.run(eval, probe, timeout=60))
    await pool.close()

asyncio.run(main())
"""


def test_workers_fork_with_the_registered_warm_ups_done() -> None:
    """The pool knows no verifier: the wiring names what workers preload (math-verify's
    warm-up, through the math entries' ``warm_up``). A fresh interpreter, since the fork
    server is started once per process."""
    proc = subprocess.run(
        [sys.executable, "-c", WARM_PROBE], capture_output=True, text=True, timeout=120
    )
    assert proc.stdout.strip() == "[True, True]", proc.stderr[-2000:]
