"""guards: the typed seams: the Pool protocol and config fields for mypy users.

The typed seams: pools satisfy the Pool protocol, and config fields type-check for users
without the pydantic mypy plugin (no positional ``Field`` defaults).
"""

from __future__ import annotations

import ast
from pathlib import Path

import rewardkit
from rewardkit.config import RewardSection
from rewardkit.execution.base import Pool
from rewardkit.execution.health import Counted, Supervised
from rewardkit.execution.pool import WorkerPool
from rewardkit.execution.ray_pool import RayWorkerPool
from rewardkit.wiring import make_pool

SRC = Path(rewardkit.__file__).parent


def test_no_positional_field_default_in_src() -> None:
    """``Field(5.0, gt=0)`` types as a required argument without the pydantic plugin, so
    ``HttpOptions()`` is a mypy error for users; ``Field(default=5.0, ...)`` is not."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_field = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Field"
            if is_field and node.args:
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_both_pools_are_pools_and_report_to_metrics() -> None:
    """The engine, /ready and /metrics see either backend through the same protocol."""
    local = WorkerPool(1)  # not started: no process is spawned
    ray = RayWorkerPool(1)  # not started: ray is not even imported
    for pool in (local, ray):
        assert isinstance(pool, Pool)
        assert isinstance(pool, Counted) and isinstance(pool, Supervised)
        assert pool.stats["tasks"] == 0
    assert ray.health().live == 0


def test_make_pool_picks_the_local_backend_by_default() -> None:
    assert isinstance(make_pool(RewardSection()), WorkerPool)


def test_an_object_without_stats_is_not_counted() -> None:
    """A model scorer that keeps no counters is skipped by /metrics, not read as {}."""
    assert not isinstance(object(), Counted)
    assert not isinstance(object(), Supervised)


def test_a_replica_error_keeps_its_extra_across_pickling() -> None:
    """A judge's parse failure on a replica reaches the row with its text, as a typed
    attribute of the error (nothing bolted on), and survives Ray's pickling."""
    import pickle

    from rewardkit.models.judge import JudgeParseError
    from rewardkit.models.replicas import ReplicaError, _portable

    original = JudgeParseError("no score in the judge's answer", "I think it is fine")
    portable = _portable(original)
    assert isinstance(portable, ReplicaError)
    back = pickle.loads(pickle.dumps(portable))
    assert str(back) == "no score in the judge's answer"
    assert back.extra == {"judge_text": "I think it is fine"}
    plain = _portable(ValueError("boom"))
    assert isinstance(plain, ReplicaError) and plain.extra == {}
    assert str(plain) == "ValueError: boom"


def test_the_code_verifier_imports_only_the_sandbox_wire_types() -> None:
    """verifiers/code.py needs the /run_code types, not the scheduler, host helpers or
    spawner client: those load only when an embedded sandbox is built."""
    import subprocess
    import sys

    probe = (
        "import sys, rewardkit.verifiers.code\n"
        "print(sorted(m for m in sys.modules if m.startswith('rewardkit.sandbox')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "['rewardkit.sandbox',",
        "'rewardkit.sandbox.options',",
        "'rewardkit.sandbox.protocol']",
    ]


def test_the_sandbox_package_keeps_its_import_paths() -> None:
    """Every name imported from ``rewardkit.sandbox`` before the split still is."""
    from rewardkit import sandbox

    for name in sandbox.__all__:
        assert getattr(sandbox, name) is not None
    assert sandbox.Sandbox.__module__ == "rewardkit.sandbox.core"
    assert sandbox._namespaces_unavailable() is None or isinstance(
        sandbox._namespaces_unavailable(), str
    )
