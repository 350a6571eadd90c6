#!/usr/bin/env bash
# A list of `mats solve --backend gpu` runs spread over every GPU of the host, one run per GPU at
# a time (each run has its GPU to itself; the host's cores are shared), for parameter studies
# that would take too long one after another. Every GPU of a multi-GPU machine is of one kind,
# so runs on different GPUs compare as runs on one would; the CSV names the GPU of each run.
#
#   MATS=dir/mats DATA=dir/data OUT=out scripts/gpu-sweep.sh JOBS
#
# JOBS has one run per line, `label|family:name|seed|seconds|flags` ('#' starts a comment):
#   default|pfsp:ta101|1|60|
#   stall40|pfsp:ta101|1|60|--restart-stall 40
#   default|qap:tai60a|1|10|
# pfsp names are Taillard (ta101) or VRF (VFR800_60_1) names looked up in DATA/taillard-pfsp
# (scripts/pfsp-instance.sh), with the gap to its bks.csv; qap names are DATA/qaplib/instances/
# NAME.dat, with mats' own gap. GPUS lists the ordinals to use (default: every GPU nvidia-smi
# lists). Writes OUT/sweep.csv (one row per run, in the order they end) and OUT/json/, and prints
# per label the mean gap over its runs with an answer and their sd (instances pooled: compare
# labels over the same instances and seeds).
set -euo pipefail
: "${MATS:?MATS must name the mats binary}" "${DATA:?DATA must name the shared data folder}"
jobs_file=${1:?usage: scripts/gpu-sweep.sh JOBS}
command -v flock > /dev/null || { echo "gpu-sweep.sh needs flock (util-linux) for its queue" >&2; exit 1; }
out=${OUT:-gpu-sweep}
here=$(dirname "$0")
# shellcheck source=scripts/pfsp-instance.sh
. "$here/pfsp-instance.sh"
mkdir -p "$out/json"
csv=$out/sweep.csv
[ -s "$csv" ] || echo "label,instance,seed,seconds,gpu,objective,gap_percent,wall_s,flags" > "$csv"

if [ -z "${GPUS:-}" ]; then
    GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | tr '\n' ' ')
fi
read -r -a gpus <<< "$GPUS"
[ "${#gpus[@]}" -gt 0 ] || { echo "no GPU found (nvidia-smi lists none; set GPUS)" >&2; exit 1; }

grep -v '^[[:space:]]*\(#\|$\)' "$jobs_file" > "$out/queue" || true
total=$(wc -l < "$out/queue")
[ "$total" -gt 0 ] || { echo "$jobs_file: no runs (lines label|family:name|seed|seconds|flags)" >&2; exit 1; }
# Every line is checked before any GPU time is spent: a bad one is named, not met mid-sweep.
k=0
while IFS='|' read -r label inst seed secs flags; do
    k=$((k + 1))
    where="$jobs_file, run $k ($label|$inst|$seed|$secs)"
    [[ $label =~ ^[A-Za-z0-9._+-]+$ ]] ||
        { echo "$where: the label must be letters, digits and ._+- only" >&2; exit 1; }
    [[ $seed =~ ^[0-9]+$ ]] || { echo "$where: seed '$seed' is not a number" >&2; exit 1; }
    [[ $secs =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$where: seconds '$secs' is not a number" >&2; exit 1; }
    case ${inst%%:*} in
    pfsp) pfsp_instance "$DATA/taillard-pfsp" "${inst#*:}" || { echo "$where: see above" >&2; exit 1; } ;;
    qap)
        [ -f "$DATA/qaplib/instances/${inst#*:}.dat" ] ||
            { echo "$where: no $DATA/qaplib/instances/${inst#*:}.dat" >&2; exit 1; }
        ;;
    *) echo "$where: unknown family '${inst%%:*}' (pfsp:NAME or qap:NAME)" >&2; exit 1 ;;
    esac
done < "$out/queue"
echo "$total runs over GPUs ${gpus[*]}"
echo 0 > "$out/next"

# Takes the next run's line number under a lock; empty when the queue is done.
take() {
    (
        flock 9
        local k
        k=$(cat "$out/next")
        if [ "$k" -lt "$total" ]; then
            echo $((k + 1)) > "$out/next"
            echo $((k + 1))
        fi
    ) 9> "$out/lock"
}

run_one() { # GPU LINE_NUMBER
    local gpu=$1 k=$2 line label inst seed secs flags family name j obj gap t0 t1
    line=$(sed -n "${k}p" "$out/queue")
    IFS='|' read -r label inst seed secs flags <<< "$line"
    family=${inst%%:*}
    name=${inst#*:}
    j=$out/json/$label-$name-$seed.json
    t0=$(date +%s.%N)
    case $family in
    pfsp)
        pfsp_instance "$DATA/taillard-pfsp" "$name"
        # shellcheck disable=SC2086
        CUDA_VISIBLE_DEVICES=$gpu "$MATS" solve "$file" "${pick[@]}" --backend gpu \
            --time-limit "$secs" --seed "$seed" $flags --json > "$j" 2> "$j.log" || true
        obj=$(grep -o '"objective": *[0-9]*' "$j" | grep -o '[0-9]*$' || true)
        gap=
        if [ -n "$obj" ]; then
            gap=$(awk -v o="$obj" -v b="$bks" 'BEGIN { printf "%.3f", 100 * (o - b) / b }')
        fi
        ;;
    qap)
        # shellcheck disable=SC2086
        CUDA_VISIBLE_DEVICES=$gpu "$MATS" solve "$DATA/qaplib/instances/$name.dat" --backend gpu \
            --time-limit "$secs" --seed "$seed" $flags --json > "$j" 2> "$j.log" || true
        obj=$(grep -o '"objective": *[0-9]*' "$j" | grep -o '[0-9]*$' || true)
        gap=$(grep -o '"gap_percent": *[0-9.e-]*' "$j" | sed 's/.*: *//' || true)
        ;;
    esac
    t1=$(date +%s.%N)
    if [ -z "$obj" ]; then
        echo "FAILED $label $name seed $seed on GPU $gpu: $(tail -3 "$j.log")" >&2
    fi
    # The flags last and quoted: they may hold commas (--tenure-range 0.4,0.8).
    echo "$label,$name,$seed,$secs,$gpu,${obj:-},${gap:-},$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'),\"$flags\"" >> "$csv"
}

worker() { # GPU
    local k
    while k=$(take) && [ -n "$k" ]; do
        run_one "$1" "$k"
    done
}

for g in "${gpus[@]}"; do worker "$g" & done
wait

echo "label,instances,runs,mean_gap_percent,sd"
awk -F, 'NR > 1 && $7 != "" {
    n[$1]++; s[$1] += $7; ss[$1] += $7 * $7; inst[$1 "," $2] = 1
} END {
    for (l in n) {
        k = 0; for (x in inst) if (index(x, l ",") == 1) k++
        m = s[l] / n[l]; v = n[l] > 1 ? (ss[l] - n[l] * m * m) / (n[l] - 1) : 0
        printf "%s,%d,%d,%.3f,%.3f\n", l, k, n[l], m, (v > 0 ? sqrt(v) : 0)
    }
}' "$csv" | sort
