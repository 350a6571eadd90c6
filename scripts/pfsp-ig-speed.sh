#!/usr/bin/env bash
# Two builds of `mats` side by side on the GPU machine, in one call: the same ig-block work (a
# fixed number of iterations per walk) timed with CUDA events, then the same wall time (a time
# limit) for the quality each reaches. Equal work is not an equal trajectory: launch lengths
# follow the measured kernel time, and restarts happen between launches, so two builds of
# different speed restart at different iterations ("same answer: no" is then expected).
# Prints, per instance, the kernel-time ratio OLD / NEW at equal work and the makespans.
#
#   OLD=dir/mats-old NEW=dir/mats-new DATA=dir/taillard-pfsp OUT=out \
#       scripts/pfsp-ig-speed.sh ITERATIONS SECONDS "SEEDS" INSTANCE...
#
# INSTANCE is a Taillard name (ta101) or a VRF one (VFR800_60_1), looked up in DATA's tables
# (scripts/pfsp-instance.sh). MATS_ARGS adds flags to every solve. Writes OUT/speed.csv.
set -euo pipefail
: "${OLD:?OLD must name the baseline mats}" "${NEW:?NEW must name the changed mats}"
: "${DATA:?DATA must name the taillard-pfsp folder}"
out=${OUT:-pfsp-ig-speed}
iterations=$1
seconds=$2
seeds=$3
shift 3
mkdir -p "$out"
[ -s "$out/speed.csv" ] ||
    echo "instance,build,mode,seed,objective,kernel_s,evaluations,iterations,wall_s" > "$out/speed.csv"

# shellcheck source=scripts/pfsp-instance.sh
. "$(dirname "$0")/pfsp-instance.sh"
# The build under test: OLD or NEW.
binary() { if [ "$1" = new ]; then echo "$NEW"; else echo "$OLD"; fi; }
field() { grep -o "\"$1\": *[0-9.e+-]*" "$2" | head -1 | sed 's/.*: *//'; }

for name in "$@"; do
    pfsp_instance "$DATA" "$name"
    for build in old new; do
        bin=$(binary $build)
        # Kernels compile once, untimed (each build has its own source, so its own cache entry).
        # shellcheck disable=SC2086
        "$bin" solve "$file" "${pick[@]}" --backend gpu ${MATS_ARGS:-} --iterations 1 > /dev/null
        # shellcheck disable=SC2086
        "$bin" solve "$file" "${pick[@]}" --backend gpu ${MATS_ARGS:-} --iterations "$iterations" \
            --seed 1 --json > "$out/$name-$build-work.json"
    done
    for build in old new; do
        j=$out/$name-$build-work.json
        echo "$name,$build,work,1,$(field objective "$j"),$(field kernel_seconds "$j"),$(field evaluations "$j"),$(field iterations "$j"),$(field seconds "$j")" >> "$out/speed.csv"
    done
    # --json prints the solution over several lines: flatten before comparing.
    solution() { tr -d ' \n' < "$1" | grep -o '"solution":\[[^]]*\]'; }
    same=no
    [ "$(solution "$out/$name-old-work.json")" = "$(solution "$out/$name-new-work.json")" ] && same=yes
    ko=$(field kernel_seconds "$out/$name-old-work.json")
    kn=$(field kernel_seconds "$out/$name-new-work.json")
    echo "$name, $iterations iterations per walk: same answer: $same; kernel time old $ko s, new $kn s, old / new $(awk -v a="$ko" -v b="$kn" 'BEGIN { printf "%.2f", a / b }')"
    [ "$seconds" = 0 ] && continue
    for seed in $seeds; do
        for build in old new; do
            bin=$(binary $build)
            j=$out/$name-$build-$seed.json
            # shellcheck disable=SC2086
            "$bin" solve "$file" "${pick[@]}" --backend gpu ${MATS_ARGS:-} --time-limit "$seconds" \
                --seed "$seed" --json > "$j"
            v=$(field objective "$j")
            echo "$name,$build,time,$seed,$v,$(field kernel_seconds "$j"),$(field evaluations "$j"),$(field iterations "$j"),$(field seconds "$j")" >> "$out/speed.csv"
            echo "$name seed $seed, $seconds s, $build: $v ($(awk -v v="$v" -v b="$bks" 'BEGIN { printf "%.3f", 100 * (v - b) / b }')%), evaluations $(field evaluations "$j")"
        done
    done
done
