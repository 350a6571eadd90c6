#!/usr/bin/env bash
# On the GPU machine, after gpu-bundle/bin/mats is built (scripts/gpu-test.sh): runs a
# gap@budget campaign end to end (tune, report, export, then solve --tuned on each holdout next
# to the untuned default at the same budget) and leaves everything under $OUT/NAME.
#
#   scripts/gpu-quality.sh CAMPAIGN BUDGET_S HOLDOUT_FILE...
#   scripts/gpu-quality.sh campaigns/qap-quality.toml 1 data/qaplib/{tai50a,wil100,sko56,sko90,kra32}.dat
#   scripts/gpu-quality.sh campaigns/pfsp-taillard.toml 1 data/taillard/{ta052,ta082,ta103}.txt
set -u
campaign=$1
budget=$2
shift 2
name=$(basename "$campaign" .toml)
mats=$PWD/gpu-bundle/bin/mats
out=${OUT:-$PWD/gpu-results}/$name
mkdir -p "$out"
export CUDA_CACHE_DISABLE=1 MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}
start=$(date +%s)
"$mats" tune "$campaign" --out "$out/run" --fresh --quiet > "$out/tune.txt" 2>&1
rc=$?
echo "tune: exit $rc after $(( $(date +%s) - start )) s" | tee -a "$out/tune.txt"
cat "$out/tune.txt"
[ $rc -eq 0 ] || exit $rc
"$mats" report "$out/run" > "$out/report.txt" 2>&1
"$mats" export "$out/run" --out "$out/tuned" 2>&1 | tee "$out/export.txt"
for f in "$@"; do
    for seed in 1 2 3; do
        echo "== $f seed $seed: the tuned bundle, then the default, $budget s each"
        "$mats" solve --tuned "$out/tuned" "$f" --seed $seed 2>&1 | grep -E "^(algorithm|best known)|rror"
        "$mats" solve "$f" --backend gpu --time-limit "$budget" --seed $seed 2>&1 | grep -E "^(algorithm|best known)|rror"
    done
done | tee "$out/solve.txt"
