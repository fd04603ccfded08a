"""guards: `rewardkit score` and `rewardkit serve` with reward.backend=ray.

The command line and the reward server on the cluster: `rewardkit score|serve reward.backend=ray`,
including a drained shutdown on SIGTERM.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import ray

from _support.cli import CLI
from _support.serving import free_port, in_thread, running_app, serving_process
from rewardkit.config import load_config
from rewardkit.server.app import create_app

pytestmark = pytest.mark.usefixtures("ray_cluster")


def test_the_reward_server_scores_on_ray_actors() -> None:
    config = load_config(
        None, ["reward.backend=ray", "reward.num_workers=2", "reward.ray.num_cpus_per_worker=0.5"]
    )
    app = create_app(config)
    with running_app(app) as base:
        rows = [
            {"id": "a", "data_source": "openai/gsm8k", "response": "#### 72", "ground_truth": "72"},
            {
                "id": "b",
                "data_source": "lighteval/MATH",
                "response": r"\boxed{\dfrac12}",
                "ground_truth": "0.5",
            },
            {
                "id": "c",
                "data_source": "lighteval/MATH",
                "response": r"\boxed{3 \pm 2^{1/2}}",  # \pm: past the fast paths, to a worker
                "ground_truth": r"3 \pm \sqrt{2}",
            },
            {"id": "d", "data_source": "no/such/source", "response": "x"},
        ]
        with httpx.Client(base_url=base, trust_env=False, timeout=60) as client:
            answer = client.post("/v1/score", json={"samples": rows})
        assert answer.status_code == 200
        results = answer.json()["results"]
        assert [(r["id"], r["status"], r["score"]) for r in results] == [
            ("a", "ok", 1.0),
            ("b", "ok", 1.0),
            ("c", "ok", 1.0),
            ("d", "invalid", None),
        ]
        pool = app.state.rewardkit.engine.pool
        assert pool.stats["tasks"] >= 1 and len(pool.actors) == 2


def test_rewardkit_score_joins_the_cluster_at_its_address(ray_cluster: Any, tmp_path: Path) -> None:
    rows = [
        {"data_source": "openai/gsm8k", "response": "#### 1,000", "ground_truth": "1000"},
        {
            "data_source": "lighteval/MATH",
            "response": r"\boxed{2\sqrt{2}}",
            "ground_truth": r"\sqrt8",
        },
        {"data_source": "lighteval/MATH", "response": r"\boxed{3}", "ground_truth": "4"},
    ]
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = [
        *CLI,
        "score",
        str(source),
        "-o",
        str(out),
        "--no-progress",
        "reward.backend=ray",
        "reward.num_workers=2",
        "reward.ray.num_cpus_per_worker=0.5",
        f"reward.ray.address={ray_cluster.address}",
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["status"], r["score"]) for r in scored] == [("ok", 1.0), ("ok", 1.0), ("ok", 0.0)]
    assert ray.cluster_resources().get("CPU") == 2  # the command left the cluster running


def test_an_address_nothing_answers_at_is_a_fast_config_error(tmp_path: Path) -> None:
    port = free_port()  # a port nobody listens on
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"data_source": "openai/gsm8k", "response": "#### 1", "ground_truth": "1"}\n'
    )
    command = [
        *CLI,
        "score",
        str(source),
        "--no-progress",
        "reward.backend=ray",
        f"reward.ray.address=127.0.0.1:{port}",
    ]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert f"reward.ray.address='127.0.0.1:{port}': nothing answers" in proc.stderr
    assert time.monotonic() - started < 30  # Ray itself would retry for minutes


SLOW = """
import pathlib, time

def compute_score(data_source, solution_str, ground_truth, extra_info, **kw):
    pathlib.Path(ground_truth).touch()  # tells the test that the row is on its actor
    time.sleep(float(solution_str))
    return 0.5
"""


def test_sigterm_drains_the_ray_backed_server_and_exits_zero(
    ray_cluster: Any, write_module: Any, tmp_path: Path
) -> None:
    # ray.init on the server's main thread must not replace uvicorn's SIGTERM handler
    # (the request in flight would get a 500 and the server exit 15).
    path = write_module("slow_reward", SLOW)
    overrides = (
        "reward.backend=ray",
        "reward.num_workers=1",
        "reward.ray.num_cpus_per_worker=0.5",
        f"reward.ray.address={ray_cluster.address}",
        f"reward.custom_reward_function.path={path}",
    )
    piped = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    with serving_process(*overrides, within_s=90, **piped) as (server, base):
        started = tmp_path / "started"
        row = {"data_source": "x", "response": "1", "ground_truth": str(started)}  # a 1 s nap
        body = {"samples": [row]}
        request, answers = in_thread(
            lambda: httpx.post(f"{base}/v1/score", json=body, timeout=60, trust_env=False)
        )
        deadline = time.monotonic() + 30
        while not started.exists():
            assert time.monotonic() < deadline, "the row never reached its actor"
            time.sleep(0.05)
        os.kill(server.pid, signal.SIGTERM)
        request.join(timeout=60)
        assert server.wait(timeout=60) == 0, server.stdout.read() if server.stdout else ""
        assert answers and answers[0].status_code == 200
        assert answers[0].json()["results"][0]["score"] == 0.5
