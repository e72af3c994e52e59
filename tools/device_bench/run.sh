#!/bin/bash
# The device side of tools/device_bench (see its README): run from the repository root on the device
# machine, with .device/ carried. Arguments go to tools.device_bench.measure; results go to $OUT.
set -u
if [ ! -d .device/wheels ]; then
    echo "run.sh: no .device/ here: run './pants run tools/device_bench:prepare' on the dev machine and carry .device" >&2
    exit 2
fi
out=${OUT:-bench-results/device}
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/device-site \
    .device/wheels/*.whl || exit 2
export PYTHONPATH=/tmp/device-site:$PWD PYTHONUNBUFFERED=1
export ENVPORT_CACHE_DIR=/tmp/envport-cache
# JAX takes GPU memory as it needs it instead of 75% at start: HalfCheetah's rows run in a child
# process beside this one, which would otherwise find the GPU's memory already taken.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p "$ENVPORT_CACHE_DIR/pokejax" "$ENVPORT_CACHE_DIR/pong"
cp .device/cache/pokejax/* "$ENVPORT_CACHE_DIR/pokejax/"
# The C Pong library compiled on the dev machine, put where build_library looks with this machine's
# compiler (its key names the compiler's version); without a compiler the C rows record the error.
if key=$(python3 -c "from envs.pong.reference.build import _compiler, _build_key; print(_build_key(_compiler()))"); then
    cp .device/pong/libenvport_pong.so "$ENVPORT_CACHE_DIR/pong/libenvport_pong-$key.so"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv >"$out/nvidia-smi.csv" 2>&1 || true
python3 -m tools.device_bench.measure --out "$out" "$@" 2>&1 | tee "$out/device_bench.log"
exit "${PIPESTATUS[0]}"
