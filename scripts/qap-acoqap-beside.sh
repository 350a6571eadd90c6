#!/usr/bin/env bash
# Issue 25's peer comparison on the GPU machine: for each instance and seed, `mats solve
# --backend gpu` (the family default, rots-block) and ACOTSPQAP's acoqap (MAX-MIN Ant System
# with robust tabu search by default) as one process per CPU core but one, side by side for the
# same wall time. acoqap is not part of mats: build it as docs/qap-gpu.md says (its `main`
# untouched; one line added to print the best permutation) and point ACOQAP at the binary.
# Every acoqap answer is re-scored with `mats instance score` and must equal what acoqap reported.
#
#   ACOQAP=acoqap/acoqap QAPLIB=shared/data/qaplib/instances OUT=dir SECONDS_FIXED=10 \
#       scripts/qap-acoqap-beside.sh "1 2 3" tai60a tai80a tai100a
#
# PROCS (default: cores - 1, leaving one for mats' host thread), ACOQAP_ARGS (default "--mmas
# --ants 5 --localsearch 4": Stuetzle's MMAS-QAP with the long robust tabu search), MATS_ARGS.
# Writes OUT/mats.csv and OUT/acoqap.csv (instance,seed,seconds,objective,bks,gap_percent,...),
# each run's JSON, and acoqap's logs packed in OUT/acoqap-logs.tar.gz; prints mats against
# acoqap's best and mean of its processes per run.
set -euo pipefail
: "${ACOQAP:?ACOQAP must name the acoqap binary}" "${QAPLIB:?QAPLIB must name the folder of .dat files}"
out=${OUT:-qap-acoqap}
mats=${MATS:-target/release/mats}
procs=${PROCS:-$(( $(nproc) - 1 ))}
secs=${SECONDS_FIXED:-10}
aco_args=${ACOQAP_ARGS:---mmas --ants 5 --localsearch 4}
seeds=$1
shift
mkdir -p "$out/logs"
[ -s "$out/mats.csv" ] || echo "instance,seed,seconds,objective,bks,gap_percent,wall_s" > "$out/mats.csv"
[ -s "$out/acoqap.csv" ] || echo "instance,seed,process,seconds,objective,bks,gap_percent" > "$out/acoqap.csv"

for name in "$@"; do
    file="$QAPLIB/$name.dat"
    [ -f "$file" ] || { echo "no instance file $file" >&2; exit 1; }
    # Kernels compile once, untimed, before the first measured run.
    # shellcheck disable=SC2086
    "$mats" solve "$file" --backend gpu ${MATS_ARGS:-} --iterations 1 > /dev/null
    for seed in $seeds; do
        pids=()
        for k in $(seq 1 "$procs"); do
            # shellcheck disable=SC2086
            "$ACOQAP" -i "$file" $aco_args -t "$secs" -r 1 --quiet --seed $(( (seed - 1) * procs + k )) \
                > "$out/logs/$name-$seed-$k.log" 2>&1 &
            pids+=($!)
        done
        started=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$mats" solve "$file" --backend gpu ${MATS_ARGS:-} --time-limit "$secs" --seed "$seed" \
            --json > "$out/$name-$seed.json"
        wall=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
        wait "${pids[@]}"
        value=$(grep -o '"objective": *[0-9]*' "$out/$name-$seed.json" | head -1 | grep -o '[0-9]*$')
        bks=$(grep -o '"best_known": *[0-9]*' "$out/$name-$seed.json" | head -1 | grep -o '[0-9]*$')
        gap=$(awk -v v="$value" -v b="$bks" 'BEGIN { printf "%.3f", 100 * (v - b) / b }')
        echo "$name,$seed,$secs,$value,$bks,$gap,$wall" >> "$out/mats.csv"
        for k in $(seq 1 "$procs"); do
            log="$out/logs/$name-$seed-$k.log"
            reported=$(grep -o 'Best Solution in try 0 is [0-9]*' "$log" | grep -o '[0-9]*$')
            grep '^solution ' "$log" > "$log.solution"
            scored=$("$mats" instance score "$file" --solution "$log.solution" --json |
                grep -o '"objective": *[0-9]*' | grep -o '[0-9]*$')
            if [ "$scored" != "$reported" ]; then
                echo "acoqap process $k on $name seed $seed reported $reported but its permutation scores $scored" >&2
                exit 1
            fi
            agap=$(awk -v v="$scored" -v b="$bks" 'BEGIN { printf "%.3f", 100 * (v - b) / b }')
            echo "$name,$seed,$k,$secs,$scored,$bks,$agap" >> "$out/acoqap.csv"
        done
        summary=$(awk -F, -v n="$name" -v s="$seed" '$1 == n && $2 == s {
                if (best == "" || $7 < best) best = $7; sum += $7; c++ }
            END { printf "best %.3f%%, mean %.3f%% of %d processes", best, sum / c, c }' "$out/acoqap.csv")
        echo "$name seed $seed (${secs} s): mats $value ($gap%, ${wall} s); acoqap $summary"
    done
done
tar -C "$out" -czf "$out/acoqap-logs.tar.gz" logs && rm -rf "$out/logs"
