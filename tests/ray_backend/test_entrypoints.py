"""The command line and the reward server on the cluster: `rewardkit score|serve reward.backend=ray`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from rewardkit.config import load_config
from rewardkit.server.app import create_app
from serving import running_app

pytest.importorskip("ray")

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
        sys.executable,
        "-m",
        "rewardkit.cli",
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
    ray = pytest.importorskip("ray")
    assert ray.cluster_resources().get("CPU") == 2  # the command left the cluster running


def test_an_address_nothing_answers_at_is_a_fast_config_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    source = tmp_path / "in.jsonl"
    source.write_text(
        '{"data_source": "openai/gsm8k", "response": "#### 1", "ground_truth": "1"}\n'
    )
    command = [
        sys.executable,
        "-m",
        "rewardkit.cli",
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
