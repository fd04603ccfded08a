#!/usr/bin/env bash
# The wheels the GPU machine lacks (its image has torch, transformers, numpy, httpx,
# pytest and more: /work/.library/device/KINDS.md), for its Python 3.12 on x86-64, into
# .whl/ (git-ignored). Run here, where the package registry is reachable; then carry .whl
# to the device and run benchmarks/gpu/run.sh there. Versions are this venv's.
# With --ray, also Ray's runtime for benchmarks/gpu/cpu16.sh, packed as .whl/ray312.tar.xz
# without the parts RayWorkerPool never imports (its wheel alone is over the 64 MiB a call
# carries).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
mkdir -p .whl
# name==version of each, read from the venv, so that the device runs what CI tests
pins=$("$py" - <<'PY'
from importlib.metadata import version
names = """math-verify latex2sympy2_extended antlr4-python3-runtime pydantic pydantic_core
annotated-types typing-inspection omegaconf fastapi starlette annotated-doc uvicorn httptools
jsonschema jsonschema-specifications referencing rpds-py pytest-asyncio opentelemetry-api
python-dotenv websockets watchfiles typing-extensions anyio
openai httpx2 httpcore2 truststore jiter sniffio""".split()  # the last line: `transformers serve`
print(" ".join(f"{n}=={version(n)}" for n in names))
PY
)
for pin in $pins; do
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl "$pin"
done
if [[ ${1:-} == --ray ]]; then
  tmp=$(mktemp -d)
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux2014_x86_64 -d "$tmp" "ray==$("$py" -c \
    'from importlib.metadata import version; print(version("ray"))')"
  (cd "$tmp" && unzip -q ray-*.whl && rm -rf ray/jars ray/rllib ray/data ray/serve ray/tune \
    ray/train ray/llm ray/dashboard/client && tar cJf ray312.tar.xz ray ray-*.dist-info)
  mv "$tmp/ray312.tar.xz" .whl/ && rm -rf "$tmp"
fi
du -sh .whl
