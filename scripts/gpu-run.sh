#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/gpu-test.sh built
# gpu-bundle/ here: every test binary, `mats devices`, and (unless MATS_GPU_BENCH=0) `mats bench
# measure` and `mats bench qap`. MATS_GPU_TESTS (globs of test binary names) narrows the tests.
# Writes a summary and logs to $OUT (or gpu-results/ when OUT is unset).
set -u
root=$PWD
bundle=$root/gpu-bundle
out=${OUT:-$root/gpu-results}
mkdir -p "$out"

# Recreate the build machine's paths the test binaries were compiled with.
origin=$(cat "$bundle/ORIGIN")
if [ "$origin" != "$root" ]; then
    if [ -e "$origin" ] && [ "$(readlink -f "$origin")" != "$root" ]; then
        echo "warning: $origin exists and is not this checkout; tests may read stale paths" >&2
    else
        mkdir -p "$(dirname "$origin")"
        ln -sfn "$root" "$origin"
    fi
fi
# The figure tests' data, where the checkout has no ../shared of its own.
if [ -d "$bundle/shared/data" ] && [ ! -e "$(dirname "$origin")/shared" ]; then
    ln -sfn "$bundle/shared" "$(dirname "$origin")/shared"
fi
mkdir -p "$root/target/release"
cp "$bundle/bin/mats" "$root/target/release/mats"
mats=$root/target/release/mats
# NVRTC compiles served from the driver's compute cache carry no ptxas report. The kernels
# crate turns the cache off itself on first use; exporting it covers every process from start.
export CUDA_CACHE_DISABLE=1
# This machine has a GPU: a GPU test that finds none fails instead of passing by skipping.
export MATS_REQUIRE_GPU=1

summary=$out/summary.txt
: > "$summary"
{
    echo "== host: $(hostname), $(date -u +%FT%TZ)"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv 2>&1 || true
} >> "$summary"

"$mats" devices > "$out/devices.txt" 2>&1
echo "devices: exit $?" >> "$summary"

failed=0
log=$out/tests.log
: > "$log"
# MATS_GPU_TESTS='gpu-* qap_gpu-*' runs only the test binaries matching those globs.
for t in "$bundle"/tests/*; do
    name=$(basename "$t")
    if [ -n "${MATS_GPU_TESTS:-}" ]; then
        wanted=0
        # No pathname expansion while splitting: 'gpu-*' would otherwise become gpu-bundle.
        set -f
        for g in $MATS_GPU_TESTS; do
            # shellcheck disable=SC2254
            case $name in $g) wanted=1 ;; esac
        done
        set +f
        [ $wanted = 1 ] || continue
    fi
    echo "===== $name" >> "$log"
    # The ignored figure tests (IG's ARPD on Taillard, the Ant System and STS figures) run
    # here, where sixteen idle cores make them affordable; other ignored tests are helpers
    # (kill.rs's child writer) and stay ignored.
    case $name in
        pfsp_arpd-* | tsp_solvers-* | hwsw_sts-*) extra=--include-ignored ;;
        *) extra= ;;
    esac
    "$t" --test-threads=1 --nocapture $extra >> "$log" 2>&1
    rc=$?
    result=$(grep -E '^test result:' "$log" | tail -1)
    skipped=$(sed -n "/===== $name/,\$p" "$log" | grep -c 'skipped' || true)
    echo "test $name: exit $rc; $result; lines saying skipped: $skipped" >> "$summary"
    [ $rc -eq 0 ] || failed=1
done

if [ "${MATS_GPU_BENCH:-1}" = 0 ]; then
    cat "$summary"
    exit $failed
fi

"$mats" bench measure --json "$out/bench-measure.json" > "$out/bench-measure.txt" 2>&1
echo "bench measure: exit $?" >> "$summary"

quality=()
[ -d "$bundle/qaplib" ] && quality=(--quality --qaplib "$bundle/qaplib")
"$mats" bench qap "${quality[@]}" --json "$out/bench-qap.json" > "$out/bench-qap.txt" 2>&1
echo "bench qap: exit $?" >> "$summary"

cat "$summary"
echo "---- bench measure"
cat "$out/bench-measure.txt"
echo "---- bench qap"
cat "$out/bench-qap.txt"
exit $failed
