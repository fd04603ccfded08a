"""guards: rewardkit.models.managed and rewardkit.engines: launched replicas, the router, healing, shutdown, and verl's keys as engine flags."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from _support.processes import wait_gone
from rewardkit import RewardLoop
from rewardkit.config import RewardModelConfig, load_config
from rewardkit.engines import FLAGS, NEUTRAL, VERL_INERT, command_line
from rewardkit.errors import ConfigError
from rewardkit.models import managed
from rewardkit.models.managed import Fleet, FleetStartError, ManagedModel, replica_argv
from rewardkit.server.app import _model_replicas
from rewardkit.types import Status

TINY = Path(__file__).resolve().parents[1] / "_support" / "tiny_replica.py"


def managed_rm(model: str = "/models/judge", **rollout: Any) -> RewardModelConfig:
    rollout = {"name": "vllm", **rollout}
    rm = {"enable": True, "kind": "generative", "model_path": model, "rollout": rollout}
    return load_config({"reward": {"reward_model": rm}}).reward.reward_model


# ---------------------------------------------------------------------- the engine table

# Each engine's documented flag for each verl key (vllm/engine/arg_utils.py,
# sglang/srt/server_args.py, `transformers serve --help`): the table must say the same.
DOCUMENTED = {
    "vllm": {
        "tensor_model_parallel_size": ("--tensor-parallel-size", 2),
        "gpu_memory_utilization": ("--gpu-memory-utilization", 0.8),
        "max_num_seqs": ("--max-num-seqs", 256),
        "max_num_batched_tokens": ("--max-num-batched-tokens", 8192),
        "max_model_len": ("--max-model-len", 4096),
        "seed": ("--seed", 42),
        "dtype": ("--dtype", "bfloat16"),
    },
    "sglang": {
        "tensor_model_parallel_size": ("--tp-size", 2),
        "gpu_memory_utilization": ("--mem-fraction-static", 0.8),
        "max_num_seqs": ("--max-running-requests", 256),
        "max_num_batched_tokens": ("--max-prefill-tokens", 8192),
        "max_model_len": ("--context-length", 4096),
        "seed": ("--random-seed", 42),
        "dtype": ("--dtype", "bfloat16"),
    },
}


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_each_verl_key_becomes_the_engines_documented_flag(engine: str) -> None:
    values = {key: value for key, (_, value) in DOCUMENTED[engine].items()}
    argv, env = command_line(engine, values, model="/m", port=8001, rank=3, kind="generative")
    for key, (flag, value) in DOCUMENTED[engine].items():
        expected = value + 3 if key == "seed" else value  # replica r: seed + r, as verl
        assert argv[argv.index(flag) + 1] == str(expected), key
    assert env == {}


def test_vllm_and_sglang_command_lines_start_as_documented() -> None:
    vllm, _ = command_line("vllm", {}, model="/m", port=8001, rank=0, kind="generative")
    assert vllm[:3] == ["vllm", "serve", "/m"]
    assert vllm[vllm.index("--port") + 1] == "8001"
    assert vllm[vllm.index("--host") + 1] == "127.0.0.1"
    assert "--runner" not in vllm
    sglang, _ = command_line("sglang", {}, model="/m", port=8002, rank=0, kind="discriminative")
    assert sglang[1:5] == ["-m", "sglang.launch_server", "--model-path", "/m"]
    assert "--is-embedding" in sglang  # served at /v1/embeddings, read as verl reads it
    pooled, _ = command_line("vllm", {}, model="/m", port=1, rank=0, kind="discriminative")
    assert pooled[pooled.index("--runner") + 1] == "pooling"  # /classify


def test_a_discriminative_model_on_transformers_is_served_by_rewardkit_serve() -> None:
    argv, _ = command_line(
        "transformers", {"prompt_length": 64}, model="/m", port=8003, rank=0, kind="discriminative"
    )
    assert argv[1:4] == ["-m", "rewardkit.cli", "serve"]
    assert argv[argv.index("--port") + 1] == "8003"
    assert "reward.reward_model.model_path=/m" in argv
    assert "reward.reward_model.prompt_length=64" in argv


def test_rewardkit_serve_replicas_get_the_in_process_models_keys() -> None:
    """A discriminative model on transformers runs in rewardkit serve replicas: its dtype
    (rollout.dtype, verl's place for it, or reward_model.dtype), threads and batch budgets
    reach them, and what has no use there is refused at load."""
    section = {
        "enable": True,
        "kind": "discriminative",
        "model_path": "/models/rm",
        "num_threads": 2,
        "max_batch_tokens": 4096,
        "max_padding_tokens": 64,
        "rollout": {"name": "transformers", "dtype": "float16"},
    }
    rm = load_config({"reward": {"reward_model": section}}).reward.reward_model
    argv, _ = replica_argv(rm, port=1, rank=0)
    for key, value in [("dtype", "float16"), ("num_threads", 2), ("max_batch_tokens", 4096),
                       ("max_padding_tokens", 64.0)]:  # fmt: skip
        assert f"reward.reward_model.{key}={value}" in argv
    own = {**section, "dtype": "bfloat16", "rollout": {"name": "transformers"}}
    rm = load_config({"reward": {"reward_model": own}}).reward.reward_model
    assert "reward.reward_model.dtype=bfloat16" in replica_argv(rm, port=1, rank=0)[0]
    for rollout, message in [
        ({"seed": 7}, "rollout.seed=7: a discriminative model launched with"),
        ({"engine_kwargs": {"transformers": {"attn_implementation": "sdpa"}}},
         "rollout.engine_kwargs.transformers: a discriminative model"),
        ({"dtype": "half"}, "rollout.dtype='half': the rewardkit serve replicas load"),
    ]:  # fmt: skip
        bad = {**section, "rollout": {"name": "transformers", **rollout}}
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config({"reward": {"reward_model": bad}})
    clash = {**section, "dtype": "bfloat16"}
    with pytest.raises(
        ConfigError, match=re.escape("rollout.dtype='float16' and dtype='bfloat16' disagree")
    ):
        load_config({"reward": {"reward_model": clash}})


@pytest.mark.parametrize(
    ("section", "message"),
    [
        # launched vLLM or SGLang: the engine's own settings are rollout.*
        (
            {"rollout": {"name": "vllm"}, "dtype": "float16"},
            "dtype='float16' is a setting of a "
            "model rewardkit runs itself (backend hf), which the vllm servers",
        ),
        ({"rollout": {"name": "sglang"}, "device": "cuda:3"}, "device='cuda:3' is a setting"),
        ({"rollout": {"name": "vllm"}, "num_threads": 2}, "num_threads=2 is a setting"),
        ({"rollout": {"name": "vllm"}, "max_padding_tokens": 8}, "max_padding_tokens=8.0 is"),
        ({"rollout": {"name": "vllm"}, "max_batch_tokens": 99}, "max_batch_tokens=99 is"),
        # a server started by hand
        (
            {"backend": "vllm", "url": "http://127.0.0.1:1", "dtype": "bfloat16"},
            "the vllm server at reward_model.url",
        ),
        ({"backend": "tei", "url": "http://127.0.0.1:1", "replicas": 4}, "replicas=4 copies"),
    ],
)
def test_in_process_model_keys_where_no_such_model_runs_are_refused(section, message) -> None:
    rm = {"enable": True, "kind": "discriminative", "model_path": "/models/rm"}
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config({"reward": {"reward_model": {**rm, **section}}})


def test_a_judge_is_refused_the_policys_tokenizer_it_never_reads() -> None:
    rm = {"enable": True, "kind": "generative", "backend": "openai", "url": "http://127.0.0.1:1",
          "input_tokenizer": "/models/policy"}  # fmt: skip
    with pytest.raises(ConfigError, match="input_tokenizer decodes rows given as the policy"):
        load_config({"reward": {"reward_model": rm}})


def test_a_judges_batch_budget_and_a_launched_transformers_device_are_honoured() -> None:
    judge = managed_rm(name="transformers")
    judge = load_config({"reward": {"reward_model": {**judge.model_dump(exclude_defaults=True),
                         "max_batch_tokens": 999, "device": "cpu"}}}).reward.reward_model  # fmt: skip
    argv, _ = replica_argv(judge, port=1, rank=0)
    assert argv[argv.index("--device") + 1] == "cpu" and judge.max_batch_tokens == 999


@pytest.mark.parametrize(
    ("replicas", "per_replica", "visible", "groups"),
    [
        (2, 1, ["0", "1"], ["0", "1"]),  # a GPU each
        (2, 2, ["4", "5", "6", "7"], ["4,5", "6,7"]),  # CUDA_VISIBLE_DEVICES's own numbers
        (3, 1, ["0", "1"], ["0", "1", "0"]),  # fewer than asked: in turn, shared
        (2, 2, ["0"], []),  # not one replica fits: the engine says why
        (2, 1, [], []),  # no GPU
    ],
)
def test_local_replicas_get_gpus_of_their_own_while_there_are_enough(
    replicas, per_replica, visible, groups
) -> None:
    assert managed.gpu_groups(replicas, per_replica, visible) == groups


def test_a_local_fleet_gives_each_replica_its_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without placement, every vLLM replica of a local fleet loaded on GPU 0 (Ray sets the
    GPUs of each actor; a local fleet must do it itself)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3,5,7")
    rm = managed_rm(data_parallel_size=2, tensor_model_parallel_size=2)
    fleet = Fleet(rm)
    envs = [fleet._engine_command(rank, 9000 + rank)[1] for rank in range(2)]
    assert [env["CUDA_VISIBLE_DEVICES"] for env in envs] == ["2,3", "5,7"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert "CUDA_VISIBLE_DEVICES" not in Fleet(rm)._engine_command(0, 9000)[1]


def test_full_determinism_asks_each_engine_for_batch_invariance() -> None:
    on = {"full_determinism": True}
    _, env = command_line("vllm", on, model="/m", port=1, rank=0, kind="generative")
    assert env == {"VLLM_BATCH_INVARIANT": "1"}
    sglang, _ = command_line("sglang", on, model="/m", port=1, rank=0, kind="generative")
    assert "--enable-deterministic-inference" in sglang


def test_lengths_give_the_max_model_length_when_it_is_not_set() -> None:
    rm = managed_rm(prompt_length=1000, response_length=500)
    argv, _ = replica_argv(rm, port=1, rank=0)
    assert argv[argv.index("--max-model-len") + 1] == "1500"


def test_engine_kwargs_of_the_launched_engine_pass_through() -> None:
    rm = managed_rm(
        engine_kwargs={
            "vllm": {
                "enforce_eager": True,
                "swap_space": 4,
                "skip": False,
                "hf_overrides": {"a": 1},
            },
            "sglang": {"not_mine": 1},
        }
    )
    argv, _ = replica_argv(rm, port=1, rank=0)
    tail = argv[argv.index("--enforce-eager") :]
    assert tail == ["--enforce-eager", "--swap-space", "4", "--hf-overrides", '{"a": 1}']
    assert "--not-mine" not in argv and "--skip" not in argv


def test_the_table_covers_every_engine_and_every_key() -> None:
    assert set(NEUTRAL) == set(FLAGS)
    for key, per_engine in FLAGS.items():
        assert set(per_engine) == {"vllm", "sglang", "transformers"}, key


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tensor_model_parallel_size", 2),
        ("gpu_memory_utilization", 0.5),
        ("max_num_seqs", 8),
        ("max_num_batched_tokens", 512),
        ("max_model_len", 1024),
    ],
)
def test_a_key_transformers_cannot_honour_is_refused_naming_key_and_engine(key, value) -> None:
    with pytest.raises(ConfigError, match=rf"rollout.{key}={value}: the transformers engine"):
        managed_rm(name="transformers", **{key: value})


@pytest.mark.parametrize(
    ("rm", "message"),
    [
        ({"url": "http://127.0.0.1:1", "rollout": {"name": "vllm"}}, "give one of them"),
        ({"backend": "tei", "rollout": {"name": "vllm"}}, "leave reward_model.backend out"),
        ({"replicas": 2, "rollout": {"name": "vllm"}}, "rollout.data_parallel_size"),
        ({"judge": {"n": 4}, "rollout": {"name": "transformers"}}, "ignores a request's n"),
        ({"rollout": {"name": "vllm", "enforce_eager": False}}, "rollout.enforce_eager=False"),
        ({"rollout": {"name": "vllm", "engine_kwargs": {"vlm": {}}}}, "'vlm' is not an engine"),
        ({"rollout": {"name": "vllm", "restart_backoff_s": 0}}, "restart_backoff_s"),
        ({"rollout": {"name": "trtllm"}}, "rollout.name"),
    ],
)
def test_managed_settings_that_cannot_work_are_refused_at_load(rm, message) -> None:
    section = {"enable": True, "kind": "generative", "model_path": "/models/judge", **rm}
    with pytest.raises(ConfigError, match=message):
        load_config({"reward": {"reward_model": section}})


def test_a_managed_fleet_on_ray_loads_and_what_cannot_run_is_refused_naming_the_key() -> None:
    rm = {"enable": True, "kind": "generative", "model_path": "/m",
          "rollout": {"name": "vllm", "tensor_model_parallel_size": 2}}  # fmt: skip
    loaded = load_config({"reward": {"backend": "ray", "reward_model": rm}}).reward
    assert loaded.reward_model.managed and loaded.backend == "ray"
    few = {"replica_num_gpus": 1}
    with pytest.raises(ConfigError, match=r"reward.ray.replica_num_gpus=1 is fewer GPUs than "
                       r"reward_model.rollout.tensor_model_parallel_size=2"):  # fmt: skip
        load_config({"reward": {"backend": "ray", "ray": few, "reward_model": rm}})
    client = {"address": "ray://head:10001"}
    with pytest.raises(ConfigError, match=r"reward.ray.address='ray://head:10001'"):
        load_config({"reward": {"backend": "ray", "ray": client, "reward_model": rm}})


def test_verls_other_rollout_keys_are_accepted_at_verls_defaults() -> None:
    rm = managed_rm(**VERL_INERT, _target_="verl.workers.config.RolloutConfig")
    assert rm.rollout.name == "vllm"


# ---------------------------------------------------------------------- fleets of tiny replicas


def tiny_fleet(mode: str = "serve", *, replicas: int = 2, **rollout: Any) -> Fleet:
    settings = {"restart_backoff_s": 0.2, "start_timeout_s": 30, **rollout}
    rm = managed_rm(data_parallel_size=replicas, **settings)
    rm = rm.model_copy(update={"http": rm.http.model_copy(update={"backoff_base_s": 0.01})})

    def command(rank: int, port: int) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, str(TINY), str(port), str(rank), mode], {}

    return Fleet(rm, name="tiny fleet", command=command)


def post(fleet: Fleet, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"http://{fleet.address}/v1/chat/completions", json=body, timeout=30)


def family(pid: int) -> list[int]:
    """``pid`` and every process below it (read from /proc)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):  # children of every thread
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
    return found


def our_children() -> set[int]:
    """Processes below this one, but multiprocessing's fork server and resource tracker
    (one each per interpreter, started by the first worker pool, living until exit)."""

    def helper(pid: int) -> bool:
        try:
            return b"from multiprocessing." in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    return {pid for pid in family(os.getpid())[1:] if not helper(pid)}


def test_router_spreads_passes_4xx_back_once_and_names_the_fleet_when_none_answers() -> None:
    fleet = tiny_fleet()
    fleet.start()
    try:
        seen = {post(fleet, {"i": i}).json()["replica"] for i in range(6)}
        assert seen == {0, 1}
        before = dict(fleet.stats.by_replica)
        refused = post(fleet, {"status": 422})
        assert refused.status_code == 422  # a client error is the caller's: never retried
        assert sum(fleet.stats.by_replica.values()) == sum(before.values()) + 1
        failing = post(fleet, {"status": 500})  # every replica answers 500: retried, then typed
        assert failing.status_code == 503
        assert "tiny fleet: no replica answered" in failing.json()["error"]
        assert "HTTP 500" in failing.json()["error"]
    finally:
        fleet.stop()


def test_full_determinism_sends_the_same_request_to_the_same_replica() -> None:
    fleet = tiny_fleet(full_determinism=True)
    fleet.start()
    try:
        for body in ({"a": 1}, {"a": 2}, {"a": 3}):
            assert len({post(fleet, body).json()["replica"] for _ in range(4)}) == 1
    finally:
        fleet.stop()


def test_a_dead_replica_is_restarted_and_stop_leaves_no_process() -> None:
    fleet = tiny_fleet()
    before = our_children()
    fleet.start()
    pids = [p for pid in fleet.pids() for p in family(pid)]
    assert len(pids) >= 4  # each replica and the child it started
    killed = fleet.kill_replica(0)
    assert wait_gone([killed]) == []
    deadline = time.monotonic() + 30
    while fleet.replicas[0].restarts < 1 or not fleet.health().full:
        assert time.monotonic() < deadline, fleet.health().describe()
        assert post(fleet, {}).status_code == 200  # replica 1 answers meanwhile
        time.sleep(0.05)
    assert "exited with code" in fleet.replicas[0].last_exit
    pids += [p for pid in fleet.pids() for p in family(pid)]
    fleet.stop()
    assert wait_gone(pids) == []
    assert wait_gone(list(our_children() - before)) == []  # the pool's processes exit too


def test_all_replicas_down_fails_typed_naming_the_fleet() -> None:
    fleet = tiny_fleet(restart_backoff_s=60)
    fleet.start()
    try:
        for rank in (0, 1):
            fleet.kill_replica(rank)
        deadline = time.monotonic() + 10
        while fleet.health().live:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        answer = post(fleet, {})
        assert answer.status_code == 503
        assert "tiny fleet: no replica answered" in answer.json()["error"]
        assert "0 of 2 live" in answer.json()["error"]
    finally:
        fleet.stop()


def test_a_replica_that_cannot_start_fails_the_start_with_its_last_log_lines() -> None:
    fleet = tiny_fleet("crash", replicas=1)
    with pytest.raises(FleetStartError, match=r"(?s)exited with code 3.*cannot load the model"):
        fleet.start()
    assert fleet.pids() == []


def test_a_replica_that_never_answers_times_out_naming_the_setting() -> None:
    fleet = tiny_fleet("mute", replicas=1, start_timeout_s=1)
    with pytest.raises(FleetStartError, match=r"within 1s \(rollout.start_timeout_s\)"):
        fleet.start()
    pids = [r.proc.pid for r in fleet.replicas if r.proc is not None]
    assert wait_gone(pids) == []


def test_draining_lets_a_request_in_flight_finish_before_the_replicas_stop() -> None:
    fleet = tiny_fleet(replicas=1)
    fleet.start()
    answers: list[httpx.Response] = []
    slow = threading.Thread(target=lambda: answers.append(post(fleet, {"sleep": 1.0})))
    slow.start()
    while not fleet.replicas[0].in_flight:
        time.sleep(0.01)
    fleet.stop()
    slow.join()
    assert answers[0].status_code == 200


# ---------------------------------------------------------------------- real transformers serve

ASYNC_FUNCTION = """
import httpx

async def compute_score(data_source, solution_str, ground_truth, extra_info,
                        reward_router_address, reward_model_tokenizer):
    body = {"messages": [{"role": "user", "content": solution_str}], "max_tokens": 1}
    async with httpx.AsyncClient(trust_env=False) as client:
        answer = await client.post(
            f"http://{reward_router_address}/v1/chat/completions", json=body, timeout=60
        )
    text = answer.json()["choices"][0]["message"]["content"]
    return {"score": 1.0 if "[[7]]" in text else 0.0, "vocab": len(reward_model_tokenizer)}
"""


def judge_heal_and_stop(model: str, tmp_path: Path, rows: int) -> None:
    """A judge and an async custom function score through the router of two replicas;
    one is killed mid-batch; every row ends right, the replica comes back, /ready says
    so, and closing leaves no process."""
    function = tmp_path / "fn.py"
    function.write_text(ASYNC_FUNCTION)
    rm = {
        "enable": True,
        "kind": "generative",
        "model_path": model,
        "judge": {"max_tokens": 2},
        "rollout": {"name": "transformers", "data_parallel_size": 2, "restart_backoff_s": 0.2,
                    "log_dir": str(tmp_path / "logs")},
    }  # fmt: skip
    config = {
        "reward": {
            "num_workers": 1,
            "reward_model": rm,
            "custom_reward_function": {"path": str(function)},
        }
    }
    batch_rows = [{"data_source": "x", "prompt": "what is two plus two", "response": f"{i}"}
                  for i in range(rows)]  # fmt: skip
    before = our_children()
    with RewardLoop(config) as loop:
        engine = loop._engine
        assert engine is not None
        (scorer,) = engine.model_scorers
        assert isinstance(scorer, ManagedModel)
        fleet = scorer.fleet
        pids = [p for pid in fleet.pids() for p in family(pid)]
        results: list[Any] = []
        batch = threading.Thread(target=lambda: results.extend(loop.score(batch_rows)))
        batch.start()
        while fleet.stats.requests < rows // 4:
            time.sleep(0.002)
        fleet.kill_replica(0)  # mid-batch
        batch.join(timeout=120)
        assert [r.status for r in results] == [Status.OK] * rows, [
            (i, r.error) for i, r in enumerate(results) if r.error
        ]
        assert {r.components["judge"] for r in results} == {0.7}  # [[7]] on 0..10
        assert {r.components["rule"] for r in results} == {1.0}
        assert {r.extra["vocab"] for r in results} == {len(_tokenizer(model))}
        deadline = time.monotonic() + 60
        while fleet.replicas[0].restarts < 1 or not fleet.health().full:
            assert time.monotonic() < deadline, fleet.health().describe()
            time.sleep(0.05)
        assert _model_replicas(engine) == {"judge": {"live": 2, "desired": 2}}
        assert loop.score(batch_rows[:4])[0].status is Status.OK
        pids += [p for pid in fleet.pids() for p in family(pid)]
        logs = sorted(p.name for p in (tmp_path / "logs").iterdir())
        assert logs == ["replica-0.log", "replica-1.log"]
    assert wait_gone(pids) == []
    assert wait_gone(list(our_children() - before)) == []  # the pool's processes exit too


def test_judge_and_router_function_through_tiny_replicas_heal_and_stop(
    judge_lm, tmp_path, monkeypatch
) -> None:
    # The whole path but the engine: the command line launches the tiny replica.
    def tiny(
        rm: RewardModelConfig, *, port: int, rank: int, host: str
    ) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, str(TINY), str(port), str(rank)], {}

    monkeypatch.setattr(managed, "replica_argv", tiny)
    judge_heal_and_stop(judge_lm, tmp_path, rows=40)


@pytest.mark.slow  # 14 s on a quiet 2-core machine, 80 s under load; the tiny-replica twin runs by default
def test_two_transformers_serve_replicas_judge_heal_and_leave_nothing(judge_lm, tmp_path) -> None:
    pytest.importorskip("openai", reason="transformers serve needs transformers[serving]")
    judge_heal_and_stop(judge_lm, tmp_path, rows=24)


def _tokenizer(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)


CRASHING_OWNER = """
import json, sys, time
from rewardkit.config import load_config
from rewardkit.models.managed import Fleet
rm = load_config({"reward": {"reward_model": {"enable": True, "kind": "generative",
    "model_path": "/m", "rollout": {"name": "vllm", "data_parallel_size": 2}}}}).reward.reward_model
fleet = Fleet(rm, command=lambda rank, port: ([sys.executable, sys.argv[1], str(port), str(rank)], {}))
fleet.start()
print(json.dumps(fleet.pids()), flush=True)
time.sleep(3600)
"""


def test_a_killed_owner_leaves_no_replica_nor_what_a_replica_started() -> None:
    import subprocess

    owner = subprocess.Popen(
        [sys.executable, "-c", CRASHING_OWNER, str(TINY)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert owner.stdout is not None
    leaders = json.loads(owner.stdout.readline())
    deadline = time.monotonic() + 10
    while any(len(family(p)) < 3 for p in leaders):  # supervisor, replica, its child
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pids = [p for leader in leaders for p in family(leader)]
    owner.send_signal(signal.SIGKILL)  # no cleanup code runs: only the kernel's signal
    owner.wait()
    assert wait_gone(pids) == []


SYNC_FUNCTION = """
import httpx

def compute_score(data_source, solution_str, ground_truth, extra_info, reward_router_address):
    body = {"messages": [{"role": "user", "content": solution_str}]}
    answer = httpx.post(f"http://{reward_router_address}/v1/chat/completions", json=body,
                        timeout=60, trust_env=False)
    return 1.0 if "[[7]]" in answer.json()["choices"][0]["message"]["content"] else 0.0
"""


@pytest.mark.slow  # about 10 s (a second loop and fleet); the async path runs by default
def test_a_sync_function_in_a_worker_gets_the_router_and_no_tokenizer_it_does_not_take(
    judge_lm, tmp_path, monkeypatch
) -> None:
    def tiny(
        rm: RewardModelConfig, *, port: int, rank: int, host: str
    ) -> tuple[list[str], dict[str, str]]:
        return [sys.executable, str(TINY), str(port), str(rank)], {}

    monkeypatch.setattr(managed, "replica_argv", tiny)
    function = tmp_path / "fn.py"
    function.write_text(SYNC_FUNCTION)
    rm = {"enable": True, "kind": "generative", "model_path": judge_lm, "weight": 0.0,
          "rollout": {"name": "transformers"}}  # fmt: skip
    config = {"reward": {"num_workers": 1, "reward_model": rm,
                         "custom_reward_function": {"path": str(function)}}}  # fmt: skip
    with RewardLoop(config) as loop:
        results = loop.score([{"data_source": "x", "prompt": "q", "response": "r"}] * 3)
    assert [(r.status, r.components["rule"]) for r in results] == [(Status.OK, 1.0)] * 3


@pytest.mark.slow  # two `rewardkit serve` replicas load torch and the model: 11 s or more
def test_a_discriminative_model_served_by_rewardkit_replicas_scores_as_in_process(
    llama_chat_rm, tmp_path
) -> None:
    rows = [{"data_source": "x", "prompt": "what is two plus two", "response": f"i think {i}"}
            for i in range(6)]  # fmt: skip
    local = {"enable": True, "model_path": llama_chat_rm, "device": "cpu"}
    launched = {**local, "rollout": {"name": "transformers", "data_parallel_size": 2,
                                     "log_dir": str(tmp_path / "logs")}}  # fmt: skip
    with RewardLoop({"reward": {"num_workers": 1, "reward_model": local}}) as loop:
        expected = [r.components["rm"] for r in loop.score(rows)]
    with RewardLoop({"reward": {"num_workers": 1, "reward_model": launched}}) as loop:
        got = loop.score(rows)
    assert [r.status for r in got] == [Status.OK] * len(rows), [r.error for r in got]
    assert [r.components["rm"] for r in got] == pytest.approx(expected, abs=1e-5)


@pytest.mark.slow  # a server and its replica each load torch and the model: 20 s or more
def test_serve_reports_replicas_and_sigterm_stops_them_all(llama_chat_rm, tmp_path) -> None:
    from _support.serving import serving_process

    overrides = [
        "reward.num_workers=1",
        "reward.reward_model.enable=true",
        f"reward.reward_model.model_path={llama_chat_rm}",
        "reward.reward_model.rollout.name=transformers",
        f"reward.reward_model.rollout.log_dir={tmp_path}",
    ]
    with serving_process(*overrides, within_s=120) as (server, base):
        ready = httpx.get(f"{base}/ready", timeout=10).json()
        assert ready == {"ready": True, "replicas": {"rm": {"live": 1, "desired": 1}}}
        below = family(server.pid)[1:]
        assert len(below) >= 3  # the pool's processes, the replica's supervisor and replica
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    assert wait_gone(below) == []


def test_each_named_model_may_launch_its_own_fleet_and_refusals_name_it() -> None:
    judge = {"kind": "generative", "model_path": "/m", "rollout": {"name": "vllm"}}
    config = load_config({"reward": {"reward_models": {"helpful": judge}}})
    assert config.reward.reward_models["helpful"].managed
    client = {"backend": "ray", "ray": {"address": "ray://head:10001"}}
    with pytest.raises(ConfigError, match=r"reward_models.helpful.rollout.name='vllm' with"):
        load_config({"reward": {**client, "reward_models": {"helpful": judge}}})
    no_path = {**judge, "model_path": None}
    with pytest.raises(ConfigError, match=r"reward_models.helpful.model_path: set it"):
        load_config({"reward": {"reward_models": {"helpful": no_path}}})
