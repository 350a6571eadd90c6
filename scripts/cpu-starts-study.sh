#!/usr/bin/env bash
# The CPU solvers' time-limited default (one start per worker thread) against one start, on all
# cores of the machine it runs on, paired by seed. Runs from the repository root after
# scripts/gpu-test.sh (or with target/release/mats and ../shared/data).
# Usage: [SET=qap-pfsp|hwsw] bash scripts/cpu-starts-study.sh [SECONDS] [SEEDS]
# Prints per instance each mode's objectives and mean gap; raw runs go to $OUT/cpu-starts.csv.
set -u
seconds=${1:-10}
seeds=${2:-2}
root=$PWD
mats=$root/gpu-bundle/bin/mats
[ -x "$mats" ] || mats=$root/target/release/mats
data=$root/gpu-bundle/shared/data
[ -d "$data" ] || data=$root/../shared/data
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
csv=$out/cpu-starts-${SET:-qap-pfsp}.csv
echo "instance,seed,mode,starts,threads,objective,gap_percent" > "$csv"
t=$data/taillard-pfsp/taillard
instances=()
if [ "${SET:-qap-pfsp}" = qap-pfsp ]; then
    instances=("$data/qaplib/instances/tai60a.dat|tai60a|" "$data/qaplib/instances/tai100a.dat|tai100a|"
        "$t/tai100_20.txt|ta083|--index 3" "$t/tai50_20.txt|ta053|--index 3")
else
    # SET=hwsw: 300-node graphs (CCR 0.1, R high: the medium class the tuner found hardest),
    # small enough that one search evaluates its neighbourhood on one thread, so the default
    # runs walks.
    for g in 41 42 43 44 45; do
        "$mats" instance generate hwsw --nodes 300 --edges 900 --ccr 0.1 --r-level high \
            --seed "$g" -o "$out/h300-s$g.hwsw" > /dev/null || exit 1
        instances+=("$out/h300-s$g.hwsw|h300-s$g|")
    done
fi
for entry in "${instances[@]}"; do
    IFS='|' read -r path name extra <<< "$entry"
    for seed in $(seq 1 "$seeds"); do
        for mode in default one; do
            flags=()
            [ "$mode" = one ] && flags=(--starts 1)
            # shellcheck disable=SC2086
            line=$("$mats" solve "$path" $extra --time-limit "$seconds" --seed "$seed" --json \
                "${flags[@]}" 2>> "$out/cpu-starts.err" \
                | python3 "$root/scripts/json-fields.py" starts threads objective gap_percent)
            echo "$name,$seed,$mode,$line" >> "$csv"
        done
    done
done
python3 - "$csv" <<'PY'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["instance"], {}).setdefault(r["mode"], []).append(r)
for name, modes in by.items():
    parts = []
    for mode in ("default", "one"):
        rs = modes.get(mode, [])
        gaps = [float(r["gap_percent"]) for r in rs if r["gap_percent"] not in ("", "None")]
        objs = [int(r["objective"]) for r in rs if r["objective"]]
        starts = rs[0]["starts"] if rs else "?"
        mean = f"mean gap {st.mean(gaps):.3f}%" if gaps else (
            f"mean {st.mean(objs):.1f}" if objs else "n/a")
        parts.append(f"{mode} (starts {starts}): {' '.join(map(str, objs))} {mean}")
    print(f"{name}: " + "; ".join(parts))
PY
