"""Scoring-engine benchmark: rewardkit vs math-verify vs verl 0.9.1's reward managers.

    .venv/bin/python benchmarks/bench_scoring.py           # full: 256 prompts x 8 rollouts
    .venv/bin/python benchmarks/bench_scoring.py --quick   # smoke: 32 prompts x 8, no file written
    .venv/bin/python benchmarks/bench_scoring.py --real    # published model outputs (see below)

The workload (``benchmarks/workload.py``) is a GRPO batch of MATH-style rollouts with
the generator's known verdicts; once clean and once with 0.5% pathological rows. Each
contender runs in its own guarded process (wall-clock limit, memory budget over its
whole process tree), scores a small warm-up batch drawn with a different seed first
(untimed: workers started, imports done, as in the middle of training), then one timed
call on the measured batch. Clean batches are repeated (3 seeds, contenders interleaved,
median rows/s); verl Prime, which builds a new 64-process pool per call, runs once, last.
Contenders:


- math-verify in one process: parse gold, parse prediction, verify, per row, defaults;
- verl 0.9.1 ``NaiveRewardManager`` and ``PrimeRewardManager`` with verl's
  ``math_verify`` scorer, in a separate venv (``.bench/verl-venv``, made on first use);
- rewardkit's ``RewardLoop`` with ``num_workers`` = cores.

Prints a markdown table and writes it to BENCHMARKS.md (section "Scoring engine").

``--real`` runs the same guarded contenders (verl Prime aside) on the corpus of published
model outputs in ``tests/data/real_outputs`` instead, and reports, in one run: rows/s,
agreement with math-verify, and false positives / negatives against the adjudicated
truth (``benchmarks/real_outputs.py``); it writes its own BENCHMARKS.md section. It also
scores the corpus's degenerate and prose slices and the corpus with the degenerate rows
mixed in (``benchmarks/real_slices.py``), each in its own table rows (``--no-slices``: not).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / ".bench"
WORK = BENCH / "scoring"  # main() moves this to a folder of its own per run
VERL_VENV = BENCH / "verl-venv"
VERL_VERSION = "0.9.1"
SECTION = "## Scoring engine (benchmarks/bench_scoring.py)"
SECTION_REAL = "## Scoring engine on real model outputs (benchmarks/bench_scoring.py --real)"
SECTION_SECOND = (
    "## A second epoch on real model outputs (benchmarks/bench_scoring.py --real --second-epoch)"
)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import write_section  # noqa: E402
from workload import make_batch, write_jsonl  # noqa: E402

# ------------------------------------------------------------------ guarded processes


@dataclass
class Guarded:
    """How a guarded child process ended."""

    returncode: int | None
    seconds: float
    killed: str | None = None  # 'timeout' or 'memory: ...' when the guard ended it
    peak_mb: float = 0.0
    peak_procs: int = 0
    stderr_tail: str = ""
    figures: dict[str, Any] = field(default_factory=dict)


# The machine is shared: stop a run that leaves less than this free, whatever its budget.
_MACHINE_FLOOR_MB = 1536


def _limit_address_space(limit_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))


def _tree_usage(proc: Any) -> tuple[float, int]:
    """Memory (MiB) and process count of a process tree.

    Memory is the sum of PSS, which splits pages shared by forked children fairly
    (RSS would count a forking parent's pages once per child).
    """
    import psutil

    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0, 0
    total = 0
    for p in procs:
        try:
            total += p.memory_full_info().pss
        except (psutil.Error, AttributeError):
            continue
    return total / 2**20, len(procs)


def run_guarded(
    cmd: list[str], out: Path, *, timeout_s: float, mem_limit_mb: int, log: Path
) -> Guarded:
    """Run ``cmd`` in its own session; kill the whole group past the time or memory budget.

    Every process of the tree also gets RLIMIT_AS = ``mem_limit_mb``, so one runaway
    computation fails inside its process instead of eating the shared machine.
    """
    import psutil

    out.unlink(missing_ok=True)
    with log.open("w") as log_fh:
        child = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: _limit_address_space(mem_limit_mb * 2**20),
            env={**os.environ, "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"},
        )
        proc = psutil.Process(child.pid)
        start = time.perf_counter()
        killed, peak_mb, peak_procs = None, 0.0, 0
        while child.poll() is None:
            mb, count = _tree_usage(proc)
            peak_mb, peak_procs = max(peak_mb, mb), max(peak_procs, count)
            free_mb = psutil.virtual_memory().available / 2**20
            if time.perf_counter() - start > timeout_s:
                killed = f"timeout after {timeout_s:.0f} s"
            elif mb > mem_limit_mb:
                killed = f"memory: {mb / 1024:.1f} GiB in {count} processes > budget {mem_limit_mb / 1024:.0f} GiB"
            elif free_mb < _MACHINE_FLOOR_MB:
                killed = f"memory: machine down to {free_mb:.0f} MiB free ({count} processes)"
            if killed:
                break
            time.sleep(0.2)
        seconds = time.perf_counter() - start
        _kill_group(child.pid)
        child.wait()
    tail = log.read_text(errors="replace")[-2000:]
    figures = json.loads(out.read_text()) if out.exists() and not killed else {}
    return Guarded(child.returncode, seconds, killed, peak_mb, peak_procs, tail, figures)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------- contenders (children)


def _read_rows(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _math_verify_score(row: dict[str, Any]) -> float:
    """What a user of math-verify writes: parse both sides, verify, default timeouts."""
    from math_verify import parse, verify

    gold = parse("\\boxed{" + str(row["ground_truth"]) + "}")
    pred = parse(row["response"])
    return 1.0 if verify(gold, pred) else 0.0


def child_math_verify(rows_path: str, warm_path: str) -> dict[str, Any]:
    for row in _read_rows(warm_path):
        _math_verify_score(row)
    rows = _read_rows(rows_path)
    start = time.perf_counter()
    scores, row_seconds = [], []
    for row in rows:
        began = time.perf_counter()
        scores.append(_math_verify_score(row))
        row_seconds.append(time.perf_counter() - began)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "scores": scores, "row_seconds": row_seconds}


def _settle(loop: Any) -> None:
    """Wait until every worker is up and has the warm-ups (a local pool's zygote swaps its
    cold workers for warm ones in the background; a Ray pool has neither)."""
    pool = loop.engine.pool
    while pool.health().starting or getattr(pool, "warming", False):
        time.sleep(0.01)


def child_rewardkit(
    rows_path: str, warm_path: str, workers: int, timeout_s: float, overrides: list[str]
) -> dict[str, Any]:
    from rewardkit import RewardLoop

    config = {"reward": {"num_workers": workers, "timeout_s": timeout_s}}
    start = time.perf_counter()
    with RewardLoop(config, overrides) as loop:
        _settle(loop)  # workers up and warm (they start in the background): the steady state
        started = time.perf_counter() - start
        loop.score(_read_rows(warm_path))
        warm_seconds = time.perf_counter() - start - started
        before = dict(getattr(loop.engine, "stats", {}))
        tasks_before = _pool_tasks(loop)
        rows = _read_rows(rows_path)
        start, cpu = time.perf_counter(), time.process_time()
        results = loop.score(rows)
        seconds = time.perf_counter() - start
        main_cpu = time.process_time() - cpu  # this process: the event loop, not the workers
        after = dict(getattr(loop.engine, "stats", {}))
        pool_tasks = _pool_tasks(loop) - tasks_before
    return {
        "engine_stats": {k: v - before.get(k, 0) for k, v in after.items()},
        "pool_tasks": pool_tasks,
        "seconds": seconds,
        "main_cpu_seconds": main_cpu,
        "start_seconds": started,
        "warm_seconds": warm_seconds,
        "scores": [r.score for r in results],
        "statuses": [str(r.status) for r in results],
        "errors": [r.error for r in results],
    }


def _pool_tasks(loop: Any) -> int:
    """Tasks the worker pool has run so far (round trips between the loop and a worker)."""
    pool = getattr(loop.engine, "pool", None)
    return int(getattr(pool, "stats", {}).get("tasks", 0))


def _child_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_scoring.py _child")
    parser.add_argument("which", choices=["math-verify", "rewardkit"])
    parser.add_argument("--rows", required=True)
    parser.add_argument("--warm", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout-s", type=float, default=5.0)
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args(argv)
    if args.which == "math-verify":
        figures = child_math_verify(args.rows, args.warm)
    else:
        figures = child_rewardkit(args.rows, args.warm, args.workers, args.timeout_s, args.set)
    Path(args.out).write_text(json.dumps(figures))


# --------------------------------------------------------------------- verl's venv


def ensure_verl_venv(log: Path) -> Path:
    """Create .bench/verl-venv with verl 0.9.1 (torch held by constraints.txt) once."""
    python = VERL_VENV / "bin" / "python"
    probe = [str(python), "-c", "import verl, math_verify, tokenizers; print(verl.__version__)"]
    if python.exists():
        done = subprocess.run(probe, capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip() == VERL_VERSION:
            return python
    print(f"creating {VERL_VENV} with verl=={VERL_VERSION} (a few minutes) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VERL_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "-c", str(ROOT / "constraints.txt")]
    with log.open("w") as fh:
        subprocess.run(
            [*pip, f"verl=={VERL_VERSION}", "math-verify", "tokenizers"],
            check=True,
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    subprocess.run(probe, check=True, capture_output=True)
    return python


# --------------------------------------------------------------------------- runs


@dataclass(frozen=True)
class Contender:
    """One scorer under test: its key, its table label, the command that runs it."""

    key: str
    label: str
    cmd: list[str]


def contenders(args: argparse.Namespace, verl_python: Path | None) -> list[Contender]:
    """The contenders in table order (verl's only when its venv is there)."""
    me = [sys.executable, str(Path(__file__).resolve()), "_child"]
    rk = [*me, "rewardkit", "--workers", str(args.workers), "--timeout-s", str(args.timeout_s)]
    for item in args.set:
        rk += ["--set", item]
    out = [Contender("math-verify", "math-verify, 1 process", [*me, "math-verify"])]
    if verl_python is not None:
        script = str(ROOT / "benchmarks" / "verl_baseline.py")
        out.append(
            Contender(
                "verl-naive",
                f"verl {VERL_VERSION} NaiveRewardManager + math_verify",
                [str(verl_python), script, "--manager", "naive"],
            )
        )
        out.append(
            Contender(
                "verl-prime",
                f"verl {VERL_VERSION} PrimeRewardManager + math_verify",
                [str(verl_python), script, "--manager", "prime"],
            )
        )
    out.append(Contender("rewardkit", f"rewardkit, num_workers={args.workers}", rk))
    # The same with the inline fast paths off: every answer goes to math-verify in a worker,
    # which bounds what rewardkit does on answers the fast paths cannot settle.
    slow = [*rk, "--set", "reward.verifiers.fast_paths=false"]
    out.append(
        Contender("rewardkit-slow", f"rewardkit, num_workers={args.workers}, fast paths off", slow)
    )
    return [c for c in out if not args.only or c.key in args.only]


def run_one(c: Contender, batch: str, paths: dict[str, Path], args: argparse.Namespace) -> Guarded:
    """Run one contender on one batch under the guard and print how it went."""

    out = WORK / f"{c.key}-{batch}.json"
    log = WORK / f"{c.key}-{batch}.log"
    cmd = [*c.cmd, "--rows", str(paths[batch]), "--out", str(out)]
    limit = args.limit_s
    if c.key == "verl-prime":
        # Prime builds a new 64-process pool on every call: there is nothing to warm, and
        # as shipped it runs hundreds of processes on this machine; keep its run short.
        limit = args.prime_limit_s
    else:
        cmd += ["--warm", str(paths["warm"])]
    print(f"  {c.label} on the {batch} batch ...", flush=True)
    g = run_guarded(cmd, out, timeout_s=limit, mem_limit_mb=args.mem_limit_mb, log=log)
    if g.killed:
        print(f"    stopped by the guard: {g.killed}", flush=True)
    elif g.returncode != 0 or not g.figures:
        print(f"    failed (exit {g.returncode}); see {log}:\n{g.stderr_tail[-800:]}", flush=True)
    else:
        rate = len(g.figures["scores"]) / g.figures["seconds"]
        print(
            f"    {g.figures['seconds']:.2f} s, {rate:.0f} rows/s, peak {g.peak_procs} processes",
            flush=True,
        )
    return g


# ---------------------------------------------------------------------- analysis


def correct_flags(rows: list[dict[str, Any]], scores: list[float | None]) -> list[bool]:
    """A row is graded right when (score == 1) matches the generator's verdict."""
    return [
        (s is not None and s == 1.0) == bool(r["extra_info"]["expected_correct"])
        for r, s in zip(rows, scores, strict=True)
    ]


def accuracy(rows: list[dict[str, Any]], scores: list[float | None]) -> float:
    flags = correct_flags(rows, scores)
    return sum(flags) / len(flags)


def by_style(rows: list[dict[str, Any]], scores: list[float | None]) -> dict[str, str]:
    hits: dict[str, list[bool]] = defaultdict(list)
    for r, ok in zip(rows, correct_flags(rows, scores), strict=True):
        hits[r["extra_info"]["style"]].append(ok)
    return {k: f"{sum(v)}/{len(v)}" for k, v in sorted(hits.items())}


def disagreements(
    rows: list[dict[str, Any]],
    mine: list[float | None],
    ref: list[float | None],
    statuses: list[str],
) -> list[dict[str, Any]]:
    """Rows a contender grades wrong while math-verify grades them right, one per distinct pair."""
    seen: dict[tuple[str, str, str], dict[str, Any]] = {}
    flags_mine, flags_ref = correct_flags(rows, mine), correct_flags(rows, ref)
    for i, row in enumerate(rows):
        if flags_mine[i] or not flags_ref[i]:
            continue
        info = row["extra_info"]
        answer = _shown_pred(row)
        key = (str(row["ground_truth"]), str(answer), info["style"])
        entry = seen.setdefault(
            key,
            {
                "gold": key[0],
                "pred": key[1],
                "style": key[2],
                "expected_correct": info["expected_correct"],
                "score": mine[i],
                "status": statuses[i],
                "math_verify": ref[i],
                "rows": 0,
            },
        )
        entry["rows"] += 1
    return sorted(seen.values(), key=lambda e: -e["rows"])


@dataclass
class Line:
    """One contender's figures for the table."""

    label: str
    rate: float | None = None
    acc_clean: float | None = None
    acc_patho: float | None = None
    wall_clean: float | None = None
    wall_patho: float | None = None
    note: str = ""


def _fmt(value: float | None, spec: str, missing: str = "n/a") -> str:
    return missing if value is None else format(value, spec)


def _failure(g: Guarded) -> str:
    if g.killed:
        return f"stopped by the guard ({g.killed}; peak {g.peak_procs} processes)"
    return f"failed (exit {g.returncode})"


def summarize(
    c: Contender, runs: dict[str, Guarded], rows: dict[str, list[dict[str, Any]]]
) -> Line:
    """rows/s: median over the clean batches; accuracy: pooled over them; walls: seed 0."""
    line = Line(c.label)
    notes, rates, flags = [], [], []
    for batch, g in runs.items():
        if not g.figures:
            notes.append(f"{batch}: {_failure(g)}")
            continue
        scores, seconds = g.figures["scores"], g.figures["seconds"]
        if batch == "pathological":
            line.acc_patho, line.wall_patho = accuracy(rows[batch], scores), seconds
        else:
            rates.append(len(scores) / seconds)
            flags += correct_flags(rows[batch], scores)
        if batch == "clean":
            line.wall_clean = seconds
        statuses = Counter(g.figures.get("statuses") or [])
        bad = {k: v for k, v in statuses.items() if k != "ok"}
        if bad:
            notes.append(f"{batch}: " + ", ".join(f"{v} {k}" for k, v in sorted(bad.items())))
    if rates:
        line.rate, line.acc_clean = statistics.median(rates), sum(flags) / len(flags)
    line.note = "; ".join(notes)
    return line


def table(lines: list[Line], baseline: float | None) -> str:
    head = (
        "| contender | rows/s (clean) | vs verl Naive | accuracy clean | accuracy pathological "
        "| wall clean (s) | wall pathological (s) | notes |\n|---|---:|---:|---:|---:|---:|---:|---|\n"
    )
    body = []
    for ln in lines:
        ratio = None if ln.rate is None or not baseline else ln.rate / baseline
        body.append(
            f"| {ln.label} | {_fmt(ln.rate, '.0f')} | {_fmt(ratio, '.2f', '')}{'x' if ratio else ''} "
            f"| {_fmt(ln.acc_clean, '.2%')} | {_fmt(ln.acc_patho, '.2%')} "
            f"| {_fmt(ln.wall_clean, '.2f')} | {_fmt(ln.wall_patho, '.2f')} | {ln.note} |"
        )
    return head + "\n".join(body) + "\n"


# ------------------------------------------------------------------------- report


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{len(os.sched_getaffinity(0))} cores ({cpu}), Python {platform.python_version()}"


def report(
    args: argparse.Namespace,
    lines: list[Line],
    baseline: float | None,
    facts: dict[str, Any],
    extra: str,
) -> str:
    cmd = " ".join(["python benchmarks/bench_scoring.py", *sys.argv[1:]])
    return (
        f"{SECTION}\n\n"
        f"`{cmd}` on {facts['date']}; {facts['machine']}; load average "
        f"{facts['load_before']} before, {facts['load_after']} after all but verl Prime (the machine is shared: "
        "figures are noisy).\n\n"
        f"Workload: {facts['rows']} rows ({facts['prompts']} prompts x {facts['rollouts']} rollouts, "
        f"MATH-style, `benchmarks/workload.py` seed 0); pathological batch: the same rows with "
        f"{facts['patho']} replaced by hostile answers. Each run is a fresh process that first "
        f"scores a warm-up batch drawn with another seed ({facts['warm_rows']} rows, untimed; none "
        "for verl Prime, which builds a new pool on every call), then one timed call. rows/s is the "
        f"median over {args.repeats} clean batches (seeds 0, 101, ...; contenders interleaved), "
        "accuracy is pooled over them; wall times are for seed 0, clean and pathological. "
        f"rewardkit: `num_workers={args.workers}`, `timeout_s={args.timeout_s:g}`, otherwise defaults"
        f"{_overrides(args)}. Guard per run: {args.limit_s:.0f} s wall clock ({args.prime_limit_s:.0f} s "
        f"for verl Prime), {args.mem_limit_mb / 1024:.0f} GiB summed PSS over the process tree.\n\n"
        + table(lines, baseline)
        + "\n"
        + extra
    )


def _overrides(args: argparse.Namespace) -> str:
    return "" if not args.set else " plus " + ", ".join(f"`{s}`" for s in args.set)


def targets(lines: dict[str, Line], args: argparse.Namespace, patho: int) -> str:
    rk, naive, mv = lines.get("rewardkit"), lines.get("verl-naive"), lines.get("math-verify")
    out = []
    if rk and naive and rk.rate and naive.rate:
        ratio = rk.rate / naive.rate
        out.append(
            f"- throughput >= 5x verl Naive: {ratio:.2f}x ({'met' if ratio >= 5 else 'NOT met'})"
        )
    if rk and rk.wall_clean is not None and rk.wall_patho is not None:
        bound = rk.wall_clean + math.ceil(patho / args.workers) * args.timeout_s
        ok = rk.wall_patho <= bound
        out.append(
            f"- pathological wall <= clean + ceil({patho}/{args.workers}) x {args.timeout_s:g} s = "
            f"{bound:.1f} s: {rk.wall_patho:.1f} s ({'met' if ok else 'NOT met'})"
        )
    if rk and mv and rk.acc_clean is not None and mv.acc_clean is not None:
        ok = rk.acc_clean >= mv.acc_clean
        out.append(
            f"- accuracy >= raw math-verify: {rk.acc_clean:.2%} vs {mv.acc_clean:.2%} "
            f"({'met' if ok else 'NOT met'})"
        )
    head = 'Targets (issue "Reward scoring engine"):\n' + "\n".join(out) + "\n" if out else ""
    return head + fast_path_note(lines)


def fast_path_note(lines: dict[str, Line]) -> str:
    """What the rewardkit line measures, next to the line with the fast paths off."""
    rk, slow, naive = lines.get("rewardkit"), lines.get("rewardkit-slow"), lines.get("verl-naive")
    if not (rk and slow and rk.rate and slow.rate):
        return ""
    vs_naive = f" ({slow.rate / naive.rate:.2f}x verl Naive)" if naive and naive.rate else ""
    return (
        "\nWhat the rewardkit line measures: its inline fast paths (plain comparison and a "
        "bounded numeric evaluator) settle most rows of this generator, whose answers come in a "
        "fixed set of spellings (engine counters below: `quick` rows never reached a worker). "
        "Policy output in the wild is more varied. The line *fast paths off* sends every answer "
        "to math-verify in a worker (identical answers in a batch still share one check): "
        f"{slow.rate:.0f} rows/s{vs_naive}, accuracy "
        f"{_fmt(slow.acc_clean, '.2%')}. On messy answers expect a figure between the two lines.\n"
    )


# --------------------------------------------------------------------------- main


def _rows_sentence(
    args: argparse.Namespace, rows: list[dict[str, Any]], sources: Counter[str]
) -> str:
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(sources.items()))
    if args.rows:
        return f"Rows: the {len(rows)} rows of `{args.rows}` ({kinds})."
    return (
        f"Rows: the {len(rows)} published model outputs of `tests/data/real_outputs` "
        f"({kinds}; sources and selection in its README)."
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="32 prompts, 1 repeat; BENCHMARKS.md untouched"
    )
    parser.add_argument("--prompts", type=int, default=None)
    parser.add_argument("--rollouts", type=int, default=8)
    parser.add_argument("--pathological", type=float, default=0.005)
    parser.add_argument(
        "--repeats", type=int, default=None, help="clean batches per contender (default 3, quick 1)"
    )
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--timeout-s", type=float, default=5.0, help="rewardkit's reward.timeout_s")
    parser.add_argument("--limit-s", type=float, default=None, help="guard: wall clock per run")
    parser.add_argument("--mem-limit-mb", type=int, default=8192, help="guard: memory per run")
    parser.add_argument(
        "--prime-limit-s", type=float, default=120.0, help="guard: verl Prime's run"
    )
    parser.add_argument(
        "--only",
        nargs="*",
        choices=["math-verify", "verl-naive", "verl-prime", "rewardkit", "rewardkit-slow"],
    )
    parser.add_argument("--no-verl", action="store_true", help="skip verl (no venv made)")
    parser.add_argument(
        "--no-slices",
        action="store_true",
        help="with --real: the corpus only (no degenerate or prose slice, no mixed run)",
    )
    parser.add_argument("--set", action="append", default=[], help="rewardkit override key=value")
    parser.add_argument(
        "--write", action="store_true", help="update BENCHMARKS.md even with --quick/--only"
    )
    parser.add_argument(
        "--real", action="store_true", help="score tests/data/real_outputs (published outputs)"
    )
    parser.add_argument(
        "--second-epoch",
        action="store_true",
        help="with --real: every contender first scores the corpus itself (untimed), then is "
        "timed on it again, as a long training job sees its prompts again; rewardkit runs "
        "with reward.cache_size=0, so that no row is served from its result cache",
    )
    parser.add_argument(
        "--rows",
        help="with --real: score this JSONL (or .jsonl.gz) of rows instead of the corpus "
        "(data_source, response, ground_truth, id, extra_info.source_label: the source's own "
        "verdict, or null); the report is printed, and written to a section of its own in "
        "BENCHMARKS.md with --write",
    )
    args = parser.parse_args(argv)
    if args.rows and not args.real:
        parser.error("--rows needs --real")
    if args.second_epoch and not args.real:
        parser.error("--second-epoch needs --real")
    if args.second_epoch:
        args.set = [*args.set, "reward.cache_size=0"]
    if args.real:
        args.repeats = args.repeats or 1
        args.limit_s = args.limit_s or 900.0
        return args
    args.prompts = args.prompts or (32 if args.quick else 256)
    args.repeats = args.repeats or (1 if args.quick else 3)
    args.limit_s = args.limit_s or (300.0 if args.quick else 900.0)
    return args


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_child"]:
        _child_main(argv[1:])
        return
    args = parse_args(argv)
    global WORK  # one folder per run: two runs at once must not mix their files
    WORK = BENCH / "scoring" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
    WORK.mkdir(parents=True, exist_ok=True)
    if args.real:
        main_real(args)
        return
    cleans = ["clean"] + [f"clean-{k}" for k in range(1, args.repeats)]
    rows = {
        "warm": make_batch(max(4, args.prompts // 16), args.rollouts, seed=1),
        **{name: make_batch(args.prompts, args.rollouts, seed=_seed(name)) for name in cleans},
        "pathological": make_batch(
            args.prompts, args.rollouts, seed=0, pathological=args.pathological
        ),
    }
    paths = {name: write_jsonl(batch, WORK / f"{name}.jsonl") for name, batch in rows.items()}
    patho = sum(r["extra_info"]["style"] == "pathological" for r in rows["pathological"])
    want_verl = not args.no_verl and (
        not args.only or {"verl-naive", "verl-prime"} & set(args.only)
    )
    verl_python = ensure_verl_venv(BENCH / "verl-install.log") if want_verl else None
    facts = {
        "date": dt.date.today().isoformat(),
        "machine": _machine(),
        "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "rows": len(rows["clean"]),
        "prompts": args.prompts,
        "rollouts": args.rollouts,
        "patho": patho,
        "warm_rows": len(rows["warm"]),
    }
    print(f"{facts['rows']} rows, {patho} pathological; {facts['machine']}; files in {WORK}")

    everyone = contenders(args, verl_python)
    runs: dict[str, dict[str, Guarded]] = {c.key: {} for c in everyone}
    # Repeats interleave the contenders so that all of them see the same background load.
    # verl Prime goes last, once: its hundreds of processes would load the others' runs.
    others = [c for c in everyone if c.key != "verl-prime"]
    for name in cleans:
        for c in others:
            runs[c.key][name] = run_one(c, name, paths, args)
    for c in others:
        runs[c.key]["pathological"] = run_one(c, "pathological", paths, args)
    facts["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for c in everyone:
        if c.key == "verl-prime":
            runs[c.key]["clean"] = run_one(c, "clean", paths, args)
            if not runs[c.key]["clean"].killed:
                runs[c.key]["pathological"] = run_one(c, "pathological", paths, args)
    lines = {c.key: summarize(c, runs[c.key], rows) for c in everyone}
    naive = lines.get("verl-naive")
    baseline = naive.rate if naive else None
    extra = targets(lines, args, patho) + "\n" + details(runs, rows)
    text = report(args, list(lines.values()), baseline, facts, extra)
    print("\n" + text)
    complete = not (args.quick or args.only or args.no_verl)  # a partial table stays out
    if complete or args.write:
        write_section(SECTION, text, ROOT / "BENCHMARKS.md")
        print(f"updated {ROOT / 'BENCHMARKS.md'}")


def _seed(name: str) -> int:
    """clean: seed 0 (the pathological batch's rows); clean-k: seed 100 + k."""
    return 0 if name == "clean" else 100 + int(name.split("-")[1])


def _shown_pred(row: dict[str, Any]) -> str:
    """The generator's answer for a one-answer row; the response's tail for the others."""
    info = row["extra_info"]
    if info.get("style") in ("boxed", "minerva") and info.get("answer"):
        return str(info["answer"])
    return "..." + row["response"][-70:].replace("\n", " ")


def _pooled(
    runs: dict[str, dict[str, Guarded]],
    rows: dict[str, list[dict[str, Any]]],
    keys: list[str],
    batches: list[str],
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """Rows and each contender's scores/statuses, over the batches every one of them finished."""
    out_rows: list[dict[str, Any]] = []
    columns: list[list[Any]] = [[] for _ in range(2 * len(keys))]
    for batch in batches:
        figures = [runs.get(k, {}).get(batch) for k in keys]
        if not all(g is not None and g.figures for g in figures):
            continue
        out_rows += rows[batch]
        for i, g in enumerate(figures):
            columns[2 * i] += g.figures["scores"]
            columns[2 * i + 1] += g.figures.get("statuses") or [None] * len(rows[batch])
    return out_rows, columns


def _rewardkit_misses(
    runs: dict[str, dict[str, Guarded]], rows: dict[str, list[dict[str, Any]]], cleans: list[str]
) -> str:
    """Every (gold, pred, style) rewardkit grades against the generator's verdict, and its stats."""
    got, (scores, statuses) = _pooled(runs, rows, ["rewardkit"], cleans)
    if not got:
        return ""
    misses: Counter[tuple[str, str, str, bool, str]] = Counter()
    for row, ok, score, status in zip(
        got, correct_flags(got, scores), scores, statuses, strict=True
    ):
        if not ok:
            info = row["extra_info"]
            pred = _shown_pred(row)
            misses[
                (
                    row["ground_truth"],
                    pred,
                    info["style"],
                    info["expected_correct"],
                    f"{status} {score}",
                )
            ] += 1
    lines = [f"\nrewardkit's misses over the clean batches ({sum(misses.values())} rows):\n"]
    for (gold, pred, style, expected, got_as), n in misses.most_common(20):
        lines.append(
            f"- gold `{gold}`, pred `{pred}` ({style}, expected {expected}): rewardkit {got_as}, x{n}\n"
        )
    for key in ("rewardkit", "rewardkit-slow"):
        g = runs.get(key, {}).get("clean")
        stats = g.figures.get("engine_stats") if g and g.figures else None
        if stats:
            lines.append(
                f"\n{key} engine counters, clean seed 0: "
                + ", ".join(f"{k} {v}" for k, v in stats.items())
                + "\n"
            )
    return "".join(lines)


def details(runs: dict[str, dict[str, Guarded]], rows: dict[str, list[dict[str, Any]]]) -> str:
    """Accuracy by response style, and where a contender loses rows math-verify gets right."""
    cleans = [b for b in rows if b.startswith("clean")]
    parts = ["Accuracy by response style (clean batches pooled; rows graded right / rows):\n"]
    for key in runs:
        got, (scores, _) = _pooled(runs, rows, [key], cleans)
        if got:
            styles = by_style(got, scores)
            parts.append(f"- {key}: " + ", ".join(f"{k} {v}" for k, v in styles.items()) + "\n")
    parts.append(_rewardkit_misses(runs, rows, cleans))
    for key in ("rewardkit", "verl-naive"):
        for label, batches in (("clean", cleans), ("pathological", ["pathological"])):
            got, (mine, statuses, ref, _) = _pooled(runs, rows, [key, "math-verify"], batches)
            if not got:
                continue
            lost = disagreements(got, mine, ref, statuses)
            won = sum(
                a and not b
                for a, b in zip(correct_flags(got, mine), correct_flags(got, ref), strict=True)
            )
            (WORK / f"{key}-losses-{label}.json").write_text(json.dumps(lost, indent=1))
            parts.append(
                f"\n{key} vs math-verify ({label}, {len(got)} rows): {won} rows right where "
                f"math-verify is wrong; {sum(e['rows'] for e in lost)} rows wrong where math-verify "
                f"is right ({len(lost)} distinct (gold, pred, style)"
                f"{', first 12 below' if len(lost) > 12 else ''})\n"
            )
            for e in lost[:12]:
                parts.append(
                    f"- gold `{e['gold']}`, pred `{e['pred']}` ({e['style']}, expected "
                    f"{e['expected_correct']}): {key} {e['status'] or ''} {e['score']}, "
                    f"math-verify {e['math_verify']}, x{e['rows']}\n"
                )
    return "".join(parts)


# ------------------------------------------------------------------ real outputs


@dataclass
class RealLine:
    """One contender's figures on the real-output corpus."""

    label: str
    rate: float | None = None
    agree: int = 0
    rows: int = 0
    tally: dict[str, int] = field(default_factory=dict)
    note: str = ""


def main_real(args: argparse.Namespace) -> None:
    """Every contender on the published outputs (and, unless ``--no-slices``, on their
    degenerate and prose slices and the corpus with the degenerate rows mixed in), then
    rows/s and errors against the truth."""
    import real_outputs as ro

    rows = ro.load_rows(Path(args.rows)) if args.rows else ro.load_corpus()
    batches = {"real": rows, **({} if args.no_slices else real_slices(rows))}
    paths = {name: write_jsonl(batch, WORK / f"{name}.jsonl") for name, batch in batches.items()}
    # The warm-up: a small generated batch (a fresh process), or the corpus itself (the
    # second epoch of a training job: parsers, caches and imports all warm)
    paths["warm"] = (
        paths["real"]
        if args.second_epoch
        else write_jsonl(make_batch(8, 8, seed=1), WORK / "warm.jsonl")
    )
    want_verl = not args.no_verl and (not args.only or "verl-naive" in args.only)
    verl_python = ensure_verl_venv(BENCH / "verl-install.log") if want_verl else None
    facts = {"date": dt.date.today().isoformat(), "machine": _machine()}
    facts["load_before"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{len(rows)} real rows; {facts['machine']}; files in {WORK}", flush=True)
    mv = {name: ro.math_verify_verdicts(batch) for name, batch in batches.items()}
    adjudicated = {} if args.rows else ro.load_adjudicated()  # hand verdicts: the corpus's
    truths = {name: real_truths(batch, mv[name], adjudicated) for name, batch in batches.items()}
    everyone = [c for c in contenders(args, verl_python) if c.key != "verl-prime"]
    runs: dict[str, dict[str, list[Guarded]]] = {
        name: {c.key: [] for c in everyone} for name in batches
    }
    # The rows rewardkit leaves to math-verify, alone: what they cost rewardkit's workers
    # bounds its rate on the corpus whatever the other rows cost (real_ceiling)
    deferred = _deferred(rows)
    paths["deferred"] = write_jsonl(
        [row for row, left in zip(rows, deferred, strict=True) if left], WORK / "deferred.jsonl"
    )
    own = [c for c in everyone if c.key == "rewardkit"]
    alone: list[Guarded] = []
    for _ in range(args.repeats):
        for name in batches:
            for c in everyone:
                runs[name][c.key].append(run_one(c, name, paths, args))
        alone += [run_one(c, "deferred", paths, args) for c in own if any(deferred)]
    facts["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = {
        name: {c.key: real_line(c, runs[name][c.key], mv[name], truths[name]) for c in everyone}
        for name in batches
    }
    text = real_report(args, rows, lines, facts, truths["real"])
    text += real_targets(lines["real"], runs["real"], mv["real"], truths["real"])
    text += real_start(runs["real"])
    text += real_ceiling(runs["real"], deferred, args.workers, alone)
    if not args.no_slices:
        text += slice_notes(batches, lines, runs, mv, truths, args.workers)
    text += real_details(runs["real"], rows, mv["real"], truths["real"])
    print("\n" + text)
    if args.rows:  # another set of rows: a section of its own, with --write only
        if args.write:
            write_section(_rows_section(args), text, ROOT / "BENCHMARKS.md")
            print(f"updated {ROOT / 'BENCHMARKS.md'}")
        return
    if not (args.only or args.no_verl) or args.write:
        write_section(_real_section(args), text, ROOT / "BENCHMARKS.md")
        print(f"updated {ROOT / 'BENCHMARKS.md'}")


SLICES = {
    "real": "corpus",
    "degenerate": "degenerate slice",
    "prose": "prose slice",
    "mixed": "corpus + degenerate",
}
"""Each batch of ``--real``, as its table rows name it."""


def real_slices(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The slices of ``benchmarks/real_slices.py``, and the corpus with the degenerate
    rows mixed in, each right after the row it was made from."""
    import real_slices as rs

    loops = rs.degenerate_rows(rows)
    prose, _ = rs.prose_rows(rows, rs.corpus_truths(rows))
    after: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in loops:
        after[row["extra_info"]["from"]].append(row)
    mixed = [out for row in rows for out in (row, *after[row["id"]])]
    return {"degenerate": loops, "prose": prose, "mixed": mixed}


def real_truths(
    rows: list[dict[str, Any]], mv: list[bool], adjudicated: dict[str, bool | None]
) -> list[bool | None]:
    """A slice row's truth is the one it carries; a corpus row's, ``real_outputs.truth``."""
    import real_outputs as ro

    return [
        r["extra_info"]["truth"] if "slice" in r["extra_info"] else ro.truth(r, m, adjudicated)
        for r, m in zip(rows, mv, strict=True)
    ]


def _real_section(args: argparse.Namespace) -> str:
    if args.rows:
        return _rows_section(args)
    return SECTION_SECOND if args.second_epoch else SECTION_REAL


def _rows_section(args: argparse.Namespace) -> str:
    return f"## Scoring engine on `{args.rows}` (benchmarks/bench_scoring.py --real --rows)"


def _verdicts(g: Guarded) -> list[bool]:
    return [s is not None and s == 1.0 for s in g.figures["scores"]]


def real_line(
    c: Contender, runs: list[Guarded], mv: list[bool], truths: list[bool | None]
) -> RealLine:
    """rows/s: median over the runs that finished; verdicts: the first that finished."""
    import real_outputs as ro

    line = RealLine(c.label)
    done = [g for g in runs if g.figures]
    if not done:
        line.note = _failure(runs[0])
        return line
    line.rate = statistics.median(len(g.figures["scores"]) / g.figures["seconds"] for g in done)
    said = _verdicts(done[0])
    line.agree = sum(a == b for a, b in zip(said, mv, strict=True))
    line.rows = len(said)
    line.tally = dict(ro.tally(said, truths))
    bad = Counter(s for s in done[0].figures.get("statuses") or [] if s != "ok")
    line.note = ", ".join(f"{v} {k}" for k, v in sorted(bad.items()))
    return line


def real_report(
    args: argparse.Namespace,
    rows: list[dict[str, Any]],
    lines: dict[str, dict[str, RealLine]],
    facts: dict[str, Any],
    truths: list[bool | None],
) -> str:
    cmd = " ".join(["python benchmarks/bench_scoring.py", *sys.argv[1:]])
    known = sum(t is not None for t in truths)
    sources = Counter(r["data_source"] for r in rows)
    warm_up = (
        "scores the whole corpus once (untimed: the first epoch), then the corpus again in "
        "one timed call"
        if args.second_epoch
        else "scores a small generated warm-up batch (untimed), then the rows in one timed call"
    )
    slices = (
        ""
        if args.no_slices
        else " The slices (`benchmarks/real_slices.py`, deterministic): *degenerate*, rows "
        "made the way a collapsing policy writes them (a corpus response cut in its second "
        "half, then a loop of blank boxes, the gold boxed, a sentence, a LaTeX line or a "
        "word for 1,000-15,000 characters, cut mid-repeat; truth: wrong, every row, also "
        "the loops of the right answer: a response that ends in a loop is not credited); "
        "*prose*, the corpus rows whose answer sits in a box or a tag, rewritten without "
        "(`\\boxed{X}` to `X`, answer tags dropped; truth carried over; ambiguous rewrites "
        "dropped: `python benchmarks/real_slices.py` counts them); *corpus + degenerate*, "
        "the corpus with each degenerate row right after the row it was made from."
    )
    head = (
        f"{_real_section(args)}\n\n"
        f"`{cmd}` on {facts['date']}; {facts['machine']}; load average {facts['load_before']} "
        f"before, {facts['load_after']} after (the machine is shared: figures are noisy).\n\n"
        f"{_rows_sentence(args, rows, sources)} Truth: "
        f"{'' if args.rows else 'the hand verdict of `adjudicated.jsonl`, else '}the source's "
        f"own verdict (`extra_info.source_label`) where math-verify agrees with it; known for "
        f"{known} rows, the others count as unknown.{slices} Each contender runs in a fresh "
        "guarded process per batch, "
        f"{warm_up}"
        f"{f'; rows/s is the median of {args.repeats} runs' if args.repeats > 1 else ''}. "
        f"rewardkit: `num_workers={args.workers}`, `timeout_s={args.timeout_s:g}`, otherwise "
        f"defaults{_overrides(args)}. Agreement: rows with the same verdict as math-verify "
        "called as verl's `math_verify` scorer calls it.\n\n"
        "| rows | contender | rows/s | vs verl Naive | agrees with math-verify "
        "| false positives | false negatives | right | unknown | notes |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    body = []
    for name, batch in lines.items():
        naive = batch.get("verl-naive")
        for ln in batch.values():
            ratio = ln.rate / naive.rate if ln.rate and naive and naive.rate else None
            t = ln.tally
            body.append(
                f"| {SLICES[name]} | {ln.label} | {_fmt(ln.rate, '.0f')} "
                f"| {_fmt(ratio, '.2f', '')}{'x' if ratio else ''} | {ln.agree}/{ln.rows} "
                f"| {t.get('fp', 0)} | {t.get('fn', 0)} | {t.get('right', 0)} "
                f"| {t.get('unknown', 0)} | {ln.note} |"
            )
    return head + "\n".join(body) + "\n\n"


def real_targets(
    lines: dict[str, RealLine],
    runs: dict[str, list[Guarded]],
    mv: list[bool],
    truths: list[bool | None],
) -> str:
    """The issue's targets: accuracy where the graders agree, no extra false positive, speed."""
    rk, naive = lines.get("rewardkit"), lines.get("verl-naive")
    out = []
    done = [g for g in runs.get("rewardkit", []) if g.figures]
    if done:
        said = _verdicts(done[0])
        both = [
            (s, t) for s, m, t in zip(said, mv, truths, strict=True) if t is not None and t == m
        ]
        wrong = sum(s != t for s, t in both)
        share = wrong / len(both) if both else 0.0
        extra = sum(s and t is False and not m for s, m, t in zip(said, mv, truths, strict=True))
        out.append(
            f"- wrong on <= 0.5% of rows where math-verify and the other grader agree: "
            f"{wrong}/{len(both)} = {share:.2%} ({'met' if share <= 0.005 else 'NOT met'})"
        )
        out.append(
            f"- no false positive beyond math-verify's own: {extra} "
            f"({'met' if extra == 0 else 'NOT met'})"
        )
        main_cpu = [g.figures["main_cpu_seconds"] for g in done if "main_cpu_seconds" in g.figures]
        if main_cpu:
            out.append(
                f"- (rewardkit's own process, its event loop included, spent "
                f"{statistics.median(main_cpu):.2f} s of CPU in the timed call (median); "
                "the rest of its work ran in the workers)"
            )
        stats = done[0].figures.get("engine_stats") or {}
        if stats:
            out.append(
                "- (rewardkit engine counters: "
                + ", ".join(f"{k} {v}" for k, v in stats.items())
                + "; `quick` rows were decided by the verifier's inline phases, `pool` rows "
                "went to math-verify in a worker (in their spread task, or alone), `spread` rows "
                "had their inline phases run in a worker, a large batch's rows up to 32 at a "
                "time, instead of on the event loop"
                + (
                    f"; worker tasks: {tasks}"
                    if (tasks := done[0].figures.get("pool_tasks"))
                    else ""
                )
                + ")"
            )
    if rk and naive and rk.rate and naive.rate:
        ratio = rk.rate / naive.rate
        verdict = "met" if ratio >= 10 else "NOT met"
        goal = "goal 20x met" if ratio >= 20 else "goal 20x not met"
        out.append(
            f"- throughput >= 10x verl Naive on the same rows: {ratio:.1f}x ({verdict}; {goal})"
        )
    return 'Targets (issue "Sound verifiers"):\n' + "\n".join(out) + "\n" if out else ""


def _deferred(rows: list[dict[str, Any]]) -> list[bool]:
    """Whether rewardkit's default verifiers leave each row to math-verify in a worker
    (no inline rule decides it: ``quick_check`` answers None), extracted with the row's
    prompt as the engine gives it (``pooled_shapes._extract``)."""
    from pooled_shapes import _extract

    from rewardkit.config import load_config
    from rewardkit.errors import RewardkitError
    from rewardkit.verifiers.registry import VerifierTable

    table = VerifierTable(load_config({}).reward)
    flags = []
    for row in rows:
        verifier = table.pick(row["data_source"])
        try:
            extracted = _extract(verifier, row)
            flags.append(verifier.quick_check(extracted, row["ground_truth"]) is None)
        except RewardkitError:  # an empty gold, say: the engine reports the row invalid
            flags.append(False)
    return flags


def real_start(runs: dict[str, list[Guarded]]) -> str:
    """rewardkit's start, left out of rows/s: the worker fork server's warm-up, once per process."""
    starts = [g.figures["start_seconds"] for g in runs.get("rewardkit", []) if g.figures]
    if not starts:
        return ""
    return (
        f"\nStart, not counted in rows/s: rewardkit's `RewardLoop` took {statistics.median(starts):.2f} s "
        "to start (median), most of it the worker fork server's warm-up, which parses a small "
        "LaTeX corpus once so that every worker inherits the parser's predictions "
        "(`benchmarks/worker_warmth.py`).\n"
    )


def real_ceiling(
    runs: dict[str, list[Guarded]],
    deferred: list[bool],
    workers: int,
    alone: list[Guarded] | None = None,
) -> str:
    """The best ratio to verl Naive that any scorer deferring the same rows to math-verify
    can reach here: math-verify's own time on those rows, shared by ``workers`` cores;
    and (``alone``: rewardkit's runs on those rows only) rewardkit's own time on them."""
    mv_runs = [g for g in runs.get("math-verify", []) if g.figures.get("row_seconds")]
    verl_runs = [g for g in runs.get("verl-naive", []) if g.figures]
    if not (mv_runs and verl_runs and any(deferred)):
        return ""
    spent = statistics.median(
        sum(t for t, d in zip(g.figures["row_seconds"], deferred, strict=True) if d)
        for g in mv_runs
    )
    verl = statistics.median(g.figures["seconds"] for g in verl_runs)
    share = spent / statistics.median(g.figures["seconds"] for g in mv_runs)
    return (
        f"\nCeiling: {sum(deferred)} rows ({sum(deferred) / len(deferred):.0%}) are left to "
        "math-verify in a worker (no inline rule decides them; its verdict is the reference "
        f"there). math-verify alone spends {spent:.2f} s on them ({share:.0%} of its whole "
        f"run). Shared by {workers} workers that is {spent / workers:.2f} s, so a scorer "
        "that leaves those rows to math-verify, at math-verify's own cost per row, cannot "
        f"beat **{verl / (spent / workers):.1f}x** verl Naive ({verl:.2f} s) on this "
        "machine, whatever it does with the other rows. rewardkit's workers spend less than "
        "that per row: they fork from a server that warmed the parser, and parse two-stage "
        "(`benchmarks/two_stage.py`, `benchmarks/worker_warmth.py`).\n" + _own_ceiling(alone, verl)
    )


def _own_ceiling(alone: list[Guarded] | None, verl: float) -> str:
    """rewardkit's bound on the corpus from its own time on the rows it defers, scored as a
    batch of their own (a fresh process each, warmed up as every contender is)."""
    seconds = [g.figures["seconds"] for g in alone or [] if g.figures]
    if not seconds:
        return ""
    spent = statistics.median(seconds)
    rows = len(next(g for g in alone or [] if g.figures).figures["scores"])
    return (
        f"\nThe same rows at rewardkit's own cost: scored alone, as a batch of their own "
        f"(rewardkit, the same settings, median of {len(seconds)} runs), the {rows} rows took "
        f"{spent:.2f} s. Had the other rows cost nothing, the corpus would still take about "
        f"that long: about **{verl / spent:.1f}x** verl Naive at most here, until fewer rows "
        "are left to math-verify or math-verify reads them faster.\n"
    )


def slice_notes(
    batches: dict[str, list[dict[str, Any]]],
    lines: dict[str, dict[str, RealLine]],
    runs: dict[str, dict[str, list[Guarded]]],
    mv: dict[str, list[bool]],
    truths: dict[str, list[bool | None]],
    workers: int,
) -> str:
    """Per slice: the ratio to verl Naive, false positives beyond math-verify's, the
    rows left to math-verify, and every row rewardkit credits that the truth calls wrong."""
    import real_slices as rs

    _, fate = rs.prose_rows(batches["real"], truths["real"])
    parts = [
        "\nSlices (`python benchmarks/real_slices.py` prints them, with a sample of the prose "
        f"rewrites): prose, of the corpus's {len(batches['real'])} rows: "
        + ", ".join(f"{v} {k}" for k, v in sorted(fate.items()))
        + ".\n"
    ]
    for name in ("degenerate", "prose", "mixed"):
        rk, naive = lines[name].get("rewardkit"), lines[name].get("verl-naive")
        done = [g for g in runs[name].get("rewardkit", []) if g.figures]
        deferred = _deferred(batches[name])
        facts = [f"{len(batches[name])} rows", f"{sum(deferred)} left to math-verify"]
        if rk and naive and rk.rate and naive.rate:
            facts.append(f"rewardkit {rk.rate / naive.rate:.1f}x verl Naive")
        wrong = []
        if done:
            said = _verdicts(done[0])
            rows, m, t = batches[name], mv[name], truths[name]
            extra = [
                r["id"]
                for r, s_, m_, t_ in zip(rows, said, m, t, strict=True)
                if s_ and t_ is False
            ]
            beyond = sum(
                s_ and t_ is False and not m_ for s_, m_, t_ in zip(said, m, t, strict=True)
            )
            facts.append(f"false positives beyond math-verify's own: {beyond}")
            stats = done[0].figures.get("engine_stats") or {}
            if stats:
                facts.append(f"engine: quick {stats.get('quick', 0)}, pool {stats.get('pool', 0)}")
            wrong = extra
        parts.append(f"- {SLICES[name]}: " + "; ".join(facts))
        parts.append(
            f"; rewardkit credits {len(wrong)} rows the truth calls wrong"
            + (
                f" ({', '.join(f'`{i}`' for i in wrong[:12])}{', ...' if len(wrong) > 12 else ''})"
                if wrong
                else ""
            )
            + "\n"
        )
    if "mixed" in batches:
        ceiling = real_ceiling(runs["mixed"], _deferred(batches["mixed"]), workers)
        parts.append(ceiling.replace("\nCeiling:", "\nCeiling on corpus + degenerate:", 1))
    return "".join(parts)


def real_details(
    runs: dict[str, list[Guarded]],
    rows: list[dict[str, Any]],
    mv: list[bool],
    truths: list[bool | None],
) -> str:
    """Per data source, rewardkit's errors against the truth, and the rows it gets wrong."""
    parts = []
    for key in ("rewardkit", "rewardkit-slow"):
        done = [g for g in runs.get(key, []) if g.figures]
        if not done:
            continue
        said = _verdicts(done[0])
        parts.append(_real_errors(key, rows, said, mv, truths))
    return "".join(parts)


def _real_errors(
    key: str,
    rows: list[dict[str, Any]],
    said: list[bool],
    mv: list[bool],
    truths: list[bool | None],
) -> str:
    per: dict[str, Counter[str]] = defaultdict(Counter)
    wrong = []
    for row, s, m, t in zip(rows, said, mv, truths, strict=True):
        c = per[row["data_source"]]
        c["rows"] += 1
        if t is not None and t == m:
            c["agreed"] += 1
            c["wrong where graders agree"] += s != t
        if t is not None and s != t:
            c["fp" if s else "fn"] += 1
            c["fp beyond math-verify"] += bool(s and not m)
            wrong.append((row, s, m))
    lines = [f"\n{key} against the truth, by data source:\n"]
    for ds, c in sorted(per.items()):
        share = c["wrong where graders agree"] / c["agreed"] if c["agreed"] else 0.0
        lines.append(
            f"- {ds}: {c['rows']} rows; wrong on {c['wrong where graders agree']} of "
            f"{c['agreed']} where math-verify and the other grader agree ({share:.2%}); "
            f"{c['fp']} false positives ({c['fp beyond math-verify']} beyond math-verify's own), "
            f"{c['fn']} false negatives\n"
        )
    # Every false positive, then up to 10 false negatives per data source.
    wrong.sort(key=lambda w: (not w[1], w[0]["data_source"]))
    shown = [w for i, w in enumerate(wrong) if w[1] or _rank(wrong, i) < 10]
    if shown:
        lines.append(f"\n{key}'s wrong rows ({len(shown)} of {len(wrong)} shown):\n")
        for row, s, m in shown:
            tail = row["response"][-70:].replace("\n", " ").replace("|", "\\|")
            lines.append(
                f"- `{row['id']}` gold `{row['ground_truth']}`: {key} {int(s)}, "
                f"math-verify {int(m)}, response ends `{tail}`\n"
            )
    return "".join(lines)


def _rank(wrong: list[tuple[dict[str, Any], bool, bool]], i: int) -> int:
    """How many false negatives of the same data source come before row i in ``wrong``."""
    source = wrong[i][0]["data_source"]
    return sum(w[0]["data_source"] == source and not w[1] for w in wrong[:i])


if __name__ == "__main__":
    main()
