"""Ray backend benchmark: backend=ray against backend=local on this machine, and one loop's ceiling.

    .venv/bin/python benchmarks/bench_ray.py            # 256 prompts x 8 rollouts, 5 repeats
    .venv/bin/python benchmarks/bench_ray.py --quick    # 32 prompts x 8, 1 repeat (smoke)
    .venv/bin/python benchmarks/bench_ray.py --no-fast-paths  # every answer to the actors

The workload is the GRPO-shaped MATH batch of ``benchmarks/workload.py``. Each backend
starts once, scores an untimed warm-up batch (another seed: workers started, imports
done, as in the middle of training); then each of ``--repeats`` batches (different
seeds) is scored by every backend in turn, so that all of them see the same background
load on a shared machine. The table gives medians; "vs local" is the median of the
per-batch throughput ratios. Ray is a local instance on this
machine, started once by the benchmark.

Measured besides samples/s:
- per-actor throughput: the same batches through ONE scoring actor;
- scheduling overhead: trivial tasks (``divmod``) through WorkerPool and RayWorkerPool,
  wall time and driver CPU per task, a few in flight (latency) and all at once
  (throughput: the tasks coalesce into few remote calls), and the driver's CPU per row on
  the real batch;
- the one-loop ceiling, measured: one RewardLoop on Ray whose scorer costs nothing (a
  custom reward function that returns 0: one pool task per row, through the same
  actors), in rows/s, with how busy its event-loop thread was. One RewardLoop's event
  loop does the parsing, the dedup and every Ray call on one thread, so past this rate
  more actors do not help one loop (score from several). On a small machine the actors
  share the cores with the driver, so the figure is a floor.

Every batch's statuses and scores are checked to be the same across backends. Prints
markdown.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_batch

from rewardkit import RewardLoop
from rewardkit.config import RayOptions
from rewardkit.execution.pool import WorkerPool
from rewardkit.execution.ray_pool import RayWorkerPool

WARM_SEED = 10_000
NOOP_SCORER = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    return 0.0
"""


@dataclass
class Run:
    """One backend's timed batches."""

    label: str
    workers: int
    rows: int
    seconds: list[float]
    driver_cpu: list[float]
    pool_tasks: int  # rows whose check ran in a worker (engine.stats["pool"])
    loop_cpu: list[float] = field(default_factory=list)
    worker_tasks: int = 0  # the pool's tasks (spread tasks, and checks sent alone)
    calls: int | None = None  # remote calls (Ray only): tasks waiting together share one

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.median_s

    @property
    def driver_cpu_per_row(self) -> float:
        return statistics.median(self.driver_cpu) / self.rows

    @property
    def loop_cpu_per_row(self) -> float:
        return statistics.median(self.loop_cpu) / self.rows


def _until_warm(loops: list[RewardLoop]) -> None:
    """Wait until every pool's workers (each actor's, on Ray) run warm: the warm-ups run in
    the background and would share the cores with the timed batches."""
    for loop in loops:
        pool = loop.engine.pool
        while pool.health().starting or getattr(pool, "warming", False):
            time.sleep(0.1)


def _thread_cpu(loop: RewardLoop) -> float:
    """CPU seconds used so far by the loop's event-loop thread (Linux /proc)."""
    tid = loop._thread.native_id  # the engine's thread: the part that cannot spread over cores
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_backends(configs: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[Run]:
    """Start every RewardLoop and warm it, then time them in turns on each measured batch.

    Taking turns batch by batch puts every backend under the same background load: on a
    shared machine that load drifts, and it would otherwise decide the comparison.
    """
    batches = [make_batch(args.prompts, args.rollouts, seed) for seed in range(1, args.repeats + 1)]
    runs = [
        Run(label, cfg["reward"]["num_workers"], len(batches[0]), [], [], 0)
        for label, cfg in configs.items()
    ]
    with contextlib.ExitStack() as stack:
        loops = [stack.enter_context(RewardLoop(cfg)) for cfg in configs.values()]
        for loop in loops:
            loop.score(make_batch(args.prompts, args.rollouts, WARM_SEED))
        _until_warm(loops)
        before = [loop.engine.stats["pool"] for loop in loops]
        sent = [dict(loop.engine.pool.stats) for loop in loops]
        outcomes: list[list[tuple[Any, Any]]] = []
        for rows in batches:
            for run, loop in zip(runs, loops, strict=True):
                cpu0, thread0, t0 = time.process_time(), _thread_cpu(loop), time.perf_counter()
                results = loop.score(rows)
                run.seconds.append(time.perf_counter() - t0)
                run.driver_cpu.append(time.process_time() - cpu0)
                run.loop_cpu.append(_thread_cpu(loop) - thread0)
                outcomes.append([(r.status, r.score) for r in results])
            # Same batch, same statuses and scores, whatever the backend.
            assert all(o == outcomes[0] for o in outcomes), "backends disagree"
            outcomes.clear()
        for run, loop, start, stats in zip(runs, loops, before, sent, strict=True):
            run.pool_tasks = (loop.engine.stats["pool"] - start) // len(batches)
            now = loop.engine.pool.stats
            run.worker_tasks = (now["tasks"] - stats["tasks"]) // len(batches)
            if "calls" in now:
                run.calls = (now["calls"] - stats["calls"]) // len(batches)
    return runs


async def trivial_tasks(pool: Any, count: int, concurrency: int) -> tuple[float, float]:
    """Wall and driver-CPU seconds per task for ``count`` no-op tasks, ``concurrency`` in flight."""
    await pool.start()
    try:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                await pool.run(divmod, i, 7, timeout=30)

        await asyncio.gather(*(one(i) for i in range(50)))  # warm
        cpu0, t0 = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        return (time.perf_counter() - t0) / count, (time.process_time() - cpu0) / count
    finally:
        await pool.close()


@dataclass
class Ceiling:
    """One loop fed by a scorer that costs nothing: what its driver sustains."""

    rows: int
    seconds: float
    loop_cpu: float
    calls: int
    tasks: int

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds


def one_loop_ceiling(args: argparse.Namespace, workers: int) -> Ceiling:
    """A RewardLoop on Ray whose custom reward function returns 0 (one pool task per row);
    the median of ``--repeats`` batches after a warm-up batch."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "noop_reward.py")
        path.write_text(NOOP_SCORER)
        config = {
            "reward": {
                "backend": "ray",
                "num_workers": workers,
                "ray": {"num_cpus_per_worker": 1.0},
                "custom_reward_function": {"path": str(path)},
            }
        }
        batches = [
            make_batch(args.prompts, args.rollouts, seed) for seed in range(1, args.repeats + 1)
        ]
        measured: list[tuple[float, float, int, int]] = []
        with RewardLoop(config) as loop:
            loop.score(make_batch(args.prompts, args.rollouts, WARM_SEED))
            _until_warm([loop])
            stats = loop.engine.pool.stats
            for rows in batches:
                calls, tasks = stats["calls"], stats["tasks"]
                thread0, t0 = _thread_cpu(loop), time.perf_counter()
                results = loop.score(rows)
                seconds = time.perf_counter() - t0
                assert all(r.score == 0.0 for r in results), "the no-op scorer did not score"
                measured.append(
                    (
                        seconds,
                        _thread_cpu(loop) - thread0,
                        stats["calls"] - calls,
                        stats["tasks"] - tasks,
                    )
                )
    seconds, loop_cpu, calls, tasks = sorted(measured)[len(measured) // 2]
    return Ceiling(len(batches[0]), seconds, loop_cpu, calls, tasks)


def _vs(run: Run, base: Run) -> str:
    """Throughput against ``base``: the median of per-batch ratios (each pair ran back to back)."""
    ratios = [b / r for r, b in zip(run.seconds, base.seconds, strict=True)]
    return f"{(statistics.median(ratios) - 1) * 100:+.1f}%"


def report(
    runs: list[Run],
    overhead: dict[str, tuple[float, float]],
    ceiling: Ceiling,
    args: argparse.Namespace,
) -> str:
    local, ray2, ray1 = runs
    lines = [
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.machine()}; batch {args.prompts} prompts x {args.rollouts} rollouts = "
        f"{local.rows} rows, median of {args.repeats}; Ray: a local instance on this machine, "
        f"actors at reward.ray.num_cpus_per_worker=1; reward.verifiers.fast_paths="
        f"{str(not args.no_fast_paths).lower()}. Load average (1 min) at start / end: "
        f"{args.load[0]:.1f} / {os.getloadavg()[0]:.1f} (a shared machine: other work ran too).",
        "",
        "| backend | scoring workers | rows/s | seconds per batch | rows checked in a worker "
        "| worker tasks / remote calls per batch | throughput vs local |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs:
        vs = "" if run is local else _vs(run, local)
        lines.append(
            f"| {run.label} | {run.workers} | {run.rows_per_s:,.0f} | {run.median_s:.2f} | "
            f"{run.pool_tasks} | {run.worker_tasks} / {'-' if run.calls is None else run.calls} "
            f"| {vs} |"
        )
    each = "; ".join(f"{run.label} " + " ".join(f"{x:.2f}" for x in run.seconds) for run in runs)
    lines += [
        "",
        f"Seconds per batch, batch by batch (each batch ran on every backend in turn): {each}.",
        "",
        "| scheduling (trivial `divmod` tasks) | wall per task | driver CPU per task |",
        "|---|---:|---:|",
    ]
    for name, (wall, cpu) in overhead.items():
        lines.append(f"| {name} | {wall * 1e3:.2f} ms | {cpu * 1e3:.2f} ms |")
    per_actor = ray1.rows_per_s
    busy = ceiling.loop_cpu / ceiling.seconds
    lines += [
        "",
        f"Per-actor throughput (one actor, this batch): {per_actor:,.0f} rows/s "
        f"({ray1.worker_tasks / ray1.median_s:,.0f} worker tasks/s). Driver CPU per row, whole "
        f"process / event-loop thread: ray {ray2.driver_cpu_per_row * 1e3:.2f} / "
        f"{ray2.loop_cpu_per_row * 1e3:.2f} ms, local {local.driver_cpu_per_row * 1e3:.2f} / "
        f"{local.loop_cpu_per_row * 1e3:.2f} ms.",
        "",
        f"One-loop ceiling, measured: one RewardLoop on Ray ({args.workers} actors) whose "
        f"scorer costs nothing (a custom reward function returning 0, one pool task per row) "
        f"scored {ceiling.rows_per_s:,.0f} rows/s ({ceiling.tasks} tasks in "
        f"{ceiling.calls} remote calls per batch), its event-loop thread busy {busy:.0%} of "
        f"the time ({ceiling.loop_cpu / ceiling.rows * 1e3:.3f} ms CPU per row). "
        + (
            "The loop was the bottleneck: one loop sustains this rate, whatever the cluster."
            if busy >= 0.9
            else "The actors set that pace, not the loop (here they share the cores with it): "
            f"this is a floor; the loop alone would saturate near "
            f"{ceiling.rows / ceiling.loop_cpu:,.0f} rows/s."
        )
        + f" The real batch's loop spends {ray2.loop_cpu_per_row * 1e3:.3f} ms CPU per row: "
        f"one loop feeds at most {1 / ray2.loop_cpu_per_row:,.0f} rows/s of it, about "
        f"{1 / ray2.loop_cpu_per_row / per_actor:.1f} actors at the per-actor rate above; past "
        "that, score from several loops (one per rollout worker, or several reward servers).",
    ]
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=256)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--trivial-tasks", type=int, default=2000)
    parser.add_argument(
        "--quick", action="store_true", help="32 prompts, 1 repeat, 300 trivial tasks"
    )
    parser.add_argument(
        "--no-fast-paths",
        action="store_true",
        help="reward.verifiers.fast_paths=false: every answer goes to a worker or actor",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.prompts, args.repeats, args.trivial_tasks = 32, 1, 300
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    args.load = os.getloadavg()
    workers = args.workers
    local_overhead = asyncio.run(
        trivial_tasks(WorkerPool(workers), args.trivial_tasks, 2 * workers)
    )
    local_burst = asyncio.run(
        trivial_tasks(WorkerPool(workers), args.trivial_tasks, args.trivial_tasks)
    )

    import ray

    # Started here, on the main thread, and shared by every loop below (none shuts it down).
    # Ray's CPUs are logical: enough for the loops' actors to exist side by side.
    ray.init(
        address="local",  # never a cluster found on this machine (a test's, another run's)
        num_cpus=4 * workers,
        include_dashboard=False,
        logging_level="WARNING",
        object_store_memory=256 * 1024 * 1024,
    )
    try:
        common: dict[str, Any] = {"verifiers": {"fast_paths": not args.no_fast_paths}}
        ray_cfg = {"backend": "ray", "ray": {"num_cpus_per_worker": 1.0}, **common}
        runs = time_backends(
            {
                "local": {"reward": {"num_workers": workers, **common}},
                "ray": {"reward": {"num_workers": workers, **ray_cfg}},
                "ray, one actor": {"reward": {"num_workers": 1, **ray_cfg}},
            },
            args,
        )
        options = RayOptions(num_cpus_per_worker=1.0)
        ray_overhead = asyncio.run(
            trivial_tasks(RayWorkerPool(workers, options=options), args.trivial_tasks, 2 * workers)
        )
        ray_burst = asyncio.run(
            trivial_tasks(
                RayWorkerPool(workers, options=options), args.trivial_tasks, args.trivial_tasks
            )
        )
        ceiling = one_loop_ceiling(args, workers)
    finally:
        ray.shutdown()
    overhead = {
        f"WorkerPool({workers}), {2 * workers} in flight": local_overhead,
        f"RayWorkerPool({workers}), {2 * workers} in flight": ray_overhead,
        f"WorkerPool({workers}), all at once": local_burst,
        f"RayWorkerPool({workers}), all at once": ray_burst,
    }
    print(report(runs, overhead, ceiling, args))


if __name__ == "__main__":
    main()
