#!/usr/bin/env bash
# Every GPU check of the project in one run, on the GPU machine (the `device` tool):
#
#   benchmarks/gpu/wheels.sh                  # here, once: the wheels it lacks, into .whl/
#   run(command="bash benchmarks/gpu/run.sh", carry=[".whl"], timeout_s=600)
#
# Steps, each under its own time limit (530 s in all at most), each log kept apart so
# that one failing step costs only its own figures (2026-11-27 on an H200: about 6 minutes in all):
#   1. the GPU tests (pytest -m gpu tests/models: CUDA scores against CPU and direct
#      forwards, padded and packed);
#   2. bench_rm.py: padded, packed and fixed batches of a 1B Llama RM, share of bf16 matmul;
#   3. bench_server.py: the server against the OpenRLHF-style one and against its own
#      model-only ceiling, and where the model thread's time goes;
#   4. bench_managed.py: a generative judge through a launched `transformers serve`
#      replica, 64 rows at once against one request at a time.
# The benchmarks rewrite their GPU sections of BENCHMARKS.md there; it comes back in $OUT
# with the logs (copy the sections over by hand, after reading them).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/rewardkit-gpu}
mkdir -p "$OUT"
source benchmarks/gpu/lib.sh
install_wheels || exit 1

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c "import torch, transformers, rewardkit; print('torch', torch.__version__, \
'transformers', transformers.__version__, torch.cuda.get_device_name(0))"
} 2>&1 | tee "$OUT/summary.log"

# test_docs_minilm imports a dev dependency the wheels leave out (it holds no GPU test)
step gpu-tests 90 python3 -m pytest -q -p no:cacheprovider -n 0 -m gpu tests/models \
  --ignore=tests/models/test_docs_minilm.py
step bench-rm 120 python3 benchmarks/bench_rm.py --device cuda --size 1b --rows 1024 \
  --max-length 4096 --include-longest
step bench-server 170 python3 benchmarks/bench_server.py --device cuda --size 1b --repeats 2
step bench-judge 150 python3 benchmarks/bench_managed.py --device cuda --replicas 1 \
  --one-at-a-time --rows 64 --max-tokens 32 --repeats 2 --hidden 1024 --layers 8
cp BENCHMARKS.md "$OUT/"
