#!/usr/bin/env bash
# The CPU benchmarks on the GPU machine's 16 cores (the `device` tool), Ray's included:
#
#   benchmarks/gpu/wheels.sh --ray            # here, once: wheels and a trimmed Ray into .whl/
#   run(command="bash benchmarks/gpu/cpu16.sh", carry=[".whl"], timeout_s=500)
#
# Ray's wheel (79 MB) is over what a call may carry (64 MiB), so wheels.sh packs its
# runtime without the Java jars, RLlib, Data, Serve, Tune, Train, LLM and the dashboard's
# web client (none of which RayWorkerPool imports) as .whl/ray312.tar.xz (28 MB).
# Steps, each under its own limit and with its own log in $OUT (at most 8 minutes in all):
#   1. bench_ray.py --no-fast-paths, 4,096 rows a batch, 16 workers (actors) against 16 local workers;
#   2. bench_scoring.py --real with its slices, against math-verify in one process.
# Nothing here rewrites BENCHMARKS.md: copy the figures over by hand, after reading them.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rewardkit-cpu16}
mkdir -p "$OUT"
source benchmarks/gpu/lib.sh
install_wheels || exit 1
STEP_TAIL=40

{
  nproc
  grep -m1 "model name" /proc/cpuinfo
  python3 -c "import ray, rewardkit, math_verify; print('ray', ray.__version__)"
} 2>&1 | tee "$OUT/summary.log"

step ray-slow 200 python3 benchmarks/bench_ray.py --no-fast-paths --prompts 512 --repeats 5
step scoring 260 python3 benchmarks/bench_scoring.py --real --no-verl --workers 16 --repeats 2 \
  --only math-verify rewardkit
