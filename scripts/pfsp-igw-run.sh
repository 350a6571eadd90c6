#!/usr/bin/env bash
# On the GPU machine, from the repository root, with the bundle of scripts/pfsp-gpu-bundle.sh
# in BUNDLE: the ig-warp runs of docs/pfsp-gpu.md. Logs go to $OUT.
# Usage: bash BUNDLE/igw.sh probe|final|vrf [BENCH ARGS...]
#   probe: the ig-warp GPU tests, ig-warp's configurations on ta081 (an ignored test), Nsight
#          Compute on pfsp_ig_warp (ta081), a short quality run of ig-warp and ig-block.
#   final: the ig-warp GPU tests, mats bench pfsp --quality with BENCH ARGS (e.g. --instances
#          ta051-ta053,ta081-ta083 --time-factor 30 --seeds 3), Nsight Compute on pfsp_ig_warp,
#          then vrf.
#   vrf:   VFR800_60_1 for VRF_LIMIT seconds (default 60): mats solve --backend gpu on core 0
#          beside 15 CPU IG processes (cores 1..15, seeds 1..15); the best of the 15.
set -u
what=${1:-probe}
shift || true
bundle=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$PWD/gpu-results}
mkdir -p "$out"
# The test binary reads the repository's instances where it was built (/work/wt-pfsp).
[ -e /work/wt-pfsp ] || { mkdir -p /work && ln -s "$PWD" /work/wt-pfsp; }
export CUDA_CACHE_DISABLE=1
export MATS_CACHE_DIR=$PWD/.mats-cache
mats=$bundle/bin/mats
T=$bundle/taillard-pfsp/taillard
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv
if [ "$what" = probe ]; then
    MATS_REQUIRE_GPU=1 "$bundle/tests/pfsp_gpu" --test-threads=1 --nocapture ig_warp > "$out/tests.log" 2>&1
    echo "pfsp_gpu ig_ tests: exit $?"
    grep -E "^test |test result|panicked|equal the CPU|ig-warp:|left|right" "$out/tests.log" | head -40
    MATS_REQUIRE_GPU=1 "$bundle/tests/pfsp_gpu" --test-threads=1 --nocapture --ignored ig_warp_configurations > "$out/configs.log" 2>&1
    echo "configurations: exit $?"
    grep -E "ta081 3 s|panicked" "$out/configs.log"
    for k in ig-warp; do
        timeout 100 ncu --clock-control none --kernel-name "regex:pfsp_ig_" --launch-skip 1 --launch-count 1 \
            --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
            "$mats" solve "$T/tai100_20.txt" --index 1 --backend gpu --algo $k --iterations 3 > "$out/ncu-$k.txt" 2>&1
        echo "== ncu $k: exit $?"
        grep -E "SM Throughput|Achieved Occupancy|Theoretical Occupancy|Block Limit|Registers Per|Stall|Warp Cycles|Issued Warp|No Eligible|Duration|Grid Size|Block Size|Eligible Warps" "$out/ncu-$k.txt" | head -30
    done
    "$mats" bench pfsp --taillard "$bundle/taillard-pfsp" --no-throughput --quality --instances ta051,ta081,ta101 \
        --time-factor 1 --variants ig-warp,ig-block 2>&1 | tee "$out/bench-probe.txt"
fi
if [ "$what" = final ]; then
    MATS_REQUIRE_GPU=1 "$bundle/tests/pfsp_gpu" --test-threads=1 --nocapture ig_warp > "$out/tests.log" 2>&1
    echo "pfsp_gpu ig_warp tests: exit $?"
    grep -E "^test |test result|panicked|equal the CPU|ig-warp:" "$out/tests.log" | head -40
    "$mats" bench pfsp --taillard "$bundle/taillard-pfsp" --no-throughput --quality "$@" \
        --json "$out/bench-final.json" 2>&1 | tee "$out/bench-final.txt"
    timeout 60 ncu --clock-control none --kernel-name pfsp_ig_warp --launch-skip 3 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
        "$mats" solve "$T/tai100_20.txt" --index 1 --backend gpu --algo ig-warp --time-limit 1 > "$out/ncu-ig-warp.txt" 2>&1
    echo "== ncu ig-warp: exit $?"
    grep -E "Compute \(SM\) Throughput|SM Active Cycles|Elapsed Cycles|Achieved Occupancy|Theoretical Occupancy|Block Limit|Registers Per|Issued Warp|No Eligible|Duration|Grid Size|Eligible Warps|Active Warps" "$out/ncu-ig-warp.txt" | head -30
fi
if [ "$what" = vrf ] || [ "$what" = final ]; then
    f=$bundle/VFR800_60_1_Gap.txt
    limit=${VRF_LIMIT:-60}
    # 15 CPU IG processes (one per core 1..15, seeds 1..15) beside the GPU run on core 0.
    for s in $(seq 1 15); do
        taskset -c "$s" "$mats" solve "$f" --backend cpu --algo ig --seed "$s" --time-limit "$limit" --json > "/tmp/vrf-cpu-$s.json" 2>/dev/null &
    done
    taskset -c 0 "$mats" solve "$f" --backend gpu --time-limit "$limit" 2>&1 | tee "$out/vrf-gpu.txt" | grep -E "algorithm|objective|note|gpu|error|time"
    wait
    python3 - /tmp <<'PY'
import json, sys, glob
vals = []
for p in sorted(glob.glob(sys.argv[1] + "/vrf-cpu-*.json")):
    try:
        vals.append(json.load(open(p))["objective"])
    except Exception as e:
        print("unreadable", p, e)
print("VFR800_60_1 (best known 46470) CPU IG x15: best", min(vals) if vals else None, "all", sorted(vals))
PY
fi
