"""guards: rewardkit.models._fleet_ray: a managed fleet's replicas as Ray actors: placed, scored through the router, healed after a lost actor, stopped with no process left."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from _support.processes import wait_gone
from rewardkit import RewardLoop
from rewardkit.config import RewardModelConfig, load_config
from rewardkit.errors import ConfigError
from rewardkit.models import managed
from rewardkit.models.managed import Fleet, FleetStartError, ManagedModel
from rewardkit.server.app import _model_replicas
from rewardkit.types import Status

pytestmark = pytest.mark.usefixtures("ray_cluster")

TINY = Path(__file__).resolve().parents[1] / "_support" / "tiny_replica.py"
# Two replica actors and one scoring actor fit the two 1-CPU nodes of the test cluster.
RAY = {"replica_num_cpus": 0.25, "num_cpus_per_worker": 0.25, "start_timeout_s": 60}


def family(pid: int) -> list[int]:
    """``pid`` and every process below it (read from /proc: the test cluster is this machine)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
    return found


def fleet_processes(fleet: Fleet) -> list[int]:
    """Each replica's actor process, its supervisor, the replica and what the replica started."""
    actors = [int(a["actor_pid"]) for a in fleet.actors()]
    return actors + [p for pid in fleet.pids() for p in family(pid)]


def _until_restarted(fleet: Any, rank: int, limit: float) -> None:
    """Wait (at most ``limit`` s) until replica ``rank`` restarted and the fleet is whole."""
    deadline = time.monotonic() + limit
    while fleet.replicas[rank].restarts < 1 or not fleet.health().full:
        assert time.monotonic() < deadline, fleet.health().describe()
        time.sleep(0.05)


@pytest.mark.slow  # 9-17 s on 2 cores (the scoring actors' start is most); the Fleet twin runs by default
def test_a_ray_fleet_judges_through_the_router_survives_a_lost_actor_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def tiny(
        rm: RewardModelConfig, *, port: int, rank: int, host: str
    ) -> tuple[list[str], dict[str, str]]:
        assert host == "127.0.0.1"  # every node of the test cluster is the driver's machine
        return [sys.executable, str(TINY), str(port), str(rank), "slow"], {}

    monkeypatch.setattr(managed, "replica_argv", tiny)
    model = tmp_path / "judge"  # the stand-in replicas read no model: a directory that is one
    model.mkdir()
    (model / "config.json").write_text("{}")
    rm = {"enable": True, "kind": "generative", "model_path": str(model),
          "judge": {"max_tokens": 2},
          "rollout": {"name": "transformers", "data_parallel_size": 2, "restart_backoff_s": 0.2,
                      "log_dir": str(tmp_path / "logs")}}  # fmt: skip
    config = {"reward": {"backend": "ray", "num_workers": 1, "ray": RAY, "reward_model": rm}}
    rows = [{"data_source": "x", "prompt": "two plus two", "response": f"{i}"} for i in range(40)]
    with RewardLoop(config) as loop:
        engine = loop._engine
        assert engine is not None
        (scorer,) = engine.model_scorers
        assert isinstance(scorer, ManagedModel)
        fleet = scorer.fleet
        placed = fleet.actors()
        assert len({a["node_id"] for a in placed}) == 2  # SPREAD: one replica per node
        assert scorer.router_address.startswith("127.0.0.1:")
        pids = fleet_processes(fleet)
        assert len(pids) >= 6  # per replica: its actor, the supervisor, the replica, its child

        results: list[Any] = []
        batch = threading.Thread(target=lambda: results.extend(loop.score(rows)))
        batch.start()
        while fleet.replicas[0].in_flight < 2:
            time.sleep(0.002)
        lost = fleet.kill_actor(0)  # mid-batch, as a lost node would
        batch.join(timeout=120)
        assert [r.status for r in results] == [Status.OK] * len(rows), [r.error for r in results]
        assert {r.components["judge"] for r in results} == {0.7}  # [[7]] on 0..10
        assert fleet.stats.retried >= 1  # the lost replica's requests went to the other

        _until_restarted(fleet, 0, 60)
        assert "lost its Ray actor" in fleet.replicas[0].last_exit
        assert fleet.actors()[0]["actor_pid"] != lost["actor_pid"]  # a new actor
        assert _model_replicas(engine) == {"judge": {"live": 2, "desired": 2}}
        assert [r.status for r in loop.score(rows[:4])] == [Status.OK] * 4
        pids += fleet_processes(fleet)
    assert wait_gone(pids) == []
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        "replica-0.log",
        "replica-1.log",
    ]


def _fleet(mode: str, *, replicas: int = 1, **ray: Any) -> Fleet:
    rollout = {"name": "vllm", "data_parallel_size": replicas, "start_timeout_s": 30,
               "restart_backoff_s": 0.2}  # fmt: skip
    section = {"enable": True, "kind": "generative", "model_path": "/m", "rollout": rollout}
    reward = load_config(
        {"reward": {"backend": "ray", "ray": {**RAY, **ray}, "reward_model": section}}
    ).reward

    def command(rank: int, port: int) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, str(TINY), str(port), str(rank), mode], {}

    return Fleet(reward.reward_model, name="ray fleet", command=command, ray=reward.ray)


def test_replica_actors_spread_route_survive_a_lost_actor_mid_batch_and_leave_nothing() -> None:
    marked = {"env_vars": {"REWARDKIT_TEST_MARK": "on-the-node"}}
    fleet = _fleet("slow", replicas=2, replica_num_gpus=0, runtime_env=marked)  # POST: 0.5 s
    fleet.start()
    try:
        engine = family(fleet.pids()[0])[1:]  # the supervisor's children: watchdog, replica
        environ = [Path(f"/proc/{p}/environ").read_bytes().split(b"\0") for p in engine]
        # The replica inherits its actor's environment: runtime_env, and Ray's thread count.
        assert any(b"REWARDKIT_TEST_MARK=on-the-node" in e for e in environ)
        assert all(b"OMP_NUM_THREADS=1" in e for e in environ)  # from the actor's 0.25 CPU
        placed = fleet.actors()
        assert len({a["node_id"] for a in placed}) == 2  # SPREAD: one replica per node
        assert {a["host"] for a in placed} == {"127.0.0.1"}  # the driver's node: loopback
        assert fleet.address.startswith("127.0.0.1:")
        pids = fleet_processes(fleet)
        assert len(pids) >= 10  # per replica: actor, supervisor, watchdog, replica, its child

        def post(i: int) -> httpx.Response:
            return httpx.post(f"http://{fleet.address}/v1/chat/completions", json={"i": i},
                              timeout=60, trust_env=False)  # fmt: skip

        with ThreadPoolExecutor(20) as batch:
            answers = batch.map(post, range(20))
            while fleet.replicas[0].in_flight < 2:
                time.sleep(0.002)
            lost = fleet.kill_actor(0)  # mid-batch, as a lost node would
            answers = list(answers)
        assert [a.status_code for a in answers] == [200] * 20
        assert all("[[7]]" in a.json()["choices"][0]["message"]["content"] for a in answers)
        assert fleet.stats.retried >= 1  # the lost replica's requests went to the other

        _until_restarted(fleet, 0, 30)
        assert "lost its Ray actor" in fleet.replicas[0].last_exit
        assert fleet.actors()[0]["actor_pid"] != lost["actor_pid"]  # a new actor
        assert post(99).json()["replica"] in (0, 1)

        # A replica whose server exits (its actor alive) is started again in the same actor.
        actor = fleet.actors()[1]["actor_pid"]
        pids += fleet_processes(fleet)
        fleet.kill_replica(1)
        _until_restarted(fleet, 1, 30)
        assert fleet.replicas[1].last_exit == "exited with code -9"  # its whole group SIGKILLed
        assert fleet.actors()[1]["actor_pid"] == actor
        pids += fleet_processes(fleet)
    finally:
        fleet.stop()
    assert wait_gone(pids) == []  # the lost actor's replica too: nothing outlives its actor


def test_a_replica_that_cannot_start_on_its_node_fails_with_the_log_its_actor_reads() -> None:
    fleet = _fleet("crash", replica_num_gpus=0)  # vllm's default would ask for a GPU
    with pytest.raises(FleetStartError, match=r"(?s)exited with code 3.*cannot load the model"):
        fleet.start()
    assert fleet.pids() == [] and fleet.actors() == []


def test_a_replica_no_node_can_hold_now_fails_the_start_naming_the_setting() -> None:
    import ray

    @ray.remote(num_cpus=1)
    class Blocker:
        def ready(self) -> bool:
            return True

    blockers = [Blocker.remote() for _ in range(2)]  # every CPU of the two nodes
    try:
        ray.get([b.ready.remote() for b in blockers], timeout=60)
        fleet = _fleet("serve", replica_num_gpus=0, replica_num_cpus=1, start_timeout_s=1)
        with pytest.raises(
            FleetStartError, match=r"not placed within 1s \(reward.ray.start_timeout_s\)"
        ):
            fleet.start()
        assert fleet.actors() == []
    finally:
        for blocker in blockers:
            ray.kill(blocker)


def test_a_fleet_the_cluster_cannot_hold_is_refused_naming_the_keys() -> None:
    fleet = _fleet("serve")  # vllm: tensor_model_parallel_size GPUs each; the cluster has none
    with pytest.raises(ConfigError, match=r"rollout.data_parallel_size=1 x .*replica_num_gpus=1"):
        fleet.start()


def test_a_managed_model_on_the_ray_backend_gets_a_fleet_of_actors_and_keeps_their_cpus() -> None:
    from rewardkit.models import build_model_scorers
    from rewardkit.wiring import make_pool

    rm = {"enable": True, "kind": "generative", "model_path": "/m", "rollout": {"name": "vllm"}}
    ray_cfg = load_config({"reward": {"backend": "ray", "reward_model": rm}}).reward
    (scorer,) = build_model_scorers(ray_cfg)
    assert isinstance(scorer, ManagedModel) and scorer.fleet.ray == ray_cfg.ray
    two = {**rm, "rollout": {"name": "vllm", "data_parallel_size": 2}}
    cpus = {"replica_num_cpus": 0.25}
    reserving = load_config({"reward": {"backend": "ray", "ray": cpus, "reward_model": two}})
    assert make_pool(reserving.reward).reserve_cpus == 0.5  # out of the scoring actors' share
    named = load_config({"reward": {"backend": "ray", "reward_models": {"helpful": rm}}}).reward
    (helpful,) = build_model_scorers(named)
    with pytest.raises(ConfigError, match=r"reward_models.helpful.rollout.data_parallel_size=1"):
        helpful.inner.fleet.start()  # vllm asks for a GPU; the test cluster has none
    local_cfg = load_config({"reward": {"reward_model": rm}}).reward
    (local,) = build_model_scorers(local_cfg)
    assert isinstance(local, ManagedModel) and local.fleet.ray is None


@pytest.mark.parametrize(
    ("rollout", "device", "ray_opts", "gpus"),
    [
        ({"name": "vllm", "tensor_model_parallel_size": 2}, None, {}, 2.0),
        ({"name": "sglang"}, None, {}, 1.0),
        ({"name": "transformers"}, "cpu", {}, 0.0),
        ({"name": "transformers"}, None, {}, 0.0),  # the test cluster has no GPU
        ({"name": "vllm"}, None, {"replica_num_gpus": 0.5}, 0.5),  # two replicas per GPU
    ],
)
def test_each_replica_actor_asks_for_the_gpus_its_engine_needs(
    rollout: dict[str, Any], device: str | None, ray_opts: dict[str, Any], gpus: float
) -> None:
    import ray

    from rewardkit.models._fleet_ray import replica_resources

    rm = {"enable": True, "kind": "generative", "model_path": "/m", "rollout": rollout}
    if device:
        rm["device"] = device
    reward = load_config({"reward": {"backend": "ray", "ray": ray_opts, "reward_model": rm}}).reward
    assert replica_resources(reward.reward_model, reward.ray, ray) == (1.0, gpus)


CRASHING_DRIVER = """
import json, sys, ray
from rewardkit.config import load_config
from rewardkit.models.managed import Fleet
ray.init(address=sys.argv[2], logging_level="WARNING", log_to_driver=False)
reward = load_config({"reward": {"backend": "ray", "ray": {"replica_num_cpus": 0.25,
    "replica_num_gpus": 0}, "reward_model": {"enable": True, "kind": "generative",
    "model_path": "/m", "rollout": {"name": "vllm", "data_parallel_size": 2}}}}).reward
fleet = Fleet(reward.reward_model, ray=reward.ray,
              command=lambda rank, port: ([sys.executable, sys.argv[1], str(port), str(rank)], {}))
fleet.start()
print(json.dumps([fleet.pids(), [a["actor_pid"] for a in fleet.actors()]]), flush=True)
input()
"""


def test_a_killed_driver_leaves_no_replica_actor_nor_replica(ray_cluster: Any) -> None:
    import json
    import os
    import signal
    import subprocess

    driver = subprocess.Popen(
        [sys.executable, "-c", CRASHING_DRIVER, str(TINY), ray_cluster.address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert driver.stdout is not None
    leaders, actors = json.loads(driver.stdout.readline())
    pids = actors + [p for leader in leaders for p in family(leader)]
    assert len(pids) >= 10  # per replica: actor, supervisor, watchdog, replica, its child
    driver.send_signal(signal.SIGKILL)  # no cleanup runs: Ray ends the actors of a dead owner
    driver.wait()
    assert wait_gone(pids, within_s=30) == []


def test_off_the_drivers_node_a_replica_and_the_router_listen_on_the_nodes_address() -> None:
    import ray

    from rewardkit.models._fleet_ray import EngineHost, driver_node_ip, router_host

    here = driver_node_ip()
    elsewhere = "198.51.100.7"  # a driver on a node the replica is not on (TEST-NET-2)
    assert router_host(ray, here) == "127.0.0.1"  # every node of the test cluster is here
    assert router_host(ray, elsewhere) == elsewhere  # scoring actors elsewhere must reach it
    host = ray.remote(EngineHost).options(num_cpus=0.25).remote(0, None)
    try:
        near = ray.get(host.place.remote(here), timeout=60)
        far = ray.get(host.place.remote(elsewhere), timeout=60)
    finally:
        ray.kill(host)
    assert near["host"] == "127.0.0.1"
    assert far["host"] == far["node_ip"] == here  # the node's own address, which Ray reaches
    rm = {"enable": True, "kind": "generative", "model_path": "/m", "rollout": {"name": "vllm"}}
    section = load_config({"reward": {"backend": "ray", "reward_model": rm}}).reward
    argv, _ = managed.replica_argv(section.reward_model, port=8001, rank=0, host=far["host"])
    assert argv[argv.index("--host") + 1] == here  # the engine listens there
