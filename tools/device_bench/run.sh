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
python3 -VV >"$out/python.txt" 2>&1
# MuJoCo's wheels are built for one CPython (prepare.py's DEVICE_PYTHON): on another, only HalfCheetah's
# rows lose them (they record the ImportError); everything else must install.
pip_install() {
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/device-site "$@"
}
shopt -s nullglob
pure_wheels=() mujoco_wheels=()
for wheel in .device/wheels/*.whl; do
    case "$(basename "$wheel")" in
        mujoco-[0-9]*) mujoco_wheels+=("$wheel") ;;
        *) pure_wheels+=("$wheel") ;;
    esac
done
pip_install "${pure_wheels[@]}" || exit 2
if [ "${#mujoco_wheels[@]}" -gt 0 ]; then
    pip_install "${mujoco_wheels[@]}" || echo "run.sh: MuJoCo's wheel does not install here (python.txt): HalfCheetah's rows will fail" >&2
fi
export PYTHONPATH=/tmp/device-site:$PWD PYTHONUNBUFFERED=1
export ENVPORT_CACHE_DIR=/tmp/envport-cache
# JAX takes GPU memory as it needs it instead of 75% at start: HalfCheetah's rows run in a child
# process beside this one, which would otherwise find the GPU's memory already taken.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
# A GPU run or none: if JAX's CUDA plugin fails to start, JAX would fall back to the CPU and spend the
# budget timing GPU-sized batches there. The CPU stays listed for the Pong row that runs its policy on it.
export JAX_PLATFORMS=${JAX_PLATFORMS:-cuda,cpu}
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
