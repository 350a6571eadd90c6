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
    # ta081 with the default variant; the paper's 900 x 40, where ig-block does not fit.
    if [ -f "$bundle/taillard-pfsp/taillard/tai100_20.txt" ]; then
        "$mats" solve "$bundle/taillard-pfsp/taillard/tai100_20.txt" --index 1 --backend gpu --time-limit 3 | grep -E "instance|algorithm|objective|best known|time|gpu"
    fi
    "$mats" instance generate pfsp --jobs 900 --machines 40 --seed 42 -o /tmp/pfsp-900x40.txt
    "$mats" solve /tmp/pfsp-900x40.txt --backend gpu --iterations 20 2>&1 | grep -E "note|algorithm|objective|time|gpu"
    "$mats" solve /tmp/pfsp-900x40.txt --backend gpu --algo ig-block --iterations 20 2>&1 | grep -E "error"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    "$mats" bench pfsp --taillard "$bundle/taillard-pfsp" --json "$out/bench-pfsp.json" "$@" 2>&1 | tee "$out/bench-pfsp.txt"
fi
