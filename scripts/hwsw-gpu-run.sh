#!/usr/bin/env bash
# On the GPU machine, from the repository root, after scripts/hwsw-gpu-bundle.sh: the hwsw GPU
# tests (MATS_REQUIRE_GPU=1), a few `mats solve --backend gpu` runs and `mats bench hwsw`
# (arguments after the first are passed to it). Logs go to $OUT (default gpu-results/).
# Usage: bash BUNDLE/run.sh [tests|bench|all] [BENCH ARGS...]
set -u
what=${1:-all}
shift || true
root=$PWD
bundle=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
export CUDA_CACHE_DISABLE=1
export MATS_CACHE_DIR=/tmp/mats-cache
mats=$bundle/bin/mats
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv 2>&1
if [ "$what" = tests ] || [ "$what" = all ]; then
    for t in hwsw_gpu_host hwsw_gpu; do
        MATS_REQUIRE_GPU=1 "$bundle/tests/$t" --test-threads=1 --nocapture > "$out/$t.log" 2>&1
        echo "$t tests: exit $?"
        grep -E "^test |test result|panicked|skipped" "$out/$t.log" | head -40
    done
    if [ -x "$mats" ]; then
        "$mats" instance generate hwsw --nodes 2000 --edges 6000 --ccr 0.1 --r-level low --seed 1 -o /tmp/g2000.hwsw
        for algo in separate compact fused gpts-multi; do
            "$mats" solve /tmp/g2000.hwsw --backend gpu --algo $algo 2>&1 | grep -E "algorithm|objective|time|gpu|error"
        done
        "$mats" solve /tmp/g2000.hwsw 2>&1 | grep -E "algorithm|objective|time"
    fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
    "$mats" bench hwsw --json "$out/bench-hwsw.json" "$@" 2>&1 | tee "$out/bench-hwsw.txt"
fi
