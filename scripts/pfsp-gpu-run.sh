#!/usr/bin/env bash
# On the GPU machine, from the repository root, after scripts/pfsp-gpu-bundle.sh: the pfsp GPU
# tests, a few `mats solve` runs and `mats bench pfsp` (arguments after the first are passed to
# it). Usage: bash BUNDLE/run.sh [tests|bench|all] [BENCH ARGS...]. Logs go to $OUT.
set -u
what=${1:-all}
shift || true
root=$PWD
bundle=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
origin=$(cat "$bundle/ORIGIN")
if [ "$origin" != "$root" ] && [ ! -e "$origin" ]; then
    mkdir -p "$(dirname "$origin")"
    ln -sfn "$root" "$origin"
fi
export CUDA_CACHE_DISABLE=1
export MATS_CACHE_DIR=$root/.mats-cache
mats=$bundle/bin/mats
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv 2>&1
if [ "$what" = tests ] || [ "$what" = all ]; then
    MATS_REQUIRE_GPU=1 "$bundle/tests/pfsp_gpu" --test-threads=1 --nocapture > "$out/pfsp-tests.log" 2>&1
    echo "pfsp_gpu tests: exit $?"
    grep -E "^test |test result|panicked" "$out/pfsp-tests.log"
    for algo in ig-block tabu-full tabu-prefix; do
        "$mats" solve data/pfsp/tai20_10.txt --index 1 --backend gpu --algo $algo --iterations 100 | grep -E "algorithm|objective|best known|gpu"
    done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    "$mats" bench pfsp --taillard "$bundle/taillard-pfsp" --json "$out/bench-pfsp.json" "$@" 2>&1 | tee "$out/bench-pfsp.txt"
fi
