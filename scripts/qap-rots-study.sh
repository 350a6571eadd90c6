#!/usr/bin/env bash
# Runs rots-block configurations side by side on the GPU machine and prints each one's gap to
# best known per instance and seed, its mean gap and its iterations per second per block.
# Run after scripts/gpu-test.sh built gpu-bundle/ (carry it), from the repository root:
#   bash scripts/qap-rots-study.sh CONFIGS [SECONDS] [INSTANCES] [SEEDS]
# CONFIGS: a file of lines `label|extra mats solve arguments` (# starts a comment), e.g.
#   default|
#   short-tenure|--tenure-range 0.2,0.5
# SECONDS: time limit per run (default 10); INSTANCES: names under gpu-bundle/qaplib
# (default "tai80a tai100a"); SEEDS (default "1 2 3"). Writes study.txt and runs.jsonl to $OUT
# (or gpu-results/).
set -u
configs=${1:?usage: qap-rots-study.sh CONFIGS [SECONDS] [INSTANCES] [SEEDS]}
seconds=${2:-10}
instances=${3:-tai80a tai100a}
seeds=${4:-1 2 3}
root=$PWD
mats=$root/gpu-bundle/bin/mats
out=${OUT:-$root/gpu-results}
mkdir -p "$out"
runs=$out/runs.jsonl
: > "$runs"

while IFS='|' read -r label args; do
    case "$label" in '' | '#'*) continue ;; esac
    for inst in $instances; do
        for seed in $seeds; do
            # shellcheck disable=SC2086 # the extra arguments are split on purpose
            json=$("$mats" solve "$root/gpu-bundle/qaplib/$inst.dat" --backend gpu \
                --algo rots-block --time-limit "$seconds" --seed "$seed" --json $args 2>&1)
            if ! printf '%s' "$json" | python3 -c 'import json,sys; json.load(sys.stdin)' 2>/dev/null; then
                echo "$label $inst seed $seed failed: $json" >&2
                continue
            fi
            printf '%s' "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
r["label"] = sys.argv[1]
g = r.get("gpu") or {}
print(json.dumps({k: r.get(k) for k in ("label", "instance", "seed", "gap_percent", "iterations", "seconds")}
                 | {"kernel_seconds": g.get("kernel_seconds"), "blocks": g.get("solutions")}))
' "$label" >> "$runs"
        done
    done
done < "$configs"

python3 - "$runs" <<'PY' | tee "$out/study.txt"
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = collections.OrderedDict()
for r in rows:
    by.setdefault(r["label"], []).append(r)
print(f"{'config':<22} {'instance':<9} gaps (%) by seed          mean   it/s per block")
for label, rs in by.items():
    insts = collections.OrderedDict()
    for r in rs:
        insts.setdefault(r["instance"], []).append(r)
    for inst, xs in insts.items():
        gaps = [x["gap_percent"] for x in xs]
        blocks = xs[0].get("blocks") or 132
        rate = sum(x["iterations"] for x in xs) / max(1e-9, sum(x["kernel_seconds"] or x["seconds"] for x in xs)) / blocks
        print(f"{label:<22} {inst:<9} {' '.join(f'{g:5.3f}' for g in gaps):<26} {sum(gaps)/len(gaps):5.3f}  {rate:9.0f}")
PY
