#!/usr/bin/env bash
# Runs on the GPU machine from the repository root (after scripts/qap-gpu-bundle.sh): the
# qap_gpu tests (layouts move for move, n up to 512, all 136 QAPLIB instances re-scored),
# tai100a at one and two blocks per SM, tai256c at 10 s and 60 s, n = 512, the equal-time
# comparison with the CPU Ro-TS, and Nsight Compute on tai100a (throughput, occupancy,
# stall reasons). Figures in docs/qap-gpu.md. Results under $OUT (or /tmp/qap-gpu-out).
set -u
root=$PWD; B=$root/gpu-bundle-qap; out=${OUT:-/tmp/qap-gpu-out}; mkdir -p "$out"
origin=$(cat "$B/ORIGIN")
[ -e "$origin" ] || { mkdir -p "$(dirname "$origin")"; ln -s "$root" "$origin"; }
shared=$(dirname "$origin")/shared/data
mkdir -p "$shared"; [ -e "$shared/qaplib" ] || ln -s "$B/qaplib" "$shared/qaplib"
export MATS_REQUIRE_GPU=1 CUDA_CACHE_DISABLE=1
M=$B/mats; Q=$B/qaplib/instances
t0=$(date +%s)
timeout 240 "$B"/qap_gpu --test-threads=1 --nocapture > "$out/tests.log" 2>&1
echo "qap_gpu tests rc $? ($(( $(date +%s) - t0 )) s)"
grep -E "^test |test result|panicked|136 QAPLIB|gap after|n = |diverged" "$out/tests.log" | head -40
s() {
    tag=$1; shift
    timeout 90 "$M" solve "$@" --backend gpu --json > "$out/$tag.json" 2> "$out/$tag.err"
    echo "$tag rc $?: $(python3 -c "import json;d=json.load(open('$out/$tag.json'));g=d.get('gpu',{});print(d.get('objective'),'gap',d.get('gap_percent'),'it',d.get('iterations'),g.get('solutions'),'blocks',g.get('layout'),g.get('blocks_per_sm'),'/SM regs',g.get('registers'),'local',g.get('local_bytes_per_thread'))" 2>&1 | tail -1)"
}
for seed in 1 2; do
    s "tai100a-s$seed-default" "$Q/tai100a.dat" --time-limit 10 --seed $seed
    s "tai100a-s$seed-264" "$Q/tai100a.dat" --time-limit 10 --seed $seed --solutions 264
done
s tai256c-10s "$Q/tai256c.dat" --time-limit 10
s tai256c-60s "$Q/tai256c.dat" --time-limit 60
"$M" instance generate qap --n 512 --seed 1 -o /tmp/gen512.dat
s gen512 /tmp/gen512.dat --time-limit 5
timeout 120 "$M" bench qap --compare tai100a --seeds 1 --seconds 10 --compare-only \
    --qaplib "$Q" --json "$out/compare.json" 2>&1 | tail -4
# Two blocks per SM (264 blocks): the configuration the int16 matrices make possible.
ncu --clock-control none --kernel-name qap_rots_block_fast --launch-skip 5 --launch-count 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    "$M" solve "$Q/tai100a.dat" --backend gpu --time-limit 2 --solutions 264 > "$out/ncu-tai100a.txt" 2>&1
echo "ncu rc $?"
grep -E "Compute \(SM\) Throughput|Memory Throughput|L1/TEX Cache|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared)|Registers Per|Eligible|Issued Warp" "$out/ncu-tai100a.txt"
grep -E "issue_stalled" "$out/ncu-tai100a.txt" | awk '{print $NF, $1}' | sort -rn | head -6
echo "total $(( $(date +%s) - t0 )) s"
