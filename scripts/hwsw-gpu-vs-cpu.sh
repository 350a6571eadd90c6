#!/usr/bin/env bash
# HW/SW partitioning at equal wall time: `mats solve --backend gpu` (gpts-multi) against the
# CPU `sts` on all cores (iterated under a time limit), and the paper's STS (its own stop) for
# reference, on the five 2,000-node graphs of scripts/adapt-study.sh's hwsw set (CCR 1, R low,
# generator seeds 11-15). Runs from the repository root after scripts/gpu-test.sh on the GPU
# machine. Usage: bash scripts/hwsw-gpu-vs-cpu.sh [SECONDS] [SEEDS]
# Prints per graph each mode's hardware costs and means; raw runs go to $OUT/hwsw-gpu-vs-cpu.csv.
set -u
seconds=${1:-10}
seeds=${2:-2}
root=$PWD
mats=$root/gpu-bundle/bin/mats
[ -x "$mats" ] || mats=$root/target/release/mats
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
csv=$out/hwsw-gpu-vs-cpu.csv
echo "graph,seed,mode,objective,seconds,iterations,threads" > "$csv"
export MATS_CACHE_DIR=${MATS_CACHE_DIR:-/tmp/mats-cache}
for s in 11 12 13 14 15; do
    g=$out/g2000-s$s.hwsw
    "$mats" instance generate hwsw --nodes 2000 --edges 6000 --ccr 1 --r-level low --seed "$s" \
        -o "$g" > /dev/null || exit 1
    # The GPU kernels compile once, untimed.
    "$mats" solve "$g" --backend gpu --time-limit 1 --seed 99 > /dev/null 2>&1
    for seed in $(seq 1 "$seeds"); do
        for mode in gpu cpu paper; do
            case $mode in
                gpu) flags=(--backend gpu --time-limit "$seconds") ;;
                cpu) flags=(--time-limit "$seconds") ;;
                paper) flags=() ;;
            esac
            line=$("$mats" solve "$g" "${flags[@]}" --seed "$seed" --json \
                2>> "$out/hwsw-gpu-vs-cpu.err" \
                | python3 "$root/scripts/json-fields.py" objective seconds iterations threads)
            echo "g2000-s$s,$seed,$mode,$line" >> "$csv"
        done
    done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["objective"]:
        by.setdefault(r["graph"], {}).setdefault(r["mode"], []).append(r)
print(f"{'graph':<12} {'gpu (gpts-multi)':>24} {'cpu sts, iterated':>24} {'paper STS':>24}  gpu - cpu")
for g, modes in by.items():
    cells, means = [], {}
    for m in ("gpu", "cpu", "paper"):
        rs = modes.get(m, [])
        objs = [int(r["objective"]) for r in rs]
        means[m] = st.mean(objs) if objs else float("nan")
        secs = st.mean(float(r["seconds"]) for r in rs) if rs else float("nan")
        cells.append(f"{means[m]:>12.1f} ({secs:5.1f} s)")
    diff = 100 * (means["gpu"] - means["cpu"]) / means["cpu"]
    print(f"{g:<12} " + " ".join(f"{c:>24}" for c in cells) + f"  {diff:+.2f}%")
PY
