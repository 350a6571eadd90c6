#!/usr/bin/env bash
# rots-block's anytime curve: one traced run per instance and seed (`mats solve --trace --json`),
# printed as the gap reached by 1, 5, 10, 20, 30 and 60 s (within the run's length) and the time
# to a target gap. Runs on the GPU machine, one run at a time.
# Usage: MATS=bin/mats QAPLIB=dir/with/instances OUT=dir scripts/qap-anytime.sh \
#            [SECONDS] [SEEDS] [TARGET_GAP_PERCENT] [NAME...]
#   defaults: 60 s, seeds 1-2, target 0.2%, tai60a tai80a tai100a (docs/qap-gpu.md).
set -u
seconds=${1:-60}
seeds=${2:-2}
target=${3:-0.2}
shift $(( $# < 3 ? $# : 3 ))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(tai60a tai80a tai100a)
mats=${MATS:-target/release/mats}
qaplib=${QAPLIB:-../shared/data/qaplib/instances}
out=${OUT:-qap-anytime}
mkdir -p "$out"
for name in "${names[@]}"; do
    file=$qaplib/$name.dat
    [ -f "$file" ] || { echo "$file: no such instance" >&2; exit 2; }
    # Compile untimed first, so no run pays the NVRTC compile out of its time.
    "$mats" solve "$file" --backend gpu --time-limit 1 --seed 99 > /dev/null 2>&1
    for seed in $(seq 1 "$seeds"); do
        json=$out/trace-$name-$seed.json
        "$mats" solve "$file" --backend gpu --time-limit "$seconds" --seed "$seed" --trace --json \
            > "$json" 2> "$out/trace-$name-$seed.err" || { echo "$name seed $seed failed" >&2; continue; }
        python3 - "$json" "$target" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
target = float(sys.argv[2])
trace = d["trace"]
def gap_by(t):
    seen = [p for p in trace if p["seconds"] <= t]
    return "%.3f" % seen[-1]["gap_percent"] if seen and seen[-1]["gap_percent"] is not None else "-"
marks = [t for t in (1, 5, 10, 20, 30, 60) if t <= d["seconds"] + 1e-9]
hit = next((p["seconds"] for p in trace if p["gap_percent"] is not None and p["gap_percent"] <= target), None)
print(d["instance"], "seed", d["seed"],
      " ".join("%gs %s" % (t, gap_by(t)) for t in marks),
      "| end %.3f%%" % d["gap_percent"],
      "| last improvement %.1f s" % trace[-1]["seconds"],
      "| <= %g%% after %s" % (target, "%.1f s" % hit if hit is not None else "never"))
PY
    done
done
