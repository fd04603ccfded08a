# Sourced by run.sh and cpu16.sh (in the repository's root, on the GPU machine): the
# carried wheels installed into /tmp/site, the environment set, and step().

install_wheels() {  # install_wheels: the wheels of .whl/ (wheels.sh), Ray's tarball if there
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || return 1
  if [[ -f .whl/ray312.tar.xz ]]; then
    tar xJf .whl/ray312.tar.xz -C /tmp/site || return 1
  fi
  export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
  export TOKENIZERS_PARALLELISM=false
}

step() {  # step NAME SECONDS COMMAND...: run it with a limit, its output in $OUT/NAME.log
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc $rc in $((SECONDS - t0)) s: $*" | tee -a "$OUT/summary.log"
  tail -n "${STEP_TAIL:-25}" "$OUT/$name.log"
}
