#!/usr/bin/env bash
# Runs tuning campaigns on the GPU machine from the repository root, after scripts/gpu-test.sh
# built gpu-bundle/ here. Usage (device command): bash scripts/gpu-campaigns.sh NAME...
# where NAME is a campaign in campaigns/ (e.g. qap-small-exhaustive qap-paper). For each: the
# campaign, its summary, report, export and (for exhaustive campaigns) the strategy study;
# everything lands in $OUT/NAME/ (the store and report included).
set -u
root=$PWD
mats=$root/gpu-bundle/bin/mats
out=${OUT:-$root/gpu-results}
export CUDA_CACHE_DISABLE=1
export MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}
status=0
for name in "$@"; do
    dir=$out/$name
    mkdir -p "$dir"
    echo "== $name ($(date -u +%T))"
    "$mats" tune "campaigns/$name.toml" --out "$dir" --fresh --quiet > "$dir/tune.txt" 2> "$dir/tune.err"
    rc=$?
    cat "$dir/tune.txt" "$dir/tune.err"
    [ $rc -eq 0 ] || { status=1; continue; }
    "$mats" report "$dir" > "$dir/report.txt" 2>&1 || status=1
    "$mats" export "$dir" --out "$dir/tuned" > "$dir/export.txt" 2>&1 || status=1
    cat "$dir/export.txt"
    if grep -q 'name = "exhaustive"' "campaigns/$name.toml"; then
        "$mats" bench strategies "$dir" --json "$dir/strategies.json" 2>&1 | tee "$dir/strategies.txt"
    fi
    "$mats" results "$dir" --csv -o "$dir/trials.csv" || status=1
done
exit $status
