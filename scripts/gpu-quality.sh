#!/usr/bin/env bash
# On the GPU machine, after gpu-bundle/bin/mats is built (scripts/gpu-test.sh): runs
# campaigns/qap-quality.toml end to end (tune, export, solve --tuned on the holdouts next to
# the untuned default at the same 1 s budget) and leaves everything under $OUT/qap-quality.
set -u
mats=$PWD/gpu-bundle/bin/mats
out=${OUT:-$PWD/gpu-results}/qap-quality
mkdir -p "$out"
export CUDA_CACHE_DISABLE=1 MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}
"$mats" tune campaigns/qap-quality.toml --out "$out" --fresh --quiet > "$out/tune.txt" 2>&1
rc=$?
cat "$out/tune.txt"
[ $rc -eq 0 ] || exit $rc
"$mats" export "$out" --out "$out/tuned" 2>&1 | tee "$out/export.txt"
for f in tai50a wil100 sko56 sko90 kra32; do
    for seed in 1 2 3; do
        echo "== $f seed $seed: tuned bundle, then the default (rots-block), 1 s each"
        "$mats" solve --tuned "$out/tuned" "data/qaplib/$f.dat" --seed $seed 2>&1 | grep -E "^(algorithm|best known)"
        "$mats" solve "data/qaplib/$f.dat" --backend gpu --time-limit 1 --seed $seed 2>&1 | grep -E "^(algorithm|best known)"
    done
done | tee "$out/solve.txt"
