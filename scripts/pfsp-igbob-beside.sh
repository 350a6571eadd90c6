#!/usr/bin/env bash
# Issue 26's comparison on the GPU machine: for each instance and seed, `mats solve --backend
# gpu` (the family default, ig-block) and IG_BoB (Fernandez-Viagas & Framinan's best-of-breed
# iterated greedy) as one process per CPU core, side by side for the same wall time: n m / 2 x
# 30 ms (Taillard), or SECONDS where it is set. IG_BoB is not part of mats: build it as
# docs/pfsp-gpu.md says and point IGBOB at its runner.
#
#   IGBOB=igbob/run-igbob.sh DATA=shared/data/taillard-pfsp OUT=dir \
#       scripts/pfsp-igbob-beside.sh "1 2 3" ta101 ta102 VFR800_60_1
#
# MATS_ARGS adds flags to every `mats solve` (e.g. "--threads 256").
# Writes OUT/mats.csv (instance,seed,seconds,makespan,bks,gap_percent,wall_s), IG_BoB's
# OUT/igbob.csv (one row per process) and each run's JSON; prints both per run.
set -euo pipefail
: "${IGBOB:?IGBOB must name run-igbob.sh}" "${DATA:?DATA must name the taillard-pfsp folder}"
out=${OUT:-pfsp-igbob}
mats=${MATS:-target/release/mats}
procs=${PROCS:-$(nproc)}
seeds=$1
shift
mkdir -p "$out"
# shellcheck source=scripts/pfsp-instance.sh
. "$(dirname "$0")/pfsp-instance.sh"
[ -s "$out/mats.csv" ] || echo "instance,seed,seconds,makespan,bks,gap_percent,wall_s" > "$out/mats.csv"

for name in "$@"; do
    pfsp_instance "$DATA" "$name"
    secs=${SECONDS_FIXED:-$(awk -v n="$n" -v m="$m" 'BEGIN { printf "%g", n * m / 2 * 0.030 }')}
    # Kernels compile once, untimed, before the first measured run.
    # shellcheck disable=SC2086
    "$mats" solve "$file" "${pick[@]}" --backend gpu ${MATS_ARGS:-} --iterations 1 > /dev/null
    for seed in $seeds; do
        SEED_BASE=$(( (seed - 1) * procs )) "$IGBOB" "$secs" "$procs" "$out/igbob.csv" "$spec" \
            > "$out/igbob-$name-$seed.log" 2>&1 &
        igbob=$!
        started=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$mats" solve "$file" "${pick[@]}" --backend gpu ${MATS_ARGS:-} --time-limit "$secs" --seed "$seed" \
            --json > "$out/$name-$seed.json"
        wall=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
        wait "$igbob"
        value=$(grep -o '"objective": *[0-9]*' "$out/$name-$seed.json" | head -1 | grep -o '[0-9]*$')
        gap=$(awk -v v="$value" -v b="$bks" 'BEGIN { printf "%.3f", 100 * (v - b) / b }')
        echo "$name,$seed,$secs,$value,$bks,$gap,$wall" >> "$out/mats.csv"
        echo "$name seed $seed (${secs} s): mats $value ($gap%, ${wall} s); IG_BoB: $(tail -1 "$out/igbob-$name-$seed.log")"
    done
done
